//! `kalah serve`: its answers equal `kalah query`'s on the same database, bad and hostile
//! requests get a 400 (or hyper's 431) and leave the server alive, a search past its budget is
//! a 422, and SIGTERM stops it cleanly.

mod cli_common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::Duration;

use cli_common::{command, fresh_dir, kalah, kalah_with_input};
use serde_json::Value;

/// A running `kalah serve` on a free port, killed when dropped.
struct Server {
    child: Child,
    /// `127.0.0.1:PORT`.
    addr: String,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = command()
            .arg("serve")
            .args(["--bind", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kalah serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("a first line");
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_owned();
        Server { child, addr }
    }

    /// Sends `request` (a whole HTTP/1.1 request) and reads the answer to its end.
    fn raw(&self, request: &[u8]) -> (u16, String) {
        let (status, _, body) = self.exchange(request);
        (status, body)
    }

    /// Sends `request` and reads the answer: its status, head and body.
    fn exchange(&self, request: &[u8]) -> (u16, String, String) {
        let mut stream = TcpStream::connect(&self.addr).expect("connects");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("a timeout");
        stream.write_all(request).expect("sent");
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        let answer = String::from_utf8_lossy(&answer).into_owned();
        let status = answer
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status in {answer:?}"));
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        (status, head.to_lowercase(), body.to_owned())
    }

    /// GET `target`: the status and the body as JSON.
    fn get(&self, target: &str) -> (u16, Value) {
        let (status, body) = self.raw(
            format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
        );
        let json = serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("{target}: {e} in {body:?} ({status})"));
        (status, json)
    }

    /// Sends SIGTERM and waits (at most `limit`) for the exit: its status and stderr.
    fn stop(mut self, limit: Duration) -> (std::process::ExitStatus, String) {
        cli_common::terminate(&self.child);
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("waits") {
                break status;
            }
            assert!(started.elapsed() < limit, "no exit within {limit:?}");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        if let Some(mut err) = self.child.stderr.take() {
            let _ = err.read_to_string(&mut stderr);
        }
        (status, stderr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `text` for a URL's query.
fn encode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// A database of 4 houses a side, standard rules, levels 0..=10, in a fresh directory.
fn database(name: &str) -> std::path::PathBuf {
    let dir = fresh_dir(name);
    let d = dir.to_str().expect("a UTF-8 path");
    let out = kalah(&["db", "build", "-m", "4", "--max-seeds", "10", "--dir", d]);
    assert!(out.status.success(), "{out:?}");
    dir
}

/// Positions of 4 houses a side: all with at most `seeds` on the board, from a fixed seed.
fn positions(count: usize, seeds: u32, rng: &mut kalah::Rng) -> Vec<String> {
    (0..count)
        .map(|_| {
            let mut houses = [0u32; 8];
            let on_board = 1 + rng.below(seeds as u64) as u32;
            for _ in 0..on_board {
                houses[rng.below(8) as usize] += 1;
            }
            // An empty row ends the game: no side to move is written then.
            let playing = houses[..4].iter().any(|&h| h > 0) && houses[4..].iter().any(|&h| h > 0);
            let north = playing && rng.below(2) == 1;
            let stores = (rng.below(10), rng.below(10));
            let list: Vec<String> = houses.iter().map(u32::to_string).collect();
            format!(
                "<4,{},{},{}>{}",
                stores.0,
                stores.1,
                list.join(","),
                if north { " north" } else { "" }
            )
        })
        .collect()
}

/// The fields of an answer that `kalah query` gives too, moves in house order.
fn comparable(answer: &Value) -> Value {
    let mut moves: Vec<(u64, i64)> = answer["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| (m["house"].as_u64().unwrap(), m["value"].as_i64().unwrap()))
        .collect();
    moves.sort();
    serde_json::json!({
        "position": answer["position"],
        "to_move": answer["to_move"],
        "value": answer["value"],
        "best": answer["best"],
        "moves": moves,
        "pv": answer["pv"],
        "source": answer["source"],
    })
}

#[test]
fn answers_equal_kalah_query_on_the_same_database() {
    let dir = database("serve-query");
    let d = dir.to_str().unwrap();
    let server = Server::start(&["--db", d]);
    let mut rng = kalah::Rng::new(17);
    // Mostly database positions; some above the top level, searched.
    let mut all = positions(300, 10, &mut rng);
    all.extend(positions(20, 16, &mut rng));
    let out = kalah_with_input(&["query", "-", "--db", d, "--json"], &all.join("\n"));
    assert!(out.status.success(), "{out:?}");
    let expected: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert_eq!(expected.len(), all.len());
    let mut sources = std::collections::BTreeMap::new();
    for (text, want) in all.iter().zip(&expected) {
        let (status, got) = server.get(&format!("/api/v1/position?position={}", encode(text)));
        assert_eq!(status, 200, "{text}: {got}");
        assert_eq!(comparable(&got), comparable(want), "{text}");
        *sources
            .entry(got["source"].as_str().unwrap().to_owned())
            .or_insert(0) += 1;
        // Best first; each move's `after` is the position it leads to.
        let values: Vec<i64> = got["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["value"].as_i64().unwrap())
            .collect();
        assert!(values.windows(2).all(|w| w[0] >= w[1]), "{got}");
        assert_eq!(got["db_max_seeds"], 10);
    }
    assert!(
        sources["database"] > 250 && sources["search"] > 5,
        "{sources:?}"
    );

    // A move's `after` is `kalah moves`' position after it.
    let text = &all[0];
    let (_, got) = server.get(&format!("/api/v1/position?position={}", encode(text)));
    let moves = kalah(&["moves", text, "--json"]);
    let moves: Value = serde_json::from_slice(&moves.stdout).expect("JSON");
    for m in got["moves"].as_array().unwrap() {
        let same = moves["moves"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["house"] == m["house"])
            .expect("the same moves");
        assert_eq!(m["after"], same["position"]);
        assert_eq!(m["extra_turn"], same["extra_turn"]);
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn start_positions_name_their_variant_and_rules() {
    let server = Server::start(&["--no-db"]);
    let (status, got) = server.get("/api/v1/start?houses=3&seeds=3&rules=empty-capture");
    assert_eq!(status, 200, "{got}");
    let want = cli_common::json(&[
        "solve",
        "-m",
        "3",
        "-n",
        "3",
        "--rules",
        "empty-capture",
        "--all-moves",
        "--json",
        "--no-db",
    ]);
    assert_eq!(got["variant"], "Kalah(3,3)");
    assert_eq!(got["seeds"], 3);
    assert_eq!(got["rules"], "empty-capture");
    assert_eq!(got["source"], "search");
    assert_eq!(got["db_max_seeds"], Value::Null);
    assert_eq!(got["value"], want["value"]);
    assert_eq!(comparable(&got)["moves"], comparable(&want)["moves"]);
    // North to move, and a finished game.
    let (status, got) = server.get("/api/v1/position?position=3,0,0,1,0,0,0,2,0&to_move=north");
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["to_move"], "north");
    let (status, got) = server.get(&format!(
        "/api/v1/position?position={}",
        encode("<3,5,4,0,0,0,0,0,0>")
    ));
    assert_eq!(status, 200, "{got}");
    assert_eq!(
        (got["to_move"].clone(), got["value"].clone()),
        (Value::Null, 1.into())
    );
    assert_eq!(got["moves"], serde_json::json!([]));
}

#[test]
fn bad_and_hostile_requests_get_400s_naming_the_field_and_the_server_lives() {
    let server = Server::start(&["--no-db"]);
    let long = "4".repeat(3000);
    let cases: Vec<(String, &str)> = vec![
        ("/api/v1/position".into(), "position"),
        ("/api/v1/position?position=".into(), "position"),
        ("/api/v1/position?position=%3C4,0,0%3E".into(), "position"),
        ("/api/v1/position?position=banana".into(), "position"),
        ("/api/v1/position?position=1,0,0,99999,1".into(), "position"),
        (
            "/api/v1/position?position=3,0,0,1,1,1,1,1,1&rules=awari".into(),
            "rules",
        ),
        (
            "/api/v1/position?position=3,0,0,1,1,1,1,1,1&to_move=west".into(),
            "to_move",
        ),
        (
            format!(
                "/api/v1/position?position={}&to_move=south",
                encode("<3,0,0,1,1,1,1,1,1> north")
            ),
            "position",
        ),
        (
            "/api/v1/position?position=3,0,0,1,1,1,1,1,1&rule=x".into(),
            "rule",
        ),
        ("/api/v1/position?position=1&position=2".into(), "position"),
        (format!("/api/v1/position?position={long}"), "query"),
        ("/api/v1/position?position=%FF%FE%00".into(), "position"),
        ("/api/v1/start?houses=0&seeds=4".into(), "houses"),
        (
            "/api/v1/start?houses=99999999999999999999&seeds=4".into(),
            "houses",
        ),
        ("/api/v1/start?houses=6&seeds=100000".into(), "seeds"),
        ("/api/v1/start?houses=6&seeds=-1".into(), "seeds"),
        ("/api/v1/start?houses=6".into(), "seeds"),
    ];
    for (target, field) in &cases {
        let (status, got) = server.get(target);
        assert_eq!(status, 400, "{target}: {got}");
        let error = got["error"].as_str().expect("an error message");
        assert!(
            error.starts_with(&format!("{field}: ")),
            "{target}: {error}"
        );
        assert!(error.len() < 400, "{target}: a short error, not {error}");
        assert_eq!(got["field"], *field);
    }
    // Unknown paths: 404 with JSON; a request head too big: hyper's 431; garbage: a 400.
    let (status, got) = server.get("/api/v2/nothing");
    assert_eq!(status, 404, "{got}");
    let huge = format!(
        "GET / HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\nConnection: close\r\n\r\n",
        "a".repeat(40_000)
    );
    let (status, body) = server.raw(huge.as_bytes());
    assert_eq!(status, 431);
    assert!(
        body.contains("\"error\""),
        "JSON, not an empty body: {body:?}"
    );
    assert_eq!(server.raw(b"NONSENSE\r\n\r\n").0, 400);
    // Another method than GET or HEAD on a page that exists: 405, with Allow and a JSON reason.
    for method in ["POST", "OPTIONS", "DELETE"] {
        let request = format!(
            "{method} /api/v1/start?houses=4&seeds=3 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        let (status, head, body) = server.exchange(request.as_bytes());
        assert_eq!(status, 405, "{method}: {head}");
        assert!(
            head.to_ascii_lowercase().contains("allow: get, head"),
            "{head}"
        );
        let got: Value = serde_json::from_str(&body).expect("a JSON body");
        assert!(
            got["error"].as_str().unwrap().contains("only GET and HEAD"),
            "{got}"
        );
    }
    // A raw `<` in the URL, which hyper cannot read: a 400 whose JSON says to encode it.
    let (status, head, body) = server.exchange(
        b"GET /api/v1/position?position=<4,0,0,3,3,3,3,3,3,3,3> HTTP/1.1\r\nHost: x\r\n\r\n",
    );
    assert_eq!(status, 400, "{head}");
    assert!(head.contains("content-type: application/json"), "{head}");
    let got: Value = serde_json::from_str(&body).expect("a JSON body");
    assert!(got["error"].as_str().unwrap().contains("%3C"), "{got}");
    // Still alive and right.
    let (status, got) = server.get("/api/v1/start?houses=2&seeds=2");
    assert_eq!((status, got["variant"].as_str()), (200, Some("Kalah(2,2)")));
    // An absolute-form request line (as through a proxy) is answered as its path is, whatever
    // the host it names; an unreadable one is a 400 with JSON, as above.
    for target in [
        "http://x/api/v1/start?houses=2&seeds=2",
        "HTTP://127.0.0.1:9/api/v1/start?houses=2&seeds=2",
        "https://[::1]/api/v1/start?houses=2&seeds=2",
    ] {
        let (status, got) = server.get(target);
        assert_eq!(status, 200, "{target}: {got}");
        assert_eq!(got["variant"], "Kalah(2,2)", "{target}: {got}");
    }
    assert_eq!(server.get("http://x/api/v2/nothing").0, 404);
    let (status, got) = server.get("http://x/api/v1/position?position=<2,0,0,2,2,2,2>");
    assert_eq!(status, 400, "{got}");
}

#[test]
fn a_search_past_its_budget_is_a_422_and_frees_its_slot() {
    // Kalah(6,3) without levels: a few seconds by the cost model (searched), more than the half
    // second of the budget.
    let server = Server::start(&["--no-db", "--budget", "0.5"]);
    let started = std::time::Instant::now();
    let (status, got) = server.get("/api/v1/start?houses=6&seeds=3");
    assert_eq!(status, 422, "{got}");
    assert_eq!(got["reason"], "budget");
    assert_eq!(got["budget_ms"], 500);
    assert!(
        got["not_searched"]["how"]
            .as_str()
            .is_some_and(|how| how.contains("kalah serve --budget"))
    );
    // The board comes with it, each move with where it leads and no value.
    let board = &got["board"];
    assert_eq!(board["position"], "<6,0,0,3,3,3,3,3,3,3,3,3,3,3,3>");
    assert!(board["value"].is_null());
    let moves = board["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), 6);
    assert!(
        moves
            .iter()
            .all(|m| m["value"].is_null() && m["after"].is_string())
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    // The slot is free again, and a small search fits the budget.
    let (status, got) = server.get("/api/v1/start?houses=3&seeds=2");
    assert_eq!(status, 200, "{got}");
}

/// The start of Kalah(6,6): its value the shipped ledger settles (+4, proven and certified),
/// each move's bounds where only bounds are known, and no search (the cost model puts it at
/// days), the second time from the cache; empty-capture, which the ledger only bounds: a 422
/// that says the search was not started, with the bounds.
#[test]
fn a_value_the_ledgers_settle_is_a_200_and_asked_again_is_not_searched_again() {
    let server = Server::start(&["--no-db", "--budget", "1"]);
    let (status, got) = server.get("/api/v1/start?houses=6&seeds=6");
    assert_eq!(status, 200, "{got}");
    assert_eq!(
        (&got["value"], &got["certified"]),
        (&4.into(), &true.into())
    );
    assert_eq!(got["source"], "ledger");
    assert_eq!(got["cached"], false);
    assert_eq!(got["nodes"], 0);
    assert_eq!(got["not_searched"]["reason"], "cost", "{got}");
    let moves = got["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), 6);
    // Best first: move 1, proven +4 and certified.
    assert_eq!(
        (&moves[0]["house"], &moves[0]["value"]),
        (&1.into(), &4.into())
    );
    assert_eq!(moves[0]["certified"], true);
    for m in moves {
        let (lower, upper) = (m["lower"].as_i64().unwrap(), m["upper"].as_i64().unwrap());
        assert!(lower <= upper && upper <= 4, "{m}");
        assert_eq!(m["value"].is_null(), lower < upper, "{m}");
    }
    let (status, again) = server.get("/api/v1/start?houses=6&seeds=6");
    assert_eq!(status, 200);
    assert_eq!(again["cached"], true);
    assert_eq!(again["moves"], got["moves"]);

    let (status, got) = server.get("/api/v1/start?houses=6&seeds=6&rules=empty-capture");
    assert_eq!(status, 422, "{got}");
    assert_eq!(got["reason"], "cost");
    assert!(
        got["not_searched"]["estimated_seconds"].as_u64() > Some(10),
        "{got}"
    );
    // The Kalah(6,6) campaign's ledger, built into kalah, bounds it: said with the 422.
    let upper = got["ledger_bounds"]["upper"]
        .as_i64()
        .expect("bounds from the ledger");
    assert!(upper < 72, "{got}");
    assert_eq!(got["board"]["moves"].as_array().map(Vec::len), Some(6));
}

#[test]
fn the_explorer_is_one_page_that_fetches_from_this_server_only() {
    let server = Server::start(&["--no-db"]);
    let (status, head, page) =
        server.exchange(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert_eq!(status, 200);
    assert!(
        head.contains("content-type: text/html; charset=utf-8"),
        "{head}"
    );
    assert!(
        head.contains("content-security-policy: default-src 'none'"),
        "{head}"
    );
    // The API is open to pages of other origins; its answers are JSON.
    let (status, head, _) = server.exchange(
        b"GET /api/v1/start?houses=2&seeds=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status, 200);
    assert!(head.contains("access-control-allow-origin: *"), "{head}");
    assert!(head.contains("content-type: application/json"), "{head}");
    assert!(page.contains("api/v1/position") && page.contains("api/v1/start"));
    for foreign in ["http://", "https://", "//cdn", "@import"] {
        assert!(!page.contains(foreign), "the page names {foreign}");
    }
}

#[test]
fn sigterm_finishes_cleanly_and_every_request_was_logged() {
    let server = Server::start(&["--no-db"]);
    for _ in 0..3 {
        assert_eq!(server.get("/api/v1/start?houses=2&seeds=1").0, 200);
    }
    assert_eq!(server.get("/nowhere").0, 404);
    assert_eq!(server.raw(b"GET /a<b HTTP/1.1\r\nHost: x\r\n\r\n").0, 400);
    let (status, stderr) = server.stop(Duration::from_secs(10));
    assert!(status.success(), "{status:?}: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains(" GET /api/v1/start?houses=2&seeds=1 200 "))
            .count(),
        3,
        "{stderr}"
    );
    assert!(
        lines.iter().any(|l| l.contains(" GET /nowhere 404 ")),
        "{stderr}"
    );
    // The request hyper could not read is logged too, with no method or target.
    assert!(
        lines
            .iter()
            .any(|l| l.contains(" - - 400 ") && l.contains("could not be read")),
        "{stderr}"
    );
    assert!(stderr.contains("SIGTERM"), "{stderr}");
}

#[test]
fn a_database_directory_without_levels_is_refused_at_start() {
    let dir = fresh_dir("serve-empty");
    let out = kalah(&[
        "serve",
        "--db",
        dir.to_str().unwrap(),
        "--bind",
        "127.0.0.1:0",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no level files"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
