//! What a search stopped by its node limit had finished: the harvest of a test that ran out of
//! its budget.
//!
//! A null-window test that runs out of its budget has not answered its own question, but it
//! has answered many below it: every subtree it finished is a proven bound on the value of
//! that subtree's board, for the very window the proof tree would ask of it (the tree derives
//! a move's test from its parent's exactly as the search derives the child's window). The
//! search records, at the nodes within [`Harvest::plies`] of the test's root,
//!
//! ```text
//!   test root (unfinished)
//!    ├─ move a: finished, 40 k nodes, f <= -3      -> Done  { bounds, nodes }
//!    ├─ move b: unfinished                          -> Unfinished
//!    │    ├─ move c: finished, 25 k nodes, f >= 2   -> Done
//!    │    └─ move d: unfinished                     -> Unfinished (the search stopped here)
//!    └─ move e: never started                       -> (nothing)
//! ```
//!
//! - every node that finished with at least [`Harvest::min_nodes`] nodes below it, with the
//!   bounds its fail-soft result proves and its nodes ([`Found::Done`]);
//! - every node the stop unwound through ([`Found::Unfinished`]).
//!
//! The caller walks down from the test's root through the unfinished nodes and takes the
//! finished ones it meets: the largest finished subtrees, disjoint, whose nodes are the test's
//! work that was not wasted. A node is recorded only once the search below it is over and
//! never from a search that a fault or a cancel stopped, so every bound recorded is proven.
//! Nothing is recorded unless a search is given a harvest ([`crate::Solver::test_harvesting`]):
//! the search pays one test of a pointer a node for it.

use std::sync::Mutex;

use crate::board::{Board, HouseKey};
use crate::fast_hash::FastMap;
use crate::lanes::Lanes;

/// The most records a harvest keeps (each is some 40 bytes).
pub const MAX_RECORDS: usize = 1 << 16;

/// What the search recorded of one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// The search of this node finished: `lower <= f <= upper`, in `nodes` nodes.
    Done {
        /// f >= lower.
        lower: i32,
        /// f <= upper.
        upper: i32,
        /// Nodes of its subtree (this node included).
        nodes: u64,
    },
    /// The search passed through this node and stopped below it.
    Unfinished,
}

/// A collector of the nodes a search finished (see the module docs), shared by its threads.
pub struct Harvest {
    /// Nodes up to this many plies below the root are recorded (the root itself never).
    pub plies: u32,
    /// A finished node is recorded only with at least this many nodes below it.
    pub min_nodes: u64,
    found: Mutex<FastMap<HouseKey, Found>>,
}

impl Harvest {
    /// A harvest of the nodes 1 to `plies` plies below the root that finish with at least
    /// `min_nodes` nodes.
    pub fn new(plies: u32, min_nodes: u64) -> Harvest {
        Harvest {
            plies,
            min_nodes,
            found: Mutex::new(FastMap::default()),
        }
    }

    /// Whether a node `ply` plies below the root is recorded.
    #[inline(always)]
    pub fn covers(&self, ply: u32) -> bool {
        ply >= 1 && ply <= self.plies
    }

    /// Records that the search of `board` finished with `lower <= f <= upper` in `nodes`
    /// nodes. A board finished twice (a transposition) keeps both results' bounds, and the
    /// larger count. Boards are named by [`Board::house_key`].
    #[inline(never)]
    pub fn done<L: Lanes>(&self, board: Board<L>, lower: i32, upper: i32, nodes: u64) {
        if nodes < self.min_nodes {
            return;
        }
        let houses = board.house_key();
        let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        if found.len() >= MAX_RECORDS && !found.contains_key(&houses) {
            return;
        }
        let entry = found.entry(houses).or_insert(Found::Unfinished);
        *entry = match *entry {
            Found::Done {
                lower: l,
                upper: u,
                nodes: n,
            } => Found::Done {
                lower: lower.max(l),
                upper: upper.min(u),
                nodes: nodes.max(n),
            },
            Found::Unfinished => Found::Done {
                lower,
                upper,
                nodes,
            },
        };
    }

    /// Records that the search stopped below `board` (one that finished elsewhere, a
    /// transposition, stays finished).
    #[cold]
    pub fn unfinished<L: Lanes>(&self, board: Board<L>) {
        let houses = board.house_key();
        let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        if found.len() < MAX_RECORDS {
            found.entry(houses).or_insert(Found::Unfinished);
        }
    }

    /// What was recorded of the board with houses `houses` ([`Board::house_key`]).
    pub fn get(&self, houses: &HouseKey) -> Option<Found> {
        let found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        found.get(houses).copied()
    }

    /// Forgets every record, for the next search.
    pub fn clear(&self) {
        self.found.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}
