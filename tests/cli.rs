//! The `kalah` binary: JSON shapes, and bad input answered by one line and a non-zero exit.

mod cli_common;
mod common;
use cli_common::{
    Watched, fresh_dir, json, kalah, kalah_watched, kalah_with_input, kalah_within, run_within,
};

const START_6_4: &str = "<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>";

#[test]
fn perft_json_has_nodes_and_names_the_variant() {
    let v = json(&[
        "perft", "--houses", "6", "--seeds", "4", "--depth", "4", "--json",
    ]);
    assert_eq!(v["nodes"], 942);
    assert_eq!(v["variant"], "Kalah(6,4)");
    assert_eq!(v["rules"], "standard");
    let v = json(&[
        "perft",
        START_6_4,
        "-d",
        "3",
        "--rules",
        "empty-capture",
        "--divide",
        "--json",
    ]);
    assert_eq!(v["rules"], "empty-capture");
    let split = v["divide"].as_array().unwrap();
    assert_eq!(split.len(), 6);
    let sum: u64 = split.iter().map(|e| e["nodes"].as_u64().unwrap()).sum();
    assert_eq!(v["nodes"].as_u64(), Some(sum));
}

#[test]
fn perft_reference_agrees() {
    let a = json(&[
        "perft",
        "<6,3,5,0,7,2,0,1,9,4,0,3,1,0,2> north",
        "-d",
        "6",
        "--json",
    ]);
    let b = json(&[
        "perft",
        "<6,3,5,0,7,2,0,1,9,4,0,3,1,0,2>",
        "--to-move",
        "north",
        "-d",
        "6",
        "--reference",
        "--json",
    ]);
    assert_eq!(a["nodes"], b["nodes"]);
    assert_eq!(a["to_move"], "north");
}

#[test]
fn moves_json_describes_each_sowing() {
    let v = json(&["moves", START_6_4, "--json"]);
    assert_eq!(v["rules"], "standard");
    assert_eq!(v["to_move"], "south");
    let moves = v["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 6);
    assert_eq!(moves[2]["house"], 3);
    assert_eq!(moves[2]["extra_turn"], true);
    assert_eq!(moves[2]["to_move"], "south");
    assert_eq!(moves[0]["extra_turn"], false);
    assert_eq!(moves[0]["to_move"], "north");
    assert_eq!(
        moves[0]["position"],
        "<6,0,0,0,5,5,5,5,4,4,4,4,4,4,4> north"
    );
}

#[test]
fn show_json_and_drawing() {
    let v = json(&["show", "<2,3,1,0,0,1,1>", "--json"]);
    assert_eq!(v["finished"], true);
    assert_eq!(v["to_move"], serde_json::Value::Null);
    assert_eq!(v["outcome"]["winner"], serde_json::Value::Null);
    let out = kalah(&[
        "show",
        "6,0,0,4,4,4,4,4,4,4,4,4,4,4,4",
        "--rules",
        "empty-capture",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("empty-capture"));
    assert!(text.contains("South to move"));
}

#[test]
fn show_and_moves_know_every_rule_set_play_knows() {
    // South's house 2 (5 seeds) under awari-basic sows North's home too and ends in South's
    // empty house 1: it captures North's house 2 and empties South's side, and the 2 seeds left
    // count for nobody. Under standard rules the last seed lands in house 2 itself.
    let position = "<2,0,0,0,5,1,1>";
    let v = json(&["moves", position, "--rules", "awari-basic", "--json"]);
    assert_eq!(v["rules"], "awari-basic");
    let sowing = &v["moves"][0];
    assert_eq!(sowing["house"], 2);
    assert_eq!(sowing["captured"], 3);
    assert_eq!(sowing["game_over"], true);
    assert_eq!(sowing["position"], "<2,4,1,0,0,2,0>");
    assert_eq!(
        sowing["stores"],
        serde_json::json!({"south": 4, "north": 1})
    );
    assert_eq!(sowing["to_move"], serde_json::Value::Null);
    let v = json(&["moves", position, "--json"]);
    assert_eq!(v["moves"][0]["position"], "<2,4,0,1,0,0,2> north");
    assert_eq!(v["moves"][0]["game_over"], false);

    // Over under awari-basic: the seeds left count for nobody; under mankalah (Kalah) they
    // go to their owner's store.
    let v = json(&[
        "show",
        "<2,4,1,0,0,2,0>",
        "--rules",
        "awari-basic",
        "--json",
    ]);
    assert_eq!(v["rules"], "awari-basic");
    assert_eq!(v["finished"], true);
    assert_eq!(v["outcome"]["south"], 4);
    assert_eq!(v["outcome"]["north"], 1);
    assert_eq!(v["outcome"]["winner"], "south");
    let v = json(&["show", "<2,4,1,0,0,2,0>", "--rules", "mankalah", "--json"]);
    assert_eq!(v["rules"], "mankalah");
    assert_eq!(v["outcome"]["north"], 3);
    assert_eq!(v["outcome"]["winner"], "south");
    let out = kalah(&["show", "<2,4,1,0,0,2,0>", "--rules", "awari-basic"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    assert!(text.contains("awari-basic rules"), "{text}");
    assert!(text.contains("count for nobody"), "{text}");

    // mankalah: the first sowing of the game earns no extra turn; later ones do.
    let start = "<2,0,0,1,1,1,1>";
    let v = json(&["moves", start, "--rules", "mankalah", "--json"]);
    assert_eq!(v["rules"], "mankalah");
    assert_eq!(v["moves"][1]["house"], 2);
    assert_eq!(v["moves"][1]["extra_turn"], false);
    assert_eq!(v["moves"][1]["to_move"], "north");
    let v = json(&["moves", start, "--json"]);
    assert_eq!(v["moves"][1]["extra_turn"], true);
    let later = "<2,1,1,1,1,1,0>";
    let v = json(&["moves", later, "--rules", "mankalah", "--json"]);
    assert_eq!(v["moves"][1]["house"], 2);
    assert_eq!(v["moves"][1]["extra_turn"], true);
    let out = kalah(&["moves", start, "--rules", "mankalah"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("mankalah rules"), "{text}");
    assert!(text.contains("earns no extra turn"), "{text}");
}

#[test]
fn progress_goes_to_a_log_as_plain_lines() {
    // stderr is a pipe here, not a terminal: plain lines, at the interval the hidden variable
    // asks for (the default, 5 s, would make the test slow).
    let dir = fresh_dir("progress-lines");
    let out = cli_common::command()
        .args([
            "db",
            "build",
            "--houses",
            "5",
            "--max-seeds",
            "14",
            "--json",
            "--dir",
        ])
        .arg(&dir)
        .env("KALAH_PROGRESS_EVERY", "0.001")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The JSON answer on stdout is untouched.
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["levels"].as_array().unwrap().len(), 15);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("level ") && l.contains(" entries ("))
        .collect();
    assert!(!lines.is_empty(), "no progress line: {stderr}");
    for line in &lines {
        assert!(line.chars().count() <= 80, "{line}");
        // A rate for people, never a raw float such as 17779325.5159/s.
        if let Some(rate) = line.split(", ").find(|part| part.ends_with("/s")) {
            let number = rate
                .trim_end_matches("/s")
                .trim_end_matches(['k', 'M', 'G']);
            assert!(number.len() <= 4, "{line}");
        }
    }
    // 0 turns the lines off; the per-level lines stay.
    let _ = std::fs::remove_dir_all(&dir);
    let out = cli_common::command()
        .args(["db", "build", "--houses", "3", "--max-seeds", "8", "--dir"])
        .arg(&dir)
        .env("KALAH_PROGRESS_EVERY", "0")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.lines().all(|l| l.starts_with("  level ")),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn db_build_dry_run_states_the_exact_size_and_builds_nothing() {
    let dir = fresh_dir("dry-run").join("levels");
    let dry_run = |dir: &std::path::Path| {
        let out = cli_common::command()
            .args([
                "db",
                "build",
                "--houses",
                "3",
                "--max-seeds",
                "8",
                "--dry-run",
                "--dir",
            ])
            .arg(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let said = dry_run(&dir);
    assert!(!dir.exists(), "a dry run makes nothing");
    let bytes: u64 = said
        .split(" bytes")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no byte count: {said}"));
    assert!(said.contains("levels 0..=8 into"), "{said}");
    let out = cli_common::command()
        .args(["db", "build", "--houses", "3", "--max-seeds", "8", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let written: u64 = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap())
        .filter(|entry| entry.file_name().to_string_lossy().ends_with(".kdb"))
        .map(|entry| entry.metadata().unwrap().len())
        .sum();
    assert_eq!(written, bytes, "{said}");
    assert!(dry_run(&dir).contains("all built, nothing to write"));
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

/// `db build --by-pairs`, stopped by Ctrl-C in its top level, keeps the finished levels, says
/// so, and run again resumes to the bytes of a build of whole levels; its dry run names the
/// room the pairs take.
#[test]
fn db_build_by_pairs_resumes_an_interrupted_level_to_the_same_bytes() {
    use std::io::{BufRead, Read};
    let root = fresh_dir("by-pairs");
    let (pairs, whole) = (root.join("pairs"), root.join("whole"));
    // `db build` of the 5-house levels up to 24 into `dir`, with `options`.
    let build = |dir: &std::path::Path, options: &[&str]| {
        let mut command = cli_common::command();
        command
            .args(["db", "build", "--houses", "5", "--max-seeds", "24", "--dir"])
            .arg(dir)
            .args(options)
            .env("KALAH_PROGRESS_EVERY", "0");
        command
    };
    let out = build(&pairs, &["--by-pairs", "--dry-run"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains("of pairs while a level is built"),
        "{out:?}"
    );
    // Stopped when level 23 is reported done: the top level, the largest, is under way.
    let (mut child, mut stderr) =
        cli_common::spawn_reading_stderr(&mut build(&pairs, &["--by-pairs", "--yes"]));
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap() > 0 && !line.starts_with("  level 23:") {
        line.clear();
    }
    assert!(
        line.starts_with("  level 23:"),
        "the build ended before its top level"
    );
    cli_common::interrupt(&child);
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(
        rest.contains(
            "the pairs of tables finished in the level under way and every finished level are kept"
        ),
        "{rest}"
    );
    let top = kalah::db::level_file_name(5, kalah::Rules::Standard, 24);
    assert!(!pairs.join(&top).exists());
    // Run again, it resumes; the files are those of a build of whole levels, and the pair
    // files are gone.
    for (dir, options) in [(&pairs, &["--by-pairs", "--yes"][..]), (&whole, &["--yes"])] {
        let out = build(dir, options).output().unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    let names = |dir: &std::path::Path| {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(names(&pairs), names(&whole));
    for name in names(&whole).iter().filter(|n| n.ends_with(".kdb")) {
        let read = |dir: &std::path::Path| std::fs::read(dir.join(name)).unwrap();
        assert!(read(&pairs) == read(&whole), "{name} differs");
    }
    let _ = std::fs::remove_dir_all(root);
}

/// The dry run of a resumed build by pairs counts only the pair files still to write: with
/// every pair of its top level already on disk, it names no room for pairs.
#[test]
fn db_build_by_pairs_counts_the_pair_files_already_written() {
    let dir = fresh_dir("by-pairs-room");
    let build = |options: &[&str]| {
        let out = cli_common::command()
            .args(["db", "build", "--houses", "5", "--by-pairs", "--dir"])
            .arg(&dir)
            .args(options)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    build(&["--max-seeds", "12", "--yes"]);
    let dry_run = || build(&["--max-seeds", "13", "--dry-run"]);
    assert!(dry_run().contains("of pairs while a level is built"));
    // A stand-in as long as the level's pairs with a header (the dry run reads only lengths).
    let rules = kalah::Rules::Standard;
    let name = kalah::db::distributed::pair_file_name(5, rules, 13, 0);
    let stand_in = std::fs::File::create(dir.join(name)).unwrap();
    stand_in.set_len(kalah::db::level_len(5, 13) + 40).unwrap();
    let said = dry_run();
    assert!(!said.contains("of pairs"), "{said}");
    let _ = std::fs::remove_dir_all(dir);
}

/// `kalah solve -m 4 -n 3` with each case's options fails, saying what the case expects.
fn solve_4_3_refuses(cases: &[(&[&str], &str)]) {
    for (args, says) in cases {
        let mut all = vec!["solve", "-m", "4", "-n", "3"];
        all.extend_from_slice(args);
        let out = kalah(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(says),
            "{args:?}: {err}"
        );
    }
}

/// `--at-least V` against the naive solver: on positions of Kalah(3,2) and (4,2) played at
/// random, both rules, every V around the value gets yes exactly when the value is at least V,
/// and bounds that hold the value; V past every margin is answered from the seeds.
#[test]
fn at_least_agrees_with_the_naive_solver() {
    use kalah::reference::RefPosition;
    let mut rng = kalah::Rng::new(46);
    for rules in kalah::Rules::ALL {
        for (m, n) in [(3, 2), (4, 2)] {
            let start = kalah::AnyPosition::start(kalah::Variant::new(m, n, rules).unwrap());
            let setup: kalah::Setup = start.to_string().parse().unwrap();
            let mut pos = RefPosition::from_setup(&setup, rules);
            for _ in 0..3 {
                if pos.is_over() {
                    break;
                }
                let value = common::naive_value(&pos, &mut Default::default());
                let literal = pos.to_setup().to_string();
                for v in value - 3..=value + 3 {
                    let at_least = v.to_string();
                    let said = json(&[
                        "analyze",
                        &literal,
                        "--rules",
                        rules.as_str(),
                        "--at-least",
                        &at_least,
                        "--no-book",
                        "--json",
                    ]);
                    let context = format!("{literal} {rules} >= {v}: {said}");
                    assert_eq!(said["holds"], value >= v, "{context}");
                    let (lower, upper) = (said["lower"].as_i64(), said["upper"].as_i64());
                    assert!(lower <= Some(i64::from(value)), "{context}");
                    assert!(upper >= Some(i64::from(value)), "{context}");
                    assert_eq!(said["source"], "search", "{context}");
                }
                let moves = pos.moves();
                pos.play(moves[rng.below(moves.len() as u64) as usize]);
            }
        }
    }
    let seeds = json(&["solve", "-m", "4", "-n", "3", "--at-least", "25", "--json"]);
    assert_eq!(seeds["holds"], false);
    assert_eq!(
        (seeds["source"].as_str(), seeds["upper"].as_i64()),
        (Some("seeds"), Some(24))
    );
    solve_4_3_refuses(&[
        (&["--at-least", "65536"], "not in -65535..=65535"),
        (&["--at-least", "1", "--value-only"], "cannot be used with"),
        (
            &["--at-least", "1", "--algorithm", "scout"],
            "only --algorithm mtdf",
        ),
    ]);
}

#[test]
fn bad_input_gives_one_line_and_a_nonzero_exit() {
    let cases: &[(&[&str], &str)] = &[
        (&["show", ""], "empty"),
        (&["show", "<6,0,0,4>"], "expected 15 numbers"),
        (&["show", "<2,0,0,1,x,1,1>"], "South's house 2 is 'x'"),
        (&["show", "<2,0,0,1,1,1,-5>"], "negative"),
        (
            &["show", "<2,0,0,1,1,1,123456789012345678901234567890>"],
            "too large",
        ),
        (
            &["show", "<2,0,0,40000,40000,1,1>"],
            "more than the supported",
        ),
        (&["show", "<13,0,0,1,1>"], "out of range"),
        (
            &["show", "<2,0,0,0,0,1,1>", "--to-move", "north"],
            "game is over",
        ),
        (
            &["show", "<2,0,0,1,1,1,1> south", "--to-move", "north"],
            "says North",
        ),
        (&["show", "<2,0,0,1,1,1,1> up"], "not a side"),
        (&["show", "<2,0,0,1,1,1,1>", "--rules", "awari"], "awari"),
        (&["perft", "-m", "13", "-n", "1", "-d", "1"], "1..=12"),
        (
            &["perft", "-m", "12", "-n", "5000", "-d", "1"],
            "more than the supported",
        ),
        (&["perft", "-m", "6", "-n", "0", "-d", "1"], "1..=32767"),
        (&["perft", "-m", "6", "-n", "4"], "--depth"),
        (&["perft", "-m", "6", "-n", "4", "-d", "-1"], "-1"),
        (
            &["perft", START_6_4, "-m", "6", "-n", "4", "-d", "1"],
            "cannot be used with",
        ),
        (&["moves"], "POSITION"),
        (&["frobnicate"], "frobnicate"),
    ];
    for (args, needle) in cases {
        let out = kalah(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("kalah: "), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr} lacks {needle}");
        assert!(!stderr.contains("panicked"), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn help_teaches_the_notation_and_limits() {
    let out = kalah(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("<m,south_store,north_store"));
    assert!(text.contains("1 to 12 houses"));
    assert!(text.contains("empty-capture"));
}

#[test]
fn completions_are_generated_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = kalah(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        // Every script names the program and offers its subcommands, nested ones included.
        for word in ["kalah", "solve", "query", "build"] {
            assert!(script.contains(word), "{shell} completions lack {word}");
        }
    }
    let bash = String::from_utf8(kalah(&["completions", "bash"]).stdout).unwrap();
    assert!(
        bash.contains("complete -F _kalah"),
        "a bash completion function"
    );
    assert!(bash.contains("--max-seeds"), "options are completed too");
    let out = kalah(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_man_page_is_roff_and_names_the_commands() {
    let out = kalah(&["man"]);
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    let header = page
        .lines()
        .find(|l| !l.starts_with(".ie") && !l.starts_with(".el"));
    assert!(
        header.is_some_and(|l| l.starts_with(".TH kalah 1")),
        "a roff title line: {}",
        &page[..page.len().min(200)]
    );
    assert!(page.contains(".SH NAME") && page.contains(".SH SYNOPSIS"));
    for command in [
        "show",
        "solve",
        "analyze",
        "query",
        "db",
        "play",
        "match",
        "completions",
    ] {
        assert!(
            page.contains(&format!("kalah\\-{command}(1)")),
            "the page names {command}"
        );
    }
    // `kalah help` is clap's own, not a command with a page.
    assert!(!page.contains("kalah\\-help"));

    let dir = fresh_dir("man");
    let out = kalah(&["man", "--dir", dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    for name in [
        "kalah.1",
        "kalah-solve.1",
        "kalah-db.1",
        "kalah-db-build.1",
        "kalah-man.1",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    assert!(
        names.iter().all(|n| n.ends_with(".1")),
        "no temporaries: {names:?}"
    );
    let solve = std::fs::read_to_string(dir.join("kalah-solve.1")).unwrap();
    assert!(solve.contains(".TH kalah-solve 1") && solve.contains("\\-\\-value\\-only"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn solve_and_analyze_agree_and_print_the_documented_json() {
    for rules in ["standard", "empty-capture"] {
        let solve = json(&[
            "solve",
            "-m",
            "4",
            "-n",
            "3",
            "--rules",
            rules,
            "--all-moves",
            "--json",
            "--threads",
            "2",
        ]);
        let analyze = json(&[
            "analyze",
            "<4,0,0,3,3,3,3,3,3,3,3>",
            "--rules",
            rules,
            "--json",
            "--threads",
            "1",
        ]);
        for key in ["value", "best", "moves", "pv", "rules", "to_move"] {
            assert_eq!(solve[key], analyze[key], "{rules}: {key}");
        }
        assert_eq!(solve["variant"], "Kalah(4,3)");
        assert_eq!(solve["to_move"], "south");
        assert!(solve["nodes"].as_u64().unwrap() > 0);
        assert!(solve["time_ms"].is_u64());
        // The best moves' values equal the value; no move is worth more.
        let value = solve["value"].as_i64().unwrap();
        for m in solve["moves"].as_array().unwrap() {
            let v = m["value"].as_i64().unwrap();
            let best = solve["best"].as_array().unwrap().contains(&m["house"]);
            assert!(v <= value && (v == value) == best, "{rules}: {m}");
        }
        // Without --all-moves: the same value, best moves and line.
        let quick = json(&["solve", "-m", "4", "-n", "3", "--rules", rules, "--json"]);
        for key in ["value", "best", "pv"] {
            assert_eq!(solve[key], quick[key], "{rules}: {key}");
        }
    }
}

#[test]
fn the_deepening_changes_nothing_but_the_work_and_is_bounded() {
    let solve = |deepening: Option<&str>| {
        let mut args = vec![
            "solve",
            "-m",
            "4",
            "-n",
            "4",
            "--all-moves",
            "--memory-db",
            "off",
            "--threads",
            "1",
        ];
        args.extend(deepening.map_or(vec![], |d| vec!["--deepening", d]));
        let text = kalah(&args);
        assert!(text.status.success(), "{args:?}");
        args.push("--json");
        (String::from_utf8(text.stdout).unwrap(), json(&args))
    };
    let (text, usual) = solve(None);
    assert_eq!(usual["deepening"], 15);
    assert!(text.contains(", mtdf\n"), "{text}");
    for (d, said) in [
        ("0", "mtdf, no deepening"),
        ("18", "mtdf, deepening to 18 plies"),
    ] {
        let (text, other) = solve(Some(d));
        assert_eq!(other["deepening"], d.parse::<u32>().unwrap());
        assert!(text.contains(said), "{text}");
        for key in ["value", "best", "moves", "pv"] {
            assert_eq!(other[key], usual[key], "--deepening {d}: {key}");
        }
    }
    let out = kalah(&["solve", "-m", "4", "-n", "4", "--deepening", "61"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("61 is not in 0..=60"), "{err}");
}

#[test]
fn levels_built_in_memory_change_nothing_but_the_work() {
    for rules in ["standard", "empty-capture"] {
        let solve = |memory_db: &str| {
            json(&[
                "solve",
                "-m",
                "4",
                "-n",
                "5",
                "--rules",
                rules,
                "--all-moves",
                "--json",
                "--memory-db",
                memory_db,
            ])
        };
        let (auto, off, more) = (solve("auto"), solve("off"), solve("20"));
        for key in ["value", "best", "moves", "pv"] {
            assert_eq!(auto[key], off[key], "{rules}: {key}");
            assert_eq!(more[key], off[key], "{rules}: {key}");
        }
        // 40 seeds: the levels up to 30 seeds below.
        assert_eq!(auto["db_max_seeds"], 10);
        assert_eq!(auto["db_in_memory"], true);
        assert!(auto["db_build_ms"].is_u64());
        assert_eq!(more["db_max_seeds"], 20);
        assert_eq!(off["db_max_seeds"], serde_json::Value::Null);
        assert_eq!(off["db_in_memory"], false);
        let analyze = |memory_db: &str| {
            json(&[
                "analyze",
                "<4,2,5,0,7,1,4,9,3,6,3>",
                "--rules",
                rules,
                "--json",
                "--memory-db",
                memory_db,
            ])
        };
        let (with, without) = (analyze("16"), analyze("off"));
        for key in ["value", "best", "moves", "pv"] {
            assert_eq!(with[key], without[key], "{rules}: {key}");
        }
    }
    // Small boards build nothing by default.
    let small = json(&["solve", "-m", "4", "-n", "3", "--value-only", "--json"]);
    assert_eq!(small["db_max_seeds"], serde_json::Value::Null);
    // Levels asked for above the board's seeds stop at them (24: Kalah(4,3) solved strongly).
    let whole = json(&["solve", "-m", "4", "-n", "3", "--memory-db", "40", "--json"]);
    assert_eq!(whole["db_max_seeds"], 24);
    assert_eq!(whole["value"], 6);
    solve_4_3_refuses(&[
        (&["--memory-db", "65"], "levels go up to 64"),
        (&["--memory-db", "lots"], "expected a number of seeds"),
        (&["--memory-db", "8", "--db", "."], "cannot be used with"),
    ]);
    // No levels exist past 8 houses: refused up front, not priced by the cost model as if
    // they would be built (the estimate once counted on them) and then failing.
    for extra in [&["--estimate"][..], &[]] {
        let mut all = vec!["solve", "-m", "9", "-n", "2", "--memory-db", "12"];
        all.extend_from_slice(extra);
        let out = kalah(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains("1 to 8 houses"), "{extra:?}: {err}");
        assert!(out.stdout.is_empty(), "{extra:?}");
    }
}

#[test]
fn analyze_counts_the_stores_for_the_side_to_move() {
    // North to move with 5 seeds more in its store: the value includes those 5.
    let with = json(&["analyze", "<3,0,5,1,2,0,2,1,1> north", "--json"]);
    let without = json(&["analyze", "<3,0,0,1,2,0,2,1,1> north", "--json"]);
    assert_eq!(with["to_move"], "north");
    assert_eq!(
        with["value"].as_i64().unwrap(),
        without["value"].as_i64().unwrap() + 5
    );
    let over = json(&["analyze", "<2,3,1,0,0,1,1>", "--json"]);
    assert_eq!(over["to_move"], serde_json::Value::Null);
    assert_eq!(over["value"], 0);
    assert_eq!(over["moves"].as_array().unwrap().len(), 0);
}

#[test]
fn solver_input_errors_are_one_line() {
    for (args, needle) in [
        (
            &["solve", "-m", "4", "-n", "3", "--threads", "0"][..],
            "--threads",
        ),
        (
            &["solve", "-m", "4", "-n", "3", "--algorithm", "magic"][..],
            "magic",
        ),
        (&["analyze", "<4,0,0,3>"][..], "expected 11 numbers"),
    ] {
        let out = kalah(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

#[test]
fn db_build_info_verify_and_query_agree_with_analyze() {
    let dir = fresh_dir("cli-db");
    let d = dir.to_str().unwrap();
    let build = [
        "db",
        "build",
        "-m",
        "4",
        "--max-seeds",
        "10",
        "--rules",
        "empty-capture",
        "--dir",
        d,
        "--json",
    ];
    let built = json(&build);
    assert_eq!(built["levels"].as_array().unwrap().len(), 11);
    assert_eq!(built["rules"], "empty-capture");
    // Building again keeps every level.
    let again = json(&build);
    assert!(
        again["levels"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["kept"] == true)
    );

    let info = json(&["db", "info", "--dir", d, "--json"]);
    assert_eq!(info["databases"][0]["houses"], 4);
    assert_eq!(info["databases"][0]["max_level"], 10);
    assert_eq!(info["databases"][0]["entries"], built["entries"]);
    let verified = json(&["db", "verify", "--dir", d, "--all", "--json"]);
    assert_eq!(verified["ok"], true);
    assert_eq!(verified["databases"][0]["checked"], built["entries"]);

    // A position within the database is read from it, one above it is searched; both agree
    // with analyze.
    let positions = ["<4,3,5,1,0,2,3,0,1,1,0> north", "<4,0,0,3,3,3,3,3,3,3,3>"];
    let mut singles = Vec::new();
    for position in positions {
        let q = json(&[
            "query",
            position,
            "--rules",
            "empty-capture",
            "--db",
            d,
            "--json",
        ]);
        let a = json(&["analyze", position, "--rules", "empty-capture", "--json"]);
        for field in ["value", "best", "moves", "pv", "to_move", "position"] {
            assert_eq!(q[field], a[field], "{position} {field}");
        }
        let expected = if position.contains("north") {
            "database"
        } else {
            "search"
        };
        assert_eq!(q["source"], expected);
        singles.push(q);
    }
    // A batch on stdin: each position answered as a query of its own, in order, one JSON
    // object a line; a line that cannot be answered gets an error object, the batch goes on
    // and the exit code is 2.
    let input = format!(
        "# a batch\n{}\n\n{}\n<3,0,0,1,1,1,1,1,1>\nbogus\n",
        positions[0], positions[1]
    );
    let args = [
        "query",
        "-",
        "--rules",
        "empty-capture",
        "--db",
        d,
        "--json",
    ];
    let out = kalah_with_input(&args, &input);
    assert_eq!(out.status.code(), Some(2));
    let answers: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 4, "{answers:?}");
    for (answer, single) in answers.iter().zip(&singles) {
        for field in [
            "value", "best", "moves", "pv", "to_move", "position", "source",
        ] {
            assert_eq!(
                answer[field], single[field],
                "{} {field}",
                single["position"]
            );
        }
    }
    assert_eq!(answers[2]["line"], 5);
    assert!(
        answers[2]["error"]
            .as_str()
            .unwrap()
            .contains("one board size")
    );
    assert_eq!(answers[3]["line"], 6);
    assert!(answers[3]["error"].as_str().unwrap().contains("'bogus'"));
    let good = format!("{}\n{}\n", positions[0], positions[1]);
    assert!(kalah_with_input(&args, &good).status.success());

    // The database of the other rules is not there: a clear error, no answer.
    let out = kalah(&["query", "<4,0,0,1,1,1,1,1,1,1,1>", "--db", d]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no database for 4 houses, standard rules"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    // A damaged level is caught by verify.
    let level = dir.join("kalah-4-empty-capture-010.kdb");
    let mut bytes = std::fs::read(&level).unwrap();
    let i = bytes.len() - 100;
    bytes[i] ^= 0x40;
    std::fs::write(&level, &bytes).unwrap();
    let out = kalah(&["db", "verify", "--dir", d]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("kalah-4-empty-capture-010.kdb: damaged: level 10"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_table_file_carries_a_solve_over_to_the_next_run() {
    let dir = fresh_dir("cli-table");
    let file = dir.join("k44.ktt");
    let f = file.to_str().unwrap();
    let solve = |extra: &[&str]| {
        let mut args = vec!["solve", "-m", "4", "-n", "4", "--json", "--tt-mb", "16"];
        args.extend_from_slice(extra);
        json(&args)
    };
    let fresh = solve(&["--value-only"]);
    let first = solve(&["--value-only", "--table-file", f]);
    assert!(file.exists());
    assert_eq!(first["value"], fresh["value"]);
    // The second run starts from the saved table: the root is already proven.
    let second = solve(&["--value-only", "--table-file", f]);
    assert_eq!(second["value"], fresh["value"]);
    assert!(
        second["nodes"].as_u64().unwrap() * 10 < first["nodes"].as_u64().unwrap(),
        "{} then {}",
        first["nodes"],
        second["nodes"]
    );
    // A full solve and an analysis with the same file give what they give without it.
    let full = solve(&["--all-moves", "--table-file", f]);
    let plain = solve(&["--all-moves"]);
    for key in ["value", "best", "moves", "pv"] {
        assert_eq!(full[key], plain[key], "{key}");
    }
    let position = "<4,2,5,0,7,1,4,9,3,6,3> north";
    let with = json(&["analyze", position, "--json", "--table-file", f]);
    let without = json(&["analyze", position, "--json"]);
    for key in ["value", "best", "moves", "pv"] {
        assert_eq!(with[key], without[key], "{key}");
    }
    // Another variant, another size, another algorithm: refused before any work.
    for (args, says) in [
        (
            &["--rules", "empty-capture"][..],
            "not 4 houses, empty-capture",
        ),
        (&["--tt-mb", "32"][..], "but --tt-mb asks for 32"),
        (&["--algorithm", "alphabeta"][..], "has none"),
    ] {
        let mut all = vec!["solve", "-m", "4", "-n", "4", "--table-file", f];
        all.extend_from_slice(args);
        let out = kalah(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // A damaged file is an error, not a wrong answer.
    let mut bytes = std::fs::read(&file).unwrap();
    let i = bytes.len() / 2;
    bytes[i] ^= 0x01;
    std::fs::write(&file, &bytes).unwrap();
    let out = kalah(&["solve", "-m", "4", "-n", "4", "--table-file", f]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("damaged"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn ctrl_c_saves_the_table_before_the_solve_ends() {
    use std::io::BufRead;
    let dir = fresh_dir("cli-interrupt");
    let file = dir.join("k64.ktt");
    let f = file.to_str().unwrap();
    // A small first solve makes the file, so that the long one says when it has loaded it (and
    // so is past the point where Ctrl-C would still end it at once).
    let args = ["--tt-mb", "16", "--table-file", f];
    let mut small = vec!["analyze", "<6,0,0,1,0,0,2,0,1,0,1,0,3,0,0>"];
    small.extend_from_slice(&args);
    assert!(kalah(&small).status.success());
    let (mut child, mut stderr) = cli_common::spawn_reading_stderr(
        cli_common::command()
            .args("solve -m 6 -n 4 --value-only --memory-db off --no-book".split(' '))
            .args(args),
    );
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.starts_with("table loaded from"), "{line}");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(
        rest.contains("interrupted after") && rest.contains("saving the table first"),
        "{rest}"
    );
    assert!(rest.contains("the same command resumes from it"), "{rest}");
    // The saved table is whole: it loads, and answers as before.
    let mut again = small.clone();
    again.push("--json");
    let with = json(&again);
    let without = json(&["analyze", small[1], "--json"]);
    for key in ["value", "best", "moves", "pv"] {
        assert_eq!(with[key], without[key], "{key}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// Hostile input: endless lines, bytes that are not text, files that are not files
// ---------------------------------------------------------------------------------------------

/// Checks a refusal: exit code 2, one line on stderr that says `says`, nothing on stdout.
fn refused(run: &Watched, says: &[&str]) {
    let stderr = run.stderr();
    assert_eq!(run.output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    for needle in says {
        assert!(stderr.contains(needle), "{stderr} lacks {needle}");
    }
}

#[test]
fn a_query_batch_survives_an_endless_line_and_a_line_that_is_not_utf8() {
    let positions = ["<3,0,0,1,2,0,0,1,1>", "<3,4,2,0,0,1,1,0,1> north"];
    let zeros = vec![0u8; 32 << 20];
    // Lines 2 to 5: a position, an escape sequence, bytes that are not UTF-8, a position.
    let mut rest = format!("\n{}\n\u{1b}[2J\n", positions[0]).into_bytes();
    rest.extend_from_slice(b"\xff\xfe garbage\n");
    rest.extend_from_slice(format!("{}\n", positions[1]).as_bytes());
    let args = ["query", "-", "--tt-mb", "16", "--json"];
    let run = kalah_watched(&args, vec![zeros, rest], LIMIT);
    let stderr = run.stderr();
    assert_eq!(run.output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("3 lines of the input"), "{stderr}");
    let answers: Vec<serde_json::Value> = run
        .stdout()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 5, "{answers:?}");
    assert_eq!(answers[0]["line"], 1);
    let long = answers[0]["error"].as_str().unwrap();
    assert!(long.contains(&format!("{} bytes", 32 << 20)), "{long}");
    assert_eq!(answers[1]["position"], positions[0]);
    assert_eq!(answers[2]["line"], 3);
    let bad = answers[2]["error"].as_str().unwrap();
    assert!(bad.contains("invalid position '\\u{1b}[2J"), "{bad}");
    assert_eq!(answers[3]["line"], 4);
    assert!(answers[3]["error"].as_str().unwrap().contains("not UTF-8"));
    assert_eq!(answers[4]["position"], positions[1]);
    // The 32 MiB line was never held: the process stayed small while reading it.
    if let Some(Some(kib)) = run.peak_kib.first() {
        assert!(*kib < 24 << 10, "{kib} KiB after the long line");
    }

    // Without --json: one line on stderr for each bad line, the answers on stdout.
    let args = ["query", "-", "--tt-mb", "16"];
    let input = format!(
        "{}\n\u{7}\u{1b}]0;x\n{}\n",
        "9".repeat(1 << 20),
        positions[0]
    );
    let run = kalah_watched(&args, vec![input.into_bytes()], LIMIT);
    let stderr = run.stderr();
    assert_eq!(run.output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 3, "{stderr}");
    assert!(
        stderr.starts_with("kalah: line 1: line too long"),
        "{stderr}"
    );
    assert!(stderr.contains("kalah: line 2: invalid position '\\u{7}\\u{1b}]0;x'"));
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
    assert!(run.stdout().contains("value"), "{}", run.stdout());
}

#[cfg(unix)]
#[test]
fn records_that_are_not_regular_files_are_refused_at_once() {
    let dir = fresh_dir("cli-not-files");
    let fifo = dir.join("game.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.unwrap().success());
    let fifo = fifo.to_str().unwrap();
    let no_input = || vec![];
    for args in [
        vec!["replay", fifo],
        vec!["play", "--resume", fifo],
        vec!["replay", "/dev/zero"],
        vec!["play", "--resume", "/dev/zero"],
        vec!["replay", dir.to_str().unwrap()],
    ] {
        let run = kalah_watched(&args, no_input(), LIMIT);
        let what = if args.contains(&fifo) {
            "is a FIFO, not a regular file"
        } else if args.contains(&"/dev/zero") {
            "is a device, not a regular file"
        } else {
            "is a directory, not a regular file"
        };
        refused(&run, &[what, args.last().unwrap()]);
        assert!(run.output.stdout.is_empty(), "{args:?}");
    }
    // A learner's memory must be a file too.
    let learner = format!("learner:{fifo}");
    let args = [
        "play", "-m", "3", "-n", "2", "--south", &learner, "--north", "random",
    ];
    let run = kalah_watched(&args, no_input(), LIMIT);
    refused(&run, &["is a FIFO, not a regular file", fifo]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_record_above_the_bound_or_not_text_is_refused_before_it_is_read() {
    let dir = fresh_dir("cli-big-record");
    let big = dir.join("big.txt");
    // Sparse: the size is what counts, nothing is written.
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(kalah::play::record::MAX_RECORD_BYTES + 1)
        .unwrap();
    drop(file);
    for args in [
        vec!["replay", big.to_str().unwrap()],
        vec!["play", "--resume", big.to_str().unwrap()],
    ] {
        let run = kalah_watched(&args, vec![], LIMIT);
        refused(&run, &["too large", "big.txt"]);
    }
    // Not UTF-8 on line 3; a hostile line is shown escaped and cut.
    let binary = dir.join("binary.txt");
    std::fs::write(
        &binary,
        b"variant: Kalah(3,2)\nrules: standard\nsouth \xff\n",
    )
    .unwrap();
    let run = kalah_watched(&["replay", binary.to_str().unwrap()], vec![], LIMIT);
    refused(&run, &["line 3 is not UTF-8 text"]);
    let hostile = dir.join("hostile.txt");
    let line = format!("south 1-\u{1b}[31m{}", "9".repeat(100_000));
    std::fs::write(
        &hostile,
        format!("variant: Kalah(3,2)\nrules: standard\n{line}\n"),
    )
    .unwrap();
    let run = kalah_watched(&["replay", hostile.to_str().unwrap()], vec![], LIMIT);
    refused(&run, &["line 3", "'\\u{1b}[31m999"]);
    assert!(run.stderr().len() < 400, "{}", run.stderr());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn positions_on_the_command_line_are_shown_escaped_and_cut() {
    for position in [
        format!("<6,0,0,{}>", "9".repeat(100_000)),
        "<6,0,0,\u{1b}[31mred>".to_owned(),
        format!("\u{202e}{}", "<".repeat(50_000)),
    ] {
        let out = kalah(&["show", &position]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.len() < 400, "{stderr}");
        assert!(!stderr.contains(['\u{1b}', '\u{202e}']), "{stderr}");
    }
}

/// A bound on every child process of the tests below: a regression that hangs fails instead.
const LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

#[test]
fn out_of_range_numbers_are_one_line_usage_errors_naming_the_option_and_range() {
    // One case per class of option: counts, threads, MiB, seconds and minutes, a port, and
    // the numbers inside player specs. Each is refused by the parser, before any work.
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["solve", "-m", "4", "-n", "3", "--threads", "100000"],
            "--threads",
            "is not in 1..=",
        ),
        (
            &["db", "verify", "--dir", ".", "--threads", "0"],
            "--threads",
            "is not in 1..=",
        ),
        (
            &["solve", "-m", "4", "-n", "3", "--tt-mb", "0"],
            "--tt-mb",
            "is not in 1..=",
        ),
        (
            &["bench", "--tt-mb", "1000000000"],
            "--tt-mb",
            "is not in 1..=",
        ),
        (
            &["match", "random", "random", "-g", "4294967296"],
            "--games",
            "1..=1000000000",
        ),
        (
            &[
                "match",
                "random",
                "random",
                "-g",
                "2",
                "--opening-plies",
                "101",
            ],
            "--opening-plies",
            "0..=100",
        ),
        (&["solve", "-m", "13", "-n", "3"], "--houses", "1..=12"),
        (
            &["perft", "-m", "1", "-n", "9223372036854775808", "-d", "1"],
            "--seeds",
            "1..=32767",
        ),
        (
            &["perft", "-m", "4", "-n", "3", "-d", "4000000000"],
            "--depth",
            "0..=1000",
        ),
        (
            &["db", "verify", "--dir", ".", "--sample", "1099511627777"],
            "--sample",
            "0..=1099511627776",
        ),
        (&["play", "--hint-seeds", "65"], "--hint-seeds", "0..=64"),
        (
            &["replay", "x.txt", "--solve-seeds", "1000"],
            "--solve-seeds",
            "0..=64",
        ),
        (
            &[
                "solve",
                "-m",
                "4",
                "-n",
                "3",
                "--table-file",
                "t",
                "--save-every",
                "4e17",
            ],
            "--save-every",
            "0.01..=1440",
        ),
        (
            &[
                "solve",
                "-m",
                "4",
                "-n",
                "3",
                "--table-file",
                "t",
                "--save-every",
                "NaN",
            ],
            "--save-every",
            "0.01..=1440",
        ),
        (
            &[
                "solve",
                "-m",
                "4",
                "-n",
                "3",
                "--table-file",
                "t",
                "--save-every",
                "-1",
            ],
            "--save-every",
            "0.01..=1440",
        ),
        (
            &["kgp", "--host", "h", "--port", "0"],
            "--port",
            "1..=65535",
        ),
        (
            &[
                "kgp",
                "--host",
                "h",
                "--port",
                "1",
                "--time-per-move",
                "inf",
            ],
            "--time-per-move",
            "0.01..=86400",
        ),
        (
            &["kgp", "--host", "h", "--port", "1", "--retry-delay", "61"],
            "--retry-delay",
            "0..=60",
        ),
        (
            &[
                "kgp",
                "--host",
                "h",
                "--port",
                "1",
                "--retries",
                "4294967295",
            ],
            "--retries",
            "0..=10000",
        ),
        (
            &["mankalah", "--time-budget", "1e300"],
            "--time-budget",
            "0.01..=86400",
        ),
        (
            &["play", "--north", "engine:1e20s"],
            "--north",
            "from 1ms to 86400s",
        ),
        (
            &["match", "alphabeta:31", "random", "-g", "2"],
            "<A>",
            "1 to 30",
        ),
        (
            &["match", "random:-1", "random", "-g", "2"],
            "<A>",
            "from 0 to 18446744073709551615",
        ),
    ];
    for &(args, option, range) in cases {
        let out = kalah_within(args, LIMIT);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains(option) && stderr.contains(range),
            "{args:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // The help states the ranges.
    let help = String::from_utf8_lossy(&kalah(&["solve", "--help"]).stdout).into_owned();
    for range in [
        "1 to 64 (4 a core above 16 cores)",
        "1 to the machine's physical memory",
    ] {
        assert!(help.contains(range), "{range}: {help}");
    }
}

#[test]
fn a_table_file_that_cannot_be_written_is_refused_at_once() {
    let dir = fresh_dir("cli-table-refused");
    let solve = |file: &std::path::Path| {
        let f = file.to_str().unwrap();
        kalah_within(
            &[
                "solve",
                "-m",
                "4",
                "-n",
                "3",
                "--tt-mb",
                "16",
                "--table-file",
                f,
            ],
            LIMIT,
        )
    };
    let refused = |file: &std::path::Path, says: &str| {
        let out = solve(file);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains(file.to_str().unwrap()) && stderr.contains(says),
            "{stderr}"
        );
        assert!(out.stdout.is_empty(), "nothing was solved");
    };
    // A directory that is a file: nothing can be made there, by anyone.
    let blocker = dir.join("file");
    std::fs::write(&blocker, "x").unwrap();
    refused(&blocker.join("t.ktt"), "cannot be written");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // A FIFO or a device would hang the load, or swallow the save.
        let fifo = dir.join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        refused(&fifo, "a FIFO");
        refused(std::path::Path::new("/dev/full"), "a device");
        // A read-only directory (root writes there anyway: then the solve saves as usual).
        let read_only = dir.join("read-only");
        std::fs::create_dir(&read_only).unwrap();
        std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o555)).unwrap();
        let probe = read_only.join("probe");
        if std::fs::write(&probe, "").is_err() {
            refused(&read_only.join("t.ktt"), "cannot be written");
        } else {
            let _ = std::fs::remove_file(&probe);
            assert!(solve(&read_only.join("t.ktt")).status.success());
        }
        std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn a_table_file_save_that_fails_is_an_error_after_the_answer() {
    // A full disk, without root: a limit on the size of the files the process writes (with
    // SIGXFSZ ignored, a write past it fails with EFBIG instead of killing the process).
    let dir = fresh_dir("cli-table-full");
    let file = dir.join("t.ktt");
    let mut command = std::process::Command::new("sh");
    command.args(["-c", "ulimit -f 64; trap '' XFSZ; exec \"$0\" \"$@\""]);
    command.arg(env!("CARGO_BIN_EXE_kalah"));
    command.env(cli_common::DB_HOME_VAR, cli_common::missing_db_home());
    command.args([
        "solve",
        "-m",
        "4",
        "-n",
        "3",
        "--tt-mb",
        "16",
        "--json",
        "--table-file",
    ]);
    command.arg(&file);
    let out = run_within(command, "", LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let last = stderr.lines().last().unwrap();
    assert!(
        last.starts_with("kalah: --table-file") && last.contains("t.ktt"),
        "{stderr}"
    );
    assert!(last.contains("not saved"), "{stderr}");
    assert_eq!(
        stderr.matches("not saved").count(),
        1,
        "said once: {stderr}"
    );
    // The answer was not lost, and no half-written table or temporary is left.
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["value"], 6);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn db_warm_reads_every_level_and_says_how_much_is_in_huge_pages() {
    let dir = fresh_dir("cli-warm");
    let d = dir.to_str().unwrap();
    let built = json(&[
        "db",
        "build",
        "-m",
        "3",
        "--max-seeds",
        "12",
        "--dir",
        d,
        "--json",
    ]);
    let warm = json(&["db", "warm", "--dir", d, "--json"]);
    let levels = warm["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 13, "{warm}");
    let on_disk: u64 = (0..=12)
        .map(|k| {
            std::fs::metadata(dir.join(format!("kalah-3-standard-{k:03}.kdb")))
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(warm["bytes"], on_disk, "{warm} {built}");
    for l in levels {
        assert_eq!(l["houses"], 3);
        assert_eq!(l["rules"], "standard");
        // Small files fit no 2 MiB page; where the OS says, it says at most all of them.
        if let Some(h) = l["huge_bytes"].as_u64() {
            assert!(h <= l["bytes"].as_u64().unwrap(), "{l}");
        }
    }
    let some = json(&["db", "warm", "--dir", d, "--max-level", "4", "--json"]);
    assert_eq!(some["levels"].as_array().unwrap().len(), 5);
    // Levels above the highest built were never built: said so, with how to build them (not
    // "rebuild" a level that was never there).
    let out = cli_common::kalah(&[
        "query",
        "<3,0,0,3,3,3,3,3,3>",
        "--db",
        d,
        "--max-level",
        "16",
    ]);
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("holds the levels 0..=12")
            && stderr.contains("--max-seeds 16")
            && !stderr.contains("rebuild"),
        "{stderr}"
    );
    // The files are unchanged: they still verify.
    let verified = json(&["db", "verify", "--dir", d, "--json"]);
    assert_eq!(verified["ok"], true);
    // A level that is a FIFO is refused at once, named.
    #[cfg(unix)]
    {
        let fifo = dir.join("kalah-3-standard-013.kdb");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let out = cli_common::kalah_within(&["db", "warm", "--dir", d], LIMIT);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("kalah-3-standard-013.kdb"), "{stderr}");
    }
    // --hold: the summary first, then the levels stay mapped until SIGTERM, exit 0.
    #[cfg(target_os = "linux")]
    {
        use std::io::BufRead;
        let mut child = cli_common::command()
            .args([
                "db",
                "warm",
                "--dir",
                d,
                "--max-level",
                "12",
                "--hold",
                "--json",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        stdout.read_line(&mut line).unwrap();
        let summary: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(summary["bytes"], on_disk, "{summary}");
        let maps = std::fs::read_to_string(format!("/proc/{}/maps", child.id())).unwrap();
        assert!(maps.contains("kalah-3-standard-012.kdb"), "{maps}");
        cli_common::terminate(&child);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(stderr.contains("holding 13 level files mapped"), "{stderr}");
    }
    // A directory with no level in it is an error that says so.
    let empty = fresh_dir("cli-warm-empty");
    let out = kalah(&["db", "warm", "--dir", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no level file"));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&empty);
}

#[test]
fn a_search_past_an_hour_says_so_and_points_to_a_campaign_before_it_starts() {
    // No levels and 72 seeds: days by the cost model. Not a terminal, no --long: refused at
    // once, before any level is built in memory.
    for args in [
        &["solve", "-m", "6", "-n", "6", "--no-db", "--no-book"][..],
        &[
            "analyze",
            "<6,0,0,6,6,6,6,6,6,6,6,6,6,6,6>",
            "--no-db",
            "--no-book",
        ][..],
        &[
            "query",
            "<6,0,0,6,6,6,6,6,6,6,6,6,6,6,6>",
            "--memory-db",
            "off",
            "--no-book",
        ][..],
    ] {
        let started = std::time::Instant::now();
        let out = cli_common::kalah(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("by the cost model"), "{err}");
        assert!(
            err.contains("kalah prove '<6,0,0,6,6,6,6,6,6,6,6,6,6,6,6>' --ledger FILE"),
            "{err}"
        );
        assert!(err.contains("--long starts it anyway"), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
    }
    // A search the model puts under an hour starts as before.
    let out = cli_common::kalah(&["solve", "-m", "4", "-n", "3", "--no-db", "--value-only"]);
    assert!(out.status.success());
}

#[test]
fn estimate_says_what_the_cost_model_puts_a_search_at_and_searches_nothing() {
    // Days of search with no levels: answered at once, no --long needed, exit 0.
    let out = cli_common::json(&[
        "solve",
        "-m",
        "6",
        "-n",
        "6",
        "--memory-db",
        "off",
        "--estimate",
        "--json",
        "--threads",
        "2",
    ]);
    assert_eq!(out["variant"], "Kalah(6,6)");
    assert_eq!(out["seeds"], 6, "seeds a house, as in solve's JSON");
    assert_eq!(out["seeds_on_board"], 72);
    assert_eq!(out["levels_top"], serde_json::Value::Null);
    assert_eq!(out["threads"], 2);
    assert!(out["estimated_seconds"].as_u64().unwrap() > 86_400, "{out}");
    // The levels --memory-db would build count, and are not built (a 7-house board of 41
    // seeds: the levels 0..16 would take seconds to build).
    let out = cli_common::kalah(&[
        "analyze",
        "<7,1,0,3,3,3,3,0,4,4,3,3,3,3,3,3,3>",
        "--to-move",
        "north",
        "--memory-db",
        "16",
        "--estimate",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("41 seeds on the board, endgame levels 0..=16 built in memory first"),
        "{text}"
    );
    assert!(text.contains("nothing searched"), "{text}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("building"));
}

#[test]
fn db_build_into_a_file_or_a_device_says_what_it_is() {
    let dir = cli_common::fresh_dir("build-into-file");
    let file = dir.join("afile");
    std::fs::write(&file, "mine\n").unwrap();
    for (target, what) in [
        (file.to_str().unwrap(), "a file"),
        ("/dev/null", "a device"),
    ] {
        let out = cli_common::kalah(&[
            "db",
            "build",
            "--houses",
            "2",
            "--max-seeds",
            "2",
            "--dir",
            target,
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(
            err.contains(&format!("it is {what}, not a directory")),
            "{err}"
        );
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn db_warm_refuses_a_level_file_that_is_not_the_level_its_name_says() {
    let dir = cli_common::fresh_dir("warm-wrong");
    let d = dir.to_str().unwrap();
    let built = cli_common::kalah(&[
        "db",
        "build",
        "--houses",
        "2",
        "--max-seeds",
        "3",
        "--dir",
        d,
    ]);
    assert!(built.status.success());
    let warm = || cli_common::kalah(&["db", "warm", "--dir", d]);
    assert!(warm().status.success());
    let extra = dir.join("kalah-2-standard-004.kdb");
    for (what, make) in [
        ("bad magic", None),
        ("wrong level", Some(dir.join("kalah-2-standard-002.kdb"))),
    ] {
        match make {
            None => std::fs::write(&extra, b"").unwrap(),
            Some(from) => {
                std::fs::copy(from, &extra).unwrap();
            }
        }
        let out = warm();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains("kalah-2-standard-004.kdb") && err.contains(what),
            "{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn db_commands_on_a_directory_that_is_not_there_say_so_with_exit_code_2() {
    for command in ["info", "verify", "warm", "upgrade"] {
        let out = cli_common::kalah(&["db", command, "--dir", "/nonexistent/kalah-db"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command}: {err}");
        assert!(err.contains("no such directory"), "{command}: {err}");
    }
}

#[test]
fn usage_errors_suggest_what_was_meant() {
    let said = |args: &[&str]| {
        let out = cli_common::kalah(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = said(&["solve", "--house", "4", "--seeds", "3"]);
    assert!(err.contains("did you mean `--houses`"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let err = said(&["slove"]);
    assert!(err.contains("`solve`"), "{err}");
    // Numbers separated by spaces: the literal to type instead.
    let err = said(&["query", "4 0 0 3 3 3 3 3 3 3 3"]);
    assert!(
        err.contains("commas") && err.contains("'<4,0,0,3,3,3,3,3,3,3,3>'"),
        "{err}"
    );
    let err = said(&["query", "<4 0 0 3 3 3 3 3 3 3 3> north"]);
    assert!(err.contains("'<4,0,0,3,3,3,3,3,3,3,3> north'"), "{err}");
    // A file that is not a game record is called so.
    let readme = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let err = said(&["replay", readme]);
    assert!(err.contains("is not a game record"), "{err}");
    // --bind takes a host name.
    let err = said(&["serve", "--bind", "localhost:99999"]);
    assert!(err.contains("port"), "{err}");
}

#[test]
fn ctrl_c_of_a_solve_says_what_it_searched() {
    let out = cli_common::interrupted_after(
        cli_common::command()
            .args([
                "solve",
                "-m",
                "6",
                "-n",
                "5",
                "--no-db",
                "--memory-db",
                "off",
                "--no-book",
            ])
            .args(["--tt-mb", "16", "--threads", "1", "--long"]),
        std::time::Duration::from_millis(1500),
    );
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("interrupted after") && err.contains("no value"),
        "{err}"
    );
    assert!(!err.contains("saving the table"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn ctrl_c_of_analyze_query_match_and_replay_says_what_was_kept() {
    use std::io::{BufRead, Write};
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let stderr_of = |out: &std::process::Output| String::from_utf8_lossy(&out.stderr).into_owned();
    // analyze, in its search: what it searched, no value.
    let out = cli_common::interrupted_after(
        cli_common::command()
            .args([
                "analyze",
                "<6,5,5,5,5,5,5,5,5,5,5,5,5,0,0>",
                "--no-db",
                "--no-book",
            ])
            .args([
                "--memory-db",
                "off",
                "--tt-mb",
                "16",
                "--threads",
                "1",
                "--long",
            ]),
        Duration::from_millis(1500),
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("no value"), "{}", stderr_of(&out));
    assert!(out.stdout.is_empty());
    // query -, waiting for its next line after an answer (its search's own handling over):
    // it stops at once and says the lines before are answered.
    let mut child = cli_common::command()
        .args([
            "query",
            "-",
            "--no-db",
            "--json",
            "--tt-mb",
            "16",
            "--threads",
            "1",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(b"<4,3,3,3,3,3,3,3,3,0,0>\n").unwrap();
    input.flush().unwrap();
    let mut answer = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut answer)
        .unwrap();
    assert!(answer.contains("\"value\":-2"), "{answer}");
    cli_common::interrupt(&child);
    let out = cli_common::wait_within(child, Duration::from_secs(30));
    drop(input);
    assert_eq!(out.status.code(), Some(130), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("every line before is answered"),
        "{}",
        stderr_of(&out)
    );
    // match: the games over are counted, their records kept whole, those in flight dropped.
    let dir = cli_common::fresh_dir("match-interrupted");
    let child = cli_common::command()
        .args([
            "match", "perfect", "greedy", "-m", "4", "-n", "4", "--games", "200",
        ])
        .args(["--no-book", "--threads", "1", "--record"])
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !dir.join("game-0002.txt").exists() {
        assert!(started.elapsed() < Duration::from_secs(120), "no game over");
        std::thread::sleep(Duration::from_millis(20));
    }
    cli_common::interrupt(&child);
    let out = cli_common::wait_within(child, Duration::from_secs(30));
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let over: usize = err
        .split("interrupted after ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        err.contains("of 200 games") && err.contains("dropped"),
        "{err}"
    );
    let records: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| !name.starts_with('.'))
        .collect();
    assert!(
        over >= 2 && records.len() == over,
        "{over} games over, records {records:?}"
    );
    for name in &records {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(
            kalah::play::record::Record::parse(&text).is_ok(),
            "{name}: {text}"
        );
    }
    // replay, valuing a Kalah(6,6) game by search: how far it got, nothing printed.
    let game = cli_common::fresh_dir("replay-interrupted");
    let made = cli_common::command()
        .args([
            "match", "random", "random", "-m", "6", "-n", "6", "--games", "1",
        ])
        .arg("--record")
        .arg(&game)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", stderr_of(&made));
    let out = cli_common::interrupted_after(
        cli_common::command()
            .arg("replay")
            .arg(game.join("game-0001.txt"))
            .args(["--no-db", "--solve-seeds", "60"]),
        Duration::from_millis(2000),
    );
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted after valuing") && err.contains("nothing printed"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&game);
}

/// What the answers say of themselves reads right: one thread is `1 thread`, a quick match
/// takes some milliseconds (never `0.00 s`), `--estimate` of levels not on this machine is
/// the figure for them once built, and `solve --help` does not cap exact solving at 6 houses.
#[test]
fn small_answers_say_what_they_mean() {
    for asked in ["--at-least=1", "--value-only"] {
        let args = [
            "solve",
            "-m",
            "4",
            "-n",
            "3",
            asked,
            "--threads",
            "1",
            "--no-db",
        ];
        let out = kalah(&args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        assert!(
            text.contains(" 1 thread, ") && !text.contains("1 threads"),
            "{text}"
        );
    }

    let out = kalah(&["match", "greedy", "greedy", "--games", "2"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let time = text
        .lines()
        .find(|l| l.starts_with("time: "))
        .expect("a time line");
    assert!(!time.contains("0.00 s"), "{time}");

    let out = cli_common::command()
        .env(cli_common::DB_HOME_VAR, cli_common::missing_db_home())
        .args([
            "solve",
            "-m",
            "7",
            "-n",
            "4",
            "--max-level",
            "22",
            "--estimate",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("endgame levels 0..=22 (not here"), "{text}");

    let help = String::from_utf8_lossy(&kalah(&["solve", "--help"]).stdout).into_owned();
    assert!(!help.contains("practical up to about 6"), "{help}");
}

/// Under an address-space limit (`ulimit -v`) too small for its threads, `query` ends with one
/// line saying what it could not start (the solver's workers, its table, the progress thread),
/// never with a panic ("failed to spawn thread") nor waiting forever; with room, it answers.
/// The limits are scanned: where each refusal falls depends on the build.
#[cfg(unix)]
#[test]
fn a_thread_that_cannot_be_started_is_a_clear_error() {
    let kalah = cli_common::command().get_program().to_owned();
    let (mut refused, mut answered) = (0, 0);
    for mib in (40..=120).step_by(4) {
        let mut command = std::process::Command::new("sh");
        command
            .arg("-c")
            .arg(format!(
                "ulimit -v {} && exec \"$0\" query '<4,0,0,3,3,3,3,3,3,3,3>'",
                mib * 1024
            ))
            .arg(&kalah)
            .env(cli_common::DB_HOME_VAR, cli_common::missing_db_home())
            .env(cli_common::KEY_VAR, cli_common::test_key());
        let out = cli_common::run_within(command, "", std::time::Duration::from_secs(60));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{mib} MiB: {stderr}");
        match out.status.code() {
            Some(0) => answered += 1,
            Some(1) if stderr.starts_with("kalah: cannot") => {
                assert_eq!(stderr.trim().lines().count(), 1, "{mib} MiB: {stderr}");
                refused += 1;
            }
            // An allocation refused elsewhere, at the very edge of the limit, still aborts
            // (std gives no way to refuse it); never a panic or a wait.
            _ => assert!(
                stderr.contains("memory allocation of"),
                "{mib} MiB: {stderr}"
            ),
        }
    }
    assert!(
        refused > 0 && answered > 0,
        "{refused} refused, {answered} answered"
    );
}
