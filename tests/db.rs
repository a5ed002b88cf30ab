//! The endgame databases: every entry of small levels against the naive solver, both rules;
//! 1-thread vs 2-thread builds byte for byte; map == plain read == memory probes; damaged,
//! truncated and wrong files refused with the right error; a stopped build resumes to the same
//! bytes; verification catches a flipped byte.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

mod common;
mod temp_dir;
use common::naive_value;
use temp_dir::TempDir;

use kalah::db::build::{BuildReport, SideTables, build_level};
use kalah::db::packed::{Packed, SLACK, pack, packed_len, width};
use kalah::db::verify::Coverage;
use kalah::db::{Access, DbError, Layout, Tablebase, build, decode, level_file_name, verify};
use kalah::reference::RefPosition;
use kalah::{Rules, Setup, Side};

const RULES: [Rules; 2] = [Rules::Standard, Rules::EmptyCapture];

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

fn build_dir(dir: &Path, m: usize, rules: Rules, top: u32, threads: usize) -> BuildReport {
    let cancel = AtomicBool::new(false);
    pool(threads)
        .install(|| build(dir, m, rules, top, &cancel, &|_| {}))
        .unwrap()
}

/// Levels `0..=top` built in memory, one byte an entry.
fn build_memory(m: usize, rules: Rules, top: u32) -> (Layout, Vec<Vec<u8>>) {
    let layout = Layout::new(m, top).unwrap();
    let sides = SideTables::new(&layout);
    let cancel = AtomicBool::new(false);
    let mut levels: Vec<Vec<u8>> = Vec::new();
    // The same levels packed, as the builder reads the levels below.
    let mut packed: Vec<Vec<u8>> = Vec::new();
    for k in 0..=top {
        let lower: Vec<Packed<'_>> = packed
            .iter()
            .zip(&levels)
            .enumerate()
            .map(|(i, (p, l))| Packed::new(p, width(i as u32), l.len() as u64).unwrap())
            .collect();
        let level = build_level(&layout, &sides, rules, &lower, k, &cancel, &|_| {}).unwrap();
        let n = packed_len(level.len() as u64, width(k)) as usize;
        let mut bytes = vec![0u8; n + SLACK];
        pack(&level, width(k), &mut bytes[..n]);
        packed.push(bytes);
        levels.push(level.to_vec());
    }
    (layout, levels)
}

/// f of `board` by the naive solver: the board as South's position with empty stores.
fn naive_f(board: kalah::Board, rules: Rules, memo: &mut common::Memo) -> i32 {
    let m = board.houses_per_side();
    let setup = Setup {
        houses: m,
        stores: [0, 0],
        south: (0..m).map(|i| u64::from(board.mover_house(i))).collect(),
        north: (0..m).map(|i| u64::from(board.opponent_house(i))).collect(),
        to_move: Some(Side::South),
    };
    naive_value(&RefPosition::from_setup(&setup, rules), memo)
}

#[test]
fn every_entry_of_small_levels_matches_the_naive_solver() {
    for (m, top) in [(1, 12), (2, 10), (3, 9), (4, 7), (6, 5)] {
        for rules in RULES {
            let (layout, levels) = build_memory(m, rules, top);
            let mut memo = HashMap::new();
            for k in 0..=top {
                for (entry, &byte) in levels[k as usize].iter().enumerate() {
                    let board = layout.board(k, entry as u64).unwrap();
                    let naive = naive_f(board, rules, &mut memo);
                    assert_eq!(
                        decode(byte, k),
                        naive,
                        "m={m} {rules} level {k} entry {entry}"
                    );
                }
            }
        }
    }
}

#[test]
fn one_and_two_threads_build_the_same_bytes() {
    for rules in RULES {
        let one = TempDir::new("db", &format!("one-{rules}"));
        let two = TempDir::new("db", &format!("two-{rules}"));
        build_dir(&one.0, 5, rules, 12, 1);
        let report = build_dir(&two.0, 5, rules, 12, 2);
        assert_eq!(report.levels.len(), 13);
        for k in 0..=12 {
            let name = level_file_name(5, rules, k);
            let a = std::fs::read(one.0.join(&name)).unwrap();
            let b = std::fs::read(two.0.join(&name)).unwrap();
            assert!(a == b, "{name} differs");
        }
    }
}

#[test]
fn map_read_and_memory_probes_agree_with_the_build() {
    let dir = TempDir::new("db", "access");
    let rules = Rules::EmptyCapture;
    build_dir(&dir.0, 4, rules, 9, 2);
    let (layout, levels) = build_memory(4, rules, 9);
    let bases = [Access::Map, Access::Read, Access::Memory]
        .map(|access| Tablebase::open(&dir.0, 4, rules, access).unwrap());
    assert_eq!(bases[0].max_level(), 9);
    let probe = bases[0].slices().unwrap();
    for k in 0..=9 {
        for (entry, &byte) in levels[k as usize].iter().enumerate() {
            let board = layout.board(k, entry as u64).unwrap();
            let expected = Some(decode(byte, k));
            for base in &bases {
                assert_eq!(base.probe(board).unwrap(), expected);
            }
            assert_eq!(probe.f(board), Ok(expected));
        }
    }
    assert!(bases[1].slices().is_err(), "plain reads give no slices");
}

#[test]
fn levels_built_in_memory_are_the_levels_of_the_files() {
    for rules in RULES {
        let (_, levels) = build_memory(5, rules, 11);
        let cancel = AtomicBool::new(false);
        let base = pool(2)
            .install(|| kalah::db::build_in_memory(5, rules, 11, &cancel, &|_| {}))
            .unwrap();
        assert_eq!(
            (base.houses(), base.rules(), base.max_level()),
            (5, rules, 11)
        );
        for (k, level) in levels.iter().enumerate() {
            let built = base.level(k as u32).unwrap().entries_unchecked().unwrap();
            assert_eq!(built.len(), level.len() as u64);
            let same = level
                .iter()
                .enumerate()
                .all(|(i, &e)| built.get(i as u64) == e);
            assert!(same, "{rules} level {k}");
        }
    }
    let cancel = AtomicBool::new(true);
    assert!(matches!(
        kalah::db::build_in_memory(4, Rules::Standard, 6, &cancel, &|_| {}),
        Err(DbError::Cancelled)
    ));
}

/// Copies the files of `from` into a new directory.
fn copy_dir(from: &Path, name: &str) -> TempDir {
    let to = TempDir::new("db", name);
    for file in std::fs::read_dir(from).unwrap() {
        let file = file.unwrap();
        std::fs::copy(file.path(), to.0.join(file.file_name())).unwrap();
    }
    to
}

fn innermost(e: &DbError) -> &DbError {
    match e {
        DbError::InFile { error, .. } => innermost(error),
        other => other,
    }
}

#[test]
fn damaged_files_are_refused_with_the_right_error() {
    let rules = Rules::Standard;
    let good = TempDir::new("db", "damage-good");
    build_dir(&good.0, 3, rules, 8, 2);
    let name = level_file_name(3, rules, 8);
    let cancel = AtomicBool::new(false);
    // The first defect verification finds.
    let check = |dir: &Path| -> Result<(), DbError> {
        let base = Tablebase::open(dir, 3, rules, Access::Map)?;
        let report = verify(&base, Coverage::All, &cancel, &|_| {})?;
        match report.levels.into_iter().find_map(|l| l.defect) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    };
    check(&good.0).unwrap();

    // A flipped byte in the entries: its block's checksum.
    let dir = copy_dir(&good.0, "damage-flip");
    let path = dir.0.join(&name);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[64 + 100] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let err = check(&dir.0).unwrap_err();
    assert!(
        matches!(
            innermost(&err),
            DbError::Damaged {
                level: 8,
                block: 0,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains(&name), "{err}");
    // A flipped byte in the block table: that block, or the table's own checksum.
    let mut bytes = std::fs::read(good.0.join(&name)).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x80;
    std::fs::write(&path, &bytes).unwrap();
    let err = check(&dir.0).unwrap_err();
    assert!(matches!(innermost(&err), DbError::Damaged { .. }), "{err}");

    // Truncated.
    std::fs::write(&path, &bytes[..bytes.len() - 10]).unwrap();
    let err = check(&dir.0).unwrap_err();
    assert!(
        matches!(innermost(&err), DbError::Truncated { .. }),
        "{err}"
    );

    // Not a database at all.
    std::fs::write(&path, b"hello").unwrap();
    let err = check(&dir.0).unwrap_err();
    assert!(
        matches!(
            innermost(&err),
            DbError::Truncated { .. } | DbError::BadMagic
        ),
        "{err}"
    );
    std::fs::write(&path, [0u8; 100]).unwrap();
    let err = check(&dir.0).unwrap_err();
    assert!(matches!(innermost(&err), DbError::BadMagic), "{err}");

    // A damaged header.
    let mut header = std::fs::read(good.0.join(&name)).unwrap();
    header[20] ^= 4;
    std::fs::write(&path, &header).unwrap();
    let err = check(&dir.0).unwrap_err();
    assert!(matches!(innermost(&err), DbError::HeaderChecksum), "{err}");

    // The other rules' file under this rules' name; another level's file under this name.
    let other = TempDir::new("db", "damage-other");
    build_dir(&other.0, 3, Rules::EmptyCapture, 8, 2);
    std::fs::copy(
        other.0.join(level_file_name(3, Rules::EmptyCapture, 8)),
        &path,
    )
    .unwrap();
    let err = check(&dir.0).unwrap_err();
    assert!(
        matches!(innermost(&err), DbError::Mismatch { field: "rules", .. }),
        "{err}"
    );
    std::fs::copy(good.0.join(level_file_name(3, rules, 7)), &path).unwrap();
    let err = check(&dir.0).unwrap_err();
    assert!(
        matches!(innermost(&err), DbError::Mismatch { field: "level", .. }),
        "{err}"
    );

    // Consistent checksums over a wrong entry: the one-ply check.
    let mut bytes = std::fs::read(good.0.join(&name)).unwrap();
    let payload = kalah::db::format::Header::from_bytes(&bytes)
        .unwrap()
        .payload_len() as usize;
    // Bit 4 of a byte of 4-bit entries: the low bit of an entry, f changed by 2.
    bytes[64 + payload / 2] ^= 0x10;
    std::fs::write(&path, reseal(&bytes)).unwrap();
    let err = check(&dir.0).unwrap_err();
    assert!(
        matches!(innermost(&err), DbError::Inconsistent { .. }),
        "{err}"
    );
    // ... and an entry above its level, checksums again consistent: never read as a value.
    let mut bytes = std::fs::read(good.0.join(&name)).unwrap();
    bytes[64 + 3] = 0xFF;
    std::fs::write(&path, reseal(&bytes)).unwrap();
    let err = check(&dir.0).unwrap_err();
    assert!(
        matches!(innermost(&err), DbError::OutOfRange { stored: 15, .. }),
        "{err}"
    );
}

/// A level file whose entries were changed, with its block table and header made to match
/// them again (as a file written by something other than a build could be).
fn reseal(file: &[u8]) -> Vec<u8> {
    use kalah::db::format::{Header, sealed};
    let header = Header::from_bytes(file).unwrap();
    sealed(header, &file[64..64 + header.payload_len() as usize])
}

#[test]
fn a_stopped_build_resumes_to_the_same_bytes() {
    let rules = Rules::EmptyCapture;
    let whole = TempDir::new("db", "resume-whole");
    build_dir(&whole.0, 4, rules, 11, 2);

    let dir = TempDir::new("db", "resume");
    // Stop while building level 9.
    let cancel = AtomicBool::new(false);
    let result = pool(2).install(|| {
        build(&dir.0, 4, rules, 11, &cancel, &|p| {
            if p.level == 9 && !p.finished {
                cancel.store(true, Ordering::Relaxed);
            }
        })
    });
    assert!(matches!(result, Err(DbError::Cancelled)), "{result:?}");
    assert!(dir.0.join(level_file_name(4, rules, 8)).exists());
    assert!(!dir.0.join(level_file_name(4, rules, 9)).exists());
    // A leftover temporary file from a killed build is simply replaced.
    let tmp = dir
        .0
        .join(level_file_name(4, rules, 9))
        .with_extension("kdb.tmp");
    std::fs::write(&tmp, b"half a level").unwrap();

    let report = build_dir(&dir.0, 4, rules, 11, 2);
    let kept: Vec<bool> = report.levels.iter().map(|l| l.kept).collect();
    assert_eq!(kept, [vec![true; 9], vec![false; 3]].concat());
    for k in 0..=11 {
        let name = level_file_name(4, rules, k);
        assert!(
            std::fs::read(dir.0.join(&name)).unwrap()
                == std::fs::read(whole.0.join(&name)).unwrap()
        );
    }
    assert!(!tmp.exists());
}

#[test]
fn opening_a_missing_database_says_what_is_missing() {
    let dir = TempDir::new("db", "missing");
    let err = Tablebase::open(&dir.0, 6, Rules::Standard, Access::Map)
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("kalah-6-standard-000.kdb"),
        "{err}"
    );
}

/// A solver with `threads` threads and a small table, probing `db` if given.
fn solver(m: usize, rules: Rules, db: Option<std::sync::Arc<Tablebase>>) -> kalah::Solver {
    let config = kalah::SolverConfig {
        threads: 2,
        tt_mib: 16,
        ..kalah::SolverConfig::default()
    };
    let solver = kalah::Solver::new(m, rules, config).unwrap();
    match db {
        Some(db) => solver.with_tablebase(db).unwrap(),
        None => solver,
    }
}

#[test]
fn search_with_the_database_agrees_with_search_without_it() {
    use kalah::{AnyPosition, Position, Variant, with_position};
    for rules in RULES {
        let dir = TempDir::new("db", &format!("search-{rules}"));
        build_dir(&dir.0, 4, rules, 10, 2);
        let base = std::sync::Arc::new(Tablebase::open(&dir.0, 4, rules, Access::Map).unwrap());
        let with = solver(4, rules, Some(base.clone()));
        let without = solver(4, rules, None);
        for n in 1..=4 {
            let start =
                Position::<kalah::Narrow>::start(Variant::new(4, n, rules).unwrap()).unwrap();
            let a = with.analyze(&start, true, &mut |_| {}).unwrap();
            let b = without.analyze(&start, true, &mut |_| {}).unwrap();
            assert_eq!(a, b, "Kalah(4,{n}) {rules}");
        }
        // Random positions, in and above the database: search == search + database, and the
        // database's own analysis (value, every move, perfect line) == the search's.
        let mut rng = kalah::Rng::new(7);
        for _ in 0..300 {
            let south: Vec<u64> = (0..4).map(|_| rng.below(5)).collect();
            let north: Vec<u64> = (0..4).map(|_| rng.below(5)).collect();
            let setup = Setup {
                houses: 4,
                stores: [rng.below(9), rng.below(9)],
                south,
                north,
                to_move: Some(if rng.below(2) == 0 {
                    Side::South
                } else {
                    Side::North
                }),
            };
            let Ok(pos) = AnyPosition::from_setup(&setup, rules) else {
                continue;
            };
            with_position!(pos, p => {
                let a = with.analyze(&p, true, &mut |_| {}).unwrap();
                let b = without.analyze(&p, true, &mut |_| {}).unwrap();
                assert_eq!(a, b, "{p}");
                match base.analyze(&p).unwrap() {
                    Some(c) => {
                        assert!(p.seeds_on_board() <= 10);
                        assert_eq!(c, b, "{p}");
                    }
                    None => assert!(p.seeds_on_board() > 10),
                }
            });
        }
    }
}

#[test]
fn a_database_up_to_2mn_seeds_solves_the_variant_strongly() {
    use kalah::{Position, Variant};
    for rules in RULES {
        let dir = TempDir::new("db", &format!("strong-{rules}"));
        // Kalah(3,2) and Kalah(2,3) have 12 seeds: every reachable position is in the database.
        build_dir(&dir.0, 3, rules, 12, 2);
        build_dir(&dir.0, 2, rules, 12, 2);
        for (m, n) in [(3, 2), (2, 3)] {
            let base = Tablebase::open(&dir.0, m, rules, Access::Map).unwrap();
            assert_eq!(base.max_level(), 12);
            let start =
                Position::<kalah::Narrow>::start(Variant::new(m, n, rules).unwrap()).unwrap();
            let from_db = base
                .analyze(&start)
                .unwrap()
                .expect("the start is in the database");
            let searched = solver(m, rules, None)
                .analyze(&start, true, &mut |_| {})
                .unwrap();
            assert_eq!(from_db, searched, "Kalah({m},{n}) {rules}");
        }
    }
}

#[test]
fn random_entries_of_larger_levels_match_the_naive_solver() {
    // Random boards of the top levels, where the whole-level check above would be too slow.
    for (m, top, samples) in [(6, 12, 60), (5, 14, 60), (8, 8, 60)] {
        for rules in RULES {
            let (layout, levels) = build_memory(m, rules, top);
            let mut rng = kalah::Rng::new(top.into());
            let mut memo = HashMap::new();
            for _ in 0..samples {
                let k = top - rng.below(2) as u32;
                let entry = rng.below(layout.level_len(k));
                let board = layout.board(k, entry).unwrap();
                let naive = naive_f(board, rules, &mut memo);
                let stored = decode(levels[k as usize][entry as usize], k);
                assert_eq!(stored, naive, "m={m} {rules} level {k} entry {entry}");
            }
        }
    }
}

#[test]
fn a_build_too_big_for_the_machine_is_refused_before_it_starts() {
    let dir = TempDir::new("db", "too-big");
    let cancel = AtomicBool::new(false);
    let err = build(&dir.0, 8, Rules::Standard, 40, &cancel, &|_| {}).unwrap_err();
    assert!(matches!(err, DbError::Unsupported(_)), "{err}");
    assert!(err.to_string().contains("GiB"), "{err}");
    assert!(
        std::fs::read_dir(&dir.0).unwrap().next().is_none(),
        "nothing written"
    );
}
