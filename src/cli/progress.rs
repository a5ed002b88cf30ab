//! Progress on stderr, drawn the same way by every command: a bar or a spinner on a terminal,
//! a plain line every few seconds otherwise, so that a long job is never silent.
//!
//! Every site makes an [`Indicator`] and feeds it what the library's callbacks report (the
//! library never prints). One status line says what is done, in this order:
//!
//! ```text
//! level 18: 12.3M/45.6M entries (26%), 12s, 1.02M/s, eta 32s
//! solving: 123M nodes, 12s, 10.3M/s, depth 12: value in [-4, 6]
//! South (perfect) thinking: 1m05s, solving exactly: value in [-4, +6]
//! ```
//!
//! - On a terminal (when indicatif would draw on stderr) the line follows a spinner (and a bar
//!   when the total is known), is redrawn ten times a second in place and is cut to the
//!   terminal's width, so that it never wraps and scrolls.
//! - Otherwise (a log, a pipe) the same line is printed every [`DEFAULT_EVERY`], cut to
//!   [`PLAIN_WIDTH`] columns, starting one interval after the job began: a short job prints
//!   nothing. The hidden environment variable `KALAH_PROGRESS_EVERY` sets the interval in
//!   seconds (decimals allowed; `0` turns the lines off), for tests and for logs that want
//!   more or fewer lines.
//!
//! Counts and rates are written for people ([`super::human`]): three significant digits and a
//! prefix (`17.8M nodes/s`, never `17779325.5159/s`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::human::{human_count, human_duration, human_rate};

/// The interval between two plain lines when stderr is not a terminal.
pub const DEFAULT_EVERY: Duration = Duration::from_secs(5);

/// The environment variable that sets the interval between plain lines, in seconds.
pub const EVERY_VARIABLE: &str = "KALAH_PROGRESS_EVERY";

/// The width plain lines are cut to: wide enough for every status line the commands make
/// (a log is not a terminal: it does not wrap), and still a bound on a line.
pub const PLAIN_WIDTH: usize = 240;

/// How often the line is redrawn on a terminal.
const REDRAW: Duration = Duration::from_millis(100);

/// The longest interval `KALAH_PROGRESS_EVERY` accepts: a day (longer means no lines).
const MAX_EVERY_SECONDS: f64 = 86_400.0;

/// What a job has done: the parts of its status line (see [`status_line`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot<'a> {
    /// What is being done, e.g. `level 18` or `solving`.
    pub what: &'a str,
    /// Units done so far.
    pub done: u64,
    /// Units in all, if known.
    pub total: Option<u64>,
    /// The name of a unit (`entries`, `nodes`); empty when the job counts nothing.
    pub unit: &'a str,
    /// Time since the job (or its phase) began.
    pub elapsed: Duration,
    /// Anything else to say, last on the line (may be empty).
    pub message: &'a str,
}

/// The status line of a job: what, done/total unit (percent), elapsed, rate, eta, message,
/// each part only when it means something (no total: no percent or eta; no unit: no counts).
pub fn status_line(s: &Snapshot<'_>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let seconds = s.elapsed.as_secs_f64();
    let rate = (seconds > 0.0).then(|| s.done as f64 / seconds);
    if !s.unit.is_empty() {
        parts.push(match s.total {
            Some(total) => {
                let percent = match total {
                    0 => 100,
                    t => (u128::from(s.done.min(t)) * 100 / u128::from(t)) as u64,
                };
                format!(
                    "{}/{} {} ({percent}%)",
                    human_count(s.done),
                    human_count(total),
                    s.unit
                )
            }
            None => format!("{} {}", human_count(s.done), s.unit),
        });
    }
    parts.push(human_duration(s.elapsed));
    if !s.unit.is_empty()
        && let Some(rate) = rate
    {
        // The unit is in the count already.
        parts.push(human_rate(rate, ""));
        if let Some(total) = s.total
            && rate > 0.0
            && s.done > 0
            && s.done < total
        {
            let left = (total - s.done) as f64 / rate;
            if let Ok(left) = Duration::try_from_secs_f64(left) {
                parts.push(format!("eta {}", human_duration(left)));
            }
        }
    }
    if !s.message.is_empty() {
        parts.push(s.message.to_owned());
    }
    format!("{}: {}", s.what, parts.join(", "))
}

/// `line` cut to at most `width` characters (the last three `...` when cut). Control
/// characters are never in a status line: names in it come escaped.
pub fn fit(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        return line.to_owned();
    }
    let kept: String = line.chars().take(width.saturating_sub(3)).collect();
    format!("{kept}...")
}

/// The interval between plain lines that `KALAH_PROGRESS_EVERY`'s value `text` asks for
/// (`None` when unset: [`DEFAULT_EVERY`]); `None` in the result: no lines (`0`, or an interval
/// longer than a day). A value that is not a number of seconds is ignored (the default).
pub fn interval_from(text: Option<&str>) -> Option<Duration> {
    let Some(text) = text else {
        return Some(DEFAULT_EVERY);
    };
    match text.trim().parse::<f64>() {
        Ok(s) if !s.is_finite() || s < 0.0 => Some(DEFAULT_EVERY),
        Ok(s) if s == 0.0 || s > MAX_EVERY_SECONDS => None,
        Ok(s) => Duration::try_from_secs_f64(s).ok(),
        Err(_) => Some(DEFAULT_EVERY),
    }
}

/// How the indicator shows itself.
enum Draw {
    /// A bar or spinner on the terminal.
    Terminal(ProgressBar),
    /// A plain line on stderr at this interval.
    Lines(Duration),
    /// Nothing.
    Hidden,
}

/// The parts of the status line that change only now and then.
struct Job {
    what: String,
    total: Option<u64>,
    unit: &'static str,
    message: String,
    started: Instant,
}

/// What the indicator and its ticker thread share.
struct Shared {
    job: Mutex<Job>,
    done: AtomicU64,
    draw: Draw,
    /// Set when the indicator is finished; the condition variable wakes the ticker.
    stopped: Mutex<bool>,
    wake: Condvar,
}

impl Shared {
    /// A job begun now, none of it done.
    fn new(what: String, total: Option<u64>, unit: &'static str, draw: Draw) -> Shared {
        Shared {
            job: Mutex::new(Job {
                what,
                total,
                unit,
                message: String::new(),
                started: Instant::now(),
            }),
            done: AtomicU64::new(0),
            draw,
            stopped: Mutex::new(false),
            wake: Condvar::new(),
        }
    }

    /// The status line now.
    fn line(&self) -> String {
        let job = self.job.lock().expect("not poisoned");
        status_line(&Snapshot {
            what: &job.what,
            done: self.done.load(Ordering::Relaxed),
            total: job.total,
            unit: job.unit,
            elapsed: job.started.elapsed(),
            message: &job.message,
        })
    }

    /// Redraws the bar, or prints a plain line when one is due; `last`: when the last plain
    /// line was printed (or the job began).
    fn tick(&self, last: &mut Instant) {
        match &self.draw {
            Draw::Terminal(bar) => {
                let total = self.job.lock().expect("not poisoned").total;
                if let Some(total) = total {
                    bar.set_length(total);
                    bar.set_position(self.done.load(Ordering::Relaxed).min(total));
                }
                bar.set_message(self.line());
                // Turns the spinner.
                bar.tick();
            }
            Draw::Lines(every) => {
                if last.elapsed() >= *every {
                    eprintln!("{}", fit(&self.line(), PLAIN_WIDTH));
                    *last = Instant::now();
                }
            }
            Draw::Hidden => {}
        }
    }

    /// Ticks until stopped.
    fn run(&self) {
        let period = match &self.draw {
            Draw::Terminal(_) => REDRAW,
            Draw::Lines(every) => *every,
            Draw::Hidden => return,
        };
        let mut last = Instant::now();
        let mut stopped = self.stopped.lock().expect("not poisoned");
        loop {
            // Stopped before this thread first waited: the wake-up has come and gone.
            if *stopped {
                return;
            }
            let wait = match &self.draw {
                // Wake when the next line is due (or at once after a spurious wake-up).
                Draw::Lines(_) => period.saturating_sub(last.elapsed()),
                _ => period,
            };
            stopped = self
                .wake
                .wait_timeout(stopped, wait)
                .expect("not poisoned")
                .0;
            if *stopped {
                return;
            }
            self.tick(&mut last);
        }
    }
}

/// Progress of one job on stderr (see the module docs). Shared by reference between threads;
/// finished (the bar cleared, the ticker stopped) when dropped.
pub struct Indicator {
    shared: Arc<Shared>,
    ticker: Option<JoinHandle<()>>,
}

impl Indicator {
    /// A job of `total` units named `unit` (`entries`, `games`), drawn with a bar.
    pub fn bar(what: impl Into<String>, total: u64, unit: &'static str) -> Indicator {
        Indicator::start(what.into(), Some(total), unit, drawing(true))
    }

    /// A job of unknown length, counting `unit`s (`nodes`) or nothing (`""`).
    pub fn spinner(what: impl Into<String>, unit: &'static str) -> Indicator {
        Indicator::start(what.into(), None, unit, drawing(false))
    }

    fn start(what: String, total: Option<u64>, unit: &'static str, draw: Draw) -> Indicator {
        let shows = !matches!(draw, Draw::Hidden);
        let shared = Arc::new(Shared::new(what, total, unit, draw));
        let ticker = shows.then(|| {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("kalah-progress".into())
                .spawn(move || shared.run())
                .ok()
        });
        Indicator {
            shared,
            ticker: ticker.flatten(),
        }
    }

    /// Sets the units done. Never goes back: reports from worker threads may come out of
    /// order (see [`Indicator::restart`] for a new phase).
    pub fn set_done(&self, done: u64) {
        self.shared.done.fetch_max(done, Ordering::Relaxed);
    }

    /// Adds `n` units done.
    pub fn inc(&self, n: u64) {
        self.shared.done.fetch_add(n, Ordering::Relaxed);
    }

    /// Sets the message at the end of the line.
    pub fn set_message(&self, message: impl Into<String>) {
        self.shared.job.lock().expect("not poisoned").message = message.into();
    }

    /// Starts a new phase: what is done, its total and unit (`""`: it counts nothing), no
    /// units done, no message, the clock (and the rate) from now.
    pub fn restart(&self, what: impl Into<String>, total: Option<u64>, unit: &'static str) {
        let mut job = self.shared.job.lock().expect("not poisoned");
        job.what = what.into();
        job.total = total;
        job.unit = unit;
        job.message.clear();
        job.started = Instant::now();
        self.shared.done.store(0, Ordering::Relaxed);
    }

    /// Prints `line` on stderr: above the bar on a terminal, as it is otherwise (also when
    /// hidden: a line is news, not progress).
    pub fn println(&self, line: impl AsRef<str>) {
        match &self.shared.draw {
            Draw::Terminal(bar) => bar.println(line),
            _ => eprintln!("{}", line.as_ref()),
        }
    }

    /// Prints `line` above the bar on a terminal, and nothing otherwise: for detail that the
    /// plain lines (with [`Indicator::set_message`]) sum up well enough in a log.
    pub fn note(&self, line: impl AsRef<str>) {
        if let Draw::Terminal(bar) = &self.shared.draw {
            bar.println(line);
        }
    }

    /// Runs `f` (which prints) with the bar out of the way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.shared.draw {
            Draw::Terminal(bar) => bar.suspend(f),
            _ => f(),
        }
    }

    /// Stops the indicator and clears the bar (as dropping it does).
    pub fn finish(self) {}
}

impl Drop for Indicator {
    fn drop(&mut self) {
        *self.shared.stopped.lock().expect("not poisoned") = true;
        self.shared.wake.notify_all();
        if let Some(ticker) = self.ticker.take() {
            let _ = ticker.join();
        }
        if let Draw::Terminal(bar) = &self.shared.draw {
            bar.finish_and_clear();
        }
    }
}

/// How to draw on this process's stderr: a bar (`with_bar`) or a spinner where indicatif
/// draws, plain lines elsewhere.
fn drawing(with_bar: bool) -> Draw {
    let target = ProgressDrawTarget::stderr();
    if target.is_hidden() {
        let every = std::env::var(EVERY_VARIABLE).ok();
        return match interval_from(every.as_deref()) {
            Some(every) => Draw::Lines(every),
            None => Draw::Hidden,
        };
    }
    let template = if with_bar {
        "{spinner} [{bar:20}] {wide_msg}"
    } else {
        "{spinner} {wide_msg}"
    };
    let style = ProgressStyle::with_template(template)
        .expect("a valid template")
        .progress_chars("=> ");
    let bar = ProgressBar::with_draw_target(None, target).with_style(style);
    Draw::Terminal(bar)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_line_says_what_is_known_and_nothing_else() {
        let bar = Snapshot {
            what: "level 18",
            done: 12_300_000,
            total: Some(45_600_000),
            unit: "entries",
            elapsed: Duration::from_secs(12),
            message: "",
        };
        assert_eq!(
            status_line(&bar),
            "level 18: 12.3M/45.6M entries (26%), 12s, 1.02M/s, eta 32s"
        );
        let counter = Snapshot {
            what: "solving",
            total: None,
            unit: "nodes",
            message: "depth 12: value in [-4, 6]",
            ..bar.clone()
        };
        assert_eq!(
            status_line(&counter),
            "solving: 12.3M nodes, 12s, 1.02M/s, depth 12: value in [-4, 6]"
        );
        let spinner = Snapshot {
            what: "South (perfect) thinking",
            done: 0,
            total: None,
            unit: "",
            elapsed: Duration::from_secs(65),
            message: "solving exactly",
        };
        assert_eq!(
            status_line(&spinner),
            "South (perfect) thinking: 1m05s, solving exactly"
        );
        // Nothing done yet, or all of it: no eta; an empty total is complete.
        let start = Snapshot {
            done: 0,
            elapsed: Duration::ZERO,
            ..bar.clone()
        };
        assert_eq!(status_line(&start), "level 18: 0/45.6M entries (0%), 0.0s");
        let empty = Snapshot {
            done: 0,
            total: Some(0),
            ..bar
        };
        assert_eq!(
            status_line(&empty),
            "level 18: 0/0 entries (100%), 12s, 0/s"
        );
    }

    #[test]
    fn long_lines_are_cut_to_the_width() {
        assert_eq!(fit("short", 80), "short");
        let long = "x".repeat(400);
        let cut = fit(&long, PLAIN_WIDTH);
        assert_eq!(cut.chars().count(), PLAIN_WIDTH);
        assert!(cut.ends_with("..."));
        assert_eq!(fit("éééé", 3), "...");
    }

    #[test]
    fn the_interval_comes_from_the_environment_or_the_default() {
        assert_eq!(interval_from(None), Some(DEFAULT_EVERY));
        assert_eq!(
            interval_from(Some("0.25")),
            Some(Duration::from_millis(250))
        );
        assert_eq!(interval_from(Some("0")), None);
        assert_eq!(interval_from(Some("1e9")), None);
        for ignored in ["", "soon", "-1", "NaN", "inf"] {
            assert_eq!(
                interval_from(Some(ignored)),
                Some(DEFAULT_EVERY),
                "{ignored}"
            );
        }
    }

    #[test]
    fn a_ticker_stopped_before_it_first_waits_ends_at_once() {
        // The indicator of a job that ended before its ticker thread ran: the ticker must not
        // sleep out its interval (an hour here) waiting for a wake-up that already came.
        let every = Duration::from_secs(3600);
        let shared = Shared::new("job".into(), None, "", Draw::Lines(every));
        *shared.stopped.lock().unwrap() = true;
        shared.run();
    }

    #[test]
    fn a_hidden_indicator_counts_and_prints_nothing() {
        let indicator = Indicator::start("job".into(), None, "", Draw::Hidden);
        indicator.set_done(10);
        indicator.set_done(5);
        indicator.inc(1);
        assert_eq!(indicator.shared.done.load(Ordering::Relaxed), 11);
        indicator.restart("next", Some(3), "games");
        assert_eq!(indicator.shared.done.load(Ordering::Relaxed), 0);
        assert!(
            indicator
                .shared
                .line()
                .starts_with("next: 0/3 games (0%), ")
        );
        assert!(indicator.ticker.is_none());
        assert_eq!(indicator.suspend(|| 7), 7);
    }
}
