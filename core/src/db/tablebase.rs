//! A directory of levels for one house count and rule set, opened level by level on first use.
//!
//! The levels of a directory are whole or refused: [`Tablebase::open`] lists the directory
//! once and refuses a gap (a level missing between level 0 and the highest one found), naming
//! the missing level, unless the caller limits itself to the levels below the gap on purpose
//! ([`Tablebase::open_up_to`]). Every read goes through [`Level`]'s block check; the search's
//! [`Probe`] checks the same bit set in its inner loop and reports a failed block as a
//! [`Fault`], which [`Probe::error`] turns into the error naming the file.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::analysis::Analysis;
use crate::board::Board;
use crate::db::index::Layout;
use crate::db::packed::Packed;
use crate::db::storage::{Access, Checked, Level, open_level};
use crate::db::{DbError, decode, finished_f, level_file_name, parse_level_file_name};
use crate::lanes::Lanes;
use crate::notation::Turn;
use crate::position::{Move, Position};
use crate::rules::{Rules, Side};

/// The levels `0..=max_level` of one house count and rule set found in a directory.
pub struct Tablebase {
    dir: PathBuf,
    houses: usize,
    rules: Rules,
    access: Access,
    layout: Layout,
    levels: Vec<OnceLock<Level>>,
}

/// A level file found in a directory listing (not opened).
#[derive(Clone, Debug)]
pub struct LevelFile {
    /// Houses a side.
    pub houses: usize,
    /// Capture rule.
    pub rules: Rules,
    /// The level.
    pub level: u32,
    /// The file.
    pub path: PathBuf,
    /// The listing says it is a regular file (a symbolic link is looked at by
    /// [`LevelFile::refuse_non_regular`]).
    is_file: bool,
}

impl LevelFile {
    /// An error naming the file if it is not a regular file (a FIFO, a directory): the level
    /// is then as good as missing.
    pub fn refuse_non_regular(&self) -> Result<(), DbError> {
        if self.is_file {
            return Ok(());
        }
        // Follows a symbolic link; refuses anything else without waiting on it.
        crate::files::open_regular(&self.path)
            .map(drop)
            .map_err(|e| DbError::from(e).in_file(&self.path))
    }
}

/// Every level file in `dir`, by its name ([`crate::db::parse_level_file_name`]), in one
/// listing. The type of each comes with the listing on most file systems: no extra system call.
pub fn level_files(dir: &Path) -> Result<Vec<LevelFile>, DbError> {
    let listing = std::fs::read_dir(dir).map_err(|e| DbError::from(e).in_file(dir))?;
    let mut files = Vec::new();
    for entry in listing {
        let entry = entry.map_err(|e| DbError::from(e).in_file(dir))?;
        let name = entry.file_name();
        let Some((houses, rules, level)) = name.to_str().and_then(parse_level_file_name) else {
            continue;
        };
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(|e| DbError::from(e).in_file(&path))?;
        files.push(LevelFile {
            houses,
            rules,
            level,
            path,
            is_file: kind.is_file(),
        });
    }
    files.sort_by_key(|f| (f.houses, f.rules.as_str(), f.level));
    Ok(files)
}

/// The levels of `houses` houses a side under `rules` that `dir` holds files for, in order
/// (the files are not opened). Something other than a regular file under one of their names (a
/// FIFO, a directory) is an error naming it: the level is as good as missing.
pub fn levels_in(dir: &Path, houses: usize, rules: Rules) -> Result<Vec<u32>, DbError> {
    let mut levels = Vec::new();
    for file in level_files(dir)? {
        if file.houses == houses && file.rules == rules {
            file.refuse_non_regular()?;
            levels.push(file.level);
        }
    }
    Ok(levels)
}

impl Tablebase {
    /// The levels in `dir` for `houses` houses a side under `rules`: level 0 up to the highest
    /// level found, every one of them present (a gap is a [`DbError::MissingLevel`]). No file is
    /// opened yet (each is opened, and its header checked, on first use). An error if there is
    /// no level 0.
    pub fn open(
        dir: &Path,
        houses: usize,
        rules: Rules,
        access: Access,
    ) -> Result<Tablebase, DbError> {
        Tablebase::open_up_to(dir, houses, rules, access, None)
    }

    /// As [`Tablebase::open`], but with `max_level` only the levels `0..=max_level` (all of
    /// which must be there; levels above are ignored): to use the levels below a gap, or fewer
    /// levels, on purpose.
    pub fn open_up_to(
        dir: &Path,
        houses: usize,
        rules: Rules,
        access: Access,
        max_level: Option<u32>,
    ) -> Result<Tablebase, DbError> {
        let found = levels_in(dir, houses, rules)?;
        if found.first() != Some(&0) {
            return Err(DbError::Unsupported(format!(
                "no database for {houses} houses, {rules} rules in {} (no {})",
                dir.display(),
                level_file_name(houses, rules, 0)
            )));
        }
        let highest = *found.last().expect("level 0 is there");
        let top = max_level.unwrap_or(highest);
        if top > highest && (0..=highest).all(|k| found.binary_search(&k).is_ok()) {
            // Levels never built, not lost: say what there is and how to get the rest.
            return Err(DbError::Unsupported(format!(
                "{} holds the levels 0..={highest} for {houses} houses, {rules} rules, not up to {top}: build them with `kalah db build --houses {houses} --max-seeds {top}{}`, or use at most --max-level {highest}",
                dir.display(),
                rules.option()
            )));
        }
        for k in 0..=top {
            if found.binary_search(&k).is_err() {
                return Err(DbError::MissingLevel {
                    level: k,
                    top,
                    path: dir.join(level_file_name(houses, rules, k)),
                });
            }
        }
        Tablebase::with_levels(dir, houses, rules, access, top)
    }

    /// The levels `0..=max_level` in `dir`, whether or not their files exist yet.
    pub fn with_levels(
        dir: &Path,
        houses: usize,
        rules: Rules,
        access: Access,
        max_level: u32,
    ) -> Result<Tablebase, DbError> {
        let layout = Layout::checked(houses, max_level)?;
        Ok(Tablebase {
            dir: dir.to_path_buf(),
            houses,
            rules,
            access,
            layout,
            levels: (0..=max_level).map(|_| OnceLock::new()).collect(),
        })
    }

    /// A tablebase of levels already in memory (`levels[k]` is level `k`, from level 0 up), as
    /// [`crate::db::build::build_in_memory`] makes them. It has no directory.
    pub(crate) fn from_levels(
        houses: usize,
        rules: Rules,
        layout: Layout,
        levels: Vec<Level>,
    ) -> Tablebase {
        debug_assert_eq!(levels.len() as u32, layout.max_level() + 1);
        Tablebase {
            dir: PathBuf::new(),
            houses,
            rules,
            access: Access::Memory,
            layout,
            levels: levels.into_iter().map(OnceLock::from).collect(),
        }
    }

    /// Houses a side.
    pub fn houses(&self) -> usize {
        self.houses
    }

    /// Capture rule.
    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// The highest level.
    pub fn max_level(&self) -> u32 {
        self.layout.max_level()
    }

    /// The directory (empty for levels built in memory).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The index of the levels.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The file of level `k`.
    pub fn path(&self, k: u32) -> PathBuf {
        self.dir.join(level_file_name(self.houses, self.rules, k))
    }

    /// Level `k`, opened (and its header checked) on first use.
    pub fn level(&self, k: u32) -> Result<&Level, DbError> {
        let cell = &self.levels[k as usize];
        if let Some(level) = cell.get() {
            return Ok(level);
        }
        let level = open_level(
            &self.path(k),
            self.access,
            self.houses,
            self.rules,
            k,
            self.layout.level_len(k),
        )?;
        // Built on the levels below as they are (see `db::format`, lineage)?
        if let (Some(recorded), Some(k_below)) = (level.header().lineage, k.checked_sub(1)) {
            let below = self.level(k_below)?;
            if recorded != crate::db::format::lineage_after(below.header()) {
                return Err(level.error(DbError::Lineage {
                    level: k,
                    below: below.path().to_path_buf(),
                }));
            }
        }
        // Another thread may have opened it meanwhile; either copy will do.
        let _ = cell.set(level);
        Ok(cell.get().expect("just set"))
    }

    /// An error naming the first level file opened so far that was written since it was opened
    /// ([`Level::unchanged`]): called after the values of an answer were read and before it is
    /// given. One `fstat` a level opened.
    pub fn unchanged(&self) -> Result<(), DbError> {
        self.unchanged_up_to(self.max_level())
    }

    /// [`Tablebase::unchanged`] for the levels whose bit is set in `levels` alone.
    fn unchanged_among(&self, mut levels: u128) -> Result<(), DbError> {
        while levels != 0 {
            let k = levels.trailing_zeros() as usize;
            levels &= levels - 1;
            if let Some(level) = self.levels.get(k).and_then(OnceLock::get) {
                level.unchanged()?;
            }
        }
        Ok(())
    }

    /// [`Tablebase::unchanged`] for the levels `0..=top` alone (those an answer about a board
    /// of `top` seeds can have read: seeds on the board never grow).
    pub fn unchanged_up_to(&self, top: u32) -> Result<(), DbError> {
        self.unchanged_among(u128::MAX >> (127 - top.min(127)))
    }

    /// [`Tablebase::probe`] for a value about to be given: the level read is then asked whether
    /// it was written since it was opened ([`Tablebase::unchanged`]), one `fstat`.
    pub fn probe_checked<L: Lanes>(&self, board: Board<L>) -> Result<Option<i32>, DbError> {
        let f = self.probe(board)?;
        if f.is_some() && !board.is_finished() {
            self.unchanged_among(1 << board.seeds())?;
        }
        Ok(f)
    }

    /// f of `board` (the future store difference for the side to move), if the game is over on
    /// it (known by rule) or its level is in the database; `None` if it is above the top level
    /// or has another house count. A damaged entry is an error, never a value.
    pub fn probe<L: Lanes>(&self, board: Board<L>) -> Result<Option<i32>, DbError> {
        if board.houses_per_side() != self.houses {
            return Ok(None);
        }
        if board.is_finished() {
            return Ok(Some(finished_f(
                board.mover_seeds(),
                board.opponent_seeds(),
            )));
        }
        match self.layout.index(board) {
            Some((k, entry)) => Ok(Some(decode(self.level(k)?.get(entry)?, k))),
            None => Ok(None),
        }
    }

    /// Every level opened, for probes in a search's inner loop.
    pub fn slices(&self) -> Result<Probe<'_>, DbError> {
        self.slices_up_to(self.max_level())
    }

    /// Levels `0..=top` opened, for probes in a search's inner loop (a probe of a board above
    /// `top` is a logic error).
    pub fn slices_up_to(&self, top: u32) -> Result<Probe<'_>, DbError> {
        let mut levels = Vec::new();
        for k in 0..=top {
            let level = self.level(k)?;
            let entries = level.entries_unchecked().ok_or_else(|| {
                DbError::Unsupported("a search needs mapped or in-memory levels".into())
            })?;
            levels.push(ProbeLevel {
                entries,
                checked: level.checked(),
                shift: level.block_shift(),
                prefetch_blocks: level.header().block_bytes() <= PREFETCHED_BLOCK_BYTES,
                level,
            });
        }
        Ok(Probe {
            layout: &self.layout,
            levels,
        })
    }
}

impl Tablebase {
    /// The exact value of `pos` and of every legal move, with a perfect line, read from the
    /// database alone (the same answer as [`crate::Solver::analyze`] with all moves); `None` if
    /// the position has more seeds on the board than the top level or another house count.
    pub fn analyze<L: Lanes>(&self, pos: &Position<L>) -> Result<Option<Analysis>, DbError> {
        // A level written under the reader explains any other error it caused: say that one.
        self.analyze_read(pos)
            .map_err(|e| match self.unchanged_up_to(pos.board().seeds()) {
                Err(changed) => changed,
                Ok(()) => e,
            })
    }

    /// [`Tablebase::analyze`], its errors as found.
    fn analyze_read<L: Lanes>(&self, pos: &Position<L>) -> Result<Option<Analysis>, DbError> {
        if pos.houses_per_side() != self.houses || pos.rules() != self.rules {
            return Ok(None);
        }
        let Some(side) = pos.to_move() else {
            let outcome = pos.outcome().expect("a finished game has an outcome");
            return Ok(Some(Analysis {
                to_move: None,
                value: outcome.margin(Side::South),
                moves: Vec::new(),
                best: Vec::new(),
                pv: Vec::new(),
            }));
        };
        let board = pos.board();
        // Loads just the entry's block and checksum from cold files, not the device's whole
        // read-ahead around them, as a plain page fault would.
        self.will_need(board);
        let Some(f) = self.probe(board)? else {
            return Ok(None);
        };
        let stores = pos.store_difference();
        // The levels read, one bit each: checked for writes before the answer is given.
        let mut read = 1u128 << board.seeds();
        let root_values = self.move_values(board, &mut read)?;
        if !root_values.iter().any(|&(_, v)| v == f) {
            return Err(self.inconsistent(board, f, &root_values));
        }
        // The perfect line: the lowest optimal house at every step.
        let mut pv = Vec::new();
        let mut turn = Vec::new();
        let mut board = board;
        while !board.is_finished() {
            let f = self.probe_below(board, &mut read)?;
            let values = self.move_values(board, &mut read)?;
            let Some(&(mv, _)) = values.iter().find(|&&(_, v)| v == f) else {
                return Err(self.inconsistent(board, f, &values));
            };
            let (child, sowing) = board.sow(mv.index(), self.rules);
            turn.push(mv);
            if sowing.passes_turn() {
                pv.push(Turn(std::mem::take(&mut turn)));
            }
            board = child;
        }
        if !turn.is_empty() {
            pv.push(Turn(turn));
        }
        // Every value above was read from levels that were not written since they were opened.
        self.unchanged_among(read)?;
        Ok(Some(Analysis::of_move_values(
            side,
            stores,
            f,
            &root_values,
            pv,
        )))
    }

    /// Each legal move of `board` (in the database) with its f for the mover: the seeds the
    /// sowing banks plus the child's f after an extra turn, minus it when the turn passes.
    /// Each level read gets its bit in `read`.
    fn move_values<L: Lanes>(
        &self,
        board: Board<L>,
        read: &mut u128,
    ) -> Result<Vec<(Move, i32)>, DbError> {
        let movable = board.movable();
        let children: Vec<_> = (0..board.houses_per_side())
            .filter(|h| movable >> h & 1 == 1)
            .map(|h| (h, board.sow(h, self.rules)))
            .collect();
        // Ask for every child's entry first: from cold files their reads then overlap.
        for &(_, (child, _)) in &children {
            self.will_need(child);
        }
        let mut values = Vec::new();
        for (h, (child, sowing)) in children {
            let f = self.probe_below(child, read)?;
            values.push((
                Move::new(h + 1).expect("a house number"),
                sowing.value_with(f),
            ));
        }
        Ok(values)
    }

    /// Tells the storage that the entry of `board` (and its block) will be read soon (a hint:
    /// nothing for a board without an entry, finished or of another size, or for a level that
    /// cannot be opened).
    fn will_need<L: Lanes>(&self, board: Board<L>) {
        if let Some((k, entry)) = self.layout.index(board) {
            if let Ok(level) = self.level(k) {
                level.will_need(entry);
            }
        }
    }

    /// f of `board`, a board reached from one in the database (so in it too, or finished); its
    /// level's bit is set in `read`.
    fn probe_below<L: Lanes>(&self, board: Board<L>, read: &mut u128) -> Result<i32, DbError> {
        *read |= 1 << board.seeds();
        self.probe(board)?.ok_or_else(|| {
            DbError::Unsupported(format!(
                "a board of {} seeds reached from the database is not in it",
                board.seeds()
            ))
        })
    }

    /// The error for a board of the database whose stored `f` no move reaches.
    fn inconsistent<L: Lanes>(&self, board: Board<L>, f: i32, moves: &[(Move, i32)]) -> DbError {
        let (level, entry) = self.layout.index(board).unwrap_or((board.seeds(), 0));
        let computed = moves.iter().map(|&(_, v)| v).max().unwrap_or(f);
        let error = DbError::Inconsistent {
            level,
            entry,
            stored: f,
            computed,
        };
        // The level was read to get here: it is open, and names its file (if it has one).
        match self.level(level) {
            Ok(opened) => opened.error(error),
            Err(_) => error,
        }
    }
}

/// A probe of the search that could not be answered: the block of entry `entry` of level
/// `level` failed its check, or the entry is out of range ([`Probe::error`] says which).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Fault {
    /// The level.
    pub level: u32,
    /// The entry.
    pub entry: u64,
}

/// One level as the search reads it.
struct ProbeLevel<'a> {
    entries: Packed<'a>,
    checked: &'a Checked,
    shift: u32,
    /// Whether a prefetch of an entry in a block not yet checked asks for the whole block
    /// (blocks of at most [`PREFETCHED_BLOCK_BYTES`]).
    prefetch_blocks: bool,
    level: &'a Level,
}

/// The largest block whose every line a prefetch asks for when it is not yet checked: blocks
/// of 512 entries (320 or 384 bytes, 5 or 6 lines) gain by it (the check then finds its bytes
/// on their way), blocks of 2048 (20 lines) lose (their lines crowd out the other loads).
const PREFETCHED_BLOCK_BYTES: u64 = 512;

/// All the levels of a [`Tablebase`] as slices, for the search's inner loop: an entry is read
/// only from a block that passed its check (checked here, on first use, and remembered for
/// every thread and every later search of the same tablebase).
pub struct Probe<'a> {
    layout: &'a Layout,
    levels: Vec<ProbeLevel<'a>>,
}

impl Probe<'_> {
    /// The highest level.
    #[inline(always)]
    pub fn max_level(&self) -> u32 {
        self.layout.max_level()
    }

    /// Starts loading the entry of `board` (as [`Probe::f`] would find it).
    #[inline]
    pub fn prefetch<L: Lanes>(&self, board: Board<L>) {
        if let Some((k, entry)) = self.locate(board) {
            self.prefetch_at(k, entry);
        }
    }

    /// The level and entry of `board` ([`Probe::f_at`] reads it); `None` for a board not in
    /// the database (finished, of other houses or above the top level).
    #[inline(always)]
    pub fn locate<L: Lanes>(&self, board: Board<L>) -> Option<(u32, u64)> {
        self.layout.index(board)
    }

    /// Starts loading entry `entry` of level `k` (from [`Probe::locate`]), and its whole block
    /// with its checksum if the block is small and not yet checked.
    #[inline(always)]
    pub fn prefetch_at(&self, k: u32, entry: u64) {
        let level = &self.levels[k as usize];
        if let Some(byte) = level.entries.byte_of(entry) {
            crate::memory::prefetch(byte);
        }
        if level.prefetch_blocks {
            let block = (entry >> level.shift) as usize;
            if !level.checked[block] {
                level.level.prefetch_block(block as u64);
            }
        }
    }

    /// f at entry `entry` of level `k` (from [`Probe::locate`]); a [`Fault`] as for
    /// [`Probe::f`].
    #[inline(always)]
    pub fn f_at(&self, k: u32, entry: u64) -> Result<i32, Fault> {
        let level = &self.levels[k as usize];
        let block = (entry >> level.shift) as usize;
        if !level.checked[block] && level.level.check_block(block as u64).is_err() {
            return Err(Fault { level: k, entry });
        }
        let stored = level.entries.get(entry);
        if u32::from(stored) > k {
            return Err(Fault { level: k, entry });
        }
        Ok(decode(stored, k))
    }

    /// f of `board`, whose game is not over and whose seeds are at most [`Probe::max_level`];
    /// `Ok(None)` for another board. A [`Fault`] if the entry's block fails its check or the
    /// entry is out of range: never a value then.
    #[inline(always)]
    pub fn f<L: Lanes>(&self, board: Board<L>) -> Result<Option<i32>, Fault> {
        match self.locate(board) {
            Some((k, entry)) => self.f_at(k, entry).map(Some),
            None => Ok(None),
        }
    }

    /// The error behind `fault`, naming the file.
    pub fn error(&self, fault: Fault) -> DbError {
        let level = self.levels[fault.level as usize].level;
        match level.get(fault.entry) {
            Err(e) => e,
            Ok(_) => level.error(DbError::Unsupported(format!(
                "level {} entry {} could not be read",
                fault.level, fault.entry
            ))),
        }
    }
}
