//! Warming the levels: each level file read into the page cache in 2 MiB pieces, so that the
//! searches that probe it at random pay few TLB misses (see [`crate::memory::warm_file`]).

use std::path::Path;

use crate::db::DbError;
use crate::memory::FileMap;
pub use crate::memory::Warmed;

/// A level just warmed, its map still open. While it lives the level's pages are mapped by
/// this process, and a reclaim policy that takes only the page cache's unmapped pages (as the
/// DAMON policy of some virtual machines does, for pages unused for a minute) leaves them in
/// their 2 MiB pieces between the searches of other processes.
pub struct WarmLevel {
    /// What the warming did.
    pub warmed: Warmed,
    /// Kept only to hold the pages mapped.
    _map: FileMap,
}

/// Reads the level file at `path` into the page cache in 2 MiB pieces where the OS allows:
/// its cached pages no process maps are dropped first, then every page is read through a
/// huge-page map, returned open (drop it to let the pages go). The file is never written. An
/// error if it cannot be opened or mapped, or is not a regular file (refused without waiting
/// on it).
pub fn warm(path: &Path) -> Result<WarmLevel, DbError> {
    let file = crate::files::open_regular(path).map_err(|e| DbError::from(e).in_file(path))?;
    let (warmed, map) =
        crate::memory::warm_file(&file).map_err(|e| DbError::from(e).in_file(path))?;
    Ok(WarmLevel { warmed, _map: map })
}
