//! `kalah query`: positions answered from the databases or the books at once, searched
//! otherwise; one, or a batch of them from stdin.

use std::sync::Arc;

use clap::Args;
use kalah::answer::{Answer, Source, Sources, Want, look_up};
use kalah::book::Book;
use kalah::db::Tablebase;
use kalah::{Lanes, Position, with_position};
use serde_json::json;

use super::CliError;
use super::answer::{Shown, not_searched, print_answer};
use super::args::{PositionArg, RulesArg, parse_position, print_json};
use super::books::BookArg;
use super::search::{CliSearch, Made, SearchArgs, answer_error, ask, refused};
use super::table_file::TableFileArgs;

/// The exact value of a position and of every legal move, read from the endgame database when
/// the position has few enough seeds on the board (at once), or from an opening book when one
/// proves it (at once; see --no-book), searched otherwise (probing the database inside the
/// search).
///
/// Same output as `analyze`, plus "source": "database", "ledger" or "search".
///
/// POSITION `-` reads positions from stdin, one a line (blank lines and `#` comments skipped),
/// and answers each in turn, one JSON object a line with --json: the databases are opened once
/// and the search's table stays warm, for thousands of positions in one run. A line that
/// cannot be answered gets `{"line": N, "error": "..."}` (or a message on stderr) and the
/// batch goes on; the exit code is then 2. Two things end the batch instead, after the lines
/// answered so far (exit code 1): a line with no line break within 64 MiB (the input is not
/// lines of text), and a failure of the databases or of the machine, such as a damaged block
/// of a level (no later line could be trusted to it: repair the level, see `kalah db verify`). One batch, one board size: the first position sets
/// the houses (and, with --memory-db, the levels built); the table is at least 512 MiB.
#[derive(Args, Debug)]
pub struct QueryArgs {
    #[command(flatten)]
    position: PositionArg,
    #[command(flatten)]
    rules: RulesArg,
    #[command(flatten)]
    search: SearchArgs,
    #[command(flatten)]
    book: BookArg,
}

pub fn run(args: QueryArgs) -> Result<(), CliError> {
    if args.position.position == "-" {
        return query_batch(&args);
    }
    let pos = args.position.parse(args.rules.rules)?;
    with_position!(pos, p => query_in_batch(&p, &args, &mut None, false))
}

/// What `kalah query -` keeps from one position to the next: set up for the first position
/// (its houses, and with --memory-db its seeds), one solver whose table stays warm.
struct Batch {
    houses: usize,
    /// The database files read (none with --memory-db).
    files: Option<Arc<Tablebase>>,
    /// The solver, made for the first position searched (levels built in memory only then:
    /// positions answered at once never wait for them).
    made: Option<Made>,
    /// The opening books of the batch's board size and rules, read when the first position
    /// the levels do not hold needs them (a board the levels hold never waits for them).
    book: Option<Book>,
}

/// `kalah query -`: the positions on stdin, one a line (blank lines and lines starting with
/// `#` skipped), each answered as `query` answers one. A line that cannot be answered gets an
/// error (on stdout as `{"line": N, "error": ...}` with --json, else on stderr) and the next
/// lines go on; the exit code is then 2.
fn query_batch(args: &QueryArgs) -> Result<(), CliError> {
    use kalah::text::{MAX_LINE, read_line};
    let json = args.search.json;
    let mut batch: Option<Batch> = None;
    let mut failed = 0;
    let mut input = std::io::stdin().lock();
    // Lines are read in bounded memory: an over-long or non-UTF-8 line is one error.
    for i in 0u64.. {
        // Ctrl-C between two answers (a search's own handling may have left it noted but
        // unanswered) or while waiting for the next line: every line before is answered.
        const BETWEEN: &str = "kalah: interrupted between two lines: every line before is \
                               answered, none after is read\n";
        kalah::exit_on_interrupt(BETWEEN);
        if kalah::interrupted() {
            return Err(CliError {
                message: BETWEEN.trim_start_matches("kalah: ").trim_end().to_owned(),
                code: 130,
            });
        }
        let line = read_line(&mut input, MAX_LINE).map_err(|e| {
            let message = format!("line {}: cannot read the input: {e}", i + 1);
            match e.kind() {
                std::io::ErrorKind::InvalidData => CliError::input(message),
                _ => CliError::failure(message),
            }
        })?;
        let Some(line) = line else { break };
        let answered = line
            .into_text(MAX_LINE)
            .map_err(CliError::input)
            .and_then(|line| {
                let text = line.trim();
                if text.is_empty() || text.starts_with('#') {
                    return Ok(());
                }
                let pos = parse_position(text, args.position.to_move, args.rules.rules)?;
                with_position!(pos, p => query_in_batch(&p, args, &mut batch, true))
            });
        if let Err(e) = answered {
            failed += 1;
            if json {
                print_json(&json!({"line": i + 1, "error": e.message}));
            } else {
                eprintln!("kalah: line {}: {}", i + 1, e.message);
            }
            // A failure of the machine, not of the line, ends the batch.
            if e.code != 2 {
                return Err(e);
            }
        }
    }
    match failed {
        0 => Ok(()),
        n => Err(CliError::input(format!(
            "{n} line{} of the input could not be answered",
            if n == 1 { "" } else { "s" }
        ))),
    }
}

/// One position of a batch (or a batch of one: `kalah query POSITION`), answered by
/// [`kalah::answer`]: from the database files at once if they hold it, else from the books,
/// else searched (probing the files; levels built in memory with --memory-db serve the search
/// only). `many`: more positions may follow, so the table is not sized for this one alone (at
/// least [`kalah::search::DEFAULT_TT_MIB`] unless --tt-mb).
fn query_in_batch<L: Lanes>(
    p: &Position<L>,
    query: &QueryArgs,
    batch: &mut Option<Batch>,
    many: bool,
) -> Result<(), CliError> {
    let args = &query.search;
    let houses = p.houses_per_side();
    if batch.is_none() {
        let files = args.files(houses, p.rules())?;
        *batch = Some(Batch {
            houses,
            files,
            made: None,
            book: None,
        });
    }
    let batch = batch.as_mut().expect("just set up");
    if houses != batch.houses {
        return Err(CliError::input(format!(
            "{houses} houses a side, but the batch's first position has {}: one batch, one \
             board size",
            batch.houses
        )));
    }
    let want = Want::EveryMove;
    let levels = batch.files.as_deref();
    // The levels first, before the books are read: a board they hold never waits for them.
    let held = look_up(
        p,
        &Sources {
            levels,
            ledgers: None,
        },
        want,
    )
    .map_err(answer_error)?;
    if matches!(held.source, Source::Levels | Source::End) {
        let shown = Shown {
            levels,
            books: &[],
            search: None,
            not_searched: None,
        };
        print_answer(p, None, want, &held, &shown, args.json);
        return Ok(());
    }
    let game = kalah::book::game_of(p);
    if batch.book.is_none() {
        batch.book = Some(query.book.open(&args.db, Some(game))?);
    }
    let book = batch.book.as_mut().expect("just read");
    if !query.book.no_book {
        book.add_shipped(Some(game))
            .map_err(|e| CliError::failure(format!("cannot read the opening books: {e}")))?;
    }
    let book = &*book;
    // A query keeps no table file.
    let no_file = TableFileArgs::default();
    let mut search = CliSearch {
        p,
        args,
        table: &no_file,
        files: batch.files.clone(),
        made: &mut batch.made,
        // In a batch the bounds go in the JSON only: a line on stderr a position would bury
        // the errors there.
        quiet: args.json || many,
        many,
    };
    let sources = Sources {
        levels,
        ledgers: Some(book),
    };
    let answer = ask(p, &sources, want, &mut search)?;
    show(p, None, want, &answer, &sources, batch.made.as_ref(), args)
}

/// Prints `answer` (about `p`, the start of `variant` if given) unless nothing at all is known
/// and nothing was searched; then the command's error if a search it needed was refused.
pub fn show<L: Lanes>(
    p: &Position<L>,
    variant: Option<kalah::Variant>,
    want: Want,
    answer: &Answer,
    sources: &Sources<'_>,
    made: Option<&Made>,
    args: &SearchArgs,
) -> Result<(), CliError> {
    let nothing = answer.source == Source::Seeds && answer.not_done.is_some();
    if !nothing {
        let shown = Shown {
            levels: sources.levels,
            books: sources.ledgers.map_or(&[], |b| b.sources()),
            search: made.map(|m| (&m.config, &m.db, args.tt_mb.is_some())),
            not_searched: not_searched(p, answer),
        };
        print_answer(p, variant, want, answer, &shown, args.json);
    }
    refused(p, answer)
}
