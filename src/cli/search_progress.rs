//! A solve watched: progress on stderr while the solver works, and the table of --table-file
//! saved every few minutes, at the end and on Ctrl-C.

use std::time::{Duration, Instant};

use kalah::{Lanes, Position, Solver};

use super::CliError;
use super::progress::Indicator;
use super::table_file::TableFileArgs;

/// Runs `work` (a solve of `p` by `solver`, given the callback for its MTD(f) steps) with
/// progress on stderr ([`Indicator`]: the nodes, their rate and the last step's bounds; on a
/// terminal also a line per step above the spinner); with
/// --table-file, the table is saved every --save-every minutes and at the end, and Ctrl-C saves
/// it before the process ends (exit code 130). Returns `work`'s result, its time and the nodes
/// it searched; an error, before any work, if the thread of the progress cannot be started.
pub fn with_progress<L: Lanes, T>(
    p: &Position<L>,
    solver: &Solver,
    table: &TableFileArgs,
    work: impl FnOnce(&mut dyn FnMut(&kalah::Progress)) -> T,
) -> Result<(T, Duration, u64), CliError> {
    let nodes_before = solver.nodes();
    // Ctrl-C or SIGTERM from here on is answered by the ticker below: a line that says what
    // was searched (and the table saved, with --table-file), exit code 130.
    kalah::catch_interrupt();
    let indicator = Indicator::spinner("solving", "nodes");
    let started = Instant::now();
    let stores = p.store_difference();
    let done = std::sync::atomic::AtomicBool::new(false);
    let (result, elapsed) = std::thread::scope(|scope| -> Result<_, CliError> {
        let ticker = super::threads::spawn_scoped(scope, "progress", || {
            let mut saved = Instant::now();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                indicator.set_done(solver.nodes() - nodes_before);
                if kalah::interrupted() {
                    indicator.suspend(|| {
                        let searched = solver.nodes() - nodes_before;
                        if table.table_file.is_none() {
                            eprintln!(
                                "interrupted after {searched} nodes in {:.1} s: no value (--table-file FILE keeps what a search found for the next run)",
                                started.elapsed().as_secs_f64()
                            );
                        } else {
                            eprintln!("interrupted after {searched} nodes: saving the table first");
                        }
                        if let Some(line) = table.save(solver) {
                            match table.check_saved() {
                                Ok(()) => eprintln!("{line}; the same command resumes from it"),
                                Err(_) => eprintln!("{line}"),
                            }
                        }
                        std::process::exit(130);
                    });
                }
                // Said even when stderr is a log, not a terminal.
                if let Some(line) = table.save_if_due(solver, &mut saved) {
                    indicator.println(line);
                }
                // Woken at once when the solve ends.
                std::thread::park_timeout(Duration::from_millis(200));
            }
        })?;
        // A depth-limited step only estimates the value (the game goes on past its horizon);
        // the exact search's bounds are proven. The two are never written alike.
        let mut on_step = |s: &kalah::Progress| {
            let (lower, upper) = (stores + s.lower, stores + s.upper);
            let range = if lower == upper {
                format!("{lower:+}")
            } else {
                format!("in [{lower:+}, {upper:+}]")
            };
            // With --all-moves the steps after the value's are each move's, for the side to
            // move here: never to be read as the position's own value.
            let (of, whose) = match s.mv {
                Some(mv) => (format!("move {mv}: "), "of that move for the side to move"),
                None => (String::new(), "for the side to move"),
            };
            let what = match s.depth {
                Some(d) => format!("{of}depth {d}: estimate {range} (not proven)"),
                None => format!("{of}exact search: proven value {range}"),
            };
            indicator.set_message(what.clone());
            indicator.note(format!(
                "  {what} {whose}, {} nodes, {:.1} s",
                s.nodes,
                s.elapsed.as_secs_f64()
            ));
        };
        let result = work(&mut on_step);
        let elapsed = started.elapsed();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        ticker.thread().unpark();
        let _ = ticker.join();
        Ok((result, elapsed))
    })?;
    indicator.finish();
    if let Some(line) = table.save(solver) {
        // A failed last save is the command's error (check_saved), said once, not here too.
        if table.check_saved().is_ok() {
            eprintln!("{line}");
        }
    }
    Ok((result, elapsed, solver.nodes() - nodes_before))
}
