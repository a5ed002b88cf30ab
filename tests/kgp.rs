//! The KGP client against a fake server written here from the protocol's spec: the
//! handshake, moves that reference their state and are always legal, `ping` answered during a
//! search, `stop`, `yield` for solved positions, bad lines survived, reconnection, the binary.
//!
//! "At once" is checked against a loose bound (1-1.5 s) where waiting for the search would take
//! the 5-10 s of its clock: the tests tell the two apart without timing anything finely, so a
//! busy machine (tests run side by side) does not fail them.

use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use kalah::bots::kgp::{self, ClientConfig, Event, KgpError, Summary};

mod cli_common;

/// Kalah(12,12) at the start: far too big to solve, so a search runs until stopped.
const BIG: &str =
    "<12,0,0,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12>";
/// Kalah(6,4) at the start.
const START: &str = "<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>";
/// Ten seeds left: the solver finishes at once.
const SMALL: &str = "<6,20,18,1,0,2,0,0,3,1,1,0,2,0,0>";

// ---------------------------------------------------------------------------------------------
// The fake server
// ---------------------------------------------------------------------------------------------

fn listen() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    (listener, port)
}

/// One client connection, seen from the server.
struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    partial: String,
    /// Every line received, in order, as sent.
    seen: Vec<String>,
    /// The client's id on the last line returned (the client numbers its moves).
    last_id: Option<u64>,
}

impl Conn {
    fn accept(listener: &TcpListener) -> Conn {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match listener.accept() {
                Ok((stream, _)) => {
                    stream.set_nonblocking(false).unwrap();
                    return Conn {
                        reader: BufReader::new(stream.try_clone().unwrap()),
                        writer: stream,
                        partial: String::new(),
                        seen: Vec::new(),
                        last_id: None,
                    };
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                    thread::sleep(Duration::from_millis(5));
                }
                Err(e) => panic!("no client connected: {e}"),
            }
        }
    }

    /// Sends raw bytes (lines with their line breaks).
    fn raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
    }

    fn send(&mut self, line: &str) {
        self.raw(format!("{line}\r\n").as_bytes());
    }

    /// The next line within `within`, without its line break; `None` on timeout or EOF.
    fn line(&mut self, within: Duration) -> Option<String> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            self.reader.get_ref().set_read_timeout(Some(left)).unwrap();
            match self.reader.read_line(&mut self.partial) {
                Ok(0) => return None,
                Ok(_) if self.partial.ends_with('\n') => {
                    let line = std::mem::take(&mut self.partial);
                    let line = line.trim_end_matches(['\r', '\n']).to_owned();
                    self.seen.push(line.clone());
                    let (id, line) = split_id(&line);
                    self.last_id = id;
                    return Some(line.to_owned());
                }
                Ok(_) => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(_) => return None,
            }
        }
    }

    /// Reads until a line satisfies `wanted` within `within`, and returns it.
    fn until(&mut self, within: Duration, wanted: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.line(left) {
                Some(l) if wanted(&l) => return l,
                Some(_) => {}
                None => panic!("not seen within {within:?}; lines: {:?}", self.seen),
            }
        }
    }

    /// Every line that arrives within `within`.
    fn drain(&mut self, within: Duration) -> Vec<String> {
        let deadline = Instant::now() + within;
        let mut lines = Vec::new();
        while let Some(l) = self.line(deadline.saturating_duration_since(Instant::now())) {
            lines.push(l);
        }
        lines
    }

    /// The spec's opening: `kgp 1 0 0`, the client's `mode freeplay`, `init`.
    fn handshake(&mut self) {
        self.send("kgp 1 0 0");
        self.until(secs(5), |l| l == "mode freeplay");
        self.send("2 init");
    }
}

/// A line's own id, if it starts with one (`3@8 move 2`), and the line without it
/// (`@8 move 2`).
fn split_id(line: &str) -> (Option<u64>, &str) {
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    match line[..digits].parse() {
        Ok(id) if line[digits..].starts_with(['@', ' ']) => (Some(id), line[digits..].trim_start()),
        _ => (None, line),
    }
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn ms(m: u64) -> Duration {
    Duration::from_millis(m)
}

/// The house of a `@id move k` line answering state `id`.
fn move_of(line: &str, id: u64) -> Option<usize> {
    line.strip_prefix(&format!("@{id} move "))
        .map(|k| k.trim().parse().expect("a house number"))
}

/// Whether sowing `house` (1-based) is legal on `board`, as the server sees it: a house of
/// the mover's row (the first row) that holds seeds.
fn legal(board: &str, house: usize) -> bool {
    let numbers: Vec<u64> = board
        .trim_matches(['<', '>'])
        .split(',')
        .map(|t| t.parse().unwrap())
        .collect();
    let m = numbers[0] as usize;
    (1..=m).contains(&house) && numbers[2 + house] > 0
}

/// Asks state `id` about `board` and reads up to its `yield`; returns the houses moved (a
/// move repeated at once counted once).
fn ask_until_yield(conn: &mut Conn, id: u64, board: &str, within: Duration) -> Vec<usize> {
    conn.send(&format!("{id} state {board}"));
    let mut moves = Vec::new();
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(line) = conn.line(left) else {
            panic!(
                "no yield for {board} within {within:?}; lines: {:?}",
                conn.seen
            );
        };
        if let Some(house) = move_of(&line, id) {
            assert!(legal(board, house), "illegal move {house} on {board}");
            // A move sent again (see the client's `request` module) counts once.
            if moves.last() != Some(&house) {
                moves.push(house);
            }
        } else if line == format!("@{id} yield") {
            return moves;
        } else {
            panic!("unexpected line {line:?} while answering {board}");
        }
    }
}

/// What the practice server made of one state (see [`ask_racing`]).
#[derive(Debug)]
struct Raced {
    /// Moves it accepted, in order.
    accepted: Vec<usize>,
    /// Moves and yields it refused with an error.
    refused: usize,
    /// The yield it accepted, if one came.
    yielded: bool,
}

impl Raced {
    /// The move the server plays: the last one accepted before an accepted yield; `None`
    /// stands for its random move (no yield accepted, or no move before it).
    fn played(&self) -> Option<usize> {
        if self.yielded {
            self.accepted.last().copied()
        } else {
            None
        }
    }
}

/// State `id` asked the way the KWARC practice server does it, race included: the state is
/// recorded only `late` after its line is sent. A `move` or `yield` that arrives before gets
/// `error "No state associated with id"` (referencing its own id) and is dropped. Reads until
/// an accepted `yield`, or `within`.
fn ask_racing(conn: &mut Conn, id: u64, board: &str, late: Duration, within: Duration) -> Raced {
    conn.send(&format!("{id} state {board}"));
    let recorded = Instant::now() + late;
    let deadline = Instant::now() + within;
    let mut raced = Raced {
        accepted: Vec::new(),
        refused: 0,
        yielded: false,
    };
    while let Some(line) = conn.line(deadline.saturating_duration_since(Instant::now())) {
        let house = move_of(&line, id);
        let yielded = line == format!("@{id} yield");
        assert!(house.is_some() || yielded, "unexpected line {line:?}");
        if Instant::now() < recorded {
            raced.refused += 1;
            let to = conn.last_id.map_or(String::new(), |i| format!("@{i}"));
            conn.send(&format!("100{to} error \"No state associated with id\""));
        } else if let Some(house) = house {
            assert!(legal(board, house), "illegal move {house} on {board}");
            raced.accepted.push(house);
        } else {
            raced.yielded = true;
            break;
        }
    }
    raced
}

// ---------------------------------------------------------------------------------------------
// The client
// ---------------------------------------------------------------------------------------------

struct Outcome {
    result: Result<Summary, KgpError>,
    log: String,
    events: Vec<Event>,
}

fn client(port: u16, tweak: impl FnOnce(&mut ClientConfig)) -> JoinHandle<Outcome> {
    let mut config = ClientConfig::new("127.0.0.1", port);
    config.tt_mib = 16;
    config.retries = 0;
    config.retry_delay = ms(50);
    tweak(&mut config);
    thread::spawn(move || {
        let mut log = Vec::new();
        let mut events = Vec::new();
        let result = kgp::run(&config, &mut log, &mut |e| events.push(e.clone()));
        Outcome {
            result,
            log: String::from_utf8(log).unwrap(),
            events,
        }
    })
}

fn answers(events: &[Event]) -> Vec<&kgp::Answer> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Answered(a) => Some(a),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[test]
fn handshake_sends_the_info_and_token_then_mode_freeplay_and_goodbye_ends_the_client() {
    let (listener, port) = listen();
    let client = client(port, |c| {
        c.name = Some("test bot".into());
        c.authors = Some("a \"quoted\" author".into());
        c.token = Some("s3cret".into());
    });
    let mut conn = Conn::accept(&listener);
    // The spec lets the server ping at any time, even before the greeting.
    conn.send("1 ping");
    assert_eq!(conn.line(secs(2)).as_deref(), Some("@1 pong"));
    conn.send("kgp 1 0 0");
    assert_eq!(
        conn.line(secs(2)).as_deref(),
        Some("set info:name \"test bot\"")
    );
    assert_eq!(
        conn.line(secs(2)).as_deref(),
        Some(r#"set info:authors "a \"quoted\" author""#)
    );
    assert_eq!(
        conn.line(secs(2)).as_deref(),
        Some("set auth:token \"s3cret\"")
    );
    assert_eq!(conn.line(secs(2)).as_deref(), Some("mode freeplay"));
    conn.send("2 init");
    conn.send("3 goodbye");
    let out = client.join().unwrap();
    assert_eq!(
        out.result,
        Ok(Summary {
            sessions: 1,
            answered: 0,
            stopped: false,
        })
    );
    assert!(out.events.contains(&Event::Greeted {
        version: "1.0.0".into()
    }));
    assert!(out.log.contains("goodbye"), "{}", out.log);
}

#[test]
fn another_major_version_ends_the_client_without_a_mode() {
    let (listener, port) = listen();
    let client = client(port, |c| c.retries = 3);
    let mut conn = Conn::accept(&listener);
    conn.send("kgp 2 0 0");
    let out = client.join().unwrap();
    assert!(matches!(out.result, Err(KgpError::Incompatible { .. })));
    let lines = conn.drain(ms(200));
    assert!(lines.iter().all(|l| !l.starts_with("mode")), "{lines:?}");
}

#[test]
fn a_state_gets_a_legal_move_at_once_referencing_its_id_and_stop_ends_it() {
    let (listener, port) = listen();
    let client = client(port, |c| c.time_per_move = secs(5));
    let mut conn = Conn::accept(&listener);
    conn.handshake();
    let asked = Instant::now();
    conn.send(&format!("17 state {START}"));
    let first = conn.line(secs(2)).expect("a move");
    let waited = asked.elapsed();
    let house = move_of(&first, 17).unwrap_or_else(|| panic!("{first:?}"));
    assert!(legal(START, house));
    assert!(waited < ms(1500), "the first move took {waited:?}");
    thread::sleep(ms(300));
    conn.send("19@17 stop");
    // Nothing but moves for 17 may come, and no yield after the stop.
    let after = conn.drain(ms(400));
    for line in &after {
        let house = move_of(line, 17).unwrap_or_else(|| panic!("after stop: {line:?}"));
        assert!(legal(START, house));
    }
    conn.send("21 goodbye");
    let out = client.join().unwrap();
    assert_eq!(out.result.map(|s| s.answered), Ok(1));
    let answer = answers(&out.events)[0].clone();
    assert_eq!(answer.id, Some(17));
    assert!(answer.stopped && !answer.yielded);
    assert!(answer.elapsed < secs(2), "{answer}");
    assert!(out.log.contains("state 17 <6,0,0,4,4,4"), "{}", out.log);
}

#[test]
fn a_ping_during_a_long_search_is_answered_at_once() {
    let (listener, port) = listen();
    let client = client(port, |c| c.time_per_move = secs(10));
    let mut conn = Conn::accept(&listener);
    conn.handshake();
    conn.send(&format!("3 state {BIG}"));
    conn.until(secs(2), |l| move_of(l, 3).is_some());
    thread::sleep(ms(300));
    for id in [5, 7, 9] {
        let sent = Instant::now();
        conn.send(&format!("{id} ping"));
        let pong = format!("@{id} pong");
        conn.until(secs(2), |l| l == pong);
        let waited = sent.elapsed();
        assert!(waited < ms(1000), "pong took {waited:?}");
        thread::sleep(ms(100));
    }
    conn.send("11@3 stop");
    conn.send("13 goodbye");
    let out = client.join().unwrap();
    assert!(out.result.is_ok());
    let answer = answers(&out.events)[0].clone();
    assert!(answer.stopped && answer.elapsed < secs(3), "{answer}");
}

#[test]
fn a_stop_before_any_move_ends_the_search_and_a_newer_state_cuts_an_older_one_short() {
    let (listener, port) = listen();
    let client = client(port, |c| c.time_per_move = secs(10));
    let mut conn = Conn::accept(&listener);
    conn.handshake();
    // The stop comes in the same packet as the state: the search must end at once.
    conn.raw(format!("4 state {BIG}\r\n6@4 stop\r\n").as_bytes());
    let lines = conn.drain(ms(400));
    for line in &lines {
        let house = move_of(line, 4).unwrap_or_else(|| panic!("{line:?}"));
        assert!(legal(BIG, house));
    }
    // A long search, cut short by a newer state: the older one yields its move, the newer one
    // is answered at once.
    conn.send(&format!("8 state {BIG}"));
    conn.until(secs(2), |l| move_of(l, 8).is_some());
    let sent = Instant::now();
    conn.send(&format!("10 state {START}"));
    conn.until(secs(2), |l| l == "@8 yield");
    conn.until(secs(2), |l| move_of(l, 10).is_some());
    assert!(sent.elapsed() < ms(1500), "{:?}", sent.elapsed());
    conn.send("12@10 stop");
    conn.send("14 goodbye");
    let out = client.join().unwrap();
    assert_eq!(out.result.map(|s| s.answered), Ok(3));
    let all = answers(&out.events);
    let first = all.iter().find(|a| a.id == Some(4)).unwrap();
    assert!(first.stopped && !first.yielded, "{first}");
    assert!(first.elapsed < ms(1500), "{first}");
}

#[test]
fn a_flood_of_states_is_answered_by_its_last_at_once() {
    let (listener, port) = listen();
    let client = client(port, |c| c.time_per_move = secs(2));
    let mut conn = Conn::accept(&listener);
    conn.handshake();
    // 200 states in one packet: only the newest matters.
    let flood: String = (0..200)
        .map(|i| format!("{} state {START}\r\n", 2 * i + 1))
        .collect();
    let sent = Instant::now();
    conn.raw(flood.as_bytes());
    conn.until(secs(10), |l| l == "@399 yield");
    assert!(sent.elapsed() < secs(5), "{:?}", sent.elapsed());
    conn.send("400 goodbye");
    let out = client.join().unwrap();
    let all = answers(&out.events);
    let last = all
        .iter()
        .find(|a| a.id == Some(399))
        .expect("the last state answered");
    assert!(last.yielded && !last.moves.is_empty(), "{last}");
    // The stale ones sent nothing: only those begun before the next one was read (one, or a
    // few on a busy machine), and the last.
    let moved = all.iter().filter(|a| !a.moves.is_empty()).count();
    assert!(moved <= 5, "{moved} of 200 states got moves");
}

#[test]
fn a_position_the_solver_solves_gets_its_move_and_a_yield_long_before_the_deadline() {
    let (listener, port) = listen();
    let client = client(port, |c| c.time_per_move = secs(10));
    let mut conn = Conn::accept(&listener);
    conn.handshake();
    let asked = Instant::now();
    let moves = ask_until_yield(&mut conn, 3, SMALL, secs(5));
    assert!(asked.elapsed() < secs(3), "{:?}", asked.elapsed());
    assert!(!moves.is_empty());
    conn.send("5 goodbye");
    let out = client.join().unwrap();
    let answer = answers(&out.events)[0].clone();
    let last = answer.last.expect("the engine answered");
    assert!(last.exact, "{answer}");
    assert_eq!(last.action.to_string(), moves.last().unwrap().to_string());
    assert!(answer.yielded);
}

#[test]
fn bad_lines_from_the_server_are_ignored_with_a_note() {
    let (listener, port) = listen();
    let client = client(port, |c| c.time_per_move = ms(200));
    let mut conn = Conn::accept(&listener);
    conn.handshake();
    conn.raw(b"\r\n   \n\x00\xff\xfe garbage\r\n@@ x\r\nstate\r\n5 state <3,0,0>\r\n");
    conn.raw(b"7 state notaboard\n9 state <0>\nfrobnicate 1 2\nset\nset time:clock soon\n");
    conn.raw(b"4@ x\n\"quoted\n11 state <3,0,0,1,\n");
    conn.raw(format!("{}\r\n", "x".repeat(20_000)).as_bytes());
    conn.raw(b"error \"something went wrong\"\r\nok\r\n");
    // The mover's row is empty: nothing to move, only a yield.
    assert_eq!(
        ask_until_yield(&mut conn, 13, "<3,0,0,0,0,0,1,1,1>", secs(2)),
        Vec::<usize>::new()
    );
    // The other row is empty (the game is over here): still a legal move.
    assert_eq!(
        ask_until_yield(&mut conn, 15, "<2,0,0,1,1,0,0>", secs(2)).len(),
        1
    );
    // And a good state still gets good answers.
    assert!(!ask_until_yield(&mut conn, 17, START, secs(3)).is_empty());
    conn.send("19 goodbye");
    let out = client.join().unwrap();
    assert_eq!(out.result.map(|s| s.answered), Ok(3));
    let ignored = out.log.matches("ignored").count();
    assert!(ignored >= 12, "{ignored} notes:\n{}", out.log);
    assert!(out.log.contains("something went wrong"));
    assert!(
        out.events
            .iter()
            .any(|e| matches!(e, Event::ServerError(t) if t.contains("something went wrong")))
    );
}

#[test]
fn hostile_lines_from_the_server_are_survived_and_the_client_goes_on_answering() {
    let (listener, port) = listen();
    let client = client(port, |c| c.time_per_move = ms(200));
    let mut conn = Conn::accept(&listener);
    conn.handshake();
    // m so large that 2m + 3 overflows, and other sizes the arithmetic must not trust.
    conn.send("1 state <9223372036854775807>");
    conn.send("3 state <18446744073709551615,0,0>");
    conn.send("5 state <9223372036854775806,0,0,1>");
    conn.send("7 state <99999999999999999999999,0,0,1,1>");
    conn.send("9 state <3,0,0,-1,2,3,4,5,6>");
    conn.send("11 state <1,0,0,1,1");
    conn.send("@99999999999999999999 stop");
    conn.send("set time:clock -5");
    conn.send("set time:clock 99999999999999999999.5");
    conn.send("kgp 1 \u{1b}[31m 0");
    conn.send("error \"\u{1b}]0;owned\u{7}\" \u{1b}[2J");
    conn.send(&format!("state {}", "<".repeat(10_000)));
    conn.send(&format!("x {}", "\"".repeat(10_000)));
    // Two megabytes with no line break, then one: ignored as one line, in bounded memory.
    conn.raw(&vec![b'7'; 2 << 20]);
    conn.raw(b"\r\n\xc3\x28 state\r\n");
    // Seeds that sum past u64 and a house count far beyond the engine: a simple legal move.
    let huge = "<2,18446744073709551615,18446744073709551615,18446744073709551615,1,1,1>";
    assert_eq!(ask_until_yield(&mut conn, 13, huge, secs(3)), vec![2]);
    let wide = format!("<4000,0,0{}>", ",1".repeat(8000));
    assert_eq!(ask_until_yield(&mut conn, 15, &wide, secs(3)), vec![4000]);
    // The client still answers pings and states.
    conn.send("18446744073709551615 ping");
    conn.until(secs(2), |l| l == "@18446744073709551615 pong");
    assert!(!ask_until_yield(&mut conn, 17, START, secs(3)).is_empty());
    conn.send("19 goodbye");
    let out = client.join().expect("the client never panics");
    assert_eq!(out.result.map(|s| s.answered), Ok(3));
    assert!(
        out.log.contains("ignored a state with a bad board"),
        "{}",
        out.log
    );
    assert!(out.log.contains("longer than"), "{}", out.log);
    assert!(out.log.contains("not UTF-8"), "{}", out.log);
    // What the server sent is in the log escaped, never as raw control characters.
    assert!(out.log.contains("\\u{1b}]0;owned"), "{}", out.log);
    assert!(
        !out.log.chars().any(|c| c.is_control() && c != '\n'),
        "{}",
        out.log
    );
}

#[test]
fn moves_are_always_legal_on_boards_of_every_size() {
    let (listener, port) = listen();
    let client = client(port, |c| c.time_per_move = ms(40));
    let mut conn = Conn::accept(&listener);
    conn.handshake();
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut boards = Vec::new();
    for i in 0..28u64 {
        let m = 1 + (i % 13) as usize; // 1 to 13 houses: 13 is beyond the engine
        let mut house = || if next(5) < 2 { 0 } else { next(9) };
        let mut south: Vec<u64> = (0..m).map(|_| house()).collect();
        let north: Vec<u64> = (0..m).map(|_| house()).collect();
        if south.iter().all(|&s| s == 0) {
            south[m - 1] = 1 + next(3);
        }
        let stores = [next(20), next(20)];
        let numbers: Vec<String> = [m as u64]
            .into_iter()
            .chain(stores)
            .chain(south)
            .chain(north)
            .map(|n| n.to_string())
            .collect();
        boards.push(format!("<{}>", numbers.join(",")));
    }
    // More seeds in a house than the crate counts.
    boards.push("<2,0,0,70000,1,1,1>".into());
    for (i, board) in boards.iter().enumerate() {
        let moves = ask_until_yield(&mut conn, 2 * i as u64 + 3, board, secs(3));
        assert!(!moves.is_empty(), "no move on {board}");
    }
    conn.send("1001 goodbye");
    let out = client.join().unwrap();
    assert_eq!(out.result.map(|s| s.answered), Ok(boards.len() as u64));
}

#[test]
fn the_client_reconnects_after_a_lost_connection_and_carries_on() {
    let (listener, port) = listen();
    let client = client(port, |c| c.retries = 2);
    let mut conn = Conn::accept(&listener);
    conn.handshake();
    drop(conn);
    let mut conn = Conn::accept(&listener);
    conn.handshake();
    ask_until_yield(&mut conn, 3, SMALL, secs(5));
    conn.send("5 goodbye");
    let out = client.join().unwrap();
    assert_eq!(
        out.result,
        Ok(Summary {
            sessions: 2,
            answered: 1,
            stopped: false,
        })
    );
    assert!(out.events.iter().any(|e| matches!(
        e,
        Event::Retrying {
            attempt: 1,
            of: 2,
            ..
        }
    )));
    assert!(out.log.contains("reconnecting"), "{}", out.log);
}

#[test]
fn the_client_gives_up_after_its_retries_when_the_server_is_gone() {
    let (listener, port) = listen();
    let started = Instant::now();
    let client = client(port, |c| c.retries = 2);
    let mut conn = Conn::accept(&listener);
    conn.handshake();
    drop(conn);
    drop(listener);
    let out = client.join().unwrap();
    match out.result {
        Err(KgpError::GaveUp { attempts, .. }) => assert_eq!(attempts, 3),
        other => panic!("{other:?}"),
    }
    let retries = out
        .events
        .iter()
        .filter(|e| matches!(e, Event::Retrying { .. }))
        .count();
    assert_eq!(retries, 2);
    assert!(started.elapsed() < secs(5));
}

// ---------------------------------------------------------------------------------------------
// The binary
// ---------------------------------------------------------------------------------------------

fn temp_log(name: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("kalah-kgp-{}-{name}.log", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

#[test]
fn the_binary_plays_logs_and_exits_on_goodbye() {
    let (listener, port) = listen();
    let log = temp_log("plays");
    let child = cli_common::command()
        .args(["kgp", "--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--name", "bin", "--time-per-move", "0.3", "--tt-mb", "16"])
        .arg("--log")
        .arg(&log)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut conn = Conn::accept(&listener);
    conn.send("kgp 1 0 0");
    assert_eq!(conn.line(secs(5)).as_deref(), Some("set info:name \"bin\""));
    assert_eq!(conn.line(secs(5)).as_deref(), Some("mode freeplay"));
    let moves = ask_until_yield(&mut conn, 3, START, secs(5));
    assert!(!moves.is_empty());
    conn.send("5 goodbye");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("connected to 127.0.0.1"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("1 state answered"), "{stdout}");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains(&format!("state 3 {START}: move")), "{text}");
    assert!(text.contains("; yield;"), "{text}");
    let _ = std::fs::remove_file(&log);
}

#[test]
fn the_binary_gives_up_with_one_line_and_exit_code_1() {
    let (listener, port) = listen();
    drop(listener);
    let log = temp_log("gives-up");
    let out = cli_common::command()
        .args(["kgp", "--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--retries", "1", "--retry-delay", "0.05"])
        .arg("--log")
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("reconnecting in"), "{stderr}");
    assert!(stderr.contains("(attempt 1 of 1)"), "{stderr}");
    let last = stderr.lines().last().unwrap();
    assert!(
        last.starts_with("kalah: gave up on the KGP server"),
        "{stderr}"
    );
    let _ = std::fs::remove_file(&log);

    let out = cli_common::command()
        .args([
            "kgp",
            "--host",
            "127.0.0.1",
            "--port",
            "1",
            "--time-per-move",
            "-1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn moves_refused_by_a_server_not_yet_ready_are_sent_again_and_the_yield_waits_for_them() {
    // The server records the state 0.7 s late. The client holds its move (SMALL is solved at
    // once) for its pause, 0.4 s here, is refused, must send the move again a pause later,
    // and yield only once that move has stood, so that the server plays the client's move.
    let (listener, port) = listen();
    let client = client(port, |c| {
        c.time_per_move = secs(10);
        c.resend_pause = ms(400);
    });
    let mut conn = Conn::accept(&listener);
    conn.handshake();
    let raced = ask_racing(&mut conn, 3, SMALL, ms(700), secs(20));
    conn.send("5 goodbye");
    let out = client.join().unwrap();
    let answer = answers(&out.events)[0].clone();
    let last = answer.last.expect("the engine answered");
    assert!(last.exact, "{answer}");
    assert!(raced.yielded, "{raced:?}; lines: {:?}", conn.seen);
    assert_eq!(
        raced.played().map(|h| h.to_string()),
        Some(last.action.to_string()),
        "{raced:?}"
    );
    // Each move carries an id of the client's, so the errors name it.
    assert!(
        conn.seen.iter().any(|l| l.starts_with("1@3 move ")),
        "{:?}",
        conn.seen
    );
    assert_eq!(answer.refused as usize, raced.refused, "{answer}");
    if raced.refused > 0 {
        assert!(answer.resent >= 1, "{answer}");
        assert!(out.log.contains("1 error from the server"), "{}", out.log);
    }
}

#[test]
fn no_move_goes_before_the_pause_and_the_yield_waits_for_the_move_to_stand() {
    // Moves found within the pause (0.3 s) are held, and the latest is sent when it is over;
    // the yield follows once that move has stood a pause.
    let (listener, port) = listen();
    let client = client(port, |c| {
        c.time_per_move = secs(10);
        c.resend_pause = ms(300);
    });
    let mut conn = Conn::accept(&listener);
    conn.handshake();
    conn.send(&format!("3 state {SMALL}"));
    let asked = Instant::now();
    let first = conn.until(secs(10), |l| l.starts_with("@3 move "));
    let first_after = asked.elapsed();
    let rest = conn.until(secs(10), |l| l == "@3 yield");
    let yield_after = asked.elapsed();
    conn.send("5 goodbye");
    let out = client.join().unwrap();
    let answer = answers(&out.events)[0].clone();
    assert!(
        first_after >= ms(300),
        "first move after {first_after:?}: {answer}"
    );
    assert!(
        yield_after >= ms(600),
        "yield after {yield_after:?}: {answer}"
    );
    assert_eq!(rest, "@3 yield");
    let sent: Vec<&String> = conn
        .seen
        .iter()
        .filter(|l| l.contains("@3 move "))
        .collect();
    let last = answer.last.expect("the engine answered");
    assert!(
        sent.last().unwrap().ends_with(&format!(" {}", last.action)),
        "{sent:?}"
    );
    if answer.moves.last().unwrap().after < ms(300) {
        // Everything was found within the pause: only the final move went out.
        assert_eq!(sent.len(), 1, "{sent:?}; {answer}; first {first}");
    }
}

#[test]
fn without_log_the_log_goes_to_the_state_directory_not_the_current_one() {
    let (listener, port) = listen();
    drop(listener);
    let home = cli_common::fresh_dir("kgp-log-home");
    let work = home.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let out = cli_common::command()
        .current_dir(&work)
        .env("HOME", &home)
        .env_remove("XDG_STATE_HOME")
        .args(["kgp", "--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--retries", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let log = home.join(".local/state/kalah/kalah-kgp.log");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!("kalah kgp: log in {}", log.display())),
        "{stderr}"
    );
    assert!(log.exists(), "{stderr}");
    assert!(
        std::fs::read_dir(&work).unwrap().next().is_none(),
        "nothing in the current directory"
    );
    let _ = std::fs::remove_dir_all(&home);
}

/// Starts the binary as a bot of the test server on `port` (0.3 s a move, logging to `log`),
/// with `out` for its stdout and stderr, and greets it up to its `mode freeplay`.
#[cfg(unix)]
fn greeted_bot(
    listener: &TcpListener,
    port: u16,
    log: &std::path::Path,
    out: fn() -> std::process::Stdio,
) -> (std::process::Child, Conn) {
    let child = cli_common::command()
        .args(["kgp", "--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--time-per-move", "0.3", "--tt-mb", "16"])
        .arg("--log")
        .arg(log)
        .stdout(out())
        .stderr(out())
        .spawn()
        .unwrap();
    let mut conn = Conn::accept(listener);
    conn.send("kgp 1 0 0");
    assert_eq!(conn.line(secs(5)).as_deref(), Some("mode freeplay"));
    (child, conn)
}

#[cfg(unix)]
fn signal(child: &std::process::Child, sig: i32) {
    // Safety: kill(2) on our own child's process id.
    unsafe {
        libc::kill(child.id() as i32, sig);
    }
}

#[cfg(unix)]
#[test]
fn sigterm_finishes_the_game_in_play_then_says_goodbye_and_exits_0() {
    let (listener, port) = listen();
    let log = temp_log("sigterm");
    let (mut child, mut conn) = greeted_bot(&listener, port, &log, std::process::Stdio::piped);
    conn.send("set game:id \"g1\"");
    assert!(!ask_until_yield(&mut conn, 3, START, secs(5)).is_empty());
    // Stopped by its operator in the middle of game g1: it stays for the game.
    signal(&child, libc::SIGTERM);
    std::thread::sleep(Duration::from_millis(400));
    assert!(child.try_wait().unwrap().is_none(), "left the game in play");
    assert!(!ask_until_yield(&mut conn, 5, SMALL, secs(5)).is_empty());
    // A state of another game: not answered; goodbye instead.
    conn.send("set game:id \"g2\"");
    conn.send(&format!("7 state {START}"));
    assert_eq!(conn.line(secs(5)).as_deref(), Some("goodbye"));
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("stopped (the game in play finished)"),
        "{stdout}"
    );
    assert!(stdout.contains("2 states answered"), "{stdout}");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("asked to stop: finishing game 'g1' first"),
        "{text}"
    );
    assert!(
        text.contains("a state of another game came: said goodbye"),
        "{text}"
    );
    let _ = std::fs::remove_file(&log);
}

#[cfg(unix)]
#[test]
fn sigterm_with_no_game_in_play_says_goodbye_at_once_and_a_second_signal_exits_at_once() {
    let (listener, port) = listen();
    let log = temp_log("sigterm-idle");
    let (child, mut conn) = greeted_bot(&listener, port, &log, std::process::Stdio::piped);
    signal(&child, libc::SIGTERM);
    assert_eq!(conn.line(secs(5)).as_deref(), Some("goodbye"));
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());

    // In a game, a second signal does not wait for it.
    let (mut child, mut conn) = greeted_bot(&listener, port, &log, std::process::Stdio::null);
    assert!(!ask_until_yield(&mut conn, 3, START, secs(5)).is_empty());
    signal(&child, libc::SIGTERM);
    std::thread::sleep(Duration::from_millis(300));
    assert!(child.try_wait().unwrap().is_none());
    signal(&child, libc::SIGTERM);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < secs(5),
            "the second signal did not end it"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
    let _ = std::fs::remove_file(&log);
}
