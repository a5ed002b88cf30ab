//! `kalah db build|verify|info|upgrade`: the endgame databases on disk.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use kalah::Rules;
use kalah::db::upgrade::{Outcome, upgrade};
use kalah::db::verify::{Coverage, VerifyStep};
use kalah::db::{Access, DbError, MAX_DB_HOUSES, MAX_LEVEL, Tablebase, build, verify};
use serde_json::json;

use super::CliError;
use super::args::{print_json, rules_parser};
use super::progress::{Indicator, human_bytes, human_duration, human_rate};

/// Endgame databases: the exact value of every board with up to K seeds on it.
///
/// One file per number of seeds on the board (a "level"), named
/// kalah-<houses>-<rules>-<level>.kdb, the bits each board needs (5 up to 31 seeds, 6 up to
/// 63) and a checksum per block of 2048 boards. A database of levels 0..K answers any position
/// with at most K seeds in its houses at once, whatever its stores hold. Every block is checked
/// against its checksum before any value in it is used: a damaged file gives an error naming the
/// level, block and file, never a wrong value. A directory's levels must run from 0 to the
/// highest one without a gap.
#[derive(Args, Debug)]
pub struct DbArgs {
    #[command(subcommand)]
    command: DbCommand,
}

#[derive(Subcommand, Debug)]
enum DbCommand {
    Build(BuildArgs),
    Verify(VerifyArgs),
    Info(InfoArgs),
    Upgrade(UpgradeArgs),
}

/// Build levels 0..=K by retrograde analysis, each from the ones below it, in parallel.
///
/// Levels already in DIR are checked (every block) and kept, so an interrupted build resumes
/// where it stopped; each new level is written to a temporary file and renamed into place only
/// when complete. One build a directory at a time: a second one says which process is building
/// there and exits with code 2 (readers are not held up). Building up to 2·M·N seeds solves
/// Kalah(M,N) for every reachable position.
#[derive(Args, Debug)]
pub struct BuildArgs {
    /// Houses a side, M (1 to 8).
    #[arg(long, short = 'm')]
    houses: usize,
    /// The top level K: the most seeds on the board (at most 64). Size grows fast: with 6
    /// houses, levels up to 24 take 0.78 GB, up to 28 3.5 GB, up to 32 14.0 GB.
    #[arg(long, value_name = "K")]
    max_seeds: u32,
    /// Capture rule: `standard` or `empty-capture`.
    #[arg(long, default_value = "standard", value_parser = rules_parser())]
    rules: Rules,
    /// Directory of the level files (created if missing) [default: the database home:
    /// $KALAH_DB, else $XDG_DATA_HOME/kalah, else ~/.local/share/kalah].
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Build without asking: a build that writes more than 1 GB first states its size, the
    /// free disk space and an estimated time, and asks.
    #[arg(long, short = 'y')]
    yes: bool,
    /// Build nothing: say what the build would write (levels, entries, bytes, the free disk
    /// space and an estimated time) and exit.
    #[arg(long, conflicts_with_all = ["yes", "json", "mpi"])]
    dry_run: bool,
    /// Worker threads, 1 to 64 (4 a core above 16 cores) [default: all cores; with --mpi, the
    /// cores shared among the job's ranks on the machine].
    #[arg(long, value_name = "T", value_parser = super::args::threads())]
    threads: Option<usize>,
    /// Print JSON: {"houses", "rules", "dir", "ranks", "levels": [{"level", "entries", "bytes",
    /// "time_ms", "kept", "checksum"}], "entries", "bytes", "time_ms"}.
    #[arg(long)]
    json: bool,
    /// Be one rank of an MPI job: `mpirun -np N kalah db build ... --dir SHARED --mpi`. Each
    /// rank builds its share of every level (pairs of tables, dealt largest first to the rank
    /// with the least), over the levels below read from DIR, which every rank must see; rank 0
    /// writes each level from the shares. The files are byte-identical to a build without
    /// --mpi, and a killed job run again resumes. Rank 0 asks, draws the progress and prints
    /// the report. Needs a kalah built with `--features mpi` (see docs/cluster.md).
    #[arg(long)]
    mpi: bool,
}

/// Check every level in DIR: headers, every block against its checksum and, for a sample of
/// entries (or all), that each entry is the best of its moves.
///
/// Every level is checked even when one is damaged, and each damaged level is named with its
/// first damaged block; the exit code is then 1. A missing level between 0 and the highest is
/// an error too (use --max-level to check the levels below it).
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Directory of the level files [default: the database home].
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Check every entry against its moves, not a sample (as long as a build).
    #[arg(long)]
    all: bool,
    /// Entries per level checked against their moves when not --all, 0 to 2^40 (drawn at
    /// random as the check goes: no memory; 0 checks the blocks' checksums only).
    #[arg(
        long,
        default_value_t = 100_000,
        value_name = "N",
        value_parser = super::args::count::<u64>(0..=1 << 40)
    )]
    sample: u64,
    /// Worker threads, 1 to 64 (4 a core above 16 cores) [default: all cores].
    #[arg(long, value_name = "T", value_parser = super::args::threads())]
    threads: Option<usize>,
    /// Check only the levels 0..=K of each database (all of which must be there).
    #[arg(long, value_name = "K", value_parser = super::args::max_level())]
    max_level: Option<u32>,
    /// Print JSON: {"dir", "databases": [{"houses", "rules", "ok", "error", "levels": [{"level",
    /// "entries", "bytes", "checked", "checksum", "ok", "error", "damaged_blocks"}], "entries",
    /// "checked"}], "ok"}.
    #[arg(long)]
    json: bool,
}

/// List the databases in DIR: houses, rules, levels, entries, bytes and fingerprints (headers
/// and file lengths are checked; entries are not read: see `db verify`). A gap in the levels
/// or a bad header is reported, and the exit code is then 1.
#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Directory of the level files [default: the database home].
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Show only the levels 0..=K of each database (all of which must be there).
    #[arg(long, value_name = "K", value_parser = super::args::max_level())]
    max_level: Option<u32>,
    /// Print JSON: {"dir", "databases": [{"houses", "rules", "ok", "error", "max_level",
    /// "entries", "bytes", "levels": [{"level", "entries", "bytes", "blocks", "block_entries",
    /// "entry_bits", "checksum"}]}], "ok"}.
    #[arg(long)]
    json: bool,
}

/// Rewrite the level files of an older form in DIR in the current one (entries packed at the
/// level's width, a checksum per block), after checking each one's checksums.
///
/// The older forms are format 1 (one byte an entry, one checksum a file) and the first format 2
/// files (one byte an entry, a checksum per block): the rewrite keeps every entry and shrinks the
/// files to 5/8 (levels 16 to 31). A file whose checksum fails is left as it is and reported:
/// rebuild it (delete it and run `kalah db build`). Files in the current format are left alone.
/// Takes the directory's build lock, so it cannot run beside a build.
#[derive(Args, Debug)]
pub struct UpgradeArgs {
    /// Directory of the level files [default: the database home].
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Print JSON: {"dir", "files": [{"file", "outcome": "upgraded"|"current"|"failed",
    /// "error"}], "ok"}.
    #[arg(long)]
    json: bool,
}

pub fn run(args: DbArgs) -> Result<(), CliError> {
    match args.command {
        DbCommand::Build(a) => run_build(a),
        DbCommand::Verify(a) => run_verify(a),
        DbCommand::Info(a) => run_info(a),
        DbCommand::Upgrade(a) => run_upgrade(a),
    }
}

/// A rayon pool with `threads` workers (all cores by default).
pub fn pool(threads: Option<usize>) -> Result<rayon::ThreadPool, CliError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .map_err(|e| CliError::failure(format!("cannot start the worker threads: {e}")))
}

fn run_build(args: BuildArgs) -> Result<(), CliError> {
    let dir = super::db_choice::dir_or_home(&args.dir)?;
    if !(1..=MAX_DB_HOUSES).contains(&args.houses) {
        return Err(CliError::input(format!(
            "--houses {} is out of range for databases (1 to {MAX_DB_HOUSES})",
            args.houses
        )));
    }
    if args.max_seeds > MAX_LEVEL {
        return Err(CliError::input(format!(
            "--max-seeds {} is above the highest level databases index ({MAX_LEVEL})",
            args.max_seeds
        )));
    }
    if args.mpi {
        return run_build_mpi(args, dir);
    }
    let pool = pool(args.threads)?;
    if args.dry_run {
        return dry_run(&args, &dir, pool.current_num_threads());
    }
    confirm_build(&args, &dir, pool.current_num_threads())?;
    let display = BuildDisplay::new(&args);
    let cancel = AtomicBool::new(false);
    let started = Instant::now();
    // Ctrl-C or SIGTERM stops the build between pieces of work, and says what is kept.
    kalah::catch_interrupt();
    let finished = AtomicBool::new(false);
    let report = std::thread::scope(|scope| {
        scope.spawn(|| {
            while !finished.load(Ordering::Relaxed) {
                if kalah::interrupted() {
                    cancel.store(true, Ordering::Relaxed);
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        });
        let report = pool.install(|| {
            build(
                &dir,
                args.houses,
                args.rules,
                args.max_seeds,
                &cancel,
                &|p| display.progress(p),
            )
        });
        finished.store(true, Ordering::Relaxed);
        report
    });
    display.indicator.finish();
    if let Err(DbError::Cancelled) = report {
        return Err(CliError {
            message: format!(
                "interrupted: the level under way is dropped, every finished level is kept in \
                 {}; the same command resumes",
                dir.display()
            ),
            code: 130,
        });
    }
    let report = report.map_err(|e| writer_error("cannot build the database", e))?;
    print_build(&args, &dir, &report, started.elapsed(), None);
    Ok(())
}

/// `kalah db build --mpi`: this process is one rank of an MPI job (see
/// [`kalah::db::distributed`]). Rank 0 asks, draws the progress, prints the report and reports
/// every failure, with the exit code of the job; the other ranks print nothing and exit 0.
#[cfg(feature = "mpi")]
fn run_build_mpi(args: BuildArgs, dir: PathBuf) -> Result<(), CliError> {
    use kalah::db::distributed::{build_distributed, refuse};
    use kalah::db::ranks::Ranks;
    let ranks = super::mpi::start()?;
    let leader = ranks.rank() == 0;
    let pool = pool(Some(args.threads.unwrap_or(ranks.default_threads())));
    if leader {
        let ready = pool
            .as_ref()
            .map_err(|e| CliError::failure(&e.message))
            .and_then(|pool| confirm_build(&args, &dir, pool.current_num_threads() * ranks.size()));
        if let Err(e) = ready {
            refuse(&ranks, &e.message);
            return Err(e);
        }
    }
    let pool = pool?;
    let display = leader.then(|| BuildDisplay::new(&args));
    let cancel = AtomicBool::new(false);
    let started = Instant::now();
    let progress = |p| {
        if let Some(display) = &display {
            display.progress(p)
        }
    };
    let (houses, rules, top) = (args.houses, args.rules, args.max_seeds);
    let result = build_distributed(&ranks, &dir, houses, rules, top, &pool, &cancel, &progress);
    let report = match result {
        Ok(report) => report,
        Err(e) if leader => return Err(writer_error("cannot build the database", e)),
        // Rank 0 reports every failure of the job (this rank's own included) and exits with
        // its code, which mpirun returns. This rank ends quietly and with 0: a non-zero exit
        // here could make mpirun kill rank 0 before it says why, and set the job's code.
        Err(_) => return Ok(()),
    };
    if let Some(display) = display {
        display.indicator.finish();
        print_build(&args, &dir, &report, started.elapsed(), Some(ranks.size()));
    }
    Ok(())
}

#[cfg(not(feature = "mpi"))]
fn run_build_mpi(_: BuildArgs, _: PathBuf) -> Result<(), CliError> {
    Err(CliError::input(
        "--mpi: this kalah was built without MPI; build it with `cargo build --release \
         --features mpi` (needs Open MPI and libclang: see docs/cluster.md)",
    ))
}

/// The progress of a build: the bar of the level being built, and a line a level done.
struct BuildDisplay {
    indicator: Indicator,
    /// The level the indicator shows (u32::MAX: none yet).
    shown: std::sync::atomic::AtomicU32,
    /// Entries of the levels above each level, for the whole build's ETA.
    above: Vec<u64>,
}

impl BuildDisplay {
    fn new(args: &BuildArgs) -> BuildDisplay {
        BuildDisplay {
            indicator: Indicator::bar("level 0", 0, "entries"),
            shown: std::sync::atomic::AtomicU32::new(u32::MAX),
            above: (0..=args.max_seeds)
                .map(|k| {
                    (k + 1..=args.max_seeds)
                        .map(|j| kalah::db::level_len(args.houses, j))
                        .sum()
                })
                .collect(),
        }
    }

    fn progress(&self, p: kalah::db::BuildProgress) {
        let indicator = &self.indicator;
        if p.finished {
            let rate = p.total as f64 / p.elapsed.as_secs_f64().max(1e-9);
            let line = if p.kept {
                format!(
                    "  level {:>2}: {:>13} entries, already built (checksum ok), kept",
                    p.level, p.total
                )
            } else {
                format!(
                    "  level {:>2}: {:>13} entries, {:>8.2} s, {:>16}",
                    p.level,
                    p.total,
                    p.elapsed.as_secs_f64(),
                    human_rate(rate, "entries")
                )
            };
            // One line a level on stderr, drawn above the bar on a terminal.
            indicator.println(line);
        } else {
            if self
                .shown
                .swap(p.level, std::sync::atomic::Ordering::Relaxed)
                != p.level
            {
                indicator.restart(format!("level {}", p.level), Some(p.total));
            }
            indicator.set_done(p.done);
            // The whole build at this level's rate: a lower bound, as the rate falls with
            // the level (the levels below outgrow the caches).
            let above = self.above[p.level as usize];
            let left = p.total - p.done.min(p.total) + above;
            let seconds = p.elapsed.as_secs_f64();
            if above > 0 && p.done > 0 && seconds > 1.0 {
                let eta = Duration::from_secs_f64(left as f64 * seconds / p.done as f64);
                indicator.set_message(format!("all levels: eta {}+", human_duration(eta)));
            }
        }
    }
}

/// Prints what a build did, as text or JSON; `ranks`: the ranks of a split build.
fn print_build(
    args: &BuildArgs,
    dir: &Path,
    report: &kalah::db::BuildReport,
    elapsed: Duration,
    ranks: Option<usize>,
) {
    let entries: u64 = report.levels.iter().map(|l| l.entries).sum();
    let built: Vec<_> = report.levels.iter().filter(|l| !l.kept).collect();
    if args.json {
        let levels: Vec<_> = report
            .levels
            .iter()
            .map(|l| {
                json!({
                    "level": l.level,
                    "entries": l.entries,
                    "bytes": l.bytes,
                    "time_ms": l.time.as_millis() as u64,
                    "kept": l.kept,
                    "checksum": format!("{:016x}", l.checksum),
                })
            })
            .collect();
        print_json(&json!({
            "houses": args.houses,
            "rules": args.rules.as_str(),
            "dir": dir.display().to_string(),
            "ranks": ranks.unwrap_or(1),
            "levels": levels,
            "entries": entries,
            "bytes": report.levels.iter().map(|l| l.bytes).sum::<u64>(),
            "time_ms": elapsed.as_millis() as u64,
        }));
        return;
    }
    let kept = report.levels.len() - built.len();
    println!(
        "{} houses, {} rules, levels 0..={} in {}: {entries} entries (each in the bits of its \
         level, and a checksum a block), {:.1} s{}",
        args.houses,
        args.rules,
        args.max_seeds,
        dir.display(),
        elapsed.as_secs_f64(),
        match ranks {
            Some(n) => format!(" on {n} MPI rank{}", if n == 1 { "" } else { "s" }),
            None => String::new(),
        }
    );
    if kept > 0 {
        println!(
            "{kept} levels were already built and checked, {} built now",
            built.len()
        );
    }
    let built_entries: u64 = built.iter().map(|l| l.entries).sum();
    if built_entries > 0 {
        let rate = built_entries as f64 / elapsed.as_secs_f64().max(1e-9);
        println!("{:.1} M entries/s over the levels built now", rate / 1e6);
    }
}

/// Above this many bytes to write, a build states its cost and asks first (unless --yes).
const ASK_ABOVE_BYTES: u64 = 1_000_000_000;

/// Entries a second that one build thread writes, for the estimate of a build's time: the
/// 6-house levels 0..24 (1.25·10⁹ entries) took 144-172 s on 2 threads of an AMD EPYC,
/// about 4 million entries a second a thread. Small levels go faster.
const BUILD_ENTRIES_PER_THREAD_SECOND: f64 = 4e6;

/// What building levels `0..=args.max_seeds` into `dir` would write (the levels not there yet).
fn build_cost(args: &BuildArgs, dir: &Path) -> Result<kalah::db::BuildCost, CliError> {
    kalah::db::build_cost(dir, args.houses, args.rules, args.max_seeds)
        .map_err(|e| CliError::input(format!("cannot build the database: {e}")))
}

/// The time a build of `entries` entries on `threads` threads is estimated to take.
fn estimated_time(entries: u64, threads: usize) -> String {
    let seconds = entries as f64 / (BUILD_ENTRIES_PER_THREAD_SECOND * threads as f64);
    human_duration(Duration::from_secs_f64(seconds))
}

/// `db build --dry-run`: one line on stdout saying what the build would write; nothing built.
fn dry_run(args: &BuildArgs, dir: &Path, threads: usize) -> Result<(), CliError> {
    let cost = build_cost(args, dir)?;
    let variant = format!("{} houses, {} rules", args.houses, args.rules);
    if cost.levels.is_empty() {
        println!(
            "{variant}, levels 0..={} in {}: all built, nothing to write",
            args.max_seeds,
            dir.display()
        );
        return Ok(());
    }
    let free = kalah::files::free_space(dir).map_or("unknown space".to_owned(), human_bytes);
    println!(
        "{variant}, levels {} into {}: {} entries, {} bytes ({}) to write, {free} free there, \
         about {} on {threads} thread{} (--dry-run: nothing built)",
        level_ranges(&cost.levels),
        dir.display(),
        cost.entries,
        cost.bytes,
        human_bytes(cost.bytes),
        estimated_time(cost.entries, threads),
        if threads == 1 { "" } else { "s" }
    );
    Ok(())
}

/// Before a build: refuses it if the disk under `dir` cannot hold the levels to write, and for
/// one of more than [`ASK_ABOVE_BYTES`] states size, free space and estimated time on stderr
/// and asks on stdin (unless --yes); anything but `y` or `yes` stops it (exit code 2).
fn confirm_build(args: &BuildArgs, dir: &Path, threads: usize) -> Result<(), CliError> {
    let cost = build_cost(args, dir)?;
    if cost.levels.is_empty() {
        return Ok(());
    }
    let free = kalah::files::free_space(dir).ok();
    if let Some(free) = free.filter(|&free| free < cost.bytes) {
        return Err(CliError::failure(format!(
            "cannot build the database: levels {} need {} on disk, and {} has {} free",
            level_ranges(&cost.levels),
            human_bytes(cost.bytes),
            dir.display(),
            human_bytes(free)
        )));
    }
    if cost.bytes <= ASK_ABOVE_BYTES || args.yes {
        return Ok(());
    }
    eprintln!(
        "kalah db build: {} houses, {} rules, levels {} into {}: {} to write ({} free there), \
         about {} on {threads} thread{}",
        args.houses,
        args.rules,
        level_ranges(&cost.levels),
        dir.display(),
        human_bytes(cost.bytes),
        free.map_or("unknown space".to_owned(), human_bytes),
        estimated_time(cost.entries, threads),
        if threads == 1 { "" } else { "s" }
    );
    eprint!("Build it? [y/N] ");
    let _ = std::io::Write::flush(&mut std::io::stderr());
    let mut input = std::io::stdin().lock();
    let answer = match kalah::text::read_line_cut(&mut input, 64) {
        Ok(Some(kalah::text::Line::Text(text))) => text,
        _ => {
            // No answer (the end of the input): end the question's line.
            eprintln!();
            String::new()
        }
    };
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Ok(()),
        _ => Err(CliError::input(
            "the build was not confirmed (--yes builds without asking)",
        )),
    }
}

/// Levels as ranges: `0..=24`, or `20..=24, 27`.
fn level_ranges(levels: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < levels.len() {
        let mut j = i;
        while j + 1 < levels.len() && levels[j + 1] == levels[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            levels[i].to_string()
        } else {
            format!("{}..={}", levels[i], levels[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// The error of a command that writes in a database directory: another writer there (the
/// build lock taken) is the user's to wait for (exit code 2), anything else a failure.
fn writer_error(what: &str, e: DbError) -> CliError {
    let message = format!("{what}: {e}");
    match e {
        DbError::Busy { .. } => CliError::input(message),
        _ => CliError::failure(message),
    }
}

/// The (houses, rules) of the databases with a level 0 in `dir`.
fn databases_in(dir: &Path) -> Result<Vec<(usize, Rules)>, CliError> {
    let files = kalah::db::tablebase::level_files(dir)
        .map_err(|e| CliError::failure(format!("cannot read {e}")))?;
    // The listing is sorted by houses, rules and level: level 0 once a database.
    let found: Vec<(usize, Rules)> = files
        .iter()
        .filter(|f| f.level == 0 && (1..=MAX_DB_HOUSES).contains(&f.houses))
        .map(|f| (f.houses, f.rules))
        .collect();
    if found.is_empty() {
        return Err(CliError::failure(format!(
            "no database in {} (no kalah-<houses>-<rules>-000.kdb file)",
            dir.display()
        )));
    }
    Ok(found)
}

fn open_base(
    dir: &Path,
    houses: usize,
    rules: Rules,
    max_level: Option<u32>,
) -> Result<Tablebase, DbError> {
    Tablebase::open_up_to(dir, houses, rules, Access::Map, max_level)
}

fn run_verify(args: VerifyArgs) -> Result<(), CliError> {
    let dir = super::db_choice::dir_or_home(&args.dir)?;
    let pool = pool(args.threads)?;
    let coverage = if args.all {
        Coverage::All
    } else {
        Coverage::Sample(args.sample)
    };
    let cancel = AtomicBool::new(false);
    let indicator = Indicator::spinner("verifying", "");
    let mut databases = Vec::new();
    let mut defects: Vec<String> = Vec::new();
    for (houses, rules) in databases_in(&dir)? {
        let name = format!("{houses} houses, {rules} rules");
        let base = match open_base(&dir, houses, rules, args.max_level) {
            Ok(base) => base,
            Err(e) => {
                defects.push(e.to_string());
                if !args.json {
                    indicator.suspend(|| println!("{name}: FAILED: {e}"));
                }
                databases.push(json!({
                    "houses": houses,
                    "rules": rules.as_str(),
                    "ok": false,
                    "error": e.to_string(),
                    "levels": [],
                }));
                continue;
            }
        };
        let progress = |step: VerifyStep| {
            indicator.set_message(match step {
                VerifyStep::Blocks(level, done) => {
                    format!("{name}: level {level}, {done} blocks checked")
                }
                VerifyStep::Entries(level, done) => {
                    format!("{name}: level {level}, {done} entries checked against their moves")
                }
            });
        };
        let report = pool
            .install(|| verify(&base, coverage, &cancel, &progress))
            .map_err(|e| CliError::failure(format!("verification failed: {e}")))?;
        let entries: u64 = report.levels.iter().map(|l| l.entries).sum();
        let checked: u64 = report.levels.iter().map(|l| l.checked).sum();
        let ok = report.is_sound();
        defects.extend(
            report
                .levels
                .iter()
                .filter_map(|l| l.defect.as_ref().map(|e| e.to_string())),
        );
        if !args.json {
            indicator.suspend(|| {
                if ok {
                    println!(
                        "{name}, levels 0..={}: ok ({entries} entries, every block matches its \
                         checksum, {checked} checked against their moves)",
                        base.max_level()
                    );
                    return;
                }
                println!("{name}, levels 0..={}: FAILED", base.max_level());
                for l in &report.levels {
                    if let Some(e) = &l.defect {
                        let more = match l.damaged_blocks.len() {
                            0 | 1 => String::new(),
                            n => format!(" ({n} damaged blocks in this level)"),
                        };
                        println!("  level {:>2}: {e}{more}", l.level);
                    }
                }
            });
        }
        let levels: Vec<_> = report
            .levels
            .iter()
            .map(|l| {
                json!({
                    "level": l.level,
                    "entries": l.entries,
                    "bytes": l.bytes,
                    "checked": l.checked,
                    "checksum": format!("{:016x}", l.checksum),
                    "ok": l.defect.is_none(),
                    "error": l.defect.as_ref().map(|e| e.to_string()),
                    "damaged_blocks": l.damaged_blocks,
                })
            })
            .collect();
        databases.push(json!({
            "houses": houses,
            "rules": rules.as_str(),
            "ok": ok,
            "error": report.levels.iter().find_map(|l| l.defect.as_ref()).map(|e| e.to_string()),
            "levels": levels,
            "entries": entries,
            "checked": checked,
        }));
    }
    indicator.finish();
    if args.json {
        print_json(&json!({
            "dir": dir.display().to_string(),
            "databases": databases,
            "ok": defects.is_empty(),
        }));
    }
    first_defect(defects)
}

fn run_info(args: InfoArgs) -> Result<(), CliError> {
    let dir = super::db_choice::dir_or_home(&args.dir)?;
    // A home with nothing in it yet is the start of every installation, not an error.
    let empty_home = args.dir.is_none()
        && (!dir.exists()
            || kalah::db::tablebase::level_files(&dir).is_ok_and(|files| files.is_empty()));
    if empty_home {
        if args.json {
            print_json(&json!({"dir": dir.display().to_string(), "databases": [], "ok": true}));
        } else {
            println!(
                "no database in the database home {} yet (`kalah db build --houses 6 \
                 --max-seeds 24` builds the 6-house levels up to 24 seeds: 0.78 GB, about a \
                 minute on 2 cores)",
                dir.display()
            );
        }
        return Ok(());
    }
    let mut databases = Vec::new();
    let mut defects: Vec<String> = Vec::new();
    for (houses, rules) in databases_in(&dir)? {
        let name = format!("{houses} houses, {rules} rules");
        let levels = open_base(&dir, houses, rules, args.max_level).and_then(|base| {
            (0..=base.max_level())
                .map(|k| base.level(k).map(|l| *l.header()))
                .collect::<Result<Vec<_>, DbError>>()
        });
        let levels = match levels {
            Ok(levels) => levels,
            Err(e) => {
                defects.push(e.to_string());
                if args.json {
                    databases.push(json!({
                        "houses": houses,
                        "rules": rules.as_str(),
                        "ok": false,
                        "error": e.to_string(),
                    }));
                } else {
                    println!("{name}: FAILED: {e}");
                }
                continue;
            }
        };
        let total: u64 = levels.iter().map(|h| h.entries).sum();
        let bytes: u64 = levels.iter().map(|h| h.file_len()).sum();
        let top = levels.len() - 1;
        if args.json {
            databases.push(json!({
                "houses": houses,
                "rules": rules.as_str(),
                "ok": true,
                "error": null,
                "max_level": top,
                "entries": total,
                "bytes": bytes,
                "levels": levels.iter().map(|h| json!({
                    "level": h.level,
                    "entries": h.entries,
                    "bytes": h.file_len(),
                    "blocks": h.blocks(),
                    "block_entries": h.block_entries(),
                    "entry_bits": h.width,
                    "checksum": format!("{:016x}", h.table_checksum),
                })).collect::<Vec<_>>(),
            }));
            continue;
        }
        println!(
            "{name}: levels 0..={top}, {total} entries, {bytes} bytes ({:.3} bytes an entry: \
             entries packed at their level's width, a checksum a block of {} entries)",
            bytes as f64 / total.max(1) as f64,
            levels[0].block_entries()
        );
        for h in &levels {
            println!(
                "  level {:>2}: {:>13} entries  {} bits  {:>14} bytes  {:>8} blocks  \
                 fingerprint {:016x}",
                h.level,
                h.entries,
                h.width,
                h.file_len(),
                h.blocks(),
                h.table_checksum
            );
        }
    }
    if args.json {
        print_json(&json!({
            "dir": dir.display().to_string(),
            "databases": databases,
            "ok": defects.is_empty(),
        }));
    }
    first_defect(defects)
}

/// Ok without defects; else the first one, with the number of the others.
fn first_defect(mut defects: Vec<String>) -> Result<(), CliError> {
    match defects.len() {
        0 => Ok(()),
        1 => Err(CliError::failure(defects.swap_remove(0))),
        n => Err(CliError::failure(format!(
            "{} (and {} more defects: see above)",
            defects.swap_remove(0),
            n - 1
        ))),
    }
}

fn run_upgrade(args: UpgradeArgs) -> Result<(), CliError> {
    let dir = super::db_choice::dir_or_home(&args.dir)?;
    let cancel = AtomicBool::new(false);
    let json = args.json;
    let report = upgrade(&dir, &cancel, &|u| {
        if json {
            return;
        }
        let name = u.path.display();
        match &u.outcome {
            Outcome::Upgraded => eprintln!("  {name}: upgraded"),
            Outcome::Current => eprintln!("  {name}: already in the current format"),
            Outcome::Failed(e) => eprintln!("  FAILED: {e}"),
        }
    })
    .map_err(|e| writer_error("cannot upgrade", e))?;
    let failed = report
        .iter()
        .filter(|u| matches!(u.outcome, Outcome::Failed(_)))
        .count();
    let upgraded = report
        .iter()
        .filter(|u| matches!(u.outcome, Outcome::Upgraded))
        .count();
    if json {
        let files: Vec<_> = report
            .iter()
            .map(|u| {
                let (outcome, error) = match &u.outcome {
                    Outcome::Upgraded => ("upgraded", None),
                    Outcome::Current => ("current", None),
                    Outcome::Failed(e) => ("failed", Some(e.to_string())),
                };
                json!({"file": u.path.display().to_string(), "outcome": outcome, "error": error})
            })
            .collect();
        print_json(&json!({
            "dir": dir.display().to_string(),
            "files": files,
            "ok": failed == 0,
        }));
    } else {
        println!(
            "{}: {upgraded} files upgraded, {} already current, {failed} failed",
            dir.display(),
            report.len() - upgraded - failed
        );
    }
    match failed {
        0 => Ok(()),
        n => Err(CliError::failure(format!(
            "{n} file{} could not be upgraded: rebuild {} with `kalah db build`",
            if n == 1 { "" } else { "s" },
            if n == 1 { "it" } else { "them" }
        ))),
    }
}
