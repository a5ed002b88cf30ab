//! Verification of a database: headers, checksums, and the one-ply consistency of entries.
//!
//! Each level is checked in order: its header (magic, version, houses, rules, level, length),
//! its checksum (any flipped byte changes it: see [`crate::db::format`]), then entries against
//! their moves: an entry must equal the best, over its moves, of the seeds the move banks plus
//! (extra turn) or minus (turn passes) the child's entry, read from the levels already checked.
//! The consistency check covers every entry, or a sample drawn at random from each level.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::db::format::{Header, checksum};
use crate::db::tablebase::{Probe, Tablebase};
use crate::db::{DbError, decode};
use crate::rng::Rng;

/// Which entries the one-ply check covers.
#[derive(Clone, Copy, Debug)]
pub enum Coverage {
    /// Every entry.
    All,
    /// Up to this many entries a level, drawn at random (all of a smaller level).
    Sample(u64),
}

/// One level's verification.
#[derive(Clone, Debug)]
pub struct LevelCheck {
    /// Seeds on the board.
    pub level: u32,
    /// Entries.
    pub entries: u64,
    /// Entries checked against their moves.
    pub checked: u64,
    /// The checksum (it matched the header's).
    pub checksum: u64,
    /// Time spent.
    pub time: Duration,
}

/// What [`verify`] checked (it returns an error at the first defect).
#[derive(Clone, Debug, Default)]
pub struct VerifyReport {
    /// Every level, in order.
    pub levels: Vec<LevelCheck>,
}

/// Checks every level of `base` (see the module docs), in the current rayon pool, reporting
/// `(level, entries checked)` to `progress` now and then. The first defect is returned as an
/// error naming its file.
pub fn verify(
    base: &Tablebase,
    coverage: Coverage,
    cancel: &AtomicBool,
    progress: &(dyn Fn(u32, u64) + Sync),
) -> Result<VerifyReport, DbError> {
    let mut report = VerifyReport::default();
    for k in 0..=base.max_level() {
        let start = Instant::now();
        let path = base.path(k);
        let level = base.level(k)?;
        let header =
            Header::read(&mut std::fs::File::open(&path)?).map_err(|e| e.in_file(&path))?;
        let entries = level.len();
        let sum = match level.as_slice() {
            Some(slice) => checksum(slice),
            None => {
                let mut bytes = std::fs::read(&path)?;
                bytes.drain(..crate::db::format::HEADER_LEN);
                checksum(&bytes)
            }
        };
        if sum != header.checksum {
            let error = DbError::Checksum {
                expected: header.checksum,
                found: sum,
            };
            return Err(error.in_file(&path));
        }
        let probe = base.slices_up_to(k)?;
        let picks: Vec<u64> = match coverage {
            Coverage::Sample(n) if n < entries => {
                let mut rng = Rng::new(0x6B61_6C61_6800 + u64::from(k));
                (0..n).map(|_| rng.below(entries)).collect()
            }
            _ => Vec::new(),
        };
        let checked = if picks.is_empty() {
            entries
        } else {
            picks.len() as u64
        };
        let done = AtomicU64::new(0);
        let check = |entry: u64| -> Result<(), DbError> {
            let stored = decode(level.get(entry)?, k);
            let computed = one_ply(&probe, base, k, entry);
            if stored != computed {
                let error = DbError::Inconsistent {
                    level: k,
                    entry,
                    stored,
                    computed,
                };
                return Err(error.in_file(&path));
            }
            Ok(())
        };
        let chunk = 1 << 14;
        let chunks = checked.div_ceil(chunk);
        (0..chunks).into_par_iter().try_for_each(|c| {
            if cancel.load(Ordering::Relaxed) {
                return Err(DbError::Cancelled);
            }
            let range = c * chunk..((c + 1) * chunk).min(checked);
            let n = range.end - range.start;
            for i in range {
                check(if picks.is_empty() {
                    i
                } else {
                    picks[i as usize]
                })?;
            }
            progress(k, done.fetch_add(n, Ordering::Relaxed) + n);
            Ok(())
        })?;
        report.levels.push(LevelCheck {
            level: k,
            entries,
            checked,
            checksum: sum,
            time: start.elapsed(),
        });
    }
    Ok(report)
}

/// f of entry `entry` of level `k`, recomputed from its moves and the stored children.
fn one_ply(probe: &Probe<'_>, base: &Tablebase, k: u32, entry: u64) -> i32 {
    let board = base
        .layout()
        .board(k, entry)
        .expect("an entry of the level");
    let mut best = i32::MIN;
    let mut movable = board.movable();
    while movable != 0 {
        let h = movable.trailing_zeros() as usize;
        movable &= movable - 1;
        let (child, sowing) = board.sow(h, base.rules());
        let value = if sowing.game_over {
            sowing.gain()
        } else {
            let f = probe.f(child).expect("a child within the checked levels");
            if sowing.extra_turn {
                sowing.gain() + f
            } else {
                sowing.gain() - f
            }
        };
        best = best.max(value);
    }
    best
}
