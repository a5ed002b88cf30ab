//! Game record files: read with errors that name the file and line, written whole (complete
//! or absent, never half-written).

use std::io::Write;
use std::path::{Path, PathBuf};

use kalah::play::record::Record;

use super::CliError;

/// The game record in `file`; an unreadable or invalid file is an input error naming it (and
/// the line at fault).
pub fn read_record(file: &Path) -> Result<Record, CliError> {
    let name = file.display();
    let text = std::fs::read_to_string(file)
        .map_err(|e| CliError::input(format!("cannot read {name}: {e}")))?;
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

/// Writes `text` to `path` through a temporary file beside it, renamed into place once
/// written: a run stopped halfway leaves the old file (or none), never a truncated one. The
/// temporary file is removed if the write fails. (Not synced: a match writes one record a game,
/// and a record is cheap to play again; the databases' levels are synced.)
pub fn write_whole(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = temporary(path);
    let written = std::fs::File::create(&tmp).and_then(|mut file| file.write_all(text.as_bytes()));
    match written.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// `<path>.tmp`, beside `path` (so that the rename stays within one file system).
fn temporary(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_write_replaces_the_file_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("kalah-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("game.txt");
        std::fs::write(&path, "old").unwrap();
        write_whole(&path, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert!(!dir.join("game.txt.tmp").exists());
        // A directory in the way: the write fails and leaves nothing behind.
        let blocked = dir.join("sub");
        std::fs::create_dir_all(blocked.join("x")).unwrap();
        assert!(write_whole(&blocked, "text").is_err());
        assert!(!dir.join("sub.tmp").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
