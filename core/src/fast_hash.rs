//! A fast hasher for maps keyed by boards, for the proof manager and the harvest of a search.
//!
//! The standard library's SipHash resists keys chosen to collide, which these maps do not
//! need (their keys are boards the program makes itself) and which cost a campaign with small
//! budgets a twentieth of its time. This is a multiply-rotate fold of the key's 64-bit words
//! (as rustc's own maps hash), with a final mix so that the low bits, which pick the bucket,
//! depend on every bit of the key.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A [`HashMap`] with the [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// A [`HashSet`] with the [`FastHasher`].
pub type FastSet<K> = HashSet<K, BuildHasherDefault<FastHasher>>;

/// The hasher of [`FastMap`] (see the module docs). Not for keys an adversary chooses.
#[derive(Clone, Copy, Default, Debug)]
pub struct FastHasher(u64);

const MULTIPLY: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FastHasher {
    #[inline(always)]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(MULTIPLY);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.add(i as u64);
        self.add((i >> 64) as u64);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn write_isize(&mut self, i: isize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // The fold's low bits depend only on the low bits of what it folded: mix them all in.
        let x = self.0 ^ (self.0 >> 32);
        x.wrapping_mul(MULTIPLY) ^ (x >> 29)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, BuildHasherDefault};

    #[test]
    fn boards_that_differ_in_one_house_spread_over_the_buckets() {
        let build = BuildHasherDefault::<FastHasher>::default();
        // 4096 keys differing in one byte each: their low 12 bits (a table of 4096 buckets)
        // must take most of the values, not a handful.
        let mut buckets = std::collections::HashSet::new();
        for lane in 0..16u32 {
            for seeds in 0..256u128 {
                buckets.insert(build.hash_one(seeds << (8 * lane)) & 0xFFF);
            }
        }
        assert!(buckets.len() > 2000, "{} buckets of 4096", buckets.len());
    }
}
