//! The database home: `kalah db build` writes into it when no --dir is given, and the commands
//! that read databases find their variant's levels there with no flag ($KALAH_DB, else
//! $XDG_DATA_HOME/kalah, else $HOME/.local/share/kalah); --no-db and --max-level; a big build
//! asks first, and one that cannot fit on the disk is refused; the bots (`mankalah`, `kgp`)
//! read the home's levels with no flag.
//!
//! Every test has a fresh HOME of its own, and runs `kalah` with neither KALAH_DB nor
//! XDG_DATA_HOME set unless it sets them: the developer's own home never shows here. The
//! levels built are the 4-house levels up to 10 seeds (42 kB, a tenth of a second).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod cli_common;
use cli_common::{DB_HOME_VAR, fresh_dir};

/// A position of Kalah(4,1): 8 seeds, in the levels built here.
const SMALL: &str = "<4,0,0,1,1,1,1,1,1,1,1>";
/// A position of Kalah(5,1): no levels of 5 houses are built here.
const FIVE_HOUSES: &str = "<5,0,0,1,1,1,1,1,1,1,1,1,1>";
/// The name of the top level built here.
const TOP_FILE: &str = "kalah-4-standard-010.kdb";

/// A fresh HOME, `kalah-home-NAME-PID` in the temporary directory, and the database home under
/// it (not made).
fn fresh_home(name: &str) -> (PathBuf, PathBuf) {
    let home = fresh_dir(&format!("home-{name}"));
    let db = home.join(".local").join("share").join("kalah");
    (home, db)
}

/// `kalah` with `home` as HOME and neither KALAH_DB nor XDG_DATA_HOME set.
fn in_home(home: &Path) -> Command {
    let mut command = cli_common::command();
    command
        .env("HOME", home)
        .env_remove(DB_HOME_VAR)
        .env_remove("XDG_DATA_HOME")
        .stdin(Stdio::null());
    command
}

/// Runs `command` with `args`.
fn run(mut command: Command, args: &[&str]) -> Output {
    command.args(args).output().expect("the kalah binary runs")
}

/// stdout and stderr of a run of `kalah` with `args` that must succeed.
fn ok(command: Command, args: &[&str]) -> (String, String) {
    let out = run(command, args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}: {stderr}");
    (stdout, stderr)
}

/// The JSON answer of a run of `kalah` with `args` that must succeed.
fn json(command: Command, args: &[&str]) -> serde_json::Value {
    let (stdout, _) = ok(command, args);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}"))
}

/// Builds the 4-house levels up to 10 seeds with `command`, no --dir.
fn build_small(command: Command) -> (String, String) {
    ok(command, &["db", "build", "-m", "4", "--max-seeds", "10"])
}

/// The `db` field naming `dir` and its top level `max_level`.
fn db_field(dir: &Path, max_level: u32) -> serde_json::Value {
    serde_json::json!({"dir": dir.to_str().unwrap(), "max_level": max_level})
}

/// The names of the files in `dir` (none if it is not there).
fn files_in(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_build_without_dir_writes_into_home_local_share_kalah_and_says_so() {
    let (home, db) = fresh_home("build");
    let (stdout, _) = build_small(in_home(&home));
    let line = format!("levels 0..=10 in {}", db.display());
    assert!(stdout.contains(&line), "{stdout}");
    let files = files_in(&db);
    assert!(files.iter().any(|f| f == TOP_FILE), "{files:?}");
    assert!(
        files.iter().any(|f| f == "kalah-4-standard-000.kdb"),
        "{files:?}"
    );
    // Nowhere else under HOME.
    assert_eq!(files_in(&home), [".local"]);
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn db_info_and_verify_without_dir_read_the_home() {
    let (home, db) = fresh_home("info-verify");
    build_small(in_home(&home));
    let info = json(in_home(&home), &["db", "info", "--json"]);
    assert_eq!(info["dir"], db.to_str().unwrap());
    assert_eq!(info["ok"], true);
    assert_eq!(info["databases"][0]["houses"], 4);
    assert_eq!(info["databases"][0]["max_level"], 10);
    let (stdout, _) = ok(in_home(&home), &["db", "info"]);
    assert!(
        stdout.contains("4 houses, standard rules: levels 0..=10"),
        "{stdout}"
    );
    let (stdout, _) = ok(in_home(&home), &["db", "verify"]);
    assert!(
        stdout.contains("4 houses, standard rules, levels 0..=10: ok"),
        "{stdout}"
    );
    // A damaged level in the home is found by verify with no flag.
    let top = db.join(TOP_FILE);
    let mut bytes = std::fs::read(&top).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    std::fs::write(&top, bytes).unwrap();
    let out = run(in_home(&home), &["db", "verify"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn query_answers_from_the_home_with_no_flag() {
    let (home, db) = fresh_home("query");
    build_small(in_home(&home));
    let v = json(in_home(&home), &["query", SMALL, "--json"]);
    assert_eq!(v["source"], "database");
    assert_eq!(v["db"], db_field(&db, 10));
    assert_eq!(v["value"], 2);
    let (stdout, _) = ok(in_home(&home), &["query", SMALL]);
    let line = format!(
        "read from the database (levels 0..=10 in {}) in ",
        db.display()
    );
    assert!(stdout.contains(&line), "{stdout}");
    // --no-db searches, with the same value.
    let v = json(in_home(&home), &["query", SMALL, "--json", "--no-db"]);
    assert_eq!(v["source"], "search");
    assert_eq!(v["db"], serde_json::Value::Null);
    assert_eq!(v["value"], 2);
    let (stdout, stderr) = ok(in_home(&home), &["query", SMALL, "--no-db"]);
    assert!(
        format!("{stdout}{stderr}").contains("no endgame database (--no-db)"),
        "{stdout}{stderr}"
    );
    // analyze reads it too.
    let v = json(in_home(&home), &["analyze", SMALL, "--json"]);
    assert_eq!(v["db"], db_field(&db, 10));
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn max_level_reads_only_the_levels_below_it() {
    let (home, db) = fresh_home("max-level");
    build_small(in_home(&home));
    // 8 seeds on the board, above level 5: searched, with the levels 0..=5 probed.
    let v = json(
        in_home(&home),
        &["query", SMALL, "--json", "--max-level", "5"],
    );
    assert_eq!(v["db"], db_field(&db, 5));
    assert_eq!(v["source"], "search");
    assert_eq!(v["value"], 2);
    let v = json(
        in_home(&home),
        &["solve", "-m", "4", "-n", "2", "--json", "--max-level", "5"],
    );
    assert_eq!(v["db"], db_field(&db, 5));
    // --no-db and --max-level say opposite things.
    let out = run(
        in_home(&home),
        &["query", SMALL, "--no-db", "--max-level", "5"],
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn solve_probes_the_home() {
    let (home, db) = fresh_home("solve");
    build_small(in_home(&home));
    let v = json(in_home(&home), &["solve", "-m", "4", "-n", "2", "--json"]);
    assert_eq!(v["db"], db_field(&db, 10));
    assert_eq!(v["value"], 6);
    // The answer names the levels it read, on stdout.
    let (stdout, _) = ok(in_home(&home), &["solve", "-m", "4", "-n", "2"]);
    let line = format!("endgame levels 0..=10 read from {}", db.display());
    assert!(stdout.contains(&line), "{stdout}");
    let v = json(
        in_home(&home),
        &["solve", "-m", "4", "-n", "2", "--json", "--no-db"],
    );
    assert_eq!(v["db"], serde_json::Value::Null);
    assert_eq!(v["value"], 6);
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn a_variant_with_no_levels_in_the_home_reads_none_and_says_where_it_looked() {
    let (home, db) = fresh_home("other-variant");
    build_small(in_home(&home));
    let v = json(in_home(&home), &["query", FIVE_HOUSES, "--json"]);
    assert_eq!(v["db"], serde_json::Value::Null);
    assert_eq!(v["source"], "search");
    let (stdout, stderr) = ok(in_home(&home), &["query", FIVE_HOUSES]);
    let line = format!(
        "no endgame database for 5 houses, standard rules in {}",
        db.display()
    );
    assert!(
        format!("{stdout}{stderr}").contains(&line),
        "{stdout}{stderr}"
    );
    // Other rules with the same houses have none either.
    let v = json(
        in_home(&home),
        &["query", SMALL, "--rules", "empty-capture", "--json"],
    );
    assert_eq!(v["db"], serde_json::Value::Null);
    // --max-level asks for levels that are not there: an error, naming where it looked.
    let out = run(in_home(&home), &["query", FIVE_HOUSES, "--max-level", "5"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--max-level 5"), "{stderr}");
    assert!(stderr.contains(&line), "{stderr}");
    assert!(out.stdout.is_empty());
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn a_home_that_is_not_there_holds_no_database() {
    let (home, db) = fresh_home("empty");
    let v = json(in_home(&home), &["query", SMALL, "--json"]);
    assert_eq!(v["db"], serde_json::Value::Null);
    assert_eq!(v["source"], "search");
    let out = run(in_home(&home), &["query", SMALL, "--max-level", "5"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    // Reading makes nothing.
    assert!(!db.exists());
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn kalah_db_comes_before_xdg_data_home_and_home() {
    let (home, under_home) = fresh_home("kalah-db");
    let named = home.join("named");
    let xdg = home.join("xdg");
    let with_all = || {
        let mut command = in_home(&home);
        command.env(DB_HOME_VAR, &named).env("XDG_DATA_HOME", &xdg);
        command
    };
    let (stdout, _) = build_small(with_all());
    assert!(
        stdout.contains(&format!("in {}:", named.display())),
        "{stdout}"
    );
    assert!(named.join(TOP_FILE).exists());
    assert!(!xdg.exists() && !under_home.exists());
    let v = json(with_all(), &["query", SMALL, "--json"]);
    assert_eq!(v["db"], db_field(&named, 10));
    // An empty KALAH_DB is not set: XDG_DATA_HOME then.
    let mut command = with_all();
    command.env(DB_HOME_VAR, "");
    let v = json(command, &["query", SMALL, "--json"]);
    assert_eq!(v["db"], serde_json::Value::Null);
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn an_absolute_xdg_data_home_comes_before_home() {
    let (home, under_home) = fresh_home("xdg");
    let xdg = home.join("xdg");
    let with_xdg = |xdg: &Path| {
        let mut command = in_home(&home);
        command.env("XDG_DATA_HOME", xdg);
        command
    };
    let (stdout, _) = build_small(with_xdg(&xdg));
    let db = xdg.join("kalah");
    assert!(
        stdout.contains(&format!("in {}:", db.display())),
        "{stdout}"
    );
    assert!(db.join(TOP_FILE).exists());
    assert!(!under_home.exists());
    let v = json(with_xdg(&xdg), &["query", SMALL, "--json"]);
    assert_eq!(v["db"], db_field(&db, 10));
    // A relative XDG_DATA_HOME is ignored: HOME then, which holds nothing.
    let v = json(with_xdg(Path::new("xdg")), &["query", SMALL, "--json"]);
    assert_eq!(v["db"], serde_json::Value::Null);
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn match_replay_and_play_name_the_levels_read_from_the_home() {
    let (home, db) = fresh_home("games");
    build_small(in_home(&home));
    let line = format!("endgame levels 0..=10 read from {}", db.display());
    let records = home.join("records");
    let (_, stderr) = ok(
        in_home(&home),
        &[
            "match",
            "greedy",
            "random",
            "--games",
            "2",
            "-m",
            "4",
            "-n",
            "2",
            "--record",
            records.to_str().unwrap(),
        ],
    );
    assert!(stderr.contains(&line), "{stderr}");
    let record = records.join("game-0001.txt");
    let (stdout, stderr) = ok(in_home(&home), &["replay", record.to_str().unwrap()]);
    assert!(stderr.contains(&line), "{stderr}");
    assert!(
        stdout.contains(&format!("(levels 0..=10 in {})", db.display())),
        "{stdout}"
    );
    let v = json(
        in_home(&home),
        &["replay", record.to_str().unwrap(), "--json"],
    );
    assert_eq!(v["db"], db_field(&db, 10));
    // Two engines: nothing read from stdin.
    let (stdout, stderr) = ok(
        in_home(&home),
        &[
            "play", "-m", "4", "-n", "2", "--south", "greedy", "--north", "greedy",
        ],
    );
    assert!(stderr.contains(&line), "{stderr}");
    assert!(stdout.contains("game over"), "{stdout}");
    // --no-db reads none.
    let (_, stderr) = ok(
        in_home(&home),
        &[
            "play", "-m", "4", "-n", "2", "--south", "greedy", "--north", "greedy", "--no-db",
        ],
    );
    assert!(!stderr.contains("read from"), "{stderr}");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn the_mankalah_bot_reads_the_homes_7_house_levels_with_no_flag() {
    let (home, db) = fresh_home("mankalah");
    ok(
        in_home(&home),
        &["db", "build", "-m", "7", "--max-seeds", "6"],
    );
    let log = home.join("mankalah.log");
    let mut child = in_home(&home)
        .args(["mankalah", "--log", log.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"END\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let line = format!("endgame levels 0..=6 read from {}", db.display());
    bot_succeeded_and_logged(&out, &log, &line, &home);
}

/// The bot exited 0 and its log has `line`; then `home` goes.
fn bot_succeeded_and_logged(out: &std::process::Output, log: &Path, line: &str, home: &Path) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(log).unwrap();
    assert!(text.contains(line), "{text}");
    let _ = std::fs::remove_dir_all(home);
}

#[test]
fn the_kgp_bot_reads_the_homes_levels_with_no_flag() {
    // A fake server that asks one 4-house position and says goodbye.
    let (home, db) = fresh_home("kgp");
    build_small(in_home(&home));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let log = home.join("kgp.log");
    let child = in_home(&home)
        .args([
            "kgp",
            "--host",
            "127.0.0.1",
            "--port",
            &port,
            "--time-per-move",
            "0.2",
        ])
        .args(["--tt-mb", "16", "--log", log.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Accepted within 20 s, or the test fails (the client never came).
    listener.set_nonblocking(true).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let stream = loop {
        match listener.accept() {
            Ok((stream, _)) => break stream,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => panic!("the bot never connected: {e}"),
        }
    };
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut lines = BufReader::new(stream).lines().map(|l| l.unwrap());
    writer.write_all(b"kgp 1 0 0\r\n").unwrap();
    assert!(lines.any(|l| l == "mode freeplay"));
    writer
        .write_all(format!("3 state {SMALL}\r\n").as_bytes())
        .unwrap();
    assert!(lines.any(|l| l == "@3 yield"));
    writer.write_all(b"5 goodbye\r\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let line = format!("databases for 4 houses: levels 0..=10 in {}", db.display());
    bot_succeeded_and_logged(&out, &log, &line, &home);
}

#[test]
fn a_build_of_more_than_a_gigabyte_asks_first_and_stops_without_a_yes() {
    // 6 houses up to 25 seeds: 1.18 GB. Never run with --yes here.
    let (home, db) = fresh_home("ask");
    let args = ["db", "build", "-m", "6", "--max-seeds", "25"];
    let out = run(in_home(&home), &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("6 houses, standard rules, levels 0..=25 into"),
        "{stderr}"
    );
    assert!(stderr.contains(&db.display().to_string()), "{stderr}");
    assert!(stderr.contains("1.18 GB to write"), "{stderr}");
    assert!(stderr.contains("free there"), "{stderr}");
    assert!(stderr.contains("Build it? [y/N]"), "{stderr}");
    assert!(
        stderr.contains("the build was not confirmed (--yes builds without asking)"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    assert!(
        !files_in(&db).iter().any(|f| f.ends_with(".kdb")),
        "{:?}",
        files_in(&db)
    );
    // Anything but y or yes is a no.
    for answer in ["n\n", "\n", "maybe\n", "yess\n"] {
        let mut command = in_home(&home);
        command.args(args);
        let out = cli_common::run_within(command, answer, std::time::Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(2), "{answer:?}: {out:?}");
        assert!(
            !files_in(&db).iter().any(|f| f.ends_with(".kdb")),
            "{answer:?}: {:?}",
            files_in(&db)
        );
    }
    // Small builds do not ask.
    build_small(in_home(&home));
    assert!(db.join(TOP_FILE).exists());
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn a_build_that_cannot_fit_on_the_disk_is_refused_before_asking() {
    // 8 houses up to 40 seeds: tens of terabytes.
    let (home, db) = fresh_home("too-big");
    let out = run(
        in_home(&home),
        &["db", "build", "-m", "8", "--max-seeds", "40"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot build the database"), "{stderr}");
    assert!(stderr.contains(" TB on disk"), "{stderr}");
    assert!(stderr.contains(&db.display().to_string()), "{stderr}");
    assert!(!stderr.contains("Build it?"), "{stderr}");
    assert!(
        !files_in(&db).iter().any(|f| f.ends_with(".kdb")),
        "{:?}",
        files_in(&db)
    );
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn the_tests_never_see_a_database_home() {
    // What every other test file runs: a home that is not there.
    let out = cli_common::kalah(&["query", SMALL, "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["db"], serde_json::Value::Null);
    assert!(!cli_common::missing_db_home().exists());
}

#[test]
fn a_home_that_cannot_be_a_directory_is_an_error_not_silence() {
    let (home, _) = fresh_home("not-a-dir");
    let file = home.join("a-file");
    std::fs::write(&file, "not a directory\n").unwrap();
    // XDG_DATA_HOME names a file: its kalah/ cannot exist.
    let mut command = in_home(&home);
    command.env("XDG_DATA_HOME", &file);
    let out = run(command, &["query", SMALL]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the database home") && err.contains("XDG_DATA_HOME"),
        "{err}"
    );
    // KALAH_DB names a file: `db build` says so, not "File exists".
    let mut command = in_home(&home);
    command.env(DB_HOME_VAR, &file);
    let out = run(
        command,
        &["db", "build", "--houses", "2", "--max-seeds", "2"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("is not a directory"), "{err}");
    // --no-db still answers.
    let mut command = in_home(&home);
    command.env("XDG_DATA_HOME", &file);
    ok(command, &["query", SMALL, "--no-db"]);
    let _ = std::fs::remove_dir_all(&home);
}

#[cfg(unix)]
#[test]
fn a_build_stopped_by_sigterm_says_what_it_kept_and_resumes() {
    let (home, _) = fresh_home("sigterm");
    let dir = home.join("db");
    let d = dir.to_str().unwrap();
    let args = [
        "db",
        "build",
        "--houses",
        "5",
        "--max-seeds",
        "27",
        "--dir",
        d,
        "--yes",
    ];
    let child = in_home(&home)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once a few levels are done, SIGTERM.
    let started = Instant::now();
    while !dir.join("kalah-5-standard-012.kdb").exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "no level 12");
        std::thread::sleep(Duration::from_millis(20));
    }
    cli_common::terminate(&child);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted") && err.contains("resumes"),
        "{err}"
    );
    let kept = files_in(&dir).len();
    assert!(kept >= 13, "{kept} files kept");
    let _ = std::fs::remove_dir_all(&home);
}
