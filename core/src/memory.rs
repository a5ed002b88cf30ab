//! The crate's unsafe code, all of it: large zero-initialised tables of atomics, read-only maps
//! of database files, byte buffers shared between builder threads, the prefetch hint, the
//! SIGPIPE reset of the command line, advisory file locks, and the query of the machine's
//! physical memory.
//!
//! A transposition table of several GiB must not be written once just to be cleared, and must
//! not pay a TLB miss on every probe. So a table is an anonymous memory map (zeroed by the
//! kernel, backed only where touched), aligned to 2 MiB and advised to use transparent huge
//! pages where the OS offers them (Linux `madvise(MADV_HUGEPAGE)`): one TLB entry then covers
//! 2 MiB of table instead of 4 KiB.
//!
//! The maps need the `mmap` feature (memmap2). Without it a table or a level loaded into memory
//! is a plain zeroed allocation, and a level file "mapped" is read whole into memory: the same
//! bytes, without the huge pages or the loading on demand (WebAssembly has no maps at all).

use std::ops::Deref;
use std::sync::atomic::{AtomicU8, AtomicU64};

#[cfg(feature = "mmap")]
use memmap2::MmapMut;

/// Alignment of the table inside its map: one huge page.
#[cfg(feature = "mmap")]
const HUGE_PAGE: usize = 2 << 20;

/// `len` atomics, all zero, in [`HugeBytes`] (see the module docs).
pub struct AtomicTable {
    bytes: HugeBytes,
    len: usize,
}

impl AtomicTable {
    /// A table of `len` zeroed atomics; `None` if the memory cannot be mapped.
    pub fn zeroed(len: usize) -> Option<AtomicTable> {
        let bytes = HugeBytes::zeroed(len.checked_mul(std::mem::size_of::<AtomicU64>())?)?;
        Some(AtomicTable { bytes, len })
    }
}

/// `len` zeroed bytes in an anonymous map aligned to 2 MiB and advised to use huge pages (see
/// the module docs): for data read at random, such as a database level loaded into memory or
/// the words of an [`AtomicTable`].
#[cfg(feature = "mmap")]
pub struct HugeBytes {
    map: MmapMut,
    offset: usize,
    len: usize,
}

/// `len` zeroed bytes (without the `mmap` feature: a plain allocation, aligned for the words of
/// an [`AtomicTable`]).
#[cfg(not(feature = "mmap"))]
pub struct HugeBytes {
    words: Vec<u64>,
    len: usize,
}

#[cfg(not(feature = "mmap"))]
impl HugeBytes {
    /// `len` zeroed bytes; `None` if the memory cannot be allocated.
    pub fn zeroed(len: usize) -> Option<HugeBytes> {
        let mut words = Vec::new();
        let count = len.div_ceil(8);
        words.try_reserve_exact(count).ok()?;
        words.resize(count, 0);
        Some(HugeBytes { words, len })
    }

    /// The first byte, 8-byte aligned.
    fn start(&self) -> *const u8 {
        self.words.as_ptr().cast()
    }
}

#[cfg(not(feature = "mmap"))]
impl Deref for HugeBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // Safety: `words` owns `8 * words.len() >= len` initialised bytes from `start()`; u8 has
        // no alignment or validity requirement; the slice borrows `self`, which owns them.
        unsafe { std::slice::from_raw_parts(self.start(), self.len) }
    }
}

#[cfg(not(feature = "mmap"))]
impl std::ops::DerefMut for HugeBytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        // Safety: as in `deref`, and the slice borrows `self` mutably, so it is the only access.
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast(), self.len) }
    }
}

#[cfg(feature = "mmap")]
impl HugeBytes {
    /// `len` zeroed bytes; `None` if the memory cannot be mapped.
    pub fn zeroed(len: usize) -> Option<HugeBytes> {
        let map = MmapMut::map_anon(len.checked_add(HUGE_PAGE)?.max(1)).ok()?;
        let start = map.as_ptr() as usize;
        let offset = start.next_multiple_of(HUGE_PAGE) - start;
        #[cfg(target_os = "linux")]
        if len >= HUGE_PAGE {
            // Only advice: without huge pages the bytes still work, with more TLB misses.
            let _ = map.advise_range(memmap2::Advice::HugePage, offset, len);
        }
        Some(HugeBytes { map, offset, len })
    }

    /// The first byte, as a raw pointer taken from the map itself (not through a reference to
    /// the bytes), 2 MiB aligned.
    fn start(&self) -> *const u8 {
        self.map.as_ptr().wrapping_add(self.offset)
    }
}

#[cfg(feature = "mmap")]
impl Deref for HugeBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.map[self.offset..self.offset + self.len]
    }
}

#[cfg(feature = "mmap")]
impl std::ops::DerefMut for HugeBytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.map[self.offset..self.offset + self.len]
    }
}

impl Deref for AtomicTable {
    type Target = [AtomicU64];

    fn deref(&self) -> &[AtomicU64] {
        // Safety: `bytes` holds `8 * len` bytes from `start()`, which is 2 MiB aligned (8 bytes
        // without `mmap`) and so aligned for AtomicU64; anonymous maps (and the allocation
        // without `mmap`) are zero-filled and all-zero bytes are a valid
        // AtomicU64 (same representation as u64); the bytes are only ever accessed through this
        // shared slice of atomics (`bytes` is private and never dereferenced mutably), and the
        // slice borrows `self`, which owns the map, so it cannot outlive the mapping.
        unsafe { std::slice::from_raw_parts(self.bytes.start() as *const AtomicU64, self.len) }
    }
}

/// A read-only map of the whole of a file, registered with the SIGBUS handler while it lives
/// (see [`catch_bus_error`]); without the `mmap` feature, the file's bytes read whole.
pub struct FileMap {
    #[cfg(feature = "mmap")]
    map: memmap2::Mmap,
    #[cfg(not(feature = "mmap"))]
    map: Vec<u8>,
    /// Its slot in the handler's registry, if one was free.
    slot: Option<usize>,
}

impl std::ops::Deref for FileMap {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.map
    }
}

impl FileMap {
    /// The underlying map.
    #[cfg(feature = "mmap")]
    pub fn map(&self) -> &memmap2::Mmap {
        &self.map
    }
}

impl Drop for FileMap {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            bus::unregister(slot);
        }
    }
}

/// A read-only map of the whole of `file` (a database level: the bytes are read on demand and
/// shared with the page cache, so opening a level costs no reading).
///
/// On Linux a map of 2 MiB or more is advised to use huge pages, as tables are. The kernel then
/// reads the file into the page cache in 2 MiB pieces and maps each with one TLB entry (with 4 KiB
/// pages a search probing a level at random pays a page walk on almost every probe). Pieces the
/// page cache already holds in small pages stay small until they leave it; files the builder
/// has just written are cached in large pieces already.
///
/// Without the `mmap` feature the file is read whole into memory instead (and so is not
/// registered with the handler: no read of it can fault).
pub fn map_file(file: &std::fs::File) -> std::io::Result<FileMap> {
    #[cfg(not(feature = "mmap"))]
    {
        use std::io::{Read, Seek};
        let mut file = file;
        let mut map = Vec::new();
        file.rewind()?;
        file.read_to_end(&mut map)?;
        Ok(FileMap { map, slot: None })
    }
    #[cfg(feature = "mmap")]
    map_whole(file)
}

#[cfg(feature = "mmap")]
fn map_whole(file: &std::fs::File) -> std::io::Result<FileMap> {
    // Safety: the map is read-only and private to this process's view of a database file; the
    // crate never writes a level file after renaming it into place. Another process may still
    // write it, or cut it short: every byte pattern is a valid u8, so no read can produce an
    // invalid value, a write is caught before any value read since is given (see
    // `db::storage::Level::unchanged`), and a read past a new end of the file, which would
    // raise SIGBUS, reads zeros instead (see [`catch_bus_error`]).
    let map = unsafe { memmap2::Mmap::map(file) }?;
    #[cfg(target_os = "linux")]
    if map.len() >= HUGE_PAGE {
        // Only advice: without huge pages the map still works, with more TLB misses.
        let _ = map.advise(memmap2::Advice::HugePage);
    }
    let slot = bus::register(map.as_ptr() as usize, map.len());
    Ok(FileMap { map, slot })
}

/// The maps of files that the SIGBUS handler may repair: a fixed table, so that the handler
/// reads it without locks or allocation.
mod bus {
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Maps registered at most at once (a database has at most 65 levels a rule set).
    pub const SLOTS: usize = 512;

    /// Start and length of each registered map (0: a free slot).
    pub static STARTS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
    pub static LENS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];

    /// Registers the map at `start` of `len` bytes; its slot, or `None` if all are taken (a
    /// fault in it then ends the process, as before).
    #[cfg_attr(not(feature = "mmap"), allow(dead_code))]
    pub fn register(start: usize, len: usize) -> Option<usize> {
        if len == 0 {
            return None;
        }
        for slot in 0..SLOTS {
            if LENS[slot]
                .compare_exchange(0, usize::MAX, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                STARTS[slot].store(start, Ordering::Release);
                LENS[slot].store(len, Ordering::Release);
                return Some(slot);
            }
        }
        None
    }

    /// Frees `slot` (its map is about to be unmapped).
    pub fn unregister(slot: usize) {
        STARTS[slot].store(0, Ordering::Release);
        LENS[slot].store(0, Ordering::Release);
    }

    /// The registered map holding `addr`: its start and length (read by the handler, Unix).
    #[cfg_attr(not(unix), allow(dead_code))]
    pub fn find(addr: usize) -> Option<(usize, usize)> {
        for slot in 0..SLOTS {
            let len = LENS[slot].load(Ordering::Acquire);
            if len == 0 || len == usize::MAX {
                continue;
            }
            let start = STARTS[slot].load(Ordering::Acquire);
            if start != 0 && addr >= start && addr - start < len {
                return Some((start, len));
            }
        }
        None
    }
}

/// The same bytes, as atomics, so that threads may fill one buffer together.
pub fn atomic_bytes(bytes: &mut [u8]) -> &[AtomicU8] {
    // Safety: AtomicU8 has the same size, alignment and bit validity as u8; the exclusive borrow
    // of `bytes` is held for as long as the returned slice lives, so the bytes are accessed only
    // through the atomics meanwhile.
    unsafe { std::slice::from_raw_parts(bytes.as_mut_ptr() as *const AtomicU8, bytes.len()) }
}

/// fstat(2) of `file`.
#[cfg(unix)]
pub fn fstat(file: &std::fs::File) -> std::io::Result<libc::stat> {
    use std::os::unix::io::AsRawFd;
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // Safety: `st` is a buffer of the size fstat writes; the descriptor is open for as long as
    // `file` is borrowed; the struct is read only after fstat returned 0 (it then filled it).
    unsafe {
        if libc::fstat(file.as_raw_fd(), st.as_mut_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(st.assume_init())
    }
}

/// Restores the default action of SIGPIPE (end the process quietly), as command-line tools
/// expect: `kalah ... | head` then stops when `head` does, instead of failing on a write.
pub fn default_sigpipe() {
    #[cfg(unix)]
    // Safety: `signal` with SIG_DFL only resets the disposition of one signal; it is called
    // once at start-up, before any thread exists, and installs no handler code.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// What the SIGBUS handler says before the process ends.
#[cfg(unix)]
const BUS_MESSAGE: &[u8] = b"kalah: a memory-mapped file (a database level) was cut short or \
replaced while in use, and could not be read: stopped. No answer was given from it. Run the \
command again; `kalah db verify` checks the levels.\n";

#[cfg(unix)]
extern "C" fn bus_error(
    _signal: libc::c_int,
    info: *mut libc::siginfo_t,
    _context: *mut libc::c_void,
) {
    // Safety: the kernel passes a valid siginfo_t for a handler installed with SA_SIGINFO.
    let addr = unsafe { (*info).si_addr() } as usize;
    if let Some((start, len)) = bus::find(addr) {
        // The file was cut short under a registered map: zero pages over the rest of the map,
        // from the faulting page on, and the read that faulted runs again and reads zeros. No
        // value read there is given: the file's length changed, which every answer checks.
        let page = 4096;
        let from = addr & !(page - 1);
        let to = start + len;
        // Safety: mmap(2) is a system call (async-signal-safe in practice, as every fault
        // handler of a mapped database relies on); MAP_FIXED replaces only pages of the
        // registered map, which this process owns read-only and unmaps as a whole later.
        let zeroed = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                to - from,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if zeroed != libc::MAP_FAILED {
            return;
        }
    }
    // Safety: write(2) and _exit(2) are async-signal-safe; the message is a static buffer.
    unsafe {
        let _ = libc::write(2, BUS_MESSAGE.as_ptr().cast(), BUS_MESSAGE.len());
        libc::_exit(1);
    }
}

/// From now on a read of a mapped level file that was cut short under the map (SIGBUS) reads
/// zeros: the rest of the map, from the faulting page on, is replaced by zero pages, and the
/// level's changed length makes every answer that read from it an error naming the file. A
/// fault anywhere else ends the process with one line on stderr and exit code 1, not a bare
/// "Bus error". (Elsewhere than on Unix: nothing.)
pub fn catch_bus_error() {
    #[cfg(unix)]
    // Safety: the handler only calls async-signal-safe functions (mmap, write, _exit) and reads
    // atomics; it has the signature SA_SIGINFO asks for; it is installed once at start-up.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = bus_error
            as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
            as libc::sighandler_t;
        action.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
    }
}

/// Set by the SIGINT handler [`catch_interrupt`] installs.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Set by [`catch_interrupt_twice`]: a second signal ends the process at once.
static EXIT_ON_SECOND: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[cfg(unix)]
extern "C" fn note_interrupt(_signal: libc::c_int) {
    // Atomic loads and stores are async-signal-safe.
    let again = INTERRUPTED.swap(true, std::sync::atomic::Ordering::Relaxed);
    if again && EXIT_ON_SECOND.load(std::sync::atomic::Ordering::Relaxed) {
        // Safety: _exit(2) is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
}

/// The message [`exit_on_interrupt`] writes (its address and length), if set.
static EARLY_MESSAGE: std::sync::atomic::AtomicPtr<u8> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());
static EARLY_LENGTH: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[cfg(unix)]
extern "C" fn exit_with_message(_signal: libc::c_int) {
    let message = EARLY_MESSAGE.load(std::sync::atomic::Ordering::Relaxed);
    let length = EARLY_LENGTH.load(std::sync::atomic::Ordering::Relaxed);
    // Safety: write(2) and _exit(2) are async-signal-safe; `message` is null or the address
    // of a `&'static str` of `length` bytes, stored before the handler was installed.
    unsafe {
        if !message.is_null() {
            libc::write(2, message as *const libc::c_void, length);
        }
        libc::_exit(130);
    }
}

/// Until [`catch_interrupt`] takes over, Ctrl-C (SIGINT) ends the process at once with
/// `message` on stderr and exit code 130, instead of silently: for the moments of a long
/// command before it has anything to keep (reading its inputs, opening files, asking).
/// (Elsewhere than on Unix: nothing.)
pub fn exit_on_interrupt(message: &'static str) {
    EARLY_LENGTH.store(message.len(), std::sync::atomic::Ordering::Relaxed);
    EARLY_MESSAGE.store(
        message.as_ptr() as *mut u8,
        std::sync::atomic::Ordering::Relaxed,
    );
    #[cfg(unix)]
    // Safety: the handler only loads static atomics and makes async-signal-safe calls, and
    // `exit_with_message` has the C signature `signal` expects for a handler.
    unsafe {
        libc::signal(
            libc::SIGINT,
            exit_with_message as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

/// [`catch_interrupt`], and a second Ctrl-C or SIGTERM ends the process at once (exit code
/// 130): for a command that finishes what it has begun before it stops, such as a game.
pub fn catch_interrupt_twice() {
    EXIT_ON_SECOND.store(true, std::sync::atomic::Ordering::Relaxed);
    catch_interrupt();
}

/// From now on Ctrl-C (SIGINT) and SIGTERM only set a flag, read by [`interrupted`], instead of
/// ending the process: for a command that must save its work first. (Elsewhere than on Unix:
/// nothing.)
pub fn catch_interrupt() {
    #[cfg(unix)]
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // Safety: the handler only stores to a static atomic, which is async-signal-safe, and
        // `note_interrupt` has the C signature `signal` expects for a handler.
        unsafe {
            libc::signal(
                signal,
                note_interrupt as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

/// Whether Ctrl-C was pressed (or SIGTERM came) since [`catch_interrupt`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed)
}

/// What [`warm_file`] did to one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Warmed {
    /// The file's bytes, all read.
    pub bytes: u64,
    /// Of them, the bytes the page cache now holds in 2 MiB pieces mapped whole (Linux
    /// `FilePmdMapped`); `None` where the OS does not say.
    pub huge_bytes: Option<u64>,
}

/// Loads `file` (a database level, never written again) into the page cache in 2 MiB pieces
/// where the OS allows: its cached pages that no process maps are dropped ([`drop_cached`]),
/// then every page is read through a huge-page map ([`map_file`]), which reads the file back
/// in 2 MiB pieces. Pages another process maps stay as they are.
///
/// Why: the page cache may hold a level in small pieces (read with plain reads, or partly
/// reclaimed under memory pressure and faulted back a page at a time), and then a search
/// pays a TLB miss on most probes. Measured: Kalah(6,4) on the levels 0..24, one thread,
/// 1.55-1.69 s with level 24 in small pieces, 1.34-1.44 s with every level in 2 MiB pieces.
///
/// The map is returned: while it is kept, the pages stay mapped (see `kalah db warm --hold`).
pub fn warm_file(file: &std::fs::File) -> std::io::Result<(Warmed, FileMap)> {
    drop_cached(file);
    let map = map_file(file)?;
    let mut sum = 0u8;
    // One byte a 4 KiB page: each fault reads (and maps) its whole piece.
    for i in (0..map.len()).step_by(4096) {
        sum ^= map[i];
    }
    std::hint::black_box(sum);
    let warmed = Warmed {
        bytes: map.len() as u64,
        huge_bytes: huge_mapped(map.as_ptr() as usize),
    };
    Ok((warmed, map))
}

/// The bytes mapped in 2 MiB pieces (`FilePmdMapped`) of this process's map starting at
/// `start`, from /proc/self/smaps; `None` where it cannot be read.
fn huge_mapped(start: usize) -> Option<u64> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let head = format!("{start:x}-");
    let mut inside = false;
    for line in smaps.lines() {
        if line.contains('-') && line.split_whitespace().count() >= 5 && !line.ends_with("kB") {
            // A map's first line: "start-end perms offset dev inode [path]".
            inside = line.starts_with(&head);
            continue;
        }
        if inside {
            if let Some(rest) = line.strip_prefix("FilePmdMapped:") {
                let kib: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
                return Some(kib * 1024);
            }
        }
    }
    None
}

/// Asks the OS to drop the cached pages of `file`, which must be synced (clean pages only are
/// dropped; Linux `posix_fadvise(POSIX_FADV_DONTNEED)`, elsewhere nothing). Only advice: the
/// file is unchanged, and the next read or map loads it again.
///
/// A level just written sits in the page cache in the small pieces the writes made, and a map
/// of it then costs a TLB miss on nearly every probe; dropped, it comes back through the
/// huge-page advice of [`map_file`] in 2 MiB pieces (measured: Kalah(6,4), levels 0..24, one
/// thread, 2.3-2.6 s with the levels as written, 1.9 s once reloaded).
pub fn drop_cached(file: &std::fs::File) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::io::AsRawFd;
        // Safety: posix_fadvise only reads its integer arguments; the descriptor is open while
        // `file` is borrowed; the advice never changes the file's bytes or any memory of ours.
        let _ = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

/// The page's monotonic clock in milliseconds (`performance.now()`), which the page that loads
/// the WebAssembly module lends it as the import `kalah.now_ms` (see [`crate::clock`]).
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
pub fn page_clock_ms() -> f64 {
    #[link(wasm_import_module = "kalah")]
    unsafe extern "C" {
        fn now_ms() -> f64;
    }
    // Safety: the import takes nothing and returns a number; the page supplies it when it
    // instantiates the module (instantiation fails without it), and it touches no memory of the
    // module.
    unsafe { now_ms() }
}

/// Asks the CPU to start loading the cache line of `slot` (a hint; never faults).
#[inline(always)]
pub fn prefetch<T>(slot: &T) {
    #[cfg(target_arch = "x86_64")]
    // Safety: prefetching is only a hint; it reads nothing and cannot fault, and SSE (which
    // provides it) is part of the x86_64 baseline.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(slot as *const T as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = slot;
}

/// The machine's physical memory in bytes, as the OS reports it (asked once); `None` where it
/// does not say.
pub fn physical_memory() -> Option<u64> {
    static BYTES: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| {
        #[cfg(any(target_os = "linux", target_os = "android", target_os = "macos"))]
        {
            // Safety: `sysconf` only reads a system setting: it takes no pointer, has no
            // precondition, and answers -1 for a setting it does not know.
            let (pages, page_size) = unsafe {
                (
                    libc::sysconf(libc::_SC_PHYS_PAGES),
                    libc::sysconf(libc::_SC_PAGESIZE),
                )
            };
            let pages = u64::try_from(pages).ok().filter(|&p| p > 0)?;
            let page_size = u64::try_from(page_size).ok().filter(|&p| p > 0)?;
            pages.checked_mul(page_size)
        }
        #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos")))]
        None
    })
}

/// The soft limit on this process's address space (`ulimit -v`), if one is set.
pub fn address_space_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // Safety: `getrlimit` writes one `rlimit` through the pointer, which points at one.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0;
        if ok && limit.rlim_cur != libc::RLIM_INFINITY {
            // `rlim_t` is u64 on Linux, not on every Unix.
            #[allow(clippy::unnecessary_cast)]
            return Some(limit.rlim_cur as u64);
        }
        None
    }
    #[cfg(not(unix))]
    None
}

/// The effective user id of this process (Unix); `None` elsewhere.
#[cfg_attr(not(unix), allow(dead_code))]
pub fn user_id() -> Option<u32> {
    #[cfg(unix)]
    {
        // Safety: `geteuid` takes nothing, cannot fail and only reads the process's user id.
        Some(unsafe { libc::geteuid() })
    }
    #[cfg(not(unix))]
    None
}

/// Takes the exclusive advisory lock of `file` (`flock`; the lock ends when every handle to
/// this opening of the file is closed): `wait` until it is free, else fail at once with an
/// [`std::io::ErrorKind::WouldBlock`] error. Elsewhere than on Unix: an
/// [`std::io::ErrorKind::Unsupported`] error.
pub fn lock_exclusive(file: &std::fs::File, wait: bool) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let operation = libc::LOCK_EX | if wait { 0 } else { libc::LOCK_NB };
        loop {
            // Safety: `flock` only takes a file descriptor, which `file` keeps open for the
            // whole call; it reads and writes no memory of this process.
            if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
                return Ok(());
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, wait);
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

/// The bytes free for an unprivileged user on the file system that holds `path` (`statvfs`);
/// an [`std::io::ErrorKind::Unsupported`] error elsewhere than on Unix.
pub fn free_space(path: &std::path::Path) -> std::io::Result<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        let mut stats = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
        // Safety: `name` is a NUL-terminated string that lives through the call, and `stats`
        // points to writable memory the size of a `statvfs`, which the call fills on success.
        if unsafe { libc::statvfs(name.as_ptr(), stats.as_mut_ptr()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // Safety: the call succeeded, so it wrote the whole struct (and it was zeroed before).
        let stats = unsafe { stats.assume_init() };
        #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
        Ok((stats.f_bavail as u64).saturating_mul(stats.f_frsize as u64))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

/// CPU time this process has used so far, user and system, all threads (`getrusage`); `None`
/// where the OS does not say.
pub fn cpu_time() -> Option<std::time::Duration> {
    #[cfg(unix)]
    {
        let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
        // Safety: `getrusage` writes one `rusage` into the memory it is given, which is
        // `usage`'s, and reads nothing else of this process.
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } != 0 {
            return None;
        }
        // Safety: `getrusage` returned 0, so it filled `usage`.
        let usage = unsafe { usage.assume_init() };
        let time = |t: libc::timeval| {
            std::time::Duration::from_secs(t.tv_sec.max(0) as u64)
                + std::time::Duration::from_micros(t.tv_usec.max(0) as u64)
        };
        Some(time(usage.ru_utime) + time(usage.ru_stime))
    }
    #[cfg(not(unix))]
    None
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::AtomicTable;

    #[test]
    fn physical_memory_is_known_on_linux() {
        #[cfg(target_os = "linux")]
        assert!(super::physical_memory().is_some_and(|b| b >= 64 << 20));
    }

    #[test]
    fn zeroed_tables_are_zero_and_usable() {
        for len in [0, 1, 1000, 1 << 20] {
            let table = AtomicTable::zeroed(len).unwrap();
            assert_eq!(table.len(), len);
            assert!(table.iter().all(|a| a.load(Ordering::Relaxed) == 0));
            if len > 0 {
                table[len - 1].store(7, Ordering::Relaxed);
                assert_eq!(table[len - 1].load(Ordering::Relaxed), 7);
            }
        }
    }
}
