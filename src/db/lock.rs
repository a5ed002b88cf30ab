//! The build lock: one builder a database directory at a time.
//!
//! A build (or an upgrade) holds an advisory lock (`flock`, the same lock as the game
//! records', see [`crate::files`]) on the file
//! [`LOCK_FILE`] in the directory for as long as it writes there, with its process id in the
//! file (where the system has no such locks, nothing is locked). A second builder finds the lock taken and
//! stops at once with [`DbError::Busy`], naming that process; readers never take the lock
//! (finished levels are never written again, and new ones appear by an atomic rename), so they
//! are not held up. The lock goes with the process, however it ends; the file stays (removing it
//! would let two builders lock two different files of the same name).

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
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(in_file)?;
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

    #[test]
    fn a_second_lock_names_the_holder() {
        let dir = std::env::temp_dir().join(format!("kalah-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let held = lock(&dir).unwrap();
        match lock(&dir) {
            Err(DbError::Busy { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("{other:?}"),
        }
        drop(held);
        let again = lock(&dir).unwrap();
        drop(again);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
