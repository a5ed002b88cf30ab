//! `kalah serve`: the exact value of any position over HTTP, for programs (`/api/v1/...`) and
//! for people (the explorer at `/`).
//!
//! ```text
//! accept ──► a connection (HTTP/1.1, keep-alive): at most --max-connections at once, its
//!   │        request head within 10 s and 16 KiB, at most 30 s idle between requests
//!   └──► request ──► router (api.rs) ──► response ──► one access-log line on stderr
//!   └──► a request hyper cannot read (a raw `<` in the URL): its empty 400 written as
//!        JSON instead, and logged (unparsed.rs)
//!
//! SIGINT / SIGTERM ──► stop accepting; requests under way finish (a search within its
//!                       budget); the process then exits 0
//! ```

mod api;
mod unparsed;

use std::convert::Infallible;
use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::HttpBody as _;
use clap::Args;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::ServiceExt as _;

use super::CliError;
use super::books::BookArg;
use super::db_choice::DbChoice;

/// Serve exact values over HTTP: a JSON API for programs and an explorer page for people.
///
/// GET /api/v1/position?position=LITERAL&rules=standard|empty-capture[&to_move=north] and
/// GET /api/v1/start?houses=M&seeds=N&rules=R answer with the JSON of `kalah analyze --json`
/// (value, every move's value best first with the position it leads to, best moves, a
/// perfect line) plus `source` (database or search) and `time_ms`. Positions the databases
/// hold are answered at once; others are searched within --budget (past it: HTTP 422). Bad
/// input: HTTP 400 with {"error": "FIELD: ..."}. The explorer at / shows a board with every
/// move's value; click a move to play it.
///
/// The first line on stdout says where it listens; one access-log line per request goes to
/// stderr. Ctrl-C or SIGTERM stops it after the requests under way.
///
/// Memory, at most: each search slot's table (--searches times --tt-mb: 64 MiB by default),
/// the answers of the cache (4096 answers and 32 MiB of their JSON), the opening books and
/// ledgers (the shipped ones, some 20,000 facts, and those of the database directory, read up
/// to 64 MiB and 200,000 facts in all: some 220 MB at most), and a few KiB a connection open
/// (--max-connections); the levels are mapped from their files, not held.
#[derive(Args, Debug)]
#[command(long_about)]
pub struct ServeArgs {
    /// Address and port to listen on (`127.0.0.1:9000`, `[::1]:9000`, `localhost:9000`: a
    /// host name is looked up, its first address taken); port 0 picks a free one (the first
    /// line on stdout names it). Listening beyond 127.0.0.1 serves other machines: put a
    /// reverse proxy in front.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9000", value_parser = bind_address)]
    bind: SocketAddr,

    #[command(flatten)]
    db: DbChoice,

    #[command(flatten)]
    book: BookArg,

    /// Time a request may spend searching a position beyond the databases, in seconds (0.01
    /// to 60), counted from its arrival (waiting for a free search slot included).
    #[arg(long, value_name = "S", default_value = "1", value_parser = super::args::seconds(0.01, 60.0))]
    budget: Duration,

    /// Searches at once, 1 to 64; a request finding none free within its budget gets HTTP 503.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = super::args::count::<usize>(1..=64))]
    searches: usize,

    /// Threads of each search, 1 to 64 (4 a core above 16 cores) [default: all cores].
    #[arg(long, value_name = "T", value_parser = super::args::threads())]
    threads: Option<usize>,

    /// Transposition table of each search slot in MiB, 1 to the machine's physical memory
    /// (kept between requests: a walk through a game gets faster).
    #[arg(long = "tt-mb", value_name = "MIB", default_value_t = 64, value_parser = super::args::mib())]
    tt_mb: usize,

    /// Connections open at once, 1 to 65536; more are closed as they come.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = super::args::count::<usize>(1..=65536))]
    max_connections: usize,

    /// Write the first line and the access log as JSON, one object a line.
    #[arg(long)]
    json: bool,
}

/// Time for a request head to arrive, from the connection's opening or its last answer.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// Longest request head taken, in bytes: the query is bounded far below it
/// ([`kalah::api::MAX_QUERY`]); hyper answers a longer one with 431.
const MAX_HEAD: usize = 16 * 1024;

/// The most characters of a request target written to the access log.
const MAX_LOGGED_TARGET: usize = 300;

pub fn run(args: ServeArgs) -> Result<(), CliError> {
    let databases = args.db.open_every()?;
    let book = args.book.open(&args.db, None)?;
    let api = api::Api::new(
        databases,
        book,
        api::SearchSettings {
            budget: args.budget,
            slots: args.searches,
            threads: super::args::threads_or_all(args.threads),
            tt_mib: args.tt_mb,
        },
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(kalah::cores())
        .thread_name("kalah-serve")
        .enable_all()
        .build()
        .map_err(|e| CliError::failure(format!("cannot start the server's threads: {e}")))?;
    runtime.block_on(serve(args, Arc::new(api)))
}

async fn serve(args: ServeArgs, api: Arc<api::Api>) -> Result<(), CliError> {
    let listener = TcpListener::bind(args.bind)
        .await
        .map_err(|e| CliError::failure(format!("cannot listen on {}: {e}", args.bind)))?;
    let addr = listener
        .local_addr()
        .map_err(|e| CliError::failure(format!("cannot listen on {}: {e}", args.bind)))?;
    announce(addr, &api, args.json);
    let router = api::router(api.clone());
    let connections = Arc::new(Semaphore::new(args.max_connections));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let log = Log { json: args.json };
    let stop = stop_signal();
    tokio::pin!(stop);
    let signal = loop {
        let (stream, peer) = tokio::select! {
            signal = &mut stop => break signal,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, say: wait for connections to close.
                    log.note(&format!("cannot accept a connection: {e}"));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = connections.clone().try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let router = router.clone();
            async move {
                let started = Instant::now();
                let method = request.method().clone();
                let target = request
                    .uri()
                    .path_and_query()
                    .map_or("/", |p| p.as_str())
                    .to_owned();
                let response = router.oneshot(request).await?;
                let bytes = response.body().size_hint().exact();
                log.request(
                    peer,
                    Some((&method, &target)),
                    response.status().as_u16(),
                    bytes,
                    Some(started.elapsed()),
                );
                Ok::<_, Infallible>(response)
            }
        });
        let connection = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(HEAD_TIMEOUT)
            .max_buf_size(MAX_HEAD)
            .serve_connection(
                TokioIo::new(unparsed::Unparsed::new(stream, peer, log)),
                service,
            );
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            let _ = connection.await;
            drop(permit);
        });
    };
    drop(listener);
    log.note(&format!(
        "{signal}: no new connections; finishing the requests under way"
    ));
    // A search stops at its budget; a connection idle in keep-alive closes at once.
    let grace = api.budget() + Duration::from_secs(5);
    if tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_err()
    {
        log.note("some connections did not finish in time; closed");
    }
    Ok(())
}

/// The first line on stdout: where the server listens and what it serves.
fn announce(addr: SocketAddr, api: &api::Api, json: bool) {
    let url = format!("http://{addr}/");
    let dbs = api.databases();
    if json {
        let databases: Vec<_> = dbs
            .iter()
            .map(|db| {
                json!({"houses": db.houses(), "rules": db.rules().as_str(), "max_level": db.max_level()})
            })
            .collect();
        println!(
            "{}",
            json!({"listening": url, "databases": databases, "books": api.book().sources(), "book_facts": api.book().facts(), "unchecked_facts": api.book().trust().unchecked, "budget_ms": api.budget().as_millis() as u64})
        );
    } else {
        let served: Vec<String> = dbs
            .iter()
            .map(|db| {
                format!(
                    "{} houses {} 0..={}",
                    db.houses(),
                    db.rules(),
                    db.max_level()
                )
            })
            .collect();
        let served = if served.is_empty() {
            "no databases: every position is searched".to_owned()
        } else {
            format!("databases: {}", served.join(", "))
        };
        let mut books = match api.book().sources().len() {
            0 => "no opening book".to_owned(),
            n => format!(
                "opening books: {} facts in {n} ledger{}",
                api.book().facts(),
                if n == 1 { "" } else { "s" }
            ),
        };
        let unchecked = api.book().trust().unchecked;
        if unchecked > 0 {
            books.push_str(&format!(
                " ({unchecked} facts unchecked: shown as claims, never as values; kalah prove \
                 --check FILE --all checks them)"
            ));
        }
        println!(
            "listening on {url} ({served}; {books}; searches within {} ms)",
            api.budget().as_millis()
        );
    }
}

/// SIGINT or SIGTERM, by name.
async fn stop_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut term) = signal(SignalKind::terminate()) else {
            let _ = tokio::signal::ctrl_c().await;
            return "SIGINT";
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => "SIGINT",
            _ = term.recv() => "SIGTERM",
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}

/// The access log on stderr.
#[derive(Clone, Copy)]
struct Log {
    json: bool,
}

impl Log {
    /// One line for one request: time, peer, method, target, status, body bytes, duration. A
    /// request that could not be read (`read` is `None`: hyper answered it itself) has no
    /// method, target, bytes or duration to log (`-`, or null in JSON) and says so.
    fn request(
        self,
        peer: SocketAddr,
        read: Option<(&hyper::Method, &str)>,
        status: u16,
        bytes: Option<u64>,
        elapsed: Option<Duration>,
    ) {
        let time = kalah::play::record::UtcTime::now();
        let method = read.map(|(m, _)| m.as_str());
        let target = read.map(|(_, t)| kalah::text::escape_within(t, MAX_LOGGED_TARGET));
        let ms = elapsed.map(|d| d.as_secs_f64() * 1e3);
        let unread = read.is_none().then_some("the request could not be read");
        let line = if self.json {
            let mut line = json!({
                "time": time.to_string(),
                "peer": peer.to_string(),
                "method": method,
                "target": target,
                "status": status,
                "bytes": bytes,
                "ms": ms.map(|ms| (ms * 1000.0).round() / 1000.0),
            });
            if let Some(note) = unread {
                line["note"] = json!(note);
            }
            line.to_string()
        } else {
            let dash = |v: Option<String>| v.unwrap_or_else(|| "-".to_owned());
            let mut line = format!(
                "{time} {peer} {} {} {status} {} {}",
                method.unwrap_or("-"),
                dash(target),
                dash(bytes.map(|b| b.to_string())),
                dash(ms.map(|ms| format!("{ms:.3}ms"))),
            );
            if let Some(note) = unread {
                line.push_str(&format!(" ({note})"));
            }
            line
        };
        write_line(line);
    }

    /// A line about the server itself.
    fn note(self, text: &str) {
        let time = kalah::play::record::UtcTime::now();
        write_line(if self.json {
            json!({"time": time.to_string(), "note": text}).to_string()
        } else {
            format!("{time} {text}")
        });
    }
}

/// Writes `line` and a line break to stderr in one system call. Stderr is unbuffered, and
/// `eprintln!` writes each piece of its format on its own: 38 calls for an access-log line,
/// a third of the server's time under load (docs/serve-load.md).
fn write_line(mut line: String) {
    line.push('\n');
    // A log that cannot be written (its reader gone) is no reason to stop serving.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// `--bind`: an address and port, or a host name and port (looked up; the first address,
/// IPv4 first, taken).
fn bind_address(text: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let expected = || "expected ADDRESS:PORT, such as 127.0.0.1:9000 or localhost:9000".to_owned();
    let (host, port) = text.rsplit_once(':').ok_or_else(expected)?;
    let port: u16 = port
        .parse()
        .map_err(|_| format!("the port '{port}' is not a number from 0 to 65535"))?;
    if host.is_empty() || host.len() > 253 {
        return Err(expected());
    }
    use std::net::ToSocketAddrs;
    let found: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot look up the host '{host}': {e}"))?
        .collect();
    found
        .iter()
        .find(|a| a.is_ipv4())
        .or(found.first())
        .copied()
        .ok_or_else(|| format!("the host '{host}' has no address"))
}
