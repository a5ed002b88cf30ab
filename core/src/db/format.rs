//! The level file, format version 2: a 64-byte header, the entries, then one checksum per
//! block of entries, so that every read can be checked at the cost of one block.
//!
//! ```text
//!  offset size  field
//!       0    8  magic            b"KALAHDB\x1a"
//!       8    4  format version   2 (little-endian, as every field)
//!      12    1  houses           m, houses a side
//!      13    1  rules            0 = standard, 1 = empty-capture
//!      14    1  entry width      w, bits per entry: the bits of k (5 for levels 16..31)
//!      15    1  block shift      s: a block holds 2^s entries (3 <= s <= 30)
//!      16    4  level            k, seeds on the board
//!      20    4  reserved         0
//!      24    8  entry count      n = level_len(k) (see crate::db::index)
//!      32    8  table checksum   xxh3-64 of the block checksum table (the level's fingerprint)
//!      40    8  header checksum  xxh3-64 of bytes 0..40
//!      48    8  lineage          what the level was built from (see below), or 0
//!      56    8  lineage check    xxh3-64 of bytes 0..56 with its low bit set, or 0 (none)
//!      64    p  entries          p = ceil(n * w / 8) bytes
//!           z  padding           zeros, to the next multiple of 8
//!     64+p+z 8b block table      b = ceil(n / 2^s) checksums, one u64 a block
//! ```
//!
//! **Entries.** An entry stores f (the future store difference for the side to move, in
//! `-k..=k` and of k's parity) as `(f + k) / 2`, so f = 2 * entry - k, a value in `0..=k`.
//! Entries are packed at the level's width, the bits of k ([`crate::db::packed::width`]: 5 for
//! levels 16..31, 6 for 32..63): entry i occupies bits `i*w .. i*w + w` of the entry bytes, bit
//! j of that stream being bit `j % 8` of byte `j / 8` (least significant first; see
//! [`crate::db::packed`]).
//!
//! The first builds of format 2 wrote one byte an entry (w = 8) under this same version, as
//! this field foresaw. This build reads only the level's own width: a byte-wide file gets
//! [`DbError::ByteWide`], which says to convert it with `kalah db upgrade` (a lossless rewrite
//! to 5/8 of the size, [`crate::db::upgrade`]) or to rebuild it; a kalah of before the packed
//! levels refuses a packed file with its own message ("entries of 5 bits"). Neither misreads
//! the other.
//!
//! **Blocks.** Block j holds entries `j * 2^s .. (j + 1) * 2^s` (the last one fewer): its bytes
//! start at `j * 2^s * w / 8` (a whole byte, since s >= 3), so no entry straddles two blocks. Its
//! checksum is the 64-bit XXH3 of its bytes, seeded with [`block_seed`] (houses, rules, level and
//! block number), so a block copied from another place or another file does not pass either. A
//! reader checks a block the first time it reads from it and remembers that it did (see
//! [`crate::db::storage::Level`]): a query reads a few blocks and checks only those, a search pays
//! once per block it touches, and a damaged block is an error naming the level, the block and the
//! file, never a value. The table itself needs no checksum to be safe: a damaged table entry only
//! makes its block fail. The table checksum in the header is the level's fingerprint (`db info`,
//! `db build`), checked by `db verify` and when a build keeps a level.
//!
//! **Size.** A block of 2^9 entries (320 bytes at 5 bits an entry, 5 cache lines) costs 8 bytes
//! of table: 2.5% of the file. Builds before wrote 2^12, then 2^11; a reader takes any shift. A
//! fresh process that searches a few million nodes reads most of the blocks of the levels it
//! probes once, and each first read hashes the whole block: with blocks of 2^11 (20 lines) that
//! was an eighth of the time of such a search, with 2^9 the check reads little more than
//! the line the search wanted, and the search asks for a small block's lines with the entry's
//! own (see [`crate::db::tablebase::Probe::prefetch_at`]). Smaller blocks grow the table (5% at
//! 2^8) for no further gain measured (see the figures in docs/performance.md).
//!
//! **Lineage.** A level is computed from the levels below it, so a level is only right above the
//! very levels it was built from. A build records in level k (k >= 1) the lineage
//! `xxh3-64(lineage(k-1) || table checksum(k-1))` (each 8 bytes little-endian, lineage 0 where
//! level k-1 records none): a chain of the fingerprints of every level beneath. A reader opening
//! level k checks it against level k-1 as it is ([`crate::db::Tablebase::level`]), so a level
//! replaced under the levels built on it (another build's, another version's) is an error naming
//! both files, and a build rebuilds a kept level whose lineage does not match. Builds are
//! deterministic, so a damaged level rebuilt from the same levels has the same fingerprint and
//! the levels above it stay valid. Files written before lineage was recorded have zeros there
//! and are read as before (nothing to check); the header checksum does not cover bytes 40..64,
//! so that those files keep their checksum, and the lineage has a check of its own.
//!
//! Version 1 files (one checksum over all entries, no block table) are refused with a message
//! to rebuild them or convert them with `kalah db upgrade` ([`crate::db::upgrade`]).

use std::io::{Read, Write};

use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

use crate::db::DbError;
use crate::db::packed::{packed_len, width};
use crate::rules::Rules;

/// The first eight bytes of every level file.
pub const MAGIC: [u8; 8] = *b"KALAHDB\x1a";
/// The format this code reads and writes.
pub const VERSION: u32 = 2;
/// Bytes before the entries.
pub const HEADER_LEN: usize = 64;
/// The block shift this build writes: blocks of 512 entries.
pub const BLOCK_SHIFT: u8 = 9;
/// The block shifts a reader takes.
pub const BLOCK_SHIFTS: std::ops::RangeInclusive<u8> = 3..=30;
/// The most entries a level file may claim (far above the largest level indexed; a header
/// claiming more is damaged, and its sizes could overflow).
pub const MAX_ENTRIES: u64 = 1 << 48;

/// The seed of block `block`'s checksum in the level `level` of `houses` houses under `rules`.
#[inline]
pub fn block_seed(houses: u8, rules: Rules, level: u32, block: u64) -> u64 {
    block ^ u64::from(level) << 40 ^ u64::from(houses) << 52 ^ u64::from(rules.code()) << 60
}

/// The checksum of one block's bytes (see the module docs).
#[inline]
pub fn block_checksum(bytes: &[u8], seed: u64) -> u64 {
    xxh3_64_with_seed(bytes, seed)
}

/// The checksum of a block table's bytes: the level's fingerprint.
pub fn table_checksum(table: &[u8]) -> u64 {
    xxh3_64(table)
}

/// What a level file says it holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Header {
    /// Houses a side.
    pub houses: u8,
    /// Capture rule.
    pub rules: Rules,
    /// Seeds on the board.
    pub level: u32,
    /// Entries in the file.
    pub entries: u64,
    /// Bits per entry.
    pub width: u8,
    /// A block holds `1 << block_shift` entries.
    pub block_shift: u8,
    /// Checksum of the block table ([`table_checksum`]).
    pub table_checksum: u64,
    /// What the level was built from ([`lineage_after`] of the level below), if recorded.
    pub lineage: Option<u64>,
}

/// The lineage a level built on `below` records: `below`'s lineage (0 if none) and its table
/// checksum, chained (see the module docs).
pub fn lineage_after(below: &Header) -> u64 {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&below.lineage.unwrap_or(0).to_le_bytes());
    bytes[8..].copy_from_slice(&below.table_checksum.to_le_bytes());
    xxh3_64(&bytes)
}

impl Header {
    /// The header of a level of `entries` entries written by this build (entries of the
    /// level's width, blocks of [`BLOCK_SHIFT`]), its table checksum still 0.
    pub fn new(houses: u8, rules: Rules, level: u32, entries: u64) -> Header {
        Header {
            houses,
            rules,
            level,
            entries,
            width: width(level) as u8,
            block_shift: BLOCK_SHIFT,
            table_checksum: 0,
            lineage: None,
        }
    }

    /// Entries in a block (the last block may hold fewer).
    pub fn block_entries(&self) -> u64 {
        1 << self.block_shift
    }

    /// Bytes of a full block.
    pub fn block_bytes(&self) -> u64 {
        self.block_entries() * u64::from(self.width) / 8
    }

    /// Blocks in the file.
    pub fn blocks(&self) -> u64 {
        self.entries.div_ceil(self.block_entries())
    }

    /// Bytes of entries (without the padding).
    pub fn payload_len(&self) -> u64 {
        packed_len(self.entries, u32::from(self.width))
    }

    /// The bytes of block `block`'s entries, from the start of the entries.
    pub fn block_bytes_range(&self, block: u64) -> std::ops::Range<u64> {
        let entries = self.block_range(block);
        let w = u64::from(self.width);
        entries.start * w / 8..packed_len(entries.end, u32::from(self.width))
    }

    /// Where the block table starts.
    pub fn table_offset(&self) -> u64 {
        HEADER_LEN as u64 + self.payload_len().next_multiple_of(8)
    }

    /// Where block `block`'s checksum is in the file (8 bytes).
    pub fn checksum_offset(&self, block: u64) -> u64 {
        self.table_offset() + 8 * block
    }

    /// The length of the whole file.
    pub fn file_len(&self) -> u64 {
        self.checksum_offset(self.blocks())
    }

    /// The entries of block `block`.
    pub fn block_range(&self, block: u64) -> std::ops::Range<u64> {
        let start = block << self.block_shift;
        start..(start + self.block_entries()).min(self.entries)
    }

    /// The seed of block `block`'s checksum.
    pub fn block_seed(&self, block: u64) -> u64 {
        block_seed(self.houses, self.rules, self.level, block)
    }

    /// The 64 header bytes.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..12].copy_from_slice(&VERSION.to_le_bytes());
        b[12] = self.houses;
        b[13] = self.rules.code();
        b[14] = self.width;
        b[15] = self.block_shift;
        b[16..20].copy_from_slice(&self.level.to_le_bytes());
        b[24..32].copy_from_slice(&self.entries.to_le_bytes());
        b[32..40].copy_from_slice(&self.table_checksum.to_le_bytes());
        let check = xxh3_64(&b[..40]);
        b[40..48].copy_from_slice(&check.to_le_bytes());
        if let Some(lineage) = self.lineage {
            b[48..56].copy_from_slice(&lineage.to_le_bytes());
            let check = xxh3_64(&b[..56]) | 1;
            b[56..64].copy_from_slice(&check.to_le_bytes());
        }
        b
    }

    /// Parses and checks the 64 header bytes: magic, version, header checksum, the range of
    /// every field (so that every size computed from them is in range), and that the entries
    /// are packed at the level's width ([`DbError::ByteWide`] for a file of one byte an entry).
    pub fn from_bytes(b: &[u8]) -> Result<Header, DbError> {
        let header = Header::from_bytes_any_width(b)?;
        let expected = width(header.level) as u8;
        if header.width == expected {
            Ok(header)
        } else if header.width == 8 {
            Err(DbError::ByteWide {
                level: header.level,
                width: expected,
            })
        } else {
            Err(DbError::Corrupt(format!(
                "entries of {} bits; level {} has {expected}-bit entries",
                header.width, header.level
            )))
        }
    }

    /// [`Header::from_bytes`] with entries of any width from 1 to 8 bits (for
    /// [`crate::db::upgrade`], which reads byte-wide files).
    pub fn from_bytes_any_width(b: &[u8]) -> Result<Header, DbError> {
        if b.len() < HEADER_LEN {
            if b.len() < 8 || b[0..8] != MAGIC {
                return Err(DbError::BadMagic);
            }
            return Err(DbError::Truncated {
                expected: HEADER_LEN as u64,
                found: b.len() as u64,
            });
        }
        if b[0..8] != MAGIC {
            return Err(DbError::BadMagic);
        }
        let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
        let half = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
        let version = half(8);
        if version != VERSION {
            return Err(DbError::Version(version));
        }
        if word(40) != xxh3_64(&b[..40]) {
            return Err(DbError::HeaderChecksum);
        }
        let corrupt = |what: String| Err(DbError::Corrupt(what));
        let rules = match Rules::from_code(b[13]) {
            Some(rules) => rules,
            None => return corrupt(format!("unknown rules code {}", b[13])),
        };
        if !(1..=8).contains(&b[14]) {
            return corrupt(format!("entries of {} bits", b[14]));
        }
        if !BLOCK_SHIFTS.contains(&b[15]) {
            return corrupt(format!("block shift {}", b[15]));
        }
        let entries = word(24);
        if entries > MAX_ENTRIES {
            return corrupt(format!("{entries} entries"));
        }
        let lineage = match (word(48), word(56)) {
            (0, 0) => None,
            (lineage, check) if check == xxh3_64(&b[..56]) | 1 => Some(lineage),
            _ => return corrupt("damaged lineage (bytes 48..64 do not match their check)".into()),
        };
        Ok(Header {
            lineage,
            houses: b[12],
            rules,
            level: half(16),
            entries,
            width: b[14],
            block_shift: b[15],
            table_checksum: word(32),
        })
    }

    /// Reads and checks a header from the start of `reader`.
    pub fn read(reader: &mut impl Read) -> Result<Header, DbError> {
        let (b, filled) = read_head(reader)?;
        Header::from_bytes(&b[..filled])
    }

    /// [`Header::read`], with entries of any width ([`Header::from_bytes_any_width`]).
    pub fn read_any_width(reader: &mut impl Read) -> Result<Header, DbError> {
        let (b, filled) = read_head(reader)?;
        Header::from_bytes_any_width(&b[..filled])
    }

    /// Writes the header.
    pub fn write(&self, writer: &mut impl Write) -> std::io::Result<()> {
        writer.write_all(&self.to_bytes())
    }

    /// Checks that the header is the one expected for `houses`, `rules`, `level` with `entries`
    /// entries: each difference is a [`DbError::Mismatch`] naming the field.
    pub fn expect(
        &self,
        houses: usize,
        rules: Rules,
        level: u32,
        entries: u64,
    ) -> Result<(), DbError> {
        let mismatch = |field: &'static str, expected: String, found: String| {
            Err(DbError::Mismatch {
                field,
                expected,
                found,
            })
        };
        if usize::from(self.houses) != houses {
            return mismatch("houses", houses.to_string(), self.houses.to_string());
        }
        if self.rules != rules {
            return mismatch("rules", rules.to_string(), self.rules.to_string());
        }
        if self.level != level {
            return mismatch("level", level.to_string(), self.level.to_string());
        }
        if self.entries != entries {
            return mismatch("entry count", entries.to_string(), self.entries.to_string());
        }
        Ok(())
    }
}

/// The first [`HEADER_LEN`] bytes of `reader` (fewer if it ends first), and how many.
fn read_head(reader: &mut impl Read) -> std::io::Result<([u8; HEADER_LEN], usize)> {
    let mut b = [0u8; HEADER_LEN];
    let mut filled = 0;
    while filled < HEADER_LEN {
        match reader.read(&mut b[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok((b, filled))
}

/// The block table of `packed` (the entries as the file holds them) for `header`, as the bytes
/// that follow the entries and their padding; the blocks hashed in parallel (in the current
/// rayon pool): a level re-blocked by `db upgrade` is gigabytes.
pub fn block_table(header: &Header, packed: &[u8]) -> Vec<u8> {
    use rayon::prelude::*;
    debug_assert_eq!(packed.len() as u64, header.payload_len());
    let block = header.block_bytes() as usize;
    packed
        .par_chunks(block.max(1))
        .enumerate()
        .flat_map_iter(|(j, bytes)| {
            block_checksum(bytes, header.block_seed(j as u64)).to_le_bytes()
        })
        .collect()
}

/// A whole level file of `packed` (the entries as the file holds them) under `header`, its block
/// table and table checksum computed here: for files made by hand (tests, conversions), where a
/// build streams its files through [`crate::db::build`] instead.
pub fn sealed(mut header: Header, packed: &[u8]) -> Vec<u8> {
    let table = block_table(&header, packed);
    header.table_checksum = table_checksum(&table);
    let mut out = header.to_bytes().to_vec();
    out.extend_from_slice(packed);
    out.extend(std::iter::repeat_n(0u8, padding(&header)));
    out.extend_from_slice(&table);
    out
}

/// Zero bytes between the entries and the block table.
pub fn padding(header: &Header) -> usize {
    (header.table_offset() - HEADER_LEN as u64 - header.payload_len()) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            table_checksum: 0xDEAD_BEEF,
            ..Header::new(6, Rules::EmptyCapture, 24, 123_456)
        }
    }

    #[test]
    fn headers_round_trip_and_reject_damage() {
        let h = header();
        let bytes = h.to_bytes();
        assert_eq!(Header::from_bytes(&bytes).unwrap(), h);
        for i in 0..48 {
            for bit in 0..8 {
                let mut bad = bytes;
                bad[i] ^= 1 << bit;
                assert!(Header::from_bytes(&bad).is_err(), "byte {i} bit {bit}");
            }
        }
        assert!(matches!(
            Header::from_bytes(&bytes[..10]),
            Err(DbError::Truncated { .. })
        ));
        assert!(matches!(Header::from_bytes(b"KAL"), Err(DbError::BadMagic)));
    }

    #[test]
    fn sizes_follow_the_header() {
        let h = header();
        assert_eq!(h.block_entries(), 512);
        assert_eq!(h.blocks(), 242); // 241 full blocks and 64 entries
        assert_eq!(h.width, 5);
        assert_eq!(h.payload_len(), 123_456 * 5 / 8);
        assert_eq!(h.table_offset(), 64 + 77_160);
        assert_eq!(h.file_len(), 64 + 77_160 + 242 * 8);
        assert_eq!(h.block_range(241), 123_392..123_456);
        assert_eq!(h.block_bytes_range(1), 320..640);
        assert_eq!(h.block_bytes_range(241), 77_120..77_160);
        let empty = Header::new(6, Rules::Standard, 0, 0);
        assert_eq!((empty.blocks(), empty.file_len()), (0, 64));
        let odd = Header::new(2, Rules::Standard, 3, 5);
        assert_eq!((odd.width, odd.payload_len()), (2, 2));
        assert_eq!((padding(&odd), odd.file_len()), (6, 64 + 8 + 8));
    }

    #[test]
    fn a_header_beyond_the_ranges_is_refused() {
        let mut h = header();
        h.block_shift = 31;
        assert!(matches!(
            Header::from_bytes(&h.to_bytes()),
            Err(DbError::Corrupt(_))
        ));
        let mut h = header();
        h.entries = MAX_ENTRIES + 1;
        assert!(matches!(
            Header::from_bytes(&h.to_bytes()),
            Err(DbError::Corrupt(_))
        ));
        let mut h = header();
        h.width = 4;
        let e = Header::from_bytes(&h.to_bytes()).unwrap_err();
        assert!(e.to_string().contains("4 bits"), "{e}");
        h.width = 8;
        let e = Header::from_bytes(&h.to_bytes()).unwrap_err();
        assert!(
            matches!(
                e,
                DbError::ByteWide {
                    level: 24,
                    width: 5
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("kalah db upgrade"), "{e}");
        assert_eq!(
            Header::from_bytes_any_width(&h.to_bytes()).unwrap().width,
            8
        );
        h.width = 9;
        assert!(Header::from_bytes_any_width(&h.to_bytes()).is_err());
        let mut v1 = header().to_bytes();
        v1[8] = 1;
        assert!(matches!(Header::from_bytes(&v1), Err(DbError::Version(1))));
    }

    #[test]
    fn a_block_checksum_depends_on_the_place() {
        let bytes = [7u8; 4096];
        let h = header();
        let sums: Vec<u64> = (0..4)
            .map(|j| block_checksum(&bytes, h.block_seed(j)))
            .collect();
        for i in 0..4 {
            for j in 0..i {
                assert_ne!(sums[i], sums[j]);
            }
        }
        let other = Header::new(6, Rules::Standard, 24, h.entries);
        assert_ne!(
            block_checksum(&bytes, other.block_seed(0)),
            block_checksum(&bytes, h.block_seed(0))
        );
    }
}
