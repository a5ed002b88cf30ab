//! The states in flight on one connection, and how a move is made to stand.
//!
//! # The race this guards against
//!
//! The KWARC practice server writes `state` to the socket before it records the state as
//! waiting for an answer. A `move` that arrives in between is refused with
//! `error "No state associated with id"` (referencing the move's id) and dropped; a `yield`
//! that arrives that early is dropped too, and the server then waits out its timeout and
//! plays a random move for us. Between recording the state and handing it to the goroutine
//! that takes answers there is a second window, in which a `move` is dropped without a word.
//! A fast client answers in a fraction of a millisecond, so both windows are real.
//!
//! # What the client does
//!
//! ```text
//!  state arrives   moves found early are held      error @id?  -> the best move again,
//!  |------pause------| the latest one sent             one pause later
//!  t0                |-------pause-------| yield      (at most MAX_RESENDS times a state)
//!                    the move stood a pause with no error
//! ```
//!
//! - No `move` goes out sooner than [`ClientConfig::resend_pause`] after its state arrived:
//!   a move found sooner is held, and the latest one is sent when the pause is over (by a
//!   short-lived thread, so the search goes on meanwhile). Measured on the practice server,
//!   the window is about 0.1 ms, 9 ms at worst, 37 ms on a server starved to one core; the
//!   pause is 100 ms.
//! - Every `move` carries an id of ours (odd numbers; the server's are even), so an `error`
//!   names the move it refuses. On such an error the reading thread marks the state and the
//!   current best move goes again one pause later.
//! - Before `yield`, [`Request::settle`] waits until the last move has *stood*: sent, and one
//!   pause passed since with no error for it. A refused move is therefore never followed by a
//!   `yield` that would hand the choice to the server's random move.
//!
//! [`ClientConfig::resend_pause`]: super::ClientConfig::resend_pause

use std::io::{self, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use super::{Argument, Command};

/// The most times one state's move is sent again after errors.
pub const MAX_RESENDS: u32 = 8;

/// Locks, also after a panic elsewhere (the data stays usable).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the two threads of a connection share.
pub struct Shared {
    writer: Mutex<TcpStream>,
    /// The states in flight (usually one).
    pub requests: Mutex<Vec<Arc<Request>>>,
    /// The next id of ours: 1, 3, 5, ...
    next_id: AtomicU64,
    /// See [`super::ClientConfig::resend_pause`].
    pause: Duration,
}

impl Shared {
    pub fn new(writer: TcpStream, pause: Duration) -> Shared {
        Shared {
            writer: Mutex::new(writer),
            requests: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
            pause,
        }
    }

    /// Sends one command, CRLF-terminated, in one piece.
    pub fn send(&self, command: &Command) -> io::Result<()> {
        let line = format!("{command}\r\n");
        let mut w = lock(&self.writer);
        w.write_all(line.as_bytes())?;
        w.flush()
    }

    /// See [`super::ClientConfig::resend_pause`].
    pub fn pause(&self) -> Duration {
        self.pause
    }

    /// A fresh id of ours.
    fn id(&self) -> u64 {
        self.next_id.fetch_add(2, Ordering::Relaxed)
    }

    pub fn halt_all(&self) {
        for r in lock(&self.requests).iter() {
            r.halt.store(true, Ordering::SeqCst);
        }
    }

    pub fn finish(&self, request: &Arc<Request>) {
        request.finished.store(true, Ordering::SeqCst);
        lock(&self.requests).retain(|r| !Arc::ptr_eq(r, request));
    }

    /// The server refused a command of ours (`error` or `nok`, referencing `reference`): if it
    /// was a move of a state still in flight, that state's best move goes again after the
    /// pause. Without a reference, the one state in flight that sent a move is meant, if
    /// there is exactly one. Returns whether a state was found.
    pub fn refused(self: &Arc<Shared>, reference: Option<u64>) -> bool {
        let request = {
            let requests = lock(&self.requests);
            let mut found = requests.iter().filter(|r| match reference {
                Some(id) => lock(&r.sent).ids.contains(&id),
                None => !lock(&r.sent).ids.is_empty(),
            });
            match (found.next(), found.next()) {
                (Some(r), None) => r.clone(),
                _ => return false,
            }
        };
        {
            let mut sent = lock(&request.sent);
            sent.refused += 1;
            if sent.refused > MAX_RESENDS || request.is_closed() {
                return true;
            }
            sent.pending = true;
        }
        let shared = self.clone();
        let pause = self.pause;
        let resender = {
            let request = request.clone();
            thread::Builder::new()
                .name("kgp-resend".into())
                .spawn(move || {
                    thread::sleep(pause);
                    let _ = request.resend(&shared);
                })
        };
        if resender.is_err() {
            // No thread to send it again: go on without (a later choice is sent as usual).
            lock(&request.sent).pending = false;
        }
        true
    }
}

/// One `state` in flight.
pub struct Request {
    /// The state's id.
    pub id: Option<u64>,
    /// When its line arrived.
    pub received: Instant,
    /// The server sent `stop` for it: send nothing more.
    pub stopped: AtomicBool,
    /// The engine must stop: stopped, cut short by a newer state, or the connection is lost.
    pub halt: AtomicBool,
    /// Answered (yield sent or given up): send nothing more.
    finished: AtomicBool,
    sent: Mutex<Sent>,
}

/// The moves of one state.
#[derive(Default)]
struct Sent {
    /// The latest move chosen.
    house: Option<usize>,
    /// The chosen move waits for the end of the first pause.
    held: bool,
    /// A thread will send it then.
    release_due: bool,
    /// When a move was last sent.
    at: Option<Instant>,
    /// The ids of the moves sent (the newest [`MAX_IDS`]).
    ids: Vec<u64>,
    /// Errors the server sent for them.
    refused: u32,
    /// Moves sent again after an error.
    resent: u32,
    /// An error came and the move will go again after the pause.
    pending: bool,
}

/// The ids kept per state (the newest): a search changes its mind a few dozen times at most.
const MAX_IDS: usize = 256;

impl Request {
    pub fn new(id: Option<u64>, received: Instant) -> Request {
        Request {
            id,
            received,
            stopped: AtomicBool::new(false),
            halt: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            sent: Mutex::new(Sent::default()),
        }
    }

    fn is_closed(&self) -> bool {
        self.stopped.load(Ordering::SeqCst) || self.finished.load(Ordering::SeqCst)
    }

    /// Chooses `house`: sends `move house` now, or, within the first pause after the state
    /// arrived, holds it for a thread that sends the latest choice when the pause is over.
    /// Nothing is sent once the state was stopped or answered.
    pub fn choose(self: &Arc<Request>, shared: &Arc<Shared>, house: usize) -> io::Result<()> {
        let mut sent = lock(&self.sent);
        if self.is_closed() {
            return Ok(());
        }
        sent.house = Some(house);
        let due = self.received + shared.pause;
        let now = Instant::now();
        if now >= due {
            sent.held = false;
            return self.send(&mut sent, shared, house);
        }
        sent.held = true;
        if !sent.release_due {
            let (request, shared) = (self.clone(), shared.clone());
            let release = thread::Builder::new()
                .name("kgp-release".into())
                .spawn(move || {
                    thread::sleep(due.saturating_duration_since(Instant::now()));
                    let _ = request.release(&shared);
                });
            // Without the thread, `settle` sends it when the pause is over.
            sent.release_due = release.is_ok();
        }
        Ok(())
    }

    /// Sends the held move, if one is held.
    fn release(&self, shared: &Shared) -> io::Result<()> {
        let mut sent = lock(&self.sent);
        sent.release_due = false;
        match sent.house {
            Some(house) if sent.held && !self.is_closed() => {
                sent.held = false;
                self.send(&mut sent, shared, house)
            }
            _ => Ok(()),
        }
    }

    /// Sends `move house` with an id of ours (the lock on `sent` held, so that moves go out
    /// in the order chosen).
    fn send(&self, sent: &mut Sent, shared: &Shared, house: usize) -> io::Result<()> {
        let id = shared.id();
        let k = i64::try_from(house).expect("a house number fits");
        let command = Command {
            id: Some(id),
            ..Command::reply(self.id, "move").with(Argument::Integer(k))
        };
        shared.send(&command)?;
        if sent.ids.len() == MAX_IDS {
            sent.ids.remove(0);
        }
        sent.ids.push(id);
        sent.at = Some(Instant::now());
        Ok(())
    }

    /// Sends the latest move again after an error.
    fn resend(&self, shared: &Shared) -> io::Result<()> {
        let mut sent = lock(&self.sent);
        sent.pending = false;
        match sent.house {
            Some(house) if !self.is_closed() && !sent.held => {
                sent.resent += 1;
                self.send(&mut sent, shared, house)
            }
            _ => Ok(()),
        }
    }

    /// Errors the server sent for this state's moves, and the moves sent again.
    pub fn refusals(&self) -> (u32, u32) {
        let sent = lock(&self.sent);
        (sent.refused, sent.resent)
    }

    /// Waits until the last move chosen has stood (see the module docs), so that a `yield`
    /// may follow: sent (a held move is sent when the first pause is over), then one pause
    /// with no error for it. At once if no move was chosen or the state was stopped. Gives up
    /// waiting `MAX_RESENDS` + 3 pauses after the first pause; an error only if a write failed.
    pub fn settle(&self, shared: &Shared) -> io::Result<()> {
        let pause = shared.pause;
        let first = self.received + pause;
        let limit = Instant::now().max(first) + pause * (MAX_RESENDS + 3);
        loop {
            if self.stopped.load(Ordering::SeqCst) {
                return Ok(());
            }
            let now = Instant::now();
            if now >= limit {
                return Ok(());
            }
            let wait = {
                let mut sent = lock(&self.sent);
                let Some(house) = sent.house else {
                    return Ok(());
                };
                if sent.held {
                    if now < first {
                        first - now
                    } else {
                        // The releasing thread is late or missing: send it here.
                        sent.held = false;
                        self.send(&mut sent, shared, house)?;
                        continue;
                    }
                } else if sent.pending {
                    // The resending thread is due within a pause.
                    (pause / 4).max(Duration::from_millis(1))
                } else {
                    let stood = sent.at.map_or(now, |at| at + pause);
                    if now >= stood {
                        return Ok(());
                    }
                    stood - now
                }
            };
            thread::sleep(wait.min(limit.saturating_duration_since(now)));
        }
    }
}
