//! `kalah db verify`: every level's headers, blocks and (a sample of) entries checked.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use clap::Args;
use kalah::book::Book;
use kalah::db::verify;
use kalah::db::verify::{Coverage, VerifyStep};
use serde_json::json;

use super::super::CliError;
use super::super::progress::Indicator;
use super::{databases_or_none_in, no_database, open_base, pool, report_end};

/// Check every level in DIR: headers, every block against its checksum and, for a sample of
/// entries (or all), that each entry is the best of its moves. The ledgers of DIR (`*.jsonl`)
/// too: how many of their facts were proven again by another path (only those answer), how
/// many are unchecked claims, and any found wrong or contradicting another; a directory of
/// ledgers and no level is verified too.
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
        value_parser = super::super::args::count::<u64>(0..=1 << 40)
    )]
    sample: u64,
    /// Worker threads, 1 to 64 (4 a core above 16 cores) [default: all cores].
    #[arg(long, value_name = "T", value_parser = super::super::args::threads())]
    threads: Option<usize>,
    /// Check only the levels 0..=K of each database (all of which must be there).
    #[arg(long, value_name = "K", value_parser = super::super::args::max_level())]
    max_level: Option<u32>,
    /// Print JSON: {"dir", "databases": [{"houses", "rules", "ok", "error", "levels": [{"level",
    /// "entries", "bytes", "checked", "checksum", "ok", "error", "damaged_blocks"}], "entries",
    /// "checked"}], "ledgers": [{"file", "ok", "error", "checked", "unchecked", "wrong"}], "ok"}.
    #[arg(long)]
    json: bool,
}

pub fn run(args: VerifyArgs) -> Result<(), CliError> {
    let dir = super::super::db_choice::existing_dir_or_home(&args.dir)?;
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
    // A directory of ledgers alone is verified too: it is what `query` reads as books.
    let found = databases_or_none_in(&dir)?;
    let no_ledgers = matches!(kalah::book::ledger_files(&dir), Ok(files) if files.is_empty());
    if found.is_empty() && no_ledgers {
        return Err(no_database(&dir, " or ledger (*.jsonl)"));
    }
    if found.is_empty() && !args.json {
        println!("no database in {}: its ledgers only", dir.display());
    }
    for (houses, rules) in found {
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
    let ledgers = verify_ledgers(&dir, args.json, &mut defects);
    if args.json {
        super::super::args::print_json(&json!({
            "dir": dir.display().to_string(),
            "databases": databases,
            "ledgers": ledgers,
            "ok": defects.is_empty(),
        }));
    }
    report_end(false, &dir, databases, defects)
}

/// The ledgers of `dir` (`*.jsonl`), read together with their checks as `query` reads them
/// ([`kalah::book`]), each once: how many of each one's facts were proven again by another
/// path (they answer), how many not (claims, never values), how many its checks found wrong.
/// A ledger that cannot be read, contradicts one read before it, or holds a fact found wrong
/// is a defect.
fn verify_ledgers(dir: &Path, json: bool, defects: &mut Vec<String>) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    let mut book = Book::empty();
    let files = match kalah::book::ledger_files(dir) {
        Ok(files) => files,
        Err(e) => {
            defects.push(e.to_string());
            if !json {
                println!("ledgers: FAILED: {e}");
            }
            return out;
        }
    };
    for path in &files {
        let name = path.display().to_string();
        let before = book.trust();
        let error = book.add_file(path).err().map(|e| e.to_string());
        let after = book.trust();
        // This file's share of the counts.
        let trust = kalah::book::Trust {
            checked: after.checked - before.checked,
            unchecked: after.unchecked - before.unchecked,
            wrong: after.wrong - before.wrong,
        };
        let wrong = (trust.wrong > 0).then(|| {
            format!(
                "{name}: {} facts found wrong by its checks ({})",
                trust.wrong,
                kalah::prove::certificate::checks_path(path).display()
            )
        });
        if let Some(e) = error.iter().chain(&wrong).next() {
            defects.push(e.clone());
        }
        if !json {
            match &error {
                Some(e) => println!("ledger {name}: FAILED: {e}"),
                None => println!(
                    "ledger {name}: {} facts proven again by another path (they answer), {} unchecked{}, {} found wrong",
                    trust.checked,
                    trust.unchecked,
                    if trust.unchecked > 0 {
                        format!(
                            " (shown as claims, never as values; kalah prove --check {name} --all checks them)"
                        )
                    } else {
                        String::new()
                    },
                    trust.wrong
                ),
            }
        }
        out.push(json!({
            "file": name,
            "ok": error.is_none() && trust.wrong == 0,
            "error": error,
            "checked": trust.checked,
            "unchecked": trust.unchecked,
            "wrong": trust.wrong,
        }));
    }
    out
}
