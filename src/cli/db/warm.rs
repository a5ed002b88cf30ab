//! `kalah db warm`: the levels read into the page cache in 2 MiB pieces.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use serde_json::json;

use super::super::CliError;
use super::super::args::print_json;

/// Read the level files in DIR into the page cache in 2 MiB pages, so that searches probe them
/// at memory speed with few TLB misses.
///
/// The page cache can hold a level in 4 KiB pieces: read with plain reads, or partly reclaimed
/// under memory pressure and read back a page at a time. A search then pays a page walk on most
/// of its probes (Kalah(6,4) on the levels 0..24, one thread: 1.55-1.69 s with level 24 in small
/// pieces, 1.34-1.44 s with every level in 2 MiB pieces). `db warm` drops each level's cached pages
/// that no process maps and reads the level back through a map advised to use huge pages,
/// then says how much of it the cache holds in 2 MiB pieces. Each file is first checked to be
/// the level its name says (its header, its length): an empty or foreign file is an error
/// (exit code 1), never read into the cache. Nothing is written; pages that a
/// running search or campaign maps stay as they are (stop it first to warm them too). Levels
/// just built by `db build` are in 2 MiB pieces already.
///
/// Some systems page out the cached pages of files that no process maps once they go unused for
/// a while (this project's virtual machines run a DAMON policy that does so after a minute), and
/// the levels warmed for a series of short solves then break up again between them. `--hold`
/// keeps every level mapped after warming, until Ctrl-C or SIGTERM, so that they stay whole.
#[derive(Args, Debug)]
pub struct WarmArgs {
    /// Directory of the level files [default: the database home].
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Warm only the levels 0..=K.
    #[arg(long, value_name = "K", value_parser = super::super::args::max_level())]
    max_level: Option<u32>,
    /// Print JSON: {"dir", "levels": [{"houses", "rules", "level", "bytes", "huge_bytes",
    /// "seconds"}], "bytes", "huge_bytes", "seconds"} (huge_bytes null where the OS does not
    /// say).
    #[arg(long)]
    json: bool,
    /// After warming, keep the levels mapped until Ctrl-C or SIGTERM (then exit 0), so that a
    /// reclaim of unmapped cached pages leaves them alone. The summary is printed first; a
    /// script starts `db warm --hold` in the background, waits for that line and stops it when
    /// its solves are done. Nothing is locked in memory: real memory pressure still reclaims.
    #[arg(long)]
    hold: bool,
}

pub fn run(args: WarmArgs) -> Result<(), CliError> {
    let dir = super::super::db_choice::existing_dir_or_home(&args.dir)?;
    let files = kalah::db::tablebase::level_files(&dir)
        .map_err(|e| CliError::failure(format!("cannot read {e}")))?;
    let files: Vec<_> = files
        .into_iter()
        .filter(|f| args.max_level.is_none_or(|k| f.level <= k))
        .collect();
    if files.is_empty() {
        return Err(CliError::failure(format!(
            "no level file in {} (kalah-<houses>-<rules>-<level>.kdb)",
            dir.display()
        )));
    }
    let started = Instant::now();
    let (mut bytes, mut huge, mut known) = (0u64, 0u64, true);
    let mut levels = Vec::new();
    // Kept open with --hold, whose Ctrl-C or SIGTERM is caught from the start (so that one
    // sent as soon as the summary is read ends the hold, exit 0).
    let mut held = Vec::new();
    if args.hold {
        kalah::catch_interrupt();
    }
    // Ctrl-C stops it anywhere: nothing is written.
    for f in &files {
        if args.hold && kalah::interrupted() {
            return Err(CliError {
                message: "interrupted while warming the levels; nothing was written".to_owned(),
                code: 130,
            });
        }
        let t = Instant::now();
        // `warm` opens the file as a regular file only: a FIFO is refused without waiting.
        let level = kalah::db::warm::warm(&f.path, Some((f.houses, f.rules, f.level)))
            .map_err(|e| CliError::failure(format!("cannot warm: {e}")))?;
        let warmed = level.warmed;
        if args.hold {
            held.push(level);
        }
        let seconds = t.elapsed().as_secs_f64();
        bytes += warmed.bytes;
        match warmed.huge_bytes {
            Some(h) => huge += h,
            None => known = false,
        }
        if args.json {
            levels.push(json!({
                "houses": f.houses,
                "rules": f.rules.as_str(),
                "level": f.level,
                "bytes": warmed.bytes,
                "huge_bytes": warmed.huge_bytes,
                "seconds": (seconds * 1000.0).round() / 1000.0,
            }));
        } else {
            println!(
                "{} houses, {} rules, level {:>2}: {:>14} bytes, {} in 2 MiB pages, {:.2} s",
                f.houses,
                f.rules,
                f.level,
                warmed.bytes,
                share(warmed.huge_bytes, warmed.bytes),
                seconds
            );
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let huge = known.then_some(huge);
    if args.json {
        print_json(&json!({
            "dir": dir.display().to_string(),
            "levels": levels,
            "bytes": bytes,
            "huge_bytes": huge,
            "seconds": (seconds * 1000.0).round() / 1000.0,
        }));
    } else {
        println!(
            "{} level files, {bytes} bytes read in {seconds:.1} s, {} in 2 MiB pages",
            files.len(),
            share(huge, bytes)
        );
    }
    if args.hold {
        hold(held.len());
    }
    Ok(())
}

/// Waits for Ctrl-C or SIGTERM (caught since the start) while the caller keeps `levels` level
/// files mapped.
fn hold(levels: usize) {
    use std::io::Write;
    // The summary is out before the wait: a script reading it knows the levels are warm.
    let _ = std::io::stdout().flush();
    eprintln!("holding {levels} level files mapped; Ctrl-C or SIGTERM to let them go");
    while !kalah::interrupted() {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// "98%" of `bytes` held in 2 MiB pieces, or "unknown" where the OS does not say.
fn share(huge: Option<u64>, bytes: u64) -> String {
    match huge {
        Some(h) if bytes > 0 => format!("{:.0}%", 100.0 * h as f64 / bytes as f64),
        Some(_) => "0%".to_owned(),
        None => "unknown".to_owned(),
    }
}
