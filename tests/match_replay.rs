//! Matches and replays: the arena's pairing and statistics, `kalah match` and `kalah replay`.

use std::path::{Path, PathBuf};

use kalah::play::arena::{GameResult, MatchConfig, MatchStats, play_match};
use kalah::play::record::Record;
use kalah::play::{GameRules, PlayRules, PlayerSpec, Resources};
use kalah::{AnyPosition, Rules, Side, Solver, SolverConfig, with_position};

mod cli_common;
use cli_common::{fresh_dir, json, json_and_stderr, kalah, kalah_within, run_within};

fn rules(houses: usize, seeds: u32, rules: PlayRules, pie: bool) -> GameRules {
    GameRules {
        houses,
        seeds,
        rules,
        pie,
    }
}

/// A match's games, in order (the arena keeps none: they are collected as they end), and its
/// totals.
struct Played {
    games: Vec<GameResult>,
    stats: MatchStats,
}

fn run_match(a: &str, b: &str, config: &MatchConfig) -> Played {
    let (a, b): (PlayerSpec, PlayerSpec) = (a.parse().unwrap(), b.parse().unwrap());
    let games = std::sync::Mutex::new(Vec::new());
    let on_game = |g: &GameResult| games.lock().unwrap().push(g.clone());
    let report = play_match(&a, &b, config, &Resources::default(), &|_| {}, &on_game).unwrap();
    let mut games = games.into_inner().unwrap();
    games.sort_by_key(|g| g.index);
    assert_eq!(MatchStats::of(&games), report.stats);
    Played {
        games,
        stats: report.stats,
    }
}

fn small_solver(houses: usize, rules: Rules) -> Solver {
    let config = SolverConfig {
        threads: 1,
        tt_mib: 16,
        ..SolverConfig::default()
    };
    Solver::new(houses, rules, config).unwrap()
}

#[test]
fn perfect_never_loses_to_random() {
    for r in ["standard", "empty-capture"] {
        let v = json(&[
            "match", "perfect", "random", "--games", "20", "--houses", "4", "--seeds", "3",
            "--rules", r, "--json",
        ]);
        assert_eq!(v["games"], 20);
        assert_eq!(v["losses"], 0, "{r}: {v}");
        assert_eq!(
            v["wins"].as_u64().unwrap() + v["draws"].as_u64().unwrap(),
            20
        );
        assert_eq!(v["variant"], "Kalah(4,3)");
        assert_eq!(v["rules"], r);
        assert_eq!(v["pie"], false);
        assert_eq!(
            (v["a"].as_str(), v["b"].as_str()),
            (Some("perfect"), Some("random"))
        );
        assert_eq!(
            v["seeds_a"].as_u64().unwrap() + v["seeds_b"].as_u64().unwrap(),
            20 * 24
        );
        assert!(v["margin_mean"].as_f64().unwrap() > 0.0);
        assert!(v["margin_ci95"].as_f64().unwrap() >= 0.0);
        assert!(v["time_ms"].is_u64());
    }
}

/// Builds the 5-house levels up to 10 (standard rules) into `dir`, as `solve` would build them
/// in memory for Kalah(5,4).
fn build_levels_5_10(dir: &Path) {
    let dir = dir.to_str().unwrap();
    let built = kalah(&[
        "db",
        "build",
        "--houses",
        "5",
        "--max-seeds",
        "10",
        "--dir",
        dir,
    ]);
    assert!(built.status.success());
}

#[test]
fn a_perfect_player_without_db_files_builds_the_small_levels_in_memory() {
    // Kalah(5,4): 40 seeds, the levels up to 10 (as `solve` builds them).
    let dir = fresh_dir("match-memory-levels");
    let d = dir.to_str().unwrap();
    build_levels_5_10(&dir);
    let args = [
        "match", "perfect", "greedy", "--games", "2", "-m", "5", "-n", "4", "--json",
    ];
    let (memory, stderr) = json_and_stderr(&args);
    assert!(
        stderr.contains("endgame levels 0..=10 built in memory for the perfect player"),
        "{stderr}"
    );
    let mut with_files = args.to_vec();
    with_files.extend(["--db", d]);
    let files = json(&with_files);
    for key in ["wins", "draws", "losses", "seeds_a", "seeds_b"] {
        assert_eq!(memory[key], files[key], "{key}");
    }
    assert_eq!(memory["losses"], 0);
    // Without a perfect player nothing is built.
    let out = kalah(&[
        "match", "greedy", "random", "--games", "2", "-m", "5", "-n", "4",
    ]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("built in memory"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_replay_that_searches_big_boards_builds_the_small_levels_in_memory() {
    // Kalah(5,4): 40 seeds; searching boards of up to 40 seeds, the replay builds the levels
    // up to 10, and values every sowing as it does with those levels on disk.
    let dir = fresh_dir("match-replay-memory-levels");
    let d = dir.to_str().unwrap();
    let levels = dir.join("levels");
    build_levels_5_10(&levels);
    json(&[
        "match", "greedy", "random:3", "--games", "1", "-m", "5", "-n", "4", "--record", d,
        "--json",
    ]);
    let file = record_path(&dir, 1);
    let file = file.to_str().unwrap();
    let (memory, stderr) = json_and_stderr(&["replay", file, "--solve-seeds", "40", "--json"]);
    assert!(
        stderr.contains("endgame levels 0..=10 built in memory for the replay"),
        "{stderr}"
    );
    let moves = memory["moves"].as_array().unwrap();
    assert!(moves.iter().all(|m| m["value"].is_i64()));
    let mut files = json(&[
        "replay",
        file,
        "--solve-seeds",
        "40",
        "--json",
        "--db",
        levels.to_str().unwrap(),
    ]);
    // The same values; only where the levels came from differs.
    assert_eq!(memory["db"]["dir"], serde_json::Value::Null);
    assert_eq!(files["db"]["dir"], levels.to_str().unwrap());
    let mut memory = memory;
    memory["db"] = serde_json::Value::Null;
    files["db"] = serde_json::Value::Null;
    assert_eq!(memory, files);
    // Searching boards of up to 30 seeds only, nothing is built.
    let out = kalah(&["replay", file, "--json"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("built in memory"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn perfect_gets_at_least_the_value_after_the_opening() {
    // Whatever the random opening and the random opponent, the perfect player ends with at
    // least the exact value of the position the opening left, from its side.
    for capture in Rules::ALL {
        let config = MatchConfig {
            rules: rules(4, 3, PlayRules::Kalah(capture), false),
            games: 12,
            opening_plies: 3,
            seed: 11,
        };
        let report = run_match("perfect", "random", &config);
        let solver = small_solver(4, capture);
        for g in &report.games {
            let start = g.game.truncated(g.opening);
            let pos = AnyPosition::from_setup(&start.state().to_setup(), capture).unwrap();
            let (value, _) = with_position!(pos, p => solver.best_move(&p))
                .unwrap()
                .unwrap();
            let to_move = start.state().to_move().unwrap();
            let for_a = if to_move == start.side_of(g.a_seat) {
                value
            } else {
                -value
            };
            assert!(
                g.margin_a >= for_a,
                "{capture} game {}: A ends {:+}, the value after the opening is {for_a:+}",
                g.index,
                g.margin_a
            );
        }
    }
}

#[test]
fn perfect_against_itself_ends_with_the_solved_value() {
    // Kalah(4,3): South wins by 6 under standard rules, by 8 under empty-capture.
    for (capture, value) in [(Rules::Standard, 6), (Rules::EmptyCapture, 8)] {
        let config = MatchConfig {
            rules: rules(4, 3, PlayRules::Kalah(capture), false),
            games: 2,
            opening_plies: 0,
            seed: 1,
        };
        let report = run_match("perfect", "perfect", &config);
        for g in &report.games {
            assert_eq!(g.opening, 0);
            assert_eq!(
                g.game.state().store_difference(Side::South),
                value,
                "{capture}"
            );
        }
        assert_eq!(report.games[0].margin_a, value);
        assert_eq!(report.games[1].margin_a, -value);
        assert_eq!(report.stats.margin_mean, 0.0);
    }
}

#[test]
fn games_pair_up_with_sides_exchanged_and_an_odd_count_adds_one_game() {
    let config = MatchConfig {
        rules: rules(6, 4, PlayRules::Kalah(Rules::Standard), false),
        games: 5,
        opening_plies: 2,
        seed: 3,
    };
    let report = run_match("greedy", "alphabeta:2", &config);
    assert_eq!(report.stats.games, 5);
    for (i, g) in report.games.iter().enumerate() {
        assert_eq!(g.index, i);
        assert_eq!(g.a_started_south(), i % 2 == 0);
        assert_eq!(g.opening, 2);
        let first: Vec<_> = g.game.actions()[..2].iter().map(|&(_, a)| a).collect();
        let pair: Vec<_> = report.games[i - i % 2].game.actions()[..2]
            .iter()
            .map(|&(_, a)| a)
            .collect();
        assert_eq!(first, pair, "both games of a pair share the opening");
    }
    let s = report.stats;
    assert_eq!(s.wins + s.draws + s.losses, 5);
    assert_eq!(s.seeds_a + s.seeds_b, 5 * 48);
    assert!(s.nodes_a.is_none() && s.nodes_b.is_some());
}

#[test]
fn results_do_not_depend_on_the_threads() {
    let config = MatchConfig {
        rules: rules(5, 3, PlayRules::Kalah(Rules::EmptyCapture), true),
        games: 6,
        opening_plies: 2,
        seed: 9,
    };
    let actions = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let report = pool.install(|| run_match("alphabeta:3", "random", &config));
        report
            .games
            .iter()
            .map(|g| g.game.actions().to_vec())
            .collect::<Vec<_>>()
    };
    assert_eq!(actions(1), actions(2));
}

#[test]
fn alphabeta_plays_the_games_of_minimax_with_fewer_nodes() {
    let config = MatchConfig {
        rules: rules(6, 4, PlayRules::Kalah(Rules::Standard), false),
        games: 6,
        opening_plies: 2,
        seed: 5,
    };
    let ab = run_match("alphabeta:4", "random:7", &config);
    let mm = run_match("minimax:4", "random:7", &config);
    for (x, y) in ab.games.iter().zip(&mm.games) {
        assert_eq!(x.game.actions(), y.game.actions(), "game {}", x.index);
        assert!(x.nodes_a.unwrap() < y.nodes_a.unwrap(), "game {}", x.index);
    }
    assert!(ab.stats.nodes_a.unwrap() < mm.stats.nodes_a.unwrap());
    // The command line reports the node counts of each game.
    let v = json(&[
        "match",
        "alphabeta:3",
        "random:7",
        "--games",
        "2",
        "--verbose",
        "--json",
    ]);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r["nodes_a"].as_u64().unwrap() > 0));
    assert!(results.iter().all(|r| r["nodes_b"].is_null()));
    assert!(v["nodes_a"].as_u64().unwrap() > 0);
}

#[test]
fn human_and_impossible_players_are_refused() {
    for args in [
        &["match", "human", "random", "--games", "2"][..],
        &[
            "match",
            "random",
            "perfect",
            "--games",
            "2",
            "--rules",
            "awari-basic",
        ],
        &["match", "random", "alphabeta:0", "--games", "2"],
        &["match", "random", "greedy", "--games", "0"],
    ] {
        let out = kalah(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(out.stdout.is_empty());
    }
}

fn record_path(dir: &Path, game: u64) -> PathBuf {
    dir.join(format!("game-{game:04}.txt"))
}

#[test]
fn match_records_replay_to_the_same_final_position() {
    let dir = fresh_dir("match-records");
    let d = dir.to_str().unwrap();
    let v = json(&[
        "match",
        "alphabeta:2",
        "random",
        "--games",
        "6",
        "--houses",
        "5",
        "--seeds",
        "3",
        "--pie",
        "--record",
        d,
        "--verbose",
        "--json",
    ]);
    for r in v["results"].as_array().unwrap() {
        let text = std::fs::read_to_string(record_path(&dir, r["game"].as_u64().unwrap())).unwrap();
        let record = Record::parse(&text).unwrap();
        assert_eq!(
            record.rules,
            rules(5, 3, PlayRules::Kalah(Rules::Standard), true)
        );
        let actions: Vec<String> = record.actions.iter().map(|a| a.to_string()).collect();
        let listed: Vec<&str> = r["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(actions, listed);
        let game = record.replay().unwrap();
        assert!(game.state().is_over());
        assert_eq!(game.swapped(), r["swapped"].as_bool().unwrap());
        let a_seat = if r["a_side"] == "south" { 0 } else { 1 };
        assert_eq!(
            record.south,
            if a_seat == 0 { "alphabeta:2" } else { "random" }
        );
        assert_eq!(
            i64::from(game.margin(a_seat)),
            r["margin_a"].as_i64().unwrap()
        );
        let store = |seat: usize| u64::from(game.state().store(game.side_of(seat)));
        assert_eq!(store(a_seat), r["store_a"].as_u64().unwrap());
        assert_eq!(store(1 - a_seat), r["store_b"].as_u64().unwrap());
        let written = text
            .lines()
            .find_map(|l| l.strip_prefix("result: "))
            .unwrap();
        assert_eq!(Some(written.to_owned()), game.state().result());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn replay_finds_no_mistake_in_the_perfect_players_moves() {
    let dir = fresh_dir("match-replay");
    let d = dir.to_str().unwrap();
    for r in ["standard", "empty-capture"] {
        json(&[
            "match",
            "perfect",
            "random:5",
            "--games",
            "2",
            "--houses",
            "4",
            "--seeds",
            "3",
            "--rules",
            r,
            "--opening-plies",
            "0",
            "--record",
            d,
            // The second rule set's games replace the first's.
            "--force",
            "--json",
        ]);
        for game in 1..=2 {
            let file = record_path(&dir, game);
            let v = json(&["replay", file.to_str().unwrap(), "--json"]);
            assert_eq!(v["variant"], "Kalah(4,3)");
            assert_eq!(v["rules"], r);
            assert_eq!(v["pie"], false);
            let perfect_side = if v["south"] == "perfect" {
                "south"
            } else {
                "north"
            };
            let moves = v["moves"].as_array().unwrap();
            assert!(!moves.is_empty());
            for m in moves {
                // 24 seeds at most: every sowing is valued.
                let (value, best) = (m["value"].as_i64().unwrap(), m["best"].as_i64().unwrap());
                assert_eq!(m["mistake"].as_i64().unwrap(), best - value);
                assert!(best >= value);
                if m["side"] == perfect_side {
                    assert_eq!(m["mistake"], 0, "{r} game {game} ply {}", m["ply"]);
                    assert_eq!(m["player"], "perfect");
                }
            }
            // The first move is valued at the solved value for the side that makes it.
            let first = &moves[0];
            let solved = if r == "standard" { 6 } else { 8 };
            assert_eq!(first["best"], solved);
            let result = v["result"].as_str().unwrap();
            assert!(result.starts_with("South "), "{result}");
        }
        // The human output ends with the result and the mistakes.
        let out = kalah(&["replay", record_path(&dir, 1).to_str().unwrap()]);
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("\nresult: South "));
        assert!(
            text.contains("perfect (started South) 0 seeds in 0 of"),
            "{text}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn replay_blames_no_player_for_the_random_opening() {
    let dir = fresh_dir("match-replay-opening");
    let d = dir.to_str().unwrap();
    json(&[
        "match",
        "perfect",
        "random:5",
        "--games",
        "1",
        "--houses",
        "4",
        "--seeds",
        "3",
        "--opening-plies",
        "3",
        "--record",
        d,
        "--json",
    ]);
    let file = record_path(&dir, 1);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\nopening: 3\n"), "{text}");
    let v = json(&["replay", file.to_str().unwrap(), "--json"]);
    assert_eq!(v["opening"], 3);
    let moves = v["moves"].as_array().unwrap();
    for (i, m) in moves.iter().enumerate() {
        assert_eq!(m["opening"], i < 3, "ply {}", i + 1);
    }
    let out = kalah(&["replay", file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1. South (random opening): "), "{text}");
    assert!(text.contains("no player's choice"), "{text}");
    // The perfect player's mistakes count only its own sowings: none.
    assert!(
        text.contains("perfect (started South) 0 seeds in 0 of"),
        "{text}"
    );
    assert!(
        text.contains("(the random opening's 3 actions not counted)"),
        "{text}"
    );
    // A record whose opening is longer than its game is refused, naming the line.
    let bad = dir.join("bad.txt");
    std::fs::write(
        &bad,
        "variant: Kalah(3,2)\nrules: standard\nopening: 5\nsouth 1\n",
    )
    .unwrap();
    let out = kalah(&["replay", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 3"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn replay_values_nothing_under_awari_basic() {
    let dir = fresh_dir("match-awari");
    let d = dir.to_str().unwrap();
    json(&[
        "match",
        "greedy",
        "random",
        "--games",
        "1",
        "--houses",
        "6",
        "--seeds",
        "3",
        "--rules",
        "awari-basic",
        "--record",
        d,
        "--json",
    ]);
    let file = record_path(&dir, 1);
    let v = json(&["replay", file.to_str().unwrap(), "--json"]);
    assert_eq!(v["rules"], "awari-basic");
    let moves = v["moves"].as_array().unwrap();
    assert!(!moves.is_empty());
    assert!(
        moves
            .iter()
            .all(|m| m["value"].is_null() && m["mistake"].is_null())
    );
    let out = kalah(&["replay", file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.matches("not valued (the solver knows Kalah rules only)")
            .count(),
        1
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_record_is_one_line_naming_the_file_and_line() {
    let dir = fresh_dir("match-bad");
    let cases = [
        // South's house 2, emptied by the first turn, sown again on line 6.
        (
            "illegal.txt",
            "variant: Kalah(4,3)\nrules: standard\n\nsouth 2-4\nnorth 2\nsouth 2\n",
            "line 6",
        ),
        (
            "side.txt",
            "variant: Kalah(4,3)\nrules: standard\nnorth 1\n",
            "line 3",
        ),
        (
            "header.txt",
            "variant: Kalah(4,3)\nrules: standrad\n",
            "line 2",
        ),
        ("missing.txt", "rules: standard\nsouth 1\n", "variant"),
    ];
    for (name, text, expected) in cases {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        let out = kalah(&["replay", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
        assert!(
            stderr.contains(name) && stderr.contains(expected),
            "{name}: {stderr}"
        );
        assert!(out.stdout.is_empty());
    }
    let out = kalah(&["replay", dir.join("no-such-file.txt").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A bound on every child process of the tests below: a regression that hangs fails instead.
const LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

#[test]
fn an_unwritable_learner_file_is_refused_before_the_match() {
    let dir = fresh_dir("match-learner-file");
    let blocker = dir.join("file");
    std::fs::write(&blocker, "x").unwrap();
    let mut files = vec![blocker.join("memory.txt")];
    #[cfg(unix)]
    {
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        files.push(fifo);
        files.push(PathBuf::from("/dev/full"));
    }
    for file in files {
        let learner = format!("learner:{}", file.display());
        let out = kalah_within(
            &["match", &learner, "random", "-g", "4", "-m", "3", "-n", "2"],
            LIMIT,
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{learner}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(&file.display().to_string()), "{stderr}");
        assert!(out.stdout.is_empty(), "refused before any game");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_learner_saves_every_game_it_did_not_win_as_the_match_goes() {
    // Learners of games played at once share the file: no line may be lost.
    let dir = fresh_dir("match-learner-saves");
    let file = dir.join("memory.txt");
    std::fs::write(&file, "# remembered openings\n").unwrap();
    let learner = format!("learner:{}", file.display());
    let v = json(&[
        "match",
        &learner,
        "perfect",
        "-g",
        "16",
        "-m",
        "3",
        "-n",
        "2",
        "--threads",
        "4",
        "--json",
    ]);
    let not_won = v["draws"].as_u64().unwrap() + v["losses"].as_u64().unwrap();
    assert!(not_won > 0, "{v}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("# remembered openings\n"), "{text}");
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("Kalah(3,2) standard: "))
            .count() as u64,
        not_won,
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn match_records_are_never_replaced_without_force_nor_shared_by_two_matches() {
    let dir = fresh_dir("match-records-force");
    let d = dir.to_str().unwrap();
    let args = [
        "match", "greedy", "random", "-g", "3", "-m", "3", "-n", "2", "--record", d,
    ];
    assert!(kalah_within(&args, LIMIT).status.success());
    let before = std::fs::read_to_string(record_path(&dir, 2)).unwrap();
    let again = args
        .iter()
        .copied()
        .chain(["--seed", "2"])
        .collect::<Vec<_>>();
    let out = kalah_within(&again, LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("game-0001.txt") && stderr.contains("--force"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(record_path(&dir, 2)).unwrap(),
        before
    );
    let mut forced = again.clone();
    forced.push("--force");
    assert!(kalah_within(&forced, LIMIT).status.success());
    // A directory held by a match (here, by this test) is refused to another.
    let held = kalah::files::lock_dir(&dir).unwrap();
    let out = kalah_within(&forced, LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("in use by another match"), "{stderr}");
    drop(held);
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(target_os = "linux")]
#[test]
fn a_long_match_runs_in_a_fixed_amount_of_memory() {
    // 64 MiB of address space: keeping every game (as the matches once did) takes more than
    // 100 MiB for 300000 games of Kalah(1,1). (One malloc arena: glibc reserves 64 MiB of
    // address space for each thread's arena, and is slow when it cannot.)
    let limited = |args: &[&str]| {
        let mut command = std::process::Command::new("sh");
        command.env("MALLOC_ARENA_MAX", "1");
        command.env(cli_common::DB_HOME_VAR, cli_common::missing_db_home());
        command.args(["-c", "ulimit -v 65536; exec \"$0\" \"$@\""]);
        command.arg(env!("CARGO_BIN_EXE_kalah")).args(args);
        let out = run_within(command, "", LIMIT);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{args:?}: {stderr}");
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let v = limited(&[
        "match", "random", "random", "-g", "300000", "-m", "1", "-n", "1", "--json",
    ]);
    assert_eq!(v["games"], 300000);
    // Listing every game: each is written out, in order, as soon as the games before it are.
    let v = limited(&[
        "match",
        "random",
        "greedy",
        "-g",
        "30000",
        "-m",
        "1",
        "-n",
        "1",
        "--verbose",
        "--json",
    ]);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 30000);
    assert!(
        results
            .iter()
            .enumerate()
            .all(|(i, r)| r["game"] == i as u64 + 1)
    );
    assert_eq!(v["games"], 30000);
}

#[test]
fn replay_values_every_sowing_exactly_within_reach_of_the_levels_and_estimates_the_rest() {
    let dir = fresh_dir("match-replay-estimates");
    let db = dir.join("db");
    let out = kalah(&[
        "db",
        "build",
        "-m",
        "4",
        "--max-seeds",
        "6",
        "--dir",
        db.to_str().unwrap(),
        "--yes",
    ]);
    assert!(out.status.success());
    let records = dir.join("records");
    json(&[
        "match",
        "greedy",
        "alphabeta:2",
        "--games",
        "1",
        "--houses",
        "4",
        "--seeds",
        "5",
        "--no-db",
        "--record",
        records.to_str().unwrap(),
        "--json",
    ]);
    let file = record_path(&records, 1);
    let f = file.to_str().unwrap();
    let d = db.to_str().unwrap();
    // By default: exact up to 6 + 12 seeds on the board, estimates above.
    let v = json(&["replay", f, "--db", d, "--no-book", "--json"]);
    let moves = v["moves"].as_array().unwrap();
    let mut estimated = 0;
    for m in moves {
        let seeds: u64 = {
            let p = m["position"].as_str().unwrap();
            let inner = p.trim_start_matches('<').split('>').next().unwrap();
            inner
                .split(',')
                .skip(3)
                .map(|x| x.parse::<u64>().unwrap())
                .sum()
        };
        assert!(m["value"].is_i64(), "every sowing valued: {m}");
        if seeds > 18 {
            assert_eq!(m["source"], "estimate", "{m}");
            assert_eq!(m["exact"], false, "{m}");
            estimated += 1;
        } else {
            assert_ne!(m["source"], "estimate", "{m}");
            assert_eq!(m["exact"], true, "{m}");
        }
    }
    assert!(estimated > 0, "Kalah(4,5) starts with 40 seeds");
    let out = kalah(&["replay", f, "--db", d, "--no-book"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("has at most 18 seeds on the board"), "{text}");
    assert!(text.contains("by estimate"), "{text}");
    assert!(text.contains(" estimated)"), "{text}");
    // --no-estimates: those sowings are not valued.
    let v = json(&[
        "replay",
        f,
        "--db",
        d,
        "--no-book",
        "--no-estimates",
        "--json",
    ]);
    let unvalued = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["value"].is_null())
        .count();
    assert_eq!(unvalued, estimated);
    // --plot: the evaluation graph, an SVG file written whole; another extension is refused.
    let svg = dir.join("game.svg");
    let out = kalah(&[
        "replay",
        f,
        "--db",
        d,
        "--no-book",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.starts_with("<svg") && text.trim_end().ends_with("</svg>"),
        "{text}"
    );
    assert!(text.contains("value for South after each sowing"), "{text}");
    assert!(text.contains("estimate (not exact)"), "{text}");
    let out = kalah(&[
        "replay",
        f,
        "--plot",
        dir.join("game.png").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.join("game.png").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
