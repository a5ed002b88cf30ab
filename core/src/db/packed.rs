//! Entries packed at their level's width: level k stores each entry (a value in `0..=k`) in
//! just the bits that `k` needs, 5 bits up to level 31 and 6 up to level 63, instead of a byte.
//!
//! Entry i occupies bits `i*w .. i*w + w` of the stream, bit j of the stream being bit `j % 8`
//! of byte `j / 8` (least significant first). With w = 5:
//!
//! ```text
//!  bit   7 6 5 4 3 2 1 0 | 7 6 5 4 3 2 1 0 | 7 6 5 4 3 2 1 0 | ...
//!  byte  0               | 1               | 2               |
//!        e1e1e1e0e0e0e0e0 e3e2e2e2e2e2e1e1 e4e4e4e4e3e3e3e3
//! ```
//!
//! Eight entries fill exactly w bytes, so a run of entries that starts at a multiple of 8 (every
//! block of the level file does) starts on a byte and can be packed or checked on its own.
//!
//! **Reading.** An entry spans at most two bytes (w <= 8, and it starts at bit 0..7 of its
//! first byte), so [`Packed::get`] loads the little-endian pair at `i*w / 8`, shifts it right by
//! `i*w % 8` and masks w bits: one multiply, one two-byte load and three operations. The pair
//! may reach one byte past the last entry's: every packed slice carries [`SLACK`] such bytes
//! (a level file's padding or block table follows its entries; a level in memory is allocated
//! with them).
//!
//! **bitvec.** The same stream is a `BitSlice<u8, Lsb0>`, and [`get_bitvec`] / [`pack_bitvec`]
//! read and write it through bitvec's `load_le` / `store_le`. They are the second
//! implementation the tests hold the hand-written ones to; the probe path and the builder use
//! the hand-written ones, which `cargo bench --bench db` measured faster (see
//! docs/performance.md, "Packed entries").

use bitvec::field::BitField;
use bitvec::prelude::{BitSlice, Lsb0};

/// Bits a level-`level` entry needs: those of `level` itself (values `0..=level`), at least 1.
#[inline]
pub const fn width(level: u32) -> u32 {
    let bits = u32::BITS - level.leading_zeros();
    if bits == 0 { 1 } else { bits }
}

/// Bytes of `entries` entries of `width` bits (without the slack).
#[inline]
pub const fn packed_len(entries: u64, width: u32) -> u64 {
    (entries * width as u64).div_ceil(8)
}

/// Bytes a reader may touch past the last entry's byte.
pub const SLACK: usize = 1;

/// `len` entries of `width` bits, packed (see the module docs), for reading.
#[derive(Clone, Copy, Debug)]
pub struct Packed<'a> {
    bytes: &'a [u8],
    width: u32,
    mask: u16,
    len: u64,
}

impl<'a> Packed<'a> {
    /// The `len` entries of `width` (1..=8) bits packed in `bytes`, which holds
    /// [`packed_len`] bytes and the [`SLACK`] after them; `None` if it is shorter.
    pub fn new(bytes: &'a [u8], width: u32, len: u64) -> Option<Packed<'a>> {
        if !(1..=8).contains(&width) {
            return None;
        }
        let needed = packed_len(len, width) + if len > 0 { SLACK as u64 } else { 0 };
        if (bytes.len() as u64) < needed {
            return None;
        }
        Some(Packed {
            bytes,
            width,
            mask: (1u16 << width) - 1,
            len,
        })
    }

    /// Entries.
    #[inline(always)]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether there are none.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bits an entry.
    #[inline(always)]
    pub fn width(&self) -> u32 {
        self.width
    }

    /// The packed bytes of the entries (without the slack).
    pub fn bytes(&self) -> &'a [u8] {
        &self.bytes[..packed_len(self.len, self.width) as usize]
    }

    /// Entry `index` (< `len`; past it, a panic or a meaningless value, never memory unsafety).
    #[inline(always)]
    pub fn get(&self, index: u64) -> u8 {
        debug_assert!(index < self.len);
        let bit = index * u64::from(self.width);
        let at = (bit >> 3) as usize;
        from_pair([self.bytes[at], self.bytes[at + 1]], bit, self.mask)
    }

    /// The first byte of entry `index`, for a prefetch.
    #[inline(always)]
    pub fn byte_of(&self, index: u64) -> Option<&'a u8> {
        self.bytes
            .get(((index * u64::from(self.width)) >> 3) as usize)
    }
}

/// The entry that starts at stream bit `bit`, from the two bytes at `bit / 8` (`mask`: the low
/// `width` bits set).
#[inline(always)]
pub fn from_pair(pair: [u8; 2], bit: u64, mask: u16) -> u8 {
    ((u16::from_le_bytes(pair) >> (bit & 7)) & mask) as u8
}

/// Packs `entries` (one a byte, each below `2^width`) into `out` (exactly
/// [`packed_len`]`(entries.len(), width)` bytes).
pub fn pack(entries: &[u8], width: u32, out: &mut [u8]) {
    debug_assert_eq!(out.len() as u64, packed_len(entries.len() as u64, width));
    let w = width as usize;
    let group = |entries: &[u8]| {
        entries
            .iter()
            .enumerate()
            .fold(0u64, |acc, (j, &e)| acc | u64::from(e) << (j * w))
            .to_le_bytes()
    };
    let full = entries.len() / 8;
    for (entries, bytes) in entries.chunks_exact(8).zip(out.chunks_exact_mut(w)) {
        bytes.copy_from_slice(&group(entries)[..w]);
    }
    // The last, partial group: the bytes after the full groups' (fewer than w).
    let tail = &entries[full * 8..];
    if !tail.is_empty() {
        let rest = &mut out[full * w..];
        let n = rest.len();
        rest.copy_from_slice(&group(tail)[..n]);
    }
}

/// Entry `index` of the stream `bytes` of `width`-bit entries, read through bitvec.
pub fn get_bitvec(bytes: &[u8], width: u32, index: u64) -> u8 {
    let bits = BitSlice::<u8, Lsb0>::from_slice(bytes);
    let start = (index * u64::from(width)) as usize;
    bits[start..start + width as usize].load_le::<u8>()
}

/// [`pack`], written through bitvec.
pub fn pack_bitvec(entries: &[u8], width: u32, out: &mut [u8]) {
    out.fill(0);
    let bits = BitSlice::<u8, Lsb0>::from_slice_mut(out);
    let w = width as usize;
    for (i, &e) in entries.iter().enumerate() {
        bits[i * w..(i + 1) * w].store_le(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn widths_hold_their_levels() {
        assert_eq!(width(0), 1);
        assert_eq!(width(1), 1);
        assert_eq!(width(2), 2);
        assert_eq!(width(15), 4);
        assert_eq!(width(16), 5);
        assert_eq!(width(31), 5);
        assert_eq!(width(32), 6);
        assert_eq!(width(63), 6);
        assert_eq!(width(64), 7);
        for k in 0..=64u32 {
            assert!(k < 1 << width(k));
            assert!(k == 0 || k >= 1 << (width(k) - 1));
        }
    }

    #[test]
    fn the_hand_written_stream_is_bitvecs() {
        let mut rng = Rng::new(18);
        for width in 1..=8u32 {
            for len in [0usize, 1, 7, 8, 9, 63, 64, 1000] {
                let entries: Vec<u8> = (0..len).map(|_| rng.below(1 << width) as u8).collect();
                let n = packed_len(len as u64, width) as usize;
                let mut ours = vec![0u8; n + SLACK];
                let mut theirs = vec![0u8; n + SLACK];
                pack(&entries, width, &mut ours[..n]);
                pack_bitvec(&entries, width, &mut theirs[..n]);
                assert_eq!(ours, theirs, "width {width} len {len}");
                let packed = Packed::new(&ours, width, len as u64).unwrap();
                for (i, &e) in entries.iter().enumerate() {
                    assert_eq!(packed.get(i as u64), e);
                    assert_eq!(get_bitvec(&ours, width, i as u64), e);
                }
            }
        }
    }

    #[test]
    fn a_slice_without_its_slack_is_refused() {
        assert!(Packed::new(&[0u8; 5], 5, 8).is_none());
        assert!(Packed::new(&[0u8; 6], 5, 8).is_some());
        assert!(Packed::new(&[], 5, 0).is_some());
        assert!(Packed::new(&[0u8; 6], 9, 1).is_none());
    }
}
