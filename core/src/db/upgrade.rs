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
//! Format 2 files whose blocks are not of the size this build writes
//! ([`crate::db::format::BLOCK_SHIFT`]; levels written before it were in blocks of 2048
//! entries) are rewritten with the same entries and a new block table, once every block passed
//! its check ([`reblock`]). A level's lineage names the table checksum of the level below, which
//! the new blocks change, so the levels of one set are rewritten upwards, each checked against
//! the level below as it was and chained to it as it is now. The headers as they were are kept
//! in a journal (`.kalah-reblock-<houses>-<rules>.journal` in the directory) until the whole set
//! is done: an upgrade stopped between two levels leaves a level over one already rewritten, whose
//! lineage no longer matches (readers refuse it, they never misread it), and the next upgrade
//! checks it against the journal's header of the level below and carries on.
//!
//! The format 1 checksum: a 64-bit multiply-rotate hash over little-endian 8-byte words (the
//! tail zero-padded) and the length, in four interleaved lanes folded at the end.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::db::build::write_level;
use crate::db::format::{
    BLOCK_SHIFT, HEADER_LEN, Header, MAGIC, block_table, lineage_after, table_checksum,
};
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
    /// Rewritten with blocks of the size this build writes (the entries unchanged); `from`:
    /// the entries a block held before.
    Reblocked {
        /// Entries a block held before.
        from: u64,
    },
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
    // The files come in order of houses, rules and level: one journal a set of levels.
    let mut journal: Option<Journal> = None;
    for (path, named) in paths {
        if cancel.load(Ordering::Relaxed) {
            return Err(DbError::Cancelled);
        }
        let set = (named.0, named.1);
        if journal.as_ref().is_none_or(|j| j.set != set) {
            if let Some(j) = journal.take() {
                j.finish()?;
            }
            journal = Some(Journal::load(dir, set)?);
        }
        let j = journal.as_mut().expect("loaded above");
        let outcome = match upgrade_file(&path, named, cancel, j) {
            Ok(outcome) => outcome,
            Err(DbError::Cancelled) => return Err(DbError::Cancelled),
            Err(e) => {
                j.complete = false;
                Outcome::Failed(e.in_file(&path))
            }
        };
        let upgraded = Upgraded { path, outcome };
        progress(&upgraded);
        done.push(upgraded);
    }
    if let Some(j) = journal {
        j.finish()?;
    }
    Ok(done)
}

/// The headers of the levels of one set (houses, rules) that [`reblock`] rewrote, as they were
/// before, kept on disk until every level of the set has been rewritten (see the module docs).
struct Journal {
    set: (usize, Rules),
    path: PathBuf,
    old: HashMap<u32, Header>,
    /// Whether every file of the set seen so far is in the current form.
    complete: bool,
}

impl Journal {
    /// The journal of `set` in `dir` (empty if there is none).
    fn load(dir: &Path, set: (usize, Rules)) -> Result<Journal, DbError> {
        let path = dir.join(format!(".kalah-reblock-{}-{}.journal", set.0, set.1));
        let mut old = HashMap::new();
        match std::fs::read(&path) {
            Ok(bytes) => {
                // Written whole each time, so every record is complete; one that does not parse
                // (damaged) is skipped, and the level above it then fails its lineage check.
                for record in bytes.chunks_exact(HEADER_LEN) {
                    if let Ok(h) = Header::from_bytes(record) {
                        if (usize::from(h.houses), h.rules) == set {
                            old.insert(h.level, h);
                        }
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(DbError::from(e).in_file(&path)),
        }
        Ok(Journal {
            set,
            path,
            old,
            complete: true,
        })
    }

    /// Records `header`, the header of a level about to be rewritten, on disk first (synced,
    /// the rename too, before the level is replaced).
    fn record(&mut self, header: Header) -> Result<(), DbError> {
        self.old.insert(header.level, header);
        let mut levels: Vec<_> = self.old.values().collect();
        levels.sort_by_key(|h| h.level);
        let bytes: Vec<u8> = levels.iter().flat_map(|h| h.to_bytes()).collect();
        crate::files::write_whole(&self.path, |file| {
            use std::io::Write;
            file.write_all(&bytes)?;
            file.sync_all()
        })
        .and_then(|()| crate::files::sync_parent(&self.path))
        .map_err(|e| DbError::from(e).in_file(&self.path))
    }

    /// Removes the journal once every file of its set is in the current form.
    fn finish(self) -> Result<(), DbError> {
        if !self.complete {
            return Ok(());
        }
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(DbError::from(e).in_file(&self.path)),
        }
    }
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
    journal: &mut Journal,
) -> Result<Outcome, DbError> {
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
            if header.block_shift == BLOCK_SHIFT {
                return Ok(Outcome::Current);
            }
            drop(map);
            let from = header.block_entries();
            return reblock(path, header, BLOCK_SHIFT, cancel, journal)
                .map(|()| Outcome::Reblocked { from });
        }
        Err(DbError::ByteWide { .. }) => {
            return pack_byte_wide(path, head, cancel).map(|()| Outcome::Upgraded);
        }
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
        lineage_below(path, usize::from(header.houses), header.rules, header.level),
    )?;
    Ok(Outcome::Upgraded)
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
        lineage_below(path, houses, header.rules, header.level),
    )
}

/// Rewrites the current-format level at `path` (header `header`) with blocks of 2^`shift`
/// entries ([`BLOCK_SHIFT`] but in tests): the same bytes of entries, a new block table, and
/// (if it records one) its lineage chained to the level below as that file is now, once every
/// block passed its check and its lineage matched the level below as it was (the journal's
/// header of it, if a re-block rewrote it, else its file). The header is recorded in `journal`
/// before the file is replaced.
fn reblock(
    path: &Path,
    header: Header,
    shift: u8,
    cancel: &AtomicBool,
    journal: &mut Journal,
) -> Result<(), DbError> {
    let houses = usize::from(header.houses);
    let level = crate::db::storage::open_level(
        path,
        crate::db::storage::Access::Map,
        houses,
        header.rules,
        header.level,
        header.entries,
    )?;
    let damage = level.check_all(cancel, &|_| {})?;
    if let Some(defect) = level.defect(&damage) {
        return Err(defect);
    }
    let lineage = match header.lineage {
        None => None,
        Some(recorded) => {
            let below_path = below(path, houses, header.rules, header.level).ok_or_else(|| {
                DbError::Corrupt(format!(
                    "level {} records a lineage but there is no level below it",
                    header.level
                ))
            })?;
            let now = read_header(&below_path)?;
            let was = journal.old.get(&(header.level - 1)).copied().unwrap_or(now);
            if lineage_after(&was) != recorded {
                return Err(DbError::Lineage {
                    level: header.level,
                    below: below_path,
                });
            }
            Some(lineage_after(&now))
        }
    };
    let bytes = level.entries_unchecked().expect("a mapped level").bytes();
    let mut new = Header::new(header.houses, header.rules, header.level, header.entries);
    new.lineage = lineage;
    new.block_shift = shift;
    let table = block_table(&new, bytes);
    new.table_checksum = table_checksum(&table);
    journal.record(header)?;
    crate::files::write_whole(path, |file| {
        use std::io::Write;
        let mut out = std::io::BufWriter::with_capacity(1 << 20, &mut *file);
        out.write_all(&new.to_bytes())?;
        out.write_all(bytes)?;
        out.write_all(&vec![0u8; crate::db::format::padding(&new)])?;
        out.write_all(&table)?;
        out.flush()?;
        drop(out);
        file.sync_all()?;
        crate::memory::drop_cached(file);
        Ok(())
    })
    .and_then(|()| crate::files::sync_parent(path))
    .map_err(DbError::from)
}

/// The file of the level below level `level` of `houses` houses under `rules`, whose file is
/// `path` (in the same directory), if `level` > 0.
fn below(path: &Path, houses: usize, rules: Rules, level: u32) -> Option<PathBuf> {
    let name = crate::db::level_file_name(houses, rules, level.checked_sub(1)?);
    Some(path.with_file_name(name))
}

/// The header of the level file at `path`.
fn read_header(path: &Path) -> Result<Header, DbError> {
    let mut file = crate::files::open_regular(path).map_err(|e| DbError::from(e).in_file(path))?;
    Header::read(&mut file).map_err(|e| e.in_file(path))
}

/// The lineage a level `level` (of `houses` houses under `rules`) written at `path` records:
/// that of the level below it, as its file in the same directory says (already upgraded: the
/// files go level by level upwards); `None` for level 0, or when that file cannot be read as a
/// current level.
fn lineage_below(path: &Path, houses: usize, rules: Rules, level: u32) -> Option<u64> {
    let header = read_header(&below(path, houses, rules, level)?).ok()?;
    Some(lineage_after(&header))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::Scratch;

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
    // Levels up to 6 hold at most 512 entries: one block at either size, the same table.
    const TOP: u32 = 11;

    fn innermost(e: &DbError) -> &DbError {
        match e {
            DbError::InFile { error, .. } => innermost(error),
            other => other,
        }
    }

    fn file(dir: &Path, level: u32) -> PathBuf {
        dir.join(crate::db::level_file_name(3, Rules::Standard, level))
    }

    /// The 3-house standard levels 0..=TOP, built in `dir` (blocks of [`BLOCK_SHIFT`], lineage
    /// recorded), and their bytes.
    fn built(dir: &Path) -> Vec<Vec<u8>> {
        let cancel = AtomicBool::new(false);
        crate::db::build(dir, 3, Rules::Standard, TOP, &cancel, &|_| {}).unwrap();
        (0..=TOP)
            .map(|k| std::fs::read(file(dir, k)).unwrap())
            .collect()
    }

    /// Levels `levels` of `dir` rewritten in blocks of 2^`shift`, upwards, as an upgrade would.
    fn reblock_levels(dir: &Path, levels: std::ops::RangeInclusive<u32>, shift: u8) {
        let cancel = AtomicBool::new(false);
        let mut journal = Journal::load(dir, (3, Rules::Standard)).unwrap();
        for k in levels {
            let path = file(dir, k);
            let header = read_header(&path).unwrap();
            reblock(&path, header, shift, &cancel, &mut journal).unwrap();
        }
        journal.finish().unwrap();
    }

    fn readable(dir: &Path) {
        let base =
            crate::db::Tablebase::open(dir, 3, Rules::Standard, crate::db::Access::Map).unwrap();
        let cancel = AtomicBool::new(false);
        let report =
            crate::db::verify::verify(&base, crate::db::verify::Coverage::All, &cancel, &|_| {})
                .unwrap();
        assert!(report.levels.iter().all(|l| l.defect.is_none()));
    }

    /// Every level of `dir` holds the bytes `want` a build wrote, the journal is gone, and the
    /// levels read and verify.
    fn as_built(dir: &Path, want: &[Vec<u8>]) {
        for k in 0..=TOP {
            assert_eq!(
                std::fs::read(file(dir, k)).unwrap(),
                want[k as usize],
                "level {k}"
            );
        }
        assert!(!dir.join(".kalah-reblock-3-standard.journal").exists());
        readable(dir);
    }

    #[test]
    fn levels_in_other_blocks_are_rewritten_to_the_bytes_a_build_writes() {
        let dir = Scratch::new("upgrade-reblock");
        let want = built(&dir);
        // The levels as an older build wrote them: blocks of 2048, lineage chained at that size.
        reblock_levels(&dir, 0..=TOP, 11);
        assert_eq!(read_header(&file(&dir, TOP)).unwrap().block_shift, 11);
        assert_ne!(std::fs::read(file(&dir, TOP)).unwrap(), want[TOP as usize]);
        readable(&dir);
        let cancel = AtomicBool::new(false);
        let report = upgrade(&dir, &cancel, &|_| {}).unwrap();
        assert_eq!(report.len(), TOP as usize + 1);
        assert!(
            report
                .iter()
                .all(|u| matches!(u.outcome, Outcome::Reblocked { from: 2048 })),
            "{report:?}"
        );
        as_built(&dir, &want);
        // Run again: nothing to do.
        let report = upgrade(&dir, &cancel, &|_| {}).unwrap();
        assert!(report.iter().all(|u| matches!(u.outcome, Outcome::Current)));
    }

    #[test]
    fn an_upgrade_stopped_between_two_levels_is_finished_by_the_next() {
        let dir = Scratch::new("upgrade-reblock-stopped");
        let want = built(&dir);
        reblock_levels(&dir, 0..=TOP, 11);
        // Stopped after level 8: the journal holds the old headers of 0..=8, level 9 no longer
        // chains to level 8 as it is now, and readers refuse it.
        let cancel = AtomicBool::new(false);
        let mut journal = Journal::load(&dir, (3, Rules::Standard)).unwrap();
        for k in 0..=8 {
            let path = file(&dir, k);
            let header = read_header(&path).unwrap();
            reblock(&path, header, BLOCK_SHIFT, &cancel, &mut journal).unwrap();
        }
        drop(journal);
        assert!(dir.join(".kalah-reblock-3-standard.journal").exists());
        let base =
            crate::db::Tablebase::open(&dir, 3, Rules::Standard, crate::db::Access::Map).unwrap();
        assert!(matches!(
            innermost(&base.level(9).map(|_| ()).unwrap_err()),
            DbError::Lineage { level: 9, .. }
        ));
        let report = upgrade(&dir, &cancel, &|_| {}).unwrap();
        let reblocked = report
            .iter()
            .filter(|u| matches!(u.outcome, Outcome::Reblocked { .. }))
            .count();
        assert_eq!(reblocked, (TOP - 8) as usize, "{report:?}");
        as_built(&dir, &want);
    }

    #[test]
    fn a_level_built_on_other_levels_is_not_chained_to_them() {
        let dir = Scratch::new("upgrade-reblock-lineage");
        built(&dir);
        reblock_levels(&dir, 0..=TOP, 11);
        let other = Scratch::new("upgrade-reblock-lineage-other");
        let cancel = AtomicBool::new(false);
        crate::db::build(&other, 3, Rules::Standard, 8, &cancel, &|_| {}).unwrap();
        // Level 8 in blocks of 512 under a level 9 that chained to level 8 in blocks of 2048,
        // with no journal to say what level 8 was: level 9 must fail, and stay as it was.
        std::fs::copy(file(&other, 8), file(&dir, 8)).unwrap();
        let before = std::fs::read(file(&dir, 9)).unwrap();
        let report = upgrade(&dir, &cancel, &|_| {}).unwrap();
        let failed: Vec<_> = report
            .iter()
            .filter_map(|u| match &u.outcome {
                Outcome::Failed(e) => Some(e),
                _ => None,
            })
            .collect();
        assert!(
            failed
                .iter()
                .any(|e| matches!(innermost(e), DbError::Lineage { level: 9, .. })),
            "{report:?}"
        );
        assert_eq!(std::fs::read(file(&dir, 9)).unwrap(), before);
        assert!(dir.join(".kalah-reblock-3-standard.journal").exists());
    }
}
