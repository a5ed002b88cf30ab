//! The proof tree: the positions a campaign has split, grown from its root by the ledger alone.
//!
//! ```text
//!   root (always split)                     f-bounds of a split node: the tightest of
//!    ├─ 1 ─> child (a leaf: one test)          - its own facts, and
//!    ├─ 2 ─> child (over budget: split)         - max over its moves of the move's bounds:
//!    │        ├─ 1 ─> ...                        game over: [gain, gain]
//!    │        └─ 4 ─> (game over)                extra turn: gain + [lo, hi] of the child
//!    └─ 3 ─> child (extra turn: same side)       pass: gain - [hi, lo] of the child
//! ```
//!
//! A node is split (its moves become nodes) when it is the root or when the ledger holds a
//! fact that a test of it ran out of its node budget. Nodes are positions, not boards: a board
//! met on two paths is two nodes, which share the facts about that board. Children always come
//! after their parent in [`Tree::nodes`].
//!
//! **Which leaf next: proof-number search.** For a test "f(node) >= t" at a node, each node
//! below gets its own test (a move that passes the turn asks "f(child) >= gain - t + 1" and
//! counts its negation; an extra turn asks "f(child) >= t - gain"). A test decided by the
//! bounds has proof and disproof numbers (0, ∞) or (∞, 0); an open leaf (1, 1); a split node
//! the least proof number of its moves and the sum of their disproof numbers, where a move that
//! passes the turn swaps its child's two numbers. The next leaf is the one reached from the
//! focus by always taking the move of least proof number: the leaf whose answer changes the
//! focus's numbers most for the fewest jobs.

use std::fmt;

use crate::board::Board;
use crate::lanes::{Lanes, Narrow};
use crate::position::{Move, Position};
use crate::prove::fact::Bounds;
use crate::prove::ledger::Ledger;

/// A proof or disproof number that stands for "never" (the test is decided the other way).
pub const INFINITE: u64 = u64::MAX / 4;

/// How a move ends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EdgeKind {
    /// The game is over after it: its value is its gain.
    GameOver,
    /// The mover moves again: gain + f(child).
    ExtraTurn,
    /// The other side moves: gain - f(child).
    Pass,
}

/// One move of a split node.
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    /// The move.
    pub mv: Move,
    /// The mover's store gain on it, less the opponent's.
    pub gain: i32,
    /// How it ends.
    pub kind: EdgeKind,
    /// The node it leads to (none when the game is over).
    pub child: Option<usize>,
}

/// One position of the tree.
#[derive(Clone, Debug)]
pub struct Node<L: Lanes = Narrow> {
    /// The position (stores as reached from the root).
    pub position: Position<L>,
    /// Its moves, if it is split; empty for a leaf.
    pub moves: Vec<Edge>,
    /// Bounds on f of its board (the value less the stores), from the facts and its moves.
    pub bounds: Bounds,
    /// The test this node answers for the focus: "f >= threshold".
    pub threshold: i32,
    /// Proof number of that test.
    pub proof: u64,
    /// Disproof number of that test.
    pub disproof: u64,
    /// Depth below the root, in sowings.
    pub depth: u32,
}

impl<L: Lanes> Node<L> {
    /// Whether the node is split into its moves.
    pub fn is_split(&self) -> bool {
        !self.moves.is_empty()
    }

    /// The board.
    pub fn board(&self) -> Board<L> {
        self.position.board()
    }
}

/// Why the tree cannot be grown from the ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeError {
    /// The tree grew past its limit.
    TooLarge(usize),
    /// The facts about a position contradict the facts about its moves.
    Contradiction {
        /// The position.
        position: String,
        /// Its own facts' bounds and its moves' (values, stores included).
        detail: String,
    },
}

impl fmt::Display for TreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TreeError::TooLarge(n) => write!(
                f,
                "the proof tree has grown past {n} positions (a larger --budget splits less)"
            ),
            TreeError::Contradiction { position, detail } => write!(
                f,
                "the facts about {position} contradict the facts about its moves: {detail} \
                 (`kalah prove --check` finds the wrong one)"
            ),
        }
    }
}

impl std::error::Error for TreeError {}

/// The proof tree of a root, as the ledger has split it (see the module docs).
pub struct Tree<L: Lanes = Narrow> {
    nodes: Vec<Node<L>>,
}

/// The test of `edge`'s child that answers "is the edge's value >= `t`" for the node it leaves:
/// "f(child) >= this" (f(child) >= t - gain after an extra turn; after the other side moves,
/// gain - f(child) >= t, that is f(child) < gain - t + 1).
pub fn child_threshold(edge: &Edge, t: i32) -> i32 {
    match edge.kind {
        EdgeKind::ExtraTurn => t - edge.gain,
        _ => edge.gain - t + 1,
    }
}

impl<L: Lanes> Tree<L> {
    /// The tree of `root` (a position with a move to make) grown as `ledger`'s facts split it,
    /// with every node's bounds; at most `max_nodes` positions.
    pub fn grow(
        root: Position<L>,
        ledger: &Ledger<L>,
        max_nodes: usize,
    ) -> Result<Tree<L>, TreeError> {
        let rules = root.rules();
        let mut nodes = vec![leaf(root, 0)];
        let mut i = 0;
        while i < nodes.len() {
            let position = nodes[i].position;
            let known = ledger.known(rules, position.board());
            // A board a test ran out of its budget on is split even where other facts make it
            // exact: its moves are then checked against that value (a contradiction below an
            // exact fact is found, never hidden by it).
            let split = i == 0 || known.is_some_and(|k| k.over_budget.is_some());
            if split && !position.is_finished() {
                let mut moves = Vec::new();
                for mv in position.legal_moves() {
                    let (next, sowing) = position.play_unchecked(mv);
                    let kind = if sowing.game_over {
                        EdgeKind::GameOver
                    } else if sowing.extra_turn {
                        EdgeKind::ExtraTurn
                    } else {
                        EdgeKind::Pass
                    };
                    let child = (kind != EdgeKind::GameOver).then(|| {
                        nodes.push(leaf(next, nodes[i].depth + 1));
                        nodes.len() - 1
                    });
                    moves.push(Edge {
                        mv,
                        gain: sowing.gain(),
                        kind,
                        child,
                    });
                }
                nodes[i].moves = moves;
                if nodes.len() > max_nodes {
                    return Err(TreeError::TooLarge(max_nodes));
                }
            }
            i += 1;
        }
        let mut tree = Tree { nodes };
        tree.bound(ledger)?;
        Ok(tree)
    }

    /// Every node, the root first, children after their parents.
    pub fn nodes(&self) -> &[Node<L>] {
        &self.nodes
    }

    /// The root.
    pub fn root(&self) -> &Node<L> {
        &self.nodes[0]
    }

    /// The bounds of `edge`'s value for the mover of the node it leaves (stores excluded).
    pub fn edge_bounds(&self, edge: &Edge) -> Bounds {
        match (edge.kind, edge.child) {
            (EdgeKind::ExtraTurn, Some(c)) => {
                let b = self.nodes[c].bounds;
                Bounds {
                    lower: edge.gain + b.lower,
                    upper: edge.gain + b.upper,
                }
            }
            (EdgeKind::Pass, Some(c)) => {
                let b = self.nodes[c].bounds;
                Bounds {
                    lower: edge.gain - b.upper,
                    upper: edge.gain - b.lower,
                }
            }
            _ => Bounds::exact(edge.gain),
        }
    }

    /// Works out every node's bounds again, leaves first, from `ledger` as it is now (facts
    /// added since the tree was grown tighten its positions' bounds; a position they split
    /// stays a leaf until the tree is grown again).
    pub fn bound(&mut self, ledger: &Ledger<L>) -> Result<(), TreeError> {
        for i in (0..self.nodes.len()).rev() {
            let node = &self.nodes[i];
            let board = node.board();
            let rules = node.position.rules();
            let own = ledger
                .known(rules, board)
                .map_or(Bounds::widest(board.seeds(), rules), |k| k.bounds);
            let bounds = if node.is_split() {
                let mut by_moves = Bounds {
                    lower: i32::MIN,
                    upper: i32::MIN,
                };
                for e in &node.moves {
                    let b = self.edge_bounds(e);
                    by_moves.lower = by_moves.lower.max(b.lower);
                    by_moves.upper = by_moves.upper.max(b.upper);
                }
                let stores = node.position.store_difference();
                match own.meet(by_moves) {
                    Some(b) => b,
                    None => {
                        return Err(TreeError::Contradiction {
                            position: node.position.to_string(),
                            detail: format!(
                                "its own facts{} say the value is in [{}, {}], its moves{} \
                                 [{}, {}]",
                                self.named(ledger, i, own.lower > by_moves.upper),
                                stores + own.lower,
                                stores + own.upper,
                                self.named_below(ledger, i, own.lower > by_moves.upper),
                                stores + by_moves.lower,
                                stores + by_moves.upper
                            ),
                        });
                    }
                }
            } else {
                own
            };
            self.nodes[i].bounds = bounds;
        }
        Ok(())
    }

    /// The facts of node `i`'s own board that give its lower bound (`lower`) or its upper,
    /// for people: ` (FILE:LINE)`, or nothing if none does.
    fn named(&self, ledger: &Ledger<L>, i: usize, lower: bool) -> String {
        let node = &self.nodes[i];
        match ledger.known(node.position.rules(), node.board()) {
            Some(k) => {
                let (low, high) = k.from();
                format!(" ({})", ledger.facts()[if lower { low } else { high }].1)
            }
            None => String::new(),
        }
    }

    /// The facts of the boards node `i`'s moves lead to that its contradiction rests on, for
    /// people: ` (by FILE:LINE, ...)`. Its own lower bound (`lower_side`) is contradicted by
    /// every move's upper bound, its own upper bound by the best move's lower bound.
    fn named_below(&self, ledger: &Ledger<L>, i: usize, lower_side: bool) -> String {
        let node = &self.nodes[i];
        let mut edges: Vec<&Edge> = node.moves.iter().collect();
        if !lower_side {
            let best = edges.iter().map(|e| self.edge_bounds(e).lower).max();
            edges.retain(|e| Some(self.edge_bounds(e).lower) == best);
        }
        let mut named: Vec<String> = Vec::new();
        for e in edges {
            let Some(c) = e.child else { continue };
            let child = &self.nodes[c];
            let Some(k) = ledger.known(child.position.rules(), child.board()) else {
                continue;
            };
            let (low, high) = k.from();
            // A move's upper bound is its child's lower when the turn passes.
            let child_lower = (e.kind == EdgeKind::Pass) == lower_side;
            let at = ledger.facts()[if child_lower { low } else { high }]
                .1
                .to_string();
            if !named.contains(&at) {
                named.push(at);
            }
        }
        match named.len() {
            0 => String::new(),
            n if n > 6 => format!(" (by {} and {} more)", named[..6].join(", "), n - 6),
            _ => format!(" (by {})", named.join(", ")),
        }
    }

    /// Sets the tests of `focus` ("f >= beta") and of every node below it, with their proof
    /// and disproof numbers (see the module docs).
    pub fn set_test(&mut self, focus: usize, beta: i32) {
        // Nodes below the focus, in index order: parents before children.
        let below = self.subtree(focus);
        self.nodes[focus].threshold = beta;
        for &i in &below {
            let t = self.nodes[i].threshold;
            for k in 0..self.nodes[i].moves.len() {
                let e = self.nodes[i].moves[k];
                if let Some(c) = e.child {
                    self.nodes[c].threshold = child_threshold(&e, t);
                }
            }
        }
        for &i in below.iter().rev() {
            let node = &self.nodes[i];
            let (proof, disproof) = if node.bounds.lower >= node.threshold {
                (0, INFINITE)
            } else if node.bounds.upper < node.threshold {
                (INFINITE, 0)
            } else if !node.is_split() {
                (1, 1)
            } else {
                let mut proof = INFINITE;
                let mut disproof = 0u64;
                for e in &node.moves {
                    let (p, d) = self.move_numbers(node.threshold, e);
                    proof = proof.min(p);
                    disproof = disproof.saturating_add(d).min(INFINITE);
                }
                (proof, disproof)
            };
            self.nodes[i].proof = proof;
            self.nodes[i].disproof = disproof;
        }
    }

    /// The proof and disproof numbers of "the value of `edge` is at least `t`".
    fn move_numbers(&self, t: i32, edge: &Edge) -> (u64, u64) {
        match (edge.kind, edge.child) {
            (EdgeKind::ExtraTurn, Some(c)) => (self.nodes[c].proof, self.nodes[c].disproof),
            (EdgeKind::Pass, Some(c)) => (self.nodes[c].disproof, self.nodes[c].proof),
            _ if edge.gain >= t => (0, INFINITE),
            _ => (INFINITE, 0),
        }
    }

    /// `focus` and every node below it, in index order.
    fn subtree(&self, focus: usize) -> Vec<usize> {
        let mut inside = vec![false; self.nodes.len()];
        inside[focus] = true;
        let mut list = vec![focus];
        for i in focus..self.nodes.len() {
            if !inside[i] {
                continue;
            }
            for e in &self.nodes[i].moves {
                if let Some(c) = e.child {
                    inside[c] = true;
                    list.push(c);
                }
            }
        }
        list.sort_unstable();
        list
    }

    /// The open leaves below `focus` (after [`Tree::set_test`]), most-proving first: a walk
    /// from the focus that takes the moves in order of their proof numbers, least first; at
    /// most `limit` of them.
    pub fn frontier(&self, focus: usize, limit: usize) -> Vec<usize> {
        let mut out = Vec::new();
        self.walk(focus, limit, &mut out);
        out
    }

    /// The open leaves below `focus` (after [`Tree::set_test`]) in the order a depth-first
    /// search reaches them: at each split node, its moves in the order `order` gives (houses,
    /// 0-based; moves it leaves out come last, in house order), the decided ones skipped; at
    /// most `limit` of them.
    pub fn frontier_ordered(
        &self,
        focus: usize,
        limit: usize,
        order: &mut dyn FnMut(&Node<L>) -> Vec<usize>,
    ) -> Vec<usize> {
        let mut out = Vec::new();
        let mut seen = vec![false; self.nodes.len()];
        self.walk_ordered(focus, limit, order, &mut seen, &mut out);
        out
    }

    fn walk_ordered(
        &self,
        i: usize,
        limit: usize,
        order: &mut dyn FnMut(&Node<L>) -> Vec<usize>,
        seen: &mut [bool],
        out: &mut Vec<usize>,
    ) {
        let node = &self.nodes[i];
        if out.len() >= limit || node.proof == 0 || node.disproof == 0 || seen[i] {
            return;
        }
        seen[i] = true;
        if !node.is_split() {
            out.push(i);
            return;
        }
        let mut houses = order(node);
        for e in &node.moves {
            if !houses.contains(&e.mv.index()) {
                houses.push(e.mv.index());
            }
        }
        for h in houses {
            let Some(e) = node.moves.iter().find(|e| e.mv.index() == h) else {
                continue;
            };
            let (p, d) = self.move_numbers(node.threshold, e);
            if p == 0 || d == 0 {
                continue;
            }
            if let Some(c) = e.child {
                self.walk_ordered(c, limit, order, seen, out);
            }
        }
    }

    fn walk(&self, i: usize, limit: usize, out: &mut Vec<usize>) {
        let node = &self.nodes[i];
        if out.len() >= limit || node.proof == 0 || node.disproof == 0 {
            return;
        }
        if !node.is_split() {
            out.push(i);
            return;
        }
        let mut moves: Vec<(u64, usize)> = node
            .moves
            .iter()
            .filter_map(|e| {
                let (p, d) = self.move_numbers(node.threshold, e);
                (p != 0 && d != 0).then_some((p, e.child?))
            })
            .collect();
        moves.sort_by_key(|&(p, c)| (p, c));
        for (_, c) in moves {
            self.walk(c, limit, out);
        }
    }
}

/// A node not split yet, its bounds and numbers still to be worked out.
fn leaf<L: Lanes>(position: Position<L>, depth: u32) -> Node<L> {
    Node {
        position,
        moves: Vec::new(),
        bounds: Bounds::exact(0),
        threshold: 0,
        proof: 1,
        disproof: 1,
        depth,
    }
}
