//! The crate's unsafe code, all of it: large zero-initialised tables of atomics.
//!
//! A transposition table of several GiB must not be written once just to be cleared: the
//! allocator hands out zeroed pages (calloc / fresh mmap) that the kernel only backs when
//! touched, so a table is ready at once and costs memory only where it is used.

use std::sync::atomic::AtomicU64;

/// A boxed slice of `len` atomics, all zero, from zeroed memory (lazily backed by the OS).
///
/// Returns `None` if the allocation fails (the caller reports how much it asked for).
pub fn zeroed_atomics(len: usize) -> Option<Box<[AtomicU64]>> {
    if len == 0 {
        return Some(Box::new([]));
    }
    let layout = std::alloc::Layout::array::<AtomicU64>(len).ok()?;
    // Safety: `layout` has a non-zero size (len > 0) and AtomicU64's alignment.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) } as *mut AtomicU64;
    if ptr.is_null() {
        return None;
    }
    // Safety: `ptr` was allocated by the global allocator with the layout of `[AtomicU64; len]`,
    // which is what Box<[AtomicU64]> frees with; all-zero bytes are a valid AtomicU64 (it has
    // the same in-memory representation as u64), so every element is initialised.
    Some(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    #[test]
    fn zeroed_atomics_are_zero_and_usable() {
        let table = super::zeroed_atomics(1 << 20).unwrap();
        assert!(table.iter().all(|a| a.load(Ordering::Relaxed) == 0));
        table[12345].store(7, Ordering::Relaxed);
        assert_eq!(table[12345].load(Ordering::Relaxed), 7);
        assert!(super::zeroed_atomics(0).unwrap().is_empty());
    }
}
