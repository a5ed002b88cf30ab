//! Endgame databases: the exact f of every board with up to K seeds, one file per level.
//!
//! - [`index`]: the perfect rank of the boards of one level ([`Layout`]).
//! - [`packed`]: entries packed at their level's width (5 bits up to level 31).
//! - [`mod@format`]: the level file (header, entries, a checksum per block).
//! - [`storage`]: where a level's bytes live (memory map, plain reads, memory), and the check
//!   of each block before its entries are believed ([`Level`]).
//! - [`mod@build`]: retrograde construction, level by level, in parallel.
//! - [`distributed`]: the same build split over the ranks of a job (MPI), level by level, each
//!   rank building its share of pairs of tables; [`ranks`]: the messages it needs.
//! - [`tablebase`]: a directory of levels, opened on first use, and the probe.
//! - [`mod@verify`]: checksums, headers and the one-ply consistency of the entries.
//! - [`upgrade`]: format 1 files (one checksum a file) and byte-wide format 2 files rewritten
//!   in the current form.
//! - [`lock`]: the advisory lock that keeps two builds out of one directory.
//! - [`home`]: the database home, where databases live when no directory is named.
//!
//! **Trust.** A database answers right or not at all: every block of entries is checked
//! against its checksum before any entry of it is used, an entry out of its level's range is
//! an error, a gap in the levels is an error naming the missing level, and every error names
//! the file.
//!
//! A level depends only on the levels below it and on boards of its own level reached by
//! sowings that stay on the mover's side and pass the turn. Such a sowing moves seeds towards
//! the mover's store, so the sum over both sides of (seeds x distance to their owner's store)
//! strictly falls: within a level there are no cycles, and the builder can fill the entries it
//! needs first by recursion.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::rules::Rules;

pub mod build;
pub mod distributed;
pub mod format;
pub mod home;
pub mod index;
pub mod lock;
pub mod packed;
pub mod ranks;
pub mod storage;
pub mod tablebase;
pub mod upgrade;
pub mod verify;
pub mod warm;

pub use build::{
    BuildCost, BuildProgress, BuildReport, build, build_cost, build_in_memory, build_memory_held,
};
pub use index::{Layout, MAX_DB_HOUSES, MAX_LEVEL, level_len};
pub use storage::{Access, Level, Storage};
pub use tablebase::Tablebase;
pub use verify::{VerifyReport, verify};

/// Everything that can go wrong with a database file or directory.
#[derive(Debug)]
pub enum DbError {
    /// Reading or writing failed.
    Io(std::io::Error),
    /// The file does not start with the database magic.
    BadMagic,
    /// The file is in a format version this code does not read.
    Version(u32),
    /// The file stores one byte an entry, as the first builds of format 2 did: this build
    /// reads entries packed at the level's width.
    ByteWide {
        /// Level of the file.
        level: u32,
        /// The level's width, in bits.
        width: u8,
    },
    /// The header's own checksum does not match: the header is damaged.
    HeaderChecksum,
    /// A header field holds an impossible value.
    Corrupt(String),
    /// The file is shorter or longer than its header says.
    Truncated {
        /// Bytes the header implies.
        expected: u64,
        /// Bytes found.
        found: u64,
    },
    /// A header field differs from what was asked for (wrong houses, rules, level or length).
    Mismatch {
        /// The field.
        field: &'static str,
        /// What the caller needed.
        expected: String,
        /// What the file says.
        found: String,
    },
    /// The entries do not match the header's checksum (a format 1 file).
    Checksum {
        /// The header's checksum.
        expected: u64,
        /// The entries' checksum.
        found: u64,
    },
    /// A block of entries does not match its checksum: the file is damaged there.
    Damaged {
        /// Level of the file.
        level: u32,
        /// The block.
        block: u64,
        /// The entries of the block.
        entries: std::ops::Range<u64>,
    },
    /// The block table does not match the header's table checksum.
    DamagedTable {
        /// Level of the file.
        level: u32,
    },
    /// An entry holds a value its level cannot have (its block's checksum passed: the file
    /// was not written by a build of this program).
    OutOfRange {
        /// Level of the entry.
        level: u32,
        /// Index of the entry.
        entry: u64,
        /// The stored byte.
        stored: u8,
    },
    /// A level between level 0 and the top one is missing from the directory.
    MissingLevel {
        /// The missing level.
        level: u32,
        /// The highest level found (or asked for with a limit).
        top: u32,
        /// The file that should hold it.
        path: PathBuf,
    },
    /// Another process is building in the directory.
    Busy {
        /// The directory.
        dir: PathBuf,
        /// The builder's process id, if it could be read.
        pid: Option<u32>,
    },
    /// An entry is not the best of its moves (found by verification).
    Inconsistent {
        /// Level of the entry.
        level: u32,
        /// Index of the entry.
        entry: u64,
        /// The stored f.
        stored: i32,
        /// f recomputed from the moves.
        computed: i32,
    },
    /// The houses or level are beyond what the databases index.
    Unsupported(String),
    /// Another rank of a split build ([`distributed`]) failed, and the build stopped.
    Rank {
        /// That rank.
        rank: usize,
        /// Its error.
        error: String,
    },
    /// The work was cancelled (nothing half-written was left behind).
    Cancelled,
    /// A level records another lineage than the levels beneath it give: it was built from
    /// other levels than those below it now (see [`format`]).
    Lineage {
        /// The level.
        level: u32,
        /// The file of the level below it.
        below: PathBuf,
    },
    /// A level file was written (changed in place, truncated) after it was opened: the values
    /// read from it since are not given.
    Changed {
        /// Level of the file.
        level: u32,
        /// Its length when it was opened.
        was: u64,
        /// Its length now.
        now: u64,
    },
    /// An error in one file.
    InFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        error: Box<DbError>,
    },
}

impl DbError {
    /// This error, said of `path`.
    pub fn in_file(self, path: &Path) -> DbError {
        match self {
            DbError::InFile { .. } => self,
            error => DbError::InFile {
                path: path.to_path_buf(),
                error: Box::new(error),
            },
        }
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbError::Io(e) => e.fmt(f),
            DbError::BadMagic => write!(f, "not a kalah database file (bad magic)"),
            DbError::Version(1) => write!(
                f,
                "level file format 1 (one checksum a file), this build reads format {} (a \
                 checksum a block): convert it with `kalah db upgrade --dir DIR`, or rebuild it",
                format::VERSION
            ),
            DbError::Version(v) => write!(
                f,
                "level file format {v}, this build reads format {} (a newer kalah wrote it, or \
                 it is damaged)",
                format::VERSION
            ),
            DbError::ByteWide { level, width } => write!(
                f,
                "level {level} stores one byte an entry (written by a kalah of before the packed \
                 levels); this build reads entries packed at the level's width ({width} bits \
                 here): convert the directory with `kalah db upgrade --dir DIR` (a lossless \
                 rewrite, to about {width}/8 of the size), or rebuild it"
            ),
            DbError::HeaderChecksum => write!(f, "damaged header (header checksum mismatch)"),
            DbError::Corrupt(what) => write!(f, "damaged header: {what}"),
            DbError::Truncated { expected, found } => write!(
                f,
                "wrong length: {found} bytes, the header says {expected} (truncated or damaged)"
            ),
            DbError::Mismatch {
                field,
                expected,
                found,
            } => write!(
                f,
                "wrong {field}: expected {expected}, the file has {found}"
            ),
            DbError::Checksum { expected, found } => write!(
                f,
                "checksum mismatch: header {expected:016x}, entries {found:016x} (damaged entries)"
            ),
            DbError::Damaged {
                level,
                block,
                entries,
            } => write!(
                f,
                "damaged: level {level}, block {block} (entries {}..{}) does not match its \
                 checksum; rebuild the level (delete the file, run `kalah db build` again)",
                entries.start, entries.end
            ),
            DbError::DamagedTable { level } => write!(
                f,
                "damaged: the block checksums of level {level} do not match the header; rebuild \
                 the level (delete the file, run `kalah db build` again)"
            ),
            DbError::OutOfRange {
                level,
                entry,
                stored,
            } => write!(
                f,
                "level {level} entry {entry} holds {stored}, above the level (not a file of a \
                 kalah build); rebuild the level"
            ),
            DbError::MissingLevel { level, top, path } => write!(
                f,
                "level {level} is missing ({}), below level {top}: rebuild it with `kalah db \
                 build`, or use the levels below it with --max-level {}",
                path.display(),
                level.saturating_sub(1)
            ),
            DbError::Busy { dir, pid } => match pid {
                Some(pid) => write!(
                    f,
                    "{} is being built by process {pid}; wait for it to finish",
                    dir.display()
                ),
                None => write!(
                    f,
                    "{} is being built by another process; wait for it to finish",
                    dir.display()
                ),
            },
            DbError::Inconsistent {
                level,
                entry,
                stored,
                computed,
            } => write!(
                f,
                "level {level} entry {entry} holds f = {stored}, its moves give {computed}"
            ),
            DbError::Unsupported(what) => write!(f, "{what}"),
            DbError::Rank { rank, error } => write!(f, "rank {rank} of the build: {error}"),
            DbError::Cancelled => write!(f, "cancelled"),
            DbError::Lineage { level, below } => write!(
                f,
                "level {level} was built from other levels than the level {} below it ({}): \
                 its values do not follow from them; run `kalah db build` again to rebuild it \
                 (and the levels above it) on these",
                level - 1,
                below.display()
            ),
            DbError::Changed { level, was, now } => {
                write!(
                    f,
                    "level {level} was written while in use (the file changed since it was opened"
                )?;
                if was != now {
                    write!(f, ": {was} bytes then, {now} now")?;
                }
                write!(
                    f,
                    "), so no value read from it since is given; run the command again, and if \
                     the file was not meant to change, `kalah db verify` checks the levels"
                )
            }
            DbError::InFile { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for DbError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DbError::Io(e) => Some(e),
            DbError::InFile { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl From<std::io::Error> for DbError {
    fn from(e: std::io::Error) -> DbError {
        DbError::Io(e)
    }
}

/// The file name of a level: `kalah-<m>-<rules>-<level>.kdb`, e.g. `kalah-6-standard-024.kdb`.
pub fn level_file_name(houses: usize, rules: Rules, level: u32) -> String {
    format!("kalah-{houses}-{}-{level:03}.kdb", rules.as_str())
}

/// The houses, rules and level a level file's name gives (the inverse of [`level_file_name`]);
/// `None` for any other name.
pub fn parse_level_file_name(name: &str) -> Option<(usize, Rules, u32)> {
    let rest = name.strip_prefix("kalah-")?.strip_suffix(".kdb")?;
    let (houses, rest) = rest.split_once('-')?;
    let (rules, level) = rest.rsplit_once('-')?;
    let parsed = (
        houses.parse().ok()?,
        rules.parse().ok()?,
        level.parse().ok()?,
    );
    // Only the exact name the builder writes ("kalah-04-..." or "Standard" are not).
    (level_file_name(parsed.0, parsed.1, parsed.2) == name).then_some(parsed)
}

/// f of a board with an empty side (the game is over: each side sweeps its own seeds).
#[inline(always)]
pub fn finished_f(mover_seeds: u32, opponent_seeds: u32) -> i32 {
    mover_seeds as i32 - opponent_seeds as i32
}

/// f from a stored entry of level `k`.
#[inline(always)]
pub fn decode(entry: u8, k: u32) -> i32 {
    2 * i32::from(entry) - k as i32
}

/// The stored entry of f at level `k` (`f` in `-k..=k`, of k's parity).
#[inline(always)]
pub fn encode(f: i32, k: u32) -> u8 {
    debug_assert!(f.abs() <= k as i32 && (f + k as i32) % 2 == 0);
    ((f + k as i32) / 2) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_file_names_parse_back_and_nothing_else_does() {
        for houses in [1, 6, 8, 12] {
            for rules in Rules::ALL {
                for level in [0, 7, 64, 999] {
                    let name = level_file_name(houses, rules, level);
                    assert_eq!(parse_level_file_name(&name), Some((houses, rules, level)));
                }
            }
        }
        for name in [
            "kalah-4-standard-07.kdb",
            "kalah-04-standard-007.kdb",
            "kalah-4-Standard-007.kdb",
            "kalah-4-standard-007.kdb.123-0.tmp",
            "kalah-4-standard-+07.kdb",
            "kalah--standard-007.kdb",
            ".kalah-build.lock",
        ] {
            assert_eq!(parse_level_file_name(name), None, "{name}");
        }
    }
}
