//! The build lock: one builder a database directory at a time.
//!
//! A build (or an upgrade) holds an advisory lock (`flock`, the same lock as the game
//! records', see [`crate::files`]) on the file
//! [`LOCK_FILE`] in the directory for as long as it writes there, with its process id in the
//! file (where the system has no such locks, nothing is locked). A second builder finds the lock taken and
//! stops at once with [`DbError::Busy`], naming that process; readers never take the lock
//! (finished levels are never written again, and new ones appear by an atomic rename), so they
//! are not held up. The lock goes with the process, however it ends; the file stays (removing it
//! would let two builders lock two different files of the same name). The lock file is never
//! followed through a symbolic link, and must be a regular file with no other name (no hard
//! link): whoever can write a shared database directory cannot make a build write its process
//! id into someone else's file.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::Path;

use crate::db::DbError;
use crate::files::ClaimError;

/// The lock file in a database directory.
pub const LOCK_FILE: &str = ".kalah-build.lock";

/// The lock on a directory, held until dropped.
#[derive(Debug)]
pub struct BuildLock {
    _file: File,
}

/// Takes the build lock of `dir` (which must exist), or says who holds it.
pub fn lock(dir: &Path) -> Result<BuildLock, DbError> {
    let path = dir.join(LOCK_FILE);
    let in_file = |e: std::io::Error| DbError::from(e).in_file(&path);
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Neither a link to follow nor a FIFO to wait on.
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let not_a_file = || {
        in_file(std::io::Error::other(
            "the build lock is not a regular file (a symbolic link, say): not followed; \
             remove it and build again",
        ))
    };
    let mut file = match options.open(&path) {
        Ok(file) => file,
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(not_a_file()),
        Err(e) => return Err(in_file(e)),
    };
    let meta = file.metadata().map_err(in_file)?;
    if !meta.is_file() {
        return Err(not_a_file());
    }
    // A hard link to another file would get the process id written into that file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return Err(in_file(std::io::Error::other(
                "the build lock has other names (a hard link to another file): not written; \
                 remove it and build again",
            )));
        }
    }
    match crate::files::lock(&file, false) {
        Ok(()) => {}
        Err(ClaimError::InUse) => {
            let mut text = String::new();
            let _ = Read::by_ref(&mut file).take(32).read_to_string(&mut text);
            return Err(DbError::Busy {
                dir: dir.to_path_buf(),
                pid: text.trim().parse().ok(),
            });
        }
        Err(ClaimError::Io(e)) => return Err(in_file(e)),
    }
    file.set_len(0).map_err(in_file)?;
    file.rewind().map_err(in_file)?;
    writeln!(file, "{}", std::process::id()).map_err(in_file)?;
    Ok(BuildLock { _file: file })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::Scratch;

    #[test]
    fn a_second_lock_names_the_holder() {
        let dir = Scratch::new("lock");
        let held = lock(&dir).unwrap();
        match lock(&dir) {
            Err(DbError::Busy { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("{other:?}"),
        }
        drop(held);
        let again = lock(&dir).unwrap();
        drop(again);
    }

    #[cfg(unix)]
    #[test]
    fn a_lock_file_that_is_a_link_is_refused_and_its_target_untouched() {
        let dir = Scratch::new("lock-link");
        let victim = dir.join("victim.txt");
        std::fs::write(&victim, "precious\n").unwrap();
        std::os::unix::fs::symlink(&victim, dir.join(LOCK_FILE)).unwrap();
        let refused = lock(&dir).unwrap_err().to_string();
        assert!(refused.contains("not a regular file"), "{refused}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
        // A link to a file that is not there is not made either.
        std::fs::remove_file(dir.join(LOCK_FILE)).unwrap();
        std::os::unix::fs::symlink(dir.join("made.txt"), dir.join(LOCK_FILE)).unwrap();
        assert!(lock(&dir).is_err());
        assert!(!dir.join("made.txt").exists());
        // Nor a hard link: the file it shares would get the process id.
        std::fs::remove_file(dir.join(LOCK_FILE)).unwrap();
        std::fs::hard_link(&victim, dir.join(LOCK_FILE)).unwrap();
        let refused = lock(&dir).unwrap_err().to_string();
        assert!(refused.contains("hard link"), "{refused}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    }
}
