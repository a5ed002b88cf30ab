//! `kalah solve` and `kalah analyze`: the exact value of a game's start or of a position, with
//! its best moves and a perfect line.

use std::time::Instant;

use clap::Args;
use kalah::{AnyPosition, Lanes, Position, Rules, Variant, with_position};
use serde_json::json;

use super::CliError;
use super::answer::{
    Answer, Source, add_ledger_fields, add_search_fields, add_variant_fields, algorithm_text,
    ledger_line, print_analysis, table_text,
};
use super::args::{PositionArg, RulesArg, header, print_json, rules_parser};
use super::at_least::AtLeastArg;
use super::books::{BookArg, Ledgered, answer_unsearched, from_book, say_bounds};
use super::search::{EstimateArg, SearchArgs};
use super::search_progress::{solve_with_progress, with_progress};
use super::table_file::TableFileArgs;

/// Solve Kalah(M,N) from the start: the first player's exact margin, every optimal first move
/// and a perfect game (the value of each first move too with --all-moves).
///
/// The value is the final store difference, South (who moves first) minus North, when both
/// play perfectly: positive means South wins.
#[derive(Args, Debug)]
pub struct SolveArgs {
    /// Houses a side, M (1 to 12; exact solving is practical up to about 6).
    #[arg(long, short = 'm', value_parser = super::args::count::<usize>(super::args::HOUSES))]
    houses: usize,
    /// Seeds a house at the start, N (1 to 32767, and 2·M·N at most 65535).
    #[arg(long, short = 'n', value_parser = super::args::count::<u64>(super::args::SEEDS))]
    seeds: u64,
    /// Capture rule: `standard` or `empty-capture`.
    #[arg(long, default_value = "standard", value_parser = rules_parser())]
    rules: Rules,
    /// Also compute the exact value of every first move, not only which are optimal (each bad
    /// move needs its own proof: several times the work of the solve).
    #[arg(long, conflicts_with_all = ["value_only", "at_least"])]
    all_moves: bool,
    /// Only the value: no optimal moves, no perfect line (`best`, `moves` and `pv` are empty).
    #[arg(long, conflicts_with = "at_least")]
    value_only: bool,
    #[command(flatten)]
    at_least: AtLeastArg,
    #[command(flatten)]
    search: SearchArgs,
    #[command(flatten)]
    estimate: EstimateArg,
    #[command(flatten)]
    table: TableFileArgs,
}

/// The exact value of a position and of every legal move.
///
/// Values are final store differences for the side to move, stores included; a move's value
/// is that of the same side after playing it and continuing perfectly.
#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    position: PositionArg,
    #[command(flatten)]
    rules: RulesArg,
    #[command(flatten)]
    search: SearchArgs,
    /// Only the value: no move values, no perfect line (`best`, `moves` and `pv` are empty).
    /// A board the opening books prove is still answered from them in full.
    #[arg(long, conflicts_with = "at_least")]
    value_only: bool,
    #[command(flatten)]
    at_least: AtLeastArg,
    #[command(flatten)]
    book: BookArg,
    #[command(flatten)]
    estimate: EstimateArg,
    #[command(flatten)]
    table: TableFileArgs,
}

pub fn run_solve(args: SolveArgs) -> Result<(), CliError> {
    let variant = Variant::new(args.houses, args.seeds, args.rules)
        .map_err(|e| CliError::input(format!("invalid variant: {e}")))?;
    let pos = AnyPosition::start(variant);
    if args.estimate.estimate {
        let files = args.search.files(args.houses, args.rules)?;
        let every = args.all_moves;
        with_position!(pos, p => args.search.print_estimate(&p, Some(variant), every, files.as_deref()));
        return Ok(());
    }
    if let Some(v) = args.at_least.at_least {
        let (search, table) = (&args.search, &args.table);
        with_position!(pos, p => super::at_least::report(&p, Some(variant), v, None, search, table))?;
    } else if args.value_only {
        with_position!(pos, p => report_value(&p, Some(variant), None, &args.search, &args.table))?;
    } else {
        let all = args.all_moves;
        with_position!(pos, p => report(&p, Some(variant), all, None, &args.search, &args.table))?;
    }
    args.table.check_saved()
}

pub fn run_analyze(args: AnalyzeArgs) -> Result<(), CliError> {
    let pos = args.position.parse(args.rules.rules)?;
    if args.estimate.estimate {
        with_position!(pos, p => {
            let files = args.search.files(p.houses_per_side(), p.rules())?;
            args.search.print_estimate(&p, None, !args.value_only, files.as_deref());
        });
        return Ok(());
    }
    if let Some(v) = args.at_least.at_least {
        let (book, search, table) = (Some(&args.book), &args.search, &args.table);
        with_position!(pos, p => super::at_least::report(&p, None, v, book, search, table))?;
    } else if args.value_only {
        let book = Some(&args.book);
        with_position!(pos, p => report_value(&p, None, book, &args.search, &args.table))?;
    } else {
        with_position!(pos, p => report(&p, None, true, Some(&args.book), &args.search, &args.table))?;
    }
    args.table.check_saved()
}

/// Answers `p` (the start of `variant` if given) by a search, or at once from the opening
/// books of `book` if given and they prove it (`analyze`).
fn report<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    all_moves: bool,
    book: Option<&BookArg>,
    args: &SearchArgs,
    table: &TableFileArgs,
) -> Result<(), CliError> {
    let started = Instant::now();
    // Opened once: for the books' answer, then for the search.
    let files = args.files(p.houses_per_side(), p.rules())?;
    let mut ledgered: Ledgered = Default::default();
    if let Some(book) = book {
        let book = book.open(&args.db, Some(kalah::book::game_of(p)))?;
        match from_book(p, &book, files.as_deref(), started, args.json, args.json)? {
            Some(b) => ledgered = b,
            None => return Ok(()),
        }
        // As `query`: past the hour, what the ledgers prove is the answer.
        let refusal = || args.refusal(p, all_moves, files.as_deref());
        if let Some(answered) = answer_unsearched(
            p,
            variant,
            &book,
            ledgered.bounds,
            refusal,
            started,
            args.json,
        ) {
            return answered;
        }
        if !args.json {
            say_bounds(p, ledgered.bounds);
        }
    }
    let (solver, config, db) = args.solver_given(p, all_moves, table, files)?;
    let (a, elapsed, nodes) = solve_with_progress(p, all_moves, &solver, table)?;
    let answer = Answer {
        analysis: &a,
        elapsed,
        nodes,
        source: Source::Search(&config, &db, args.tt_mb.is_some()),
        bounds: ledgered.bounds,
        claims: ledgered.claims,
    };
    print_analysis(p, variant, all_moves, &answer, args.json);
    Ok(())
}

/// `solve --value-only` and `analyze --value-only`: the value alone (of the start of
/// `variant`, if given), unless the opening books of `book` prove it (then their answer).
fn report_value<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    book: Option<&BookArg>,
    args: &SearchArgs,
    table: &TableFileArgs,
) -> Result<(), CliError> {
    let started = Instant::now();
    let files = args.files(p.houses_per_side(), p.rules())?;
    if let Some(book) = book {
        let book = book.open(&args.db, Some(kalah::book::game_of(p)))?;
        let Some(ledgered) = from_book(p, &book, files.as_deref(), started, args.json, args.json)?
        else {
            return Ok(());
        };
        // The value alone is asked: a value the ledgers prove is the answer.
        if let Some(b) = ledgered.bounds.filter(|b| b.is_exact()) {
            print_value(p, variant, b.lower, args.json, |out, text| {
                let elapsed = started.elapsed();
                add_ledger_fields(out, book.sources(), elapsed);
                *text = ledger_line(book.sources(), elapsed);
            });
            return Ok(());
        }
        if !args.json {
            say_bounds(p, ledgered.bounds);
        }
    }
    let (solver, config, db) = args.solver_given(p, false, table, files)?;
    let (f, elapsed, nodes) = with_progress(p, &solver, table, |on_step| {
        solver.exact(p.board(), on_step)
    })?;
    let f = f.map_err(|e| CliError::failure(format!("cannot solve: {e}")))?;
    let value = p.store_difference() + f;
    print_value(p, variant, value, args.json, |out, text| {
        add_search_fields(out, nodes, elapsed, &config, &db, args.tt_mb.is_some());
        *text = format!(
            "{nodes} nodes in {:.3} s, {} threads, {}, {}\n{}",
            elapsed.as_secs_f64(),
            config.threads,
            table_text(&config, args.tt_mb.is_some()),
            algorithm_text(&config),
            db.line()
        );
    });
    Ok(())
}

/// Prints the value alone of `p` (the start of `variant` if given), as JSON or for people;
/// `source` adds where it came from: the JSON's fields, and the text's last lines.
fn print_value<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    value: i32,
    json: bool,
    source: impl FnOnce(&mut serde_json::Value, &mut String),
) {
    let mut out = header(p);
    let mut text = String::new();
    source(&mut out, &mut text);
    if json {
        add_variant_fields(&mut out, variant);
        out["value"] = json!(value);
        out["best"] = json!([]);
        out["moves"] = json!([]);
        out["pv"] = json!([]);
        print_json(&out);
    } else {
        match variant {
            Some(v) => println!(
                "Kalah({},{}), {} rules: value {value:+} for South, the first player",
                v.houses(),
                v.seeds(),
                p.rules()
            ),
            None => println!(
                "{p} ({} houses a side), {} rules: value {value:+} for {}, the side to move",
                p.houses_per_side(),
                p.rules(),
                p.to_move().map_or("nobody".into(), |s| s.to_string())
            ),
        }
        println!("{text}");
    }
}
