//! Database probes and builds. Builds the 6-house levels up to 16 (25 M entries, about a
//! second) into a temporary directory, then times a probe of a random board in memory-mapped
//! files (warm page cache), the read of a random packed entry of level 16 by hand-written
//! shift-and-mask against bitvec, the packing of a level both ways, and the build of level 14.
//! Run with `cargo bench --bench db`; `scripts/bench-db.sh` times the big builds.

use std::sync::atomic::AtomicBool;

use criterion::{Criterion, criterion_group, criterion_main};
use kalah::db::build::{SideTables, build_level};
use kalah::db::packed::{Packed, get_bitvec, pack, pack_bitvec};
use kalah::db::{Access, Layout, Tablebase, build};
use kalah::{Rng, Rules};

const TOP: u32 = 16;

fn benches(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("kalah-bench-db-{}", std::process::id()));
    let cancel = AtomicBool::new(false);
    build(&dir, 6, Rules::Standard, TOP, &cancel, &|_| {}).unwrap();
    let base = Tablebase::open(&dir, 6, Rules::Standard, Access::Map).unwrap();

    // Random boards of the top levels, drawn ahead so that only the probe is timed.
    let layout = base.layout();
    let mut rng = Rng::new(1);
    let boards: Vec<_> = (0..1 << 16)
        .map(|_| {
            let k = TOP - rng.below(4) as u32;
            layout.board(k, rng.below(layout.level_len(k))).unwrap()
        })
        .collect();
    for &board in &boards {
        base.probe(board).unwrap();
    }
    let mut group = c.benchmark_group("db");
    let mut i = 0;
    group.bench_function("probe-mapped-6-houses", |b| {
        b.iter(|| {
            i = (i + 1) % boards.len();
            base.probe(boards[i]).unwrap()
        })
    });
    let probe = base.slices().unwrap();
    group.bench_function("probe-slices-6-houses", |b| {
        b.iter(|| {
            i = (i + 1) % boards.len();
            probe.f(boards[i])
        })
    });

    // One entry of level 16 at a random index: the probe path's read, by hand and by bitvec.
    let top = base.level(TOP).unwrap().entries_unchecked().unwrap();
    let indices: Vec<u64> = (0..1 << 16).map(|_| rng.below(top.len())).collect();
    group.bench_function("read-entry-shift-mask", |b| {
        b.iter(|| {
            i = (i + 1) % indices.len();
            top.get(std::hint::black_box(indices[i]))
        })
    });
    group.bench_function("read-entry-bitvec", |b| {
        b.iter(|| {
            i = (i + 1) % indices.len();
            get_bitvec(top.bytes(), top.width(), std::hint::black_box(indices[i]))
        })
    });
    // Packing one block of 4096 entries (as the writer does, block by block).
    let block: Vec<u8> = (0..4096).map(|i| (i * 7 % 17) as u8).collect();
    let mut out = vec![0u8; 4096 * 5 / 8];
    group.bench_function("pack-block-shift-mask", |b| {
        b.iter(|| pack(std::hint::black_box(&block), 5, &mut out))
    });
    group.bench_function("pack-block-bitvec", |b| {
        b.iter(|| pack_bitvec(std::hint::black_box(&block), 5, &mut out))
    });

    // One level built in memory from the mapped ones below it (one thread).
    let layout = Layout::new(6, 14).unwrap();
    let sides = SideTables::new(&layout);
    let lower: Vec<Packed<'_>> = (0..14)
        .map(|k| base.level(k).unwrap().entries_unchecked().unwrap())
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    group.sample_size(10);
    group.bench_function("build-level-14-6-houses-1-thread", |b| {
        b.iter(|| {
            pool.install(|| {
                build_level(
                    &layout,
                    &sides,
                    Rules::Standard,
                    &lower,
                    14,
                    &cancel,
                    &|_| {},
                )
            })
            .unwrap()
        })
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(db, benches);
criterion_main!(db);
