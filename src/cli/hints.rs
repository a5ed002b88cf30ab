//! `hint` in `kalah play`: the exact value of every legal move when the position is small
//! enough (or in the databases, or the opening books), the anytime engine's estimate
//! otherwise.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use kalah::db::Tablebase;
use kalah::play::anytime::{Engine, EngineConfig};
use kalah::play::{Action, Game};
use kalah::{AnyPosition, Solver, SolverConfig, with_position};

use super::human::human_count;
use super::progress::Indicator;
use super::thinking::thought_text;

/// Hints: exact values when the position is small enough (or in the databases), the anytime
/// engine's estimate otherwise.
pub struct Hints {
    db: Option<Arc<Tablebase>>,
    /// The opening books (the shipped ones and the database directory's ledgers), read at the
    /// first hint above the levels.
    book: Option<Arc<kalah::book::Book>>,
    solver: Option<Solver>,
    threads: usize,
    /// The most seeds on the board solved exactly.
    limit: u32,
    /// The engine for estimates, made at the first one.
    engine: Option<Engine>,
    /// How long an estimate thinks.
    time: Duration,
}

impl Hints {
    /// Hints probing `db` if given and the opening books `book` (read at the first hint above
    /// the levels if `None`; an empty book for none), searching on `threads` threads boards of
    /// at most `limit` seeds exactly, and estimating the others for `time`.
    pub fn new(
        db: Option<Arc<Tablebase>>,
        book: Option<Arc<kalah::book::Book>>,
        threads: usize,
        limit: u32,
        time: Duration,
    ) -> Hints {
        Hints {
            db,
            book,
            solver: None,
            threads,
            limit,
            engine: None,
            time,
        }
    }

    /// The text of a hint for `game` (the game is not over).
    pub fn hint(&mut self, game: &Game) -> String {
        let state = game.state();
        let Some(rules) = state.rules().kalah() else {
            return self.estimate(game, "awari-basic: the exact solver plays Kalah rules only");
        };
        if state.first_sowing_passes() {
            return self.estimate(
                game,
                "mankalah's first sowing earns no extra turn, which the exact solver does not \
                 know",
            );
        }
        let Ok(pos) = AnyPosition::from_setup(&state.to_setup(), rules) else {
            return "no hint for this position".into();
        };
        if let Some(db) = &self.db {
            match with_position!(pos, p => db.analyze(&p)) {
                Ok(Some(a)) => return describe(&a),
                Ok(None) => {}
                // A damaged database: say so, never guess.
                Err(e) => return format!("no hint: {e}"),
            }
        }
        // The opening books answer at once where they prove every move's value.
        if self.book.is_none() {
            let game = with_position!(pos, p => kalah::book::game_of(&p));
            let dir = self.db.as_ref().map(|d| d.dir().to_path_buf());
            match kalah::book::Book::open(true, Some(game), dir.as_deref()) {
                Ok(book) => self.book = Some(Arc::new(book)),
                Err(e) => return format!("no hint: cannot read the opening books: {e}"),
            }
        }
        let book = self.book.as_ref().expect("just read");
        match with_position!(pos, p => book.analyze(&p, self.db.as_deref())) {
            Ok(Some(found)) => {
                return format!("{} (from the opening books)", describe(&found.analysis));
            }
            Ok(None) => {}
            Err(e) => return format!("no hint: {e}"),
        }
        let seeds = state.seeds_on_board();
        if seeds > self.limit {
            let why = format!(
                "{seeds} seeds on the board, more than an exact hint solves quickly ({}; see \
                 --hint-seeds and --db)",
                self.limit
            );
            return self.estimate(game, &why);
        }
        if self.solver.is_none() {
            // The search probes the databases too, for the positions above them.
            let db = self.db.clone().filter(|d| d.rules() == rules);
            let config = SolverConfig {
                threads: self.threads,
                tt_mib: kalah::search::auto_table_mib(
                    state.houses(kalah::Side::South).len(),
                    seeds,
                    db.as_ref().map(|d| d.max_level()),
                    rules,
                ),
                ..SolverConfig::default()
            };
            let solver =
                Solver::new(state.houses_per_side(), rules, config).and_then(|s| match db {
                    Some(db) => s.with_tablebase(db),
                    None => Ok(s),
                });
            match solver {
                Ok(s) => self.solver = Some(s),
                Err(e) => return format!("no hint: {e}"),
            }
        }
        let solver = self.solver.as_ref().expect("just made");
        let indicator = Indicator::spinner("solving for a hint", "");
        // The steps come from the position and from each move's (bounds seen from either
        // side): only the work done is shown.
        let mut on_step =
            |s: &kalah::Progress| indicator.set_message(format!("{} nodes", human_count(s.nodes)));
        let analysis = with_position!(pos, p => solver.analyze(&p, true, &mut on_step));
        indicator.finish();
        match analysis {
            Ok(a) => describe(&a),
            Err(e) => format!("no hint: {e}"),
        }
    }

    /// The anytime engine's choice for `game` after thinking [`Hints::time`], marked as an
    /// estimate, and `why` there is no exact hint.
    fn estimate(&mut self, game: &Game, why: &str) -> String {
        if self.engine.is_none() {
            // Exact values are the solver's business here: the engine only searches.
            let config = EngineConfig {
                db: None,
                exact_seeds: 0,
                threads: 1,
                tt_mib: ESTIMATE_TABLE_MIB,
            };
            let rules = game.rules();
            match Engine::new(rules.houses, rules.rules, config) {
                Ok(engine) => self.engine = Some(engine),
                Err(e) => return format!("no hint: {e}"),
            }
        }
        let engine = self.engine.as_mut().expect("just made");
        let indicator = Indicator::spinner("estimating a hint", "");
        let deadline = Instant::now() + self.time;
        let never = AtomicBool::new(false);
        let thought = engine.think(game, deadline, &never, &mut |t| {
            indicator.set_message(thought_text(t))
        });
        indicator.finish();
        let (what, value) = match thought.action {
            Action::Sow(mv) => (format!("house {mv}"), thought.value),
            // The value is the side to move's, which the swap hands to the other player.
            Action::Swap => ("swap".to_owned(), -thought.value),
        };
        if thought.exact {
            return format!("exact: {what}, {value:+} (final margin for you, stores included)");
        }
        format!(
            "estimate (depth {depth}, not exact): {what}, {value:+} (your store lead {depth} \
             sowings ahead)\n  no exact hint: {why}",
            depth = thought.depth
        )
    }
}

/// The table of the engine that makes estimates, in MiB (as `engine:TIME` players have).
const ESTIMATE_TABLE_MIB: usize = 64;

fn describe(a: &kalah::Analysis) -> String {
    let values: Vec<String> = a
        .moves
        .iter()
        .map(|m| format!("{}:{:+}", m.mv, m.value))
        .collect();
    let best: Vec<String> = a.best.iter().map(|m| m.to_string()).collect();
    format!(
        "exact values (final margin for you, stores included): {}; best: {}",
        values.join("  "),
        best.join(" ")
    )
}
