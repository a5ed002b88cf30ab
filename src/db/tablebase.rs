//! A directory of levels for one house count and rule set, opened level by level on first use.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::board::Board;
use crate::db::index::Layout;
use crate::db::storage::{Access, Storage, open_level};
use crate::db::{DbError, MAX_LEVEL, decode, finished_f, level_file_name};
use crate::lanes::Lanes;
use crate::notation::Turn;
use crate::position::{Move, Position};
use crate::rules::{Rules, Side};
use crate::search::{Analysis, MoveValue};

/// The levels `0..=max_level` of one house count and rule set found in a directory.
pub struct Tablebase {
    dir: PathBuf,
    houses: usize,
    rules: Rules,
    access: Access,
    layout: Layout,
    levels: Vec<OnceLock<Box<dyn Storage>>>,
}

impl Tablebase {
    /// The levels in `dir` for `houses` houses a side under `rules`: level 0 and every level
    /// after it up to the first one missing. No file is opened yet (each is opened, and its
    /// header checked, on first use). An error if there is no such level 0.
    pub fn open(
        dir: &Path,
        houses: usize,
        rules: Rules,
        access: Access,
    ) -> Result<Tablebase, DbError> {
        let mut top = None;
        for k in 0..=MAX_LEVEL {
            if !dir.join(level_file_name(houses, rules, k)).is_file() {
                break;
            }
            top = Some(k);
        }
        let Some(max_level) = top else {
            return Err(DbError::Unsupported(format!(
                "no database for {houses} houses, {rules} rules in {} (no {})",
                dir.display(),
                level_file_name(houses, rules, 0)
            )));
        };
        Tablebase::with_levels(dir, houses, rules, access, max_level)
    }

    /// The levels `0..=max_level` in `dir`, whether or not their files exist yet.
    pub fn with_levels(
        dir: &Path,
        houses: usize,
        rules: Rules,
        access: Access,
        max_level: u32,
    ) -> Result<Tablebase, DbError> {
        let layout = Layout::new(houses, max_level).ok_or_else(|| {
            DbError::Unsupported(format!(
                "databases index 1 to {} houses a side and levels up to {MAX_LEVEL}",
                crate::db::MAX_DB_HOUSES
            ))
        })?;
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
        levels: Vec<Box<dyn Storage>>,
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

    /// The index of the levels.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The file of level `k`.
    pub fn path(&self, k: u32) -> PathBuf {
        self.dir.join(level_file_name(self.houses, self.rules, k))
    }

    /// Level `k`, opened (and its header checked) on first use.
    pub fn level(&self, k: u32) -> Result<&dyn Storage, DbError> {
        let cell = &self.levels[k as usize];
        if let Some(level) = cell.get() {
            return Ok(level.as_ref());
        }
        let level = open_level(
            &self.path(k),
            self.access,
            self.houses,
            self.rules,
            k,
            self.layout.level_len(k),
        )?;
        // Another thread may have opened it meanwhile; either copy will do.
        let _ = cell.set(level);
        Ok(cell.get().expect("just set").as_ref())
    }

    /// f of `board` (the future store difference for the side to move), if the game is over on
    /// it (known by rule) or its level is in the database; `None` if it is above the top level
    /// or has another house count.
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

    /// Every level opened, as slices, for probes in a search's inner loop.
    pub fn slices(&self) -> Result<Probe<'_>, DbError> {
        self.slices_up_to(self.max_level())
    }

    /// Levels `0..=top` opened, as slices (a probe of a board above `top` is a logic error).
    pub fn slices_up_to(&self, top: u32) -> Result<Probe<'_>, DbError> {
        let mut levels = Vec::new();
        for k in 0..=top {
            let level = self.level(k)?;
            let slice = level.as_slice().ok_or_else(|| {
                DbError::Unsupported("a search needs mapped or in-memory levels".into())
            })?;
            levels.push(slice);
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
        let Some(f) = self.probe(board)? else {
            return Ok(None);
        };
        let stores = pos.store_difference();
        let moves = self.move_values(board)?;
        let best = moves
            .iter()
            .filter(|&&(_, v)| v == f)
            .map(|&(mv, _)| mv)
            .collect();
        let moves = moves
            .into_iter()
            .map(|(mv, v)| MoveValue {
                mv,
                value: stores + v,
            })
            .collect();
        // The perfect line: the lowest optimal house at every step.
        let mut pv = Vec::new();
        let mut turn = Vec::new();
        let mut board = board;
        while !board.is_finished() {
            let f = self
                .probe(board)?
                .expect("a child of a board in the database");
            let values = self.move_values(board)?;
            let &(mv, _) = values
                .iter()
                .find(|&&(_, v)| v == f)
                .expect("an optimal move");
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
        Ok(Some(Analysis {
            to_move: Some(side),
            value: stores + f,
            moves,
            best,
            pv,
        }))
    }

    /// Each legal move of `board` (in the database) with its f for the mover: the seeds the
    /// sowing banks plus the child's f after an extra turn, minus it when the turn passes.
    fn move_values<L: Lanes>(&self, board: Board<L>) -> Result<Vec<(Move, i32)>, DbError> {
        let mut values = Vec::new();
        let movable = board.movable();
        for h in (0..board.houses_per_side()).filter(|h| movable >> h & 1 == 1) {
            let (child, sowing) = board.sow(h, self.rules);
            let f = self
                .probe(child)?
                .expect("a child of a board in the database");
            let value = if sowing.game_over {
                sowing.gain()
            } else if sowing.extra_turn {
                sowing.gain() + f
            } else {
                sowing.gain() - f
            };
            values.push((Move::new(h + 1).expect("a house number"), value));
        }
        Ok(values)
    }
}

/// All the levels of a [`Tablebase`] as slices: an infallible probe for the search.
pub struct Probe<'a> {
    layout: &'a Layout,
    levels: Vec<&'a [u8]>,
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
        if let Some((k, entry)) = self.layout.index(board) {
            if let Some(byte) = self.levels[k as usize].get(entry as usize) {
                crate::memory::prefetch(byte);
            }
        }
    }

    /// f of `board`, whose game is not over and whose seeds are at most [`Probe::max_level`].
    #[inline]
    pub fn f<L: Lanes>(&self, board: Board<L>) -> Option<i32> {
        let (k, entry) = self.layout.index(board)?;
        Some(decode(self.levels[k as usize][entry as usize], k))
    }
}
