//! Fuzzing of what campaigns leave on disk: ledger lines (facts), checks lines and the headers
//! of table files. Any line (any header) gives a fact (a check, a header) or an error, never a
//! panic; whatever is read is within the bounds its readers rely on (counts, seconds, levels);
//! and what the library works out from any set of facts and checks read (a campaign's status,
//! its certificate, the books' bounds) ends without a panic or an overflow.
//!
//! The inputs are the corpus of `tests/corpus/` (real lines and headers) mutated field by field
//! with hostile values (huge, negative, fractional, of the wrong type), cut short or with a
//! byte changed, and arbitrary text. `cargo test --test fuzz_ledgers` runs a short search;
//! `scripts/fuzz-ledgers.sh SECONDS` runs the same properties for that long
//! (`the_ledger_parsers_fuzzed_for_a_while`, ignored by `cargo test`).

mod cli_common;

use std::path::Path;
use std::time::{Duration, Instant};

use kalah::prove::certificate::{Certificate, Check, Checks};
use kalah::prove::fact::{Fact, MAX_CPU_S, MAX_NODES};
use kalah::prove::ledger::{Ledger, Origin};
use kalah::search::table_file::{HEADER_LEN, parse_header};
use kalah::{Narrow, Position, Setup, Wide};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};

/// The corpus file `name` of `tests/corpus/`, without its comment lines.
fn corpus(name: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// Values no field should take: past every bound, of the wrong sign or type.
fn hostile_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(u64::MAX)),
        Just(json!(i64::MIN)),
        Just(json!(1u64 << 53)),
        Just(json!((1u64 << 53) + 1)),
        Just(json!(u32::MAX)),
        Just(json!(-1)),
        Just(json!(0)),
        Just(json!(1e20)),
        Just(json!(-1e20)),
        Just(json!(1e308)),
        Just(json!(MAX_CPU_S)),
        Just(json!(0.5)),
        Just(json!(null)),
        Just(json!(true)),
        Just(json!("")),
        Just(json!("x".repeat(300))),
        Just(json!([1, 2])),
        Just(json!({"top": u64::MAX, "rules": "standard"})),
        Just(json!({"top": 4294967295u64})),
        Just(json!({"top": 64, "rules": "awari"})),
        Just(json!("<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>")),
        Just(json!("<4,0,0,0,0,0,0,0,0,0,0>")),
        any::<i64>().prop_map(|v| json!(v)),
        any::<u64>().prop_map(|v| json!(v)),
        any::<f64>()
            .prop_filter("JSON numbers", |v| v.is_finite())
            .prop_map(|v| json!(v)),
        "[ -~]{0,20}".prop_map(|s| json!(s)),
    ]
}

/// The keys a mutation may set: every field of a fact or a check, and a few more.
const KEYS: &[&str] = &[
    "fact",
    "check",
    "houses",
    "rules",
    "position",
    "lower",
    "upper",
    "nodes",
    "cpu_s",
    "levels",
    "kalah",
    "root",
    "budget",
    "over_budget",
    "within",
    "continues",
    "threads",
    "digest",
    "by",
    "holds",
    "why",
    "fact_at",
    "mac",
];

/// How a corpus line is changed.
#[derive(Clone, Debug)]
enum Mutation {
    /// Fields set to hostile values (or removed, for `None`).
    Fields(Vec<(usize, Option<Value>)>),
    /// The text cut at a fraction of its length.
    Cut(f64),
    /// One byte (at a fraction of the length) replaced.
    Byte(f64, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        6 => prop::collection::vec((0..KEYS.len(), prop::option::weighted(0.9, hostile_value())), 1..4)
            .prop_map(Mutation::Fields),
        1 => (0.0f64..1.0).prop_map(Mutation::Cut),
        1 => (0.0f64..1.0, any::<u8>()).prop_map(|(at, b)| Mutation::Byte(at, b)),
    ]
}

/// `line` changed by `m`.
fn mutate(line: &str, m: &Mutation) -> String {
    match m {
        Mutation::Fields(fields) => {
            let mut v: Value = serde_json::from_str(line).expect("corpus lines are JSON");
            for (k, value) in fields {
                let map = v.as_object_mut().expect("an object");
                match value {
                    Some(value) => {
                        map.insert(KEYS[*k].to_owned(), value.clone());
                    }
                    None => {
                        map.remove(KEYS[*k]);
                    }
                }
            }
            v.to_string()
        }
        Mutation::Cut(at) => {
            let mut cut = (line.len() as f64 * at) as usize;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line[..cut].to_owned()
        }
        Mutation::Byte(at, b) => {
            let mut bytes = line.as_bytes().to_vec();
            let i = ((bytes.len() as f64 * at) as usize).min(bytes.len() - 1);
            bytes[i] = *b;
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }
}

/// Lines to read: corpus lines of `lines` mutated, or arbitrary text.
fn lines_from(lines: Vec<String>) -> impl Strategy<Value = String> {
    let n = lines.len();
    prop_oneof![
        8 => (0..n, mutation()).prop_map(move |(i, m)| mutate(&lines[i], &m)),
        1 => any::<String>(),
    ]
}

/// A fact read from `line`, in both lanes, is one its readers can use: every number bounded,
/// its text read back as itself.
fn fact_property(line: &str) -> Result<(), TestCaseError> {
    let narrow = Fact::<Narrow>::from_line(line);
    let wide = Fact::<Wide>::from_line(line);
    if let Ok(f) = &wide {
        prop_assert!(f.nodes <= MAX_NODES && f.budget.is_none_or(|b| b <= MAX_NODES));
        prop_assert!(f.cpu_s.is_finite() && (0.0..=MAX_CPU_S).contains(&f.cpu_s));
        prop_assert!(f.top.is_none_or(|t| t <= kalah::db::MAX_LEVEL));
        prop_assert!(f.lower <= f.upper);
        let _ = (f.f_bounds(), f.is_informative());
        // Written out, it reads back as what it writes (its seconds rounded to the ms once).
        let again = Fact::<Wide>::from_line(&f.to_line());
        prop_assert!(again.is_ok(), "{line} reads back as {again:?}");
        prop_assert_eq!(again.unwrap().to_line(), f.to_line());
    }
    if let Ok(f) = &narrow {
        prop_assert!(wide.is_ok(), "narrow but not wide: {line}");
        prop_assert_eq!(f.to_line(), wide.as_ref().unwrap().to_line());
    }
    if let Err(e) = &wide {
        prop_assert!(!e.0.contains('\n'), "{e}");
    }
    Ok(())
}

/// A check read from `line` is one its readers can use.
fn check_property(line: &str) -> Result<(), TestCaseError> {
    if let Ok(c) = Check::from_line(line) {
        prop_assert!((1..=MAX_NODES).contains(&c.nodes), "{line}");
        prop_assert!(c.cpu_s.is_finite() && (0.0..=MAX_CPU_S).contains(&c.cpu_s));
        prop_assert!(c.top.is_none_or(|t| t <= kalah::db::MAX_LEVEL));
        prop_assert!(c.lower <= c.upper);
        let again = Check::from_line(&c.to_line());
        prop_assert!(again.is_ok(), "{line}: {again:?}");
    }
    Ok(())
}

/// The root of the corpus's campaign: Kalah(7,3), standard rules.
fn root() -> Position<Narrow> {
    let setup: Setup = "<7,0,0,3,3,3,3,3,3,3,3,3,3,3,3,3,3>".parse().unwrap();
    Position::from_setup(&setup, kalah::Rules::Standard).unwrap()
}

/// Whatever facts and checks are read (those of `facts` and `checks` that parse, and that do
/// not contradict each other), the campaign's status and certificate are worked out, or
/// refused, without a panic.
fn ledger_property(facts: &[String], checks: &[String]) -> Result<(), TestCaseError> {
    let mut ledger = Ledger::<Narrow>::new();
    for (i, line) in facts.iter().enumerate() {
        if let Ok(fact) = Fact::<Narrow>::from_line(line) {
            let at = Origin {
                file: "fuzz.jsonl".into(),
                line: i + 1,
            };
            let _ = ledger.add(fact, at);
        }
    }
    let mut read = Checks::new();
    for line in checks {
        if let Ok(c) = Check::from_line(line) {
            read.add(c);
        }
    }
    let root = root();
    if let Ok(status) = kalah::prove::Status::of(root, &ledger, None) {
        let _ = (status.nodes, status.cpu_s, status.best_moves());
    }
    if let Ok(cert) = Certificate::of(root, &ledger, &read) {
        let _ = (cert.wrong(), cert.to_check(&ledger, None));
    }
    let _ = read.cost_ratio(&ledger);
    for (fact, _) in ledger.facts() {
        let _ = read.verdict(fact);
    }
    Ok(())
}

/// Table file headers: the corpus's (hex and the file's length), mutated.
fn header_property(h: &[u8; HEADER_LEN], len: u64) -> Result<(), TestCaseError> {
    if let Ok(header) = parse_header(h, len) {
        prop_assert!((1..=12).contains(&header.houses));
        prop_assert!(header.buckets > 0 && header.buckets < 1 << 40);
        let _ = header.mib();
    }
    Ok(())
}

fn headers() -> Vec<([u8; HEADER_LEN], u64)> {
    corpus("table-headers.txt")
        .iter()
        .map(|l| {
            let (hex, len) = l.split_once(' ').expect("hex and length");
            let bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            (bytes.try_into().expect("64 bytes"), len.parse().unwrap())
        })
        .collect()
}

fn any_header() -> impl Strategy<Value = ([u8; HEADER_LEN], u64)> {
    let seeds = headers();
    let n = seeds.len();
    (
        0..n,
        prop::collection::vec((0..HEADER_LEN, any::<u8>()), 0..4),
        prop_oneof![Just(None), any::<u64>().prop_map(Some)],
    )
        .prop_map(move |(i, flips, len)| {
            let (mut h, real) = seeds[i];
            for (at, b) in flips {
                h[at] = b;
            }
            (h, len.unwrap_or(real))
        })
}

/// Runs every property on `cases` inputs each (a runner of its own for each: a runner counts
/// the cases it ran over all its runs).
fn run_all(cases: u32) {
    let runner = || {
        TestRunner::new(Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        })
    };
    let facts = corpus("facts.jsonl");
    let checks = corpus("checks.jsonl");
    runner()
        .run(&lines_from(facts.clone()), |l| fact_property(&l))
        .unwrap();
    runner()
        .run(&lines_from(checks.clone()), |l| check_property(&l))
        .unwrap();
    runner()
        .run(
            &(
                prop::collection::vec(lines_from(facts), 0..30),
                prop::collection::vec(lines_from(checks), 0..10),
            ),
            |(f, c)| ledger_property(&f, &c),
        )
        .unwrap();
    runner()
        .run(&any_header(), |(h, len)| header_property(&h, len))
        .unwrap();
}

#[test]
fn the_corpus_reads_as_it_is() {
    for line in corpus("facts.jsonl") {
        Fact::<Wide>::from_line(&line).unwrap_or_else(|e| panic!("{line}: {e}"));
    }
    for line in corpus("checks.jsonl") {
        Check::from_line(&line).unwrap_or_else(|e| panic!("{line}: {e}"));
    }
    for (h, len) in headers() {
        parse_header(&h, len).unwrap();
    }
}

#[test]
fn no_ledger_line_check_line_or_table_header_panics_a_reader() {
    run_all(200);
}

/// The same properties for `KALAH_FUZZ_SECONDS` seconds (60 if unset): run by
/// `scripts/fuzz-ledgers.sh`.
#[test]
#[ignore]
fn the_ledger_parsers_fuzzed_for_a_while() {
    let seconds: u64 = std::env::var("KALAH_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let end = Instant::now() + Duration::from_secs(seconds);
    let mut rounds = 0u64;
    while Instant::now() < end {
        run_all(1000);
        rounds += 1;
    }
    eprintln!("{rounds} rounds of 1000 cases a property in {seconds} s");
}

/// The numbers of a ledger at their bounds, summed over thousands of facts, and one past them:
/// `prove --status` reports the first (its sums saturate) and refuses the second, naming the
/// line, never a panic.
#[test]
fn a_status_of_facts_at_every_bound_is_printed_and_past_them_refused() {
    let dir = cli_common::fresh_dir("fuzz-bounds");
    let lines = corpus("facts.jsonl");
    let mut at_bounds = String::new();
    for line in lines.iter().take(22) {
        let mut v: Value = serde_json::from_str(line).unwrap();
        v["nodes"] = json!(MAX_NODES);
        v["cpu_s"] = json!(MAX_CPU_S);
        v["budget"] = json!(MAX_NODES);
        // The same fact a thousand times: its sums pass what a u64 holds.
        for _ in 0..200 {
            at_bounds.push_str(&format!("{v}\n"));
        }
    }
    let ledger = dir.join("bounds.jsonl");
    std::fs::write(&ledger, &at_bounds).unwrap();
    for json in [false, true] {
        let mut args = vec!["prove", "--status", ledger.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let out = cli_common::kalah(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
    }
    for (field, value) in [
        ("cpu_s", json!(1e20)),
        ("nodes", json!(u64::MAX)),
        ("budget", json!((1u64 << 53) + 1)),
        ("levels", json!({"top": 4294967295u64, "rules": "standard"})),
    ] {
        let mut v: Value = serde_json::from_str(&lines[0]).unwrap();
        v[field] = value;
        std::fs::write(&ledger, format!("{}\n{v}\n", lines[1])).unwrap();
        let out = cli_common::kalah(&["prove", "--status", ledger.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{field}: {err}");
        assert!(err.contains("bounds.jsonl:2"), "{field}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{field}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
