//! Players behind one trait, each made from a short spec string.
//!
//! | spec | plays |
//! | --- | --- |
//! | `human` | moves typed at the terminal (made by the command line, not here) |
//! | `random[:SEED]` | a uniformly random legal action |
//! | `greedy` | the move that banks most seeds this turn, following its own extra turns |
//! | `minimax:D` | depth-D minimax on the store difference (D sowings, extra turns included) |
//! | `alphabeta:D` | the same values and moves as `minimax:D`, with alpha-beta: far fewer nodes |
//! | `perfect` | the exact answer ([`crate::answer`]: databases, ledgers, search): the lowest optimal house (of those the ledgers prove optimal, where they answer) |
//! | `learner[:FILE]` | `alphabeta:4`, avoiding the openings of the games it failed to win |
//! | `engine:TIME` | the anytime engine ([`crate::play::anytime`]) thinking TIME a move (`5s`, `200ms`) |
//! | `engine:TIME:no-db` | the same engine without the endgame databases (to measure what they bring) |
//!
//! Under the pie rule a player asked as North after South's first turn may answer
//! [`Action::Swap`]; the searching players swap when the position is worse for the side to
//! move (they would rather own South's side).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use crate::answer::{Budget, OnSolver, Sources, Want, answer};
use crate::book::Book;
use crate::db::Tablebase;
pub use crate::play::alphabeta::Searcher;
use crate::play::anytime::{Engine, EngineConfig, Thought};
pub use crate::play::error::PlayError;
use crate::play::game::{Action, Game};
use crate::play::learner::Learner;
pub use crate::play::player::{Player, Thinking};
use crate::play::state::{PlayRules, PlayState};
use crate::position::{AnyPosition, Move};
use crate::rng::Rng;
use crate::search::{Solver, SolverConfig};
use crate::text::quote;
use crate::with_position;

/// A parsed player spec (see the module docs).
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum PlayerSpec {
    /// `human`.
    Human,
    /// `random[:SEED]`.
    Random(Option<u64>),
    /// `greedy`.
    Greedy,
    /// `minimax:D`.
    Minimax(u32),
    /// `alphabeta:D`.
    AlphaBeta(u32),
    /// `perfect`.
    Perfect,
    /// `learner[:FILE]`.
    Learner(Option<PathBuf>),
    /// `engine:TIME`, or `engine:TIME:no-db` (`db` false: without the endgame databases).
    Engine {
        /// Thinking time a move.
        time: Duration,
        /// Whether it uses the endgame databases given to the players.
        db: bool,
    },
}

/// Deepest `minimax:D` / `alphabeta:D` accepted: `minimax` searches about 6^D nodes on
/// Kalah(6,4), so depth 12 already takes minutes and 30 is far past what any game waits for.
pub const MAX_DEPTH: u32 = 30;

/// The shortest `engine:TIME` accepted: below a millisecond the engine has no time to search.
pub const MIN_ENGINE_TIME: Duration = Duration::from_millis(1);
/// The longest `engine:TIME` accepted: a day a move.
pub const MAX_ENGINE_TIME: Duration = Duration::from_secs(86_400);

/// The learner's memory when no file is named.
pub const DEFAULT_LEARNER_FILE: &str = "kalah-learner.txt";

impl FromStr for PlayerSpec {
    type Err = PlayError;

    fn from_str(s: &str) -> Result<PlayerSpec, PlayError> {
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        let bad = |why: &str| PlayError::Spec(format!("invalid player {}: {why}", quote(s)));
        let depth = |a: Option<&str>| -> Result<u32, PlayError> {
            let d: u32 = a
                .ok_or_else(|| bad("give a depth, e.g. alphabeta:6"))?
                .parse()
                .ok()
                .filter(|d| (1..=MAX_DEPTH).contains(d))
                .ok_or_else(|| {
                    bad(&format!(
                        "the depth must be a whole number from 1 to {MAX_DEPTH}"
                    ))
                })?;
            Ok(d)
        };
        let none = |spec: PlayerSpec| match arg {
            None => Ok(spec),
            Some(_) => Err(bad("takes no argument")),
        };
        match name {
            "human" => none(PlayerSpec::Human),
            "random" => match arg {
                None => Ok(PlayerSpec::Random(None)),
                Some(a) => a
                    .parse()
                    .map(|seed| PlayerSpec::Random(Some(seed)))
                    .map_err(|_| {
                        bad(&format!(
                            "the seed must be a whole number from 0 to {}",
                            u64::MAX
                        ))
                    }),
            },
            "greedy" => none(PlayerSpec::Greedy),
            "minimax" => Ok(PlayerSpec::Minimax(depth(arg)?)),
            "alphabeta" => Ok(PlayerSpec::AlphaBeta(depth(arg)?)),
            "perfect" => none(PlayerSpec::Perfect),
            "engine" => {
                let time = arg.ok_or_else(|| bad("give a time a move, e.g. engine:5s"))?;
                let (time, db) = match time.strip_suffix(":no-db") {
                    Some(time) => (time, false),
                    None => (time, true),
                };
                parse_duration(time)
                    .map(|time| PlayerSpec::Engine { time, db })
                    .map_err(|why| bad(&why))
            }
            "learner" => match arg {
                Some("") => Err(bad("give a file name after 'learner:'")),
                a => Ok(PlayerSpec::Learner(a.map(PathBuf::from))),
            },
            _ => Err(bad(
                "expected human, random[:SEED], greedy, minimax:D, alphabeta:D, perfect, \
                 learner[:FILE] or engine:TIME[:no-db]",
            )),
        }
    }
}

impl fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayerSpec::Human => f.write_str("human"),
            PlayerSpec::Random(None) => f.write_str("random"),
            PlayerSpec::Random(Some(seed)) => write!(f, "random:{seed}"),
            PlayerSpec::Greedy => f.write_str("greedy"),
            PlayerSpec::Minimax(d) => write!(f, "minimax:{d}"),
            PlayerSpec::AlphaBeta(d) => write!(f, "alphabeta:{d}"),
            PlayerSpec::Perfect => f.write_str("perfect"),
            PlayerSpec::Learner(None) => f.write_str("learner"),
            PlayerSpec::Learner(Some(p)) => write!(f, "learner:{}", p.display()),
            PlayerSpec::Engine { time, db } => {
                let no_db = if *db { "" } else { ":no-db" };
                write!(f, "engine:{}{no_db}", engine_time(*time))
            }
        }
    }
}

/// What engines may use: databases, threads, table size, a seed for unseeded randomness.
#[derive(Clone, Default)]
pub struct Resources {
    /// Endgame databases for `perfect` (matching houses and rules), if any.
    pub db: Option<Arc<Tablebase>>,
    /// The opening books and checked ledgers `perfect` answers from before it searches
    /// ([`crate::book::Book`]), if any.
    pub book: Option<Arc<Book>>,
    /// Solver threads for `perfect`.
    pub threads: usize,
    /// Solver table size in MiB for `perfect` (0: by the seeds; in a match, shared by the
    /// `perfect` players of the games in progress, see [`crate::play::arena`]).
    pub tt_mib: usize,
    /// Seed for `random` without one.
    pub seed: u64,
}

impl PlayerSpec {
    /// Makes the player for games of `rules` on `houses` houses a side. `human` cannot be made
    /// here (the command line reads the terminal): it is an error.
    pub fn make(
        &self,
        houses: usize,
        seeds: u32,
        rules: PlayRules,
        res: &Resources,
    ) -> Result<Box<dyn Player>, PlayError> {
        Ok(match self {
            PlayerSpec::Human => {
                return Err(PlayError::Unsupported(
                    "a human player needs a terminal".into(),
                ));
            }
            PlayerSpec::Random(seed) => Box::new(RandomPlayer {
                rng: Rng::new(seed.unwrap_or(res.seed)),
                spec: self.clone(),
            }),
            PlayerSpec::Greedy => Box::new(Greedy),
            PlayerSpec::Minimax(d) => Box::new(Searcher::new(*d, false)),
            PlayerSpec::AlphaBeta(d) => Box::new(Searcher::new(*d, true)),
            PlayerSpec::Perfect => Box::new(Perfect::new(houses, seeds, rules, res)?),
            PlayerSpec::Engine { time, db } => {
                let config = EngineConfig {
                    db: res.db.clone().filter(|_| *db),
                    exact_seeds: EngineConfig::default_exact_seeds(houses),
                    threads: res.threads.max(1),
                    tt_mib: if res.tt_mib == 0 { 64 } else { res.tt_mib },
                };
                Box::new(EnginePlayer {
                    engine: Engine::new(houses, rules, config)?,
                    time: *time,
                    spec: self.clone(),
                })
            }
            PlayerSpec::Learner(file) => {
                let path = file.clone().unwrap_or_else(|| DEFAULT_LEARNER_FILE.into());
                Box::new(Learner::open(path, self.to_string())?)
            }
        })
    }
}

/// Parses a time: `5s`, `1.5s`, `200ms`, or a bare number of seconds; rounded to the
/// millisecond (as [`PlayerSpec`] writes it), from [`MIN_ENGINE_TIME`] to [`MAX_ENGINE_TIME`]
/// (only digits and a point: no NaN, infinities or exponents).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, scale) = if let Some(ms) = text.strip_suffix("ms") {
        (ms, 1.0)
    } else if let Some(s) = text.strip_suffix('s') {
        (s, 1e3)
    } else {
        (text, 1e3)
    };
    // Only digits and one point: no `inf`, `NaN` or exponents.
    let plain = !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && number.bytes().filter(|&b| b == b'.').count() <= 1;
    let range = MIN_ENGINE_TIME.as_millis() as f64..=MAX_ENGINE_TIME.as_millis() as f64;
    match number.parse::<f64>().map(|v| (v * scale).round()) {
        Ok(ms) if plain && range.contains(&ms) => Ok(Duration::from_millis(ms as u64)),
        _ => Err(format!(
            "{} is not a time from 1ms to 86400s, such as 5s or 200ms",
            quote(text)
        )),
    }
}

/// A time a move as `engine:TIME` writes it: whole seconds as `5s`, else milliseconds.
fn engine_time(t: Duration) -> String {
    if t.subsec_millis() == 0 {
        format!("{}s", t.as_secs())
    } else {
        format!("{}ms", t.as_millis())
    }
}

/// `engine:TIME[:no-db]`: the anytime engine, TIME a move.
struct EnginePlayer {
    engine: Engine,
    time: Duration,
    spec: PlayerSpec,
}

impl Player for EnginePlayer {
    fn name(&self) -> String {
        self.spec.to_string()
    }

    fn choose(&mut self, game: &Game) -> Result<Action, PlayError> {
        self.choose_watched(game, &mut |_| {})
    }

    fn choose_watched(
        &mut self,
        game: &Game,
        watch: &mut dyn FnMut(&Thinking),
    ) -> Result<Action, PlayError> {
        let deadline = crate::clock::Instant::now() + self.time;
        let never = std::sync::atomic::AtomicBool::new(false);
        let mut report = |t: &Thought| watch(&Thinking::Searched(*t));
        Ok(self
            .engine
            .think(game, deadline, &never, &mut report)
            .action)
    }

    fn nodes(&self) -> Option<u64> {
        Some(self.engine.nodes())
    }
}

struct RandomPlayer {
    rng: Rng,
    spec: PlayerSpec,
}

impl Player for RandomPlayer {
    fn name(&self) -> String {
        self.spec.to_string()
    }

    fn choose(&mut self, game: &Game) -> Result<Action, PlayError> {
        let actions = game.legal_actions();
        Ok(actions[self.rng.below(actions.len() as u64) as usize])
    }
}

struct Greedy;

/// The most seeds the side to move can bank this turn, following its own extra turns.
fn banked_this_turn(state: &PlayState) -> u32 {
    let Some(me) = state.to_move() else {
        return 0;
    };
    state
        .legal_moves()
        .into_iter()
        .map(|mv| {
            let mut next = *state;
            let sown = next.play(mv);
            let gained = next.store(me) - state.store(me);
            if sown.extra_turn {
                gained + banked_this_turn(&next)
            } else {
                gained
            }
        })
        .max()
        .unwrap_or(0)
}

impl Player for Greedy {
    fn name(&self) -> String {
        "greedy".into()
    }

    fn choose(&mut self, game: &Game) -> Result<Action, PlayError> {
        let state = game.state();
        let me = state.to_move().expect("the game is not over");
        // The first (lowest) house among those that bank the most.
        let mut best = None;
        for mv in state.legal_moves() {
            let mut next = *state;
            let sown = next.play(mv);
            let mut gained = next.store(me) - state.store(me);
            if sown.extra_turn {
                gained += banked_this_turn(&next);
            }
            if best.is_none_or(|(g, _)| gained > g) {
                best = Some((gained, mv));
            }
        }
        Ok(Action::Sow(best.expect("a legal move").1))
    }
}

/// `perfect`: the opening books where they answer, else the exact solver, one for the whole
/// game (its table stays warm).
struct Perfect {
    solver: Solver,
    book: Option<Arc<Book>>,
    db: Option<Arc<Tablebase>>,
}

impl Perfect {
    fn new(
        houses: usize,
        seeds: u32,
        rules: PlayRules,
        res: &Resources,
    ) -> Result<Perfect, PlayError> {
        let Some(rules) = rules.kalah() else {
            return Err(PlayError::Unsupported(format!(
                "the perfect player solves Kalah rules only, not {rules}"
            )));
        };
        let total = 2 * houses as u32 * seeds;
        let config = SolverConfig {
            threads: res.threads.max(1),
            tt_mib: match res.tt_mib {
                0 => crate::search::auto_table_mib(
                    houses,
                    total,
                    res.db.as_ref().map(|d| d.max_level()),
                    rules,
                ),
                mib => mib,
            },
            ..SolverConfig::default()
        };
        let solver_error = |e: crate::SolveError| PlayError::Solver(e.to_string());
        let mut solver = Solver::new(houses, rules, config).map_err(solver_error)?;
        if let Some(db) = &res.db {
            solver = solver.with_tablebase(db.clone()).map_err(solver_error)?;
        }
        Ok(Perfect {
            solver,
            book: res.book.clone(),
            db: res.db.clone(),
        })
    }
}

impl Perfect {
    /// The exact value of `state` for the side to move (stores included) and an optimal move,
    /// each step of a search reported to `watch`: the answer ([`crate::answer`]) from the
    /// levels, the opening books and ledgers (the lowest house they prove optimal), else a
    /// search (the lowest optimal house). Precondition: the game is not over.
    fn value(
        &self,
        state: &PlayState,
        watch: &mut dyn FnMut(&Thinking),
    ) -> Result<(i32, Move), PlayError> {
        let rules = state.rules().kalah().expect("checked at creation");
        let pos = AnyPosition::from_setup(&state.to_setup(), rules)
            .map_err(|e| PlayError::Solver(format!("cannot solve this position: {e}")))?;
        let me = state.to_move().expect("the game is not over");
        let stores = state.store_difference(me);
        let sources = Sources {
            levels: self.db.as_deref(),
            ledgers: self.book.as_deref(),
        };
        let mut progress = |p: &crate::search::Progress| {
            watch(&Thinking::Solving {
                depth: p.depth,
                lower: stores + p.lower,
                upper: stores + p.upper,
                nodes: p.nodes,
            })
        };
        let mut search = OnSolver {
            solver: &self.solver,
            progress: Some(&mut progress),
        };
        let want = Want::Move { played: None };
        let found = with_position!(pos, p => answer(&p, &sources, want, &Budget::default(), Some(&mut search)))
            .map_err(|e| PlayError::Solver(e.to_string()))?;
        let (Some(value), Some(&best)) = (found.exact(), found.best().first()) else {
            return Err(PlayError::Solver(format!(
                "no optimal move found ({})",
                found.not_done.map_or("?".to_owned(), |n| format!("{n:?}"))
            )));
        };
        if found.searched.is_none() {
            // Known without a search: one step, the value proven.
            watch(&Thinking::Solving {
                depth: None,
                lower: value,
                upper: value,
                nodes: 0,
            });
        }
        Ok((value, best))
    }
}

impl Player for Perfect {
    fn name(&self) -> String {
        "perfect".into()
    }

    fn choose(&mut self, game: &Game) -> Result<Action, PlayError> {
        self.choose_watched(game, &mut |_| {})
    }

    fn choose_watched(
        &mut self,
        game: &Game,
        watch: &mut dyn FnMut(&Thinking),
    ) -> Result<Action, PlayError> {
        let state = game.state();
        let (value, mv) = if state.first_sowing_passes() {
            // mankalah's first sowing passes the turn: value each move by its child (whose
            // bounds, for the other side, would only confuse a watcher).
            let me = state.to_move().expect("the game is not over");
            let mut best: Option<(i32, Move)> = None;
            for mv in state.legal_moves() {
                let mut next = *state;
                next.play(mv);
                let v = match next.to_move() {
                    None => next.store_difference(me),
                    Some(_) => -self.value(&next, &mut |_| {})?.0,
                };
                if best.is_none_or(|(b, _)| v > b) {
                    best = Some((v, mv));
                }
            }
            best.expect("a legal move")
        } else {
            self.value(state, watch)?
        };
        // Swap when the side to move loses from here: after a swap its final margin, negated,
        // is ours.
        if game.can_swap() && value < 0 {
            return Ok(Action::Swap);
        }
        Ok(Action::Sow(mv))
    }

    fn nodes(&self) -> Option<u64> {
        Some(self.solver.nodes())
    }

    fn node_counter(&self) -> Option<crate::search::NodeCounter> {
        Some(self.solver.node_counter())
    }
}
