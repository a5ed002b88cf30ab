//! Verification of a database: headers, block checksums, and the one-ply consistency of the
//! entries.
//!
//! First every level is opened (header: magic, version, houses, rules, level, length) and
//! every block checked against its checksum, and the block table against the header; a defect
//! in one level does not stop the others from being checked, so the report lists every damaged
//! level. Then, if all of them are sound, entries are checked against their moves, level by
//! level: an entry must equal the best, over its moves, of the seeds the move banks plus (extra
//! turn) or minus (turn passes) the child's entry, read from the levels already checked. The
//! consistency check covers every entry, or a sample drawn at random from each level.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::clock::Instant;

use rayon::prelude::*;

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
#[derive(Debug)]
pub struct LevelCheck {
    /// Seeds on the board.
    pub level: u32,
    /// Entries.
    pub entries: u64,
    /// Bytes of the file.
    pub bytes: u64,
    /// Blocks checked against their checksums.
    pub blocks: u64,
    /// Entries checked against their moves (0 if the check did not get to this level).
    pub checked: u64,
    /// The level's fingerprint (its block table's checksum).
    pub checksum: u64,
    /// Time spent.
    pub time: Duration,
    /// What is wrong with the level (`None`: nothing found). Every error names the file.
    pub defect: Option<DbError>,
    /// The damaged blocks, if any (the defect names the first).
    pub damaged_blocks: Vec<u64>,
}

/// What [`verify`] checked.
#[derive(Debug, Default)]
pub struct VerifyReport {
    /// Every level, in order.
    pub levels: Vec<LevelCheck>,
}

impl VerifyReport {
    /// Whether every level is sound.
    pub fn is_sound(&self) -> bool {
        self.levels.iter().all(|l| l.defect.is_none())
    }
}

/// What [`verify`] is doing, for its progress callback.
#[derive(Clone, Copy, Debug)]
pub enum VerifyStep {
    /// Checking the blocks of a level: blocks done.
    Blocks(u32, u64),
    /// Checking the entries of a level against their moves: entries done.
    Entries(u32, u64),
}

/// Checks every level of `base` (see the module docs), in the current rayon pool, reporting
/// to `progress` now and then. The defects go in the report; the error is for a cancelled
/// check ([`DbError::Cancelled`]).
pub fn verify(
    base: &Tablebase,
    coverage: Coverage,
    cancel: &AtomicBool,
    progress: &(dyn Fn(VerifyStep) + Sync),
) -> Result<VerifyReport, DbError> {
    let mut report = VerifyReport::default();
    for k in 0..=base.max_level() {
        let start = Instant::now();
        let mut check = LevelCheck {
            level: k,
            entries: base.layout().level_len(k),
            bytes: 0,
            blocks: 0,
            checked: 0,
            checksum: 0,
            time: Duration::ZERO,
            defect: None,
            damaged_blocks: Vec::new(),
        };
        match base.level(k) {
            Err(e) => check.defect = Some(e),
            Ok(level) => {
                let header = level.header();
                check.bytes = header.file_len();
                check.blocks = header.blocks();
                check.checksum = header.table_checksum;
                let damage = level.check_all(cancel, &|done| {
                    progress(VerifyStep::Blocks(k, done));
                });
                match damage {
                    Err(DbError::Cancelled) => return Err(DbError::Cancelled),
                    Err(e) => check.defect = Some(level.error(e)),
                    Ok(damage) => {
                        check.defect = level.defect(&damage);
                        check.damaged_blocks = damage.blocks;
                    }
                }
            }
        }
        check.time = start.elapsed();
        report.levels.push(check);
    }
    if !report.is_sound() {
        return Ok(report);
    }
    for k in 0..=base.max_level() {
        let start = Instant::now();
        let entries = report.levels[k as usize].entries;
        let (sample, checked) = match coverage {
            Coverage::Sample(n) if n < entries => (true, n),
            _ => (false, entries),
        };
        let result = consistent(base, k, sample, checked, cancel, progress);
        let check = &mut report.levels[k as usize];
        check.time += start.elapsed();
        match result {
            Ok(()) => check.checked = checked,
            Err(DbError::Cancelled) => return Err(DbError::Cancelled),
            Err(e) => {
                check.defect = Some(e);
                break;
            }
        }
    }
    Ok(report)
}

/// Checks `checked` entries of level `k` against their moves: all of them in order, or with
/// `sample` that many drawn at random (each chunk of work draws its own from a seed of its
/// own, so that the picks need no memory and do not depend on the threads).
fn consistent(
    base: &Tablebase,
    k: u32,
    sample: bool,
    checked: u64,
    cancel: &AtomicBool,
    progress: &(dyn Fn(VerifyStep) + Sync),
) -> Result<(), DbError> {
    let level = base.level(k)?;
    let probe = base.slices_up_to(k)?;
    let done = AtomicU64::new(0);
    let check = |entry: u64| -> Result<(), DbError> {
        let stored = decode(level.get(entry)?, k);
        let computed = one_ply(&probe, base, k, entry)?;
        if stored != computed {
            let error = DbError::Inconsistent {
                level: k,
                entry,
                stored,
                computed,
            };
            return Err(level.error(error));
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
        let entries = level.len();
        let mut rng = Rng::new(0x6B61_6C61_6800 ^ u64::from(k) << 40 ^ c);
        for i in range {
            check(if sample { rng.below(entries) } else { i })?;
        }
        progress(VerifyStep::Entries(
            k,
            done.fetch_add(n, Ordering::Relaxed) + n,
        ));
        Ok(())
    })
}

/// f of entry `entry` of level `k`, recomputed from its moves and the stored children.
fn one_ply(probe: &Probe<'_>, base: &Tablebase, k: u32, entry: u64) -> Result<i32, DbError> {
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
            let f = probe
                .f(child)
                .map_err(|fault| probe.error(fault))?
                .expect("a child within the checked levels");
            if sowing.extra_turn {
                sowing.gain() + f
            } else {
                sowing.gain() - f
            }
        };
        best = best.max(value);
    }
    Ok(best)
}
