//! `kalah solve` and `kalah analyze`: the exact value of a game's start or of a position, with
//! its best moves and a perfect line.

use clap::Args;
use kalah::answer::{Sources, Want};
use kalah::{AnyPosition, Lanes, Position, Rules, Variant, with_position};

use super::CliError;
use super::answer::Shown;
use super::args::{PositionArg, RulesArg, rules_parser};
use super::at_least::AtLeastArg;
use super::books::BookArg;
use super::query::show;
use super::search::{CliSearch, EstimateArg, SearchArgs, ask, refused};
use super::table_file::TableFileArgs;

/// Solve Kalah(M,N) from the start: the first player's exact margin, every optimal first move
/// and a perfect game (the value of each first move too with --all-moves).
///
/// The value is the final store difference, South (who moves first) minus North, when both
/// play perfectly: positive means South wins. A start the shipped ledgers prove (Kalah(6,4),
/// Kalah(6,5), Kalah(6,6) standard) is answered from them at once, each bound said certified
/// or not; see --no-book.
#[derive(Args, Debug)]
pub struct SolveArgs {
    /// Houses a side, M (1 to 12). How long a solve takes depends on the seeds on the board
    /// more than on the houses: --estimate says it first (docs/values.md has the values
    /// known, up to 12 houses).
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
    book: BookArg,
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
        let files = args.search.estimate_files(args.houses, args.rules)?;
        let every = args.all_moves;
        with_position!(pos, p => args.search.print_estimate(&p, Some(variant), every, files.as_deref()));
        return Ok(());
    }
    let want = match (args.at_least.at_least, args.value_only, args.all_moves) {
        (Some(v), _, _) => Want::AtLeast(v),
        (None, true, _) => Want::Value,
        (None, false, true) => Want::EveryMove,
        (None, false, false) => Want::BestMoves,
    };
    let (book, search, table) = (&args.book, &args.search, &args.table);
    with_position!(pos, p => report(&p, Some(variant), want, book, search, table))?;
    args.table.check_saved()
}

pub fn run_analyze(args: AnalyzeArgs) -> Result<(), CliError> {
    let pos = args.position.parse(args.rules.rules)?;
    if args.estimate.estimate {
        with_position!(pos, p => {
            let files = args.search.estimate_files(p.houses_per_side(), p.rules())?;
            args.search.print_estimate(&p, None, !args.value_only, files.as_deref());
        });
        return Ok(());
    }
    let want = match (args.at_least.at_least, args.value_only) {
        (Some(v), _) => Want::AtLeast(v),
        (None, true) => Want::Value,
        (None, false) => Want::EveryMove,
    };
    let (book, search, table) = (&args.book, &args.search, &args.table);
    with_position!(pos, p => report(&p, None, want, book, search, table))?;
    args.table.check_saved()
}

/// Answers `want` of `p` (the start of `variant` if given) from the levels, the opening books
/// (unless --no-book) and a search ([`kalah::answer`]), and prints it.
fn report<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    want: Want,
    book: &BookArg,
    args: &SearchArgs,
    table: &TableFileArgs,
) -> Result<(), CliError> {
    if matches!(want, Want::AtLeast(_)) && args.algorithm != kalah::Algorithm::Mtdf {
        return Err(CliError::input(
            "--at-least: only --algorithm mtdf makes a null-window test",
        ));
    }
    let files = args.files(p.houses_per_side(), p.rules())?;
    let book = book.open(&args.db, Some(kalah::book::game_of(p)))?;
    let sources = Sources {
        levels: files.as_deref(),
        ledgers: Some(&book),
    };
    let mut made = None;
    let mut search = CliSearch {
        p,
        args,
        table,
        files: files.clone(),
        made: &mut made,
        quiet: args.json,
        many: false,
    };
    let answer = ask(p, &sources, want, &mut search)?;
    let Want::AtLeast(v) = want else {
        return show(p, variant, want, &answer, &sources, made.as_ref(), args);
    };
    if answer.answers(want) {
        let shown = Shown {
            levels: sources.levels,
            books: book.sources(),
            search: made
                .as_ref()
                .map(|m| (&m.config, &m.db, args.tt_mb.is_some())),
            not_searched: None,
        };
        super::at_least::print(p, variant, v, &answer, &shown, args.json);
    }
    refused(p, &answer)
}
