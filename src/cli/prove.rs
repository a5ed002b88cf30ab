//! `kalah prove`: a proof campaign kept in a ledger, its status, its check and its merge; each
//! mode in a file of its own under `prove/`, what they share here.

mod book;
mod campaign;
mod certify;
mod check;
mod merge;
mod status;

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use kalah::prove::ledger::Ledger;
use kalah::prove::{ProveError, Share};
use kalah::search::table_file::TableOrigin;
use kalah::{AnyPosition, Lanes, Position, Rules, Side, Solver, SolverConfig, Variant};

use super::CliError;
use super::args::{parse_position, rules_parser, side_parser};
use super::db_choice::DbChoice;
use super::table_file::TableFileArgs;

/// Prove the exact value of a position by a campaign that no stopped machine can set back.
///
/// The root (POSITION, or the start of Kalah(M,N)) is split into positions below it, depth
/// first in the search's own move order; each open leaf gets one null-window test of the value the root
/// needs, within --budget nodes, and a leaf over its budget is split into its moves instead of
/// being tried again. Every answer is a fact (bounds on one position's value, its nodes and
/// CPU time, the levels used), appended to the ledger --ledger FILE (JSON lines) and synced
/// before the next test. Killed at any moment, a campaign loses at most its test in flight: the
/// same command resumes from the ledger, here or on another machine. A test over its budget
/// keeps the subtrees it finished as facts of their own.
///
/// Certificates: --certify LEDGER finds the fewest facts the root's bounds (and each first
/// move's) rest on and proves each again by another path (--by), recording each check in a
/// checks file beside the ledger (k66.jsonl -> k66.checks.jsonl); --status says of each bound
/// whether it is certified, and by what. Each check is marked with this installation's secret
/// key ($KALAH_KEY, else kalah.key in the XDG data home, ~/.local/share/kalah.key; made at the
/// first check, mode 0600): only checks it marked (and those shipped with kalah) count; checks
/// made elsewhere or forged are claims, proven again here by --certify and --check --all.
///
/// Many workers: give each its own ledger and --worker I/N (a disjoint share of the open
/// leaves), and let each read the others' with --read; merge the ledgers afterwards (--merge,
/// or plain concatenation). Values are final store differences for the side to move, stores
/// included.
///
/// Examples:
///   kalah prove -m 6 -n 5 --ledger k65.jsonl          # a campaign, to the end
///   kalah prove -m 6 -n 6 --ledger k66.jsonl --hours 2 # two hours of it, then stop
///   kalah prove --status k66.jsonl                      # where it stands
///   kalah prove --check k66.jsonl --sample 20           # 20 facts proven again, another way
///   kalah prove --check book.jsonl --all --by no-db     # every fact, recorded: then it answers
///   kalah prove --certify k66.jsonl                     # the facts under the bounds, checked
///   kalah prove --merge a.jsonl b.jsonl --ledger all.jsonl
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct ProveArgs {
    /// The root: a KGP board literal (South to move unless `north` follows) [default: the start
    /// of --houses and --seeds]. With --status, the root named by most facts.
    #[arg(value_name = "POSITION", conflicts_with_all = ["houses", "seeds", "merge"])]
    position: Option<String>,

    /// Side to move in POSITION (default South).
    #[arg(long, value_name = "SIDE", value_parser = side_parser(), requires = "position")]
    to_move: Option<Side>,

    /// Houses a side of the start to prove, M (1 to 12; the endgame levels stop at 8).
    #[arg(long, short = 'm', value_parser = clap::value_parser!(u64).range(1..=12), requires = "seeds")]
    houses: Option<u64>,

    /// Seeds a house at the start, N (2·M·N at most 255).
    #[arg(long, short = 'n', value_parser = clap::value_parser!(u64).range(1..=127), requires = "houses")]
    seeds: Option<u64>,

    /// Capture rule: `standard` or `empty-capture`.
    #[arg(long, default_value = "standard", value_parser = rules_parser())]
    rules: Rules,

    /// The ledger this worker appends its facts to (made if missing). With --merge, the ledger
    /// the others are merged into.
    #[arg(long, value_name = "FILE", required_unless_present_any = ["status", "check", "certify"])]
    ledger: Option<PathBuf>,

    /// Other ledgers to read too (other workers'), again before each test; up to 1024.
    #[arg(long, value_name = "FILE", num_args = 1.., action = clap::ArgAction::Append)]
    read: Vec<PathBuf>,

    /// Search nodes a test may take before its leaf is split into its moves instead (1000 to
    /// 10^15). Larger budgets split less and waste more on a leaf that is then split.
    #[arg(long, value_name = "NODES", default_value_t = 100_000_000, value_parser = clap::value_parser!(u64).range(1000..=1_000_000_000_000_000))]
    budget: u64,

    /// This worker's share of the open leaves, I of N (0 <= I < N <= 4096): workers with the
    /// same N and different I never test the same leaf.
    #[arg(long, value_name = "I/N", value_parser = parse_share, default_value = "0/1")]
    worker: Share,

    /// After the root's value, decide which first moves are best (each that may be is tested
    /// against the value), then prove the exact value of every first move too.
    #[arg(long)]
    all_moves: bool,

    /// The first guess of the root's value (stores included) [default: a shallow search's].
    /// Only the order of the tests depends on it.
    #[arg(long, value_name = "VALUE", allow_hyphen_values = true, value_parser = clap::value_parser!(i32).range(-255..=255))]
    guess: Option<i32>,

    /// Stop after this many tests (1 to 10^9) [default: when the value is proven].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    jobs: Option<u64>,

    /// Start no test after this many hours (0.001 to 10000); the test in flight finishes.
    #[arg(long, value_name = "HOURS", value_parser = super::args::hours(0.001, 10_000.0))]
    hours: Option<Duration>,

    /// Worker threads, 1 to 64 (4 a core above 16 cores) [default: all cores].
    #[arg(long, value_name = "T", value_parser = super::args::threads())]
    threads: Option<usize>,

    /// Transposition table size in MiB [default: as `solve` sizes it for the root]. The table
    /// stays warm from one test to the next.
    #[arg(long = "tt-mb", value_name = "MIB", value_parser = super::args::mib())]
    tt_mb: Option<usize>,

    #[command(flatten)]
    db: DbChoice,

    // A campaign's table kept in a file: a campaign stopped mid-test resumes that test where
    // the last save left it, and what the tests before it searched stays known.
    #[command(flatten)]
    table: TableFileArgs,

    /// Where the campaign of LEDGER stands: the root's bounds, each first move's, the facts,
    /// the CPU spent, the open leaves. Reads --read too; writes nothing.
    #[arg(long, value_name = "LEDGER", conflicts_with_all = ["check", "certify", "merge", "ledger"])]
    status: Option<PathBuf>,

    /// With --status: list instead the first N open leaves of the campaign's next test (1 to
    /// 10000), in the order a campaign takes them, each with what its test asks ("value >= T",
    /// stores included, for the leaf's side to move: `kalah analyze LEAF --at-least T` asks the
    /// same, given the campaign's --rules). The root's test is against --guess (else its lower
    /// bound plus 2); with --all-moves, once the value is exact, the first moves' tests. A fixed
    /// sample of the work ahead, to measure what levels or a budget buy
    /// (scripts/levels-payoff.py). JSON: {"root", "rules", "leaves": [{"position", "to_move",
    /// "seeds", "at_least"}]}.
    #[arg(long, value_name = "N", requires = "status", value_parser = clap::value_parser!(u64).range(1..=10_000))]
    leaves: Option<u64>,

    /// Prove facts of LEDGER again by another path (see --by) and report any that fails: a
    /// sample (--sample N), or every one not yet proven again (--all).
    #[arg(long, value_name = "LEDGER", conflicts_with_all = ["certify", "merge", "ledger"])]
    check: Option<PathBuf>,

    /// With --check: how many facts, drawn at random (1 to 10^6).
    #[arg(long, value_name = "N", requires = "check", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    sample: Option<u64>,

    /// With --check: every fact of LEDGER that claims a value and no check by another path
    /// has proven again, each check appended to --checks (beside the ledger: X.jsonl ->
    /// X.checks.jsonl). The facts of a ledger in a database directory answer in query,
    /// analyze and serve only once checked (the others are shown as unchecked claims).
    /// Resumes from the checks; --worker I/N, --jobs and --hours share it out and stop it.
    #[arg(long, requires = "check", conflicts_with = "sample")]
    all: bool,

    /// Certify the bounds of LEDGER's root (with --read, of those ledgers together): the
    /// fewest facts the root's bounds and each first move's rest on, each proven again by
    /// another path (--by), cheapest first; each check appended to --checks. Resumes from the
    /// checks; shares out with --worker I/N and --read-checks; --jobs and --hours stop it. A
    /// fact found wrong is named (file:line) and the exit code is 1.
    #[arg(long, value_name = "LEDGER", conflicts_with_all = ["merge", "ledger", "book"])]
    certify: Option<PathBuf>,

    /// With --certify: check only the facts under the lower bounds (`lower`: the root's
    /// "value >= t" and each first move's) or only those under the upper ones (`upper`), e.g.
    /// to certify a campaign's new lower bound before the many facts of its upper one
    /// [default: both].
    #[arg(long, value_name = "SIDE", requires = "certify", value_parser = ["lower", "upper"])]
    side: Option<String>,

    /// With --certify: the checks file this worker appends to; with --status: the checks read
    /// [default: beside the ledger, X.jsonl -> X.checks.jsonl].
    #[arg(long, value_name = "FILE")]
    checks: Option<PathBuf>,

    /// With --certify or --status: other checks files to read too (other workers'); up to
    /// 1024.
    #[arg(long, value_name = "FILE", num_args = 1.., action = clap::ArgAction::Append)]
    read_checks: Vec<PathBuf>,

    /// With --check or --certify: the other path. `lower-levels`: the database's levels up to two below
    /// its top (none if it has fewer than 3); `no-db`: no database; `serial`: no database, one
    /// thread and a table of its own, for facts proven on more threads without levels (boards
    /// of more than 8 houses, which have none: the weakest path, another order of search and
    /// another table, the same rules and search code); `alphabeta`: plain alpha-beta, no table,
    /// no database (small positions only).
    #[arg(long, value_name = "PATH", default_value = "lower-levels", value_parser = ["lower-levels", "no-db", "serial", "alphabeta"])]
    by: String,

    /// With --check: the seed of the draw [default: from the clock; printed].
    #[arg(long, value_name = "SEED", requires = "check")]
    seed: Option<u64>,

    /// Merge these ledgers into --ledger: every fact not there yet, after checking them all
    /// against each other (a contradiction writes nothing). Up to 1024 files.
    #[arg(long, value_name = "FILE", num_args = 1.., requires = "ledger")]
    merge: Vec<PathBuf>,

    /// Write an opening book instead of running a campaign: every board DEPTH sowings or
    /// fewer below the root (0 to 16; extra turns count), solved exactly, each appended to
    /// --ledger as an exact fact; boards the levels hold are left out. Resumes from the
    /// ledger. `query`, `analyze` and `serve` answer at once from a book in the database home
    /// (a `*.jsonl` file there, once `kalah prove --check FILE --all` has checked it).
    #[arg(long, value_name = "DEPTH", value_parser = clap::value_parser!(u32).range(0..=16), requires = "ledger", conflicts_with_all = ["status", "check", "merge", "all_moves", "jobs", "guess"])]
    book: Option<u32>,

    /// With --book: solve nothing, print the book's boards instead, one position a line
    /// followed by its depth (`<...> 3`; with --json, `{"position":..., "depth":...}`), the
    /// deepest last: to see a book's size, or to measure the search at its frontier
    /// (scripts/book-frontier.py).
    #[arg(long, requires = "book")]
    list: bool,

    /// With --book: the levels the book's readers will have, 0..=K [default: the levels
    /// read]. Boards of K seeds or fewer are left out of the book (the readers' levels hold
    /// them), those above are booked even when the levels read hold them: a book for readers
    /// of the levels 0..24 can be solved faster with the levels 0..32.
    #[arg(long, value_name = "K", requires = "book", value_parser = super::args::max_level())]
    book_levels: Option<u32>,

    /// Print JSON: one object a test (`test`, `position`, `seeds`, the bounds proven `lower`
    /// and `upper`, `over_budget`, `nodes`, `cpu_s`, and the root's bounds so far `root`) and
    /// one at the end.
    #[arg(long)]
    json: bool,
}

/// The most ledgers read at once.
const MAX_FILES: usize = 1024;

fn parse_share(s: &str) -> Result<Share, String> {
    let bad = || "expected I/N with 0 <= I < N <= 4096, e.g. 0/2".to_owned();
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let index: u32 = i.trim().parse().map_err(|_| bad())?;
    let count: u32 = n.trim().parse().map_err(|_| bad())?;
    if count == 0 || count > 4096 || index >= count {
        return Err(bad());
    }
    Ok(Share { index, count })
}

pub fn run(args: ProveArgs) -> Result<(), CliError> {
    if (args.checks.is_some() || !args.read_checks.is_empty())
        && args.certify.is_none()
        && args.status.is_none()
        && !args.all
    {
        return Err(CliError::input(
            "--checks and --read-checks go with --certify, --check --all or --status",
        ));
    }
    // Said here, not by clap: clap lets `requires = "check"` (or "certify", "position",
    // "book") pass unchecked when the argument required conflicts with one given, such as
    // --status, --ledger or -m/-n. So every "X goes with Y" is one row of this table.
    let check = (args.check.is_some(), "--check");
    let certify = (args.certify.is_some(), "--certify");
    let book = (args.book.is_some(), "--book");
    let position = (args.position.is_some(), "POSITION");
    let status = (args.status.is_some(), "--status");
    let goes_with = [
        (args.side.is_some(), "--side", certify),
        (args.seed.is_some(), "--seed", check),
        (args.sample.is_some(), "--sample", check),
        (args.all, "--all", check),
        (args.to_move.is_some(), "--to-move", position),
        (args.list, "--list", book),
        (args.book_levels.is_some(), "--book-levels", book),
        (args.leaves.is_some(), "--leaves", status),
    ];
    let alone = goes_with.iter().find(|(given, _, (has, _))| *given && !has);
    if let Some((_, flag, (_, with))) = alone {
        return Err(CliError::input(format!("{flag} goes with {with}")));
    }
    if args.check.is_some() && args.sample.is_none() && !args.all {
        return Err(CliError::input(
            "--check LEDGER needs --sample N (facts drawn at random) or --all (every fact not yet checked, recorded beside the ledger)",
        ));
    }
    if args.by != "lower-levels" && args.check.is_none() && args.certify.is_none() {
        return Err(CliError::input("--by goes with --check or --certify"));
    }
    if args.read.len() > MAX_FILES
        || args.merge.len() > MAX_FILES
        || args.read_checks.len() > MAX_FILES
    {
        return Err(CliError::input(format!(
            "at most {MAX_FILES} ledgers at once"
        )));
    }
    if args.table.table_file.is_some()
        && (!args.merge.is_empty()
            || args.status.is_some()
            || args.check.is_some()
            || args.book.is_some())
    {
        return Err(CliError::input(
            "--table-file keeps the table of a campaign or of --certify's checks; --merge, --status, --check and --book run none",
        ));
    }
    if args.table.table_file.is_some() && args.certify.is_some() && args.by == "alphabeta" {
        return Err(CliError::input(
            "--table-file keeps the table of MTD(f) checks; --by alphabeta has none",
        ));
    }
    if !args.merge.is_empty() {
        return merge::run(&args);
    }
    if let Some(path) = &args.status {
        return status::run(&args, path);
    }
    if let Some(path) = &args.check {
        if args.all {
            return certify::check_all(&args, path);
        }
        return check::run(&args, path);
    }
    if let Some(path) = &args.certify {
        return certify::run(&args, path);
    }
    if let Some(depth) = args.book {
        return book::run(&args, depth);
    }
    campaign::run(&args)
}

/// The root given on the command line, if any.
fn given_root(args: &ProveArgs) -> Result<Option<AnyPosition>, CliError> {
    let any = match (&args.position, args.houses, args.seeds) {
        (Some(text), _, _) => parse_position(text, args.to_move, args.rules)?,
        (None, Some(m), Some(n)) => {
            let variant = Variant::new(m as usize, n, args.rules)
                .map_err(|e| CliError::input(format!("{e}")))?;
            AnyPosition::start(variant)
        }
        _ => return Ok(None),
    };
    let seeds = kalah::with_position!(&any, p => p.seeds_on_board());
    if seeds > 255 {
        return Err(CliError::input(format!(
            "kalah prove takes positions of at most 255 seeds, not {seeds}"
        )));
    }
    Ok(Some(any))
}

/// Ledgers read in the narrowest lanes that hold every board of theirs.
enum AnyLedger {
    Narrow(Ledger<kalah::Narrow>),
    Wide(Ledger<kalah::Wide>),
}

/// The ledgers named (the first one, then --read), as [`read_ledgers`] reads them, in narrow
/// lanes (the faster) when every board of theirs fits them, else in wide ones.
fn read_any_ledgers(first: &PathBuf, args: &ProveArgs) -> Result<AnyLedger, CliError> {
    let wide = read_ledgers::<kalah::Wide>(first, args)?;
    let fits = wide.facts().iter().all(|(fact, _)| {
        let p = &fact.position;
        Position::<kalah::Narrow>::from_setup(&p.to_setup(), p.rules()).is_ok()
    });
    if !fits {
        return Ok(AnyLedger::Wide(wide));
    }
    drop(wide);
    Ok(AnyLedger::Narrow(read_ledgers(first, args)?))
}

/// The root of a command on the ledger `path` (and --read): the one given, else the one most of
/// their facts name. The ledgers are read here in wide lanes, which hold a board of any size;
/// the caller reads them again in the lanes of the root.
fn ledger_root(args: &ProveArgs, path: &PathBuf) -> Result<AnyPosition, CliError> {
    if let Some(root) = given_root(args)? {
        return Ok(root);
    }
    let ledger = read_ledgers::<kalah::Wide>(path, args)?;
    status::root_named(&ledger)
}

/// The ledgers named (the first one, then --read), read and checked against each other.
fn read_ledgers<L: Lanes>(first: &PathBuf, args: &ProveArgs) -> Result<Ledger<L>, CliError> {
    let mut ledger = Ledger::new();
    for path in std::iter::once(first).chain(&args.read) {
        if let Some(what) = kalah::files::not_regular(path) {
            return Err(CliError::input(format!(
                "{}: it is {what}, not a ledger file",
                path.display()
            )));
        }
        if !path.exists() {
            return Err(CliError::input(format!(
                "{}: no such ledger",
                path.display()
            )));
        }
        ledger.add_file(path).map_err(ledger_error)?;
    }
    Ok(ledger)
}

/// A ledger or checks file that cannot be read or written: a file refused for what it is (not
/// a regular file, a symbolic link, past its bound in bytes, not a ledger, garbled) is bad
/// input (exit code 2), as every file refused on the command line; a read or a write that
/// fails is a failure (1).
fn ledger_error(e: kalah::prove::ledger::LedgerError) -> CliError {
    use kalah::prove::ledger::LedgerError;
    use std::io::ErrorKind;
    match e {
        LedgerError::Io { ref error, .. }
            if matches!(
                error.kind(),
                ErrorKind::InvalidInput | ErrorKind::InvalidData
            ) =>
        {
            CliError::input(format!("ledger: {e}"))
        }
        LedgerError::Io { .. } => CliError::failure(format!("ledger: {e}")),
        LedgerError::Busy(_) => CliError {
            message: format!("ledger: {e}"),
            code: 2,
        },
        _ => CliError::input(format!("ledger: {e}")),
    }
}

fn prove_error(e: ProveError) -> CliError {
    match e {
        ProveError::Ledger(e) => ledger_error(e),
        ProveError::Root(why) => CliError::input(why),
        ProveError::Tree(e) => CliError::input(format!("ledger: {e}")),
        ProveError::Solve(e) => CliError::failure(format!("cannot test: {e}")),
    }
}

/// The solver and databases of a campaign on `root`, with the table of --table-file loaded
/// ([`super::search::with_table_file`]).
fn campaign_solver<L: Lanes>(
    args: &ProveArgs,
    root: &Position<L>,
) -> Result<(Solver, Option<std::sync::Arc<kalah::db::Tablebase>>), CliError> {
    let (houses, rules) = (root.houses_per_side(), root.rules());
    let db = args.db.open(houses, rules)?;
    let mut config = config_with(args, houses, rules, root.seeds_on_board(), db.as_ref());
    args.table.fit(
        &mut config,
        houses,
        rules,
        args.tt_mb,
        TableOrigin::Searches,
    )?;
    let solver = super::search::new_solver(houses, rules, config, db.clone())?;
    let solver = super::search::with_table_file(solver, &args.table)?;
    Ok((solver, db))
}

/// The solver settings of --threads and --tt-mb, or a table sized as `solve` sizes it for
/// `seeds` seeds above `db`.
fn config_with(
    args: &ProveArgs,
    houses: usize,
    rules: Rules,
    seeds: u32,
    db: Option<&std::sync::Arc<kalah::db::Tablebase>>,
) -> SolverConfig {
    let default = SolverConfig::default();
    let top = db.map(|d| d.max_level());
    SolverConfig {
        threads: args.threads.unwrap_or(default.threads),
        tt_mib: args
            .tt_mb
            .unwrap_or_else(|| kalah::search::auto_table_mib(houses, seeds, top, rules)),
        ..default
    }
}
