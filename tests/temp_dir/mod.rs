//! A fresh directory for one test, removed when dropped (shared by the database tests).

use std::path::PathBuf;

/// A fresh directory under the system's temporary directory, named after the test binary's
/// `kind`, the test's `name` and the process, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(kind: &str, name: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("kalah-{kind}-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
