//! `hint` in `kalah play`: the exact value of every legal move where the databases, the
//! opening books and ledgers or a quick search know it ([`kalah::answer`]), what the ledgers
//! prove where they know bounds only, the anytime engine's estimate otherwise.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use kalah::answer::{
    Answer, Budget, NotDone, SearchWork, Searcher, Source, Sources, Want, answer, look_up,
};
use kalah::db::Tablebase;
use kalah::play::anytime::{Engine, EngineConfig};
use kalah::play::{Action, Game};
use kalah::{AnyPosition, Lanes, Position, Solver, SolverConfig, with_position};

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
        with_position!(pos, p => self.hint_at(&p, game))
    }

    /// The hint at `p`, the position of `game` ([`kalah::answer`]): exact where the levels,
    /// the opening books and ledgers or a search within --hint-seeds know it, the ledgers'
    /// bounds where they know only those, the engine's estimate beside them where no best move
    /// is proven.
    fn hint_at<L: Lanes>(&mut self, p: &Position<L>, game: &Game) -> String {
        let want = Want::EveryMove;
        let levels = self.db.clone();
        let levels = levels.as_deref();
        // The levels first, before the books are read: a board they hold never waits for them.
        match look_up(
            p,
            &Sources {
                levels,
                ledgers: None,
            },
            want,
        ) {
            Ok(a) if matches!(a.source, Source::Levels | Source::End) => return describe(p, &a),
            Ok(_) => {}
            // A damaged database: say so, never guess.
            Err(e) => return format!("no hint: {e}"),
        }
        if self.book.is_none() {
            let game = kalah::book::game_of(p);
            let dir = self.db.as_ref().map(|d| d.dir().to_path_buf());
            match kalah::book::Book::open(true, Some(game), dir.as_deref()) {
                Ok(book) => self.book = Some(Arc::new(book)),
                Err(e) => return format!("no hint: cannot read the opening books: {e}"),
            }
        }
        let book = self.book.clone().expect("just read");
        let sources = Sources {
            levels,
            ledgers: Some(&book),
        };
        let budget = Budget {
            max_seeds: Some(self.limit),
            ..Budget::default()
        };
        let mut search = HintSearch {
            solver: &mut self.solver,
            db: self.db.clone(),
            threads: self.threads,
            houses: p.houses_per_side(),
            rules: p.rules(),
            seeds: p.seeds_on_board(),
        };
        let answer = match answer(p, &sources, want, &budget, Some(&mut search)) {
            Ok(a) => a,
            Err(e) => return format!("no hint: {e}"),
        };
        if answer.answers(want) {
            return describe(p, &answer);
        }
        let why = match answer.not_done {
            Some(NotDone::Seeds { seeds, limit }) => format!(
                "{seeds} seeds on the board, more than an exact hint solves quickly ({limit}; see \
                 --hint-seeds and --db)"
            ),
            _ => "the search did not finish".to_owned(),
        };
        let known = answer.moves.iter().any(|m| m.source != Source::Seeds);
        match (known, answer.best().is_empty()) {
            // The ledgers prove a best move: that is the hint.
            (true, false) => describe(p, &answer),
            (true, true) => format!("{}\n{}", describe(p, &answer), self.estimate(game, &why)),
            (false, _) => self.estimate(game, &why),
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

/// A hint from an answer, for the side to move: every move's exact value where it is known
/// (`exact values (...): 1:-6  2:+6 ...; best: 2`), else what the ledgers prove of each
/// (`>=+2`, `<=+4`, `-6..+4`), with the best moves proven and where it came from.
fn describe<L: Lanes>(p: &Position<L>, a: &Answer) -> String {
    let values: Vec<String> = a
        .moves
        .iter()
        .map(|m| format!("{}:{}", m.mv, short_bounds(p, m)))
        .collect();
    let best: Vec<String> = a.best().iter().map(|m| m.to_string()).collect();
    let exact = a.every_move_exact();
    let what = if exact {
        "exact values"
    } else {
        "what the ledgers prove"
    };
    let mut text = format!(
        "{what} (final margin for you, stores included): {}; best: {}",
        values.join("  "),
        if best.is_empty() {
            "not proven yet".to_owned()
        } else {
            best.join(" ")
        }
    );
    if a.source == Source::Ledger {
        text += if exact {
            " (from the opening books)"
        } else {
            " (from the ledgers)"
        };
        text += if a.certified {
            ", certified"
        } else {
            ", not certified"
        };
    }
    text
}

/// A move's bounds in a few characters: `+4`, `>=+2`, `<=+4`, `-6..+4`.
fn short_bounds<L: Lanes>(p: &Position<L>, m: &kalah::answer::MoveAnswer) -> String {
    let b = m.bounds;
    if b.is_exact() {
        return format!("{:+}", b.lower);
    }
    let widest = kalah::book::after_move(p, m.mv, kalah::book::value_range);
    match (b.lower > widest.lower, b.upper < widest.upper) {
        (true, false) => format!(">={:+}", b.lower),
        (false, true) => format!("<={:+}", b.upper),
        (true, true) => format!("{:+}..{:+}", b.lower, b.upper),
        (false, false) => "?".to_owned(),
    }
}

/// The hints' search: one solver for the whole game (its table stays warm), made at the first
/// hint searched, its progress on a spinner.
struct HintSearch<'a> {
    solver: &'a mut Option<Solver>,
    db: Option<Arc<Tablebase>>,
    threads: usize,
    houses: usize,
    rules: kalah::Rules,
    seeds: u32,
}

impl Searcher for HintSearch<'_> {
    type Error = String;

    fn config(&self) -> SolverConfig {
        match self.solver.as_ref() {
            Some(s) => *s.config(),
            None => SolverConfig {
                threads: self.threads,
                tt_mib: kalah::search::auto_table_mib(
                    self.houses,
                    self.seeds,
                    self.levels_top(),
                    self.rules,
                ),
                ..SolverConfig::default()
            },
        }
    }

    fn levels_top(&self) -> Option<u32> {
        self.db
            .as_ref()
            .filter(|d| d.rules() == self.rules)
            .map(|d| d.max_level())
    }

    fn search(&mut self, _known: &Answer, work: &mut SearchWork<'_>) -> Result<(), String> {
        if self.solver.is_none() {
            // The search probes the databases too, for the positions above them.
            let db = self.db.clone().filter(|d| d.rules() == self.rules);
            let solver =
                Solver::new(self.houses, self.rules, self.config()).and_then(|s| match db {
                    Some(db) => s.with_tablebase(db),
                    None => Ok(s),
                });
            *self.solver = Some(solver.map_err(|e| e.to_string())?);
        }
        let solver = self.solver.as_ref().expect("just made");
        let indicator = Indicator::spinner("solving for a hint", "");
        // The steps come from the position and from each move's (bounds seen from either
        // side): only the work done is shown.
        let mut on_step =
            |s: &kalah::Progress| indicator.set_message(format!("{} nodes", human_count(s.nodes)));
        work(solver, &mut on_step);
        indicator.finish();
        Ok(())
    }
}
