//! `kalah db build|verify|info|upgrade|warm`: the endgame databases on disk; each subcommand in a
//! file of its own under `db/`, what they share here.

pub(super) mod build;
mod info;
mod upgrade;
mod verify;
mod warm;

use std::path::Path;

use clap::{Args, Subcommand};
use kalah::Rules;
use kalah::db::{Access, DbError, MAX_DB_HOUSES, Tablebase};

use super::CliError;

/// Endgame databases: the exact value of every board with up to K seeds on it.
///
/// One file per number of seeds on the board (a "level"), named
/// kalah-<houses>-<rules>-<level>.kdb, the bits each board needs (5 up to 31 seeds, 6 up to
/// 63) and a checksum per block of 512 boards. A database of levels 0..K answers any position
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
    Build(build::BuildArgs),
    Verify(verify::VerifyArgs),
    Info(info::InfoArgs),
    Upgrade(upgrade::UpgradeArgs),
    Warm(warm::WarmArgs),
}

pub fn run(args: DbArgs) -> Result<(), CliError> {
    match args.command {
        DbCommand::Build(a) => build::run(a),
        DbCommand::Verify(a) => verify::run(a),
        DbCommand::Info(a) => info::run(a),
        DbCommand::Upgrade(a) => upgrade::run(a),
        DbCommand::Warm(a) => warm::run(a),
    }
}

/// A rayon pool with `threads` workers (all cores by default).
pub fn pool(threads: Option<usize>) -> Result<rayon::ThreadPool, CliError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .map_err(|e| CliError::failure(format!("cannot start the worker threads: {e}")))
}

/// [`super::cancel_on_interrupt`] for a job that checks `cancel`: sets it at Ctrl-C or SIGTERM.
fn set_on_interrupt<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    done: &'scope std::sync::atomic::AtomicBool,
    cancel: &'scope std::sync::atomic::AtomicBool,
) -> Result<(), CliError> {
    super::cancel_on_interrupt(scope, done, move || {
        cancel.store(true, std::sync::atomic::Ordering::Relaxed)
    })
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
    let found = databases_or_none_in(dir)?;
    if found.is_empty() {
        return Err(no_database(dir, ""));
    }
    Ok(found)
}

/// The databases in `dir` (houses and rules), perhaps none.
fn databases_or_none_in(dir: &Path) -> Result<Vec<(usize, Rules)>, CliError> {
    let files = kalah::db::tablebase::level_files(dir)
        .map_err(|e| CliError::failure(format!("cannot read {e}")))?;
    // The listing is sorted by houses, rules and level: level 0 once a database.
    Ok(files
        .iter()
        .filter(|f| f.level == 0 && (1..=MAX_DB_HOUSES).contains(&f.houses))
        .map(|f| (f.houses, f.rules))
        .collect())
}

/// The error of a directory with no database (`also`: what else it lacks, if anything).
fn no_database(dir: &Path, also: &str) -> CliError {
    CliError::failure(format!(
        "no database{also} in {} (no kalah-<houses>-<rules>-000.kdb file)",
        dir.display()
    ))
}

fn open_base(
    dir: &Path,
    houses: usize,
    rules: Rules,
    max_level: Option<u32>,
) -> Result<Tablebase, DbError> {
    Tablebase::open_up_to(dir, houses, rules, Access::Map, max_level)
}

/// The end of `db info` and `db verify`: with `json`, the report of the databases in `dir`;
/// then Ok without defects, else the first one, with the number of the others.
fn report_end(
    json: bool,
    dir: &Path,
    databases: Vec<serde_json::Value>,
    defects: Vec<String>,
) -> Result<(), CliError> {
    if json {
        super::args::print_json(&serde_json::json!({
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
