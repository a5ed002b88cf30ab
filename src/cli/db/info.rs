//! `kalah db info`: the databases in a directory, their levels, entries and bytes.

use std::path::PathBuf;

use clap::Args;
use kalah::db::DbError;
use serde_json::json;

use super::super::CliError;
use super::super::args::print_json;
use super::{databases_in, open_base, report_end};

/// List the databases in DIR: houses, rules, levels, entries, bytes and fingerprints (headers
/// and file lengths are checked; entries are not read: see `db verify`). A gap in the levels
/// or a bad header is reported, and the exit code is then 1.
#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Directory of the level files [default: the database home].
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Show only the levels 0..=K of each database (all of which must be there).
    #[arg(long, value_name = "K", value_parser = super::super::args::max_level())]
    max_level: Option<u32>,
    /// Print JSON: {"dir", "databases": [{"houses", "rules", "ok", "error", "max_level",
    /// "entries", "bytes", "levels": [{"level", "entries", "bytes", "blocks", "block_entries",
    /// "entry_bits", "checksum"}]}], "ok"}.
    #[arg(long)]
    json: bool,
}

pub fn run(args: InfoArgs) -> Result<(), CliError> {
    let dir = super::super::db_choice::existing_dir_or_home(&args.dir)?;
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
                 --max-seeds 24` builds the 6-house levels up to 24 seeds: 0.80 GB, about a \
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
    report_end(args.json, &dir, databases, defects)
}
