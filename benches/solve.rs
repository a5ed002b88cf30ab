//! Exact solves from the start, one thread, fixed table: every benchmark asserts the value.
//! Run with `cargo bench --bench solve`; `scripts/bench-solve.sh` drives bigger solves.

use criterion::{Criterion, criterion_group, criterion_main};
use kalah::{Narrow, Position, Rules, Solver, SolverConfig, Variant};

fn bench_solve(c: &mut Criterion, m: usize, n: u64, rules: Rules, value: i32) {
    let start = Position::<Narrow>::start(Variant::new(m, n, rules).unwrap()).unwrap();
    let mut group = c.benchmark_group("solve");
    group.sample_size(10);
    group.bench_function(format!("kalah-{m}-{n}-{rules}"), |b| {
        b.iter(|| {
            // A fresh solver each time: a warm table would answer at once.
            let config = SolverConfig {
                threads: 1,
                tt_mib: 64,
                ..SolverConfig::default()
            };
            let solver = Solver::new(m, rules, config).unwrap();
            assert_eq!(solver.exact(start.board(), &mut |_| {}).unwrap(), value);
        })
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    bench_solve(c, 4, 4, Rules::Standard, 2);
    bench_solve(c, 4, 4, Rules::EmptyCapture, 2);
    bench_solve(c, 5, 3, Rules::Standard, 6);
    bench_solve(c, 5, 3, Rules::EmptyCapture, 8);
}

criterion_group!(solve, benches);
criterion_main!(solve);
