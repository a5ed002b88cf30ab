//! The packed board against the golden perft counts of `data/perft/golden.perft`, which the
//! plain reference implementation produced (`scripts/golden-perft.sh`).
//!
//! The default run checks, for every entry, each depth whose shallower counts sum to at most
//! `SHALLOW_LIMIT` sowings, and the deepest one within `QUICK_LIMIT`; `cargo test -- --ignored` checks them all.

use kalah::{AnyPosition, Narrow, Position, Rules, Setup, Wide, perft, with_position};

const QUICK_LIMIT: u64 = 3_000_000;
const SHALLOW_LIMIT: u64 = 300_000;

struct Entry {
    id: String,
    rules: Rules,
    setup: Setup,
    counts: Vec<(u32, u64)>,
}

fn entries() -> Vec<Entry> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/perft/golden.perft");
    let text = std::fs::read_to_string(path).expect("data/perft/golden.perft is readable");
    let mut entries: Vec<Entry> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line.split_once(' ').expect("'key value' lines");
        match key {
            "id" => entries.push(Entry {
                id: value.to_owned(),
                rules: Rules::Standard,
                setup: "<1,0,0,0,0>".parse().unwrap(),
                counts: Vec::new(),
            }),
            "rules" => entries.last_mut().unwrap().rules = value.parse().unwrap(),
            "position" => entries.last_mut().unwrap().setup = value.parse().unwrap(),
            "perft" => {
                let (d, n) = value.split_once(' ').unwrap();
                let count = (d.parse().unwrap(), n.parse().unwrap());
                entries.last_mut().unwrap().counts.push(count);
            }
            other => panic!("unknown key {other}"),
        }
    }
    entries
}

fn check(shallow_limit: u64, limit: u64) {
    let entries = entries();
    assert!(
        entries.len() >= 40,
        "the golden file lists both rules of 20+ entries"
    );
    let mut checked = 0;
    for e in &entries {
        let pos = AnyPosition::from_setup(&e.setup, e.rules).unwrap();
        // The work of perft(d) is about the sum of the counts of the shallower depths.
        let mut cost = 0u64;
        let affordable: Vec<(u32, u64, u64)> = e
            .counts
            .iter()
            .map(|&(d, n)| {
                let c = cost;
                cost = cost.saturating_add(n);
                (d, n, c)
            })
            .filter(|&(_, _, c)| c <= limit)
            .collect();
        let deepest = affordable.last().map(|&(d, n, _)| (d, n));
        let chosen = affordable
            .iter()
            .filter(|&&(_, _, c)| c <= shallow_limit)
            .map(|&(d, n, _)| (d, n))
            .chain(deepest);
        for (depth, nodes) in chosen {
            let got = with_position!(pos, p => perft(&p, depth));
            if got != nodes {
                let split = with_position!(pos, p => kalah::divide(&p, depth));
                panic!(
                    "{} depth {depth}: expected {nodes}, got {got}; split {split:?}",
                    e.id
                );
            }
            // The wide packing must agree wherever the narrow one is used.
            if let AnyPosition::Narrow(_) = pos {
                let wide = Position::<Wide>::from_setup(&e.setup, e.rules).unwrap();
                assert_eq!(perft(&wide, depth), nodes, "{} wide depth {depth}", e.id);
            }
            checked += 1;
        }
    }
    assert!(checked > 100);
}

#[test]
fn golden_perft_quick() {
    check(SHALLOW_LIMIT, QUICK_LIMIT);
}

#[test]
#[ignore = "deep: every golden count, a few minutes"]
fn golden_perft_all() {
    check(u64::MAX, u64::MAX);
}

#[test]
fn narrow_is_chosen_up_to_255_seeds_on_8_houses() {
    let start = |m: usize, n: u64| {
        let row = vec![n; m];
        let setup = Setup {
            houses: m,
            stores: [0, 0],
            south: row.clone(),
            north: row,
            to_move: None,
        };
        AnyPosition::from_setup(&setup, Rules::Standard).unwrap()
    };
    assert!(matches!(start(8, 15), AnyPosition::Narrow(_)));
    assert!(matches!(start(8, 16), AnyPosition::Wide(_)));
    assert!(matches!(start(9, 1), AnyPosition::Wide(_)));
    assert!(
        Position::<Narrow>::from_setup(
            &"<8,0,0,16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,16>"
                .parse()
                .unwrap(),
            Rules::Standard
        )
        .is_err()
    );
}
