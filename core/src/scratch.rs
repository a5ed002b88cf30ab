//! Scratch directories for the unit tests: one a test, under the system's temporary directory,
//! named after the test and the process (tests run at once, and so do test binaries), and
//! removed when dropped, also when the test fails. (The integration tests have their own, in
//! `tests/temp_dir`.)

use std::ops::Deref;
use std::path::{Path, PathBuf};

/// A fresh, empty directory, removed with everything in it when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    /// `kalah-NAME-PID` under the temporary directory, emptied if a crashed run left it.
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("kalah-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_directory_is_fresh_and_goes_when_dropped() {
        let first = Scratch::new("scratch-self");
        std::fs::write(first.join("left"), "x").unwrap();
        let path = first.to_path_buf();
        drop(first);
        assert!(!path.exists());
        let again = Scratch::new("scratch-self");
        assert_eq!(std::fs::read_dir(&*again).unwrap().count(), 0);
    }
}
