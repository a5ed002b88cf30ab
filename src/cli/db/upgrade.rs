//! `kalah db upgrade`: level files of an older form rewritten in the current one.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Args;
use kalah::db::DbError;
use kalah::db::format::BLOCK_SHIFT;
use kalah::db::upgrade::{Outcome, upgrade};
use serde_json::json;

use super::super::CliError;
use super::super::args::print_json;
use super::writer_error;

/// Rewrite the level files of an older form in DIR in the current one (entries packed at the
/// level's width, a checksum per block), after checking each one's checksums.
///
/// The older forms are format 1 (one byte an entry, one checksum a file) and the first format 2
/// files (one byte an entry, a checksum per block): the rewrite keeps every entry and shrinks the
/// files to 5/8 (levels 16 to 31). Files in the current format but in blocks of another size
/// (levels built before blocks of 512 entries: 2048) are rewritten with the same entries in
/// blocks of 512, which a fresh search checks at less cost (the files grow by 2%); each level
/// is checked against the level below as it was and chained to it as it is now, so an upgrade
/// stopped midway is finished by running it again (readers refuse the level above the last one
/// rewritten until then; they never misread it). A file whose checksum fails is left as it is
/// and reported: rebuild it (delete it and run `kalah db build`). Other files in the current
/// format are left alone. Takes the directory's build lock, so it cannot run beside a build.
#[derive(Args, Debug)]
pub struct UpgradeArgs {
    /// Directory of the level files [default: the database home].
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Print JSON: {"dir", "files": [{"file", "outcome":
    /// "upgraded"|"reblocked"|"current"|"failed", "error"}], "ok"}.
    #[arg(long)]
    json: bool,
}

pub fn run(args: UpgradeArgs) -> Result<(), CliError> {
    let dir = super::super::db_choice::existing_dir_or_home(&args.dir)?;
    let cancel = AtomicBool::new(false);
    let json = args.json;
    // Ctrl-C or SIGTERM stops the upgrade between two files (a file being written is finished
    // first): every file rewritten is kept, and the same command finishes the rest.
    kalah::catch_interrupt();
    let finished = AtomicBool::new(false);
    let report = std::thread::scope(|scope| -> Result<_, CliError> {
        super::set_on_interrupt(scope, &finished, &cancel)?;
        let report = upgrade(&dir, &cancel, &|u| {
            if json {
                return;
            }
            let name = u.path.display();
            match &u.outcome {
                Outcome::Upgraded => eprintln!("  {name}: upgraded"),
                Outcome::Reblocked { from } => eprintln!(
                    "  {name}: rewritten in blocks of {} entries (was {from})",
                    1u64 << BLOCK_SHIFT
                ),
                Outcome::Current => eprintln!("  {name}: already in the current format"),
                Outcome::Failed(e) => eprintln!("  FAILED: {e}"),
            }
        });
        finished.store(true, Ordering::Relaxed);
        Ok(report)
    })?;
    if let Err(DbError::Cancelled) = report {
        return Err(CliError {
            message: format!(
                "interrupted: every file rewritten so far is kept in {}; the same command \
                 finishes the rest",
                dir.display()
            ),
            code: 130,
        });
    }
    let report = report.map_err(|e| writer_error("cannot upgrade", e))?;
    let failed = report
        .iter()
        .filter(|u| matches!(u.outcome, Outcome::Failed(_)))
        .count();
    let upgraded = report
        .iter()
        .filter(|u| matches!(u.outcome, Outcome::Upgraded | Outcome::Reblocked { .. }))
        .count();
    if json {
        let files: Vec<_> = report
            .iter()
            .map(|u| {
                let (outcome, error) = match &u.outcome {
                    Outcome::Upgraded => ("upgraded", None),
                    Outcome::Reblocked { .. } => ("reblocked", None),
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
