//! Warming the levels: each level file read into the page cache in 2 MiB pieces, so that the
//! searches that probe it at random pay few TLB misses (see [`crate::memory::warm_file`]).

use std::path::Path;

use crate::db::DbError;
pub use crate::memory::Warmed;

/// Reads the level file at `path` into the page cache in 2 MiB pieces where the OS allows:
/// its cached pages no process maps are dropped first, then every page is read through a
/// huge-page map. The file is never written. An error if it cannot be opened or mapped, or is
/// not a regular file (refused without waiting on it).
pub fn warm(path: &Path) -> Result<Warmed, DbError> {
    let file = crate::files::open_regular(path).map_err(|e| DbError::from(e).in_file(path))?;
    crate::memory::warm_file(&file).map_err(|e| DbError::from(e).in_file(path))
}
