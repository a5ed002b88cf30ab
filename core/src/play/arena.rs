//! Matches: two players, many games, played in parallel, with the first-move advantage paired
//! away.
//!
//! Kalah favours one side (South wins Kalah(4,3) by 6 with perfect play), so a match plays
//! its games in **pairs**: game `2i` has player A as South (seat 0) and B as North, game
//! `2i + 1` has B as South and A as North, both from the same **opening**. An opening is
//! [`MatchConfig::opening_plies`] random legal sowings made at the start of the game, drawn
//! once per pair from a generator seeded by [`MatchConfig::seed`] and the pair's number: the
//! deterministic engines (`greedy`, `minimax:D`, `alphabeta:D`, `perfect`) would otherwise
//! play one game over and over. The opening avoids sowings that end the game (it stops early
//! if every sowing would), and under the pie rule it stops when North may swap, so that
//! decision is always a player's. The opening's sowings are the game's first actions, made for
//! whichever side is to move, so they belong to neither player.
//!
//! An odd number of games plays every whole pair and then one game of a last opening with A
//! as South: that last game is not balanced by its twin (say so when it matters, or ask for an
//! even number).
//!
//! Each game gets a fresh pair of players made with [`PlayerSpec::make`] (so no engine learns
//! from one game to the next, except `learner` through its file). An unseeded `random` player
//! plays game `g` with a seed drawn from [`MatchConfig::seed`], `g` and its role (A or B);
//! `random:S` plays game `g` with seed `S + g`, so game 0 is the game `random:S` plays alone.
//! The games run on the current rayon pool, one game per task; the `perfect` player searches
//! on one thread (the games are the parallelism). Results do not depend on the number of
//! threads or on the order in which games finish.
//!
//! A match keeps no game once it is over: each goes to the caller's callback as it finishes and
//! into running totals (exact integer sums, so the statistics do not depend on the order
//! either), so memory does not grow with the number of games. The games are played in blocks
//! of [`block_len`] consecutive numbers, a block starting when the one before it is over: a
//! caller that puts the games back in order holds at most one block of them.
//!
//! Every `perfect` player of every game in progress has a table of its own. With
//! [`Resources::tt_mib`] 0 (sized by the variant) their sizes are halved, as often as needed,
//! until all of them together fit in [`MATCH_TABLES_MIB`]: Kalah(6,6) asks 8 GiB for one
//! solver, and `perfect` against `perfect` on 2 threads would otherwise ask 32.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::clock::Instant;

use rayon::prelude::*;

use crate::lanes::mix64;
use crate::play::error::PlayError;
use crate::play::game::{Action, Game, GameRules};
use crate::play::player::Player;
use crate::play::players::{PlayerSpec, Resources};
use crate::rng::Rng;
use crate::rules::{Rules, Side, Variant};

/// The most table memory, in MiB, that the `perfect` players of the games in progress take
/// together when their table size is left to the variant: the largest table one solve takes
/// by default.
pub const MATCH_TABLES_MIB: usize = 8 << 10;

/// The table size of each `perfect` player of a match, when `solvers` of them search at once
/// with tables of `auto_mib` each by default: halved until they fit in [`MATCH_TABLES_MIB`],
/// but never below 16 MiB.
pub fn perfect_table_share(auto_mib: usize, solvers: usize) -> usize {
    let mut mib = auto_mib;
    while mib > 16 && mib.saturating_mul(solvers) > MATCH_TABLES_MIB {
        mib /= 2;
    }
    mib
}

/// What a match plays.
#[derive(Clone, Copy, Debug)]
pub struct MatchConfig {
    /// The variant of every game.
    pub rules: GameRules,
    /// Games in all (pairs of games share an opening; see the module docs for an odd count).
    pub games: usize,
    /// Random sowings at the start of each pair's games (the command line's default is 2).
    pub opening_plies: usize,
    /// Seed of the openings and of unseeded `random` players.
    pub seed: u64,
}

/// One finished game of a match.
#[derive(Clone, Debug)]
pub struct GameResult {
    /// The game's number in the match, from 0 (`index / 2` is its pair).
    pub index: usize,
    /// A's seat: 0 if A started as South, 1 if A started as North.
    pub a_seat: usize,
    /// Actions at the start of the game that were the random opening.
    pub opening: usize,
    /// A's final margin: its store minus B's, where each sits at the end.
    pub margin_a: i32,
    /// A's final store.
    pub store_a: u32,
    /// B's final store.
    pub store_b: u32,
    /// Nodes A searched in this game (`None` for players that do not search).
    pub nodes_a: Option<u64>,
    /// Nodes B searched in this game.
    pub nodes_b: Option<u64>,
    /// Time the game took.
    pub elapsed: Duration,
    /// The finished game (make a [`crate::play::record::Record`] of it to write it down).
    pub game: Game,
}

impl GameResult {
    /// Whether A started as South.
    pub fn a_started_south(&self) -> bool {
        self.a_seat == 0
    }

    /// The side A played at the end of the game (after a pie-rule swap, not the one it
    /// started on).
    pub fn a_side(&self) -> Side {
        self.game.side_of(self.a_seat)
    }
}

/// Running totals of a match, counted for player A: exact integer sums, so that the games may
/// be added in any order and give the same [`MatchStats`].
#[derive(Clone, Copy, Default, Debug)]
pub struct MatchTotals {
    games: u64,
    wins: u64,
    draws: u64,
    seeds_a: u64,
    seeds_b: u64,
    margin_sum: i128,
    margin_squares: i128,
    /// Nodes of each player (`None` once a game of a player that does not search is added).
    nodes: [Option<u64>; 2],
}

impl MatchTotals {
    /// Adds a finished game.
    pub fn add(&mut self, r: &GameResult) {
        if self.games == 0 {
            self.nodes = [Some(0); 2];
        }
        let margin = i128::from(r.margin_a);
        self.games += 1;
        self.wins += u64::from(r.margin_a > 0);
        self.draws += u64::from(r.margin_a == 0);
        self.seeds_a = self.seeds_a.saturating_add(u64::from(r.store_a));
        self.seeds_b = self.seeds_b.saturating_add(u64::from(r.store_b));
        self.margin_sum += margin;
        self.margin_squares += margin * margin;
        for (total, game) in self.nodes.iter_mut().zip([r.nodes_a, r.nodes_b]) {
            *total = total.zip(game).map(|(t, g)| t.saturating_add(g));
        }
    }

    /// The statistics of the games added.
    pub fn stats(&self) -> MatchStats {
        let n = self.games;
        let mean = if n == 0 {
            0.0
        } else {
            self.margin_sum as f64 / n as f64
        };
        // The sample variance, exactly: (n·Σm² − (Σm)²) / (n·(n − 1)).
        let ci95 = (n >= 2).then(|| {
            let n = i128::from(n);
            let spread = n * self.margin_squares - self.margin_sum * self.margin_sum;
            let var = spread as f64 / (n * (n - 1)) as f64;
            1.96 * var.sqrt() / (n as f64).sqrt()
        });
        let as_count = |x: u64| usize::try_from(x).unwrap_or(usize::MAX);
        MatchStats {
            games: as_count(n),
            wins: as_count(self.wins),
            draws: as_count(self.draws),
            losses: as_count(n - self.wins - self.draws),
            seeds_a: self.seeds_a,
            seeds_b: self.seeds_b,
            margin_mean: mean,
            margin_ci95: ci95,
            nodes_a: self.nodes[0],
            nodes_b: self.nodes[1],
        }
    }
}

/// Totals of a match, counted for player A.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct MatchStats {
    /// Games played.
    pub games: usize,
    /// Games A won.
    pub wins: usize,
    /// Games drawn.
    pub draws: usize,
    /// Games A lost.
    pub losses: usize,
    /// A's final stores, summed over the games.
    pub seeds_a: u64,
    /// B's final stores, summed over the games.
    pub seeds_b: u64,
    /// A's mean margin a game (0 when no game was played).
    pub margin_mean: f64,
    /// Half the width of the 95% confidence interval of the mean margin, by the normal
    /// approximation: 1.96 · s / √n, with s the sample standard deviation of the margins.
    /// `None` with fewer than two games. The two games of a pair are correlated (same
    /// opening), so read it as a guide, not a proof.
    pub margin_ci95: Option<f64>,
    /// Nodes A searched in all, if it searches.
    pub nodes_a: Option<u64>,
    /// Nodes B searched in all, if it searches.
    pub nodes_b: Option<u64>,
}

impl MatchStats {
    /// The totals of `results`.
    pub fn of(results: &[GameResult]) -> MatchStats {
        let mut totals = MatchTotals::default();
        for r in results {
            totals.add(r);
        }
        totals.stats()
    }

    /// A's score: (wins + draws / 2) / games, 0 when no game was played.
    pub fn score(&self) -> f64 {
        if self.games == 0 {
            0.0
        } else {
            (self.wins as f64 + self.draws as f64 / 2.0) / self.games as f64
        }
    }
}

/// A finished match (its games went to the callback of [`play_match`]).
#[derive(Clone, Debug)]
pub struct MatchReport {
    /// The totals for A.
    pub stats: MatchStats,
    /// Wall time of the whole match.
    pub elapsed: Duration,
}

/// The random opening of pair `pair` (see the module docs).
pub fn opening(config: &MatchConfig, pair: usize) -> Vec<Action> {
    let mut rng = Rng::new(derive_seed(config.seed, 0x6f70_656e, pair as u64));
    let mut game = Game::new(config.rules);
    let mut actions = Vec::new();
    while actions.len() < config.opening_plies && !game.can_swap() {
        let safe: Vec<Action> = game
            .state()
            .legal_moves()
            .into_iter()
            .filter(|&mv| {
                let mut next = *game.state();
                !next.play(mv).game_over
            })
            .map(Action::Sow)
            .collect();
        if safe.is_empty() {
            break;
        }
        let action = safe[rng.below(safe.len() as u64) as usize];
        game.play(action).expect("a legal sowing");
        actions.push(action);
    }
    actions
}

/// A seed for one purpose (`tag`) and one game or pair (`index`), spread from the match seed.
fn derive_seed(seed: u64, tag: u64, index: u64) -> u64 {
    mix64(seed ^ mix64(tag ^ mix64(index)))
}

/// The spec a player plays game `game` with: `random:S` becomes `random:(S + game)`.
fn spec_for_game(spec: &PlayerSpec, game: usize) -> PlayerSpec {
    match spec {
        PlayerSpec::Random(Some(seed)) => PlayerSpec::Random(Some(seed.wrapping_add(game as u64))),
        other => other.clone(),
    }
}

/// Checks the variant and the players before any game starts.
fn check(
    a: &PlayerSpec,
    b: &PlayerSpec,
    config: &MatchConfig,
    res: &Resources,
) -> Result<(), PlayError> {
    let r = config.rules;
    Variant::new(r.houses, u64::from(r.seeds), Rules::Standard)
        .map_err(|e| PlayError::Unsupported(format!("invalid variant: {e}")))?;
    for (role, spec) in [("A", a), ("B", b)] {
        if *spec == PlayerSpec::Human {
            return Err(PlayError::Unsupported(format!(
                "player {role} is human: a match is between engines (play a human with `kalah play`)"
            )));
        }
        // Make it once, so that a player that cannot play these rules fails here, once.
        spec.make(r.houses, r.seeds, r.rules, res)?;
    }
    Ok(())
}

/// Games in a block of a match played on `threads` threads (see the module docs): at least
/// 1024, and 64 a thread, so that the wait for a block's last game costs little.
pub fn block_len(threads: usize) -> usize {
    threads.saturating_mul(64).max(1024)
}

/// Plays a match of `config.games` games between `a` and `b` (see the module docs), in
/// parallel on the current rayon pool.
///
/// `progress` is called with the number of games finished after each one; `on_game` with
/// each game as it finishes (in any order within a block of [`block_len`] games;
/// `GameResult::index` says which), and the game is then dropped. The first error
/// of any player stops the match: a `human` player, a player that cannot play these rules
/// (`perfect` under `awari-basic`), a variant out of range, or a failure during a game (named
/// with the game's number, from 1).
pub fn play_match(
    a: &PlayerSpec,
    b: &PlayerSpec,
    config: &MatchConfig,
    res: &Resources,
    progress: &(dyn Fn(usize) + Sync),
    on_game: &(dyn Fn(&GameResult) + Sync),
) -> Result<MatchReport, PlayError> {
    let started = Instant::now();
    let res = Resources {
        threads: 1,
        ..res.clone()
    };
    check(a, b, config, &res)?;
    let perfect_mib = match res.tt_mib {
        0 => {
            let seeds = config.rules.seeds_in_play();
            let auto = crate::search::auto_table_mib(
                config.rules.houses,
                seeds,
                res.db.as_ref().map(|d| d.max_level()),
                config.rules.rules.kalah().unwrap_or(Rules::Standard),
            );
            let perfect_players = [a, b]
                .iter()
                .filter(|&&s| *s == PlayerSpec::Perfect)
                .count();
            let at_once = rayon::current_num_threads().min(config.games) * perfect_players;
            perfect_table_share(auto, at_once)
        }
        mib => mib,
    };
    let done = AtomicUsize::new(0);
    let totals = Mutex::new(MatchTotals::default());
    let block = block_len(rayon::current_num_threads());
    let mut first = 0;
    while first < config.games {
        let end = first.saturating_add(block).min(config.games);
        (first..end).into_par_iter().try_for_each(|index| {
            // Both games of a pair draw the same opening (it is cheap next to a game).
            let opening = opening(config, index / 2);
            let result = play_one(a, b, config, &res, perfect_mib, index, &opening)?;
            totals
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .add(&result);
            on_game(&result);
            progress(done.fetch_add(1, Ordering::Relaxed) + 1);
            Ok::<(), PlayError>(())
        })?;
        first = end;
    }
    let stats = totals
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .stats();
    Ok(MatchReport {
        stats,
        elapsed: started.elapsed(),
    })
}

/// Game `index` of a match: the opening, then the players to the end.
fn play_one(
    a: &PlayerSpec,
    b: &PlayerSpec,
    config: &MatchConfig,
    res: &Resources,
    perfect_mib: usize,
    index: usize,
    opening: &[Action],
) -> Result<GameResult, PlayError> {
    let started = Instant::now();
    let r = config.rules;
    let a_seat = index % 2;
    let in_game = |e: PlayError, who: &PlayerSpec| match e {
        PlayError::Spec(m) => PlayError::Spec(format!("game {}, {who}: {m}", index + 1)),
        PlayError::Unsupported(m) => {
            PlayError::Unsupported(format!("game {}, {who}: {m}", index + 1))
        }
        PlayError::Solver(m) => PlayError::Solver(format!("game {}, {who}: {m}", index + 1)),
        PlayError::Io(e) => PlayError::Io(e),
    };
    let make = |spec: &PlayerSpec, role: u64| {
        let res = Resources {
            seed: derive_seed(config.seed, role, index as u64),
            tt_mib: if *spec == PlayerSpec::Perfect {
                perfect_mib
            } else {
                res.tt_mib
            },
            ..res.clone()
        };
        spec_for_game(spec, index)
            .make(r.houses, r.seeds, r.rules, &res)
            .map_err(|e| in_game(e, spec))
    };
    let (player_a, player_b) = (make(a, 1)?, make(b, 2)?);
    // Seat 0 starts as South.
    let (mut players, specs): ([Box<dyn Player>; 2], [&PlayerSpec; 2]) = if a_seat == 0 {
        ([player_a, player_b], [a, b])
    } else {
        ([player_b, player_a], [b, a])
    };
    let mut game = Game::new(r);
    for &action in opening {
        game.play(action)
            .expect("the opening was played on the same variant");
    }
    while let Some(side) = game.state().to_move() {
        let seat = game.seat(side);
        let action = players[seat]
            .choose(&game)
            .map_err(|e| in_game(e, specs[seat]))?;
        game.play(action).map_err(|e| {
            PlayError::Unsupported(format!(
                "game {}, {}: chose {action}, which is illegal: {e}",
                index + 1,
                specs[seat]
            ))
        })?;
    }
    for (seat, player) in players.iter_mut().enumerate() {
        player
            .game_over(&game, seat)
            .map_err(|e| in_game(e, specs[seat]))?;
    }
    let b_seat = 1 - a_seat;
    let store = |seat: usize| game.state().store(game.side_of(seat));
    Ok(GameResult {
        index,
        a_seat,
        opening: opening.len(),
        margin_a: game.margin(a_seat),
        store_a: store(a_seat),
        store_b: store(b_seat),
        nodes_a: players[a_seat].nodes(),
        nodes_b: players[b_seat].nodes(),
        elapsed: started.elapsed(),
        game,
    })
}

#[cfg(test)]
mod tests {
    use super::{MATCH_TABLES_MIB, perfect_table_share};

    #[test]
    fn perfect_players_share_the_table_budget_of_one_solve() {
        // Kalah(6,4): two 512 MiB tables fit as they are.
        assert_eq!(perfect_table_share(512, 2), 512);
        // Kalah(6,6), perfect against perfect on 2 threads: four tables of 2 GiB, not 8.
        assert_eq!(perfect_table_share(8 << 10, 4), 2 << 10);
        assert_eq!(perfect_table_share(8 << 10, 1), 8 << 10);
        // Many games at once never go below 16 MiB a table.
        assert_eq!(perfect_table_share(8 << 10, 10_000), 16);
        for solvers in 1..64 {
            let mib = perfect_table_share(8 << 10, solvers);
            assert!(mib == 16 || mib * solvers <= MATCH_TABLES_MIB);
            assert!(mib.is_power_of_two());
        }
    }

    #[test]
    fn running_totals_do_not_depend_on_the_order_of_the_games() {
        use super::{GameResult, MatchStats, MatchTotals};
        use crate::play::game::{Game, GameRules};
        use crate::play::state::PlayRules;
        use crate::rules::Rules;
        let rules = GameRules {
            houses: 2,
            seeds: 1,
            rules: PlayRules::Kalah(Rules::Standard),
            pie: false,
        };
        let result = |index: usize, margin_a: i32| GameResult {
            index,
            a_seat: index % 2,
            opening: 0,
            margin_a,
            store_a: 2,
            store_b: 2,
            nodes_a: Some(index as u64),
            nodes_b: None,
            elapsed: std::time::Duration::ZERO,
            game: Game::new(rules),
        };
        let margins = [3, -1, 0, 7, -4, 2, 0];
        let games: Vec<GameResult> = margins
            .iter()
            .enumerate()
            .map(|(i, &m)| result(i, m))
            .collect();
        let mut backwards = MatchTotals::default();
        for g in games.iter().rev() {
            backwards.add(g);
        }
        let stats = MatchStats::of(&games);
        assert_eq!(backwards.stats(), stats);
        assert_eq!(
            (stats.games, stats.wins, stats.draws, stats.losses),
            (7, 3, 2, 2)
        );
        assert_eq!((stats.nodes_a, stats.nodes_b), (Some(21), None));
        // The mean and the interval as the textbook computes them.
        let n = margins.len() as f64;
        let mean = margins.iter().map(|&m| f64::from(m)).sum::<f64>() / n;
        let var = margins
            .iter()
            .map(|&m| (f64::from(m) - mean).powi(2))
            .sum::<f64>()
            / (n - 1.0);
        assert!((stats.margin_mean - mean).abs() < 1e-12);
        assert!((stats.margin_ci95.unwrap() - 1.96 * (var / n).sqrt()).abs() < 1e-12);
        assert_eq!(MatchTotals::default().stats().margin_ci95, None);
    }
}
