//! Opening books (`kalah prove --book`, read by `query`, `analyze` and `serve`): an answer from
//! a book equals the search's, a book that lies or is damaged is an error and never a value,
//! and bounds that a ledger proves are shown as bounds.

mod cli_common;

use std::path::{Path, PathBuf};
use std::process::Output;

use cli_common::{DB_HOME_VAR, command, fresh_dir};
use serde_json::Value;

/// Runs `kalah` with `args` and `home` as its database home.
fn kalah_in(home: &Path, args: &[&str]) -> Output {
    command()
        .env(DB_HOME_VAR, home)
        .args(args)
        .output()
        .expect("the kalah binary runs")
}

/// Runs `kalah` with `args` and `home` as its database home, expects it to fail with exit
/// code 1 and nothing on stdout, its error saying `says`; returns the error.
fn fails_saying(home: &Path, args: &[&str], says: &str) -> String {
    let out = kalah_in(home, args);
    let err = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{args:?}: {}{err}",
        stdout(&out)
    );
    assert!(err.contains(says), "{args:?}: {err}");
    err
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A database home with the 4-house levels 0..6 of `rules` and the book of Kalah(4,3) to
/// depth 3 (`book.jsonl`), both made by `kalah`, the book's facts checked by the lower levels
/// (`book.checks.jsonl`): only checked facts answer.
fn home_with_book(name: &str, rules: &str) -> PathBuf {
    let home = fresh_dir(name);
    let dir = home.to_str().unwrap();
    let built = kalah_in(
        &home,
        &[
            "db",
            "build",
            "--houses",
            "4",
            "--max-seeds",
            "6",
            "--rules",
            rules,
            "--dir",
            dir,
        ],
    );
    assert!(built.status.success(), "{}", stderr(&built));
    let book = home.join("book.jsonl");
    let made = kalah_in(
        &home,
        &[
            "prove",
            "-m",
            "4",
            "-n",
            "3",
            "--rules",
            rules,
            "--book",
            "3",
            "--ledger",
            book.to_str().unwrap(),
        ],
    );
    assert!(made.status.success(), "{}", stderr(&made));
    let checked = kalah_in(
        &home,
        &["prove", "--check", book.to_str().unwrap(), "--all"],
    );
    assert!(checked.status.success(), "{}", stderr(&checked));
    assert!(home.join("book.checks.jsonl").exists());
    home
}

/// The positions of the book of Kalah(4,3) to `depth` (`prove --book --list`), with their
/// depths.
fn listed(home: &Path, rules: &str, depth: u32) -> Vec<(String, u32)> {
    let scratch = home.join("unused.txt");
    let out = kalah_in(
        home,
        &[
            "prove",
            "-m",
            "4",
            "-n",
            "3",
            "--rules",
            rules,
            "--book",
            &depth.to_string(),
            "--list",
            "--ledger",
            scratch.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!scratch.exists(), "--list writes no ledger");
    stdout(&out)
        .lines()
        .map(|line| {
            let (literal, depth) = line.rsplit_once(' ').unwrap();
            (literal.to_owned(), depth.parse().unwrap())
        })
        .collect()
}

/// `kalah query -` of `positions` under `rules` with `extra` arguments: one JSON answer a line.
fn batch(home: &Path, rules: &str, positions: &[String], extra: &[&str]) -> Vec<Value> {
    use std::io::Write;
    let mut child = command()
        .env(DB_HOME_VAR, home)
        .args(["query", "-", "--json", "--rules", rules, "--threads", "2"])
        .args(extra)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = positions.join("\n") + "\n";
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn book_answers_equal_the_search_s() {
    for rules in ["standard", "empty-capture"] {
        let home = home_with_book(&format!("book-equal-{rules}"), rules);
        let boards = listed(&home, rules, 3);
        assert!(boards.len() > 50, "{} boards", boards.len());
        let positions: Vec<String> = boards.iter().map(|(p, _)| p.clone()).collect();
        let booked = batch(&home, rules, &positions, &[]);
        let searched = batch(&home, rules, &positions, &["--no-book"]);
        assert_eq!(booked.len(), positions.len());
        let mut from_book = 0;
        for (((p, depth), b), s) in boards.iter().zip(&booked).zip(&searched) {
            assert_ne!(s["source"], "ledger", "{p}: --no-book reads no book");
            for field in ["value", "best", "to_move"] {
                assert_eq!(b[field], s[field], "{rules} {p}: {field}");
            }
            // The same moves and values (whether each is certified is the book's to say: a
            // search's never is).
            let values = |v: &Value| -> Vec<(Value, Value)> {
                v["moves"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| (m["house"].clone(), m["value"].clone()))
                    .collect()
            };
            assert_eq!(values(b), values(s), "{rules} {p}: moves");
            assert!(
                s["moves"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|m| m["certified"] == false),
                "{rules} {p}: a search's values are not certified"
            );
            if b["source"] == "ledger" {
                from_book += 1;
                assert_eq!(b["nodes"], 0);
                // The perfect line from the book starts as the search's does.
                let pv = b["pv"].as_array().unwrap();
                assert!(!pv.is_empty(), "{p}: a perfect line");
                if b["pv_complete"] == true {
                    assert_eq!(
                        b["pv"], s["pv"],
                        "{rules} {p}: a whole line is the search's"
                    );
                }
            }
            // Above the book's last depth, every move leads into the book or the levels.
            if *depth < 3 {
                assert_eq!(b["source"], "ledger", "{rules} {p} at depth {depth}");
            }
        }
        assert!(from_book > 10, "{from_book} answers from the book");
        // The start, for people, says where its answer came from.
        let out = kalah_in(
            &home,
            &["analyze", "<4,0,0,3,3,3,3,3,3,3,3>", "--rules", rules],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stdout(&out).contains("read from the opening books ("),
            "{}",
            stdout(&out)
        );
        let _ = std::fs::remove_dir_all(&home);
    }
}

#[test]
fn a_book_that_lies_is_an_error_never_a_value() {
    let home = home_with_book("book-lies", "standard");
    let book = home.join("book.jsonl");
    let text = std::fs::read_to_string(&book).unwrap();
    let start = "<4,0,0,3,3,3,3,3,3,3,3>";
    let line = text
        .lines()
        .find(|l| l.contains(&format!("\"position\":\"{start}\"")))
        .expect("the start is in the book")
        .to_owned();
    let fact: Value = serde_json::from_str(&line).unwrap();
    let value = fact["lower"].as_i64().unwrap();
    let shifted = |by: i64| {
        let mut f = fact.clone();
        f["lower"] = (value + by).into();
        f["upper"] = (value + by).into();
        serde_json::to_string(&f).unwrap()
    };

    // Another ledger that contradicts the book, never checked: a claim, never the value.
    let other = home.join("other.jsonl");
    std::fs::write(&other, shifted(2) + "\n").unwrap();
    let out = kalah_in(&home, &["query", start, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["value"].as_i64(), Some(value), "{answer}");
    assert_eq!(answer["source"], "ledger", "the checked book answers");
    assert!(
        !answer["books"].to_string().contains("other.jsonl"),
        "{answer}"
    );
    // Checked, it is found wrong and named; db verify then names it too; the value stands.
    let out = kalah_in(
        &home,
        &["prove", "--check", other.to_str().unwrap(), "--all"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("other.jsonl:1"), "{}", stderr(&out));
    let out = kalah_in(&home, &["db", "verify", "--sample", "0"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stderr(&out).contains("other.jsonl"), "{}", stderr(&out));
    let answer: Value =
        serde_json::from_slice(&kalah_in(&home, &["query", start, "--json"]).stdout).unwrap();
    assert_eq!(answer["value"].as_i64(), Some(value), "{answer}");
    std::fs::remove_file(&other).unwrap();
    std::fs::remove_file(home.join("other.checks.jsonl")).unwrap();

    // The book's own value of the start changed: its digest no longer matches its check, so
    // it is an unchecked claim, shown as one, never the value: the book's checked facts of
    // the moves below the start answer instead (their best is the value).
    let lie = shifted(-2);
    std::fs::write(&book, text.replace(&line, &lie)).unwrap();
    let out = kalah_in(&home, &["query", start, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["source"], "ledger", "{answer}");
    assert_eq!(answer["value"].as_i64(), Some(value));
    let searched: Value =
        serde_json::from_slice(&kalah_in(&home, &["query", start, "--json", "--no-book"]).stdout)
            .unwrap();
    assert_eq!(searched["value"].as_i64(), Some(value), "{searched}");
    assert_eq!(answer["claims"][0]["checked"], false, "{answer}");
    assert_eq!(answer["claims"][0]["holds"], false, "{answer}");
    let out = kalah_in(&home, &["query", start]);
    assert!(
        stdout(&out).contains("(unchecked)") && stdout(&out).contains("WRONG"),
        "{}",
        stdout(&out)
    );
    // A check forged to match (another check's line with the lie's digest): it carries no
    // mark of this installation that verifies, so the lie stays a claim, and the book's
    // checked facts of the moves below the start answer, as above.
    let forged: Value = serde_json::from_str(
        std::fs::read_to_string(home.join("book.checks.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let mut forged = forged;
    let fact = kalah::prove::fact::Fact::<kalah::Narrow>::from_line(&lie).unwrap();
    forged["digest"] = kalah::prove::certificate::digest(&fact).into();
    let mut checks = std::fs::read_to_string(home.join("book.checks.jsonl")).unwrap();
    checks.push_str(&format!("{forged}\n"));
    std::fs::write(home.join("book.checks.jsonl"), checks).unwrap();
    let out = kalah_in(&home, &["query", start, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["source"], "ledger", "{answer}");
    assert_eq!(answer["value"].as_i64(), Some(value));
    assert_eq!(answer["claims"][0]["checked"], false, "{answer}");

    // A garbled line: an error naming the file and the line.
    std::fs::write(&book, text.replace(&line, "{\"fact\": 1, \"position\": ")).unwrap();
    let out = kalah_in(&home, &["analyze", start]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert!(err.contains("book.jsonl"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn bounds_a_ledger_proves_are_shown_as_bounds() {
    let home = fresh_dir("book-bounds");
    let start = "<4,0,0,3,3,3,3,3,3,3,3>";
    // No fact of its variant: nothing is said to be proven (what its first sowings alone
    // bound is no fact).
    let out = kalah_in(&home, &["query", "<4,5,2,0,1,4,2,3,0,2,1>", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("ledgers prove"), "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(answer["ledger_bounds"].is_null(), "{answer}");
    let searched: Value =
        serde_json::from_slice(&kalah_in(&home, &["query", start, "--json"]).stdout).unwrap();
    let value = searched["value"].as_i64().unwrap();
    let fact = serde_json::json!({
        "fact": 1, "houses": 4, "rules": "standard", "position": start,
        "lower": value - 2, "upper": 24, "nodes": 10, "cpu_s": 0.1,
        "levels": {"rules": "standard", "top": null}, "kalah": "0.1.0",
        "budget": 10, "over_budget": false, "root": start,
    });
    std::fs::write(home.join("campaign.jsonl"), format!("{fact}\n")).unwrap();
    // Unchecked, its bound is a claim: shown as one, never as proven.
    let out = kalah_in(&home, &["query", start, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(answer["ledger_bounds"].is_null(), "{answer}");
    assert_eq!(answer["claims"][0]["lower"].as_i64(), Some(value - 2));
    assert_eq!(answer["claims"][0]["checked"], false);
    assert_eq!(answer["claims"][0]["holds"], true);
    let out = kalah_in(&home, &["query", start]);
    assert!(
        stderr(&out).contains(&format!(
            "claimed by {}:1 (unchecked): >= +{}",
            home.join("campaign.jsonl").display(),
            value - 2
        )),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("ledgers prove"), "{}", stderr(&out));
    // Checked by the levels 0..4 (another path than none), it is proven.
    let built = kalah_in(&home, &["db", "build", "--houses", "4", "--max-seeds", "4"]);
    assert!(built.status.success(), "{}", stderr(&built));
    let campaign = home.join("campaign.jsonl");
    let out = kalah_in(
        &home,
        &["prove", "--check", campaign.to_str().unwrap(), "--all"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = kalah_in(&home, &["query", start]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("the ledgers prove its value >= +{}", value - 2)),
        "{}",
        stderr(&out)
    );
    let answer: Value =
        serde_json::from_slice(&kalah_in(&home, &["query", start, "--json"]).stdout).unwrap();
    assert_eq!(answer["source"], "search");
    assert_eq!(answer["value"].as_i64(), Some(value));
    assert_eq!(answer["ledger_bounds"]["lower"].as_i64(), Some(value - 2));
    assert!(answer["claims"].is_null(), "{answer}");
    // A checked fact of the exact value, and none of the moves': what is searched is the
    // moves' values, and the line says so.
    let mut exact = fact.clone();
    exact["lower"] = serde_json::json!(value);
    exact["upper"] = serde_json::json!(value);
    std::fs::write(&campaign, format!("{exact}\n")).unwrap();
    let checked = kalah_in(
        &home,
        &["prove", "--check", campaign.to_str().unwrap(), "--all"],
    );
    assert!(checked.status.success(), "{}", stderr(&checked));
    let out = kalah_in(&home, &["query", start]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "the ledgers prove its value +{value} (wins by {value}); searching for each move's exact value"
        )),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn the_shipped_books_are_read_by_an_installed_binary() {
    // No home, no flag: the books built into kalah answer the classic start at once.
    let home = fresh_dir("book-shipped");
    let out = kalah_in(
        &home,
        &["query", "<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>", "--json"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["source"], "ledger", "{answer}");
    assert_eq!(answer["value"], 8, "Kalah(6,4) standard is +8");
    assert_eq!(answer["best"], serde_json::json!([3]));
    // Empty-capture Kalah(6,4) is +10 (Irving, Donkers and Uiterwijk, 2000).
    let out = kalah_in(
        &home,
        &[
            "query",
            "<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>",
            "--json",
            "--rules",
            "empty-capture",
        ],
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["source"], "ledger", "{answer}");
    assert_eq!(answer["value"], 10);
    // Every shipped book answers its start with no levels at all, checked against its moves.
    // Kalah(6,5): +10 standard, +12 empty-capture (the values of data/values/starts.jsonl).
    let shipped = [
        (6, 4, "standard", 8),
        (6, 4, "empty-capture", 10),
        (6, 5, "standard", 10),
        (6, 5, "empty-capture", 12),
    ];
    for (m, n, rules, value) in shipped {
        let start = format!("<{m},0,0,{}>", vec![n.to_string(); 2 * m].join(","));
        let out = kalah_in(
            &home,
            &["query", &start, "--json", "--rules", rules, "--no-db"],
        );
        assert!(out.status.success(), "{start} {rules}: {}", stderr(&out));
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(answer["source"], "ledger", "{start} {rules}: {answer}");
        assert_eq!(answer["value"], value, "{start} {rules}");
    }
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn serve_answers_from_the_book_and_says_so() {
    use std::io::{BufRead, BufReader, Read, Write};
    let home = home_with_book("book-serve", "standard");
    let mut child = command()
        .env(DB_HOME_VAR, &home)
        .args(["serve", "--bind", "127.0.0.1:0", "--threads", "2"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("opening books: "), "{first}");
    let addr = first
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap()
        .to_owned();
    let get = |target: &str| -> Value {
        let mut stream = std::net::TcpStream::connect(&addr).unwrap();
        write!(
            stream,
            "GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let (_, body) = answer.split_once("\r\n\r\n").unwrap();
        serde_json::from_str(body).unwrap()
    };
    let start = get("/api/v1/start?houses=4&seeds=3");
    let searched: Value = serde_json::from_slice(
        &kalah_in(
            &home,
            &["query", "<4,0,0,3,3,3,3,3,3,3,3>", "--json", "--no-book"],
        )
        .stdout,
    )
    .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(start["source"], "ledger", "{start}");
    assert_eq!(start["nodes"], 0);
    assert_eq!(start["value"], searched["value"]);
    let mut moves: Vec<(i64, i64)> = start["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["house"].as_i64().unwrap(), m["value"].as_i64().unwrap()))
        .collect();
    moves.sort();
    let expected: Vec<(i64, i64)> = searched["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["house"].as_i64().unwrap(), m["value"].as_i64().unwrap()))
        .collect();
    assert_eq!(moves, expected);
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn replay_values_the_first_sowings_of_kalah_6_4_from_the_book() {
    let home = fresh_dir("book-replay");
    let d = home.to_str().unwrap();
    let played = kalah_in(
        &home,
        &[
            "match",
            "greedy",
            "greedy",
            "--games",
            "1",
            "-m",
            "6",
            "-n",
            "4",
            "--opening-plies",
            "0",
            "--record",
            d,
            "--no-db",
        ],
    );
    assert!(played.status.success(), "{}", stderr(&played));
    let file = home.join("game-0001.txt");
    let replayed = |extra: &[&str]| -> Value {
        let mut args = vec![
            "replay",
            file.to_str().unwrap(),
            "--json",
            "--solve-seeds",
            "0",
        ];
        args.extend_from_slice(extra);
        let out = kalah_in(&home, &args);
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let v = replayed(&[]);
    let first = &v["moves"][0];
    assert_eq!(first["source"], "ledger", "{first}");
    assert_eq!(first["best"], 8, "the start of Kalah(6,4) is +8");
    // --no-book: nothing to value it exactly with (no levels, no search): an estimate, marked.
    let v = replayed(&["--no-book"]);
    assert_eq!(v["moves"][0]["source"], "estimate", "{}", v["moves"][0]);
    assert_eq!(v["moves"][0]["exact"], false, "{}", v["moves"][0]);
    let v = replayed(&["--no-book", "--no-estimates"]);
    assert!(v["moves"][0]["value"].is_null(), "{}", v["moves"][0]);
    let _ = std::fs::remove_dir_all(&home);
}

/// Every bound of the shipped books and finished ledgers (the root's and each first move's)
/// is certified by the checks shipped beside them (`scripts/certify-shipped.sh`: each fact
/// the bound rests on proven again by another path; past 8 houses, which have no levels, by
/// one thread, `--by serial`). Not required: the empty-capture Kalah(6,5) book and ledger
/// (their checks need the empty-capture levels above 24 to finish in hours), and of the
/// Kalah(6,6) campaign, which goes on to bound moves 2 to 6 with facts not checked yet, all
/// but the value's two bounds, `>= +4` and `<= +4`; none of theirs may be falsified.
#[test]
fn the_shipped_books_and_ledgers_are_certified_by_their_checks() {
    use kalah::prove::certificate::{Certificate, Checks, Side, checks_path};
    use kalah::prove::ledger::Ledger;
    use kalah::{Lanes, Narrow, Position, Setup, Wide};
    /// The certificate of the ledger at `path` by the checks beside it, read in lanes `L`.
    fn certificate_of<L: Lanes>(path: &Path) -> Certificate {
        let mut ledger = Ledger::<L>::new();
        ledger.add_file(path).unwrap();
        let (fact, _) = kalah::prove::root_of(&ledger).expect("a root");
        let setup: Setup = fact.root.as_deref().unwrap().parse().unwrap();
        let root = Position::<L>::from_setup(&setup, fact.position.rules()).unwrap();
        let mut checks = Checks::new();
        checks.add_file(&checks_path(path)).unwrap();
        Certificate::of(root, &ledger, &checks).unwrap()
    }
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (file, required) in [
        ("data/books/kalah-6-4-standard-book.jsonl", true),
        ("data/books/kalah-6-4-empty-capture-book.jsonl", true),
        ("data/books/kalah-6-5-standard-book.jsonl", true),
        ("data/books/kalah-6-5-empty-capture-book.jsonl", false),
        ("data/proofs/kalah-6-5-standard.jsonl", true),
        ("data/proofs/kalah-6-5-empty-capture.jsonl", false),
        ("data/proofs/kalah-6-6-standard.jsonl", false),
        ("data/proofs/kalah-7-3-standard.jsonl", true),
        ("data/proofs/kalah-7-3-empty-capture.jsonl", true),
        ("data/proofs/kalah-7-4-standard.jsonl", true),
        ("data/proofs/kalah-7-4-empty-capture.jsonl", true),
        ("data/proofs/kalah-8-3-standard.jsonl", true),
        // 9 and 12 houses: wide lanes, certified by one thread.
        ("data/proofs/kalah-9-3-empty-capture.jsonl", true),
        ("data/proofs/kalah-12-2-empty-capture.jsonl", true),
    ] {
        let path = here.join(file);
        let cert = if file.contains("kalah-9-") || file.contains("kalah-12-") {
            certificate_of::<Wide>(&path)
        } else {
            certificate_of::<Narrow>(&path)
        };
        assert!(cert.wrong().is_empty(), "{file}: {:?}", cert.wrong());
        if required {
            assert!(!cert.claims.is_empty(), "{file}");
            for c in &cert.claims {
                assert!(c.is_certified(), "{file}: {c} is not certified");
            }
        }
        if file.contains("6-6-standard") {
            // The published bound, at least +4, proven by the campaign and certified ...
            let root_lower = cert
                .claims
                .iter()
                .find(|c| c.mv.is_none() && c.side == Side::Lower);
            let c = root_lower.expect("a lower bound of the root");
            assert!(c.value >= 4 && c.is_certified(), "{file}: {c}");
            // And the upper, `<= +4`, unpublished: the value is exactly +4.
            let root_upper = cert
                .claims
                .iter()
                .find(|c| c.mv.is_none() && c.side == Side::Upper);
            let c = root_upper.expect("an upper bound of the root");
            assert!(c.value <= 4 && c.is_certified(), "{file}: {c}");
        }
    }
}

#[test]
fn a_ledger_past_the_bound_is_named_and_boards_the_levels_hold_never_read_it() {
    let home = fresh_dir("book-bound");
    let built = kalah_in(&home, &["db", "build", "--houses", "4", "--max-seeds", "4"]);
    assert!(built.status.success(), "{}", stderr(&built));
    // A sparse file just past the bound: named before a byte of it is read.
    let big = std::fs::File::create(home.join("huge.jsonl")).unwrap();
    big.set_len(kalah::book::MAX_BOOK_BYTES + 1).unwrap();
    drop(big);
    let out = kalah_in(&home, &["query", "<4,0,0,3,3,3,3,3,3,3,3>"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("huge.jsonl") && err.contains("MiB"), "{err}");
    assert!(stdout(&out).is_empty());
    // A board the levels hold is answered from them: the ledgers are not read.
    let out = kalah_in(&home, &["query", "<4,0,0,1,0,0,1,1,0,0,1>", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["source"], "database", "{answer}");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn a_book_past_the_memory_it_may_use_is_refused_before_it_is_made() {
    use kalah::{Narrow, Position, Rules, Variant};
    let root: Position<Narrow> =
        Position::start(Variant::new(6, 4, Rules::Standard).unwrap()).unwrap();
    let all = kalah::book::positions_to(&root, 4, None, u64::MAX).unwrap();
    assert_eq!(all.len(), 1168, "the Kalah(6,4) book to depth 4");
    let refused = kalah::book::positions_to(&root, 12, None, 1 << 20).unwrap_err();
    assert!(refused.bytes > 1 << 20 && refused.depth < 12, "{refused:?}");
    // The estimate says it before counting: exact when the probe reaches the depth, else
    // large rather than small (the growth slows deeper down), here by at most 4 times.
    let exact = kalah::book::estimate(&root, 4, None, u64::MAX).unwrap();
    assert!(exact.exact && exact.boards == 1168, "{exact:?}");
    let small: Position<Narrow> =
        Position::start(Variant::new(4, 3, Rules::Standard).unwrap()).unwrap();
    for depth in [13, 16] {
        let guess = kalah::book::estimate(&small, depth, None, u64::MAX).unwrap();
        let boards = kalah::book::positions_to(&small, depth, None, u64::MAX)
            .unwrap()
            .len() as u64;
        assert!(!guess.exact && guess.counted_to < depth, "{guess:?}");
        assert!(
            boards <= guess.boards && guess.boards <= 4 * boards,
            "Kalah(4,3) to {depth}: {boards} boards, estimated {guess:?}"
        );
    }
    let deep = kalah::book::estimate(&root, 16, None, u64::MAX).unwrap();
    assert!(deep.bytes > 1 << 40 && deep.counted_to < 10, "{deep:?}");
    assert!(kalah::book::estimate(&root, 16, None, 1 << 20).is_err());
    // positions_within: the probe's boards when it reached the depth, a refusal by the
    // estimate past the budget.
    assert_eq!(
        kalah::book::positions_within(&root, 4, None, u64::MAX).unwrap(),
        all
    );
    assert!(matches!(
        kalah::book::positions_within(&root, 16, None, 1 << 30),
        Err(kalah::book::Refused::Estimated(_))
    ));
    // The command says so under a 1 GB address-space limit (`ulimit -v`), exit 2, before the
    // memory runs out, and makes no ledger.
    let home = fresh_dir("book-memory");
    let ledger = home.join("deep.jsonl");
    let kalah = command().get_program().to_owned();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1000000 && exec \"$0\" prove -m 6 -n 4 --no-db --book 16 --ledger \"$1\" --list")
        .arg(&kalah)
        .arg(&ledger)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("too large"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("about"),
        "refused by the estimate: {}",
        stderr(&out)
    );
    assert!(!ledger.exists());
    // Under tighter limits, where the system refuses memory before the walk reaches what it
    // may use, the count stops and says so too (it grew its containers fallibly): never an
    // abort ("memory allocation of ... failed").
    for limit in [150_000, 190_000, 230_000] {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ulimit -v {limit} && exec \"$0\" prove -m 6 -n 4 --no-db --book 8 --ledger \"$1\" --list"
            ))
            .arg(&kalah)
            .arg(&ledger)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{limit}: {}", stderr(&out));
        assert!(stderr(&out).contains("too large"), "{}", stderr(&out));
        assert!(!ledger.exists());
    }
    let _ = std::fs::remove_dir_all(&home);
}

/// Where a search would run for hours and the shipped ledgers prove something, `query` and
/// `analyze` answer with what they prove instead of refusing: standard Kalah(6,6)'s +4 with
/// move 1 best and the other moves bounded (exit 0), the value alone at once by
/// `--value-only`, and bounds only (empty-capture Kalah(6,6), its campaign barely begun) as
/// bounds on stdout beside the refusal (exit 2).
#[test]
fn a_search_past_the_hour_answers_with_what_the_ledgers_prove() {
    let start = "<6,0,0,6,6,6,6,6,6,6,6,6,6,6,6>";
    let v = cli_common::json(&["query", start, "--json"]);
    assert_eq!(v["value"], 4, "{v}");
    assert_eq!(
        (v["lower"].as_i64(), v["upper"].as_i64()),
        (Some(4), Some(4))
    );
    assert_eq!(v["source"], "ledger");
    assert_eq!(v["searched"], false);
    let moves = v["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), 6);
    assert_eq!(moves[0]["value"], 4);
    for m in moves {
        // Each move at most +4: best (move 1 is), worse, or not known yet (the campaign
        // goes on to tell).
        assert!(m["upper"].as_i64().unwrap() <= 4, "{m}");
        let best = m["lower"].as_i64().unwrap() >= 4;
        assert_eq!(
            best,
            v["best"].as_array().unwrap().contains(&m["house"]),
            "{m}"
        );
        let maybe = m["lower"].as_i64().unwrap() < 4 && m["upper"].as_i64().unwrap() >= 4;
        let listed = v["maybe_best"].as_array().unwrap().contains(&m["house"]);
        assert_eq!(maybe, listed, "{m}");
    }
    let out = cli_common::kalah(&["query", start]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("value: +4 (wins by 4)"), "{text}");
    assert!(text.contains("  move  1: +4 (wins by 4)"), "{text}");
    assert!(text.contains("--long searches it anyway"), "{text}");
    assert!(!stderr(&out).contains("searching"), "{}", stderr(&out));

    let v = cli_common::json(&["analyze", start, "--value-only", "--json"]);
    assert_eq!(
        (&v["value"], &v["source"]),
        (&4.into(), &"ledger".into()),
        "{v}"
    );

    let out = cli_common::kalah(&["query", start, "--rules", "empty-capture", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Not started: --long"),
        "{}",
        stderr(&out)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert!(v["value"].is_null(), "{v}");
    assert!(v["lower"].as_i64() < v["upper"].as_i64(), "{v}");
    assert_eq!(v["searched"], false);
}

/// The front ends agree on Kalah(6,6) from the shipped ledgers alone (an empty database home,
/// no levels): `solve -m 6 -n 6` prints +4, proven and certified, and succeeds; `query` and
/// `analyze` say of the value and of each move whether it is certified, at the start of both
/// rule sets and after move 1 (its last seed in the store: South moves again).
#[test]
fn kalah_6_6_is_answered_from_the_shipped_ledgers_saying_what_is_certified() {
    let home = fresh_dir("book-kalah-6-6");
    let out = kalah_in(&home, &["solve", "-m", "6", "-n", "6"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "value: +4 (wins by 4), stores included, proven by the ledgers and certified"
        ),
        "{text}"
    );
    assert!(
        text.contains("  move  1: +4 (wins by 4), certified"),
        "{text}"
    );
    // An open move whose proven bound is certified says so of its bounds, not of a value.
    assert!(
        text.contains("  move  3: in [-68, +4] (open), these bounds certified"),
        "{text}"
    );
    let v: Value =
        serde_json::from_slice(&kalah_in(&home, &["solve", "-m", "6", "-n", "6", "--json"]).stdout)
            .expect("JSON");
    assert_eq!(
        (&v["value"], &v["certified"]),
        (&4.into(), &true.into()),
        "{v}"
    );
    assert_eq!(v["variant"], "Kalah(6,6)");
    // The value alone, and whether it reaches +1, from the ledgers too.
    let v: Value = serde_json::from_slice(
        &kalah_in(
            &home,
            &["solve", "-m", "6", "-n", "6", "--value-only", "--json"],
        )
        .stdout,
    )
    .expect("JSON");
    assert_eq!(
        (&v["value"], &v["source"]),
        (&4.into(), &"ledger".into()),
        "{v}"
    );
    let out = kalah_in(&home, &["solve", "-m", "6", "-n", "6", "--at-least", "1"]);
    assert!(
        stdout(&out).contains("yes: the value is +4"),
        "{}",
        stdout(&out)
    );

    let start = "<6,0,0,6,6,6,6,6,6,6,6,6,6,6,6>";
    let after_1 = "<6,1,0,0,7,7,7,7,7,6,6,6,6,6,6>";
    for (position, rules) in [
        (start, "standard"),
        (after_1, "standard"),
        (start, "empty-capture"),
        (after_1, "empty-capture"),
    ] {
        for command in ["query", "analyze"] {
            let out = kalah_in(&home, &[command, position, "--rules", rules, "--json"]);
            let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
            let what = format!("{command} {position} {rules}: {v}");
            assert!(v["certified"].is_boolean(), "{what}");
            let moves = v["moves"].as_array().expect("moves");
            assert!(!moves.is_empty(), "{what}");
            assert!(moves.iter().all(|m| m["certified"].is_boolean()), "{what}");
            if rules == "standard" {
                // +4, proven and certified; the moves the ledgers settle exactly.
                assert!(out.status.success(), "{what}");
                assert_eq!(
                    (&v["value"], &v["certified"]),
                    (&4.into(), &true.into()),
                    "{what}"
                );
                let best = if position == start { 1 } else { 3 };
                let m = moves
                    .iter()
                    .find(|m| m["house"] == best)
                    .expect("the best move");
                assert_eq!(
                    (&m["value"], &m["certified"]),
                    (&4.into(), &true.into()),
                    "{what}"
                );
                let text = stdout(&kalah_in(&home, &[command, position]));
                assert!(
                    text.contains("proven by the ledgers and certified"),
                    "{text}"
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&home);
}

/// A check forged for a lie (the digest of the lie's line, anyone can compute it): with no
/// mark, with the mark of another check, or with the mark of another installation's key, it
/// certifies nothing anywhere. `query` answers from the honest book and shows the lie as an
/// unchecked claim, `prove --status` calls its bound not certified, `db verify` counts it
/// unchecked, and `prove --check --all` proves the lie again, finds it wrong and names it.
#[test]
fn a_forged_check_certifies_nothing_and_is_proven_again() {
    use kalah::prove::certificate::{Check, digest};
    use kalah::prove::fact::Fact;
    use kalah::prove::key::Key;
    let home = home_with_book("book-forged", "standard");
    let honest_checks = std::fs::read_to_string(home.join("book.checks.jsonl")).unwrap();
    let start = "<4,0,0,3,3,3,3,3,3,3,3>";
    let line = std::fs::read_to_string(home.join("book.jsonl"))
        .unwrap()
        .lines()
        .find(|l| l.contains(&format!("\"position\":\"{start}\"")))
        .expect("the start is in the book")
        .to_owned();
    let fact: Value = serde_json::from_str(&line).unwrap();
    let value = fact["lower"].as_i64().unwrap();
    let mut lie = fact.clone();
    lie["lower"] = (value + 2).into();
    lie["upper"] = (value + 2).into();
    let lie_fact = Fact::<kalah::Narrow>::from_line(&lie.to_string()).unwrap();
    let lie = lie_fact.to_line();
    let ledger = home.join("lie.jsonl");
    std::fs::write(&ledger, format!("{lie}\n")).unwrap();
    // The forger's check: an honest one's line, made to name the lie.
    let honest: Value = serde_json::from_str(honest_checks.lines().next().unwrap()).unwrap();
    assert!(honest["mac"].is_string(), "checks are marked: {honest}");
    let mut copied_mark = honest.clone();
    copied_mark["digest"] = digest(&lie_fact).into();
    copied_mark["position"] = start.into();
    copied_mark["lower"] = (value + 2).into();
    copied_mark["upper"] = (value + 2).into();
    copied_mark["fact_at"] = "lie.jsonl:1".into();
    let mut no_mark = copied_mark.clone();
    no_mark.as_object_mut().unwrap().remove("mac");
    let check = Check::from_line(&no_mark.to_string()).unwrap();
    let (_, other_key) = check.marked(&Key::from_bytes([42; 32]), &lie);
    for forged in [no_mark.to_string(), copied_mark.to_string(), other_key] {
        std::fs::write(home.join("lie.checks.jsonl"), format!("{forged}\n")).unwrap();
        let out = kalah_in(&home, &["query", start, "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(answer["value"].as_i64(), Some(value), "{forged}: {answer}");
        assert!(
            !answer["books"].to_string().contains("lie.jsonl"),
            "{answer}"
        );
        let out = kalah_in(&home, &["prove", "--status", ledger.to_str().unwrap()]);
        assert!(out.status.success(), "{}", stderr(&out));
        let status = stdout(&out);
        assert!(
            status.contains(&format!("value >= +{}: not certified", value + 2)),
            "{status}"
        );
        assert!(
            status.contains("checks this installation did not write"),
            "{status}"
        );
        let out = kalah_in(&home, &["db", "verify", "--sample", "0", "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let verified: Value = serde_json::from_slice(&out.stdout).unwrap();
        let lie_ledger = verified["ledgers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["file"].as_str().unwrap().ends_with("lie.jsonl"))
            .unwrap()
            .clone();
        assert_eq!(lie_ledger["unchecked"], 1, "{verified}");
        assert_eq!(lie_ledger["checked"], 0, "{verified}");
    }
    // --check --all proves the lie again (the forged check does not count as done): wrong,
    // named, exit code 1; from then on this installation's own check says so.
    let args = ["prove", "--check", ledger.to_str().unwrap(), "--all"];
    let err = fails_saying(&home, &args, "lie.jsonl:1");
    assert!(err.contains("did not write"), "{err}");
    fails_saying(&home, &["db", "verify", "--sample", "0"], "lie.jsonl");
    let _ = std::fs::remove_dir_all(&home);
}

/// Checks made by another installation (another key) are claims here until this one proves
/// their facts again: `--check --all` here checks them all, and then they answer.
#[test]
fn checks_from_another_installation_are_claims_until_proven_again_here() {
    let home = home_with_book("book-elsewhere", "standard");
    let book = home.join("book.jsonl");
    let start = "<4,0,0,3,3,3,3,3,3,3,3>";
    let elsewhere = home.join("elsewhere").join("kalah.key");
    let here = |args: &[&str]| {
        command()
            .env(DB_HOME_VAR, &home)
            .env(cli_common::KEY_VAR, &elsewhere)
            .args(args)
            .output()
            .unwrap()
    };
    let out = here(&["query", start, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["source"], "search", "{answer}");
    assert!(!answer["claims"].is_null(), "{answer}");
    assert!(!elsewhere.exists(), "reading makes no key");
    let out = here(&[
        "prove",
        "--check",
        book.to_str().unwrap(),
        "--all",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    // One object a check, then the summary.
    let done: Value = serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
    assert!(done["checks_run"].as_u64().unwrap() > 0, "{done}");
    assert_eq!(done["unchecked"], 0, "{done}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&elsewhere).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the key is the user's alone");
    }
    let out = here(&["query", start, "--json"]);
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["source"], "ledger", "{answer}");
    // A key in the directory the checks are read from is refused, never used.
    let beside = home.join("kalah.key");
    std::fs::copy(&elsewhere, &beside).unwrap();
    let out = command()
        .env(DB_HOME_VAR, &home)
        .env(cli_common::KEY_VAR, &beside)
        .args(["query", start])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stderr(&out).contains("directory of the checks file"));
    let _ = std::fs::remove_dir_all(&home);
}

/// The ledgers and checks files of one directory are read up to 64 MiB in all, however many
/// files they are split into (each under its own bound): past it, an error naming the
/// directory and the bound, before any is read.
#[test]
fn the_ledgers_of_a_directory_are_bounded_in_all() {
    let home = fresh_dir("book-total");
    // Sparse files: three of 30 MiB, each under the bound of one file, 90 MiB in all.
    for name in ["a.jsonl", "b.jsonl", "c.jsonl"] {
        let file = std::fs::File::create(home.join(name)).unwrap();
        file.set_len(30 << 20).unwrap();
    }
    let query = ["query", "<4,0,0,3,3,3,3,3,3,3,3>"];
    let bound = "64 MiB of ledgers and checks files read from one directory";
    let err = fails_saying(&home, &query, bound);
    assert!(err.contains(home.to_str().unwrap()), "{err}");
    // --no-book reads none of them.
    let out = kalah_in(&home, &["query", "<4,0,0,3,3,3,3,3,3,3,3>", "--no-book"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // db verify names the bound as a defect of the directory's ledgers.
    fails_saying(&home, &["db", "verify"], bound);
    let _ = std::fs::remove_dir_all(&home);
}

/// `db verify` of a home that holds ledgers and no level reports its ledgers (what `query`
/// reads as books) and exits as they are; a home with neither is an error saying so.
#[test]
fn db_verify_reports_a_home_of_ledgers_alone() {
    let home = fresh_dir("verify-ledgers");
    let book = home.join("book.jsonl");
    let made = kalah_in(
        &home,
        &[
            "prove",
            "-m",
            "3",
            "-n",
            "2",
            "--no-db",
            "--book",
            "1",
            "--ledger",
            book.to_str().unwrap(),
        ],
    );
    assert!(made.status.success(), "{}", stderr(&made));
    let out = kalah_in(&home, &["db", "verify"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("no database in"), "{}", stdout(&out));
    assert!(stdout(&out).contains("book.jsonl"), "{}", stdout(&out));
    let out = kalah_in(&home, &["db", "verify", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["databases"], serde_json::json!([]), "{v}");
    assert_eq!(v["ok"], true, "{v}");
    assert!(v["ledgers"][0]["unchecked"].as_u64().unwrap() > 0, "{v}");
    // A garbled ledger is a defect: exit code 1, named.
    std::fs::write(home.join("bad.jsonl"), "{\"fact\":1}\n").unwrap();
    fails_saying(&home, &["db", "verify"], "bad.jsonl");
    // Neither levels nor ledgers.
    let empty = fresh_dir("verify-empty");
    fails_saying(&empty, &["db", "verify"], "no database or ledger");
    let _ = std::fs::remove_dir_all(&home);
    let _ = std::fs::remove_dir_all(&empty);
}
