//! Game record files: read with errors that name the file and line, claimed for a game before
//! it starts, written whole (complete or absent, never half-written).

use std::io::Write;
use std::path::{Path, PathBuf};

use kalah::files::{ClaimError, Claimed};
use kalah::play::record::{MAX_RECORD_BYTES, Record};

use super::CliError;

/// The game record in `file`; an unreadable or invalid file is an input error naming it (and
/// the line at fault). Only a regular file of at most [`MAX_RECORD_BYTES`] is read: a FIFO or
/// a device (`/dev/zero`) is refused at once, without waiting or reading.
pub fn read_record(file: &Path) -> Result<Record, CliError> {
    let name = file.display();
    let text = kalah::files::read_text(file, MAX_RECORD_BYTES)
        .map_err(|e| CliError::input(format!("cannot read the record {name}: {e}")))?;
    Record::parse(&text).map_err(|e| {
        // A file with no header at all is not a damaged record: it is not one.
        if !text.lines().any(|l| l.trim_start().starts_with("variant:")) {
            return CliError::input(format!(
                "{name} is not a game record: a record starts with header lines such as \
                 `variant: Kalah(6,4)`, then one line a turn (`south 3-6`); `kalah play \
                 --record` and `kalah match --record` write them (line {}: {})",
                e.line.max(1),
                e.message
            ));
        }
        if e.line == 0 {
            CliError::input(format!("invalid record {name}: {}", e.message))
        } else {
            CliError::input(format!(
                "invalid record {name}, line {}: {}",
                e.line, e.message
            ))
        }
    })
}

/// Writes `text` to `path` whole ([`kalah::files::write_whole`]). (Not synced: a match writes
/// one record a game, and a record is cheap to play again; the databases' levels are synced.)
pub fn write_whole(path: &Path, text: &str) -> std::io::Result<()> {
    kalah::files::write_whole(path, |file| file.write_all(text.as_bytes()))
}

/// Writes `text` whole to the file `claimed` holds, keeping the claim
/// ([`kalah::files::Claimed::replace`]; not synced, as [`write_whole`]).
pub fn replace_whole(claimed: &mut Claimed, text: &str) -> std::io::Result<()> {
    claimed.replace(|file| file.write_all(text.as_bytes()))
}

/// Where `quit` saves when no --record is given (or, if a game is there already,
/// `kalah-saved-game-2.txt`, ...).
const SAVED_GAME: &str = "kalah-saved-game";

/// Claims `path` for the record of this game ([`kalah::files::claim`]), before it starts: a
/// file another game holds, anything but a regular file, a place where no file can be made,
/// and (unless `force`) a file with something in it that is not the game being `resumed`, are
/// refused.
pub fn claim_record(path: &Path, resumed: Option<&Path>, force: bool) -> Result<Claimed, CliError> {
    let name = path.display();
    let claimed = kalah::files::claim(path, false).map_err(|e| match e {
        ClaimError::InUse => CliError::input(format!(
            "--record {name} is in use by another game (wait for it to end, or choose another \
             file)"
        )),
        ClaimError::Io(e) => CliError::input(format!("--record {name} cannot be written: {e}")),
    })?;
    let resuming = resumed.is_some_and(|r| same_file(r, path));
    let holds_data = claimed
        .len()
        .map_err(|e| CliError::input(format!("--record {name}: {e}")))?
        > 0;
    if claimed.existed() && holds_data && !resuming && !force {
        return Err(CliError::input(format!(
            "--record {name} already exists and is not the game being resumed: give --force to \
             replace it"
        )));
    }
    // The first save of a resumed game comes only after a move.
    kalah::files::check_writable(path)
        .map_err(|e| CliError::input(format!("--record {name} cannot be written: {e}")))?;
    Ok(claimed)
}

/// Whether `a` and `b` name the same file.
fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// A file for `quit` to save the game in, when no --record is given: kalah-saved-game.txt, or
/// (unless `force`) the first of kalah-saved-game-2.txt, -3, ... that does not exist, so that
/// no saved game is ever replaced.
pub fn claim_saved_game(force: bool) -> Result<Claimed, CliError> {
    const TRIES: u32 = 1000;
    for n in 1..=TRIES {
        let path = match n {
            1 => PathBuf::from(format!("{SAVED_GAME}.txt")),
            n => PathBuf::from(format!("{SAVED_GAME}-{n}.txt")),
        };
        match kalah::files::claim(&path, false) {
            Ok(claimed) if force || !claimed.existed() || claimed.is_empty().unwrap_or(false) => {
                return Ok(claimed);
            }
            Ok(_) | Err(ClaimError::InUse) => continue,
            Err(ClaimError::Io(e)) => {
                return Err(CliError::failure(format!(
                    "cannot save the game to {}: {e}",
                    path.display()
                )));
            }
        }
    }
    Err(CliError::failure(format!(
        "cannot save the game: {SAVED_GAME}.txt to {SAVED_GAME}-{TRIES}.txt all exist (give \
         --record FILE)"
    )))
}
