//! A small, fast, seedable random generator (SplitMix64), for tests, benchmarks and players.
//!
//! Not for cryptography. The same seed gives the same sequence on every platform.

/// SplitMix64: one 64-bit state, one add and a mix per number.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator whose sequence is fixed by `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        crate::lanes::mix64(self.state)
    }

    /// A number in `0..n` (`n > 0`), by the multiply-shift method (bias below 2^-32 for n < 2^32).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}
