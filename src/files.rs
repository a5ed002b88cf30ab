//! Files from and to the user: written whole (complete or absent, never half-written), read
//! only when they are regular files of a bounded size.
//!
//! A whole write goes to a temporary file beside `path`, `<name>.<pid>-<n>.tmp` (the same file
//! system, so the rename is atomic; the process id and a counter keep two writers apart),
//! which is renamed to `path` once written. A run stopped halfway leaves the old file (or
//! none), never a truncated one; a failed write removes its temporary file.
//!
//! Readers open with [`open_regular`]: a FIFO, a device or a directory where a file is
//! expected is refused at once (opening a FIFO would wait for a writer forever, and `/dev/zero`
//! never ends), and [`read_text`] refuses a file above its bound before reading it.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes `path` whole: `write` fills (and, if it must last a power cut, syncs) the temporary
/// file, which then replaces `path`.
pub fn write_whole(
    path: &Path,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let tmp = temporary(path);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut file| write(&mut file))
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// A temporary name beside `path` that no other writer uses: `<name>.<pid>-<n>.tmp`.
pub fn temporary(path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(
        ".{}-{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    path.with_file_name(name)
}

/// Opens `path` for reading if it is a regular file; anything else (a directory, a FIFO, a
/// device, a socket) is an [`std::io::ErrorKind::InvalidInput`] error saying what it is
/// (`it is a FIFO, not a regular file`: the caller names the file), without waiting (a FIFO is
/// opened non-blocking, then looked at).
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Non-blocking: opening a FIFO with no writer returns at once. Reads of a regular file
        // ignore the flag.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("it is {}, not a regular file", describe(&kind)),
        ));
    }
    Ok(file)
}

/// Whether `path` names something other than a regular file (and what), without opening it:
/// `None` for a regular file or nothing at all.
pub fn not_regular(path: &Path) -> Option<&'static str> {
    let kind = std::fs::metadata(path).ok()?.file_type();
    (!kind.is_file()).then(|| describe(&kind))
}

fn describe(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

/// The text of the regular file at `path`, at most `max` bytes: a longer file, or one that is
/// not UTF-8 (the error names the first line that is not), is an
/// [`std::io::ErrorKind::InvalidData`] error (nothing above the bound is read).
pub fn read_text(path: &Path, max: u64) -> std::io::Result<String> {
    let file = open_regular(path)?;
    let len = file.metadata()?.len();
    if len > max {
        return Err(too_big(len, max));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    // The file may grow while it is read: read one byte past the bound to notice.
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_big(bytes.len() as u64, max));
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = 1 + valid.iter().filter(|&&b| b == b'\n').count();
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("line {line} is not UTF-8 text"),
        )
    })
}

fn too_big(len: u64, max: u64) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("too large ({len} bytes or more, at most {max})"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kalah-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    #[test]
    fn a_whole_write_replaces_the_file_and_leaves_no_temporary() {
        let dir = scratch("whole");
        let path = dir.join("game.txt");
        std::fs::write(&path, "old").unwrap();
        write_whole(&path, |f| f.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert!(leftovers(&dir).is_empty());
        // A failed write leaves the old file and no temporary.
        let failed = write_whole(&path, |f| {
            f.write_all(b"half")?;
            Err(std::io::Error::other("stopped"))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert!(leftovers(&dir).is_empty());
        // A directory in the way: the write fails and leaves nothing behind.
        let blocked = dir.join("sub");
        std::fs::create_dir_all(blocked.join("x")).unwrap();
        assert!(write_whole(&blocked, |f| f.write_all(b"text")).is_err());
        assert!(leftovers(&dir).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn two_writers_never_share_a_temporary() {
        let path = Path::new("/x/game.txt");
        assert_ne!(temporary(path), temporary(path));
    }

    #[test]
    fn only_regular_files_of_a_bounded_size_are_read() {
        let dir = scratch("read");
        let path = dir.join("a.txt");
        std::fs::write(&path, "hello").unwrap();
        assert_eq!(read_text(&path, 5).unwrap(), "hello");
        let e = read_text(&path, 4).unwrap_err();
        assert!(e.to_string().contains("too large"), "{e}");
        std::fs::write(&path, b"a\nb\xff").unwrap();
        let e = read_text(&path, 5).unwrap_err();
        assert_eq!(e.to_string(), "line 2 is not UTF-8 text");
        let e = open_regular(&dir).unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        assert_eq!(not_regular(&dir), Some("a directory"));
        assert_eq!(not_regular(&path), None);
        #[cfg(unix)]
        {
            let e = open_regular(Path::new("/dev/zero")).unwrap_err();
            assert!(e.to_string().contains("a device"), "{e}");
            let fifo = dir.join("fifo");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            assert!(made.unwrap().success());
            let e = open_regular(&fifo).unwrap_err();
            assert_eq!(e.to_string(), "it is a FIFO, not a regular file");
            assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
