//! Files written whole: complete or absent, never half-written.
//!
//! The bytes go to `<path>.tmp` beside `path` (so that the rename stays within one file
//! system), which is renamed to `path` once written. A run stopped halfway leaves the old file
//! (or none), never a truncated one; a failed write removes its temporary file.

use std::fs::File;
use std::path::{Path, PathBuf};

/// Writes `path` whole: `write` fills (and, if it must last a power cut, syncs) the temporary
/// file, which then replaces `path`.
pub fn write_whole(
    path: &Path,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let tmp = temporary(path);
    let written = File::create(&tmp)
        .and_then(|mut file| write(&mut file))
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// `<path>.tmp`, beside `path`.
fn temporary(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_whole_write_replaces_the_file_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("kalah-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("game.txt");
        std::fs::write(&path, "old").unwrap();
        write_whole(&path, |f| f.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert!(!dir.join("game.txt.tmp").exists());
        // A failed write leaves the old file and no temporary.
        let failed = write_whole(&path, |f| {
            f.write_all(b"half")?;
            Err(std::io::Error::other("stopped"))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert!(!dir.join("game.txt.tmp").exists());
        // A directory in the way: the write fails and leaves nothing behind.
        let blocked = dir.join("sub");
        std::fs::create_dir_all(blocked.join("x")).unwrap();
        assert!(write_whole(&blocked, |f| f.write_all(b"text")).is_err());
        assert!(!dir.join("sub.tmp").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
