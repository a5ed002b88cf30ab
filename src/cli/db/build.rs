//! `kalah db build`: levels built by retrograde analysis (on one machine, or split over the
//! ranks of an MPI job), after their cost is stated and, when large, agreed to.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use kalah::Rules;
use kalah::db::{DbError, MAX_DB_HOUSES, MAX_LEVEL, build};
use serde_json::json;

use super::super::CliError;
use super::super::args::{print_json, rules_parser};
use super::super::human::{human_bytes, human_count, human_duration, human_rate};
use super::super::progress::Indicator;
use super::{pool, writer_error};

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
    /// houses, levels up to 24 take 0.80 GB, up to 28 3.6 GB, up to 32 14.2 GB.
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
    #[arg(long, value_name = "T", value_parser = super::super::args::threads())]
    threads: Option<usize>,
    /// Build each level a pair of tables at a time (the split of --mpi, on this machine alone):
    /// each pair is written to a file of its own as it is done, and the level from them at the
    /// end. A stopped build then resumes at the pair it was on, not at the start of its level
    /// (hours, for the largest levels), and the build holds the largest pair of tables in memory
    /// instead of the whole top level (7 houses, level 28: 3.9 GB instead of 18.6 GB), so it
    /// can run beside other work. The cost: each level is written twice, and the disk holds
    /// the pairs (one byte an entry) beside the level until it is written. The files are
    /// byte-identical to a build without it.
    #[arg(long, conflicts_with = "mpi")]
    by_pairs: bool,
    /// Print JSON: {"houses", "rules", "dir", "ranks", "levels": [{"level", "entries", "bytes",
    /// "time_ms", "kept", "checksum"}], "entries", "bytes", "time_ms"}.
    #[arg(long)]
    json: bool,
    /// Be one rank of an MPI job: `mpirun -np N kalah db build ... --dir SHARED --mpi`. Each
    /// rank builds its share of every level (pairs of tables, dealt largest first to the rank
    /// with the least), over the levels below read from DIR, which every rank must see; rank 0
    /// writes each level from the shares. The files are byte-identical to a build without
    /// --mpi, and a killed job run again resumes (see --by-pairs). Rank 0 asks, draws the
    /// progress and prints the report. Needs a kalah built with `cargo build --release
    /// --features mpi` (which needs Open MPI and libclang).
    #[arg(long)]
    mpi: bool,
}

pub fn run(args: BuildArgs) -> Result<(), CliError> {
    let dir = super::super::db_choice::dir_or_home(&args.dir)?;
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
    let display = BuildDisplay::new(&args, &dir);
    let cancel = AtomicBool::new(false);
    let started = Instant::now();
    // Ctrl-C or SIGTERM stops the build between pieces of work, and says what is kept.
    kalah::catch_interrupt();
    let finished = AtomicBool::new(false);
    let (houses, rules, top) = (args.houses, args.rules, args.max_seeds);
    let progress = |p| display.progress(p);
    let report = std::thread::scope(|scope| -> Result<_, CliError> {
        super::set_on_interrupt(scope, &finished, &cancel)?;
        let report = if args.by_pairs {
            // A job of one rank, this process: the split build's pair files and resumption.
            let ranks = kalah::db::ranks::in_process(1);
            kalah::db::distributed::build_distributed(
                &ranks[0], &dir, houses, rules, top, &pool, &cancel, &progress,
            )
        } else {
            pool.install(|| build(&dir, houses, rules, top, &cancel, &progress))
        };
        finished.store(true, Ordering::Relaxed);
        Ok(report)
    })?;
    display.indicator.finish();
    if let Err(DbError::Cancelled) = report {
        return Err(interrupted(&args, &dir));
    }
    let report = report.map_err(|e| build_error(&args, e))?;
    print_build(&args, &dir, &report, started.elapsed(), None);
    Ok(())
}

/// What a build stopped by Ctrl-C or SIGTERM says (exit code 130): what it kept in `dir`.
fn interrupted(args: &BuildArgs, dir: &Path) -> CliError {
    let kept = if args.by_pairs || args.mpi {
        "the pairs of tables finished in the level under way and every finished level are kept"
    } else {
        "the level under way is dropped, every finished level is kept"
    };
    CliError {
        message: format!(
            "interrupted: {kept} in {}; the same command resumes",
            dir.display()
        ),
        code: 130,
    }
}

/// The error of a build, with a hint where it wants more memory than this machine allows and
/// a build by pairs would not.
fn build_error(args: &BuildArgs, e: DbError) -> CliError {
    let mut error = writer_error("cannot build the database", e);
    let fits = |by_pairs| {
        kalah::db::build_memory_held(args.houses, args.max_seeds, by_pairs)
            .is_ok_and(|bytes| bytes <= kalah::db::build::build_memory_limit())
    };
    if !args.by_pairs && !fits(false) && fits(true) {
        error.message += "; --by-pairs holds only the largest pair of tables of the top level";
    }
    error
}

/// `kalah db build --mpi`: this process is one rank of an MPI job (see
/// [`kalah::db::distributed`]). Rank 0 asks, draws the progress, prints the report and reports
/// every failure, with the exit code of the job; the other ranks print nothing and exit 0.
#[cfg(feature = "mpi")]
fn run_build_mpi(args: BuildArgs, dir: PathBuf) -> Result<(), CliError> {
    use kalah::db::distributed::{build_distributed, refuse};
    use kalah::db::ranks::Ranks;
    let ranks = super::super::mpi::start()?;
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
    let display = leader.then(|| BuildDisplay::new(&args, &dir));
    let cancel = AtomicBool::new(false);
    let started = Instant::now();
    let progress = |p| {
        if let Some(display) = &display {
            display.progress(p)
        }
    };
    let (houses, rules, top) = (args.houses, args.rules, args.max_seeds);
    // Ctrl-C or SIGTERM (which mpirun and Slurm send every rank) stops each rank between
    // pieces of work; rank 0 says what is kept.
    kalah::catch_interrupt();
    let finished = AtomicBool::new(false);
    let result = std::thread::scope(|scope| -> Result<_, CliError> {
        super::set_on_interrupt(scope, &finished, &cancel)?;
        let result = build_distributed(&ranks, &dir, houses, rules, top, &pool, &cancel, &progress);
        finished.store(true, Ordering::Relaxed);
        Ok(result)
    })?;
    let report = match result {
        Ok(report) => report,
        Err(DbError::Cancelled) if leader => {
            if let Some(display) = display {
                display.indicator.finish();
            }
            return Err(interrupted(&args, &dir));
        }
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
         --features mpi` (needs Open MPI and libclang)",
    ))
}

/// The progress of a build: the bar of the level being built, and a line a level done.
struct BuildDisplay {
    indicator: Indicator,
    /// The level the indicator shows (u32::MAX: none yet).
    shown: std::sync::atomic::AtomicU32,
    /// Entries of the level shown that an earlier build by pairs left in its pair files: the
    /// bar counts the rest, so that its rate and eta are this build's.
    resumed: std::sync::atomic::AtomicU64,
    /// Where a build by pairs keeps its pair files (None: a build of whole levels).
    pairs: Option<(PathBuf, usize, kalah::Rules)>,
    /// Entries of the levels above each level, for the whole build's ETA.
    above: Vec<u64>,
}

impl BuildDisplay {
    fn new(args: &BuildArgs, dir: &Path) -> BuildDisplay {
        BuildDisplay {
            // Until a level is under way: the checksums of the levels already built.
            indicator: Indicator::bar("checking the levels already built", 0, ""),
            shown: std::sync::atomic::AtomicU32::new(u32::MAX),
            resumed: std::sync::atomic::AtomicU64::new(0),
            pairs: (args.by_pairs || args.mpi).then(|| (dir.to_owned(), args.houses, args.rules)),
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
        use std::sync::atomic::Ordering::Relaxed;
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
            return;
        }
        if self.shown.swap(p.level, Relaxed) != p.level {
            let resumed = match &self.pairs {
                Some((dir, houses, rules)) => {
                    kalah::db::distributed::pair_entries_on_disk(dir, *houses, *rules, p.level)
                        .min(p.total)
                }
                None => 0,
            };
            self.resumed.store(resumed, Relaxed);
            indicator.restart(
                format!("level {}", p.level),
                Some(p.total - resumed),
                "entries",
            );
        }
        let resumed = self.resumed.load(Relaxed);
        let done = p.done.saturating_sub(resumed);
        indicator.set_done(done);
        // The whole build at this build's rate on this level: a lower bound, as the rate
        // falls with the level (the levels below outgrow the caches).
        let above = self.above[p.level as usize];
        let left = p.total - p.done.min(p.total) + above;
        let seconds = p.elapsed.as_secs_f64();
        let mut message = Vec::new();
        if resumed > 0 {
            message.push(format!(
                "{} more from an earlier build",
                human_count(resumed)
            ));
        }
        if above > 0 && done > 0 && seconds > 1.0 {
            let eta = Duration::from_secs_f64(left as f64 * seconds / done as f64);
            message.push(format!(
                "all levels: at least {} more (larger levels go slower)",
                human_duration(eta)
            ));
        }
        indicator.set_message(message.join(", "));
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
    let bytes: u64 = report.levels.iter().map(|l| l.bytes).sum();
    println!(
        "{} houses, {} rules, levels 0..={} in {}: {entries} entries in {bytes} bytes ({}: each \
         entry in the bits of its level, a checksum a block), {:.1} s{}",
        args.houses,
        args.rules,
        args.max_seeds,
        dir.display(),
        human_bytes(bytes),
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

/// Entries a second that one build thread writes in a level of up to
/// [`BUILD_FAST_ENTRIES`] entries, for the estimate of a build's time; larger levels go slower,
/// as (BUILD_FAST_ENTRIES / entries)^0.6 (their working set leaves the caches). Fitted to the
/// 6-house build of 2026-11-27 on 2 threads of an AMD EPYC (levels 0..32 in 3179 s): 11-15 M
/// entries a thread-second up to level 24 (0..24: 52 s), 6.8 at level 26, 4.3 at 28, 3.6 at
/// 30, 2.2 at 32; the model says 7.6, 5.1, 3.5, 2.4.
const BUILD_ENTRIES_PER_THREAD_SECOND: f64 = 12e6;

/// The level size past which a build slows down (see [`BUILD_ENTRIES_PER_THREAD_SECOND`]).
const BUILD_FAST_ENTRIES: f64 = 4e8;

/// What building levels `0..=args.max_seeds` into `dir` would write (the levels not there yet).
fn build_cost(args: &BuildArgs, dir: &Path) -> Result<kalah::db::BuildCost, CliError> {
    kalah::db::build_cost(dir, args.houses, args.rules, args.max_seeds)
        .map_err(|e| CliError::input(format!("cannot build the database: {e}")))
}

/// The time a build of the levels `levels` of `houses` houses on `threads` threads is
/// estimated to take (see [`BUILD_ENTRIES_PER_THREAD_SECOND`]).
pub(in crate::cli) fn estimated_time(houses: usize, levels: &[u32], threads: usize) -> String {
    let seconds: f64 = levels
        .iter()
        .map(|&k| {
            let entries = kalah::db::level_len(houses, k) as f64;
            let slowdown = (BUILD_FAST_ENTRIES / entries.max(1.0)).min(1.0).powf(0.6);
            entries / (BUILD_ENTRIES_PER_THREAD_SECOND * slowdown * threads as f64)
        })
        .sum();
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
    let memory = kalah::db::build_memory_held(args.houses, args.max_seeds, args.by_pairs)
        .map_err(|e| CliError::input(format!("cannot build the database: {e}")))?;
    let pairs = pairs_phrase(args, dir, &cost);
    println!(
        "{variant}, levels {} into {}: {} entries, {} bytes ({}) to write{pairs}, {free} free \
         there, about {} on {threads} thread{}, holding {} in memory (--dry-run: nothing built)",
        level_ranges(&cost.levels),
        dir.display(),
        cost.entries,
        cost.bytes,
        human_bytes(cost.bytes),
        estimated_time(args.houses, &cost.levels, threads),
        if threads == 1 { "" } else { "s" },
        human_bytes(memory)
    );
    Ok(())
}

/// ` and 17.6 GB of pairs while a level is built`: what [`pair_bytes`] adds to a build's
/// size, in words; empty for a build of whole levels.
fn pairs_phrase(args: &BuildArgs, dir: &Path, cost: &kalah::db::BuildCost) -> String {
    match pair_bytes(args, dir, cost) {
        0 => String::new(),
        bytes => format!(
            " and {} of pairs while a level is built",
            human_bytes(bytes)
        ),
    }
}

/// The most disk a build by pairs (--by-pairs, --mpi) still needs beside its levels: the pair
/// files of a level, one byte an entry, until the level is written from them, less those of its
/// pair files that `dir` already holds (a resumed build); the largest over its levels, and 0
/// for a build of whole levels.
fn pair_bytes(args: &BuildArgs, dir: &Path, cost: &kalah::db::BuildCost) -> u64 {
    if !(args.by_pairs || args.mpi) {
        return 0;
    }
    let to_write = |&k: &u32| {
        let written = kalah::db::distributed::pair_entries_on_disk(dir, args.houses, args.rules, k);
        kalah::db::level_len(args.houses, k).saturating_sub(written)
    };
    cost.levels.iter().map(to_write).max().unwrap_or(0)
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
    let needed = cost.bytes + pair_bytes(args, dir, &cost);
    if let Some(free) = free.filter(|&free| free < needed) {
        return Err(CliError::failure(format!(
            "cannot build the database: levels {} need {} on disk{}, and {} has {} free",
            level_ranges(&cost.levels),
            human_bytes(needed),
            if needed > cost.bytes {
                " with the pairs of tables of a level"
            } else {
                ""
            },
            dir.display(),
            human_bytes(free)
        )));
    }
    if cost.bytes <= ASK_ABOVE_BYTES || args.yes {
        return Ok(());
    }
    let pairs = pairs_phrase(args, dir, &cost);
    eprintln!(
        "kalah db build: {} houses, {} rules, levels {} into {}: {} to write{pairs} ({} free \
         there), about {} on {threads} thread{}",
        args.houses,
        args.rules,
        level_ranges(&cost.levels),
        dir.display(),
        human_bytes(cost.bytes),
        free.map_or("unknown space".to_owned(), human_bytes),
        estimated_time(args.houses, &cost.levels, threads),
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
