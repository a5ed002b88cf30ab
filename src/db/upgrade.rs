//! Older level files rewritten in the current form: format 1 files after their one checksum
//! passed, and format 2 files of one byte an entry (the first builds of format 2) after every
//! block passed its check, both packed at their level's width ([`crate::db::packed`]).
//!
//! Format 1 had the same 64-byte header layout with version 1, byte 15 reserved (0) and, at
//! offset 32, one checksum of all the entries (below), the header checksum at 40 being the same
//! function of bytes 0..40; the entries followed the header, one byte each, and nothing after
//! them. Its readers never checked the entries' checksum, so a damaged byte was read as a value;
//! an upgrade checks it once, over the whole file, and writes the same entries with a checksum
//! a block ([`crate::db::format`]). A file whose checksum fails is left alone and reported: it
//! must be rebuilt.
//!
//! The format 1 checksum: a 64-bit multiply-rotate hash over little-endian 8-byte words (the
//! tail zero-padded) and the length, in four interleaved lanes folded at the end.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::db::build::write_level;
use crate::db::format::{HEADER_LEN, MAGIC};
use crate::db::storage::open_level_any_width;
use crate::db::{DbError, MAX_DB_HOUSES, MAX_LEVEL, level_len};
use crate::rules::Rules;

const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// The format 1 checksum of `bytes` (see the module docs).
pub fn checksum_v1(bytes: &[u8]) -> u64 {
    let word = |w: &[u8]| u64::from_le_bytes(w.try_into().expect("8-byte word"));
    let mut lanes = [
        0x243F_6A88_85A3_08D3u64,
        0x1319_8A2E_0370_7344,
        0xA409_3822_299F_31D0,
        0x082E_FA98_EC4E_6C89,
    ];
    let mut blocks = bytes.chunks_exact(32);
    for block in &mut blocks {
        for (lane, w) in lanes.iter_mut().zip(block.chunks_exact(8)) {
            *lane = step(*lane, word(w));
        }
    }
    let mut h = bytes.len() as u64;
    for lane in lanes {
        h = step(h, lane);
    }
    let mut words = blocks.remainder().chunks_exact(8);
    for w in &mut words {
        h = step(h, word(w));
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        let mut last = [0u8; 8];
        last[..tail.len()].copy_from_slice(tail);
        h = step(h, u64::from_le_bytes(last));
    }
    step(h, 0)
}

#[inline(always)]
fn step(h: u64, word: u64) -> u64 {
    ((h ^ word).wrapping_mul(K)).rotate_left(29)
}

/// What a format 1 header says.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct HeaderV1 {
    /// Houses a side.
    pub houses: u8,
    /// Capture rule.
    pub rules: Rules,
    /// Seeds on the board.
    pub level: u32,
    /// Entries.
    pub entries: u64,
    /// Checksum of the entries.
    pub checksum: u64,
}

impl HeaderV1 {
    /// Parses a format 1 header (`None` if the bytes are not one: another version, or damaged).
    pub fn from_bytes(b: &[u8]) -> Option<HeaderV1> {
        let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
        if b.len() < HEADER_LEN || b[0..8] != MAGIC || b[8..12] != 1u32.to_le_bytes() {
            return None;
        }
        if word(40) != checksum_v1(&b[..40]) || b[14] != 8 {
            return None;
        }
        Some(HeaderV1 {
            houses: b[12],
            rules: Rules::from_code(b[13])?,
            level: u32::from_le_bytes(b[16..20].try_into().expect("4 bytes")),
            entries: word(24),
            checksum: word(32),
        })
    }

    /// The 64 header bytes (for tests: this build writes format 1 no more).
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..12].copy_from_slice(&1u32.to_le_bytes());
        b[12] = self.houses;
        b[13] = self.rules.code();
        b[14] = 8;
        b[16..20].copy_from_slice(&self.level.to_le_bytes());
        b[24..32].copy_from_slice(&self.entries.to_le_bytes());
        b[32..40].copy_from_slice(&self.checksum.to_le_bytes());
        let check = checksum_v1(&b[..40]);
        b[40..48].copy_from_slice(&check.to_le_bytes());
        b
    }
}

/// One file an upgrade looked at.
#[derive(Debug)]
pub struct Upgraded {
    /// The file.
    pub path: PathBuf,
    /// What happened.
    pub outcome: Outcome,
}

/// What [`upgrade`] did with one file.
#[derive(Debug)]
pub enum Outcome {
    /// Rewritten in the current format.
    Upgraded,
    /// Already in the current format (left alone).
    Current,
    /// Left alone: it cannot be upgraded (damaged, or not a level file of an older form);
    /// rebuild it.
    Failed(DbError),
}

/// Rewrites every format 1 and byte-wide format 2 level file in `dir` in the current form,
/// holding the directory's build lock. Each file's checksums are checked first; a file that
/// fails is left alone and reported. `progress` gets each file as it is done.
pub fn upgrade(
    dir: &Path,
    cancel: &AtomicBool,
    progress: &(dyn Fn(&Upgraded) + Sync),
) -> Result<Vec<Upgraded>, DbError> {
    let _lock = crate::db::lock::lock(dir)?;
    let mut paths = Vec::new();
    for file in crate::db::tablebase::level_files(dir)? {
        if (1..=MAX_DB_HOUSES).contains(&file.houses) {
            file.refuse_non_regular()?;
            paths.push((file.path, (file.houses, file.rules, file.level)));
        }
    }
    let mut done = Vec::new();
    for (path, named) in paths {
        if cancel.load(Ordering::Relaxed) {
            return Err(DbError::Cancelled);
        }
        let outcome = match upgrade_file(&path, named, cancel) {
            Ok(true) => Outcome::Upgraded,
            Ok(false) => Outcome::Current,
            Err(e) => Outcome::Failed(e.in_file(&path)),
        };
        let upgraded = Upgraded { path, outcome };
        progress(&upgraded);
        done.push(upgraded);
    }
    Ok(done)
}

/// An error unless a header's houses, rules and level are those its file's name says.
fn agrees(said: (usize, Rules, u32), named: (usize, Rules, u32)) -> Result<(), DbError> {
    if said == named {
        return Ok(());
    }
    Err(DbError::Corrupt(format!(
        "its header says {} houses, {} rules, level {}, but its name says {} houses, {} rules, \
         level {}",
        said.0, said.1, said.2, named.0, named.1, named.2
    )))
}

/// Rewrites one file, named for `named` (houses, rules, level); `false` if it is in the
/// current format already (its header agreeing with its name and its length with its header).
fn upgrade_file(
    path: &Path,
    named: (usize, Rules, u32),
    cancel: &AtomicBool,
) -> Result<bool, DbError> {
    let file = crate::files::open_regular(path)?;
    let map = crate::memory::map_file(&file)?;
    let head = &map[..map.len().min(HEADER_LEN)];
    match crate::db::format::Header::from_bytes(head) {
        Ok(header) => {
            agrees(
                (usize::from(header.houses), header.rules, header.level),
                named,
            )?;
            if map.len() as u64 != header.file_len() {
                return Err(DbError::Truncated {
                    expected: header.file_len(),
                    found: map.len() as u64,
                });
            }
            return Ok(false);
        }
        Err(DbError::ByteWide { .. }) => return pack_byte_wide(path, head, cancel).map(|()| true),
        Err(_) => {}
    }
    let Some(header) = HeaderV1::from_bytes(head) else {
        // Say what is wrong in the current format's words (bad magic, damaged header, ...).
        return Err(match crate::db::format::Header::from_bytes(head) {
            Err(DbError::Version(1)) => DbError::HeaderChecksum,
            Err(e) => e,
            Ok(_) => unreachable!("checked above"),
        });
    };
    // Checked before any size is worked out from the header: a level of 1000 seeds has no
    // width.
    agrees(
        (usize::from(header.houses), header.rules, header.level),
        named,
    )?;
    if !(1..=MAX_DB_HOUSES).contains(&usize::from(header.houses)) || header.level > MAX_LEVEL {
        return Err(DbError::Corrupt(format!(
            "{} houses, level {}: not a level that databases index",
            header.houses, header.level
        )));
    }
    if header.entries != level_len(usize::from(header.houses), header.level) {
        return Err(DbError::Corrupt(format!(
            "its header says {} entries, but level {} of {} houses has {}",
            header.entries,
            header.level,
            header.houses,
            level_len(usize::from(header.houses), header.level)
        )));
    }
    let expected = HEADER_LEN as u64 + header.entries;
    if map.len() as u64 != expected {
        return Err(DbError::Truncated {
            expected,
            found: map.len() as u64,
        });
    }
    let entries = &map[HEADER_LEN..];
    let found = checksum_v1(entries);
    if found != header.checksum {
        return Err(DbError::Checksum {
            expected: header.checksum,
            found,
        });
    }
    if entries.iter().any(|&e| u32::from(e) > header.level) {
        return Err(DbError::Corrupt("an entry above the level".into()));
    }
    write_level(
        path,
        usize::from(header.houses),
        header.rules,
        header.level,
        entries,
        lineage_below(path, header.level),
    )?;
    Ok(true)
}

/// Rewrites a format 2 file of one byte an entry (header `head`) packed at its level's width,
/// once its header, length and every block passed their checks.
fn pack_byte_wide(path: &Path, head: &[u8], cancel: &AtomicBool) -> Result<(), DbError> {
    let header = crate::db::format::Header::from_bytes_any_width(head)?;
    let houses = usize::from(header.houses);
    if !(1..=MAX_DB_HOUSES).contains(&houses) || header.level > MAX_LEVEL {
        return Err(DbError::Corrupt(format!(
            "{houses} houses, level {}: not a level that databases index",
            header.level
        )));
    }
    let entries = level_len(houses, header.level);
    let level = open_level_any_width(path, houses, header.rules, header.level, entries)?;
    let damage = level.check_all(cancel, &|_| {})?;
    if let Some(defect) = level.defect(&damage) {
        return Err(defect);
    }
    let bytes = level.entries_unchecked().expect("a mapped level").bytes();
    if let Some(at) = bytes.iter().position(|&e| u32::from(e) > header.level) {
        return Err(DbError::OutOfRange {
            level: header.level,
            entry: at as u64,
            stored: bytes[at],
        });
    }
    write_level(
        path,
        houses,
        header.rules,
        header.level,
        bytes,
        lineage_below(path, header.level),
    )
}

/// The lineage a level `level` written at `path` records: that of the level below it, as its
/// file in the same directory says (already upgraded: the files go level by level upwards);
/// `None` for level 0, or when that file cannot be read as a current level.
fn lineage_below(path: &Path, level: u32) -> Option<u64> {
    let below = level.checked_sub(1)?;
    let name = path.file_name()?.to_str()?;
    let below_name = name.replace(&format!("-{level:03}.kdb"), &format!("-{below:03}.kdb"));
    let mut file = crate::files::open_regular(&path.with_file_name(below_name)).ok()?;
    let header = crate::db::format::Header::read(&mut file).ok()?;
    Some(crate::db::format::lineage_after(&header))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_byte_changes_the_v1_checksum() {
        let mut data: Vec<u8> = (0..100u32).map(|i| (i * 7 % 251) as u8).collect();
        for len in [0, 1, 7, 8, 31, 32, 33, 100] {
            let base = checksum_v1(&data[..len]);
            for i in 0..len {
                data[i] ^= 0x10;
                assert_ne!(checksum_v1(&data[..len]), base, "len {len} byte {i}");
                data[i] ^= 0x10;
            }
        }
    }

    #[test]
    fn v1_headers_round_trip() {
        let h = HeaderV1 {
            houses: 4,
            rules: Rules::Standard,
            level: 9,
            entries: 100,
            checksum: 5,
        };
        assert_eq!(HeaderV1::from_bytes(&h.to_bytes()), Some(h));
        let mut bad = h.to_bytes();
        bad[20] = 1;
        assert_eq!(HeaderV1::from_bytes(&bad), None);
    }
}
