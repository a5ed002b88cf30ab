//! The explorer page of `kalah serve` in a real browser: headless Chromium driven through
//! chromedriver (WebDriver), every value it shows checked against the server's own API.
//!
//! ```text
//! kalah db build --houses 4 --max-seeds 12 ──► kalah serve --db DIR --bind 127.0.0.1:0
//!                                                 ▲ the page              ▲ GET /api/v1/...
//! this test ──► chromedriver ──► headless Chromium┘      this test ───────┘
//!               (WebDriver)      what it shows     ══    what the API answers
//! ```
//!
//! The steps: a position from the URL; its best move clicked in the move list; back; its
//! worst move clicked on the board, then the best move twice (the graph of the line walked: a
//! point a sowing at the API's values, the worst move marked as a mistake of its size), back
//! one sowing; a literal typed into the page (North to move, a new line); a literal
//! that is not a position (the API's refusal shown, then back, and the page still works); a
//! start position with no database (searched). After each: the URL, and the values shown equal
//! the API's for that position. A screenshot of the first position goes to
//! `target/browser/explorer.png`.
//!
//! A second test goes beyond the databases (Kalah(6,6), none for it, 0.1 s a search), at a
//! desktop's width and a phone's: its start (its value from the shipped ledger, its other moves
//! only bounded) and house 1 played from it, then the empty-capture start (the ledger only
//! bounds it) once its moves have been asked about, are checked as drawn ([`LAYOUT`]): every
//! text of a move card inside its card, every house showing its seeds and no `?`, no point of
//! the graph without a value, a button to try again only after an error, and without a value
//! the budget and how to raise it beside the reason.
//!
//! A third opens the static explorer (scripts/build-web.sh: the page and the core in
//! WebAssembly, served by Python's `http.server`, no `kalah serve` behind it) at both widths:
//! the Kalah(6,4) start (+8, every move's value), the Kalah(6,6) start (+4, certified) and a
//! Kalah(4,3) position searched in the page, each as `kalah query --json` answers it, a
//! wrong literal refused with its reason, and the search of Kalah(6,3)'s start stopped with
//! the page's stop button. Its screenshots are `target/browser/static-*.png`.
//!
//! The page is read through the hooks it keeps for tests, nothing else: the ids `position`,
//! `rules`, `value`, `pv`, `source`, `error`, `title`, the input `pick-literal`, the items
//! `li.move[data-house][data-value]`, the cells `.house.playable[data-house]` and
//! `.house[data-side]`/`.store[data-side]` with their `.hn` and `.seeds`, the graph `svg#graph`
//! with its `.point[data-sowing][data-value]` and `.mistake[data-sowing][data-loss]`, the box
//! `.verdict`, and `document.body.dataset.state` (loading, ready, unsolved or error) and
//! `.moves` (searching, done). Every wait is for a condition, within [`PATIENCE`]; never a
//! fixed pause.
//!
//! Ignored by `cargo test`: it needs chromium and chromedriver (`/usr/bin/chromium`,
//! `/usr/bin/chromedriver`: Debian's `chromium` and `chromium-driver`), which `.ci/run`
//! installs before running it with `cargo test --test browser -- --ignored`.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::error::CmdError;
use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

mod cli_common;

/// The browser and its driver, where Debian's `chromium` and `chromium-driver` put them.
const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Chromium's flags: headless, scrollbars that take no room (as on a phone: the page's width is
/// the window's), and none of its own connections to the outside (updates, sync, field trials,
/// QUIC probes), which a closed network would only slow down.
const CHROMIUM_ARGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--window-size=1000,1500",
];

/// The longest wait for any condition (a page ready, a driver up).
const PATIENCE: Duration = Duration::from_secs(30);

/// How often a condition is checked again.
const POLL: Duration = Duration::from_millis(20);

/// A position within the database built here (12 seeds on the board), South to move, whose
/// three moves have three values: +12 (house 2, a capture), 0 and -4.
const FIRST: &str = "<4,14,10,1,2,3,0,2,1,0,3>";

/// A position typed into the page, North to move, its three moves all best (+10).
const TYPED: &str = "<4,9,15,1,2,3,0,2,1,0,3> north";

/// Not a position: 4 houses need 11 numbers.
const INVALID: &str = "<4,1,2,3>";

#[tokio::test]
#[ignore = "needs chromium and chromedriver: .ci/run installs them and runs it"]
async fn explorer_shows_the_values_of_the_api() {
    let dir = TempDir::new("browser");
    let db = build_db(&dir.path, 12);
    let server = Server::start(&db, &dir.path, &["--budget", "5"]);
    in_browser(&dir.path, server.addr, steps).await;
}

/// Kalah(6,6) has no database here (4 houses only) and a budget of 0.1 s a search: its start
/// and the position after house 1 are past the budget, their moves too.
#[tokio::test]
#[ignore = "needs chromium and chromedriver: .ci/run installs them and runs it"]
async fn explorer_beyond_the_databases_shows_the_board_and_fits_its_cards() {
    let dir = TempDir::new("browser-frontier");
    let db = build_db(&dir.path, 8);
    let server = Server::start(&db, &dir.path, &["--budget", "0.1", "--threads", "1"]);
    in_browser(&dir.path, server.addr, frontier).await;
}

/// The static explorer (scripts/build-web.sh: the page and the core in WebAssembly, no
/// `kalah serve`), served by a plain static HTTP server on the loopback (Python's
/// `http.server`), at a desktop's width and a phone's.
#[tokio::test]
#[ignore = "needs chromium and chromedriver: .ci/run installs them and runs it"]
async fn static_explorer_answers_as_kalah_query_in_the_browser() {
    let dir = TempDir::new("browser-static");
    let site = dir.path.join("web");
    let built = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/build-web.sh"))
        .arg(&site)
        .status()
        .expect("bash runs scripts/build-web.sh");
    assert!(built.success(), "scripts/build-web.sh failed");
    let server = StaticServer::start(&site, &dir.path);
    in_browser(&dir.path, server.addr, static_steps).await;
}

/// What the test does in the static explorer at `addr`: every value compared with `kalah
/// query`'s for the same position.
async fn static_steps(client: Client, addr: SocketAddr) -> Result<(), CmdError> {
    let base = format!("http://{addr}/");
    for width in WIDTHS {
        set_width(&client, width).await?;

        // Kalah(6,4): +8 from the opening book, with every move's value, as `kalah query`.
        let asked = Instant::now();
        client.goto(&format!("{base}?houses=6&seeds=4")).await?;
        let page = settle(&client, "the start of Kalah(6,4), from the book", |p| {
            p.is_ready() && p.position == KALAH_6_4
        })
        .await?;
        eprintln!(
            "static explorer, Kalah(6,4) at {width} px: answered in {:?}",
            asked.elapsed()
        );
        assert_eq!(page.value_visible.as_deref(), Some("+8"), "{page:#?}");
        assert_same_as_query(&page, &query_json(&[KALAH_6_4]));
        assert!(page.source.contains("ledgers"), "{page:#?}");
        assert_fits(&client, &format!("static Kalah(6,4) at {width} px")).await?;
        screenshot(&client, &format!("static-6-4-{width}.png")).await?;

        // Kalah(6,6): +4 from the shipped ledger, proven and certified.
        client.goto(&format!("{base}?houses=6&seeds=6")).await?;
        let page = settle(&client, "the start of Kalah(6,6), from the ledger", |p| {
            p.is_ready() && p.position == KALAH_6_6
        })
        .await?;
        assert_eq!(page.value_visible.as_deref(), Some("+4"), "{page:#?}");
        assert!(
            page.source.contains("certified") && !page.source.contains("not certified"),
            "{page:#?}"
        );
        assert_fits(&client, &format!("static Kalah(6,6) at {width} px")).await?;
        screenshot(&client, &format!("static-6-6-{width}.png")).await?;

        // A Kalah(4,3) position, solved by the search in the page.
        client
            .goto(&format!("{base}?{}", encode(&[("position", STATIC_4_3)])))
            .await?;
        let page = settle(&client, "a Kalah(4,3) position, searched", |p| {
            p.is_ready() && p.position == STATIC_4_3
        })
        .await?;
        assert!(page.source.contains("search"), "{page:#?}");
        assert_same_as_query(&page, &query_json(&[STATIC_4_3]));

        // A literal that is not a position: refused, saying why.
        type_literal(&client, INVALID).await?;
        let page = settle(&client, "the refusal of a wrong literal", |p| {
            p.error.is_some()
        })
        .await?;
        let error = page.error.as_deref().unwrap_or_default();
        assert!(
            error.contains("invalid position") && error.contains("expected 11 numbers"),
            "{page:#?}"
        );
        screenshot(&client, &format!("static-refused-{width}.png")).await?;

        // A search past the budget shown, stopped: the page says so, and can try again.
        client.goto(&format!("{base}?houses=6&seeds=3")).await?;
        let budget = client
            .execute(
                "return document.getElementById('search-budget').value;",
                vec![],
            )
            .await?;
        assert_eq!(budget, json!("5"), "the budget shown, 5 s by default");
        let started = Instant::now();
        while client
            .execute("return document.body.dataset.search;", vec![])
            .await?
            != json!("running")
        {
            assert!(
                started.elapsed() < PATIENCE,
                "no search of Kalah(6,3) seen running"
            );
            tokio::time::sleep(POLL).await;
        }
        client
            .find(Locator::Id("search-stop"))
            .await?
            .click()
            .await?;
        let page = settle(&client, "the search of Kalah(6,3) stopped", |p| {
            p.error
                .as_deref()
                .is_some_and(|e| e.starts_with("Stopped after"))
        })
        .await?;
        assert_eq!(page.state, "error", "{page:#?}");
    }
    Ok(())
}

/// The start of Kalah(6,4) and a position of Kalah(4,3) (South has sown house 1).
const KALAH_6_4: &str = "<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>";
const STATIC_4_3: &str = "<4,0,0,0,4,4,4,3,3,3,3> north";

/// `kalah query ARGS --json`.
fn query_json(args: &[&str]) -> Value {
    let mut all = vec!["query"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = cli_common::kalah(&all);
    assert!(
        out.status.success(),
        "kalah {all:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("kalah query --json writes JSON")
}

/// Checks that the page shows what `kalah query --json` answered: the position, the value and
/// every move's value.
fn assert_same_as_query(page: &Page, query: &Value) {
    let context = format!("page {page:#?}\nquery {query:#}");
    assert_eq!(
        page.position,
        query["position"].as_str().expect("position"),
        "{context}"
    );
    let value = page
        .value_visible
        .as_deref()
        .unwrap_or_default()
        .replace('\u{2212}', "-");
    assert_eq!(
        value.trim_start_matches('+').parse::<i64>().ok(),
        query["value"].as_i64(),
        "{context}"
    );
    let mut want: Vec<(String, String)> = query["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| (m["house"].to_string(), m["value"].to_string()))
        .collect();
    let mut got: Vec<(String, String)> = page
        .moves
        .iter()
        .map(|(h, v, _)| (h.clone(), v.clone()))
        .collect();
    want.sort();
    got.sort();
    assert_eq!(got, want, "every move's value: {context}");
}

/// `kalah db build --houses 4 --max-seeds MAX` into `dir/db`: its path.
fn build_db(dir: &Path, max_seeds: u32) -> PathBuf {
    let db = dir.join("db");
    let built = cli_common::kalah(&[
        "db",
        "build",
        "--houses",
        "4",
        "--max-seeds",
        &max_seeds.to_string(),
        "--dir",
        db.to_str().expect("a UTF-8 temporary path"),
    ]);
    assert!(
        built.status.success(),
        "kalah db build: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    db
}

/// Runs `steps` in a Chromium session (its driver's log and profile in `dir`) against the
/// server at `addr`, then closes the session, failed steps or not.
async fn in_browser<F>(dir: &Path, addr: SocketAddr, steps: fn(Client, SocketAddr) -> F)
where
    F: std::future::Future<Output = Result<(), CmdError>> + Send + 'static,
{
    for path in [CHROMIUM, CHROMEDRIVER] {
        assert!(
            Path::new(path).exists(),
            "{path} is missing: install Debian's chromium and chromium-driver (.ci/run does)"
        );
    }
    let driver = Driver::start(dir);

    let mut capabilities = serde_json::Map::new();
    let user_data = dir.join("chromium-profile");
    let mut args: Vec<String> = CHROMIUM_ARGS.iter().map(|a| a.to_string()).collect();
    args.push(format!("--user-data-dir={}", user_data.display()));
    capabilities.insert(
        "goog:chromeOptions".into(),
        json!({"binary": CHROMIUM, "args": args}),
    );
    let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities)
        .connect(&driver.url)
        .await
        .expect("a Chromium session through chromedriver");

    // The steps run as a task of their own: a failed check there still lets the browser's
    // session be closed here, before the failure is passed on.
    let outcome = tokio::spawn(steps(client.clone(), addr)).await;
    let closed = client.close().await;
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(e)) => panic!("a WebDriver command failed: {e}"),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => panic!("the steps did not finish: {e}"),
    }
    closed.expect("the browser's session closes");
}

/// What the test does in the browser, the server's answers at `addr` beside it.
async fn steps(client: Client, addr: SocketAddr) -> Result<(), CmdError> {
    let base = format!("http://{addr}/");

    // A position from the URL: every value as the API gives it.
    let first = api(
        addr,
        "position",
        &[("position", FIRST), ("rules", "standard")],
    );
    client
        .goto(&format!(
            "{base}?{}",
            encode(&[("position", FIRST), ("rules", "standard")])
        ))
        .await?;
    let page = settle(&client, "the first position", |p| {
        p.is_ready() && p.position == FIRST
    })
    .await?;
    page.assert_shows(&first);
    screenshot(&client, "explorer.png").await?;

    // Its best move, clicked in the list: the URL and the values follow the move.
    let best = &first["moves"][0];
    let item = client.find(Locator::Css("li.move")).await?;
    assert_eq!(
        item.attr("data-house").await?.as_deref(),
        Some(best["house"].to_string().as_str()),
        "the first item of the list is the API's best move"
    );
    item.click().await?;
    shows_after(&client, addr, "the best move", best).await?;

    // Back: the first position again.
    client.back().await?;
    let page = settle(&client, "the first position, back", |p| {
        p.is_ready() && p.position == FIRST
    })
    .await?;
    page.assert_shows(&first);
    assert_url(&client, FIRST, "standard").await?;

    // Its worst move, clicked on the board.
    let worst = first["moves"]
        .as_array()
        .and_then(|m| m.last())
        .expect("moves");
    let house = worst["house"].to_string();
    client
        .find(Locator::Css(&format!(
            ".house.playable[data-house=\"{house}\"]"
        )))
        .await?
        .click()
        .await?;
    shows_after(&client, addr, "the worst move", worst).await?;

    // The line walked: the first position, its worst move (a mistake: the best move's value
    // less the worst's), then the best move twice more; one point of the graph a sowing.
    let after = |mv: &Value| {
        let position = mv["after"].as_str().expect("after");
        api(
            addr,
            "position",
            &[("position", position), ("rules", "standard")],
        )
    };
    let mut walked = vec![first.clone(), after(worst)];
    let lost = first["value"].as_i64().expect("value") - worst["value"].as_i64().expect("value");
    assert!(lost > 0, "the worst move loses seeds: {first:#}");
    for n in 0..2 {
        let here = walked.last().expect("a position");
        if here["to_move"].is_null() {
            break;
        }
        let best = here["moves"][0].clone();
        client.find(Locator::Css("li.move")).await?.click().await?;
        shows_after(&client, addr, &format!("best move {n} of the line"), &best).await?;
        walked.push(after(&best));
    }
    assert!(walked.len() >= 3, "the line goes on after the worst move");
    assert_graph(&client, &walked, &[(1, lost)]).await?;
    screenshot(&client, "explorer-line.png").await?;
    // Back one sowing: the line as it was there.
    client.back().await?;
    let previous = &walked[walked.len() - 2];
    settle(&client, "the line, one sowing back", |p| {
        p.is_ready() && p.position == previous["position"]
    })
    .await?;
    assert_graph(&client, &walked[..walked.len() - 1], &[(1, lost)]).await?;

    // A literal typed in, North to move (the side written after it, as the API writes it).
    let typed = api(
        addr,
        "position",
        &[("position", TYPED), ("rules", "standard")],
    );
    type_literal(&client, TYPED).await?;
    let page = settle(&client, "the typed position", |p| {
        p.is_ready() && p.position == TYPED
    })
    .await?;
    page.assert_shows(&typed);
    assert_url(&client, TYPED, "standard").await?;
    // A position typed in starts a new line.
    assert_graph(&client, std::slice::from_ref(&typed), &[]).await?;

    // A literal that is not a position: the API's refusal shown, and nothing stale beside it.
    type_literal(&client, INVALID).await?;
    let page = settle(&client, "the error", |p| p.state == "error").await?;
    // The page asks for what its URL holds (the literal, and the side its check box gives).
    let url = client.current_url().await?;
    let asked: HashMap<String, String> = url.query_pairs().into_owned().collect();
    let asked = asked.get("position").expect("a position in the URL");
    assert!(
        asked.starts_with(INVALID),
        "the URL asks for {INVALID}: {url}"
    );
    let (status, refused) = api_status(
        addr,
        "position",
        &[("position", asked), ("rules", "standard")],
    );
    assert_eq!(status, 400, "the API refuses {asked}: {refused}");
    let why = refused["error"].as_str().expect("an error message");
    let shown = page
        .error
        .as_deref()
        .unwrap_or_else(|| panic!("state=error but the #error element is not visible: {page:#?}"));
    assert!(
        shown.contains(why.trim_end_matches('.')),
        "the error shown, {shown:?}, has the API's message {why:?}"
    );
    assert!(
        page.moves.iter().all(|m| !m.2) && page.value_visible.is_none(),
        "no move or value left visible beside the error: {page:#?}"
    );

    // The page still works: back to the typed position, then a literal typed again.
    client.back().await?;
    let page = settle(&client, "the typed position, back from the error", |p| {
        p.is_ready() && p.position == TYPED
    })
    .await?;
    page.assert_shows(&typed);
    // (The side written out: the page's "North to move" box still holds the last position's.)
    type_literal(&client, &format!("{FIRST} south")).await?;
    let page = settle(&client, "the first position, typed after the error", |p| {
        p.is_ready() && p.position == FIRST
    })
    .await?;
    page.assert_shows(&first);

    // A start position beyond any database (3 houses, empty-capture rules): searched.
    let start = api(
        addr,
        "start",
        &[("houses", "3"), ("seeds", "3"), ("rules", "empty-capture")],
    );
    assert_eq!(start["source"], "search");
    client
        .goto(&format!("{base}?houses=3&seeds=3&rules=empty-capture"))
        .await?;
    let page = settle(&client, "the start of Kalah(3,3)", |p| {
        p.is_ready() && p.position == start["position"]
    })
    .await?;
    page.assert_shows(&start);

    // Kalah(6,6), no database for it: the shipped ledger settles its value, +4, proven and
    // certified; the moves it only bounds show their bounds, never a `?`, and the page says
    // why they were not searched and how to raise the budget.
    let ledgered = api(addr, "start", &[("houses", "6"), ("seeds", "6")]);
    assert_eq!(ledgered["value"], 4, "{ledgered}");
    client.goto(&format!("{base}?houses=6&seeds=6")).await?;
    let page = settle(&client, "the start of Kalah(6,6), from the ledger", |p| {
        p.is_ready() && p.position == KALAH_6_6
    })
    .await?;
    assert_eq!(page.value_visible.as_deref(), Some("+4"), "{page:#?}");
    assert!(page.verdict.contains("certified"), "{page:#?}");
    assert_eq!(page.moves.len(), 6, "six moves listed: {page:#?}");
    assert!(
        page.marks.iter().all(|m| !m.is_empty() && !m.contains('?')),
        "every move shows its value or its bounds: {page:#?}"
    );
    assert!(
        page.budget
            .as_deref()
            .is_some_and(|b| b.contains("kalah serve --budget")),
        "{page:#?}"
    );
    assert!(page.source.contains("certified"), "{page:#?}");

    // Past the budget (empty-capture Kalah(6,6), which the ledger only bounds): the board and
    // its six moves are still drawn, each a link, with no value and no error box.
    client
        .goto(&format!("{base}?houses=6&seeds=6&rules=empty-capture"))
        .await?;
    let page = settle(&client, "the start of Kalah(6,6), unsolved", |p| {
        p.state == "unsolved"
    })
    .await?;
    assert_eq!(page.error, None, "no error box: {page:#?}");
    // Its bounds stand in for the value: the ledger proves them.
    assert!(
        page.value_visible.as_deref().is_some_and(|v| v != "?"),
        "{page:#?}"
    );
    assert_eq!(page.playable.len(), 6, "six playable houses: {page:#?}");
    assert_eq!(page.moves.len(), 6, "six moves listed: {page:#?}");
    assert!(
        page.moves
            .iter()
            .all(|(_, value, shown)| value.is_empty() && *shown)
    );
    assert_eq!(page.position, "<6,0,0,6,6,6,6,6,6,6,6,6,6,6,6>");
    // Each move is then asked about on its own, in turn: the page says so on the moves.
    let moves = client
        .execute("return document.body.dataset.moves || '';", vec![])
        .await?;
    assert!(
        moves == "searching" || moves == "done",
        "the moves are not being valued one by one: {moves:?}"
    );
    screenshot(&client, "explorer-unsolved.png").await?;
    Ok(())
}

/// The standard start of Kalah(6,6), beyond every database of these tests.
const KALAH_6_6: &str = "<6,0,0,6,6,6,6,6,6,6,6,6,6,6,6>";

/// After house 1 from [`KALAH_6_6`]: its last seed in South's store, South to move again.
const AFTER_HOUSE_1: &str = "<6,1,0,0,7,7,7,7,7,6,6,6,6,6,6>";

/// The widths the page must fit, in CSS pixels: a desktop's window and a phone's.
const WIDTHS: [u32; 2] = [1280, 390];

/// Beyond the databases, at each of [`WIDTHS`]: a position the database holds, then the start
/// of Kalah(6,6) and house 1 played from it (the ledger's +4, the other moves' bounds), then
/// the empty-capture start once all its moves have been asked about. Each view is checked by
/// [`assert_fits`].
async fn frontier(client: Client, addr: SocketAddr) -> Result<(), CmdError> {
    let base = format!("http://{addr}/");
    for width in WIDTHS {
        set_width(&client, width).await?;

        client.goto(&format!("{base}?houses=4&seeds=1")).await?;
        let page = settle(&client, "the start of Kalah(4,1), in the database", |p| {
            p.is_ready() && p.position == "<4,0,0,1,1,1,1,1,1,1,1>"
        })
        .await?;
        assert!(page.source.contains("database"), "{page:#?}");
        assert_fits(&client, &format!("Kalah(4,1) at {width} px")).await?;

        // The standard start: +4 from the ledger, the open moves as bounds.
        client
            .goto(&format!("{base}?houses=6&seeds=6&rules=standard"))
            .await?;
        let page = settle(&client, "the start of Kalah(6,6), from the ledger", |p| {
            p.is_ready() && p.position == KALAH_6_6
        })
        .await?;
        assert_eq!(page.moves.len(), 6, "six moves listed: {page:#?}");
        assert_eq!(page.value_visible.as_deref(), Some("+4"), "{page:#?}");
        assert_fits(&client, &format!("Kalah(6,6) at {width} px")).await?;
        screenshot(&client, &format!("explorer-6-6-{width}.png")).await?;

        // House 1, clicked on the board: an extra turn, South to move again, still +4.
        client
            .find(Locator::Css(".house.playable[data-house=\"1\"]"))
            .await?
            .click()
            .await?;
        let page = settle(&client, "house 1 from Kalah(6,6), from the ledger", |p| {
            p.is_ready() && p.position == AFTER_HOUSE_1
        })
        .await?;
        assert_eq!(page.moves.len(), 5, "five moves listed: {page:#?}");
        assert_eq!(page.value_visible.as_deref(), Some("+4"), "{page:#?}");
        assert_fits(&client, &format!("house 1 from Kalah(6,6) at {width} px")).await?;
        screenshot(&client, &format!("explorer-6-6-house-1-{width}.png")).await?;

        // The empty-capture start, which the ledger only bounds: unsolved, each move asked.
        client
            .goto(&format!("{base}?houses=6&seeds=6&rules=empty-capture"))
            .await?;
        // Checked while its moves are still asked about too, if the page is caught then.
        let page = settle(&client, "empty-capture Kalah(6,6), unsolved", |p| {
            p.state == "unsolved" && p.position == KALAH_6_6 && p.rules == "empty-capture"
        })
        .await?;
        if page.moves_state != "done" {
            assert_fits(&client, &format!("Kalah(6,6), moves searched, {width} px")).await?;
        }
        let page = settle(
            &client,
            "the moves of empty-capture Kalah(6,6) asked",
            |p| p.state == "unsolved" && p.rules == "empty-capture" && p.moves_state == "done",
        )
        .await?;
        assert_eq!(page.moves.len(), 6, "six moves listed: {page:#?}");
        assert_fits(&client, &format!("empty-capture Kalah(6,6) at {width} px")).await?;
        screenshot(&client, &format!("explorer-6-6-empty-capture-{width}.png")).await?;
    }
    Ok(())
}

/// Makes the page's viewport `width` CSS pixels wide (the window's frame, if any, added).
async fn set_width(client: &Client, width: u32) -> Result<(), CmdError> {
    let inner = || async {
        let w = client
            .execute("return document.documentElement.clientWidth;", vec![])
            .await?;
        Ok::<_, CmdError>(w.as_u64().unwrap_or_default() as u32)
    };
    client.set_window_size(width, 1000).await?;
    let got = inner().await?;
    if got != width {
        client
            .set_window_size(width + width.saturating_sub(got), 1000)
            .await?;
    }
    let got = inner().await?;
    assert_eq!(got, width, "the viewport's width, in CSS pixels");
    Ok(())
}

/// Checks the page as drawn, in one script: nothing wider than the window; every element and
/// text of each move card inside its card, no two cards over each other; each house showing
/// its seeds as `#position` has them, no `?` in any, its contents inside it; the value beside
/// its words, not over them; a "... again" button only after an error, below the title; no
/// value once every move was asked about: the budget and how to raise it beside the reason;
/// no point of the graph without a value.
const LAYOUT: &str = r#"
const problems = [];
const EPS = 0.5;
const visible = (e) => !!e && e.checkVisibility();
const say = (e) => e.nodeType === Node.TEXT_NODE ? 'text "' + e.textContent.trim().slice(0, 50) + '"'
  : e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
    (typeof e.className === 'string' && e.className.trim() ? '.' + e.className.trim().split(/\s+/).join('.') : '') +
    ' "' + e.textContent.trim().slice(0, 50) + '"';
const inside = (r, c) => r.left >= c.left - EPS && r.right <= c.right + EPS &&
  r.top >= c.top - EPS && r.bottom <= c.bottom + EPS;
const rectOf = (n) => {
  if (n.nodeType !== Node.TEXT_NODE) return n.getBoundingClientRect();
  const range = document.createRange();
  range.selectNodeContents(n);
  return range.getBoundingClientRect();
};
// Everything visible within `box` (elements and non-blank text) inside its rectangle.
const contained = (box, name) => {
  const c = box.getBoundingClientRect();
  const walk = document.createTreeWalker(box, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (n.nodeType === Node.TEXT_NODE ? !n.textContent.trim() || !visible(n.parentElement) : !visible(n)) continue;
    const r = rectOf(n);
    if (r.width === 0 && r.height === 0) continue;
    if (!inside(r, c)) {
      problems.push(name + ': ' + say(n) + ' spans x ' + Math.round(r.left) + '..' + Math.round(r.right) +
        ', y ' + Math.round(r.top) + '..' + Math.round(r.bottom) + ' outside x ' + Math.round(c.left) + '..' +
        Math.round(c.right) + ', y ' + Math.round(c.top) + '..' + Math.round(c.bottom));
    }
    if (n.nodeType !== Node.TEXT_NODE && n.clientWidth > 0 && n.scrollWidth > n.clientWidth + 1) {
      problems.push(name + ': ' + say(n) + ' overflows itself (' + n.scrollWidth + ' > ' + n.clientWidth + ' px)');
    }
  }
};

const root = document.documentElement;
if (root.scrollWidth > root.clientWidth) {
  problems.push('the page is ' + root.scrollWidth + ' px wide in a ' + root.clientWidth + ' px window');
}

const cards = Array.from(document.querySelectorAll('li.move')).filter(visible);
cards.forEach((card, i) => {
  contained(card, 'the card of house ' + card.dataset.house);
  const c = card.getBoundingClientRect();
  for (const other of cards.slice(i + 1)) {
    const o = other.getBoundingClientRect();
    if (c.left < o.right - EPS && o.left < c.right - EPS && c.top < o.bottom - EPS && o.top < c.bottom - EPS) {
      problems.push('the cards of houses ' + card.dataset.house + ' and ' + other.dataset.house + ' overlap');
    }
  }
});

const literal = /<([^>]*)>/.exec(document.getElementById('position').textContent);
if (!literal) problems.push('no position shown');
const nums = literal ? literal[1].split(',').map(Number) : [];
const m = nums[0];
for (const cell of document.querySelectorAll('#board .house, #board .store')) {
  const store = cell.classList.contains('store');
  const side = cell.dataset.side;
  const h = store ? 0 : Number(cell.querySelector('.hn').textContent);
  const name = side + (store ? "'s store" : "'s house " + h);
  const want = store ? nums[side === 'south' ? 1 : 2] : nums[(side === 'south' ? 3 : 3 + m) + h - 1];
  const seeds = cell.querySelector('.seeds');
  if (!seeds || seeds.textContent.trim() !== String(want)) {
    problems.push(name + ' shows ' + JSON.stringify(seeds ? seeds.textContent : null) + ', not its ' + want + ' seeds');
  }
  if (cell.textContent.includes('?')) problems.push(name + ' shows a "?": ' + JSON.stringify(cell.textContent));
  contained(cell, name);
}

const state = document.body.dataset.state;
const again = Array.from(document.querySelectorAll('button')).filter((b) => visible(b) && /again/i.test(b.textContent));
if (again.length > 0 && state !== 'error') {
  problems.push('nothing to try again (state ' + state + ', moves ' + document.body.dataset.moves + '), yet ' +
    again.map(say).join(', ') + ' shown');
}
// No value once every move was asked about: the budget, and how to raise it, beside the reason.
if (state === 'unsolved' && document.body.dataset.moves === 'done') {
  const note = document.getElementById('budget-note');
  if (!visible(note) || !/kalah serve --budget/.test(note.textContent)) {
    problems.push('no value, and no word of the budget and how to raise it');
  } else if (!note.closest('.verdict')) {
    problems.push(say(note) + ' is not beside the message');
  }
}
// The value (or its bounds) beside its words, never over them.
const value = document.getElementById('value');
const words = document.getElementById('verdict-box');
if (visible(value) && visible(words)) {
  const a = value.getBoundingClientRect();
  const w = words.getBoundingClientRect();
  if (a.left < w.right - EPS && w.left < a.right - EPS && a.top < w.bottom - EPS && w.top < a.bottom - EPS) {
    problems.push(say(value) + ' overlaps the words beside it');
  }
}
const title = document.getElementById('title');
for (const b of again) {
  if (visible(title) && b.getBoundingClientRect().top < title.getBoundingClientRect().bottom) {
    problems.push(say(b) + ' is above the title');
  }
}

for (const c of document.querySelectorAll('#graph circle')) {
  if (c.dataset.value === undefined || c.dataset.value === '' || !Number.isFinite(Number(c.dataset.value))) {
    problems.push('a point of the graph without a value: ' + c.outerHTML.slice(0, 120));
  }
}
return problems;
"#;

/// Checks the page against [`LAYOUT`], naming `what` and every problem found.
async fn assert_fits(client: &Client, what: &str) -> Result<(), CmdError> {
    let found = client.execute(LAYOUT, vec![]).await?;
    let problems: Vec<&str> = found
        .as_array()
        .expect("a list of problems")
        .iter()
        .map(|p| p.as_str().unwrap_or_default())
        .collect();
    assert!(problems.is_empty(), "{what}: {problems:#?}");
    Ok(())
}

/// The page as the test sees it, read at one moment.
#[derive(Debug)]
struct Page {
    /// `document.body.dataset.state`.
    state: String,
    /// `document.body.dataset.moves`: `searching` while a position's moves are asked about one
    /// by one, `done` after (empty before).
    moves_state: String,
    /// Text of `#position`, `#rules`, `#pv`, `#source` (empty if absent).
    position: String,
    rules: String,
    pv: String,
    source: String,
    /// Text of `#value` when it is visible.
    value_visible: Option<String>,
    /// Text of `#verdict`, and of `#budget-note` when it is visible.
    verdict: String,
    budget: Option<String>,
    /// What each `li.move` shows as its value or bounds (`.mv`).
    marks: Vec<String>,
    /// Text of `#error` when it is visible.
    error: Option<String>,
    /// Each `li.move`: data-house, data-value, whether it is visible.
    moves: Vec<(String, String, bool)>,
    /// data-house of each `.house.playable`.
    playable: Vec<String>,
}

/// Reads the page's hooks in one script, so that they all come from one moment.
const READ_PAGE: &str = r#"
const text = (id) => { const e = document.getElementById(id); return e ? e.textContent.trim() : ''; };
const shown = (id) => {
  const e = document.getElementById(id);
  return e && e.checkVisibility() && e.textContent.trim() !== '' ? e.textContent.trim() : null;
};
return {
  state: document.body.dataset.state || '',
  moves_state: document.body.dataset.moves || '',
  position: text('position'), rules: text('rules'), pv: text('pv'), source: text('source'),
  value: shown('value'), error: shown('error'), verdict: text('verdict'), budget: shown('budget-note'),
  marks: Array.from(document.querySelectorAll('li.move .mv'), (e) => e.textContent.trim()),
  moves: Array.from(document.querySelectorAll('li.move'),
                    (li) => [li.dataset.house ?? '', li.dataset.value ?? '', li.checkVisibility()]),
  playable: Array.from(document.querySelectorAll('.house.playable[data-house]'),
                       (e) => e.dataset.house),
};
"#;

impl Page {
    async fn read(client: &Client) -> Result<Page, CmdError> {
        let v = client.execute(READ_PAGE, vec![]).await?;
        let text = |key: &str| v[key].as_str().unwrap_or_default().to_owned();
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .map(|s| s.as_str().unwrap_or_default().to_owned())
                .collect()
        };
        Ok(Page {
            state: text("state"),
            moves_state: text("moves_state"),
            position: text("position"),
            rules: text("rules"),
            pv: text("pv"),
            source: text("source"),
            value_visible: v["value"].as_str().map(str::to_owned),
            verdict: text("verdict"),
            budget: v["budget"].as_str().map(str::to_owned),
            marks: strings(&v["marks"]),
            error: v["error"].as_str().map(str::to_owned),
            moves: v["moves"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| {
                    let s = strings(m);
                    let visible = m[2].as_bool().unwrap_or(false);
                    (s[0].clone(), s[1].clone(), visible)
                })
                .collect(),
            playable: strings(&v["playable"]),
        })
    }

    fn is_ready(&self) -> bool {
        self.state == "ready"
    }

    /// Checks that the page shows `api`, the API's answer for the same position.
    fn assert_shows(&self, api: &Value) {
        let position = api["position"].as_str().expect("position");
        let context = format!("page {self:#?}\nAPI {api:#}");
        assert_eq!(self.state, "ready", "{context}");
        assert_eq!(self.error, None, "no error shown: {context}");
        assert_eq!(self.position, position, "#position: {context}");
        assert_eq!(
            self.rules,
            api["rules"].as_str().expect("rules"),
            "{context}"
        );
        // The value as the page writes it: +12, 0, -4 (a typographic minus taken too).
        let value = self.value_visible.as_deref().unwrap_or_else(|| {
            panic!("#value is not visible: {context}");
        });
        let value: i64 = value
            .trim_start_matches('+')
            .replace('\u{2212}', "-")
            .parse()
            .unwrap_or_else(|_| panic!("#value {value:?} is not a number: {context}"));
        assert_eq!(
            value,
            api["value"].as_i64().expect("value"),
            "#value: {context}"
        );
        // Every move, in the API's order (best first), each visible.
        let want: Vec<(String, String)> = api["moves"]
            .as_array()
            .expect("moves")
            .iter()
            .map(|m| (m["house"].to_string(), m["value"].to_string()))
            .collect();
        let got: Vec<(String, String)> = self
            .moves
            .iter()
            .map(|(h, v, _)| (h.clone(), v.clone()))
            .collect();
        assert_eq!(got, want, "li.move (house, value), best first: {context}");
        assert!(
            self.moves.iter().all(|m| m.2),
            "every li.move visible: {context}"
        );
        // One playable house on the board for each legal move.
        let mut playable = self.playable.clone();
        playable.sort();
        let mut houses: Vec<String> = want.into_iter().map(|(h, _)| h).collect();
        houses.sort();
        assert_eq!(playable, houses, ".house.playable: {context}");
        // The perfect line, turn by turn.
        let pv: Vec<&str> = self.pv.split_whitespace().collect();
        let want_pv: Vec<&str> = api["pv"]
            .as_array()
            .expect("pv")
            .iter()
            .map(|t| t.as_str().expect("a turn"))
            .collect();
        assert_eq!(pv, want_pv, "#pv: {context}");
        // Where the answer came from.
        let source = api["source"].as_str().expect("source");
        let word = match source {
            "database" => "database",
            "ledger" => "opening books",
            _ => "search",
        };
        assert!(
            self.source.to_lowercase().contains(word),
            "#source names the {source}: {context}"
        );
    }
}

/// Reads the evaluation graph of the line walked (`svg#graph`) in one script.
const READ_GRAPH: &str = r#"
const g = document.getElementById('graph');
const title = g && g.querySelector('title');
return {
  shown: !!g && g.checkVisibility(),
  role: g ? g.getAttribute('role') : null,
  title: title ? title.textContent.trim() : '',
  points: g ? Array.from(g.querySelectorAll('.point'),
                         (p) => [p.dataset.sowing ?? '', p.dataset.value ?? '']) : [],
  mistakes: g ? Array.from(g.querySelectorAll('.mistake'),
                           (m) => [m.dataset.sowing ?? '', m.dataset.loss ?? '']) : [],
};
"#;

/// Checks that the page draws the line `walked` (the API's answers for each position of it,
/// the first one shown first): a visible, labelled graph with one point a sowing (and one for
/// the start), each at the API's value for South, and the `mistakes` (sowing, seeds lost)
/// marked, no others.
async fn assert_graph(
    client: &Client,
    walked: &[Value],
    mistakes: &[(usize, i64)],
) -> Result<(), CmdError> {
    let g = client.execute(READ_GRAPH, vec![]).await?;
    let context = format!("graph {g:#}");
    assert_eq!(g["shown"], true, "the graph is visible: {context}");
    assert_eq!(g["role"], "img", "{context}");
    assert!(
        !g["title"].as_str().unwrap_or_default().is_empty(),
        "the graph has a title: {context}"
    );
    let pairs = |key: &str| -> Vec<(String, String)> {
        g[key]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                let s = |i: usize| p[i].as_str().unwrap_or_default().to_owned();
                (s(0), s(1))
            })
            .collect()
    };
    let want: Vec<(String, String)> = walked
        .iter()
        .enumerate()
        .map(|(k, a)| {
            let v = a["value"].as_i64().expect("value");
            let south = if a["to_move"] == "north" { -v } else { v };
            (k.to_string(), south.to_string())
        })
        .collect();
    assert_eq!(
        pairs("points"),
        want,
        "(sowing, value for South) of each point: {context}"
    );
    let want: Vec<(String, String)> = mistakes
        .iter()
        .map(|(k, lost)| (k.to_string(), lost.to_string()))
        .collect();
    assert_eq!(pairs("mistakes"), want, "(sowing, seeds lost): {context}");
    Ok(())
}

/// Reads the page until `until` holds, within [`PATIENCE`]; fails naming `what` and the page
/// last seen.
async fn settle(
    client: &Client,
    what: &str,
    until: impl Fn(&Page) -> bool,
) -> Result<Page, CmdError> {
    let started = Instant::now();
    loop {
        let page = Page::read(client).await?;
        if until(&page) {
            return Ok(page);
        }
        if started.elapsed() > PATIENCE {
            panic!("{what}: not shown within {PATIENCE:?}; the page: {page:#?}");
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Checks that the page's URL holds `position` and `rules`.
/// After a click on `mv` (an API move, standard rules): waits for the position it leads to,
/// and checks the page's values and URL against the API's.
async fn shows_after(
    client: &Client,
    addr: SocketAddr,
    what: &str,
    mv: &Value,
) -> Result<(), CmdError> {
    let after = mv["after"].as_str().expect("after");
    let page = settle(client, &format!("the position after {what}"), |p| {
        p.is_ready() && p.position == after
    })
    .await?;
    page.assert_shows(&api(
        addr,
        "position",
        &[("position", after), ("rules", "standard")],
    ));
    assert_url(client, after, "standard").await
}

async fn assert_url(client: &Client, position: &str, rules: &str) -> Result<(), CmdError> {
    let url = client.current_url().await?;
    let query: HashMap<String, String> = url.query_pairs().into_owned().collect();
    assert_eq!(
        query.get("position").map(String::as_str),
        Some(position),
        "the URL's position: {url}"
    );
    assert_eq!(
        query.get("rules").map(String::as_str),
        Some(rules),
        "the URL's rules: {url}"
    );
    Ok(())
}

/// Types `literal` into the page's position input, replacing what it held, and submits it.
async fn type_literal(client: &Client, literal: &str) -> Result<(), CmdError> {
    let input = client.find(Locator::Id("pick-literal")).await?;
    input.clear().await?;
    input.send_keys(&format!("{literal}{}", Key::Enter)).await
}

/// Saves a screenshot of the page to `target/browser/explorer.png`.
async fn screenshot(client: &Client, name: &str) -> Result<(), CmdError> {
    let png = client.screenshot().await?;
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("browser");
    std::fs::create_dir_all(&dir).expect("target/browser made");
    let path = dir.join(name);
    std::fs::write(&path, png).expect("the screenshot written");
    eprintln!("screenshot: {}", path.display());
    Ok(())
}

// The API, read without the browser

/// `pairs` as a query string.
fn encode(pairs: &[(&str, &str)]) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (name, value) in pairs {
        query.append_pair(name, value);
    }
    query.finish()
}

/// GET `/api/v1/{path}?pairs` from the server at `addr`: its 200 answer.
fn api(addr: SocketAddr, path: &str, pairs: &[(&str, &str)]) -> Value {
    let (status, body) = api_status(addr, path, pairs);
    assert_eq!(status, 200, "/api/v1/{path} {pairs:?}: {body}");
    body
}

/// GET `/api/v1/{path}?pairs` from the server at `addr`: status and JSON body.
fn api_status(addr: SocketAddr, path: &str, pairs: &[(&str, &str)]) -> (u16, Value) {
    let target = format!("/api/v1/{path}?{}", encode(pairs));
    let (status, body) = get(addr, &target).expect("the server answers");
    let body = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("{target}: not JSON ({e}): {body:?}"));
    (status, body)
}

/// A plain HTTP/1.1 GET of `target`: the status and the body, read to its Content-Length
/// (chromedriver keeps the connection open even when asked to close it). The servers here
/// never send a body in chunks.
fn get(addr: SocketAddr, target: &str) -> std::io::Result<(u16, Vec<u8>)> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(PATIENCE))?;
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line)?;
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("GET {target}: not an HTTP status line: {status_line:?}"));
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').unwrap_or((&line, ""));
        let name = name.trim().to_ascii_lowercase();
        assert_ne!(name, "transfer-encoding", "GET {target}: a body in chunks");
        if name == "content-length" {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let length = length.unwrap_or_else(|| panic!("GET {target}: no Content-Length"));
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok((status, body))
}

// The processes, ended even when the test fails

/// A fresh temporary directory, removed at the end unless the test failed (then its logs are
/// kept there and its path printed).
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new(name: &str) -> TempDir {
        TempDir {
            path: cli_common::fresh_dir(name),
        }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("logs kept in {}", self.path.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// A process started in a process group of its own, all of which is killed when dropped
/// (chromedriver's browsers with it).
struct Group {
    child: Child,
}

impl Group {
    fn spawn(command: &mut Command) -> Group {
        let child = command
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
        Group { child }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let group = self.child.id() as libc::pid_t;
        // SAFETY: kill(2) with a negative pid signals the group that spawn made for this
        // child (its id is the group's); no memory is involved.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

/// `kalah serve` on a free port of 127.0.0.1.
struct Server {
    addr: SocketAddr,
    _process: Group,
    /// Kept open: the server's stdout.
    _stdout: BufReader<ChildStdout>,
}

impl Server {
    /// Serves the database in `db` with the options `more`; its access log goes to
    /// `dir/serve.log`.
    fn start(db: &Path, dir: &Path, more: &[&str]) -> Server {
        let log = File::create(dir.join("serve.log")).expect("a log file");
        let mut command = cli_common::command();
        command
            .args(["serve", "--bind", "127.0.0.1:0"])
            .args(more)
            .arg("--db")
            .arg(db)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log);
        let mut process = Group::spawn(&mut command);
        let mut stdout = BufReader::new(process.child.stdout.take().expect("piped stdout"));
        let mut line = String::new();
        stdout
            .read_line(&mut line)
            .expect("the server's first line");
        let addr = line
            .strip_prefix("listening on http://")
            .and_then(|rest| rest.split('/').next())
            .and_then(|addr| addr.parse().ok())
            .unwrap_or_else(|| panic!("not the first line of kalah serve: {line:?}"));
        Server {
            addr,
            _process: process,
            _stdout: stdout,
        }
    }
}

/// A port of 127.0.0.1 free a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A plain static HTTP server (Python's `http.server`) on a free port of 127.0.0.1, serving
/// `site`; its log goes to `dir/static.log`.
struct StaticServer {
    addr: SocketAddr,
    _process: Group,
}

impl StaticServer {
    fn start(site: &Path, dir: &Path) -> StaticServer {
        let port = free_port();
        let log = File::create(dir.join("static.log")).expect("a log file");
        let process = Group::spawn(
            Command::new("python3")
                .args(["-m", "http.server", "--bind", "127.0.0.1", "--directory"])
                .arg(site)
                .arg(port.to_string())
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("the log file"))
                .stderr(log),
        );
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let started = Instant::now();
        while !matches!(get(addr, "/"), Ok((200, _))) {
            assert!(
                started.elapsed() < PATIENCE,
                "the static server not up on port {port} within {PATIENCE:?}"
            );
            std::thread::sleep(POLL);
        }
        StaticServer {
            addr,
            _process: process,
        }
    }
}

/// chromedriver on a free port of 127.0.0.1, ready for sessions.
struct Driver {
    url: String,
    _process: Group,
}

impl Driver {
    /// Starts chromedriver, its log in `dir/chromedriver.log`, and waits until it is ready.
    fn start(dir: &Path) -> Driver {
        let port = free_port();
        let log = File::create(dir.join("chromedriver.log")).expect("a log file");
        let process = Group::spawn(
            Command::new(CHROMEDRIVER)
                .arg(format!("--port={port}"))
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("the log file"))
                .stderr(log),
        );
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let started = Instant::now();
        loop {
            if let Ok((200, body)) = get(addr, "/status") {
                let status: Value = serde_json::from_slice(&body).unwrap_or_default();
                if status["value"]["ready"] == true {
                    break;
                }
            }
            assert!(
                started.elapsed() < PATIENCE,
                "chromedriver not ready on port {port} within {PATIENCE:?}"
            );
            std::thread::sleep(POLL);
        }
        Driver {
            url: format!("http://{addr}"),
            _process: process,
        }
    }
}
