//! `kalah prove --book DEPTH`: the opening book of a root, each board not yet exact in the
//! ledgers solved and appended.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use kalah::prove::ledger::Ledger;
use serde_json::json;

use super::super::CliError;
use super::super::args::print_json;
use super::super::human::human_count;
use super::{ProveArgs, campaign_solver, given_root, ledger_error};

/// `kalah prove --book DEPTH`: the book of the root to DEPTH, each board not yet exact in the
/// ledgers solved and appended ([`kalah::book::make`]), with a progress bar.
pub fn run(args: &ProveArgs, depth: u32) -> Result<(), CliError> {
    use kalah::book::{self, BookError};
    use kalah::prove::ledger::LedgerWriter;
    let own = args.ledger.as_ref().expect("clap requires --ledger");
    let root = match given_root(args)? {
        Some(kalah::AnyPosition::Narrow(root)) => root,
        Some(kalah::AnyPosition::Wide(root)) => {
            return Err(CliError::input(format!(
                "--book takes boards of at most 8 houses a side, not {}",
                root.houses_per_side()
            )));
        }
        None => {
            return Err(CliError::input(
                "give the root: a position, or the start with -m M -n N",
            ));
        }
    };
    if args.list {
        let top = match args.book_levels {
            Some(k) => Some(k),
            None => args
                .db
                .open(root.houses_per_side(), root.rules())?
                .map(|db| db.max_level()),
        };
        for (p, d) in boards_of(&root, depth, top)? {
            if args.json {
                print_json(&json!({"position": p.to_string(), "depth": d}));
            } else {
                println!("{p} {d}");
            }
        }
        return Ok(());
    }
    let (solver, db) = campaign_solver(args, &root)?;
    let mut writer = LedgerWriter::open(own).map_err(ledger_error)?;
    let mut ledger = Ledger::new();
    for path in std::iter::once(own).chain(&args.read) {
        ledger.add_file(path).map_err(ledger_error)?;
    }
    let levels = match &db {
        Some(db) => super::super::db_choice::files_line(db),
        None => args.db.none_found(root.houses_per_side(), root.rules()),
    };
    let top = args.book_levels.or(db.as_ref().map(|db| db.max_level()));
    let boards = boards_of(&root, depth, top)?;
    let total = boards.len();
    if !args.json {
        eprintln!(
            "book of {root} ({} houses, {} rules) to {depth} sowings: {total} boards; ledger {}; \
             {levels}",
            root.houses_per_side(),
            root.rules(),
            own.display(),
        );
    }
    kalah::catch_interrupt();
    let indicator = super::super::progress::Indicator::bar("book", total as u64, "boards");
    let done = AtomicBool::new(false);
    let started = Instant::now();
    let made = std::thread::scope(|scope| -> Result<_, CliError> {
        let cancel = &solver;
        super::super::cancel_on_interrupt(scope, &done, move || cancel.cancel())?;
        let made = book::make(
            &root,
            &boards,
            &solver,
            db.as_deref(),
            &mut ledger,
            &mut writer,
            &mut |p| indicator.set_done(p.done as u64),
        );
        done.store(true, Ordering::Relaxed);
        Ok(made)
    })?;
    indicator.finish();
    let made = match made {
        Ok(made) => made,
        Err(BookError::Solve(kalah::SolveError::Cancelled)) => {
            eprintln!(
                "interrupted: the board in flight is dropped, every one before it is in {}; the \
                 same command resumes",
                own.display()
            );
            return Err(CliError {
                message: "interrupted".into(),
                code: 130,
            });
        }
        Err(BookError::Ledger(e)) => return Err(ledger_error(e)),
        Err(e) => return Err(CliError::failure(format!("cannot write the book: {e}"))),
    };
    let elapsed = started.elapsed().as_secs_f64();
    if args.json {
        print_json(&json!({
            "ledger": own.display().to_string(),
            "position": root.to_string(),
            "houses": root.houses_per_side(),
            "rules": root.rules().as_str(),
            "depth": depth,
            "boards": made.boards,
            "known": made.known,
            "solved": made.solved,
            "derived": made.derived,
            "nodes": made.nodes,
            "time_ms": (elapsed * 1000.0) as u64,
        }));
    } else {
        println!(
            "book of {root} ({} houses, {} rules) to {depth} sowings in {}: {} boards, {} known \
             before, {} added now ({} searched, {} from their moves' values; {} nodes, \
             {elapsed:.1} s)",
            root.houses_per_side(),
            root.rules(),
            own.display(),
            made.boards,
            made.known,
            made.solved,
            made.solved - made.derived,
            made.derived,
            human_count(made.nodes),
        );
    }
    Ok(())
}

/// The boards of the book of `root` to `depth` within the memory this process may use
/// ([`kalah::memory_budget`], [`kalah::book::positions_within`]): refused at once when the
/// estimate is past it, and, should the estimate err small, when the count itself reaches it,
/// before the machine runs out.
fn boards_of(
    root: &kalah::Position<kalah::Narrow>,
    depth: u32,
    top: Option<u32>,
) -> Result<Vec<(kalah::Position<kalah::Narrow>, u32)>, CliError> {
    use kalah::book::Refused;
    let budget = kalah::memory_budget().unwrap_or(u64::MAX);
    let limit = format!(
        "past the {} MB it may use (half the memory, or of ulimit -v): take a smaller DEPTH",
        budget >> 20
    );
    kalah::book::positions_within(root, depth, top, budget).map_err(|refused| {
        CliError::input(match refused {
            Refused::Estimated(guess) => format!(
                "a book of depth {depth} is too large for this machine: about {} boards and {} \
                 MB (counted to depth {}: {} boards, then each ply up to {:.1} times more), \
                 {limit}",
                human_count(guess.boards),
                guess.bytes >> 20,
                guess.counted_to,
                human_count(guess.counted),
                guess.growth,
            ),
            Refused::Counted(t) => format!(
                "a book of depth {depth} is too large for this machine: by depth {} it already \
                 holds {} boards and {} MB, {}",
                t.depth,
                human_count(t.boards as u64),
                t.bytes >> 20,
                if t.refused {
                    "when the system refused it more memory (ulimit -v?): take a smaller DEPTH"
                } else {
                    &limit
                },
            ),
        })
    })
}
