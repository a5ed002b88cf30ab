//! Retrograde construction of the levels, in order, each in parallel over the ones below it.
//!
//! Level k is filled table by table ([`crate::db::index`]): for a fixed opponent's side `O`, all
//! mover's sides `M` in turn. The moves of a mover's side depend on `M` alone as long as the
//! sowing does not lap the board, so they are worked out once per side ([`SideTables`]): the
//! kind of move, the side it leaves and that side's rank. Per `O` the builder then only needs
//! the ranks of `O` with one to `m` seeds dropped into its first houses (a sowing that passes
//! the store) and with one house emptied (a capture). A child's entry is then a multiply-add
//! away, and the children of consecutive boards lie in the same few rows of the tables below:
//!
//! ```text
//!  move of house h (0-based) holding s seeds, on the mover's side M (a seeds), against O (b):
//!
//!   h + s <  m, lands on a non-empty house  STAY   -> (O, M')          same level, turn passes
//!   h + s <  m, lands on an empty house x   LAND   -> capture of x and the house facing it,
//!                                                     or (standard, facing house empty) STAY
//!   h + s == m                              EXTRA  -> (M', O)          one seed banked, moves again
//!   m < h + s <= 2m                         SPILL  -> (O + 1 in houses 1..j, M'), one seed banked
//!   h + s > 2m                              LAP    -> sown in full on the board (rare)
//! ```
//!
//! A STAY child is in the same level. Entries start as [`UNKNOWN`]; a STAY child not yet known
//! is computed on the spot, by recursion (which ends: see [`crate::db`]). Threads may compute
//! the same entry twice; they write the same byte, so the result never depends on the
//! schedule: a level built on 1 thread and on N threads is byte-identical.

use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::Duration;

use crate::clock::Instant;

use rayon::prelude::*;

use crate::board::Board;
use crate::db::format::{
    HEADER_LEN, Header, block_checksum, lineage_after, padding, table_checksum,
};
use crate::db::index::Layout;
use crate::db::packed::{self, Packed, packed_len};
use crate::db::storage::{Access, Level, open_level};
use crate::db::tablebase::Tablebase;
use crate::db::{DbError, decode, encode, finished_f, level_file_name};
use crate::rules::Rules;

/// A build entry not yet computed (never a stored value: entries are at most the level).
pub const UNKNOWN: u8 = 0xFF;

/// Entries in one unit of parallel work (about).
const UNIT: u64 = 1 << 16;

const EMPTY: u8 = 0;
const STAY: u8 = 1;
const LAND: u8 = 2;
const EXTRA: u8 = 3;
const SPILL: u8 = 4;
const LAP: u8 = 5;

/// One move of one side, independent of the other side (see the module docs).
#[derive(Clone, Copy, Default)]
struct SideMove {
    kind: u8,
    /// Seeds left on the mover's side after the sowing (before any capture).
    seeds: u8,
    /// LAND: the house the last seed fell in; SPILL: seeds dropped on the opponent's side.
    aux: u8,
    /// Rank of the mover's side after the sowing.
    rank: u32,
    /// LAND: rank of that side with the landing house emptied (after a capture).
    rank_captured: u32,
}

/// The moves of every side with `s` seeds, for every `s` up to the top level.
pub struct SideTables {
    m: usize,
    /// `houses[s][rank]`: the side's houses, one byte each, house 1 in the low byte.
    houses: Vec<Vec<u64>>,
    /// `moves[s][rank * m + h]`.
    moves: Vec<Vec<SideMove>>,
    /// `spilled[s][rank * m + j - 1]`: rank of the side with one more seed in each of its
    /// first `j` houses (it then holds `s + j`), for a sowing that passes the store.
    spilled: Vec<Vec<u32>>,
    /// `emptied[s][rank * m + y]`: rank of the side with house `y` emptied, for a capture.
    emptied: Vec<Vec<u32>>,
}

impl SideTables {
    /// The tables of every side of `layout`.
    pub fn new(layout: &Layout) -> SideTables {
        let m = layout.houses();
        let mut tables = SideTables {
            m,
            houses: Vec::new(),
            moves: Vec::new(),
            spilled: Vec::new(),
            emptied: Vec::new(),
        };
        let rank_of = |houses: &[u32]| layout.rank_side(houses.iter().copied()) as u32;
        for s in 0..=layout.max_level() {
            let n = layout.side_count(s) as usize;
            let mut houses = Vec::with_capacity(n);
            let mut moves = Vec::with_capacity(n * m);
            let mut spilled = Vec::with_capacity(n * m);
            let mut emptied = Vec::with_capacity(n * m);
            for rank in 0..n as u64 {
                let side = layout.unrank_side(s, rank);
                houses.push(pack(&side));
                let mut grown = side.clone();
                for h in 0..m {
                    moves.push(side_move(layout, &side, s, h));
                    grown[h] += 1;
                    spilled.push(rank_of(&grown));
                    let mut less = side.clone();
                    less[h] = 0;
                    emptied.push(rank_of(&less));
                }
            }
            tables.houses.push(houses);
            tables.moves.push(moves);
            tables.spilled.push(spilled);
            tables.emptied.push(emptied);
        }
        tables
    }

    fn side(&self, s: u32, rank: u64) -> [u32; 8] {
        unpack(self.houses[s as usize][rank as usize], self.m)
    }
}

fn pack(side: &[u32]) -> u64 {
    side.iter()
        .enumerate()
        .fold(0, |acc, (i, &s)| acc | u64::from(s) << (8 * i))
}

fn unpack(word: u64, m: usize) -> [u32; 8] {
    let mut side = [0u32; 8];
    for (i, house) in side.iter_mut().enumerate().take(m) {
        *house = (word >> (8 * i)) as u32 & 0xFF;
    }
    side
}

fn side_move(layout: &Layout, side: &[u32], s: u32, h: usize) -> SideMove {
    let m = side.len();
    let sd = side[h] as usize;
    if sd == 0 {
        return SideMove::default();
    }
    if h + sd > 2 * m {
        return SideMove {
            kind: LAP,
            ..SideMove::default()
        };
    }
    let mut after = side.to_vec();
    after[h] = 0;
    for house in after.iter_mut().take((h + sd).min(m - 1) + 1).skip(h + 1) {
        *house += 1;
    }
    let rank_of = |houses: &[u32]| layout.rank_side(houses.iter().copied()) as u32;
    let mut mv = SideMove {
        rank: rank_of(&after),
        ..SideMove::default()
    };
    if h + sd < m {
        let x = h + sd;
        mv.seeds = s as u8;
        if side[x] == 0 {
            mv.kind = LAND;
            mv.aux = x as u8;
            let mut captured = after.clone();
            captured[x] = 0;
            mv.rank_captured = rank_of(&captured);
        } else {
            mv.kind = STAY;
        }
    } else if h + sd == m {
        mv.kind = EXTRA;
        mv.seeds = (s - 1) as u8;
    } else {
        mv.kind = SPILL;
        mv.aux = (h + sd - m) as u8;
        mv.seeds = (s as usize - sd + (m - 1 - h)) as u8;
    }
    mv
}

/// Builds level `k` in memory, one byte an entry, from the levels below it (`lower[i]` holds
/// level `i`, packed), in the current rayon pool. `progress` is called with the entries done
/// so far, now and then.
pub fn build_level(
    layout: &Layout,
    sides: &SideTables,
    rules: Rules,
    lower: &[Packed<'_>],
    k: u32,
    cancel: &AtomicBool,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Entries, DbError> {
    assert!(lower.len() >= k as usize && k <= layout.max_level());
    let mut entries = Entries::unknown(layout.level_len(k), k)?;
    let mut tables = Vec::new();
    let mut rest: &mut [u8] = &mut entries.bytes;
    for a in 1..k {
        let (table, after) = rest.split_at_mut(table_len(layout, k, a) as usize);
        tables.push((a, table));
        rest = after;
    }
    fill_tables(layout, sides, rules, lower, k, tables, cancel, progress)?;
    debug_assert!(!entries.contains(&UNKNOWN));
    Ok(entries)
}

/// Builds the tables `a` and `k - a` of level `k` (see [`crate::db::index`]) in memory, one
/// byte an entry, table `a` first, from the levels below it, as [`build_level`] does the whole
/// level. A board of table `a` depends on the boards of its own level only through sowings
/// that keep both sides' seeds (the turn passes): those boards are in table `k - a`, and
/// theirs in table `a`. So the pair of tables can be built alone, and entry for entry it is
/// the same as in the whole level. `a` must be at most `k / 2`.
#[allow(clippy::too_many_arguments)]
pub fn build_pair(
    layout: &Layout,
    sides: &SideTables,
    rules: Rules,
    lower: &[Packed<'_>],
    k: u32,
    a: u32,
    cancel: &AtomicBool,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Entries, DbError> {
    assert!(lower.len() >= k as usize && k <= layout.max_level());
    assert!(1 <= a && 2 * a <= k);
    let mut entries = Entries::unknown(pair_len(layout, k, a), k)?;
    let (table_a, table_b) = entries.bytes.split_at_mut(table_len(layout, k, a) as usize);
    let mut tables = vec![(a, table_a)];
    if 2 * a != k {
        tables.push((k - a, table_b));
    }
    fill_tables(layout, sides, rules, lower, k, tables, cancel, progress)?;
    debug_assert!(!entries.contains(&UNKNOWN));
    Ok(entries)
}

/// Entries of table `a` of level `k`: `N(a) N(k - a)`, the same for table `k - a`.
pub fn table_len(layout: &Layout, k: u32, a: u32) -> u64 {
    layout.side_count(a) * layout.side_count(k - a)
}

/// Entries of the pair of tables `a` and `k - a` of level `k` (one table if `a = k - a`).
pub fn pair_len(layout: &Layout, k: u32, a: u32) -> u64 {
    let len = table_len(layout, k, a);
    if 2 * a == k { len } else { 2 * len }
}

/// Entries of the largest pair of tables of the top level: what a rank of a split build
/// holds at once, at most.
pub fn largest_pair(layout: &Layout) -> u64 {
    let k = layout.max_level();
    (1..=k / 2)
        .map(|a| pair_len(layout, k, a))
        .max()
        .unwrap_or(0)
}

/// Fills `tables` (each table `a` of level `k` with its entries, all [`UNKNOWN`]) in the
/// current rayon pool. Every table `k - a` of a table `a` must be there too.
#[allow(clippy::too_many_arguments)]
fn fill_tables(
    layout: &Layout,
    sides: &SideTables,
    rules: Rules,
    lower: &[Packed<'_>],
    k: u32,
    tables: Vec<(u32, &mut [u8])>,
    cancel: &AtomicBool,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(), DbError> {
    let mut current: Vec<&[AtomicU8]> = vec![&[]; k as usize + 1];
    for (a, table) in tables {
        current[a as usize] = crate::memory::atomic_bytes(table);
    }
    let level = LevelBuilder {
        layout,
        sides,
        rules,
        k,
        lower,
        current,
    };
    let units = level.units();
    let done = AtomicU64::new(0);
    units.par_iter().try_for_each(|(a, range)| {
        if cancel.load(Ordering::Relaxed) {
            return Err(DbError::Cancelled);
        }
        level.fill(*a, range.clone());
        let n = range.end - range.start;
        progress(
            done.fetch_add(n * layout.side_count(*a), Ordering::Relaxed)
                + n * layout.side_count(*a),
        );
        Ok(())
    })
}

/// A level's entries as [`build_level`] makes them, one byte an entry, in memory advised to use
/// huge pages: the builder reads and writes them at random, and with 4 KiB pages nearly every
/// access would also miss the TLB.
pub struct Entries {
    bytes: crate::memory::HugeBytes,
}

impl Entries {
    /// `len` entries of level `k`, all [`UNKNOWN`].
    fn unknown(len: u64, k: u32) -> Result<Entries, DbError> {
        let mut bytes = crate::memory::HugeBytes::zeroed(len as usize).ok_or_else(|| {
            DbError::Io(std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                format!("cannot allocate {len} bytes for level {k}"),
            ))
        })?;
        bytes.fill(UNKNOWN);
        Ok(Entries { bytes })
    }
}

impl std::ops::Deref for Entries {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

struct LevelBuilder<'a> {
    layout: &'a Layout,
    sides: &'a SideTables,
    rules: Rules,
    k: u32,
    lower: &'a [Packed<'a>],
    /// `current[a]`: the entries of table `a` of this level (empty if not built here).
    current: Vec<&'a [AtomicU8]>,
}

impl LevelBuilder<'_> {
    /// Work units: (table a, a range of opponent ranks), about [`UNIT`] entries each.
    fn units(&self) -> Vec<(u32, Range<u64>)> {
        let mut units = Vec::new();
        for a in (1..self.k).filter(|&a| !self.current[a as usize].is_empty()) {
            let rows = self.layout.side_count(a);
            let columns = self.layout.side_count(self.k - a);
            let step = (UNIT / rows).max(1);
            let mut start = 0;
            while start < columns {
                let end = (start + step).min(columns);
                units.push((a, start..end));
                start = end;
            }
        }
        units
    }

    /// Fills the entries of table `a` whose opponent's side has a rank in `columns`.
    fn fill(&self, a: u32, columns: Range<u64>) {
        let b = self.k - a;
        let rows = self.layout.side_count(a);
        let width = self.layout.side_count(b);
        let table = self.current[a as usize];
        for ro in columns {
            for rm in 0..rows {
                let slot = &table[(ro + rm * width) as usize];
                if slot.load(Ordering::Relaxed) == UNKNOWN {
                    slot.store(
                        encode(self.compute(a, rm, b, ro), self.k),
                        Ordering::Relaxed,
                    );
                }
            }
        }
    }

    /// f of the board of this level whose mover's side has `a` seeds and rank `rm`, the
    /// opponent's `b` and `ro`, from its moves (see the module docs).
    #[inline]
    fn compute(&self, a: u32, rm: u64, b: u32, ro: u64) -> i32 {
        let m = self.sides.m;
        let sides = self.sides;
        let o = sides.houses[b as usize][ro as usize];
        let at = ro as usize * m;
        let spilled = &sides.spilled[b as usize][at..at + m];
        let emptied = &sides.emptied[b as usize][at..at + m];
        let at = rm as usize * m;
        let moves = &sides.moves[a as usize][at..at + m];
        let empty_capture = self.rules == Rules::EmptyCapture;
        let mut best = i32::MIN;
        for (h, mv) in moves.iter().enumerate() {
            let value = match mv.kind {
                EMPTY => continue,
                STAY => -self.same_level(b, ro, a, u64::from(mv.rank)),
                LAND => {
                    let facing = m - 1 - usize::from(mv.aux);
                    let taken = (o >> (8 * facing)) as u32 & 0xFF;
                    if taken > 0 || empty_capture {
                        let rest = u64::from(emptied[facing]);
                        (taken + 1) as i32
                            - self.f(b - taken, rest, a - 1, u64::from(mv.rank_captured))
                    } else {
                        -self.same_level(b, ro, a, u64::from(mv.rank))
                    }
                }
                EXTRA => 1 + self.f(a - 1, u64::from(mv.rank), b, ro),
                SPILL => {
                    let j = u32::from(mv.aux);
                    let grown = u64::from(spilled[j as usize - 1]);
                    1 - self.f(b + j, grown, u32::from(mv.seeds), u64::from(mv.rank))
                }
                _ => self.move_value(self.board(a, rm, b, ro), h),
            };
            best = best.max(value);
        }
        best
    }

    fn board(&self, a: u32, rm: u64, b: u32, ro: u64) -> Board {
        let m = self.sides.m;
        Board::from_houses(&self.sides.side(a, rm)[..m], &self.sides.side(b, ro)[..m])
            .expect("a database board fits the 8-bit lanes")
    }

    /// f of the board whose mover's side has `a` seeds and rank `rm`, opponent's `b`, `ro`:
    /// by rule if a side is empty, else from the level below or this one.
    #[inline(always)]
    fn f(&self, a: u32, rm: u64, b: u32, ro: u64) -> i32 {
        if a == 0 || b == 0 {
            return finished_f(a, b);
        }
        let level = a + b;
        if level == self.k {
            return self.same_level(a, rm, b, ro);
        }
        let entry = self.layout.entry(a, rm, b, ro);
        decode(self.lower[level as usize].get(entry), level)
    }

    /// f of a board of this level, computed first if it is not yet known.
    #[inline(always)]
    fn same_level(&self, a: u32, rm: u64, b: u32, ro: u64) -> i32 {
        let slot = &self.current[a as usize][(rm * self.layout.side_count(b) + ro) as usize];
        let stored = slot.load(Ordering::Relaxed);
        if stored != UNKNOWN {
            return decode(stored, self.k);
        }
        let f = self.compute(a, rm, b, ro);
        slot.store(encode(f, self.k), Ordering::Relaxed);
        f
    }

    /// f of `board` (both sides have seeds, at most this level's), from its moves.
    fn f_of(&self, board: Board) -> i32 {
        let mut best = i32::MIN;
        let mut movable = board.movable();
        while movable != 0 {
            let h = movable.trailing_zeros() as usize;
            movable &= movable - 1;
            best = best.max(self.move_value(board, h));
        }
        best
    }

    /// The value for the mover of sowing house `h` of `board`, the rest of the game played
    /// perfectly, by sowing it in full.
    fn move_value(&self, board: Board, h: usize) -> i32 {
        let (child, sowing) = board.sow(h, self.rules);
        if sowing.game_over {
            return sowing.gain();
        }
        let (level, entry) = self.layout.index(child).expect("a child of a level board");
        let f = if level == self.k {
            let a = child.mover_seeds();
            let slot = &self.current[a as usize][(entry - self.layout.offset(level, a)) as usize];
            match slot.load(Ordering::Relaxed) {
                UNKNOWN => {
                    let f = self.f_of(child);
                    slot.store(encode(f, self.k), Ordering::Relaxed);
                    f
                }
                stored => decode(stored, level),
            }
        } else {
            decode(self.lower[level as usize].get(entry), level)
        };
        if sowing.extra_turn {
            sowing.gain() + f
        } else {
            sowing.gain() - f
        }
    }
}

/// Progress of [`build`], reported to its callback.
#[derive(Clone, Copy, Debug)]
pub struct BuildProgress {
    /// The level being built.
    pub level: u32,
    /// Entries of that level done.
    pub done: u64,
    /// Entries of that level.
    pub total: u64,
    /// Time spent on that level.
    pub elapsed: Duration,
    /// The level is finished (written, or already on disk).
    pub finished: bool,
    /// The level was already on disk, complete and checked, and was kept.
    pub kept: bool,
}

/// One level of a [`build`].
#[derive(Clone, Debug)]
pub struct LevelReport {
    /// Seeds on the board.
    pub level: u32,
    /// Entries (= bytes of entries).
    pub entries: u64,
    /// Time to compute and write it (zero if it was already on disk).
    pub time: Duration,
    /// It was already on disk, complete and checked, and was kept.
    pub kept: bool,
    /// Its fingerprint: the checksum of its block table ([`crate::db::format`]).
    pub checksum: u64,
    /// Bytes of its file.
    pub bytes: u64,
}

impl LevelReport {
    /// The report of `level`, finished now, begun at `start`, or `kept` from an earlier build.
    pub(crate) fn of(level: &Level, start: Instant, kept: bool) -> LevelReport {
        let header = level.header();
        LevelReport {
            level: level.level(),
            entries: header.entries,
            time: if kept {
                Duration::ZERO
            } else {
                start.elapsed()
            },
            kept,
            checksum: header.table_checksum,
            bytes: header.file_len(),
        }
    }
}

/// What [`build`] did.
#[derive(Clone, Debug, Default)]
pub struct BuildReport {
    /// Every level, in order.
    pub levels: Vec<LevelReport>,
}

/// Builds the levels `0..=max_level` of Kalah with `houses` houses a side under `rules` into
/// `dir`, in the current rayon pool, one file per level ([`level_file_name`]).
///
/// The build holds the directory's build lock ([`crate::db::lock`]) throughout: a second build
/// into the same directory stops at once with [`DbError::Busy`]. A level already in `dir` is
/// checked (header, every block, the block table) and kept, so a build that was stopped
/// resumes at the first missing level; a damaged one stops the build with the error. A new
/// level is written to a temporary file, synced and renamed into place: a level file is
/// complete or absent, never half-written. Before that, the levels it was built from are asked
/// whether they were written since they were opened ([`Level::unchanged`]): if so the build
/// stops with [`DbError::Changed`] and writes nothing from them. Setting `cancel` stops the build between work units
/// ([`DbError::Cancelled`]); the levels finished so far stay.
pub fn build(
    dir: &Path,
    houses: usize,
    rules: Rules,
    max_level: u32,
    cancel: &AtomicBool,
    progress: &(dyn Fn(BuildProgress) + Sync),
) -> Result<BuildReport, DbError> {
    let layout = plan(houses, max_level, Held::TopLevel)?;
    crate::files::make_dir(dir).map_err(|e| DbError::from(e).in_file(dir))?;
    let _lock = crate::db::lock::lock(dir)?;
    remove_temporaries(dir, houses, rules).map_err(|e| DbError::from(e).in_file(dir))?;
    let sides = SideTables::new(&layout);
    let mut levels: Vec<Level> = Vec::new();
    let mut report = BuildReport::default();
    for k in 0..=max_level {
        let total = layout.level_len(k);
        let path = dir.join(level_file_name(houses, rules, k));
        let start = Instant::now();
        // What this level must record: the chain of the levels below as they are.
        let lineage = levels.last().map(|below| lineage_after(below.header()));
        let mut kept = path.exists();
        let mut found = None;
        if kept {
            let level = open_level(&path, Access::Map, houses, rules, k, total)?;
            let damage = level.check_all(cancel, &|_| {})?;
            if let Some(defect) = level.defect(&damage) {
                return Err(defect);
            }
            // Built from other levels than those below it now: built again (and so, in turn,
            // every level above it). A level that records no lineage is kept as before.
            match (level.header().lineage, lineage) {
                (Some(recorded), Some(now)) if recorded != now => kept = false,
                _ => found = Some(level),
            }
        }
        let level = if let Some(level) = found {
            level
        } else {
            let lower: Vec<Packed<'_>> = levels
                .iter()
                .map(|l| l.entries_unchecked().expect("a mapped level"))
                .collect();
            let report_done = |done| notify(progress, k, done, total, start, None);
            let entries = build_level(&layout, &sides, rules, &lower, k, cancel, &report_done)?;
            // The levels below were read unchecked after their check: written meanwhile, they
            // may have given wrong entries, which this level must not keep.
            for below in &levels {
                below.unchanged()?;
            }
            write_level(&path, houses, rules, k, &entries, lineage)
                .map_err(|e| e.in_file(&path))?;
            drop(entries);
            open_level(&path, Access::Map, houses, rules, k, total)?
        };
        notify(progress, k, total, total, start, Some(kept));
        report.levels.push(LevelReport::of(&level, start, kept));
        levels.push(level);
    }
    Ok(report)
}

/// What [`build`] of the levels `0..=max_level` into `dir` would write: the levels whose files
/// are not there yet (a level file already there is checked and kept), their entries and
/// file bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildCost {
    /// The levels to build.
    pub levels: Vec<u32>,
    /// Their entries.
    pub entries: u64,
    /// Their files' bytes.
    pub bytes: u64,
}

/// The [`BuildCost`] of building the levels `0..=max_level` for `houses` houses under `rules`
/// into `dir` (which need not exist yet); an error if databases do not index them.
pub fn build_cost(
    dir: &Path,
    houses: usize,
    rules: Rules,
    max_level: u32,
) -> Result<BuildCost, DbError> {
    let layout = Layout::checked(houses, max_level)?;
    let mut cost = BuildCost::default();
    for k in 0..=max_level {
        if dir.join(level_file_name(houses, rules, k)).exists() {
            continue;
        }
        let entries = layout.level_len(k);
        cost.levels.push(k);
        cost.entries += entries;
        cost.bytes += Header::new(houses as u8, rules, k, entries).file_len();
    }
    Ok(cost)
}

/// Removes the temporary files that a killed build of these levels left in `dir`.
pub(crate) fn remove_temporaries(dir: &Path, houses: usize, rules: Rules) -> std::io::Result<()> {
    let prefix = format!("kalah-{houses}-{}-", rules.as_str());
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(&prefix) && name.contains(".kdb.") && name.ends_with(".tmp") {
            std::fs::remove_file(dir.join(name.as_ref()))?;
        }
    }
    Ok(())
}

/// Builds the levels `0..=max_level` in memory, in the current rayon pool, without files: for
/// a search that wants the small levels of a variant for which no database is on disk. Setting
/// `cancel` stops it ([`DbError::Cancelled`]); `progress` is called as in [`build`].
pub fn build_in_memory(
    houses: usize,
    rules: Rules,
    max_level: u32,
    cancel: &AtomicBool,
    progress: &(dyn Fn(BuildProgress) + Sync),
) -> Result<Tablebase, DbError> {
    let layout = plan(houses, max_level, Held::AllLevels)?;
    let sides = SideTables::new(&layout);
    let mut levels: Vec<Level> = Vec::new();
    for k in 0..=max_level {
        let total = layout.level_len(k);
        let start = Instant::now();
        let lower: Vec<Packed<'_>> = levels
            .iter()
            .map(|l| l.entries_unchecked().expect("a level in memory"))
            .collect();
        let report_done = |done| notify(progress, k, done, total, start, None);
        let entries = build_level(&layout, &sides, rules, &lower, k, cancel, &report_done)?;
        levels.push(Level::built(houses, rules, k, &entries));
        notify(progress, k, total, total, start, Some(false));
    }
    Ok(Tablebase::from_levels(houses, rules, layout, levels))
}

/// The entries a build holds in memory at its peak, besides the move tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Held {
    /// The top level (a build into files).
    TopLevel,
    /// Every level (a build in memory).
    AllLevels,
    /// The largest pair of tables of the top level (a rank of a split build, see
    /// [`crate::db::distributed`]).
    LargestPair,
}

/// The layout of the levels `0..=max_level` for `houses`, if databases index them and their
/// build fits in [`build_memory_limit`] when it holds `held`.
pub(crate) fn plan(houses: usize, max_level: u32, held: Held) -> Result<Layout, DbError> {
    let layout = Layout::checked(houses, max_level)?;
    let needed = held_memory(&layout, held);
    let limit = build_memory_limit();
    if needed > limit {
        return Err(DbError::Unsupported(format!(
            "{houses} houses up to level {max_level} needs about {:.1} GiB of memory to build \
             (the {} and the move tables), more than the {:.1} GiB allowed on this machine \
             (physical memory, less a sixth for the page cache and the rest, at most {} GiB)",
            needed as f64 / (1u64 << 30) as f64,
            match held {
                Held::TopLevel => "top level",
                Held::AllLevels => "levels",
                Held::LargestPair => "largest pair of tables of the top level",
            },
            limit as f64 / (1u64 << 30) as f64,
            BUILD_MEMORY_LIMIT >> 30
        )));
    }
    Ok(layout)
}

/// Bytes a build of `layout`'s levels needs at its peak when it holds `held` (see
/// [`build_memory`]).
fn held_memory(layout: &Layout, held: Held) -> u64 {
    let max_level = layout.max_level();
    let top = layout.level_len(max_level);
    let entries: u64 = match held {
        Held::TopLevel => top,
        Held::AllLevels => {
            top + (0..max_level)
                .map(|k| packed_len(layout.level_len(k), packed::width(k)))
                .sum::<u64>()
        }
        Held::LargestPair => largest_pair(layout),
    };
    build_memory(layout) - top + entries
}

/// Bytes a build into files of the levels `0..=max_level` of `houses` houses needs in memory
/// at its peak: its top level, one byte an entry (or, `by_pairs`, the largest pair of tables of
/// the top level, as each rank of [`crate::db::distributed`] holds), and the move tables. An
/// error if databases do not index those levels; whether it fits this machine is not asked
/// (see [`build_memory_limit`]).
pub fn build_memory_held(houses: usize, max_level: u32, by_pairs: bool) -> Result<u64, DbError> {
    let layout = Layout::checked(houses, max_level)?;
    let held = if by_pairs {
        Held::LargestPair
    } else {
        Held::TopLevel
    };
    Ok(held_memory(&layout, held))
}

/// Reports `done` of the `total` entries of level `level`, begun at `start`; `finished`: the
/// level is done, and whether it was kept from an earlier build.
pub(crate) fn notify(
    progress: &(dyn Fn(BuildProgress) + Sync),
    level: u32,
    done: u64,
    total: u64,
    start: Instant,
    finished: Option<bool>,
) {
    progress(BuildProgress {
        level,
        done,
        total,
        elapsed: start.elapsed(),
        finished: finished.is_some(),
        kept: finished == Some(true),
    });
}

/// The most memory a build may need on any machine (a 24 GiB machine keeps some for the page
/// cache); see [`build_memory_limit`].
pub const BUILD_MEMORY_LIMIT: u64 = 20 << 30;

/// The most memory a build may need on this machine: five sixths of its physical memory (the
/// rest for the page cache, which holds the levels below, and the system), at most
/// [`BUILD_MEMORY_LIMIT`]; that limit where the system does not say. A build that would need
/// more is refused before it starts instead of driving the machine into swap.
pub fn build_memory_limit() -> u64 {
    match crate::memory::physical_memory() {
        Some(bytes) => (bytes / 6 * 5).min(BUILD_MEMORY_LIMIT),
        None => BUILD_MEMORY_LIMIT,
    }
}

/// Bytes a build of `layout`'s levels needs at its peak: the top level in memory and the move
/// tables of every side (houses, moves, spilled and emptied ranks).
pub fn build_memory(layout: &Layout) -> u64 {
    let m = layout.houses() as u64;
    let sides: u64 = (0..=layout.max_level()).map(|s| layout.side_count(s)).sum();
    let per_side = 8 + m * (std::mem::size_of::<SideMove>() as u64 + 8);
    layout.level_len(layout.max_level()) + sides * per_side
}

/// Blocks packed and checksummed at a time by [`write_level`] (16 Mi entries, 10 MiB at 5 bits).
const WRITE_CHUNK_BLOCKS: usize = 4096;

/// Writes a level to `path` whole and synced ([`crate::files::write_whole`]), the rename made
/// durable too: header, entries packed at the level's width, padding, block table
/// ([`crate::db::format`]). `entries` holds one byte an entry; they are packed and checksummed
/// a chunk of blocks at a time, in parallel in the current rayon pool, so that the packed level
/// never needs memory of its own. The header, which holds the table's checksum, is written last.
pub(crate) fn write_level(
    path: &Path,
    houses: usize,
    rules: Rules,
    level: u32,
    entries: &[u8],
    lineage: Option<u64>,
) -> Result<(), DbError> {
    let len = entries.len() as u64;
    write_level_from(
        path,
        houses,
        rules,
        level,
        len,
        Source::Slice(entries),
        lineage,
    )
}

/// Where [`write_level_from`] takes a level's entries from, one byte an entry, in order.
pub(crate) enum Source<'a> {
    Slice(&'a [u8]),
    /// Read as the writing goes, a chunk at a time.
    Reader(&'a mut dyn std::io::Read),
}

/// [`write_level`] of the `len` entries of `source`.
pub(crate) fn write_level_from(
    path: &Path,
    houses: usize,
    rules: Rules,
    level: u32,
    len: u64,
    mut source: Source<'_>,
    lineage: Option<u64>,
) -> Result<(), DbError> {
    use std::io::{Seek, SeekFrom, Write};
    let mut header = Header::new(houses as u8, rules, level, len);
    header.lineage = lineage;
    let width = u32::from(header.width);
    let block_entries = header.block_entries() as usize;
    let block_bytes = header.block_bytes() as usize;
    crate::files::write_whole(path, |file| {
        let mut table = Vec::with_capacity(8 * header.blocks() as usize);
        let mut out = std::io::BufWriter::with_capacity(1 << 20, &mut *file);
        out.write_all(&[0u8; HEADER_LEN])?;
        let mut packed = Vec::new();
        let mut read = Vec::new();
        let chunk_entries = (WRITE_CHUNK_BLOCKS * block_entries) as u64;
        for c in 0..len.div_ceil(chunk_entries) {
            let range = c * chunk_entries..((c + 1) * chunk_entries).min(len);
            let chunk = match &mut source {
                Source::Slice(entries) => &entries[range.start as usize..range.end as usize],
                Source::Reader(reader) => {
                    read.resize((range.end - range.start) as usize, 0);
                    reader.read_exact(&mut read)?;
                    &read[..]
                }
            };
            packed.clear();
            packed.resize(packed_len(chunk.len() as u64, width) as usize, 0);
            let first = c * WRITE_CHUNK_BLOCKS as u64;
            let sums: Vec<u64> = chunk
                .par_chunks(block_entries)
                .zip(packed.par_chunks_mut(block_bytes))
                .enumerate()
                .map(|(j, (entries, bytes))| {
                    packed::pack(entries, width, bytes);
                    block_checksum(bytes, header.block_seed(first + j as u64))
                })
                .collect();
            out.write_all(&packed)?;
            for sum in sums {
                table.extend_from_slice(&sum.to_le_bytes());
            }
        }
        out.write_all(&vec![0u8; padding(&header)])?;
        out.write_all(&table)?;
        out.flush()?;
        drop(out);
        header.table_checksum = table_checksum(&table);
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&header.to_bytes())?;
        file.sync_all()?;
        // Synced, so its pages are clean: read again, they come back in huge pages.
        crate::memory::drop_cached(file);
        Ok(())
    })?;
    crate::files::sync_parent(path)?;
    Ok(())
}
