//! The anytime engine: a legal move at once, deeper results while time lasts, exact results
//! once the position is within reach, the deadline and the stop flag kept, every rule set; the
//! databases inside its search give the exact values, and a damaged block never a value.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use kalah::db::{Access, Tablebase};
use kalah::play::anytime::{Engine, EngineConfig, Thought};
use kalah::play::{Action, Game, GameRules, PlayRules, PlayState, PlayerSpec, Resources};
use kalah::{Narrow, Position, Rng, Rules, Setup, Side, Solver, SolverConfig, Variant};

fn config(houses: usize) -> EngineConfig {
    EngineConfig {
        db: None,
        exact_seeds: EngineConfig::default_exact_seeds(houses),
        threads: 1,
        tt_mib: 16,
    }
}

/// The exact value (stores included, for the side to move) and lowest optimal move of a
/// Kalah position under standard rules.
fn exact(setup: &Setup) -> (i32, kalah::Move) {
    let pos = Position::<Narrow>::from_setup(setup, Rules::Standard).unwrap();
    let config = SolverConfig {
        threads: 1,
        tt_mib: 16,
        ..SolverConfig::default()
    };
    let solver = Solver::new(setup.houses, Rules::Standard, config).unwrap();
    solver.best_move(&pos).unwrap().unwrap()
}

fn rules(houses: usize, seeds: u32, rules: PlayRules, pie: bool) -> GameRules {
    GameRules {
        houses,
        seeds,
        rules,
        pie,
    }
}

#[test]
fn a_legal_move_at_once_then_deeper_ones_within_the_deadline() {
    for r in PlayRules::ALL {
        for m in [6, 8, 12] {
            let game = Game::new(rules(m, 6, r, false));
            let mut engine = Engine::new(m, r, config(m)).unwrap();
            let stop = AtomicBool::new(false);
            let start = Instant::now();
            let mut reports: Vec<(Thought, Duration)> = Vec::new();
            let last = engine.think(&game, start + Duration::from_millis(150), &stop, &mut |t| {
                reports.push((*t, start.elapsed()))
            });
            let elapsed = start.elapsed();
            // Generous bounds: tests share a loaded machine; the point is that the deadline
            // ends the thinking and that the first move does not wait for it.
            assert!(elapsed < Duration::from_secs(3), "{r} m={m}: {elapsed:?}");
            assert!(reports[0].1 < reports.last().unwrap().1 || reports.len() == 1);
            assert!(reports.len() >= 2, "{r} m={m}: deeper iterations");
            assert_eq!(reports.last().unwrap().0, last);
            for (t, _) in &reports {
                match t.action {
                    Action::Sow(mv) => assert!(game.state().is_legal(mv)),
                    Action::Swap => panic!("no pie rule here"),
                }
            }
            assert!(reports.windows(2).all(|w| w[0].0.depth < w[1].0.depth));
        }
    }
}

#[test]
fn a_set_stop_flag_ends_the_thinking_with_a_legal_move() {
    let game = Game::new(rules(12, 12, PlayRules::Kalah(Rules::Standard), false));
    let mut engine = Engine::new(12, PlayRules::Kalah(Rules::Standard), config(12)).unwrap();
    let stop = AtomicBool::new(true);
    let start = Instant::now();
    let t = engine.think(&game, start + Duration::from_secs(60), &stop, &mut |_| {});
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_eq!(t.depth, 1);
    assert!(matches!(t.action, Action::Sow(mv) if game.state().is_legal(mv)));
}

#[test]
fn positions_within_reach_are_solved_exactly() {
    // A 6-house position with 20 seeds on the board: exact, the solver's value and move.
    let setup: Setup = "<6,10,18,0,3,2,1,0,4,2,0,1,3,0,4>".parse().unwrap();
    let state = PlayState::from_setup(&setup, PlayRules::Kalah(Rules::Standard));
    let game = Game::from_state(rules(6, 4, PlayRules::Kalah(Rules::Standard), false), state);
    let mut engine = Engine::new(6, PlayRules::Kalah(Rules::Standard), config(6)).unwrap();
    let stop = AtomicBool::new(false);
    let t = engine.think(
        &game,
        Instant::now() + Duration::from_secs(10),
        &stop,
        &mut |_| {},
    );
    assert!(t.exact);
    let (value, mv) = exact(&setup);
    assert_eq!((t.value, t.action), (value, Action::Sow(mv)));
}

#[test]
fn under_the_pie_rule_north_swaps_a_lost_position() {
    // Kalah(4,3): South wins by 6 with house 2; after it, North swaps (it would lose from
    // there as the side to move).
    let r = rules(4, 3, PlayRules::Kalah(Rules::Standard), true);
    let mut game = Game::new(r);
    game.play(Action::Sow(kalah::Move::new(2).unwrap()))
        .unwrap();
    while game.state().to_move() == Some(Side::South) {
        let mv = game.state().legal_moves()[0];
        game.play(Action::Sow(mv)).unwrap();
    }
    assert!(game.can_swap());
    // The exact value for North to move decides.
    let (value, _) = exact(&game.state().to_setup());
    let mut engine = Engine::new(4, r.rules, config(4)).unwrap();
    let t = engine.think(
        &game,
        Instant::now() + Duration::from_secs(5),
        &AtomicBool::new(false),
        &mut |_| {},
    );
    assert!(t.exact);
    assert_eq!(t.action == Action::Swap, value < 0, "value {value}");
}

#[test]
fn mankalahs_first_sowing_passes_the_turn() {
    let r = rules(7, 7, PlayRules::ManKalah, true);
    let mut game = Game::new(r);
    // House 1 of 7 seeds ends in South's store: under mankalah the turn still passes.
    game.play(Action::Sow(kalah::Move::new(1).unwrap()))
        .unwrap();
    assert_eq!(game.state().to_move(), Some(Side::North));
    assert!(game.can_swap());
    // Later sowings into the store earn extra turns as usual.
    let mut standard = Game::new(rules(7, 7, PlayRules::Kalah(Rules::Standard), false));
    standard
        .play(Action::Sow(kalah::Move::new(1).unwrap()))
        .unwrap();
    assert_eq!(standard.state().to_move(), Some(Side::South));
    let _ = Variant::new(7, 7, Rules::Standard).unwrap();
}

#[test]
fn the_engine_player_beats_a_shallow_searcher() {
    // engine:TIME as a player spec; against alphabeta:2 it should win both sides of a pair.
    let spec: PlayerSpec = "engine:100ms".parse().unwrap();
    assert_eq!(spec.to_string(), "engine:100ms");
    assert_eq!(
        "engine:2s".parse::<PlayerSpec>().unwrap().to_string(),
        "engine:2s"
    );
    assert!("engine".parse::<PlayerSpec>().is_err());
    assert!("engine:soon".parse::<PlayerSpec>().is_err());
    let r = rules(6, 4, PlayRules::Kalah(Rules::Standard), false);
    let res = Resources {
        threads: 1,
        ..Resources::default()
    };
    for engine_seat in 0..2 {
        let mut players = [
            spec.make(6, 4, r.rules, &res).unwrap(),
            "alphabeta:2"
                .parse::<PlayerSpec>()
                .unwrap()
                .make(6, 4, r.rules, &res)
                .unwrap(),
        ];
        if engine_seat == 1 {
            players.swap(0, 1);
        }
        let mut game = Game::new(r);
        while let Some(side) = game.state().to_move() {
            let seat = game.seat(side);
            let action = players[seat].choose(&game).unwrap();
            game.play(action).unwrap();
        }
        assert!(
            game.margin(engine_seat) > 0,
            "the engine lost from seat {engine_seat}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The databases inside the search
// ---------------------------------------------------------------------------------------------

/// Levels `0..=top` of `houses` houses under `rules`, built in memory.
fn small_db(houses: usize, rules: Rules, top: u32) -> Arc<Tablebase> {
    let cancel = AtomicBool::new(false);
    Arc::new(kalah::db::build_in_memory(houses, rules, top, &cancel, &|_| {}).unwrap())
}

/// The engine with `db`, solving exactly only what the databases cover (`exact_seeds` 0), so
/// that a value above their top level comes from the search.
fn with_db(houses: usize, rules: PlayRules, db: Option<Arc<Tablebase>>) -> Engine {
    let config = EngineConfig {
        db,
        exact_seeds: 0,
        threads: 1,
        tt_mib: 16,
    };
    Engine::new(houses, rules, config).unwrap()
}

/// The exact future store difference (value minus the stores) of `state` for the side to
/// move, by plain negamax on [`PlayState`] to the end of the game: the oracle of these tests,
/// under every play rule set (the `mankalah` first sowing included).
fn naive_f(state: &PlayState, memo: &mut HashMap<u64, i32>) -> i32 {
    let key = state.key();
    if let Some(&f) = memo.get(&key) {
        return f;
    }
    let me = state.to_move().expect("not over");
    let best = state
        .legal_moves()
        .into_iter()
        .map(|mv| naive_move(state, mv, memo))
        .max()
        .expect("a legal move");
    let f = best - state.store_difference(me);
    memo.insert(key, f);
    f
}

/// The exact value (stores included) of playing `mv` in `state`, for the side to move.
fn naive_move(state: &PlayState, mv: kalah::Move, memo: &mut HashMap<u64, i32>) -> i32 {
    let me = state.to_move().expect("not over");
    let mut next = *state;
    next.play(mv);
    match next.to_move() {
        None => next.store_difference(me),
        Some(side) if side == me => next.store_difference(me) + naive_f(&next, memo),
        Some(side) => -(next.store_difference(side) + naive_f(&next, memo)),
    }
}

/// Random states of Kalah(`houses`) with `lo..=hi` seeds on the board and a few in the stores,
/// South or North to move, the game not over.
fn random_states(
    rng: &mut Rng,
    rules: PlayRules,
    houses: usize,
    lo: u64,
    hi: u64,
) -> Vec<PlayState> {
    let mut found = Vec::new();
    while found.len() < 24 {
        let seeds = lo + rng.below(hi - lo + 1);
        let mut pits = vec![0u64; 2 * houses];
        for _ in 0..seeds {
            pits[rng.below(2 * houses as u64) as usize] += 1;
        }
        let setup = Setup {
            houses,
            stores: [rng.below(6), rng.below(6)],
            south: pits[..houses].to_vec(),
            north: pits[houses..].to_vec(),
            to_move: Some(if rng.below(2) == 0 {
                Side::South
            } else {
                Side::North
            }),
        };
        let state = PlayState::from_setup(&setup, rules);
        let empty = |side| state.houses(side).iter().all(|&s| s == 0);
        if !empty(Side::South) && !empty(Side::North) {
            found.push(state);
        }
    }
    found
}

#[test]
fn with_databases_the_search_values_equal_the_exact_ones_within_and_above_the_top_level() {
    // 4 houses, levels 0..=8: positions of 5 to 8 seeds are solved (with the databases),
    // those of 9 to 12 are searched until every line ends in a finished game or a database
    // value. Either way the value is the exact one and the move an optimal one.
    const HOUSES: usize = 4;
    const TOP: u32 = 8;
    let mut rng = Rng::new(16);
    for capture in [Rules::Standard, Rules::EmptyCapture] {
        let db = small_db(HOUSES, capture, TOP);
        let rules = PlayRules::Kalah(capture);
        let mut memo = HashMap::new();
        let mut engine = with_db(HOUSES, rules, Some(db.clone()));
        let game_rules = self::rules(HOUSES, 4, rules, false);
        for state in random_states(&mut rng, rules, HOUSES, 5, u64::from(TOP) + 4) {
            let game = Game::from_state(game_rules, state);
            let deadline = Instant::now() + Duration::from_secs(60);
            let t = engine.think(&game, deadline, &AtomicBool::new(false), &mut |_| {});
            assert!(
                Instant::now() < deadline,
                "{capture}: the search did not finish"
            );
            let me = state.to_move().unwrap();
            let exact = state.store_difference(me) + naive_f(&state, &mut memo);
            let at = state.to_setup();
            assert_eq!(t.value, exact, "{capture} {at}: {t:?}");
            assert_eq!(
                t.exact,
                state.seeds_on_board() <= TOP,
                "{capture} {at}: {t:?}"
            );
            let Action::Sow(mv) = t.action else {
                panic!("no pie rule here")
            };
            assert_eq!(
                naive_move(&state, mv, &mut memo),
                exact,
                "{capture} {at}: {mv}"
            );
        }
        assert!(engine.db_hits() > 0);
        assert_eq!(engine.take_solve_error(), None);
    }
}

#[test]
fn the_databases_do_not_value_mankalahs_first_sowing() {
    // Kalah(3,3) under mankalah, all 18 seeds within the levels: the start (South's first
    // sowing earns no extra turn, which the databases do not know) is searched, its children
    // read from the databases; the value is the exact mankalah one, not the standard one.
    let db = small_db(3, Rules::Standard, 18);
    let start = PlayState::start(3, 3, PlayRules::ManKalah);
    let mankalah = naive_f(&start, &mut HashMap::new());
    let standard = naive_f(
        &PlayState::start(3, 3, PlayRules::Kalah(Rules::Standard)),
        &mut HashMap::new(),
    );
    assert_eq!(
        db.probe(kalah::Board::<Narrow>::start(3, 3).unwrap())
            .unwrap(),
        Some(standard)
    );
    let game = Game::new(rules(3, 3, PlayRules::ManKalah, true));
    let mut engine = with_db(3, PlayRules::ManKalah, Some(db));
    let deadline = Instant::now() + Duration::from_secs(60);
    let t = engine.think(&game, deadline, &AtomicBool::new(false), &mut |_| {});
    assert_eq!(t.value, mankalah, "{t:?} (standard: {standard})");
    assert!(!t.exact);
    assert!(engine.db_hits() > 0);
}

#[test]
fn a_damaged_block_met_by_the_search_is_an_error_never_a_value() {
    const HOUSES: usize = 4;
    const TOP: u32 = 10;
    let dir = std::env::temp_dir().join(format!("kalah-anytime-damage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cancel = AtomicBool::new(false);
    kalah::db::build(&dir, HOUSES, Rules::Standard, TOP, &cancel, &|_| {}).unwrap();
    // One entry of every block of the top level changed by 2 (its block check fails).
    let path = dir.join(kalah::db::level_file_name(HOUSES, Rules::Standard, TOP));
    let mut bytes = std::fs::read(&path).unwrap();
    let header = kalah::db::format::Header::from_bytes(&bytes).unwrap();
    for block in 0..header.blocks() {
        let range = header.block_bytes_range(block);
        bytes[64 + (range.start + range.end) as usize / 2] ^= 1;
    }
    std::fs::write(&path, &bytes).unwrap();
    let db = Arc::new(Tablebase::open(&dir, HOUSES, Rules::Standard, Access::Map).unwrap());
    let rules = PlayRules::Kalah(Rules::Standard);
    let mut memo = HashMap::new();
    let mut rng = Rng::new(7);
    let mut errors = 0;
    for state in random_states(&mut rng, rules, HOUSES, 11, 13) {
        let mut engine = with_db(HOUSES, rules, Some(db.clone()));
        let game = Game::from_state(self::rules(HOUSES, 4, rules, false), state);
        let deadline = Instant::now() + Duration::from_millis(300);
        let t = engine.think(&game, deadline, &AtomicBool::new(false), &mut |_| {});
        let Action::Sow(mv) = t.action else {
            panic!("no pie rule here")
        };
        assert!(state.is_legal(mv));
        if let Some(why) = engine.take_solve_error() {
            errors += 1;
            assert!(why.contains("kalah-4-standard-010.kdb"), "{why}");
            assert!(!t.exact, "{t:?}");
        } else {
            let exact =
                state.store_difference(state.to_move().unwrap()) + naive_f(&state, &mut memo);
            assert_eq!(t.value, exact, "{t:?}");
        }
    }
    assert!(errors > 0, "no probe met the damaged level");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn engines_with_and_without_databases_play_legal_games() {
    // engine:TIME and engine:TIME:no-db, on Kalah(4,4) under standard rules and under mankalah
    // with the pie rule, the databases covering the last 12 seeds.
    let db = small_db(4, Rules::Standard, 12);
    for (rules, pie) in [
        (PlayRules::Kalah(Rules::Standard), false),
        (PlayRules::ManKalah, true),
    ] {
        let r = self::rules(4, 4, rules, pie);
        let res = Resources {
            db: Some(db.clone()),
            threads: 1,
            ..Resources::default()
        };
        let specs = ["engine:20ms", "engine:20ms:no-db"];
        for spec in specs {
            let parsed: PlayerSpec = spec.parse().unwrap();
            assert_eq!(parsed.to_string(), spec);
        }
        let mut players = specs.map(|s| {
            s.parse::<PlayerSpec>()
                .unwrap()
                .make(4, 4, rules, &res)
                .unwrap()
        });
        let mut game = Game::new(r);
        while let Some(side) = game.state().to_move() {
            let seat = game.seat(side);
            let action = players[seat].choose(&game).unwrap();
            game.play(action).unwrap();
        }
    }
}

/// What the databases do to the search's speed and depth, for docs/bots.md: `KALAH_SPEED_DB=DIR
/// cargo test --release --test anytime -- --ignored --nocapture speed` with the 7- and 8-house
/// levels in DIR. Positions of 25 to 45 seeds from random games, 200 ms each, without the
/// databases and with their levels up to the top, 2 below and 4 below; prints depth, nodes a
/// second and the share of nodes valued from the databases.
#[test]
#[ignore = "needs big databases (KALAH_SPEED_DB) and minutes"]
fn speed_with_and_without_databases() {
    let Some(dir) = std::env::var_os("KALAH_SPEED_DB") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    for (houses, seeds, rules) in [
        (7, 7, PlayRules::ManKalah),
        (8, 8, PlayRules::Kalah(Rules::Standard)),
    ] {
        let db = Tablebase::open(&dir, houses, Rules::Standard, Access::Map).unwrap();
        let top = db.max_level();
        let mut rng = Rng::new(houses as u64);
        let mut states = Vec::new();
        while states.len() < 30 {
            let mut state = PlayState::start(houses, seeds, rules);
            let target = 25 + rng.below(21) as u32;
            while state.to_move().is_some() && state.seeds_on_board() > target {
                let moves = state.legal_moves();
                state.play(moves[rng.below(moves.len() as u64) as usize]);
            }
            if state.to_move().is_some() && state.seeds_on_board() > 24 {
                states.push(state);
            }
        }
        // No databases, then the levels up to the top, to 2 below it and to 4 below it.
        for levels in [None, Some(top), Some(top - 2), Some(top - 4)] {
            let db = levels.map(|k| {
                let open =
                    Tablebase::open_up_to(&dir, houses, Rules::Standard, Access::Map, Some(k));
                Arc::new(open.unwrap())
            });
            let config = EngineConfig {
                db,
                exact_seeds: EngineConfig::default_exact_seeds(houses),
                threads: 1,
                tt_mib: 64,
            };
            let (mut depth, mut nodes, mut time, mut hits) = (0, 0, 0.0, 0);
            for state in &states {
                let mut engine = Engine::new(houses, rules, config.clone()).unwrap();
                let game = Game::from_state(self::rules(houses, seeds, rules, false), *state);
                let start = Instant::now();
                let deadline = start + Duration::from_millis(200);
                let t = engine.think(&game, deadline, &AtomicBool::new(false), &mut |_| {});
                time += start.elapsed().as_secs_f64();
                depth += t.depth;
                nodes += engine.nodes();
                hits += engine.db_hits();
            }
            let n = states.len() as f64;
            println!(
                "Kalah({houses},{seeds}) {rules}, levels 0..={levels:?}: depth {:.1}, {:.2} M nodes/s, {:.1}% of nodes from the databases",
                f64::from(depth) / n,
                nodes as f64 / time / 1e6,
                100.0 * hits as f64 / nodes.max(1) as f64
            );
        }
    }
}
