//! Sowing and perft speed, one thread. Every benchmark asserts its answer, so a fast wrong
//! implementation cannot pass. Run with `cargo bench`; throughput is reported in elements/s,
//! where an element is one sowing (`sow/*`) or one perft node (`perft/*`).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kalah::{Board, Lanes, Narrow, Position, Rng, Rules, Variant, Wide, perft};

/// Boards met in random games of Kalah(m, n), with their legal houses, for the sowing bench.
fn sample_boards<L: Lanes>(m: usize, n: u64, count: usize) -> Vec<(Board<L>, usize)> {
    let mut rng = Rng::new(42);
    let variant = Variant::new(m, n, Rules::Standard).unwrap();
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let mut pos = Position::<L>::start(variant).unwrap();
        while !pos.is_finished() && out.len() < count {
            let moves = pos.legal_moves();
            let mv = moves[rng.below(moves.len() as u64) as usize];
            out.push((pos.board(), mv.index()));
            pos = pos.play_unchecked(mv).0;
        }
    }
    out
}

fn bench_sow<L: Lanes>(c: &mut Criterion, m: usize, n: u64) {
    let boards = sample_boards::<L>(m, n, 100_000);
    // A cheap checksum of the results (so that it costs little beside the sowing), computed
    // once outside the timing and asserted: the houses at both ends of the board and the gain.
    let sow_all = |boards: &[(Board<L>, usize)]| {
        boards.iter().fold(0u64, |acc, &(b, h)| {
            let (next, s) = b.sow(h, Rules::Standard);
            let m = next.houses_per_side();
            let sample = next.mover_house(0) + 3 * next.opponent_house(m - 1) + 7 * s.mover_gain;
            acc.wrapping_mul(31)
                .wrapping_add(u64::from(sample) + u64::from(s.extra_turn))
        })
    };
    let expected = sow_all(&boards);
    let mut group = c.benchmark_group("sow");
    group.throughput(Throughput::Elements(boards.len() as u64));
    group.bench_function(format!("kalah-{m}-{n}-{}", L::NAME), |b| {
        b.iter(|| assert_eq!(sow_all(black_box(&boards)), expected))
    });
    group.finish();
}

fn bench_perft<L: Lanes>(c: &mut Criterion, m: usize, n: u64, depth: u32, nodes: u64) {
    let start = Position::<L>::start(Variant::new(m, n, Rules::Standard).unwrap()).unwrap();
    let mut group = c.benchmark_group("perft");
    group.throughput(Throughput::Elements(nodes));
    group.sample_size(10);
    group.bench_function(format!("kalah-{m}-{n}-d{depth}-{}", L::NAME), |b| {
        b.iter(|| assert_eq!(perft(black_box(&start), depth), nodes))
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    bench_sow::<Narrow>(c, 6, 4);
    bench_sow::<Wide>(c, 6, 4);
    bench_sow::<Wide>(c, 12, 12);
    // Counts from data/perft/golden.perft (reference implementation).
    bench_perft::<Narrow>(c, 6, 4, 9, 2_763_490);
    bench_perft::<Wide>(c, 12, 12, 6, 2_508_180);
}

criterion_group!(sowing, benches);
criterion_main!(sowing);
