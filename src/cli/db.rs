//! `kalah db build|verify|info`: the endgame databases on disk.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use kalah::Rules;
use kalah::db::format::Header;
use kalah::db::verify::Coverage;
use kalah::db::{Access, MAX_DB_HOUSES, MAX_LEVEL, Tablebase, build, level_file_name, verify};
use serde_json::json;

use super::CliError;
use super::args::{print_json, rules_parser};

/// Endgame databases: the exact value of every board with up to K seeds on it.
///
/// One file per number of seeds on the board (a "level"), named
/// kalah-<houses>-<rules>-<level>.kdb, one byte per board. A database of levels 0..K answers
/// any position with at most K seeds in its houses at once, whatever its stores hold.
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
}

/// Build levels 0..=K by retrograde analysis, each from the ones below it, in parallel.
///
/// Levels already in DIR are checked and kept, so an interrupted build resumes where it
/// stopped; each new level is written to a temporary file and renamed into place only when
/// complete. Building up to 2·M·N seeds solves Kalah(M,N) for every reachable position.
#[derive(Args, Debug)]
pub struct BuildArgs {
    /// Houses a side, M (1 to 8).
    #[arg(long, short = 'm')]
    houses: usize,
    /// The top level K: the most seeds on the board (at most 64). Size grows fast: with 6
    /// houses, levels up to 24 take 1.25 GB, up to 28 5.6 GB.
    #[arg(long, value_name = "K")]
    max_seeds: u32,
    /// Capture rule: `standard` or `empty-capture`.
    #[arg(long, default_value = "standard", value_parser = rules_parser())]
    rules: Rules,
    /// Directory of the level files (created if missing).
    #[arg(long)]
    dir: PathBuf,
    /// Worker threads, 1 to 64 (4 a core above 16 cores) [default: all cores].
    #[arg(long, value_name = "T", value_parser = super::args::threads())]
    threads: Option<usize>,
    /// Print JSON: {"houses", "rules", "dir", "levels": [{"level", "entries", "bytes",
    /// "time_ms", "kept", "checksum"}], "entries", "bytes", "time_ms"}.
    #[arg(long)]
    json: bool,
}

/// Check every level in DIR: headers, checksums and, for a sample of entries (or all), that
/// each entry is the best of its moves.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Directory of the level files.
    #[arg(long)]
    dir: PathBuf,
    /// Check every entry against its moves, not a sample (as long as a build).
    #[arg(long)]
    all: bool,
    /// Entries per level checked against their moves when not --all, 1 to 10000000 (the
    /// sample is drawn first, 8 bytes an entry; for more, check all).
    #[arg(
        long,
        default_value_t = 100_000,
        value_name = "N",
        value_parser = super::args::count::<u64>(1..=10_000_000)
    )]
    sample: u64,
    /// Worker threads, 1 to 64 (4 a core above 16 cores) [default: all cores].
    #[arg(long, value_name = "T", value_parser = super::args::threads())]
    threads: Option<usize>,
    /// Print JSON: {"databases": [{"houses", "rules", "levels", "entries", "checked"}], "ok"}.
    #[arg(long)]
    json: bool,
}

/// List the databases in DIR: houses, rules, levels, entries, bytes and checksums (headers
/// are checked; entries are not read: see `db verify`).
#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Directory of the level files.
    #[arg(long)]
    dir: PathBuf,
    /// Print JSON: {"dir", "databases": [{"houses", "rules", "max_level", "entries", "bytes",
    /// "levels": [{"level", "entries", "bytes", "checksum"}]}]}.
    #[arg(long)]
    json: bool,
}

pub fn run(args: DbArgs) -> Result<(), CliError> {
    match args.command {
        DbCommand::Build(a) => run_build(a),
        DbCommand::Verify(a) => run_verify(a),
        DbCommand::Info(a) => run_info(a),
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
    let pool = pool(args.threads)?;
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template(
            "level {prefix:>2} [{bar:30}] {percent:>3}% {human_pos}/{human_len} {per_sec} eta {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    let cancel = AtomicBool::new(false);
    let started = Instant::now();
    let progress = |p: kalah::db::BuildProgress| {
        if p.finished {
            let rate = p.total as f64 / p.elapsed.as_secs_f64().max(1e-9);
            let line = if p.kept {
                format!(
                    "  level {:>2}: {:>13} entries, already built (checksum ok), kept",
                    p.level, p.total
                )
            } else {
                format!(
                    "  level {:>2}: {:>13} entries, {:>8.2} s, {:>6.1} M entries/s",
                    p.level,
                    p.total,
                    p.elapsed.as_secs_f64(),
                    rate / 1e6
                )
            };
            // One line a level on stderr, drawn above the bar on a terminal.
            if bar.is_hidden() {
                eprintln!("{line}");
            } else {
                bar.println(line);
            }
            bar.set_position(0);
        } else {
            if bar.length() != Some(p.total) || bar.prefix() != p.level.to_string() {
                bar.reset();
                bar.set_length(p.total);
                bar.set_prefix(p.level.to_string());
            }
            bar.set_position(p.done);
        }
    };
    let report = pool
        .install(|| {
            build(
                &args.dir,
                args.houses,
                args.rules,
                args.max_seeds,
                &cancel,
                &progress,
            )
        })
        .map_err(|e| CliError::failure(format!("cannot build the database: {e}")))?;
    bar.finish_and_clear();
    let elapsed = started.elapsed();
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
                    "bytes": l.entries + kalah::db::format::HEADER_LEN as u64,
                    "time_ms": l.time.as_millis() as u64,
                    "kept": l.kept,
                    "checksum": format!("{:016x}", l.checksum),
                })
            })
            .collect();
        print_json(&json!({
            "houses": args.houses,
            "rules": args.rules.as_str(),
            "dir": args.dir.display().to_string(),
            "levels": levels,
            "entries": entries,
            "bytes": entries + report.levels.len() as u64 * kalah::db::format::HEADER_LEN as u64,
            "time_ms": elapsed.as_millis() as u64,
        }));
        return Ok(());
    }
    let kept = report.levels.len() - built.len();
    println!(
        "{} houses, {} rules, levels 0..={} in {}: {entries} entries (1 byte each), {:.1} s",
        args.houses,
        args.rules,
        args.max_seeds,
        args.dir.display(),
        elapsed.as_secs_f64()
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
    Ok(())
}

/// The (houses, rules) of the databases with a level 0 in `dir`.
fn databases_in(dir: &Path) -> Result<Vec<(usize, Rules)>, CliError> {
    let listing = std::fs::read_dir(dir)
        .map_err(|e| CliError::failure(format!("cannot read {}: {e}", dir.display())))?;
    let mut found = Vec::new();
    for entry in listing.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        for houses in 1..=MAX_DB_HOUSES {
            for rules in Rules::ALL {
                if name == level_file_name(houses, rules, 0) {
                    found.push((houses, rules));
                }
            }
        }
    }
    found.sort_by_key(|&(h, r)| (h, r.as_str()));
    if found.is_empty() {
        return Err(CliError::failure(format!(
            "no database in {} (no kalah-<houses>-<rules>-000.kdb file)",
            dir.display()
        )));
    }
    Ok(found)
}

fn open_base(dir: &Path, houses: usize, rules: Rules) -> Result<Tablebase, CliError> {
    Tablebase::open(dir, houses, rules, Access::Map)
        .map_err(|e| CliError::failure(format!("cannot open the database: {e}")))
}

fn run_verify(args: VerifyArgs) -> Result<(), CliError> {
    let pool = pool(args.threads)?;
    let coverage = if args.all {
        Coverage::All
    } else {
        Coverage::Sample(args.sample)
    };
    let cancel = AtomicBool::new(false);
    let bar = ProgressBar::new_spinner();
    bar.set_style(ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("valid"));
    let mut databases = Vec::new();
    for (houses, rules) in databases_in(&args.dir)? {
        let base = open_base(&args.dir, houses, rules)?;
        let progress = |level: u32, done: u64| {
            bar.set_message(format!(
                "{houses} houses, {rules}: level {level}, {done} entries checked"
            ));
        };
        let report = pool
            .install(|| verify(&base, coverage, &cancel, &progress))
            .map_err(|e| CliError::failure(format!("verification failed: {e}")))?;
        let entries: u64 = report.levels.iter().map(|l| l.entries).sum();
        let checked: u64 = report.levels.iter().map(|l| l.checked).sum();
        if !args.json {
            bar.suspend(|| {
                println!(
                    "{houses} houses, {rules} rules, levels 0..={}: ok ({entries} entries, \
                     checksums match, {checked} checked against their moves)",
                    base.max_level()
                )
            });
        }
        databases.push(json!({
            "houses": houses,
            "rules": rules.as_str(),
            "levels": base.max_level() + 1,
            "entries": entries,
            "checked": checked,
        }));
    }
    bar.finish_and_clear();
    if args.json {
        print_json(&json!({"databases": databases, "ok": true}));
    }
    Ok(())
}

fn run_info(args: InfoArgs) -> Result<(), CliError> {
    let mut databases = Vec::new();
    for (houses, rules) in databases_in(&args.dir)? {
        let base = open_base(&args.dir, houses, rules)?;
        let mut levels = Vec::new();
        let mut total = 0;
        for k in 0..=base.max_level() {
            let path = base.path(k);
            let level = base
                .level(k)
                .map_err(|e| CliError::failure(e.to_string()))?;
            let header = std::fs::File::open(&path)
                .map_err(kalah::db::DbError::from)
                .and_then(|mut f| Header::read(&mut f))
                .map_err(|e| CliError::failure(format!("{}: {e}", path.display())))?;
            total += level.len();
            levels.push((k, level.len(), header.checksum));
        }
        let bytes = total + levels.len() as u64 * kalah::db::format::HEADER_LEN as u64;
        if args.json {
            databases.push(json!({
                "houses": houses,
                "rules": rules.as_str(),
                "max_level": base.max_level(),
                "entries": total,
                "bytes": bytes,
                "levels": levels.iter().map(|&(k, n, sum)| json!({
                    "level": k,
                    "entries": n,
                    "bytes": n + kalah::db::format::HEADER_LEN as u64,
                    "checksum": format!("{sum:016x}"),
                })).collect::<Vec<_>>(),
            }));
            continue;
        }
        println!(
            "{houses} houses, {rules} rules: levels 0..={}, {total} entries, {bytes} bytes \
             (1 byte an entry)",
            base.max_level()
        );
        for (k, n, sum) in levels {
            println!("  level {k:>2}: {n:>13} entries  checksum {sum:016x}");
        }
    }
    if args.json {
        print_json(&json!({"dir": args.dir.display().to_string(), "databases": databases}));
    }
    Ok(())
}
