//! The anytime engine: a legal move at once, deeper results while time lasts, exact results
//! once the position is within reach, the deadline and the stop flag kept, every rule set.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use kalah::play::anytime::{Engine, EngineConfig, Thought};
use kalah::play::{Action, Game, GameRules, PlayRules, PlayState, PlayerSpec, Resources};
use kalah::{Narrow, Position, Rules, Setup, Side, Solver, SolverConfig, Variant};

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
