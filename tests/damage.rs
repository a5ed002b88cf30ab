//! A database answers right or not at all: single-byte changes anywhere in the level files
//! (header, entries, padding, block table), truncations, gaps and wrong files give the right
//! answer or an error naming the file, never another value and never a panic, on every probing
//! path (the database's own analysis, the search probing it, verification); and the build
//! lock, format 1 files and their upgrade.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

mod cli_common;
use cli_common::{fresh_dir, kalah};

use kalah::db::verify::Coverage;
use kalah::db::{Access, DbError, Tablebase, build, level_file_name, verify};
use kalah::{Analysis, AnyPosition, Rng, Rules, Setup, Side, Solver, SolverConfig, with_position};

const HOUSES: usize = 4;
const TOP: u32 = 12;
const RULES: Rules = Rules::Standard;

fn build_db(dir: &Path, top: u32) {
    let cancel = AtomicBool::new(false);
    rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap()
        .install(|| build(dir, HOUSES, RULES, top, &cancel, &|_| {}))
        .unwrap();
}

/// Random positions with `lo..=hi` seeds on the board, South or North to move.
fn positions(rng: &mut Rng, count: usize, lo: u64, hi: u64) -> Vec<AnyPosition> {
    let mut found = Vec::new();
    while found.len() < count {
        let seeds = lo + rng.below(hi - lo + 1);
        let mut houses = [0u64; 2 * HOUSES];
        for _ in 0..seeds {
            houses[rng.below(2 * HOUSES as u64) as usize] += 1;
        }
        let setup = Setup {
            houses: HOUSES,
            stores: [rng.below(5), rng.below(5)],
            south: houses[..HOUSES].to_vec(),
            north: houses[HOUSES..].to_vec(),
            to_move: Some(if rng.below(2) == 0 {
                Side::South
            } else {
                Side::North
            }),
        };
        if let Ok(pos) = AnyPosition::from_setup(&setup, RULES) {
            if with_position!(&pos, p => p.to_move().is_some()) {
                found.push(pos);
            }
        }
    }
    found
}

fn solver(db: Arc<Tablebase>) -> Result<Solver, kalah::SolveError> {
    let config = SolverConfig {
        threads: 1,
        tt_mib: 1,
        ..SolverConfig::default()
    };
    Solver::new(HOUSES, RULES, config)?.with_tablebase(db)
}

/// What one probing path says of one position: an analysis, or an error's message.
type Answer = Result<Analysis, String>;

/// Every position analysed from the database alone, then a few searched with it.
fn answers(dir: &Path, in_db: &[AnyPosition], above: &[AnyPosition]) -> Vec<Answer> {
    let base = match Tablebase::open(dir, HOUSES, RULES, Access::Map) {
        Ok(base) => Arc::new(base),
        Err(e) => return vec![Err(e.to_string()); in_db.len() + above.len()],
    };
    let mut out: Vec<Answer> = in_db
        .iter()
        .map(|pos| {
            with_position!(pos, p => base.analyze(p))
                .map(|a| a.expect("in the database"))
                .map_err(|e| e.to_string())
        })
        .collect();
    let searcher = solver(base);
    for pos in above {
        out.push(match &searcher {
            Ok(s) => with_position!(pos, p => s.analyze(p, false, &mut |_| {}))
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        });
    }
    out
}

/// Asserts that `got` is `good` or an error naming a level file of `dir`, on one line.
fn right_or_named(got: &[Answer], good: &[Answer], what: &str) -> usize {
    let mut errors = 0;
    for (i, (got, good)) in got.iter().zip(good).enumerate() {
        match got {
            Ok(a) => assert_eq!(Ok(a), good.as_ref(), "{what}: answer {i} changed"),
            Err(e) => {
                errors += 1;
                assert!(e.contains("kalah-4-standard-0"), "{what}: {e}");
                assert_eq!(e.lines().count(), 1, "{what}: {e}");
            }
        }
    }
    errors
}

fn file(dir: &Path, level: u32) -> PathBuf {
    dir.join(level_file_name(HOUSES, RULES, level))
}

#[test]
fn a_flipped_byte_anywhere_gives_the_right_answer_or_a_named_error() {
    let dir = fresh_dir("damage-flips");
    build_db(&dir, TOP);
    let mut rng = Rng::new(14);
    let in_db = positions(&mut rng, 24, 6, u64::from(TOP));
    let above = positions(&mut rng, 2, 14, 15);
    let good = answers(&dir, &in_db, &above);
    assert!(good.iter().all(Result::is_ok));

    let mut flips = 0;
    let mut caught = 0;
    for level in 2..=TOP {
        let path = file(&dir, level);
        let intact = std::fs::read(&path).unwrap();
        let len = intact.len();
        // Every byte of the header, every byte of the block table and its padding, and a
        // spread of the entries (more of them in the small levels).
        let header = kalah::db::format::Header::from_bytes(&intact).unwrap();
        let table_from = 64 + header.payload_len() as usize;
        let step = (len / 60).max(1);
        let spots: Vec<usize> = (0..64)
            .chain((64..table_from).step_by(step))
            .chain(table_from..len)
            .collect();
        for at in spots {
            let mut bytes = intact.clone();
            bytes[at] ^= 1 << rng.below(8);
            std::fs::write(&path, &bytes).unwrap();
            let got = answers(&dir, &in_db, &above);
            caught += right_or_named(&got, &good, &format!("level {level} byte {at}"));
            flips += 1;
        }
        std::fs::write(&path, &intact).unwrap();
    }
    assert!(flips > 500, "{flips} flips");
    // Most flips hit something a probe reads: the checks must have fired.
    assert!(caught > 0, "{caught} errors in {flips} flips");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn verification_finds_every_flipped_entry_byte_of_a_level() {
    let dir = fresh_dir("damage-verify");
    build_db(&dir, 9);
    let path = file(&dir, 9);
    let intact = std::fs::read(&path).unwrap();
    let cancel = AtomicBool::new(false);
    let header = kalah::db::format::Header::from_bytes(&intact).unwrap();
    let payload = header.payload_len() as usize;
    for at in (64..64 + payload).step_by(37) {
        let mut bytes = intact.clone();
        bytes[at] ^= 0x20;
        std::fs::write(&path, &bytes).unwrap();
        let base = Tablebase::open(&dir, HOUSES, RULES, Access::Map).unwrap();
        let report = verify(&base, Coverage::Sample(10), &cancel, &|_| {}).unwrap();
        let bad = &report.levels[9];
        assert_eq!(
            bad.damaged_blocks,
            vec![((at - 64) as u64 / header.block_bytes())],
            "byte {at}"
        );
        let e = bad.defect.as_ref().unwrap().to_string();
        assert!(
            e.contains("kalah-4-standard-009.kdb: damaged: level 9"),
            "{e}"
        );
        assert!(report.levels[..9].iter().all(|l| l.defect.is_none()));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn truncated_or_wrong_files_are_named_errors() {
    let dir = fresh_dir("damage-truncate");
    build_db(&dir, TOP);
    let mut rng = Rng::new(3);
    let in_db = positions(&mut rng, 12, 8, u64::from(TOP));
    let above = positions(&mut rng, 1, 14, 14);
    let good = answers(&dir, &in_db, &above);
    let path = file(&dir, 11);
    let intact = std::fs::read(&path).unwrap();
    for keep in [
        0,
        1,
        10,
        63,
        64,
        65,
        1000,
        intact.len() - 8,
        intact.len() - 1,
    ] {
        std::fs::write(&path, &intact[..keep]).unwrap();
        let got = answers(&dir, &in_db, &above);
        assert!(right_or_named(&got, &good, &format!("cut at {keep}")) > 0);
    }
    // One byte too many, and another level's file under this name.
    let mut longer = intact.clone();
    longer.push(0);
    std::fs::write(&path, &longer).unwrap();
    assert!(right_or_named(&answers(&dir, &in_db, &above), &good, "longer") > 0);
    std::fs::copy(file(&dir, 10), &path).unwrap();
    assert!(right_or_named(&answers(&dir, &in_db, &above), &good, "level 10") > 0);
    // A FIFO or a directory in a level's place: refused at once, never waited on.
    std::fs::remove_file(&path).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&path).status();
    assert!(made.unwrap().success());
    let got = answers(&dir, &in_db, &above);
    assert!(right_or_named(&got, &good, "FIFO") > 0);
    assert!(got.iter().flatten().count() < got.len());
    let e = got.iter().find_map(|a| a.as_ref().err()).unwrap();
    assert!(e.contains("a FIFO, not a regular file"), "{e}");
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    assert!(right_or_named(&answers(&dir, &in_db, &above), &good, "directory") > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_middle_level_is_an_error_naming_it_unless_a_lower_top_is_asked_for() {
    let dir = fresh_dir("damage-gap");
    build_db(&dir, TOP);
    std::fs::remove_file(file(&dir, 7)).unwrap();
    let err = Tablebase::open(&dir, HOUSES, RULES, Access::Map)
        .err()
        .unwrap();
    assert!(
        matches!(err, DbError::MissingLevel { level: 7, .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("kalah-4-standard-007.kdb"),
        "{err}"
    );
    let prefix = Tablebase::open_up_to(&dir, HOUSES, RULES, Access::Map, Some(6)).unwrap();
    assert_eq!(prefix.max_level(), 6);
    assert!(Tablebase::open_up_to(&dir, HOUSES, RULES, Access::Map, Some(9)).is_err());

    let d = dir.to_str().unwrap();
    let position = "<4,0,0,1,1,1,1,1,1,1,0>";
    for args in [
        vec!["query", position, "--db", d],
        vec!["db", "verify", "--dir", d],
        vec!["db", "info", "--dir", d],
        vec!["solve", "-m", "4", "-n", "1", "--db", d],
    ] {
        let out = kalah(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("level 7 is missing"), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    // The levels below the gap, on purpose.
    let out = kalah(&["query", position, "--db", d, "--max-level", "6", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = kalah(&["db", "verify", "--dir", d, "--max-level", "6"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_flip_that_once_gave_a_wrong_value_is_an_error() {
    // The byte that made `query` print +4 for a -2 position in format 1: entry 9406 of level 10.
    let dir = fresh_dir("damage-query");
    let d = dir.to_str().unwrap();
    let out = kalah(&["db", "build", "-m", "4", "--max-seeds", "12", "--dir", d]);
    assert!(out.status.success());
    let position = "<4,2,1,0,10,0,0,0,1,0,0>";
    let before = kalah(&["query", position, "--db", d, "--json"]);
    assert!(before.status.success());
    let value: serde_json::Value = serde_json::from_slice(&before.stdout).unwrap();
    assert_eq!(value["value"], -2);
    let path = file(&dir, 10);
    let mut bytes = std::fs::read(&path).unwrap();
    // Entry 9406 at 4 bits an entry: the low half of byte 4703 of the entries.
    bytes[64 + 4703] = bytes[64 + 4703] & 0xF0 | 4;
    std::fs::write(&path, &bytes).unwrap();
    let out = kalah(&["query", position, "--db", d]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(out.stdout.is_empty());
    let block = 9406 >> kalah::db::format::BLOCK_SHIFT;
    assert!(
        err.contains(&format!(
            "kalah-4-standard-010.kdb: damaged: level 10, block {block}"
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_second_build_in_a_directory_is_refused_while_the_first_runs() {
    let dir = fresh_dir("damage-lock");
    let held = kalah::db::lock::lock(&dir).unwrap();
    let d = dir.to_str().unwrap();
    let out = kalah(&["db", "build", "-m", "2", "--max-seeds", "4", "--dir", d]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("is being built by process {}", std::process::id())),
        "{err}"
    );
    assert!(!file(&dir, 0).exists());
    // Readers are not held up.
    drop(held);
    build_db(&dir, 6);
    let held = kalah::db::lock::lock(&dir).unwrap();
    let out = kalah(&["query", "<4,0,0,1,1,0,0,1,1,0,0>", "--db", d]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(held);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn format_1_files_are_refused_until_upgraded_to_the_same_entries() {
    use kalah::db::upgrade::{HeaderV1, checksum_v1};
    let fresh = fresh_dir("damage-v2");
    build_db(&fresh, 8);
    let old = fresh_dir("damage-v1");
    // The same levels in format 1: header, entries, nothing after.
    for level in 0..=8 {
        let bytes = std::fs::read(file(&fresh, level)).unwrap();
        let n = kalah::db::level_len(HOUSES, level) as usize;
        let entries = &unpacked(&bytes);
        let header = HeaderV1 {
            houses: HOUSES as u8,
            rules: RULES,
            level,
            entries: n as u64,
            checksum: checksum_v1(entries),
        };
        let mut v1 = header.to_bytes().to_vec();
        v1.extend_from_slice(entries);
        std::fs::write(file(&old, level), v1).unwrap();
    }
    let d = old.to_str().unwrap();
    let out = kalah(&["query", "<4,0,0,1,1,0,0,1,1,0,0>", "--db", d]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("kalah db upgrade"), "{err}");

    // A format 1 header with a level no database has, or another file's level, or a current
    // file cut short: each refused by name, no panic, nothing written, nothing left behind.
    let hostile = fresh_dir("damage-v1-hostile");
    let cases: [(u32, &str); 3] = [
        (1000, "level 1000"),
        (u32::MAX, "level 4294967295"),
        (7, "level 7"),
    ];
    for (level, said) in cases {
        let bytes = std::fs::read(file(&old, 8)).unwrap();
        let mut header = HeaderV1::from_bytes(&bytes).unwrap();
        header.level = level;
        let mut v1 = header.to_bytes().to_vec();
        v1.extend_from_slice(&bytes[v1.len()..]);
        std::fs::write(file(&hostile, 8), &v1).unwrap();
        let out = kalah(&["db", "upgrade", "--dir", hostile.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{level}: {err}");
        assert!(
            err.contains(said) && err.contains("name says"),
            "{level}: {err}"
        );
        assert_eq!(std::fs::read(file(&hostile, 8)).unwrap(), v1, "left alone");
        let names: Vec<_> = std::fs::read_dir(&hostile)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| !n.starts_with('.'))
            .collect();
        assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
    }
    let current = std::fs::read(file(&fresh, 8)).unwrap();
    std::fs::write(file(&hostile, 8), &current[..current.len() - 5]).unwrap();
    let out = kalah(&["db", "upgrade", "--dir", hostile.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a cut file is not \"already current\""
    );
    let _ = std::fs::remove_dir_all(&hostile);

    // A damaged format 1 file is not upgraded; the others are.
    upgrades_to_the_fresh_build(&old, &fresh, 8);
}

/// `db upgrade` of `old` (levels 0..=top of an older form) leaves a damaged top level alone
/// and fails; once it is repaired, every level upgrades to the very bytes of `fresh` (a build
/// of this version). Both directories are removed.
fn upgrades_to_the_fresh_build(old: &Path, fresh: &Path, top: u32) {
    let d = old.to_str().unwrap();
    let damaged = file(old, top);
    let mut bytes = std::fs::read(&damaged).unwrap();
    bytes[100] ^= 1;
    std::fs::write(&damaged, &bytes).unwrap();
    let out = kalah(&["db", "upgrade", "--dir", d]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read(&damaged).unwrap(), bytes, "left alone");
    bytes[100] ^= 1;
    std::fs::write(&damaged, &bytes).unwrap();
    let out = kalah(&["db", "upgrade", "--dir", d]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for level in 0..=top {
        assert_eq!(
            std::fs::read(file(old, level)).unwrap(),
            std::fs::read(file(fresh, level)).unwrap(),
            "level {level}"
        );
    }
    let _ = std::fs::remove_dir_all(old);
    let _ = std::fs::remove_dir_all(fresh);
}

/// The entries of a level file, one a byte.
fn unpacked(file: &[u8]) -> Vec<u8> {
    let header = kalah::db::format::Header::from_bytes(file).unwrap();
    let packed = kalah::db::packed::Packed::new(&file[64..], header.width.into(), header.entries);
    let packed = packed.unwrap();
    (0..header.entries).map(|i| packed.get(i)).collect()
}

/// `file` as the first builds of format 2 wrote it: one byte an entry, a checksum a block.
fn byte_wide(file: &[u8]) -> Vec<u8> {
    use kalah::db::format::{Header, sealed};
    let mut header = Header::from_bytes(file).unwrap();
    header.width = 8;
    sealed(header, &unpacked(file))
}

#[test]
fn byte_wide_files_are_refused_until_upgraded_to_the_same_bytes() {
    let fresh = fresh_dir("damage-packed");
    build_db(&fresh, 9);
    let old = fresh_dir("damage-byte-wide");
    for level in 0..=9 {
        let bytes = byte_wide(&std::fs::read(file(&fresh, level)).unwrap());
        std::fs::write(file(&old, level), bytes).unwrap();
    }
    let d = old.to_str().unwrap();
    // Every reader says what the file is and how to convert it; none answers from it.
    for args in [
        &["query", "<4,0,0,1,1,0,0,1,1,0,0>", "--db", d][..],
        &["db", "verify", "--dir", d],
        &["db", "info", "--dir", d],
        &["db", "build", "-m", "4", "--max-seeds", "10", "--dir", d],
    ] {
        let out = kalah(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{args:?}: {err}");
        let said = String::from_utf8_lossy(&out.stdout) + err.clone();
        assert!(said.contains("one byte an entry"), "{args:?}: {said}");
        assert!(said.contains("kalah db upgrade"), "{args:?}: {said}");
    }
    // A damaged byte-wide file is left alone; after the repair, every file upgrades to the
    // very bytes of a fresh build.
    upgrades_to_the_fresh_build(&old, &fresh, 9);
}

#[cfg(target_os = "linux")]
#[test]
fn a_level_cut_short_under_a_running_reader_is_a_named_error_not_a_bus_error() {
    use std::io::{BufRead, BufReader, Write};
    let dir = fresh_dir("damage-sigbus");
    build_db(&dir, 10);
    let mut child = cli_common::command()
        .args(["query", "-", "--json", "--db", dir.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A position of level 10, answered from the map.
    let position = "<4,0,0,2,2,1,1,1,1,1,1>";
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{position}").unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("\"source\":\"database\""), "{first}");
    // Level 10 cut short in place, under the live map: the next read of it faults, and reads
    // zeros; the answer is refused.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(file(&dir, 10))
        .unwrap();
    f.set_len(100).unwrap();
    writeln!(stdin, "{position}").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "ended by a signal? {err}");
    assert!(
        !stdout.contains("\"value\""),
        "an answer after the cut: {stdout}"
    );
    assert!(
        stdout.contains("kalah-4-standard-010.kdb: level 10 was written while in use"),
        "{stdout} {err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Level 10 of `dir` overwritten in place (same inode, as `cp` or a flipped byte does) by
/// `bytes`.
fn overwrite_in_place(dir: &Path, level: u32, bytes: &[u8]) {
    use std::io::{Seek, Write};
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(file(dir, level))
        .unwrap();
    f.rewind().unwrap();
    f.write_all(bytes).unwrap();
    f.set_len(bytes.len() as u64).unwrap();
}

#[test]
fn a_level_written_in_place_under_a_reader_is_refused_never_read() {
    let dir = fresh_dir("damage-in-place");
    let other = fresh_dir("damage-in-place-ec");
    build_db(&dir, TOP);
    let cancel = AtomicBool::new(false);
    build(&other, HOUSES, Rules::EmptyCapture, TOP, &cancel, &|_| {}).unwrap();
    let mut rng = Rng::new(29);
    let at_10 = positions(&mut rng, 200, 10, 10);
    let below = positions(&mut rng, 50, 2, 8);
    let above = positions(&mut rng, 3, 14, 16);
    let db = Arc::new(Tablebase::open(&dir, HOUSES, RULES, Access::Map).unwrap());
    let searcher = solver(db.clone()).unwrap();
    let read = |pos: &AnyPosition| with_position!(pos, p => db.analyze(p)).map(Option::unwrap);
    let searched =
        |pos: &AnyPosition| with_position!(pos, p => searcher.analyze(p, false, &mut |_| {}));
    let good: Vec<_> = at_10.iter().map(|p| read(p).unwrap()).collect();
    let good_below: Vec<_> = below.iter().map(|p| read(p).unwrap()).collect();
    for pos in &above {
        searched(pos).unwrap();
    }
    // Another rule set's level 10 copied over this one's, in place: valid checksums of other
    // values (the attack that once gave 359 wrong answers with status 200 in `serve`).
    let theirs =
        std::fs::read(other.join(level_file_name(HOUSES, Rules::EmptyCapture, 10))).unwrap();
    overwrite_in_place(&dir, 10, &theirs);
    for (pos, good) in at_10.iter().zip(&good) {
        match read(pos) {
            Ok(a) => panic!(
                "{pos:?}: an answer from the changed level ({} where it was {})",
                a.value, good.value
            ),
            Err(e) => {
                let e = e.to_string();
                assert!(
                    e.contains("kalah-4-standard-010.kdb: level 10 was written while in use"),
                    "{e}"
                );
            }
        }
    }
    // Levels below it were not touched: still answered, and right.
    for (pos, good) in below.iter().zip(&good_below) {
        assert_eq!(&read(pos).unwrap(), good);
    }
    // A search through it is refused too.
    for pos in &above {
        let e = searched(pos).unwrap_err().to_string();
        assert!(e.contains("level 10 was written while in use"), "{e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&other);
}

/// Level `level` of `dir` replaced (by a rename, as a copy from elsewhere would) by a valid
/// level of other values: its first entry byte changed, its block checksum, block table
/// checksum and header made anew. Every check of the file alone passes.
fn forge_level(dir: &Path, level: u32) {
    use kalah::db::format::{HEADER_LEN, Header, block_checksum, table_checksum};
    let path = file(dir, level);
    let mut bytes = std::fs::read(&path).unwrap();
    let mut header = Header::from_bytes(&bytes[..HEADER_LEN]).unwrap();
    bytes[HEADER_LEN] = if bytes[HEADER_LEN] == 0 { 0x11 } else { 0 };
    let range = header.block_bytes_range(0);
    let block = &bytes[HEADER_LEN + range.start as usize..HEADER_LEN + range.end as usize];
    let sum = block_checksum(block, header.block_seed(0));
    let at = header.checksum_offset(0) as usize;
    bytes[at..at + 8].copy_from_slice(&sum.to_le_bytes());
    let table = header.table_offset() as usize;
    header.table_checksum = table_checksum(&bytes[table..]);
    bytes[..HEADER_LEN].copy_from_slice(&header.to_bytes());
    let tmp = path.with_extension("forged");
    std::fs::write(&tmp, &bytes).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
}

#[test]
fn a_level_under_levels_built_from_another_is_refused_naming_both_then_rebuilt() {
    let dir = fresh_dir("damage-lineage");
    build_db(&dir, 10);
    let head = |k: u32| {
        let mut f = std::fs::File::open(file(&dir, k)).unwrap();
        kalah::db::format::Header::read(&mut f).unwrap()
    };
    assert_eq!(head(0).lineage, None, "level 0 is built from nothing");
    for k in 1..=10 {
        assert_eq!(
            head(k).lineage,
            Some(kalah::db::format::lineage_after(&head(k - 1))),
            "level {k}"
        );
    }
    let mut rng = Rng::new(291);
    let at_10 = positions(&mut rng, 20, 10, 10);
    let below = positions(&mut rng, 20, 2, 8);
    let good = answers(&dir, &below, &[]);
    forge_level(&dir, 9);
    // Level 10 was built on the old level 9: every answer that reads it is refused, naming
    // both files; the levels below 9 still answer, and right.
    for answer in answers(&dir, &at_10, &[]) {
        let e = answer.expect_err("a value from a level built on other levels");
        assert!(
            e.contains("kalah-4-standard-010.kdb: level 10 was built from other levels"),
            "{e}"
        );
        assert!(e.contains("kalah-4-standard-009.kdb"), "{e}");
    }
    assert_eq!(answers(&dir, &below, &[]), good);
    // The next build keeps level 9 (its own checks pass) and builds level 10 again on it.
    let cancel = AtomicBool::new(false);
    let report = build(&dir, HOUSES, RULES, 10, &cancel, &|_| {}).unwrap();
    assert!(report.levels[9].kept);
    assert!(!report.levels[10].kept, "level 10 built again");
    assert!(answers(&dir, &at_10, &[]).iter().all(Result::is_ok));
    // A damaged level rebuilt from the same levels is the same bytes: the levels above stay.
    std::fs::remove_file(file(&dir, 8)).unwrap();
    let report = build(&dir, HOUSES, RULES, 10, &cancel, &|_| {}).unwrap();
    assert!(!report.levels[8].kept && report.levels[9].kept && report.levels[10].kept);
    let _ = std::fs::remove_dir_all(&dir);
}
