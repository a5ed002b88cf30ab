//! Files from and to the user: written whole (complete or absent, never half-written), read
//! only when they are regular files of a bounded size.
//!
//! A whole write goes to a temporary file beside `path`, `<name>.<pid>-<n>.tmp` (the same file
//! system, so the rename is atomic; the process id and a counter keep two writers apart),
//! which is renamed to `path` once written. A run stopped halfway leaves the old file (or
//! none), never a truncated one; a failed write removes its temporary file.
//!
//! A file written again and again while a program runs (a game record saved after every move,
//! a learner's memory) is first **claimed** ([`claim`]): an advisory lock (`flock` on Unix) that
//! other processes, and other claims in this process, see. [`Claimed::replace`] then writes it
//! whole, and locks the new file before renaming it into place, so the lock never lapses: a
//! second claim of the same path fails (or waits) for as long as the first is held.
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
    write_through_temporary(path, write).map(drop)
}

/// Makes the rename of a file written whole at `path` ([`write_whole`]) last a power cut: syncs
/// the directory that holds it (on Unix; elsewhere nothing). The file itself must have been
/// synced by the writer.
pub fn sync_parent(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        File::open(dir)?.sync_all()?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// [`write_whole`], returning the new file, still open.
fn write_through_temporary(
    path: &Path,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> std::io::Result<File> {
    let tmp = temporary(path);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut file| {
            write(&mut file)?;
            std::fs::rename(&tmp, path)?;
            Ok(file)
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Adds `O_NONBLOCK` to `options` (Unix): opening a FIFO then never waits for its other end.
fn non_blocking(options: &mut std::fs::OpenOptions) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    #[cfg(not(unix))]
    let _ = options;
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

/// Opens `path` to write a log to (appended to with `append`, else emptied first), without
/// ever waiting: a FIFO nobody reads is refused at once (`it is a FIFO that nobody reads`)
/// instead of blocking the program until a reader comes, and a directory is refused. A FIFO
/// that has a reader, a terminal or `/dev/null` are taken.
pub fn open_log(path: &Path, append: bool) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true);
    if append {
        options.append(true);
    } else {
        options.truncate(true);
    }
    // Opening a FIFO to write blocks until it has a reader; non-blocking, it fails at once.
    let mut probe = options.clone();
    non_blocking(&mut probe);
    let file = match probe.open(path) {
        Ok(file) => file,
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "it is a FIFO that nobody reads",
            ));
        }
        Err(e) => return Err(e),
    };
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    if kind.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "it is a directory, not a file",
        ));
    }
    // A FIFO with a reader, a terminal, /dev/null: opened again to block on writes as usual
    // (the first opening is still held, so a FIFO's reader is there).
    let blocking = options.open(path)?;
    drop(file);
    Ok(blocking)
}

/// Checks that a whole write of `path` could make its temporary file: creates one beside
/// `path` and removes it. A missing or read-only directory fails here, before any work whose
/// result would then be lost.
pub fn check_writable(path: &Path) -> std::io::Result<()> {
    let tmp = temporary(path);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)?;
    std::fs::remove_file(&tmp)
}

/// Why [`claim`] failed.
#[derive(Debug)]
pub enum ClaimError {
    /// Another claim holds the file (another process, or another claim in this one).
    InUse,
    /// The file could not be opened, created or locked.
    Io(std::io::Error),
}

impl std::fmt::Display for ClaimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClaimError::InUse => f.write_str("in use by another program"),
            ClaimError::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ClaimError {}

/// A file held under an advisory lock (see the module docs), written whole with
/// [`Claimed::replace`]. The lock ends when this is dropped; a file the claim created empty and
/// never wrote is removed then.
#[derive(Debug)]
pub struct Claimed {
    path: PathBuf,
    /// The open file whose lock is held: the one at `path`.
    held: File,
    existed: bool,
    written: bool,
}

/// Claims `path` (see the module docs): opens it, or creates it empty if there is nothing
/// there, and locks it; `wait`: until the lock is free, else [`ClaimError::InUse`] at once.
/// Anything but a regular file at `path` is an [`std::io::ErrorKind::InvalidInput`] error.
/// Where the file system has no locks, the claim holds no lock and always succeeds.
pub fn claim(path: &Path, wait: bool) -> Result<Claimed, ClaimError> {
    loop {
        let created = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path);
        let (file, existed) = match created {
            Ok(file) => (file, false),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match open_regular(path) {
                Ok(file) => (file, true),
                // Removed meanwhile: try again.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(ClaimError::Io(e)),
            },
            Err(e) => return Err(ClaimError::Io(e)),
        };
        lock(&file, wait)?;
        // The holder before us may have replaced or removed the file while we waited: then the
        // lock is on a file that is no longer at `path`, and `path` is claimed afresh.
        if is_at(&file, path).map_err(ClaimError::Io)? {
            return Ok(Claimed {
                path: path.to_owned(),
                held: file,
                existed,
                written: false,
            });
        }
    }
}

/// Locks `file` exclusively (see [`claim`]; the database build lock takes it too); a system
/// without locks is let through.
pub(crate) fn lock(file: &File, wait: bool) -> Result<(), ClaimError> {
    match crate::memory::lock_exclusive(file, wait) {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Err(ClaimError::InUse),
        Err(e) if e.kind() != std::io::ErrorKind::Unsupported => Err(ClaimError::Io(e)),
        _ => Ok(()),
    }
}

/// Whether the open `file` is the file now at `path`.
fn is_at(file: &File, path: &Path) -> std::io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let (open, named) = match (file.metadata(), std::fs::metadata(path)) {
            (Ok(open), Ok(named)) => (open, named),
            (_, Err(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            (Err(e), _) | (_, Err(e)) => return Err(e),
        };
        Ok((open.dev(), open.ino()) == (named.dev(), named.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        Ok(path.exists())
    }
}

impl Claimed {
    /// The path claimed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file was there before the claim (else the claim created it, empty).
    pub fn existed(&self) -> bool {
        self.existed
    }

    /// The file's length now, in bytes.
    pub fn len(&self) -> std::io::Result<u64> {
        Ok(self.held.metadata()?.len())
    }

    /// Whether the file is empty now.
    pub fn is_empty(&self) -> std::io::Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Writes the file whole, as [`write_whole`] does, and keeps the claim: the new file is
    /// locked before it is renamed into place. If the write fails, the file is as it was.
    pub fn replace(
        &mut self,
        write: impl FnOnce(&mut File) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let file = write_through_temporary(&self.path, |file| {
            // A fresh file that nobody else has opened: the lock is free.
            lock(file, false).map_err(|e| match e {
                ClaimError::Io(e) => e,
                ClaimError::InUse => std::io::Error::other("a new file was in use"),
            })?;
            write(file)
        })?;
        // The old file's lock ends with it; the new one is held already.
        self.held = file;
        self.written = true;
        Ok(())
    }
}

impl Drop for Claimed {
    fn drop(&mut self) {
        // An empty file made by the claim alone: leave nothing behind. (The lock is still
        // held, so the file is still the one the claim made.)
        if !self.existed && !self.written && self.is_empty().unwrap_or(false) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Locks the directory `dir` (see [`claim`]; the directory is never replaced, so the lock is
/// simply held on it), for a program that writes files of its own naming into it; `None` off
/// Unix, where directories cannot be opened as files.
pub fn lock_dir(dir: &Path) -> Result<Option<File>, ClaimError> {
    if cfg!(not(unix)) {
        return Ok(None);
    }
    let file = File::open(dir).map_err(ClaimError::Io)?;
    lock(&file, false).map(|()| Some(file))
}

/// Opens `path` for reading if it is a regular file; anything else (a directory, a FIFO, a
/// device, a socket) is an [`std::io::ErrorKind::InvalidInput`] error saying what it is
/// (`it is a FIFO, not a regular file`: the caller names the file), without waiting (a FIFO is
/// opened non-blocking, then looked at).
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // Opening a FIFO with no writer returns at once. Reads of a regular file ignore the flag.
    non_blocking(&mut options);
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

/// What `path` is instead, if it is there and not a directory (a symbolic link is followed).
pub fn not_a_directory(path: &Path) -> Option<&'static str> {
    let kind = std::fs::metadata(path).ok()?.file_type();
    (!kind.is_dir()).then(|| {
        if kind.is_file() {
            "a file"
        } else {
            describe(&kind)
        }
    })
}

/// Makes the directory `dir` (and its parents) unless it is there; a path that is there but is
/// no directory is an error saying what it is (not "File exists").
pub fn make_dir(dir: &Path) -> std::io::Result<()> {
    if let Some(what) = not_a_directory(dir) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("it is {what}, not a directory"),
        ));
    }
    std::fs::create_dir_all(dir)
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

/// The bytes free for this user on the file system where `path` is or would be made: that of
/// its nearest ancestor that exists (a directory about to be created takes its space there).
pub fn free_space(path: &Path) -> std::io::Result<u64> {
    let mut at = path;
    loop {
        match std::fs::symlink_metadata(at) {
            Ok(_) => return crate::memory::free_space(at),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        at = match at.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        if at == Path::new(".") {
            return crate::memory::free_space(at);
        }
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
    use crate::scratch::Scratch;
    use std::io::Write;

    fn scratch(name: &str) -> Scratch {
        Scratch::new(&format!("files-{name}"))
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
    }

    #[test]
    fn a_claimed_file_stays_claimed_across_replacements_until_dropped() {
        let dir = scratch("claim");
        let path = dir.join("game.txt");
        let mut first = claim(&path, false).unwrap();
        assert!(!first.existed() && first.is_empty().unwrap());
        assert!(matches!(claim(&path, false), Err(ClaimError::InUse)));
        first.replace(|f| f.write_all(b"one")).unwrap();
        // The new file is held too: the lock never lapsed.
        assert!(matches!(claim(&path, false), Err(ClaimError::InUse)));
        first.replace(|f| f.write_all(b"two")).unwrap();
        assert!(leftovers(&dir).is_empty());
        // A waiting claim gets the file once the first is dropped, and sees its last text.
        let waiter = std::thread::spawn({
            let path = path.clone();
            move || {
                let second = claim(&path, true).unwrap();
                assert!(second.existed());
                std::fs::read_to_string(second.path()).unwrap()
            }
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        first.replace(|f| f.write_all(b"three")).unwrap();
        drop(first);
        assert_eq!(waiter.join().unwrap(), "three");
        // A claim that made the file and never wrote it leaves nothing behind.
        let unused = dir.join("unused.txt");
        drop(claim(&unused, false).unwrap());
        assert!(!unused.exists());
    }

    #[test]
    fn only_writable_places_and_regular_files_are_claimed() {
        let dir = scratch("claim-where");
        let file = dir.join("file.txt");
        std::fs::write(&file, "x").unwrap();
        // A directory that is a file: nothing can be made in it, not even by root.
        assert!(check_writable(&file.join("game.txt")).is_err());
        assert!(matches!(
            claim(&file.join("game.txt"), false),
            Err(ClaimError::Io(_))
        ));
        check_writable(&file).unwrap();
        assert!(leftovers(&dir).is_empty());
        assert!(matches!(claim(&dir, false), Err(ClaimError::Io(_))));
        #[cfg(unix)]
        {
            let e = claim(Path::new("/dev/null"), false).unwrap_err();
            assert!(e.to_string().contains("a device"), "{e}");
            let held = lock_dir(&dir).unwrap();
            assert!(held.is_some());
            assert!(matches!(lock_dir(&dir), Err(ClaimError::InUse)));
            drop(held);
            assert!(lock_dir(&dir).unwrap().is_some());
        }
    }
}
