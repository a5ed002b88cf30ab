//! A directory of levels for one house count and rule set, opened level by level on first use.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::board::Board;
use crate::db::index::Layout;
use crate::db::storage::{Access, Storage, open_level};
use crate::db::{DbError, MAX_LEVEL, decode, finished_f, level_file_name};
use crate::lanes::Lanes;
use crate::rules::Rules;

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
    pub fn open(dir: &Path, houses: usize, rules: Rules, access: Access) -> Result<Tablebase, DbError> {
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
            return Ok(Some(finished_f(board.mover_seeds(), board.opponent_seeds())));
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

    /// f of `board`, whose game is not over and whose seeds are at most [`Probe::max_level`].
    #[inline]
    pub fn f<L: Lanes>(&self, board: Board<L>) -> Option<i32> {
        let (k, entry) = self.layout.index(board)?;
        Some(decode(self.levels[k as usize][entry as usize], k))
    }
}
