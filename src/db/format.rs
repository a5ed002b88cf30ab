//! The level file: a 64-byte header, then one byte per entry.
//!
//! ```text
//!  offset size  field
//!       0    8  magic            b"KALAHDB\x1a"
//!       8    4  format version   1 (little-endian, as every field)
//!      12    1  houses           m, houses a side
//!      13    1  rules            0 = standard, 1 = empty-capture
//!      14    1  entry width      8 (bits per entry)
//!      15    1  reserved         0
//!      16    4  level            k, seeds on the board
//!      20    4  reserved         0
//!      24    8  entry count      level_len(k) (see crate::db::index)
//!      32    8  payload checksum checksum() of the entries
//!      40    8  header checksum  checksum() of bytes 0..40
//!      48   16  reserved         0
//!      64    n  entries          entry i = (f + k) / 2 for the board at index i
//! ```
//!
//! An entry stores f (the future store difference for the side to move, in `-k..=k` and of k's
//! parity) as `(f + k) / 2`, so every level up to 254 fits a byte; f = 2 * entry - k.
//!
//! The checksum is a 64-bit multiply-rotate hash over little-endian 8-byte words (the tail
//! zero-padded) and the length. Each step `h -> rotl((h ^ w) * K, 29)` is a bijection of `h`
//! for a given word and of the word for a given `h`, so any change confined to one word, such
//! as a flipped byte, always changes the checksum.

use std::io::{Read, Write};

use crate::db::DbError;
use crate::rules::Rules;

/// The first eight bytes of every level file.
pub const MAGIC: [u8; 8] = *b"KALAHDB\x1a";
/// The format this code reads and writes.
pub const VERSION: u32 = 1;
/// Bytes before the entries.
pub const HEADER_LEN: usize = 64;
/// Bits per entry.
pub const ENTRY_BITS: u8 = 8;

const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// The checksum of `bytes` (see the module docs).
pub fn checksum(bytes: &[u8]) -> u64 {
    let word = |w: &[u8]| u64::from_le_bytes(w.try_into().expect("8-byte word"));
    // Four independent lanes keep the multiplier busy; they are folded in at the end.
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

/// What a level file says it holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Header {
    /// Houses a side.
    pub houses: u8,
    /// Capture rule.
    pub rules: Rules,
    /// Seeds on the board.
    pub level: u32,
    /// Entries that follow the header.
    pub entries: u64,
    /// Checksum of the entries.
    pub checksum: u64,
}

impl Header {
    /// The 64 header bytes.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..12].copy_from_slice(&VERSION.to_le_bytes());
        b[12] = self.houses;
        b[13] = self.rules.code();
        b[14] = ENTRY_BITS;
        b[16..20].copy_from_slice(&self.level.to_le_bytes());
        b[24..32].copy_from_slice(&self.entries.to_le_bytes());
        b[32..40].copy_from_slice(&self.checksum.to_le_bytes());
        let check = checksum(&b[..40]);
        b[40..48].copy_from_slice(&check.to_le_bytes());
        b
    }

    /// Parses and checks the 64 header bytes (magic, version, header checksum, field ranges).
    pub fn from_bytes(b: &[u8]) -> Result<Header, DbError> {
        if b.len() < HEADER_LEN {
            return Err(DbError::Truncated {
                expected: HEADER_LEN as u64,
                found: b.len() as u64,
            });
        }
        if b[0..8] != MAGIC {
            return Err(DbError::BadMagic);
        }
        let word = |r: std::ops::Range<usize>| u64::from_le_bytes(b[r].try_into().expect("8"));
        let version = u32::from_le_bytes(b[8..12].try_into().expect("4"));
        if version != VERSION {
            return Err(DbError::Version(version));
        }
        if word(40..48) != checksum(&b[..40]) {
            return Err(DbError::HeaderChecksum);
        }
        let rules = Rules::from_code(b[13])
            .ok_or_else(|| DbError::Corrupt(format!("unknown rules code {}", b[13])))?;
        if b[14] != ENTRY_BITS {
            return Err(DbError::Corrupt(format!("entry width {} bits", b[14])));
        }
        Ok(Header {
            houses: b[12],
            rules,
            level: u32::from_le_bytes(b[16..20].try_into().expect("4")),
            entries: word(24..32),
            checksum: word(32..40),
        })
    }

    /// Reads and checks a header from the start of `reader`.
    pub fn read(reader: &mut impl Read) -> Result<Header, DbError> {
        let mut b = [0u8; HEADER_LEN];
        let mut filled = 0;
        while filled < HEADER_LEN {
            match reader.read(&mut b[filled..])? {
                0 => break,
                n => filled += n,
            }
        }
        Header::from_bytes(&b[..filled])
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_reject_damage() {
        let h = Header {
            houses: 6,
            rules: Rules::EmptyCapture,
            level: 24,
            entries: 123,
            checksum: 0xDEAD_BEEF,
        };
        let bytes = h.to_bytes();
        assert_eq!(Header::from_bytes(&bytes).unwrap(), h);
        for i in 0..48 {
            let mut bad = bytes;
            bad[i] ^= 0x10;
            assert!(Header::from_bytes(&bad).is_err(), "byte {i}");
        }
        assert!(matches!(
            Header::from_bytes(&bytes[..10]),
            Err(DbError::Truncated { .. })
        ));
    }

    #[test]
    fn one_changed_byte_changes_the_checksum() {
        let mut data: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        for len in [0, 1, 7, 8, 31, 32, 33, 1000] {
            let base = checksum(&data[..len]);
            for i in 0..len {
                for bit in 0..8 {
                    data[i] ^= 1 << bit;
                    assert_ne!(checksum(&data[..len]), base, "len {len} byte {i} bit {bit}");
                    data[i] ^= 1 << bit;
                }
            }
        }
        assert_ne!(checksum(&[]), checksum(&[0]));
    }
}
