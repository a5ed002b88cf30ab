//! Game record files: read with errors that name the file and line, written whole (complete
//! or absent, never half-written).

use std::io::Write;
use std::path::Path;

use kalah::files::Claimed;
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
