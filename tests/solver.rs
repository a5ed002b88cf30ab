//! The solver against a deliberately naive exact solver written on the plain reference
//! implementation (no packed board, no table, no pruning), on small variants and on thousands
//! of random positions, both rules; and the solver against itself: every algorithm, 1 vs 2
//! threads, table sizes, `analyze` vs its own move values.

use std::collections::HashMap;

mod common;
use common::naive_value;

use kalah::reference::RefPosition;
use kalah::{
    Algorithm, AnyPosition, Position, Rng, Rules, Setup, Side, SolveError, Solver, SolverConfig,
    Variant, with_position,
};

fn config(algorithm: Algorithm, threads: usize) -> SolverConfig {
    SolverConfig {
        threads,
        tt_mib: 16,
        algorithm,
        ..SolverConfig::default()
    }
}

fn solve_value(
    setup: &Setup,
    rules: Rules,
    algorithm: Algorithm,
    threads: usize,
) -> (i32, Vec<(usize, i32)>) {
    let pos = AnyPosition::from_setup(setup, rules).unwrap();
    with_position!(pos, p => {
        let solver = Solver::new(p.houses_per_side(), rules, config(algorithm, threads)).unwrap();
        let a = solver.analyze(&p, true, &mut |_| {}).unwrap();
        (a.value, a.moves.iter().map(|m| (m.mv.house(), m.value)).collect())
    })
}

#[test]
fn small_variants_match_the_naive_solver() {
    for rules in Rules::ALL {
        for (m, n) in [
            (1, 1),
            (1, 3),
            (2, 1),
            (2, 2),
            (2, 3),
            (3, 1),
            (3, 2),
            (3, 3),
            (4, 1),
            (4, 2),
        ] {
            let variant = Variant::new(m, n, rules).unwrap();
            let start = AnyPosition::start(variant);
            let setup: Setup = start.to_string().parse().unwrap();
            let naive = naive_value(&RefPosition::from_setup(&setup, rules), &mut HashMap::new());
            for algorithm in Algorithm::ALL {
                if algorithm == Algorithm::Minimax && m * n as usize > 6 {
                    continue;
                }
                let (v, _) = solve_value(&setup, rules, algorithm, 1);
                assert_eq!(v, naive, "Kalah({m},{n}) {rules} {algorithm}");
            }
        }
    }
}

/// A random position with `m` houses and at most `max_seeds` seeds on the board.
fn random_setup(rng: &mut Rng, m: usize, max_seeds: u64) -> Setup {
    loop {
        let mut row = vec![0u64; 2 * m];
        for _ in 0..1 + rng.below(max_seeds) {
            row[rng.below(2 * m as u64) as usize] += 1;
        }
        if row[..m].iter().all(|&s| s == 0) || row[m..].iter().all(|&s| s == 0) {
            continue;
        }
        return Setup {
            houses: m,
            stores: [rng.below(10), rng.below(10)],
            south: row[..m].to_vec(),
            north: row[m..].to_vec(),
            to_move: Some(if rng.below(2) == 0 {
                Side::South
            } else {
                Side::North
            }),
        };
    }
}

/// Iterative deepening cut short by its node budget (after a few nodes, or none) leaves every
/// value as it was: it only changes where the exact search starts.
#[test]
fn a_deepening_budget_changes_no_value() {
    let mut rng = Rng::new(66);
    let mut memo = [HashMap::new(), HashMap::new()];
    for i in 0..160 {
        let m = 2 + rng.below(5) as usize;
        let setup = random_setup(&mut rng, m, 12);
        let rules = Rules::ALL[i % 2];
        let naive = naive_value(&RefPosition::from_setup(&setup, rules), &mut memo[i % 2]);
        let pos = AnyPosition::from_setup(&setup, rules).unwrap();
        let budget = [0, 1, 50, 5000][i % 4];
        let v = with_position!(pos, p => {
            let mut config = config(Algorithm::Mtdf, 1 + i % 2);
            config.tuning.deepening_nodes = budget;
            let solver = Solver::new(p.houses_per_side(), rules, config).unwrap();
            solver.analyze(&p, false, &mut |_| {}).unwrap().value
        });
        assert_eq!(v, naive, "{setup} {rules} deepening budget {budget}");
    }
}

/// Trials (each move tried within a node budget that grows, near the root: see
/// `kalah::search::negamax::Tuning::trial_plies`) change no value, whatever the budget, on one
/// thread or two: forced here onto boards of every width and onto small budgets, so that many
/// trials run out and are searched again. The search without them is the reference (checked
/// against the naive solver above).
#[test]
fn trials_change_no_value() {
    let mut rng = Rng::new(77);
    let mut changed = 0;
    for i in 0..36 {
        let m = 4 + rng.below(3) as usize;
        let setup = random_setup(&mut rng, m, 30);
        let rules = Rules::ALL[i % 2];
        let pos = AnyPosition::from_setup(&setup, rules).unwrap();
        let (budget, growth) = [(1, 2), (4096, 2), (20_000, 4)][i % 3];
        let threads = 1 + i % 2;
        let values = |trials: bool| {
            with_position!(pos, p => {
                let mut config = config(Algorithm::Mtdf, threads);
                if trials {
                    config.tuning.trial_plies = 3;
                    config.tuning.trial_min_houses = 1;
                    config.tuning.trial_nodes = budget;
                    config.tuning.trial_growth = growth;
                } else {
                    config.tuning.trial_plies = 0;
                }
                let solver = Solver::new(p.houses_per_side(), rules, config).unwrap();
                let a = solver.analyze(&p, true, &mut |_| {}).unwrap();
                let moves: Vec<(usize, i32)> =
                    a.moves.iter().map(|m| (m.mv.house(), m.value)).collect();
                ((a.value, moves, a.best.len()), solver.nodes())
            })
        };
        let (with, nodes_with) = values(true);
        let (without, nodes_without) = values(false);
        assert_eq!(
            with, without,
            "{setup} {rules}: trials from {budget} nodes, x{growth}, {threads} threads"
        );
        // On one thread the search is the same every time: a change is the trials'.
        if threads == 1 {
            changed += usize::from(nodes_with != nodes_without);
        }
    }
    // The trials did run, and some ran out: they changed the search.
    assert!(changed >= 5, "trials changed {changed} of 18 searches");
}

#[test]
fn random_positions_match_the_naive_solver() {
    let mut rng = Rng::new(2024);
    let mut memo = [HashMap::new(), HashMap::new()];
    for i in 0..2000 {
        let m = 1 + rng.below(6) as usize;
        let setup = random_setup(&mut rng, m, 10);
        let rules = Rules::ALL[i % 2];
        let reference = RefPosition::from_setup(&setup, rules);
        let naive = naive_value(&reference, &mut memo[i % 2]);
        let (v, moves) = solve_value(&setup, rules, Algorithm::Mtdf, 1 + i % 2);
        assert_eq!(v, naive, "{setup} {rules}");
        // Each move's value: the naive value of the child, from the mover's view.
        for (house, value) in moves {
            let mut child = reference.clone();
            child.play(house);
            let cv = naive_value(&child, &mut memo[i % 2]);
            let expected = if child.to_move == reference.to_move {
                cv
            } else {
                -cv
            };
            assert_eq!(value, expected, "{setup} {rules} house {house}");
        }
    }
}

#[test]
fn one_and_two_threads_agree_and_the_pv_reaches_the_value() {
    for rules in Rules::ALL {
        let variant = Variant::new(4, 3, rules).unwrap();
        let p = Position::<kalah::Narrow>::start(variant).unwrap();
        let mut results = Vec::new();
        for (threads, mib) in [(1, 1), (2, 1), (2, 64), (1, 64)] {
            let cfg = SolverConfig {
                tt_mib: mib,
                ..config(Algorithm::Mtdf, threads)
            };
            let solver = Solver::new(4, rules, cfg).unwrap();
            results.push(solver.analyze(&p, true, &mut |_| {}).unwrap());
            // Without all the move values: the same value, best moves and line.
            let quick = solver.analyze(&p, false, &mut |_| {}).unwrap();
            let last = results.last().unwrap();
            assert_eq!(
                (quick.value, &quick.best, &quick.pv),
                (last.value, &last.best, &last.pv)
            );
            assert!(quick.moves.iter().all(|m| m.value == last.value));
        }
        for r in &results[1..] {
            assert_eq!(r, &results[0], "{rules}");
        }
        // Playing the PV ends the game with the solved margin.
        let a = &results[0];
        let mut pos = p;
        for turn in &a.pv {
            pos = pos.play_turn(&turn.0).unwrap();
        }
        let outcome = pos.outcome().expect("the PV plays to the end");
        assert_eq!(outcome.margin(Side::South), a.value, "{rules}");
        assert!(a.best.contains(&a.pv[0].0[0]));
    }
}

/// With every move's value asked, the progress steps after the position's own are each move's,
/// told as bounds on that move's value for the position's mover (stores excluded): every step
/// brackets the value `analyze` returns for it, and the last one of each move is that value.
#[test]
fn the_steps_of_each_move_bound_that_moves_value() {
    for rules in Rules::ALL {
        let variant = Variant::new(4, 3, rules).unwrap();
        let p = Position::<kalah::Narrow>::start(variant).unwrap();
        let solver = Solver::new(4, rules, config(Algorithm::Mtdf, 1)).unwrap();
        let mut steps = Vec::new();
        let a = solver
            .analyze(&p, true, &mut |s| {
                if s.depth.is_none() {
                    steps.push((s.mv.map(|m| m.house()), s.lower, s.upper));
                }
            })
            .unwrap();
        let stores = p.store_difference();
        let mut last = HashMap::new();
        for &(mv, lower, upper) in &steps {
            let value = match mv {
                None => a.value,
                Some(h) => a.moves.iter().find(|m| m.mv.house() == h).unwrap().value,
            };
            assert!(
                stores + lower <= value && value <= stores + upper,
                "{rules}: {mv:?} in [{lower}, {upper}], value {value}"
            );
            last.insert(mv, (lower, upper));
        }
        for m in &a.moves {
            // A move that ends the game, or whose board is valued at once, has no steps.
            if let Some(&(lower, upper)) = last.get(&Some(m.mv.house())) {
                assert_eq!(
                    (stores + lower, stores + upper),
                    (m.value, m.value),
                    "{rules}"
                );
            }
        }
        assert!(last.len() > 2, "{rules}: steps of the moves too");
    }
}

#[test]
fn the_ladder_agrees_with_mtdf_on_larger_starts() {
    for rules in Rules::ALL {
        for (m, n) in [(3, 4), (6, 1), (2, 6)] {
            let setup: Setup = AnyPosition::start(Variant::new(m, n, rules).unwrap())
                .to_string()
                .parse()
                .unwrap();
            let values: Vec<i32> = [Algorithm::AlphaBeta, Algorithm::Scout, Algorithm::Mtdf]
                .into_iter()
                .map(|a| {
                    let pos = AnyPosition::from_setup(&setup, rules).unwrap();
                    with_position!(pos, p => {
                        let solver = Solver::new(m, rules, config(a, 2)).unwrap();
                        solver.exact(p.board(), &mut |_| {}).unwrap()
                    })
                })
                .collect();
            assert!(
                values.iter().all(|&v| v == values[0]),
                "Kalah({m},{n}) {rules}: {values:?}"
            );
        }
    }
}

/// The plainer algorithms (`--by alphabeta` checks use one) heed a cancel and a deadline as
/// MTD(f) does, instead of running to the end of a search that may take hours; the solver
/// still answers once the deadline is lifted.
#[test]
fn the_ladder_heeds_a_cancel_and_a_deadline() {
    let big =
        Position::<kalah::Narrow>::start(Variant::new(4, 6, Rules::Standard).unwrap()).unwrap();
    let small =
        Position::<kalah::Narrow>::start(Variant::new(4, 1, Rules::Standard).unwrap()).unwrap();
    for a in [
        Algorithm::Minimax,
        Algorithm::Memo,
        Algorithm::AlphaBeta,
        Algorithm::Scout,
    ] {
        let solver = Solver::new(4, Rules::Standard, config(a, 1)).unwrap();
        solver.set_deadline(Some(std::time::Instant::now()));
        let late = solver.exact(big.board(), &mut |_| {});
        assert!(
            matches!(late, Err(SolveError::OutOfTime)),
            "{a:?}: {late:?}"
        );
        solver.set_deadline(None);
        let mtdf = Solver::new(4, Rules::Standard, config(Algorithm::Mtdf, 1)).unwrap();
        assert_eq!(
            solver.exact(small.board(), &mut |_| {}).unwrap(),
            mtdf.exact(small.board(), &mut |_| {}).unwrap(),
            "{a:?}"
        );
        solver.cancel();
        let cancelled = solver.exact(big.board(), &mut |_| {});
        assert!(
            matches!(cancelled, Err(SolveError::Cancelled)),
            "{a:?}: {cancelled:?}"
        );
    }
}

#[test]
fn a_deadline_stops_the_search_and_leaves_the_solver_sound() {
    let solver = Solver::new(6, Rules::Standard, config(Algorithm::Mtdf, 2)).unwrap();
    let big =
        Position::<kalah::Narrow>::start(Variant::new(6, 6, Rules::Standard).unwrap()).unwrap();
    let started = std::time::Instant::now();
    solver.set_deadline(Some(started + std::time::Duration::from_millis(100)));
    let stopped = solver.analyze(&big, true, &mut |_| {});
    assert!(matches!(stopped, Err(SolveError::OutOfTime)), "{stopped:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // A past deadline stops at once; none lets the same solver finish, with the right value.
    let small =
        Position::<kalah::Narrow>::start(Variant::new(6, 2, Rules::Standard).unwrap()).unwrap();
    solver.set_deadline(Some(started));
    assert!(matches!(
        solver.analyze(&small, true, &mut |_| {}),
        Err(SolveError::OutOfTime)
    ));
    solver.set_deadline(None);
    let fresh = Solver::new(6, Rules::Standard, config(Algorithm::Mtdf, 1)).unwrap();
    assert_eq!(
        solver.analyze(&small, true, &mut |_| {}).unwrap(),
        fresh.analyze(&small, true, &mut |_| {}).unwrap()
    );
}
