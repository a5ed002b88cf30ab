//! `kalah mankalah` against a fake ManKalah game engine written here from the protocol
//! description alone (its own Kalah(7,7) rules on the protocol's board layout), and the agent
//! library driven line by line.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use kalah::Rng;
use kalah::bots::mankalah::{
    Agent, DEFAULT_MAX_MOVE_TIME, EngineBoard, Message, Next, Reply, TOTAL_SEEDS, TimePlan, Turn,
};
use kalah::play::Action;
use kalah::play::anytime::EngineConfig;
use kalah::{Move, Side};

mod cli_common;

// ---------------------------------------------------------------------------------------------
// The fake engine's rules: Kalah(7,7) on the protocol's 16 numbers.

/// The board in the protocol's order: North's houses 1..7 (0..7), North's store (7), South's
/// houses 1..7 (8..15), South's store (15).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Pits([u32; 16]);

const NORTH_STORE: usize = 7;
const SOUTH_STORE: usize = 15;

fn first_house(side: Side) -> usize {
    match side {
        Side::North => 0,
        Side::South => 8,
    }
}

fn store(side: Side) -> usize {
    match side {
        Side::North => NORTH_STORE,
        Side::South => SOUTH_STORE,
    }
}

impl Pits {
    fn start() -> Pits {
        let mut pits = [7; 16];
        pits[NORTH_STORE] = 0;
        pits[SOUTH_STORE] = 0;
        Pits(pits)
    }

    /// The protocol's board field.
    fn field(&self) -> String {
        self.0.map(|n| n.to_string()).join(",")
    }

    fn houses(&self, side: Side) -> &[u32] {
        &self.0[first_house(side)..first_house(side) + 7]
    }

    fn legal(&self, side: Side) -> Vec<usize> {
        (1..=7).filter(|&h| self.houses(side)[h - 1] > 0).collect()
    }

    fn over(&self) -> bool {
        self.houses(Side::North).iter().all(|&s| s == 0)
            || self.houses(Side::South).iter().all(|&s| s == 0)
    }

    /// Sows `side`'s house `house` (1..=7); returns whether `side` moves again. The first move
    /// of the game never earns an extra turn.
    fn sow(&mut self, side: Side, house: usize, first_move: bool) -> bool {
        // The 15 pits `side` sows into, in order: its houses, its store, the other's houses.
        let mut cycle: Vec<usize> = (first_house(side)..first_house(side) + 7).collect();
        cycle.push(store(side));
        cycle.extend(first_house(side.other())..first_house(side.other()) + 7);
        let mut at = house - 1;
        let mut hand = std::mem::take(&mut self.0[cycle[at]]);
        while hand > 0 {
            at = (at + 1) % cycle.len();
            self.0[cycle[at]] += 1;
            hand -= 1;
        }
        // A capture: the last seed in an empty own house, the opposite house not empty.
        if at < 7 && self.0[cycle[at]] == 1 {
            let opposite = first_house(side.other()) + (6 - at);
            if self.0[opposite] > 0 {
                self.0[store(side)] += 1 + std::mem::take(&mut self.0[opposite]);
                self.0[cycle[at]] = 0;
            }
        }
        if self.over() {
            for s in [Side::North, Side::South] {
                let left: u32 = self.houses(s).iter().sum();
                self.0[first_house(s)..first_house(s) + 7].fill(0);
                self.0[store(s)] += left;
            }
            return false;
        }
        at == 7 && !first_move
    }
}

#[test]
fn fake_rules_follow_the_protocol_examples() {
    // South's house 1 at the start: houses 2..7 and the store get one each; no extra turn.
    let mut pits = Pits::start();
    assert!(!pits.sow(Side::South, 1, true));
    assert_eq!(pits.field(), "7,7,7,7,7,7,7,0,0,8,8,8,8,8,8,1");
    // South's house 7 at the start: the store, then North's houses 1..6.
    let mut pits = Pits::start();
    pits.sow(Side::South, 7, true);
    assert_eq!(pits.field(), "8,8,8,8,8,8,7,0,7,7,7,7,7,7,0,1");
    // Later, the same sowing into the store earns an extra turn.
    let mut pits = Pits::start();
    assert!(pits.sow(Side::South, 1, false));
    // The fake agrees with the crate's ManKalah rules through the engine's board.
    let mut rng = Rng::new(7);
    for _ in 0..200 {
        let mut pits = Pits::start();
        let mut state = kalah::play::PlayState::start(7, 7, kalah::play::PlayRules::ManKalah);
        let mut first = true;
        while let Some(side) = state.to_move() {
            let legal = pits.legal(side);
            let house = legal[rng.below(legal.len() as u64) as usize];
            let again = pits.sow(side, house, first);
            first = false;
            let sown = state.play(Move::new(house).unwrap());
            assert_eq!(again, sown.extra_turn);
            assert_eq!(EngineBoard::from_state(&state).to_string(), pits.field());
        }
        assert!(pits.over());
    }
}

// ---------------------------------------------------------------------------------------------
// The fake engine.

/// The agent as a child process: its stdin, its stdout lines, its stderr.
struct Process {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: JoinHandle<String>,
}

impl Process {
    fn spawn(args: &[&str]) -> Process {
        let mut child = cli_common::command()
            .arg("mankalah")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the kalah binary runs");
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (send, lines) = channel();
        std::thread::spawn(move || {
            loop {
                // Raw lines, with their `\n` (or none, at the end).
                let mut line = Vec::new();
                match stdout.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8(line).expect("UTF-8 on stdout");
                        if send.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            text
        });
        Process {
            child,
            stdin,
            lines,
            stderr,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        // The agent may have stopped (a test of bad input): ignore a closed pipe.
        let _ = stdin
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| stdin.flush());
    }

    /// The agent's next line, which must come within `timeout` and be one protocol line.
    fn reply(&mut self, timeout: Duration) -> String {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => {
                let text = line
                    .strip_suffix('\n')
                    .unwrap_or_else(|| panic!("a reply not ended by \\n: {line:?}"));
                assert!(!text.contains('\r'), "only \\n ends a line: {line:?}");
                text.to_owned()
            }
            Err(RecvTimeoutError::Timeout) => panic!("no reply within {timeout:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the agent stopped without replying"),
        }
    }

    /// Closes stdin, waits for the exit; (exit code, unread stdout lines, stderr).
    fn finish(mut self) -> (Option<i32>, Vec<String>, String) {
        drop(self.stdin.take());
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > Duration::from_secs(20) {
                let _ = self.child.kill();
                panic!("the agent did not exit");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let stderr = self.stderr.join().unwrap();
        // Everything the agent wrote (the reader ends at the end of its stdout).
        let rest: Vec<String> = self.lines.iter().collect();
        (status.code(), rest, stderr)
    }
}

/// How the fake's other player moves.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Swap {
    Never,
    Always,
}

/// A game scripted for the fake engine.
struct Script {
    /// The side the agent is given.
    agent: Side,
    /// The opponent's answer to the agent's first move as South.
    swap: Swap,
    /// The opponent's random moves.
    seed: u64,
    /// A board to report instead of the true one after South's first move (when the agent is
    /// North), from which the fake then continues.
    first_board: Option<Pits>,
    /// At the opponent's first move after this many messages sent, report a wrong board and
    /// continue from it.
    corrupt_at: Option<usize>,
    /// The agent's arguments.
    args: Vec<String>,
}

impl Script {
    fn new(agent: Side) -> Script {
        Script {
            agent,
            swap: Swap::Never,
            seed: 1,
            first_board: None,
            corrupt_at: None,
            args: vec!["--time-budget".into(), "2".into()],
        }
    }
}

/// What happened in a scripted game.
struct Played {
    /// The agent's replies in order.
    replies: Vec<String>,
    /// Whether a swap happened, and by whom (`true`: the agent).
    swap: Option<bool>,
    /// The agent's side at the end.
    agent_side: Side,
    /// The final board.
    pits: Pits,
    /// The agent's total response time.
    thinking: Duration,
    stderr: String,
}

/// Plays a whole game between the agent and a random opponent, as the ManKalah engine would:
/// every agent reply is checked to be a legal, well-formed answer given only when asked.
fn play(script: &Script) -> Played {
    let args: Vec<&str> = script.args.iter().map(String::as_str).collect();
    let mut agent = Process::spawn(&args);
    let mut rng = Rng::new(script.seed);
    let mut pits = Pits::start();
    let mut to_move = Side::South;
    let mut agent_side = script.agent;
    let mut moves = 0usize;
    let mut sent = 0usize;
    let mut replies = Vec::new();
    let mut swap = None;
    let mut thinking = Duration::ZERO;
    let mut asked = Instant::now();
    let mut corrupt = script.corrupt_at;
    agent.send(&format!("START;{}", script.agent));
    while !pits.over() {
        let turn = |pits: &Pits, to_move: Side, agent_side: Side| {
            if pits.over() {
                "END"
            } else if to_move == agent_side {
                "YOU"
            } else {
                "OPP"
            }
        };
        if to_move == agent_side {
            let reply = agent.reply(Duration::from_secs(30));
            thinking += asked.elapsed();
            replies.push(reply.clone());
            if reply == "SWAP" {
                assert!(
                    agent_side == Side::North && moves == 1 && swap.is_none(),
                    "SWAP is only North's answer to South's first move: {replies:?}"
                );
                // The sides change; the other agent, now North, moves. The engine tells only
                // the other agent of the swap.
                swap = Some(true);
                agent_side = Side::South;
                continue;
            }
            let house: usize = reply
                .strip_prefix("MOVE;")
                .and_then(|h| h.parse().ok())
                .unwrap_or_else(|| panic!("not MOVE;k or SWAP: {reply:?}"));
            assert!(
                pits.legal(to_move).contains(&house),
                "illegal move {house} for {to_move} on {}",
                pits.field()
            );
            if !pits.sow(to_move, house, moves == 0) {
                to_move = to_move.other();
            }
            moves += 1;
            agent.send(&format!(
                "CHANGE;{house};{};{}",
                pits.field(),
                turn(&pits, to_move, agent_side)
            ));
        } else if script.swap == Swap::Always && moves == 1 && swap.is_none() {
            swap = Some(false);
            agent_side = Side::North;
            agent.send(&format!("CHANGE;SWAP;{};YOU", pits.field()));
        } else {
            let legal = pits.legal(to_move);
            let house = legal[rng.below(legal.len() as u64) as usize];
            if !pits.sow(to_move, house, moves == 0) {
                to_move = to_move.other();
            }
            moves += 1;
            if moves == 1 {
                if let Some(board) = script.first_board {
                    pits = board;
                }
            }
            if corrupt.is_some_and(|at| sent >= at) && !pits.over() {
                // One seed moves from the agent's fullest house to the opponent's store.
                corrupt = None;
                let first = first_house(agent_side);
                let fullest = (first..first + 7).max_by_key(|&i| pits.0[i]).unwrap();
                pits.0[fullest] -= 1;
                pits.0[store(agent_side.other())] += 1;
            }
            agent.send(&format!(
                "CHANGE;{house};{};{}",
                pits.field(),
                turn(&pits, to_move, agent_side)
            ));
        }
        sent += 1;
        asked = Instant::now();
    }
    agent.send("END");
    let (code, rest, stderr) = agent.finish();
    assert_eq!(code, Some(0), "exit code; stderr: {stderr}");
    assert!(
        rest.is_empty(),
        "lines the engine did not ask for: {rest:?}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let total: u32 = pits.0.iter().sum();
    assert_eq!(total, TOTAL_SEEDS);
    Played {
        replies,
        swap,
        agent_side,
        pits,
        thinking,
        stderr,
    }
}

#[test]
fn south_plays_a_whole_game_the_opponent_does_not_swap() {
    let played = play(&Script::new(Side::South));
    assert_eq!(played.swap, None);
    assert_eq!(played.agent_side, Side::South);
    assert!(played.replies.len() > 3);
    assert!(played.replies.iter().all(|r| r.starts_with("MOVE;")));
    assert!(played.stderr.is_empty(), "{}", played.stderr);
    // A random opponent loses.
    assert!(played.pits.0[SOUTH_STORE] > played.pits.0[NORTH_STORE]);
}

#[test]
fn south_plays_on_as_north_after_the_opponent_swaps() {
    let mut script = Script::new(Side::South);
    script.swap = Swap::Always;
    script.seed = 2;
    let played = play(&script);
    assert_eq!(played.swap, Some(false));
    assert_eq!(played.agent_side, Side::North);
    assert!(played.replies.len() > 3);
    assert!(played.stderr.is_empty(), "{}", played.stderr);
    assert!(played.pits.0[NORTH_STORE] > played.pits.0[SOUTH_STORE]);
}

#[test]
fn north_plays_either_answer_to_every_first_move() {
    // Whether the agent swaps or not after each opening, the game goes on legally.
    for seed in 1..=3 {
        let mut script = Script::new(Side::North);
        script.seed = seed;
        script.args = vec!["--time-budget".into(), "1".into()];
        let played = play(&script);
        assert!(played.stderr.is_empty(), "{}", played.stderr);
        match played.swap {
            Some(true) => {
                assert_eq!(played.replies[0], "SWAP");
                assert_eq!(played.agent_side, Side::South);
            }
            None => assert_eq!(played.agent_side, Side::North),
            Some(false) => unreachable!("the opponent never swaps as South"),
        }
    }
}

/// A board after South's first move with `south_store` and `north_store` seeds in the stores
/// and the rest spread over the houses (North to move).
fn lopsided(south_store: u32, north_store: u32) -> Pits {
    let mut pits = Pits([0; 16]);
    pits.0[SOUTH_STORE] = south_store;
    pits.0[NORTH_STORE] = north_store;
    let mut left = TOTAL_SEEDS - south_store - north_store;
    let mut i = 0;
    while left > 0 {
        let house = [0, 8][i % 2] + (i / 2) % 7;
        pits.0[house] += 1;
        left -= 1;
        i += 1;
    }
    pits
}

#[test]
fn north_swaps_when_south_is_far_ahead() {
    let mut script = Script::new(Side::North);
    script.first_board = Some(lopsided(30, 0));
    let played = play(&script);
    assert_eq!(played.swap, Some(true), "{:?}", played.replies);
    assert_eq!(played.replies[0], "SWAP");
    // The reported board is not one South's first move makes: noted, then followed.
    assert!(played.stderr.contains("differs"), "{}", played.stderr);
    assert!(played.pits.0[SOUTH_STORE] > played.pits.0[NORTH_STORE]);
}

#[test]
fn north_moves_when_north_is_far_ahead() {
    let mut script = Script::new(Side::North);
    script.first_board = Some(lopsided(0, 30));
    let played = play(&script);
    assert_eq!(played.swap, None, "{:?}", played.replies);
    assert!(played.replies[0].starts_with("MOVE;"));
    assert!(played.pits.0[NORTH_STORE] > played.pits.0[SOUTH_STORE]);
}

#[test]
fn a_board_that_differs_is_noted_and_followed() {
    let mut script = Script::new(Side::South);
    script.corrupt_at = Some(4);
    script.seed = 5;
    let played = play(&script);
    // Every reply was legal on the engine's board (checked by the fake), and the agent said
    // on stderr that it followed the engine.
    assert!(
        played.stderr.contains("note: the engine's view differs"),
        "{}",
        played.stderr
    );
    assert!(played.stderr.lines().all(|l| l.starts_with("kalah: note:")));
}

#[test]
fn the_whole_game_keeps_within_the_time_budget() {
    let mut script = Script::new(Side::South);
    script.args = vec!["--time-budget".into(), "1.5".into()];
    script.seed = 9;
    let played = play(&script);
    // The agent's own clock keeps a reserve; the fake measures the pipe too.
    assert!(
        played.thinking < Duration::from_millis(1500),
        "{:?} for {} replies",
        played.thinking,
        played.replies.len()
    );
}

/// The allotments in a `--log` file: the `allotted X s` of every thinking note.
fn allotments(log: &str) -> Vec<f64> {
    log.lines()
        .filter_map(|l| l.split_once("(allotted ")?.1.split_once(" s)"))
        .map(|(seconds, _)| seconds.parse().unwrap())
        .collect()
}

#[test]
fn no_reply_is_allotted_more_than_the_cap() {
    let dir = std::env::temp_dir().join(format!("kalah-mankalah-cap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (side, swap, seed) in [
        (Side::South, Swap::Never, 3),
        (Side::South, Swap::Always, 4),
        (Side::North, Swap::Never, 5),
    ] {
        let log = dir.join(format!("agent-{seed}.log"));
        let mut script = Script::new(side);
        script.swap = swap;
        script.seed = seed;
        // A budget whose shares are far above the cap: the cap decides every reply.
        script.args = [
            "--time-budget",
            "3600",
            "--max-move-time",
            "0.05",
            "--log",
            &log.display().to_string(),
        ]
        .map(String::from)
        .to_vec();
        let played = play(&script);
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains("at most 0.050 s a reply"), "{text}");
        let allotted = allotments(&text);
        assert_eq!(allotted.len(), played.replies.len(), "{text}");
        assert!(allotted.iter().all(|&a| a <= 0.05), "{text}");
        // The cap, not the share, decided the replies that thought.
        assert!(allotted.contains(&0.05), "{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_log_has_every_message_with_its_time() {
    let dir = std::env::temp_dir().join(format!("kalah-mankalah-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("agent.log");
    let mut script = Script::new(Side::North);
    script
        .args
        .extend(["--log".into(), log.display().to_string()]);
    let played = play(&script);
    let text = std::fs::read_to_string(&log).unwrap();
    let ins = text.lines().filter(|l| l.contains(" < ")).count();
    let outs: Vec<&str> = text.lines().filter(|l| l.contains(" > ")).collect();
    assert!(text.lines().any(|l| l.ends_with("< START;North")), "{text}");
    assert!(text.lines().any(|l| l.ends_with("< END")), "{text}");
    assert_eq!(outs.len(), played.replies.len(), "{text}");
    assert!(ins > outs.len());
    for line in text.lines() {
        let (time, _) = line.trim_start().split_once(' ').unwrap();
        assert!(time.parse::<f64>().is_ok(), "{line}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// Bad input: one line on stderr, a non-zero exit code, never a panic.

const BOARD: &str = "7,7,7,7,7,7,7,0,0,8,8,8,8,8,8,1";

/// Feeds `lines` (and closes the input); returns (exit code, stdout, stderr).
fn feed(lines: &[&str]) -> (Option<i32>, Vec<String>, String) {
    let mut agent = Process::spawn(&["--time-budget", "1"]);
    for line in lines {
        agent.send(line);
    }
    agent.finish()
}

fn assert_refused(lines: &[&str], code: i32, says: &str) {
    let (status, out, err) = feed(lines);
    assert_eq!(status, Some(code), "{lines:?}: {err}");
    assert!(out.is_empty(), "{lines:?}: {out:?}");
    assert!(!err.contains("panicked"), "{lines:?}: {err}");
    // One line for the error, last; notes before it (a board followed, then refused).
    let error = err.lines().last().unwrap_or_default();
    assert!(error.starts_with("kalah: "), "{lines:?}: {err}");
    assert!(!error.starts_with("kalah: note:"), "{lines:?}: {err}");
    assert!(error.contains(says), "{lines:?}: {err} (expected '{says}')");
    let notes = err.lines().rev().skip(1);
    assert!(
        notes.into_iter().all(|l| l.starts_with("kalah: note:")),
        "{err}"
    );
}

#[test]
fn malformed_messages_are_refused_with_exit_code_2() {
    let change = |mv: &str, board: &str, turn: &str| format!("CHANGE;{mv};{board};{turn}");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["HELLO".into()], "unknown message 'HELLO'"),
        (vec!["START;East".into()], "'East'"),
        (vec!["START;south".into()], "'south'"),
        (vec!["START".into()], "START takes one field"),
        (vec!["".into()], "an empty line"),
        (vec![change("1", BOARD, "OPP")], "CHANGE before START"),
        (
            vec!["START;North".into(), "START;North".into()],
            "START again",
        ),
        (
            vec!["START;North".into(), change("1", "7,7,7", "YOU")],
            "has 3 numbers, expected 16",
        ),
        (
            vec!["START;North".into(), change("8", BOARD, "YOU")],
            "neither a house 1 to 7 nor SWAP",
        ),
        (
            vec!["START;North".into(), change("0", BOARD, "YOU")],
            "neither a house",
        ),
        (
            vec!["START;North".into(), change("1", BOARD, "ME")],
            "the turn 'ME'",
        ),
        (
            vec![
                "START;North".into(),
                change("1", "7,7,7,7,7,7,7,0,0,8,8,8,8,8,8,x", "YOU"),
            ],
            "'x' in the board",
        ),
        (
            vec![
                "START;North".into(),
                change("1", "7,7,7,7,7,7,7,0,0,8,8,8,8,8,8,-1", "YOU"),
            ],
            "'-1' in the board",
        ),
        (
            vec![
                "START;North".into(),
                change("1", "7,7,7,7,7,7,7,0,0,8,8,8,8,8,8,2", "YOU"),
            ],
            "holds 99 seeds",
        ),
        (
            vec!["START;North".into(), "CHANGE;1;YOU".into()],
            "CHANGE takes three fields",
        ),
        (
            vec!["START;North".into(), format!("CHANGE;1; {BOARD};YOU")],
            "' 7' in the board",
        ),
        (
            vec!["START;North".into(), "END;now".into()],
            "END takes no fields",
        ),
        (
            // North to move with an empty side: the game would be over.
            vec![
                "START;North".into(),
                change("1", "0,0,0,0,0,0,0,0,0,8,8,8,8,8,8,50", "YOU"),
            ],
            "all our houses are empty",
        ),
    ];
    for (lines, says) in &cases {
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        assert_refused(&lines, 2, says);
    }
}

#[test]
fn a_long_or_binary_line_is_refused() {
    let long = "CHANGE;".repeat(1000);
    assert_refused(&[&long], 2, "longer than");
    let mut agent = Process::spawn(&[]);
    let stdin = agent.stdin.as_mut().unwrap();
    stdin.write_all(b"START;\xffNorth\n").unwrap();
    let (code, out, err) = agent.finish();
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty());
    assert!(err.contains("not UTF-8"), "{err}");
}

#[cfg(unix)]
#[test]
fn an_endless_line_is_refused_at_once_and_control_characters_are_shown_escaped() {
    // /dev/zero is one line that never ends: refused as soon as it passes the bound.
    let mut child = cli_common::command()
        .arg("mankalah")
        .stdin(Stdio::from(std::fs::File::open("/dev/zero").unwrap()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("the agent read /dev/zero for 20 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("a line longer than 4096 bytes"), "{err}");
    assert!(out.stdout.is_empty());
    // A terminal shows an escape sequence in a message, it does not obey it.
    assert_refused(&["START;\u{1b}[31mSouth"], 2, "'\\u{1b}[31mSouth'");
    assert_refused(&["\u{202e}HELLO"], 2, "'\\u{202e}HELLO'");
    let (_, _, err) = feed(&[&format!("START;{}", "\u{1b}".repeat(1000))]);
    assert!(!err.contains('\u{1b}') && err.len() < 400, "{err}");
}

#[test]
fn input_that_ends_before_end_is_a_failure() {
    assert_refused(&["START;North"], 1, "ended before END");
    assert_refused(&[], 1, "ended before END");
}

#[test]
fn end_stops_the_agent_quietly() {
    // At once, and after an abnormal end (no CHANGE;...;END before it).
    for lines in [vec!["END"], vec!["START;North", "END"]] {
        let (code, out, err) = feed(&lines);
        assert_eq!(code, Some(0), "{lines:?}: {err}");
        assert!(out.is_empty(), "{lines:?}: {out:?}");
        assert!(err.is_empty(), "{lines:?}: {err}");
    }
    // South answers START at once, then reads END.
    let (code, out, err) = feed(&["START;South", "END"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(
        out[0].starts_with("MOVE;") && out[0].ends_with('\n'),
        "{out:?}"
    );
    assert!(err.is_empty(), "{err}");
}

#[test]
fn a_game_that_ended_may_lose_its_end_line() {
    // The last CHANGE says END; the input then closes without END: a warning, exit code 0.
    let mut pits = Pits([0; 16]);
    pits.0[SOUTH_STORE] = 60;
    pits.0[NORTH_STORE] = 38;
    let last = format!("CHANGE;3;{};END", pits.field());
    let (code, out, err) = feed(&["START;North", &last]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.is_empty());
    assert!(err.contains("warning: the engine's input ended"), "{err}");
}

#[test]
fn bad_arguments_are_refused() {
    for args in [
        &["--time-budget", "0"][..],
        &["--time-budget", "-3"],
        &["--time-budget", "soon"],
        &["--threads", "0"],
        &["--max-move-time", "0"],
        &["--max-move-time", "601"],
        &["--max-move-time", "-1"],
        &["--max-move-time", "later"],
    ] {
        let out = cli_common::command()
            .arg("mankalah")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}

// ---------------------------------------------------------------------------------------------
// The library, line by line.

fn agent(budget_ms: u64) -> Agent {
    agent_with(TimePlan {
        budget: Duration::from_millis(budget_ms),
        max_move: DEFAULT_MAX_MOVE_TIME,
    })
}

fn agent_with(plan: TimePlan) -> Agent {
    let config = EngineConfig {
        db: None,
        exact_seeds: EngineConfig::default_exact_seeds(7),
        threads: 1,
        tt_mib: 16,
    };
    Agent::new(plan, config).unwrap()
}

#[test]
fn messages_parse_as_the_protocol_says() {
    assert_eq!(
        Message::parse("START;South"),
        Ok(Message::Start(Side::South))
    );
    assert_eq!(Message::parse("END"), Ok(Message::End));
    let Ok(Message::Change {
        action,
        board,
        turn,
    }) = Message::parse("CHANGE;7;8,8,8,8,8,8,7,0,7,7,7,7,7,7,0,1;OPP")
    else {
        panic!("a CHANGE");
    };
    assert_eq!(action, Action::Sow(Move::new(7).unwrap()));
    assert_eq!(turn, Turn::Opp);
    assert_eq!(board.north, [8, 8, 8, 8, 8, 8, 7]);
    assert_eq!((board.north_store, board.south_store), (0, 1));
    assert_eq!(board.south, [7, 7, 7, 7, 7, 7, 0]);
    assert_eq!(board.to_string(), "8,8,8,8,8,8,7,0,7,7,7,7,7,7,0,1");
    assert!(matches!(
        Message::parse("CHANGE;SWAP;8,8,8,8,8,8,7,0,7,7,7,7,7,7,0,1;YOU"),
        Ok(Message::Change {
            action: Action::Swap,
            turn: Turn::You,
            ..
        })
    ));
    assert_eq!(Reply::Move(Move::new(3).unwrap()).to_string(), "MOVE;3");
    assert_eq!(Reply::Swap.to_string(), "SWAP");
    // The board's rows: South's house 7 is next to South's store, North's house 1 faces it.
    let state = board.to_state(Some(Side::North));
    assert_eq!(state.houses(Side::South), &[7, 7, 7, 7, 7, 7, 0]);
    assert_eq!(state.store(Side::South), 1);
    assert_eq!(EngineBoard::from_state(&state), board);
}

#[test]
fn as_south_the_agent_follows_the_opponents_swap() {
    let mut a = agent(500);
    assert_eq!(a.receive("START;South"), Ok(Next::Respond));
    let decision = a.respond(Instant::now()).unwrap();
    let Reply::Move(mv) = decision.reply else {
        panic!("South cannot swap");
    };
    assert!(decision.value.is_some_and(|v| v <= 0), "{decision:?}");
    let mut pits = Pits::start();
    pits.sow(Side::South, mv.house(), true);
    let echo = format!("CHANGE;{};{};OPP", mv.house(), pits.field());
    assert_eq!(a.receive(&echo), Ok(Next::Wait));
    let swap = format!("CHANGE;SWAP;{};YOU", pits.field());
    assert_eq!(a.receive(&swap), Ok(Next::Respond));
    assert_eq!(a.side(), Some(Side::North));
    assert!(a.swapped());
    let decision = a.respond(Instant::now()).unwrap();
    let Reply::Move(mv) = decision.reply else {
        panic!("no second swap");
    };
    assert!(pits.legal(Side::North).contains(&mv.house()));
    assert!(a.take_notes().is_empty());
}

#[test]
fn as_north_the_agent_compares_moving_with_swapping() {
    for (south, north, swaps) in [(30, 0, true), (0, 30, false)] {
        let mut a = agent(2000);
        assert_eq!(a.receive("START;North"), Ok(Next::Wait));
        let pits = lopsided(south, north);
        let first = format!("CHANGE;1;{};YOU", pits.field());
        assert_eq!(a.receive(&first), Ok(Next::Respond));
        assert_eq!(a.take_notes().len(), 1, "the board is not the true one");
        let decision = a.respond(Instant::now()).unwrap();
        assert_eq!(decision.reply == Reply::Swap, swaps, "{decision:?}");
        // The value of the chosen answer is the better of v and -v.
        assert!(decision.value.is_some_and(|v| v >= 0), "{decision:?}");
        assert_eq!(
            a.side(),
            Some(if swaps { Side::South } else { Side::North })
        );
    }
}

#[test]
fn the_agent_never_speaks_out_of_turn() {
    let mut a = agent(500);
    assert!(a.respond(Instant::now()).is_err(), "before START");
    assert_eq!(a.receive("START;North"), Ok(Next::Wait));
    assert!(a.respond(Instant::now()).is_err(), "South moves first");
    let opp = format!("CHANGE;1;{BOARD};OPP");
    // South's first move passes the turn: the engine saying OPP is a difference, followed.
    assert_eq!(a.receive(&opp), Ok(Next::Wait));
    assert_eq!(a.take_notes().len(), 1);
    assert!(a.respond(Instant::now()).is_err());
    assert_eq!(a.receive("END"), Ok(Next::Stop));
    assert!(a.receive("END").is_err(), "nothing after END");
}

/// A board with 12 seeds on it, within the exact solver's reach, North far ahead.
fn small_endgame() -> Pits {
    let mut pits = Pits([0; 16]);
    pits.0[..7].copy_from_slice(&[1, 2, 0, 3, 0, 0, 1]);
    pits.0[8..15].copy_from_slice(&[2, 0, 0, 1, 0, 2, 0]);
    pits.0[NORTH_STORE] = 50;
    pits.0[SOUTH_STORE] = TOTAL_SEEDS - 50 - 12;
    pits
}

/// An agent as North, to move on `pits` after its answer to South's first move, with `plan`.
/// The engine reports the first board as [`small_endgame`] (so the answer is solved at once,
/// and is a move) and then `pits`; the agent notes both differences and follows.
fn north_to_move(pits: Pits, plan: TimePlan) -> Agent {
    let mut a = agent_with(plan);
    assert_eq!(a.receive("START;North"), Ok(Next::Wait));
    let first = format!("CHANGE;1;{};YOU", small_endgame().field());
    assert_eq!(a.receive(&first), Ok(Next::Respond));
    let decision = a.respond(Instant::now()).unwrap();
    assert!(decision.exact, "{decision:?}");
    let Reply::Move(mv) = decision.reply else {
        panic!("North, far ahead, does not swap: {decision:?}");
    };
    let change = format!("CHANGE;{};{};YOU", mv.house(), pits.field());
    assert_eq!(a.receive(&change), Ok(Next::Respond));
    a.take_notes();
    a
}

/// A plan under which every reply may think for ten minutes.
fn slow_plan() -> TimePlan {
    TimePlan {
        budget: Duration::from_secs(86_400),
        max_move: Duration::from_secs(600),
    }
}

#[test]
fn a_position_solved_exactly_is_answered_without_waiting_out_the_time() {
    let pits = small_endgame();
    let mut a = north_to_move(pits, slow_plan());
    let decision = a.respond(Instant::now()).unwrap();
    assert!(decision.exact, "{decision:?}");
    assert_eq!(decision.allotted, Duration::from_secs(600));
    // Answered once solved, not after ten minutes (the test would hang until then).
    assert!(decision.spent < decision.allotted, "{decision:?}");
    assert!(
        matches!(decision.reply, Reply::Move(mv) if pits.legal(Side::North).contains(&mv.house()))
    );
}

#[test]
fn a_single_legal_move_is_answered_without_thinking() {
    // North has seeds in one house only, with many seeds on the board.
    let mut pits = Pits([0; 16]);
    pits.0[3] = 2;
    pits.0[8..15].copy_from_slice(&[9, 9, 9, 9, 9, 9, 9]);
    pits.0[NORTH_STORE] = 20;
    pits.0[SOUTH_STORE] = TOTAL_SEEDS - 20 - 2 - 63;
    let mut a = north_to_move(pits, slow_plan());
    let decision = a.respond(Instant::now()).unwrap();
    assert_eq!(decision.reply, Reply::Move(Move::new(4).unwrap()));
    assert_eq!((decision.value, decision.nodes), (None, 0), "{decision:?}");
}

#[test]
fn the_agent_thinks_no_longer_than_its_plan_allots() {
    let plan = TimePlan {
        budget: Duration::from_secs(3600),
        max_move: Duration::from_millis(30),
    };
    let mut a = agent_with(plan);
    assert_eq!(a.receive("START;South"), Ok(Next::Respond));
    let decision = a.respond(Instant::now()).unwrap();
    assert_eq!(decision.allotted, plan.max_move, "{decision:?}");
    assert_eq!(a.plan(), plan);
}
