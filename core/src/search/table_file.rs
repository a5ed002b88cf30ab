//! Transposition table files: a solver's table saved during or after a solve and loaded into a
//! later one, so that a long solve that was stopped resumes with what it had proven.
//!
//! An entry holds bounds on f of a board (houses only): they hold for every position of the
//! same houses a side and capture rule, whatever its seeds or stores. The bucket of a board
//! depends on the table's size, so a file loads only into a table of its own size.
//!
//! ```text
//!  offset size  field
//!       0    8  magic            b"KALAHTT\x1a"
//!       8    4  format version   1 (little-endian, as every field)
//!      12    1  houses           m, houses a side
//!      13    1  rules            0 = standard, 1 = empty-capture
//!      14    1  origin           0 = searches (solve, analyze, a campaign's tests),
//!                                1 = the checks of a certificate (`prove --certify`)
//!      15    1  checks' levels   with origin 1: the top level they read, plus 1 (0: none)
//!      16    8  buckets          the table's buckets (64 bytes each)
//!      24    8  payload checksum over the payload's words, in order
//!      32   32  reserved         0
//!      64    n  payload          the table's words (8 bytes each, little-endian), in order
//! ```
//!
//! The checksum folds each word `w` into `h` as `h -> rotl((h ^ w) * K, 29)`, a bijection of the
//! word for a given `h`: any change confined to one word changes it. A file is written whole
//! ([`crate::files`]: a temporary file renamed into place), never half-written. The table may
//! be saved while threads search it: an entry torn between two writes fails the table's check
//! (see [`crate::search::tt`]) and is a miss once loaded, never a wrong bound.
//!
//! A certificate's check must take another path than the fact it checks, so it must not read
//! bounds that a campaign's searches stored (they may rest on the levels the check leaves out,
//! or on the very error it looks for). The origin says whose searches filled a table: a
//! table of checks serves the checks that read the same levels or more ([`TableOrigin::serves`]),
//! a table of searches serves searches only, and any table serves a search (its bounds hold
//! whatever found them; saved again, it is a table of searches).

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::rules::Rules;
use crate::search::tt::TranspositionTable;

/// The first eight bytes of every table file.
pub const MAGIC: [u8; 8] = *b"KALAHTT\x1a";
/// The format this code reads and writes.
pub const VERSION: u32 = 1;
/// Bytes before the payload.
pub const HEADER_LEN: usize = 64;

const K: u64 = 0x9E37_79B9_7F4A_7C15;
/// Words read or written at a time.
const CHUNK_WORDS: usize = 1 << 16;

/// Why a table file could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableFileError {
    /// Reading or writing failed (the path and the system's message).
    Io(String),
    /// The file is not a table file this code reads, or it is damaged.
    Format(String),
    /// The file is a table of another variant or size.
    Mismatch(String),
}

impl std::fmt::Display for TableFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableFileError::Io(m) | TableFileError::Format(m) | TableFileError::Mismatch(m) => {
                f.write_str(m)
            }
        }
    }
}

impl std::error::Error for TableFileError {}

/// Whose searches filled a table (see the module's doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TableOrigin {
    /// Solves, analyses and the tests of campaigns (and the files of older builds).
    #[default]
    Searches,
    /// The checks of a certificate that read the levels `0..=top` (`None`: no levels).
    Checks {
        /// The top level the checks read.
        top: Option<u32>,
    },
}

impl TableOrigin {
    /// Whether a table of this origin may be loaded by a solver of origin `user`: any table
    /// by a search; by a check, only a table of checks that read no level the check does not.
    pub fn serves(self, user: TableOrigin) -> bool {
        match (self, user) {
            (_, TableOrigin::Searches) => true,
            (TableOrigin::Checks { top: had }, TableOrigin::Checks { top: reads }) => {
                match (had, reads) {
                    (None, _) => true,
                    (Some(h), Some(r)) => h <= r,
                    (Some(_), None) => false,
                }
            }
            (TableOrigin::Searches, TableOrigin::Checks { .. }) => false,
        }
    }

    fn bytes(self) -> [u8; 2] {
        match self {
            TableOrigin::Searches => [0, 0],
            TableOrigin::Checks { top } => [1, top.map_or(0, |t| (t + 1).min(255) as u8)],
        }
    }

    fn from_bytes(b: [u8; 2]) -> Option<TableOrigin> {
        match b {
            [0, _] => Some(TableOrigin::Searches),
            [1, t] => Some(TableOrigin::Checks {
                top: t.checked_sub(1).map(u32::from),
            }),
            _ => None,
        }
    }
}

impl std::fmt::Display for TableOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableOrigin::Searches => f.write_str("searches (a solve, an analysis or a campaign)"),
            TableOrigin::Checks { top: Some(t) } => {
                write!(f, "the checks of a certificate on the levels 0..{t}")
            }
            TableOrigin::Checks { top: None } => {
                f.write_str("the checks of a certificate without levels")
            }
        }
    }
}

/// What a table file's header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableFileHeader {
    /// Houses a side.
    pub houses: usize,
    /// Capture rule.
    pub rules: Rules,
    /// The table's buckets.
    pub buckets: usize,
    /// Whose searches filled it.
    pub origin: TableOrigin,
}

impl TableFileHeader {
    /// The table's size in MiB, as [`TranspositionTable::new`] takes it.
    pub fn mib(&self) -> usize {
        (self.buckets * TranspositionTable::BUCKET_BYTES) >> 20
    }

    /// Checks that the file at `path`, of this header, holds a table for `houses` houses a side
    /// under `rules`.
    pub fn check_variant(
        &self,
        houses: usize,
        rules: Rules,
        path: &Path,
    ) -> Result<(), TableFileError> {
        if (self.houses, self.rules) != (houses, rules) {
            return Err(TableFileError::Mismatch(format!(
                "{} holds a table for {} houses, {} rules, not {houses} houses, {rules} rules",
                path.display(),
                self.houses,
                self.rules
            )));
        }
        Ok(())
    }

    /// Checks that the file at `path`, of this header, may be loaded by a solver of origin
    /// `user` ([`TableOrigin::serves`]).
    pub fn check_origin(&self, user: TableOrigin, path: &Path) -> Result<(), TableFileError> {
        if !self.origin.serves(user) {
            return Err(TableFileError::Mismatch(format!(
                "{} holds a table filled by {}; {user} may load only a table that such checks filled, on no more levels than theirs (another file, or none)",
                path.display(),
                self.origin
            )));
        }
        Ok(())
    }
}

#[inline(always)]
fn fold(h: u64, w: u64) -> u64 {
    ((h ^ w).wrapping_mul(K)).rotate_left(29)
}

fn io_error(path: &Path, what: &str, e: std::io::Error) -> TableFileError {
    TableFileError::Io(format!("cannot {what} {}: {e}", path.display()))
}

/// Reads and checks the header of the table file at `path`.
pub fn read_header(path: &Path) -> Result<TableFileHeader, TableFileError> {
    let mut file = crate::files::open_regular(path).map_err(|e| io_error(path, "open", e))?;
    header_of(&mut file, path)
}

fn header_of(file: &mut File, path: &Path) -> Result<TableFileHeader, TableFileError> {
    let mut h = [0u8; HEADER_LEN];
    file.read_exact(&mut h).map_err(|_| {
        TableFileError::Format(format!("{} is too short for a table file", path.display()))
    })?;
    let len = file
        .metadata()
        .map_err(|e| io_error(path, "read", e))?
        .len();
    parse_header(&h, len).map_err(|why| TableFileError::Format(format!("{} {why}", path.display())))
}

/// The header `h` of a table file of `len` bytes, every field checked against what a table
/// file can hold (the error says which, after the file's name: "is not a kalah table file").
pub fn parse_header(h: &[u8; HEADER_LEN], len: u64) -> Result<TableFileHeader, String> {
    if h[0..8] != MAGIC {
        return Err("is not a kalah table file".into());
    }
    let version = u32::from_le_bytes(h[8..12].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(format!(
            "has format version {version}; this build reads version {VERSION}"
        ));
    }
    let houses = usize::from(h[12]);
    if !(1..=crate::rules::MAX_HOUSES).contains(&houses) {
        return Err(format!("names a board of {houses} houses a side"));
    }
    let rules =
        Rules::from_code(h[13]).ok_or_else(|| format!("names unknown rules ({})", h[13]))?;
    let buckets = u64::from_le_bytes(h[16..24].try_into().expect("8 bytes"));
    let words = buckets
        .checked_mul(TranspositionTable::BUCKET_WORDS as u64)
        .filter(|&w| buckets > 0 && w < 1 << 40)
        .ok_or("has an impossible table size")?;
    if len != HEADER_LEN as u64 + 8 * words {
        return Err(format!(
            "is {len} bytes, not the {} of its {buckets} buckets (truncated?)",
            HEADER_LEN as u64 + 8 * words
        ));
    }
    let origin = TableOrigin::from_bytes([h[14], h[15]])
        .ok_or_else(|| format!("names an unknown origin ({})", h[14]))?;
    Ok(TableFileHeader {
        houses,
        rules,
        buckets: usize::try_from(buckets).map_err(|_| "has an impossible table size")?,
        origin,
    })
}

/// Saves `tt`, the table of a solver for `houses` houses a side under `rules`, to `path`
/// (whole, and synced: [`crate::files::write_whole`]). Any failure to write (a full disk, a
/// directory that cannot be written) is an error naming `path`, and leaves the file that was
/// there before. `origin` says whose searches filled it.
pub fn save(
    tt: &TranspositionTable,
    houses: usize,
    rules: Rules,
    origin: TableOrigin,
    path: &Path,
) -> Result<(), TableFileError> {
    crate::files::write_whole(path, |file| write_file(tt, houses, rules, origin, file))
        .map_err(|e| io_error(path, "write", e))
}

/// Writes the header and the payload of `tt` to `file`, then the checksum, and syncs it.
fn write_file(
    tt: &TranspositionTable,
    houses: usize,
    rules: Rules,
    origin: TableOrigin,
    file: &mut File,
) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut header = [0u8; HEADER_LEN];
    header[0..8].copy_from_slice(&MAGIC);
    header[8..12].copy_from_slice(&VERSION.to_le_bytes());
    header[12] = houses as u8;
    header[13] = rules.code();
    header[14..16].copy_from_slice(&origin.bytes());
    header[16..24].copy_from_slice(&(tt.buckets() as u64).to_le_bytes());
    out.write_all(&header)?;
    let mut h = 0;
    let mut bytes = Vec::with_capacity(8 * CHUNK_WORDS);
    for chunk in tt.words().chunks(CHUNK_WORDS) {
        bytes.clear();
        for word in chunk {
            let w = word.load(std::sync::atomic::Ordering::Relaxed);
            h = fold(h, w);
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        out.write_all(&bytes)?;
    }
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.seek(SeekFrom::Start(24))?;
    file.write_all(&h.to_le_bytes())?;
    file.sync_all()
}

/// Loads the table file at `path` into `tt`, the table of a solver for `houses` houses a side
/// under `rules`, for a solver of origin `user` ([`TableOrigin::serves`]): the file must be of
/// the same variant and size. If the payload turns out
/// damaged, `tt` is cleared and the error says so.
pub fn load(
    tt: &TranspositionTable,
    houses: usize,
    rules: Rules,
    user: TableOrigin,
    path: &Path,
) -> Result<(), TableFileError> {
    let mut file = crate::files::open_regular(path).map_err(|e| io_error(path, "open", e))?;
    let header = header_of(&mut file, path)?;
    header.check_variant(houses, rules, path)?;
    header.check_origin(user, path)?;
    if header.buckets != tt.buckets() {
        return Err(TableFileError::Mismatch(format!(
            "{} holds a {} MiB table, not {} MiB",
            path.display(),
            header.mib(),
            tt.bytes() >> 20
        )));
    }
    tt.use_all();
    let stored = {
        let mut input = BufReader::with_capacity(1 << 20, &mut file);
        let mut bytes = vec![0u8; 8 * CHUNK_WORDS];
        let mut h = 0;
        for chunk in tt.words().chunks(CHUNK_WORDS) {
            let bytes = &mut bytes[..8 * chunk.len()];
            input
                .read_exact(bytes)
                .map_err(|e| io_error(path, "read", e))?;
            for (word, b) in chunk.iter().zip(bytes.chunks_exact(8)) {
                let w = u64::from_le_bytes(b.try_into().expect("8 bytes"));
                h = fold(h, w);
                word.store(w, std::sync::atomic::Ordering::Relaxed);
            }
        }
        h
    };
    let mut sum = [0u8; 8];
    file.seek(SeekFrom::Start(24))
        .and_then(|_| file.read_exact(&mut sum))
        .map_err(|e| io_error(path, "read", e))?;
    if u64::from_le_bytes(sum) != stored {
        tt.clear();
        return Err(TableFileError::Format(format!(
            "{} is damaged (checksum mismatch): not used; delete it (or name another file) to \
             start from an empty table",
            path.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lanes::Narrow;
    use crate::scratch::Scratch;
    use crate::search::tt::{EXACT_DEPTH, Entry};

    fn key(i: u64) -> Narrow {
        Narrow(u128::from(i) * 0x9E37_79B9 + 17)
    }

    fn entry(i: u64) -> Entry {
        Entry {
            lower: -(i as i32 % 40),
            upper: i as i32 % 40,
            best: Some(i as usize % 6),
            work: (i % 50) as u8,
            depth: EXACT_DEPTH,
        }
    }

    #[test]
    fn a_saved_table_loads_back_and_damage_is_caught() {
        let dir = Scratch::new("table-file");
        let path = dir.join("table.ktt");
        let tt = TranspositionTable::new(1).unwrap();
        for i in 0..2000 {
            tt.store(key(i), entry(i));
        }
        save(&tt, 6, Rules::Standard, TableOrigin::Searches, &path).unwrap();
        assert!(!dir.join("table.ktt.tmp").exists());
        let header = read_header(&path).unwrap();
        assert_eq!(
            (header.houses, header.rules, header.mib()),
            (6, Rules::Standard, 1)
        );

        let loaded = TranspositionTable::new(1).unwrap();
        load(&loaded, 6, Rules::Standard, TableOrigin::Searches, &path).unwrap();
        for i in 0..2000 {
            assert_eq!(loaded.probe(key(i)), tt.probe(key(i)), "{i}");
        }
        // Another variant or size is refused.
        let other = TranspositionTable::new(2).unwrap();
        assert!(matches!(
            load(&other, 6, Rules::Standard, TableOrigin::Searches, &path),
            Err(TableFileError::Mismatch(_))
        ));
        assert!(matches!(
            load(
                &loaded,
                6,
                Rules::EmptyCapture,
                TableOrigin::Searches,
                &path
            ),
            Err(TableFileError::Mismatch(_))
        ));
        // A flipped byte in the payload: refused, and the table is left empty.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[HEADER_LEN + 1000] ^= 0x10;
        std::fs::write(&path, &bytes).unwrap();
        assert!(matches!(
            load(&loaded, 6, Rules::Standard, TableOrigin::Searches, &path),
            Err(TableFileError::Format(_))
        ));
        assert!((0..2000).all(|i| loaded.probe(key(i)).is_none()));
        // Truncated, or not a table file at all.
        std::fs::write(&path, &bytes[..bytes.len() - 8]).unwrap();
        assert!(matches!(read_header(&path), Err(TableFileError::Format(_))));
        std::fs::write(&path, b"hello").unwrap();
        assert!(matches!(read_header(&path), Err(TableFileError::Format(_))));
    }

    #[test]
    fn a_table_of_checks_serves_only_checks_on_as_many_levels_or_more() {
        let dir = Scratch::new("table-origin");
        let path = dir.join("table.ktt");
        let tt = TranspositionTable::new(1).unwrap();
        for i in 0..100 {
            tt.store(key(i), entry(i));
        }
        let checks = |top| TableOrigin::Checks { top };
        let load_as = |user| load(&tt, 6, Rules::Standard, user, &path);
        // A table of searches (or of an older build: origin 0) serves searches only.
        save(&tt, 6, Rules::Standard, TableOrigin::Searches, &path).unwrap();
        assert_eq!(read_header(&path).unwrap().origin, TableOrigin::Searches);
        assert!(load_as(TableOrigin::Searches).is_ok());
        assert!(matches!(
            load_as(checks(Some(30))),
            Err(TableFileError::Mismatch(_))
        ));
        // A table of checks on the levels 0..30 serves searches and checks that read them.
        save(&tt, 6, Rules::Standard, checks(Some(30)), &path).unwrap();
        assert_eq!(read_header(&path).unwrap().origin, checks(Some(30)));
        for user in [TableOrigin::Searches, checks(Some(30)), checks(Some(31))] {
            assert!(load_as(user).is_ok(), "{user}");
        }
        for user in [checks(Some(29)), checks(None)] {
            assert!(
                matches!(load_as(user), Err(TableFileError::Mismatch(_))),
                "{user}"
            );
        }
        // Checks without levels serve every check.
        save(&tt, 6, Rules::Standard, checks(None), &path).unwrap();
        assert_eq!(read_header(&path).unwrap().origin, checks(None));
        assert!(load_as(checks(None)).is_ok() && load_as(checks(Some(3))).is_ok());
        // An origin this build does not know is a damaged header.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[14] = 7;
        std::fs::write(&path, &bytes).unwrap();
        assert!(matches!(read_header(&path), Err(TableFileError::Format(_))));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_table_that_cannot_be_written_is_an_error_naming_the_file() {
        let tt = TranspositionTable::new(1).unwrap();
        // /dev/full fails every write as a full disk does.
        let mut full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let e = write_file(&tt, 6, Rules::Standard, TableOrigin::Searches, &mut full).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
        // A directory that is a file: no temporary can be made there, not even by root.
        let dir = Scratch::new("table-full");
        let blocker = dir.join("file");
        std::fs::write(&blocker, "x").unwrap();
        let path = blocker.join("table.ktt");
        let e = save(&tt, 6, Rules::Standard, TableOrigin::Searches, &path).unwrap_err();
        assert!(
            matches!(&e, TableFileError::Io(m) if m.contains("table.ktt")),
            "{e}"
        );
        // A FIFO is refused at once, not waited on.
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        assert!(matches!(read_header(&fifo), Err(TableFileError::Io(_))));
    }
}
