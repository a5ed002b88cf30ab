//! Play: the play state against the packed engine under Kalah rules, the awari-basic rules one
//! by one (boards drawn), the pie rule, records, the engines (alphabeta == minimax), the
//! learner, and scripted games through the `kalah play` binary.

use std::process::Stdio;

mod cli_common;
use cli_common::{fresh_dir, kalah_watched, run_within, wait_within};

use kalah::play::players::Searcher;
use kalah::play::record::Record;
use kalah::play::{Action, Game, GameRules, PlayRules, PlayState, Player, PlayerSpec, Resources};
use kalah::{Move, Narrow, Position, Rng, Rules, Side};

fn mv(h: usize) -> Move {
    Move::new(h).unwrap()
}

#[test]
fn under_kalah_rules_the_play_state_moves_as_the_packed_engine() {
    let mut rng = Rng::new(42);
    for rules in [Rules::Standard, Rules::EmptyCapture] {
        for m in 1..=8 {
            for n in 1..=5 {
                let mut state = PlayState::start(m, n, PlayRules::Kalah(rules));
                let mut pos = Position::<Narrow>::from_setup(&state.to_setup(), rules).unwrap();
                while let Some(side) = state.to_move() {
                    assert_eq!(pos.to_move(), Some(side));
                    let moves = state.legal_moves();
                    assert_eq!(moves, pos.legal_moves());
                    let choice = moves[rng.below(moves.len() as u64) as usize];
                    let sown = state.play(choice);
                    let (next, sowing) = pos.play(choice).unwrap();
                    assert_eq!(sown.extra_turn, sowing.extra_turn);
                    assert_eq!(sown.captured, sowing.captured);
                    assert_eq!(sown.game_over, sowing.game_over);
                    pos = next;
                    assert_eq!(state.to_setup(), pos.to_setup(), "Kalah({m},{n}) {rules}");
                }
                assert!(pos.is_finished());
            }
        }
    }
}

/// A state from rows (South's and North's houses in sowing order), stores and side.
fn awari(south: &[u32], north: &[u32], stores: [u32; 2], to_move: Side) -> PlayState {
    let setup = kalah::Setup {
        houses: south.len(),
        stores: stores.map(u64::from),
        south: south.iter().map(|&s| u64::from(s)).collect(),
        north: north.iter().map(|&s| u64::from(s)).collect(),
        to_move: Some(to_move),
    };
    PlayState::from_setup(&setup, PlayRules::AwariBasic)
}

#[test]
fn awari_basic_sows_both_homes() {
    //        N3  N2  N1
    //  [0]   1   1   1   [0]
    //        1   1   5        South sows house 3 (5 seeds): S-store, N1, N2, N3, N-store.
    let mut s = awari(&[1, 1, 5], &[1, 1, 1], [0, 0], Side::South);
    s.play(mv(3));
    assert_eq!(s.store(Side::South), 1);
    assert_eq!(s.store(Side::North), 1, "the opponent's home is sown too");
    assert_eq!(s.houses(Side::North), &[2, 2, 2]);
    assert_eq!(s.to_move(), Some(Side::North));
}

#[test]
fn awari_basic_allows_one_extra_move_a_turn() {
    // South's house 3 holds 1: it reaches the store, an extra move; house 2's 2 seeds reach
    // the store again, but a second move never earns a third.
    let mut s = awari(&[2, 2, 1], &[1, 1, 1], [0, 0], Side::South);
    let first = s.play(mv(3));
    assert!(first.extra_turn);
    assert_eq!(s.to_move(), Some(Side::South));
    let second = s.play(mv(2));
    assert!(!second.extra_turn);
    assert_eq!(s.store(Side::South), 2);
    assert_eq!(s.to_move(), Some(Side::North));
    // Under Kalah rules the same two sowings chain.
    let mut k = PlayState::from_setup(
        &awari(&[2, 2, 1], &[1, 1, 1], [0, 0], Side::South).to_setup(),
        PlayRules::Kalah(Rules::Standard),
    );
    assert!(k.play(mv(3)).extra_turn);
    assert!(k.play(mv(2)).extra_turn);
    assert_eq!(k.to_move(), Some(Side::South));
}

#[test]
fn awari_basic_captures_on_either_side() {
    //        N3  N2  N1
    //  [0]   2   0   3   [0]      South sows house 3 (3 seeds): S-store, N1 (4), N2 (1: was
    //        4   1   3            empty) -> captures it with the house facing N2 (South 2).
    let mut s = awari(&[4, 1, 3], &[3, 0, 2], [0, 0], Side::South);
    let sown = s.play(mv(3));
    assert_eq!(sown.captured, 2);
    assert_eq!(s.houses(Side::North), &[4, 0, 2]);
    assert_eq!(s.houses(Side::South), &[4, 0, 0]);
    assert_eq!(s.store(Side::South), 1 + 2);
    // No capture when the facing house is empty.
    let mut s = awari(&[4, 0, 3], &[3, 0, 2], [0, 0], Side::South);
    assert_eq!(s.play(mv(3)).captured, 0);
}

#[test]
fn awari_basic_leftovers_count_for_nobody() {
    // South's last seed goes home; South's side is empty: the game ends, North's 6 seeds stay.
    let mut s = awari(&[0, 0, 1], &[1, 2, 3], [5, 4], Side::South);
    let sown = s.play(mv(3));
    assert!(sown.game_over);
    assert_eq!(s.to_move(), None);
    assert_eq!((s.store(Side::South), s.store(Side::North)), (6, 4));
    assert_eq!(
        s.houses(Side::North),
        &[1, 2, 3],
        "left on the board, for nobody"
    );
    // Under Kalah rules North would sweep them.
    let mut k = PlayState::from_setup(
        &awari(&[0, 0, 1], &[1, 2, 3], [5, 4], Side::South).to_setup(),
        PlayRules::Kalah(Rules::Standard),
    );
    k.play(mv(3));
    assert_eq!(k.store(Side::North), 10);
}

fn rules(m: usize, n: u32, rules: PlayRules, pie: bool) -> GameRules {
    GameRules {
        houses: m,
        seeds: n,
        rules,
        pie,
    }
}

#[test]
fn the_pie_rule_swaps_seats_once_after_souths_first_turn() {
    let mut game = Game::new(rules(4, 3, PlayRules::Kalah(Rules::Standard), true));
    assert!(!game.can_swap(), "South has not moved");
    assert!(game.play(Action::Swap).is_err());
    // South's house 2 (3 seeds) ends in the store: an extra turn, still no swap.
    game.play(Action::Sow(mv(2))).unwrap();
    assert!(!game.can_swap());
    game.play(Action::Sow(mv(1))).unwrap();
    assert_eq!(game.state().to_move(), Some(Side::North));
    assert!(game.can_swap());
    assert_eq!(game.seat(Side::North), 1);
    game.play(Action::Swap).unwrap();
    assert!(game.swapped());
    assert_eq!(game.seat(Side::North), 0, "seat 0 now plays North");
    assert_eq!(game.side_of(1), Side::South);
    assert_eq!(game.state().to_move(), Some(Side::North));
    assert!(!game.can_swap(), "only once");
    game.play(Action::Sow(mv(1))).unwrap();
    // The record keeps the swap and reads back the same game.
    let record = Record::of(&game, "a", "b", None);
    let text = record.to_text();
    assert!(text.contains("south 2-1\nnorth swap\nnorth 1\n"), "{text}");
    let parsed = Record::parse(&text).unwrap();
    assert_eq!(parsed, record);
    assert!(parsed.replay().unwrap().swapped());
    // Without the pie rule there is no swap.
    let mut plain = Game::new(rules(4, 3, PlayRules::Kalah(Rules::Standard), false));
    plain.play(Action::Sow(mv(1))).unwrap();
    assert!(!plain.legal_actions().contains(&Action::Swap));
}

#[test]
fn records_round_trip_and_bad_lines_are_named() {
    let mut rng = Rng::new(5);
    for r in PlayRules::ALL {
        let mut game = Game::new(rules(6, 4, r, false));
        while game.state().to_move().is_some() {
            let actions = game.legal_actions();
            game.play(actions[rng.below(actions.len() as u64) as usize])
                .unwrap();
        }
        let record = Record::of(
            &game,
            "random:1",
            "random:2",
            Some("2026-11-21 10:00 UTC".into()),
        );
        let text = record.to_text();
        let back = Record::parse(&text).unwrap();
        assert_eq!(back, record);
        assert_eq!(back.replay().unwrap().state(), game.state());
    }
    let bad = "variant: Kalah(3,2)\nrules: standard\n\nsouth 1\nsouth 2\n";
    let err = Record::parse(bad).unwrap_err();
    assert_eq!(err.line, 5, "{err}");
    assert!(err.to_string().contains("North is to move"), "{err}");
    assert!(
        Record::parse("rules: standard\nsouth 1\n").is_err(),
        "no variant"
    );
    let err = Record::parse("variant: Kalah(3,2)\nrules: standard\nsouth 7\n").unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err}");
    // A header field twice is refused, not read as its last value.
    let err = Record::parse("variant: Kalah(3,2)\nrules: standard\nvariant: Kalah(4,4)\nsouth 1\n")
        .unwrap_err();
    assert_eq!(err.line, 3, "{err}");
    assert!(
        err.to_string().contains("given twice (first on line 1)"),
        "{err}"
    );
}

#[test]
fn alphabeta_finds_the_minimax_values_with_fewer_nodes() {
    let mut rng = Rng::new(9);
    for r in PlayRules::ALL {
        for _ in 0..30 {
            let mut state = PlayState::start(6, 4, r);
            for _ in 0..rng.below(12) {
                let moves = state.legal_moves();
                if moves.is_empty() {
                    break;
                }
                state.play(moves[rng.below(moves.len() as u64) as usize]);
            }
            if state.is_over() {
                continue;
            }
            for depth in [1, 3, 5] {
                let mut minimax = Searcher::new(depth, false);
                let mut alphabeta = Searcher::new(depth, true);
                assert_eq!(
                    minimax.search(&state),
                    alphabeta.search(&state),
                    "{r} depth {depth}"
                );
                assert!(alphabeta.nodes() <= minimax.nodes());
            }
        }
    }
    let mut minimax = Searcher::new(6, false);
    let mut alphabeta = Searcher::new(6, true);
    let start = PlayState::start(6, 4, PlayRules::Kalah(Rules::Standard));
    minimax.search(&start);
    alphabeta.search(&start);
    assert!(alphabeta.nodes().unwrap() * 4 < minimax.nodes().unwrap());
}

#[test]
fn player_specs_parse_and_refuse_nonsense() {
    for spec in [
        "human",
        "random",
        "random:7",
        "greedy",
        "minimax:3",
        "alphabeta:8",
        "perfect",
        "learner",
        "learner:x.txt",
    ] {
        assert_eq!(spec.parse::<PlayerSpec>().unwrap().to_string(), spec);
    }
    for bad in [
        "",
        "alphabeta",
        "alphabeta:0",
        "minimax:x",
        "random:-1",
        "greedy:2",
        "god",
    ] {
        assert!(bad.parse::<PlayerSpec>().is_err(), "{bad}");
    }
    let res = Resources::default();
    assert!(
        PlayerSpec::Perfect
            .make(6, 3, PlayRules::AwariBasic, &res)
            .is_err()
    );
}

/// Plays a whole game between two players (seat 0 starts as South).
fn play_out(game: &mut Game, players: &mut [Box<dyn Player>; 2]) {
    while let Some(side) = game.state().to_move() {
        let seat = game.seat(side);
        let action = players[seat].choose(game).unwrap();
        game.play(action).unwrap();
    }
    for (seat, p) in players.iter_mut().enumerate() {
        p.game_over(game, seat).unwrap();
    }
}

#[test]
fn the_learner_avoids_the_openings_it_lost() {
    let dir = fresh_dir("learner");
    let file = dir.join("memory.txt");
    let spec: PlayerSpec = format!("learner:{}", file.display()).parse().unwrap();
    let r = rules(4, 4, PlayRules::Kalah(Rules::Standard), false);
    let res = Resources {
        threads: 1,
        ..Resources::default()
    };
    // The learner plays North against the perfect player: it cannot win Kalah(4,4) (+2 for
    // South), so every game is remembered and the next one opens differently.
    let mut openings = Vec::new();
    for _ in 0..3 {
        let mut players = [
            PlayerSpec::Perfect.make(4, 4, r.rules, &res).unwrap(),
            spec.make(4, 4, r.rules, &res).unwrap(),
        ];
        let mut game = Game::new(r);
        play_out(&mut game, &mut players);
        assert!(game.margin(1) < 0);
        let opening: Vec<Action> = game.actions().iter().take(8).map(|&(_, a)| a).collect();
        assert!(
            !openings.contains(&opening),
            "an opening it lost was repeated"
        );
        openings.push(opening);
    }
    let memory = std::fs::read_to_string(&file).unwrap();
    assert_eq!(memory.lines().count(), 3, "{memory}");
    assert!(memory.starts_with("Kalah(4,4) standard: "), "{memory}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `kalah play` with `input` on stdin, in a temporary directory; returns stdout.
fn play_cli(args: &[&str], input: &str) -> (bool, String, String) {
    use std::io::Write;
    // One directory a call (tests run at once), removed after it.
    static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("kalah-play-cli-{}-{call}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = cli_common::command()
        .arg("play")
        .args(args)
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_scripted_game_through_stdin() {
    let dir = fresh_dir("play-script");
    let record = dir.join("game.txt");
    // Kalah(2,1): South 2 sows into the store (extra turn), then South 1 captures North's
    // house 1 and empties South's side: 3 to 1.
    let (ok, out, err) = play_cli(
        &[
            "-m",
            "2",
            "-n",
            "1",
            "--north",
            "greedy",
            "--record",
            record.to_str().unwrap(),
        ],
        "7\nfoo\nhint\n2\nundo\n2\n1\n",
    );
    assert!(ok, "{err}");
    assert!(out.contains("house 7 does not exist"), "{out}");
    assert!(out.contains("'foo' is not a house number"), "{out}");
    assert!(out.contains("exact values"), "{out}");
    assert!(out.contains("taken back"), "{out}");
    assert!(
        out.contains("game over: South 3 North 1 after the sweep; South wins by 2"),
        "{out}"
    );
    let text = std::fs::read_to_string(&record).unwrap();
    let parsed = Record::parse(&text).unwrap();
    assert_eq!(parsed.actions, [Action::Sow(mv(2)), Action::Sow(mv(1))]);
    assert!(text.contains("south 2-1"), "{text}");

    // quit saves the game so far; end of input too.
    let (ok, out, _) = play_cli(
        &["-m", "3", "-n", "2", "--north", "alphabeta:2"],
        "1\nquit\n",
    );
    assert!(ok);
    assert!(out.contains("game saved to kalah-saved-game.txt"), "{out}");
    // Engines only, awari-basic, pie rule: runs to the end without input.
    let (ok, out, err) = play_cli(
        &[
            "--rules",
            "awari-basic",
            "-m",
            "6",
            "-n",
            "3",
            "--pie",
            "--south",
            "greedy",
            "--north",
            "alphabeta:3",
        ],
        "",
    );
    assert!(ok, "{err}");
    assert!(out.contains("game over"), "{out}");
    // A bad player spec is an input error, one line.
    let (ok, _, err) = play_cli(&["--north", "wizard"], "");
    assert!(!ok);
    assert_eq!(err.lines().count(), 1, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_long_line_or_bytes_that_are_not_text_at_the_prompt_get_one_message_and_the_prompt_again() {
    let dir = fresh_dir("play-hostile");
    let record = dir.join("game.txt");
    let args = [
        "play",
        "-m",
        "2",
        "-n",
        "1",
        "--north",
        "greedy",
        "--record",
        record.to_str().unwrap(),
    ];
    let limit = std::time::Duration::from_secs(20);
    // Kalah(2,1) played 2 then 1 (as in the scripted game), between hostile lines.
    let mut input = vec![b'x'; 3 << 20];
    input.extend_from_slice(b"\n\xff\xfe\n\x1b[31m\n2\n1\n");
    let run = kalah_watched(&args, vec![input], limit);
    let out = run.stdout();
    assert!(run.output.status.success(), "{}", run.stderr());
    assert!(out.contains("line too long (3145728 bytes"), "{out}");
    assert!(out.contains("not UTF-8 text"), "{out}");
    assert!(out.contains("'\\u{1b}[31m' is not a house number"), "{out}");
    assert!(
        !out.contains('\u{1b}'),
        "the escape sequence reached the terminal"
    );
    assert!(out.contains("South wins by 2"), "{out}");
    assert_eq!(out.matches("your move").count(), 5, "{out}");
    // An endless line, then the end of the input: one message, and the game so far is saved
    // (over the first game's record: --force).
    let again = [&args[..], &["--force"]].concat();
    let run = kalah_watched(&again, vec![vec![0; 8 << 20]], limit);
    let out = run.stdout();
    assert!(run.output.status.success(), "{}", run.stderr());
    assert_eq!(out.matches("line too long").count(), 1, "{out}");
    assert!(out.contains("end of input: stopping"), "{out}");
    assert!(Record::parse(&std::fs::read_to_string(&record).unwrap()).is_ok());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hints_above_the_database_search_with_it_and_say_the_same() {
    let dir = fresh_dir("play-hint-db");
    let built = cli_common::command()
        .args(["db", "build", "--houses", "4", "--max-seeds", "8", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(built.status.success(), "{built:?}");
    // Kalah(4,3): 24 seeds, above the database; a hint, a move, a hint again.
    let hint = |db: bool| {
        let record = dir.join("game.txt");
        // The second game replaces the first one's record.
        let mut args = vec![
            "-m", "4", "-n", "3", "--north", "greedy", "--force", "--record",
        ];
        args.push(record.to_str().unwrap());
        if db {
            args.extend(["--db", dir.to_str().unwrap()]);
        }
        let (ok, out, err) = play_cli(&args, "hint\n1\nhint\nquit\n");
        assert!(ok, "{err}");
        out.lines()
            .filter(|l| l.contains("exact value"))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let without = hint(false);
    assert_eq!(without.len(), 2, "{without:?}");
    assert_eq!(hint(true), without);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_saved_game_resumes_where_it_stopped_and_is_saved_after_every_move() {
    let dir = fresh_dir("play-resume");
    let file = dir.join("game.txt");
    let path = file.to_str().unwrap();
    // Two moves by a human, then quit: the game so far is in the record.
    let args = [
        "-m",
        "4",
        "-n",
        "3",
        "--rules",
        "empty-capture",
        "--north",
        "greedy",
    ];
    let mut first = args.to_vec();
    first.extend(["--record", path]);
    let (ok, _, err) = play_cli(&first, "1\n2\nquit\n");
    assert!(ok, "{err}");
    let saved = Record::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(saved.actions.len() >= 2, "{:?}", saved.actions);
    // Resumed with an engine in the human's seat: the same variant and moves, played to the
    // end, and saved back to the same file; the players not given are the record's.
    let (ok, out, err) = play_cli(&["--resume", path, "--south", "alphabeta:2"], "");
    assert!(ok, "{err}");
    assert!(out.contains(&format!(
        "resumed from {path} after {} actions",
        saved.actions.len()
    )));
    assert!(
        out.contains("alphabeta:2 (South) against greedy (North)"),
        "{out}"
    );
    assert!(out.contains("game over"), "{out}");
    let done = Record::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(done.rules, saved.rules);
    assert_eq!(done.actions[..saved.actions.len()], saved.actions[..]);
    assert!(done.replay().unwrap().state().to_move().is_none());
    // A finished game resumed is left as it is.
    let before = std::fs::read_to_string(&file).unwrap();
    let (ok, _, err) = play_cli(&["--resume", path], "");
    assert!(ok, "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    // The variant comes from the record: giving one too is refused.
    let (ok, _, err) = play_cli(&["--resume", path, "-m", "5"], "");
    assert!(!ok && err.contains("cannot be used with"), "{err}");

    // A session killed while a human thinks leaves the moves made so far.
    let killed = dir.join("killed.txt");
    let mut child = cli_common::command()
        .args([
            "play", "-m", "4", "-n", "3", "--north", "greedy", "--record",
        ])
        .arg(&killed)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, b"1\n").unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let record = loop {
        let text = std::fs::read_to_string(&killed).unwrap_or_default();
        if let Ok(r) = Record::parse(&text) {
            // South's move and greedy's answer.
            if r.actions.len() >= 2 {
                break r;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no record after the move"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    child.kill().unwrap();
    let _ = child.wait();
    drop(stdin);
    assert_eq!(record.actions[0], Action::Sow(mv(1)));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A bound on every child process of the tests below: a regression that hangs fails instead.
const LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// `kalah play ARGS` with `input` on stdin, in `dir`, within [`LIMIT`].
fn play_in(dir: &std::path::Path, args: &[&str], input: &str) -> std::process::Output {
    let mut command = cli_common::command();
    command.arg("play").args(args).current_dir(dir);
    run_within(command, input, LIMIT)
}

#[test]
fn a_record_never_replaces_an_unrelated_file_without_force() {
    let dir = fresh_dir("play-record-force");
    let notes = dir.join("notes.txt");
    std::fs::write(&notes, "my notes\n").unwrap();
    let args = [
        "-m",
        "2",
        "-n",
        "1",
        "--north",
        "greedy",
        "--record",
        "notes.txt",
    ];
    let out = play_in(&dir, &args, "1\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("notes.txt") && stderr.contains("--force"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "refused before the game starts");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n");
    // With --force it is replaced by the record.
    let mut forced = args.to_vec();
    forced.push("--force");
    let out = play_in(&dir, &forced, "1\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let record = Record::parse(&std::fs::read_to_string(&notes).unwrap()).unwrap();
    assert_eq!(record.actions[0], Action::Sow(mv(1)));
    // An empty file holds nothing to lose; a FIFO or a device is never a record.
    std::fs::write(dir.join("empty.txt"), "").unwrap();
    let out = play_in(
        &dir,
        &["-m", "2", "-n", "1", "--record", "empty.txt"],
        "quit\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = play_in(&dir, &["--record", "/dev/null", "--force"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a device"));
    // Without --record, quit saves beside an earlier saved game, never over it.
    for _ in 0..2 {
        let out = play_in(&dir, &["-m", "3", "-n", "2"], "quit\n");
        assert!(out.status.success());
    }
    assert!(dir.join("kalah-saved-game.txt").exists());
    assert!(dir.join("kalah-saved-game-2.txt").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_second_game_on_the_same_record_is_refused_while_the_first_runs() {
    let dir = fresh_dir("play-record-twice");
    let file = dir.join("g.txt");
    let path = file.to_str().unwrap();
    // The first game: a human South who has made one move, and waits for the next.
    let mut first = cli_common::command()
        .args([
            "play", "-m", "4", "-n", "3", "--north", "greedy", "--record", path,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = first.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, b"1\n").unwrap();
    let deadline = std::time::Instant::now() + LIMIT;
    while Record::parse(&std::fs::read_to_string(&file).unwrap_or_default())
        .map_or(true, |r| r.actions.len() < 2)
    {
        if std::time::Instant::now() > deadline {
            let _ = first.kill();
            panic!("the first game did not save its moves");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // A second game on the same file, new or resumed, is refused before it starts.
    for args in [
        &["-m", "4", "-n", "3", "--record", path, "--force"][..],
        &["--resume", path],
    ] {
        let out = play_in(&dir, args, "");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("in use by another game"),
            "{args:?}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    // The first game goes on, and ends with its own moves in the file.
    std::io::Write::write_all(&mut stdin, b"quit\n").unwrap();
    drop(stdin);
    let out = wait_within(first, LIMIT);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let record = Record::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(record.actions[0], Action::Sow(mv(1)));
    assert_eq!(record.north, "greedy");
    // Once it is over, the file may be resumed.
    let out = play_in(&dir, &["--resume", path, "--south", "greedy"], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_hint_beyond_exact_reach_is_the_engines_estimate() {
    let dir = fresh_dir("play-hint-estimate");
    // Kalah(6,3): 36 seeds, more than --hint-seeds solves, and no opening book (the start of
    // Kalah(6,4) is in the shipped book); awari-basic: no exact solver; mankalah's first
    // sowing: not the solver's rules. Each gets a marked estimate.
    for rules in ["standard", "awari-basic", "mankalah"] {
        let out = play_in(
            &dir,
            &[
                "-n",
                "3",
                "--rules",
                rules,
                "--north",
                "greedy",
                "--hint-time",
                "0.2",
                "--record",
                "game.txt",
                "--force",
            ],
            "hint\nquit\n",
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{rules}: {text}");
        let hint = text
            .lines()
            .find(|l| l.starts_with("estimate (depth "))
            .unwrap_or_else(|| panic!("{rules}: no estimate in {text}"));
        assert!(hint.contains("not exact): house "), "{rules}: {hint}");
        assert!(text.contains("no exact hint: "), "{rules}: {text}");
        assert!(!text.contains("exact values"), "{rules}: {text}");
    }
    // Within reach, the hint stays exact.
    let out = play_in(
        &dir,
        &[
            "-m", "3", "-n", "2", "--north", "greedy", "--record", "game.txt", "--force",
        ],
        "hint\nquit\n",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("exact values"), "{text}");
    assert!(!text.contains("estimate"), "{text}");
    // The bound of --hint-time is a usage error.
    let out = play_in(&dir, &["--hint-time", "0"], "");
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_swap_says_who_now_plays_which_side() {
    let dir = fresh_dir("play-swap-line");
    let out = play_in(
        &dir,
        &[
            "--pie", "--south", "greedy", "--north", "human", "--record", "game.txt",
        ],
        "swap\nquit\n",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("swapped: human (North until now) plays South, greedy plays North"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_engine_thinking_is_never_silent_in_a_log() {
    let dir = fresh_dir("play-thinking");
    let mut command = cli_common::command();
    command
        .args([
            "play",
            "--south",
            "engine:300ms",
            "--north",
            "human",
            "--record",
            "game.txt",
        ])
        .current_dir(&dir)
        .env("KALAH_PROGRESS_EVERY", "0.01");
    let out = run_within(command, "quit\n", LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let thinking: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("South (engine:300ms) thinking: "))
        .collect();
    assert!(!thinking.is_empty(), "{stderr}");
    // Its depth and best move so far, on bounded lines (240 columns in a log).
    assert!(
        thinking
            .iter()
            .any(|l| l.contains("depth ") && l.contains("best house ")),
        "{stderr}"
    );
    assert!(
        thinking.iter().all(|l| l.chars().count() <= 240),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ctrl_c_says_where_the_game_is() {
    use std::io::Write;
    let dir = fresh_dir("play-ctrl-c");
    let record = dir.join("g.txt");
    for with_record in [true, false] {
        let mut cmd = cli_common::command();
        cmd.current_dir(&dir)
            .args(["play", "-m", "4", "-n", "3", "--north", "random"]);
        if with_record {
            cmd.args(["--record", record.to_str().unwrap()]);
        }
        let mut child = cmd
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // One move, then Ctrl-C at the prompt.
        child.stdin.as_mut().unwrap().write_all(b"2\n").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(700));
        cli_common::interrupt(&child);
        // Its input stays open until it has answered (closing it would end the game first).
        std::thread::sleep(std::time::Duration::from_millis(500));
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(130), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        if with_record {
            assert!(
                err.contains("the game so far is in") && err.contains("--resume"),
                "{err}"
            );
            let text = std::fs::read_to_string(&record).unwrap();
            assert!(text.contains("south 2"), "{text}");
        } else {
            assert!(err.contains("not saved"), "{err}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_hint_at_the_start_of_kalah_6_4_comes_from_the_book() {
    // In a directory of its own: `quit` saves the game there.
    let dir = fresh_dir("play-hint-book");
    let out = play_in(&dir, &["-m", "6", "-n", "4", "--no-db"], "hint\nquit\n");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("3:+8") && text.contains("(from the opening books)"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_perfect_player_answers_from_the_opening_books_without_searching() {
    use kalah::play::Thinking;
    use std::sync::Arc;
    // The shipped Kalah(6,4) book proves the start and each of its moves: the perfect player
    // plays its lowest optimal move at once (0 nodes), where a search without levels takes
    // tens of seconds.
    let rules = Rules::Standard;
    let book = kalah::book::Book::open(true, Some((6, rules, 48)), None).unwrap();
    let start = Position::<Narrow>::start(kalah::Variant::new(6, 4, rules).unwrap()).unwrap();
    let answer = book
        .analyze(&start, None)
        .unwrap()
        .expect("the book proves the start");
    let res = Resources {
        threads: 1,
        book: Some(Arc::new(book)),
        ..Resources::default()
    };
    let game = Game::new(GameRules {
        houses: 6,
        seeds: 4,
        rules: PlayRules::Kalah(rules),
        pie: false,
    });
    let mut perfect = PlayerSpec::Perfect
        .make(6, 4, PlayRules::Kalah(rules), &res)
        .unwrap();
    let mut seen = Vec::new();
    let action = perfect
        .choose_watched(&game, &mut |t| {
            if let Thinking::Solving {
                depth,
                lower,
                upper,
                nodes,
            } = t
            {
                seen.push((*depth, *lower, *upper, *nodes));
            }
        })
        .unwrap();
    assert_eq!(action, Action::Sow(answer.analysis.best[0]));
    let v = answer.analysis.value;
    assert_eq!(seen, vec![(None, v, v, 0)]);
}

#[test]
fn a_move_that_earns_an_extra_turn_says_so() {
    // Kalah(4,3): South's house 2 (3 seeds) ends in South's store; house 1 does not.
    let (ok, out, err) = play_cli(
        &[
            "-m", "4", "-n", "3", "--south", "human", "--north", "greedy", "--no-db",
        ],
        "2\nquit\n",
    );
    assert!(ok, "{err}");
    assert!(
        out.contains("South's last seed fell into its store: extra turn, South moves again"),
        "{out}"
    );
    let (ok, out, err) = play_cli(
        &[
            "-m", "4", "-n", "3", "--south", "human", "--north", "greedy", "--no-db",
        ],
        "1\nquit\n",
    );
    assert!(ok, "{err}");
    assert!(!out.contains("extra turn, South moves again"), "{out}");
}

/// At the start of Kalah(6,6), which the shipped ledger settles (+4, move 1) but whose other
/// moves it only bounds: the hint is exact where the ledger is (move 1 and its value), and
/// the perfect player plays move 1 at once, without a search.
#[test]
fn hints_and_the_perfect_player_are_exact_where_the_ledgers_are() {
    use kalah::play::Thinking;
    use std::sync::Arc;
    let dir = fresh_dir("play-hint-ledger");
    let out = play_in(&dir, &["-m", "6", "-n", "6", "--no-db"], "hint\nquit\n");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("1:+4") && text.contains("best: 1 (from the ledgers), certified"),
        "{text}"
    );
    assert!(!text.contains("estimate"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);

    let rules = Rules::Standard;
    let book = kalah::book::Book::open(true, Some((6, rules, 72)), None).unwrap();
    let res = Resources {
        threads: 1,
        tt_mib: 16,
        book: Some(Arc::new(book)),
        ..Resources::default()
    };
    let game = Game::new(GameRules {
        houses: 6,
        seeds: 6,
        rules: PlayRules::Kalah(rules),
        pie: false,
    });
    let mut perfect = PlayerSpec::Perfect
        .make(6, 6, PlayRules::Kalah(rules), &res)
        .unwrap();
    let mut seen = Vec::new();
    let action = perfect
        .choose_watched(&game, &mut |t| {
            if let Thinking::Solving { nodes, lower, .. } = t {
                seen.push((*lower, *nodes));
            }
        })
        .unwrap();
    assert_eq!(action, Action::Sow(kalah::Move::new(1).unwrap()));
    assert_eq!(seen, vec![(4, 0)]);
    assert_eq!(perfect.nodes(), Some(0));
}
