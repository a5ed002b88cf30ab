//! Warming the levels: each level file read into the page cache in 2 MiB pieces, so that the
//! searches that probe it at random pay few TLB misses (see [`crate::memory::warm_file`]).

use std::path::Path;

use crate::db::DbError;
use crate::db::format::Header;
use crate::memory::FileMap;
pub use crate::memory::Warmed;
use crate::rules::Rules;

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
///
/// With `expect` (houses, rules, level, as the file's name says), the file must first be that
/// level: its header read and checked (magic, version, checksum), its fields those expected and
/// its length the header's; anything else (an empty file, a wrong header, a sparse file of the
/// wrong size) is an error naming what differs, and nothing is read into the cache.
pub fn warm(path: &Path, expect: Option<(usize, Rules, u32)>) -> Result<WarmLevel, DbError> {
    let mut file = crate::files::open_regular(path).map_err(|e| DbError::from(e).in_file(path))?;
    if let Some((houses, rules, level)) = expect {
        let in_file = |e: DbError| e.in_file(path);
        let header = Header::read_any_width(&mut file).map_err(in_file)?;
        // Houses, rules and level as the name says (the entries are checked by the length).
        header
            .expect(houses, rules, level, header.entries)
            .map_err(in_file)?;
        let found = file
            .metadata()
            .map_err(|e| in_file(DbError::from(e)))?
            .len();
        if found != header.file_len() {
            return Err(in_file(DbError::Truncated {
                expected: header.file_len(),
                found,
            }));
        }
    }
    let (warmed, map) =
        crate::memory::warm_file(&file).map_err(|e| DbError::from(e).in_file(path))?;
    Ok(WarmLevel { warmed, _map: map })
}
