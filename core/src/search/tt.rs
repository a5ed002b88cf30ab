//! The transposition table: lock-free, shared by all search threads.
//!
//! It maps a board key (houses only, seen from the side to move; see [`crate::Board::key`]) to
//! bounds on f, the future store difference of that board. Stores are not part of the key: the
//! value of a position is its store difference plus f, so one entry serves every position with
//! the same houses.
//!
//! ```text
//! entry = two u64 words (16 bytes); a bucket = 4 entries = 64 bytes, one cache line
//!
//!   word 0: check = fingerprint XOR word 1
//!   word 1: data
//!     bits  0..16  lower bound on f  (i16)
//!     bits 16..32  upper bound on f  (i16)
//!     bits 32..36  best move: house index + 1 (0 = none)
//!     bits 36..42  work: log2 of the nodes searched below this entry (0..63)
//!     bits 42..50  depth: plies searched below, EXACT_DEPTH = searched to the end
//!     bits 50..64  zero
//! ```
//!
//! **Lock-free by XOR check** (Hyatt's scheme): a reader loads both words without a lock and
//! accepts the entry only if `word0 ^ word1` equals the probed fingerprint; a read torn between
//! two writers fails that check and counts as a miss, never as a wrong bound.
//!
//! **Keys.** The bucket comes from [`Lanes::digest`], the fingerprint is
//! [`Lanes::check_digest`] (never 0, so an empty slot never matches). Two distinct boards are
//! confused only if both 64-bit digests collide: about 2^-64 per probe, i.e. below 10^-9 for a
//! whole solve of 10^10 probes.
//!
//! **Replacement.** A store into a bucket that holds the same board merges with it: exact bounds
//! (searched to the end) are intersected with exact bounds (both are true bounds of the same
//! value), a deeper result replaces a shallower one, and a shallower one never overwrites a
//! deeper one. (Depth-limited values depend on what the table held when they were searched, so
//! two of them need not be consistent: the newer simply replaces the older.) A store of another
//! board replaces the bucket's least valuable entry: empty slots first, then depth-limited
//! entries (useful for ordering only), then exact ones, each by least work. Otherwise the
//! entry of least work in the bucket (empty slots have none) is replaced: the subtrees that cost
//! most to search stay.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::lanes::Lanes;
use crate::memory::AtomicTable;

/// Most seeds on a board the table may hold: bounds on f (within [-seeds, seeds]) are stored as
/// i16. Only a huge wide board has more; it must be searched without the table.
pub const MAX_SEEDS: u32 = i16::MAX as u32;

/// The depth of a result searched to the end of the game (bounds on the exact value).
pub const EXACT_DEPTH: u8 = u8::MAX;

const LOWER_SHIFT: u32 = 0;
const UPPER_SHIFT: u32 = 16;
const MOVE_SHIFT: u32 = 32;
const MOVE_MASK: u64 = 0xF;
const WORK_SHIFT: u32 = 36;
const WORK_MASK: u64 = 0x3F;
const DEPTH_SHIFT: u32 = 42;
const DEPTH_MASK: u64 = 0xFF;

const ENTRY_WORDS: usize = 2;
const BUCKET_ENTRIES: usize = 4;
const BUCKET_WORDS: usize = ENTRY_WORDS * BUCKET_ENTRIES;
const BUCKET_BYTES: usize = BUCKET_WORDS * 8;

/// What the table knows of one board.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Entry {
    /// f >= lower.
    pub lower: i32,
    /// f <= upper.
    pub upper: i32,
    /// The move (house index, 0-based) that was best or refuted, if any.
    pub best: Option<usize>,
    /// log2 of the nodes searched to get this entry.
    pub work: u8,
    /// Plies searched; [`EXACT_DEPTH`] for a search to the end of the game.
    pub depth: u8,
}

impl Entry {
    fn pack(self) -> u64 {
        let best = self.best.map_or(0, |h| h as u64 + 1);
        debug_assert!(best <= MOVE_MASK);
        ((self.lower as i16 as u16 as u64) << LOWER_SHIFT)
            | ((self.upper as i16 as u16 as u64) << UPPER_SHIFT)
            | (best << MOVE_SHIFT)
            | ((u64::from(self.work) & WORK_MASK) << WORK_SHIFT)
            | ((u64::from(self.depth) & DEPTH_MASK) << DEPTH_SHIFT)
    }

    fn unpack(data: u64) -> Entry {
        let best = (data >> MOVE_SHIFT) & MOVE_MASK;
        Entry {
            lower: i32::from((data >> LOWER_SHIFT) as u16 as i16),
            upper: i32::from((data >> UPPER_SHIFT) as u16 as i16),
            best: (best != 0).then(|| best as usize - 1),
            work: ((data >> WORK_SHIFT) & WORK_MASK) as u8,
            depth: ((data >> DEPTH_SHIFT) & DEPTH_MASK) as u8,
        }
    }
}

/// A shared, lock-free table of bounds keyed on boards (see the module docs).
pub struct TranspositionTable {
    words: AtomicTable,
    buckets: usize,
    /// The buckets in use: a prefix of the table that grows with the search (see
    /// [`TranspositionTable::grow`]).
    active: AtomicUsize,
}

/// The buckets in use at first in a table of more than [`GROW_ABOVE`] buckets: 64 MiB. A
/// search that touches all of 64 MiB spends about 0.1 s on it.
const FIRST_ACTIVE: usize = (64 << 20) / BUCKET_BYTES;

/// Tables of at most this many buckets (512 MiB) are used whole from the start. Growing costs
/// the searches that outgrow the first prefix: measured with one thread, Kalah(6,3) in a
/// 128 MiB table grown from 64 MiB searched 24% more nodes, and `kalah bench` grown from
/// 1 MiB 57% more (each growth strands most of the entries stored so far). Searches that
/// need a table of gigabytes are long enough for an early growth to cost little.
const GROW_ABOVE: usize = (512 << 20) / BUCKET_BYTES;

/// Buckets in use per node searched: the table doubles its buckets in use while they are
/// fewer than this many times the nodes searched.
const ACTIVE_BUCKETS_PER_NODE: u64 = 1;

/// The factor by which the buckets in use grow: each growth strands most of the entries
/// stored so far, so the table grows in few, large steps, early in a long search.
const GROWTH: usize = 8;

/// The table could not be allocated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableAllocError {
    /// Bytes asked for.
    pub bytes: usize,
}

impl std::fmt::Display for TableAllocError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot allocate a {} MiB transposition table",
            self.bytes >> 20
        )
    }
}

impl std::error::Error for TableAllocError {}

/// A key's two digests, computed once for a node's probe and store.
#[derive(Clone, Copy, Debug)]
pub struct Hashed {
    digest: u64,
    /// The check word (odd: never the 0 of an empty slot).
    check: u64,
}

impl Hashed {
    /// The digests of `key`.
    #[inline(always)]
    pub fn of<L: Lanes>(key: L) -> Hashed {
        Hashed {
            digest: key.digest(),
            check: key.check_digest() | 1,
        }
    }
}

impl TranspositionTable {
    /// Bytes in a bucket.
    pub const BUCKET_BYTES: usize = BUCKET_BYTES;
    /// Words in a bucket.
    pub const BUCKET_WORDS: usize = BUCKET_WORDS;

    /// A table of about `mib` MiB (at least one bucket), zeroed lazily by the OS.
    pub fn new(mib: usize) -> Result<TranspositionTable, TableAllocError> {
        let bytes = mib.saturating_mul(1 << 20);
        let buckets = (bytes / BUCKET_BYTES).max(1);
        let words = AtomicTable::zeroed(buckets * BUCKET_WORDS).ok_or(TableAllocError { bytes })?;
        Ok(TranspositionTable {
            words,
            buckets,
            active: AtomicUsize::new(first_active(buckets)),
        })
    }

    /// Grows the buckets in use for a search that has searched `nodes` nodes: makes them eight
    /// times as many (up to the whole table) while they are fewer than the nodes.
    ///
    /// **Growing by use.** A table of more than 512 MiB is an upper bound: a search uses a
    /// prefix of it, 64 MiB at first, that grows eightfold whenever the nodes searched exceed
    /// its buckets, so a small search touches megabytes of a table of gigabytes (each page it
    /// touches costs the kernel a zeroed page, of 2 MiB with huge pages). A board's bucket
    /// depends on the buckets in use, so after a growth most boards are looked for where they
    /// were not stored: a miss, never a wrong bound (the fingerprint still has to match), which
    /// costs some search again.
    #[inline]
    pub fn grow(&self, nodes: u64) {
        let mut active = self.active.load(Ordering::Relaxed);
        while active < self.buckets
            && (active as u64) < nodes.saturating_mul(ACTIVE_BUCKETS_PER_NODE)
        {
            let wider = active.saturating_mul(GROWTH).min(self.buckets);
            match self
                .active
                .compare_exchange(active, wider, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => active = wider,
                Err(now) => active = now,
            }
        }
    }

    /// Puts the whole table in use at once (a table saved to a file, or loaded from one, is
    /// used whole, so that every board is where the file has it).
    pub fn use_all(&self) {
        self.active.store(self.buckets, Ordering::Relaxed);
    }

    /// Bytes in use (see [`TranspositionTable::grow`]).
    pub fn bytes_in_use(&self) -> usize {
        self.active.load(Ordering::Relaxed) * BUCKET_BYTES
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.buckets * BUCKET_BYTES
    }

    /// Buckets.
    pub fn buckets(&self) -> usize {
        self.buckets
    }

    /// The table's words, bucket by bucket (for [`crate::search::table_file`]).
    pub(crate) fn words(&self) -> &[AtomicU64] {
        &self.words
    }

    /// Empties every entry (touching every page of the table); the table then grows from its
    /// first buckets again.
    pub fn clear(&self) {
        self.active
            .store(first_active(self.buckets), Ordering::Relaxed);
        for word in self.words.iter() {
            word.store(0, Ordering::Relaxed);
        }
    }

    #[inline(always)]
    fn bucket<L: Lanes>(&self, key: L) -> (usize, u64) {
        self.bucket_of(Hashed::of(key))
    }

    /// The first word of the bucket of `hashed`, and its check word.
    #[inline(always)]
    fn bucket_of(&self, hashed: Hashed) -> (usize, u64) {
        let active = self.active.load(Ordering::Relaxed);
        let digest = hashed.digest;
        // A prefix growing by doublings is indexed by the digest's low bits, so that a doubling
        // leaves half the boards where they were; a whole table of any size by its high bits.
        let index = if active.is_power_of_two() {
            digest as usize & (active - 1)
        } else {
            ((u128::from(digest) * active as u128) >> 64) as usize
        };
        (index * BUCKET_WORDS, hashed.check)
    }

    /// [`TranspositionTable::probe`] of a key hashed once for the probe and the store of
    /// one node.
    #[inline]
    pub fn probe_hashed(&self, hashed: Hashed) -> Option<Entry> {
        let (base, check) = self.bucket_of(hashed);
        let slots = &self.words[base..base + BUCKET_WORDS];
        for pair in slots.chunks_exact(ENTRY_WORDS) {
            let data = pair[1].load(Ordering::Relaxed);
            if pair[0].load(Ordering::Relaxed) ^ data == check {
                return Some(Entry::unpack(data));
            }
        }
        None
    }

    /// Starts loading the bucket of `key` into the cache, for a probe soon after.
    #[inline(always)]
    pub fn prefetch<L: Lanes>(&self, key: L) {
        let (base, _) = self.bucket(key);
        crate::memory::prefetch(&self.words[base]);
    }

    /// What the table holds for `key`, if anything.
    #[inline]
    pub fn probe<L: Lanes>(&self, key: L) -> Option<Entry> {
        self.probe_hashed(Hashed::of(key))
    }

    /// Records `entry` for `key` (see the replacement policy in the module docs).
    #[inline]
    pub fn store<L: Lanes>(&self, key: L, entry: Entry) {
        self.store_hashed(Hashed::of(key), entry)
    }

    /// [`TranspositionTable::store`] of a key hashed once (see
    /// [`TranspositionTable::probe_hashed`]); if the table grew since, the entry goes where
    /// the key was, and a later probe may miss it (never find a wrong one: the check word
    /// is the key's).
    #[inline]
    pub fn store_hashed(&self, hashed: Hashed, entry: Entry) {
        let (base, check) = self.bucket_of(hashed);
        let slots = &self.words[base..base + BUCKET_WORDS];
        let mut victim = 0;
        // Work is below 64, so an exact entry's rank (work + 64) fits in a u8.
        let mut least_work = u8::MAX;
        for (i, pair) in slots.chunks_exact(ENTRY_WORDS).enumerate() {
            let data = pair[1].load(Ordering::Relaxed);
            let word0 = pair[0].load(Ordering::Relaxed);
            if word0 ^ data == check {
                let old = Entry::unpack(data);
                let merged = if old.depth > entry.depth {
                    return;
                } else if old.depth == EXACT_DEPTH {
                    Entry {
                        lower: entry.lower.max(old.lower),
                        upper: entry.upper.min(old.upper),
                        best: entry.best.or(old.best),
                        work: entry.work.max(old.work),
                        depth: entry.depth,
                    }
                } else {
                    entry
                };
                write(pair, check, merged.pack());
                return;
            }
            // Exact entries rank above every depth-limited one.
            let work = if word0 == 0 && data == 0 {
                0
            } else {
                let e = Entry::unpack(data);
                e.work + if e.depth == EXACT_DEPTH { 64 } else { 0 }
            };
            if work < least_work {
                least_work = work;
                victim = i;
            }
        }
        let pair = &slots[victim * ENTRY_WORDS..(victim + 1) * ENTRY_WORDS];
        write(pair, check, entry.pack());
    }
}

/// The buckets in use at first in a table of `buckets` buckets.
fn first_active(buckets: usize) -> usize {
    if buckets > GROW_ABOVE {
        FIRST_ACTIVE
    } else {
        buckets
    }
}

#[inline(always)]
fn write(pair: &[AtomicU64], check: u64, data: u64) {
    pair[1].store(data, Ordering::Relaxed);
    pair[0].store(check ^ data, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lanes::Narrow;

    fn entry(lower: i32, upper: i32, work: u8, depth: u8) -> Entry {
        Entry {
            lower,
            upper,
            best: Some(3),
            work,
            depth,
        }
    }

    #[test]
    fn entries_pack_and_unpack() {
        for e in [
            entry(-240, 240, 63, EXACT_DEPTH),
            entry(-1, -1, 0, 0),
            Entry {
                best: None,
                ..entry(5, 7, 9, 3)
            },
        ] {
            assert_eq!(Entry::unpack(e.pack()), e);
        }
    }

    #[test]
    fn exact_bounds_merge_and_deeper_wins() {
        let tt = TranspositionTable::new(1).unwrap();
        let key = Narrow(0x0102_0304);
        tt.store(key, entry(-4, 10, 5, EXACT_DEPTH));
        tt.store(key, entry(-10, 6, 5, EXACT_DEPTH));
        assert_eq!(tt.probe(key).map(|e| (e.lower, e.upper)), Some((-4, 6)));
        tt.store(key, entry(-2, -2, 5, 4));
        assert_eq!(tt.probe(key).map(|e| e.depth), Some(EXACT_DEPTH));
        assert_eq!(tt.probe(Narrow(0x0102_0305)), None);
    }

    #[test]
    fn colliding_buckets_keep_the_most_work() {
        // A one-bucket table: every key lands in the same four slots.
        let tt = TranspositionTable {
            words: AtomicTable::zeroed(BUCKET_WORDS).unwrap(),
            buckets: 1,
            active: AtomicUsize::new(1),
        };
        for i in 0..4u8 {
            tt.store(Narrow(u128::from(i) + 1), entry(0, 0, 10 + i, EXACT_DEPTH));
        }
        tt.store(Narrow(99), entry(2, 2, 20, EXACT_DEPTH));
        // The least work (key 1, work 10) was replaced; the others remain.
        assert_eq!(tt.probe(Narrow(1)), None);
        for i in 2..=4u128 {
            assert!(tt.probe(Narrow(i)).is_some());
        }
        assert_eq!(tt.probe(Narrow(99)).map(|e| e.lower), Some(2));
    }
}
