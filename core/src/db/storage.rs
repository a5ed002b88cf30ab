//! One level: where its bytes live (a memory map, plain reads from the file, or memory), and
//! the check of every block before any of its entries is believed.
//!
//! [`Storage`] is the byte source, with three backends: [`Mapped`] (the default: opening costs
//! nothing, pages load on demand), [`PlainRead`] (for file systems that cannot map) and
//! [`InMemory`]. [`Level`] sits on top: it knows the file's layout ([`crate::db::format`]),
//! checks a block against its checksum the first time an entry of it is read, and remembers
//! the blocks checked in a bit set shared by every thread, so that a query checks the few
//! blocks it reads and a long search pays once a block. A block that fails is never
//! remembered: every read of it fails again, with an error naming the level, the block and
//! the file.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use bitvec::prelude::{BitSlice, BitVec, Lsb0};
use rayon::prelude::*;

use crate::db::DbError;
use crate::db::format::{HEADER_LEN, Header, block_checksum, table_checksum};
use crate::db::packed::{Packed, SLACK, from_pair, pack};
use crate::rules::Rules;

/// How to open level files.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Access {
    /// Map the file read-only (the default: opening costs nothing, pages load on demand).
    #[default]
    Map,
    /// Read each entry from the file when asked (no map; for file systems that cannot map).
    Read,
    /// Read the whole file into memory at open, checking every block.
    Memory,
}

/// The bytes of one level file (or of a level's entries, for a level built in memory).
pub trait Storage: Send + Sync {
    /// Bytes.
    fn len(&self) -> u64;

    /// Whether there are no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fills `buf` with the bytes from `offset` (`offset + buf.len() <= len`).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DbError>;

    /// All the bytes, when they are addressable in memory.
    fn as_slice(&self) -> Option<&[u8]>;

    /// A hint that the bytes `offset..offset + len` will be read soon (nothing by default).
    fn will_need(&self, _offset: u64, _len: u64) {}
}

/// A memory-mapped level file.
pub struct Mapped {
    map: crate::memory::FileMap,
}

impl Storage for Mapped {
    fn len(&self) -> u64 {
        self.map.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DbError> {
        let start = offset as usize;
        buf.copy_from_slice(&self.map[start..start + buf.len()]);
        Ok(())
    }

    fn as_slice(&self) -> Option<&[u8]> {
        Some(&self.map)
    }

    fn will_need(&self, offset: u64, len: u64) {
        // The pages of the range (memmap2 widens it to whole pages), read from disk now if they
        // are not cached, without waiting.
        #[cfg(all(unix, feature = "mmap"))]
        {
            let len = len.min(self.len() - offset);
            let _ = self.map.map().advise_range(
                memmap2::Advice::WillNeed,
                offset as usize,
                len as usize,
            );
        }
        #[cfg(not(all(unix, feature = "mmap")))]
        let _ = (offset, len);
    }
}

/// A level file read piece by piece.
pub struct PlainRead {
    file: File,
    len: u64,
}

impl Storage for PlainRead {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DbError> {
        read_at(&self.file, buf, offset)?;
        Ok(())
    }

    fn as_slice(&self) -> Option<&[u8]> {
        None
    }
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset)
}

/// Where std reads no file at an offset (WebAssembly, whose std has no files at all).
#[cfg(not(any(unix, windows)))]
fn read_at(_file: &File, _buf: &mut [u8], _offset: u64) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    let mut done = 0;
    while done < buf.len() {
        match file.seek_read(&mut buf[done..], offset + done as u64)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => done += n,
        }
    }
    Ok(())
}

/// Bytes held in memory (a level built in this process, or a file read whole).
pub struct InMemory {
    bytes: Bytes,
}

enum Bytes {
    Vec(Vec<u8>),
    Huge(crate::memory::HugeBytes),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Vec(v) => v,
            Bytes::Huge(h) => h,
        }
    }
}

impl Storage for InMemory {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DbError> {
        let start = offset as usize;
        buf.copy_from_slice(&self.bytes[start..start + buf.len()]);
        Ok(())
    }

    fn as_slice(&self) -> Option<&[u8]> {
        Some(&self.bytes)
    }
}

/// The blocks of a level checked so far, one bit a block, shared by every thread (in words of
/// the platform's width: bitvec has no 64-bit atomic words on 32-bit targets such as
/// WebAssembly).
pub type Checked = BitSlice<AtomicUsize, Lsb0>;

/// One level of a database: its entries, read only through blocks that passed their check.
pub struct Level {
    header: Header,
    /// The file (empty for a level built in memory).
    path: PathBuf,
    storage: Box<dyn Storage>,
    /// Where entry 0 is in `storage`.
    entries_at: u64,
    /// One bit a block: it passed its check.
    checked: BitVec<AtomicUsize, Lsb0>,
    /// The file as it was when opened, for [`Level::unchanged`] (none for a level in memory:
    /// its bytes are its own).
    watch: Option<Watch>,
}

/// An open level file and what `fstat` said of it when it was opened: its identity, length and
/// times. A file written in place (a copy over it, a flipped byte, a truncation, a write
/// through another map) gets a new modification or change time, and the map shows its new
/// bytes at once; a file replaced by a rename does not change under the map, which still holds
/// the old one.
struct Watch {
    file: File,
    stamp: Stamp,
}

/// The parts of a file's status that any write to it changes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Stamp {
    len: u64,
    #[cfg(unix)]
    inode: (u64, u64),
    #[cfg(unix)]
    modified: (i64, i64),
    #[cfg(unix)]
    changed: (i64, i64),
    #[cfg(not(unix))]
    modified: Option<std::time::SystemTime>,
}

impl Stamp {
    fn of(file: &File) -> std::io::Result<Stamp> {
        #[cfg(unix)]
        {
            // fstat(2) itself: `File::metadata` asks statx(2) for more, and this runs once a
            // level an answer (see [`Level::unchanged`]).
            let st = crate::memory::fstat(file)?;
            Ok(Stamp {
                len: st.st_size as u64,
                inode: (st.st_dev as u64, st.st_ino as u64),
                modified: (st.st_mtime as i64, st.st_mtime_nsec as i64),
                changed: (st.st_ctime as i64, st.st_ctime_nsec as i64),
            })
        }
        #[cfg(not(unix))]
        {
            let meta = file.metadata()?;
            Ok(Stamp {
                len: meta.len(),
                modified: meta.modified().ok(),
            })
        }
    }
}

impl Level {
    /// A level built in this process from `entries` (one a byte), packed at the level's width:
    /// every block counts as checked.
    pub fn built(houses: usize, rules: Rules, level: u32, entries: &[u8]) -> Level {
        let header = Header::new(houses as u8, rules, level, entries.len() as u64);
        let n = header.payload_len() as usize;
        let mut bytes = vec![0u8; n + SLACK];
        pack(entries, u32::from(header.width), &mut bytes[..n]);
        Level {
            checked: BitVec::repeat(true, header.blocks() as usize),
            watch: None,
            header,
            path: PathBuf::new(),
            storage: Box::new(InMemory {
                bytes: Bytes::Vec(bytes),
            }),
            entries_at: 0,
        }
    }

    /// What the file's header says.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The file (empty for a level built in memory).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Seeds on the board.
    pub fn level(&self) -> u32 {
        self.header.level
    }

    /// Entries.
    pub fn len(&self) -> u64 {
        self.header.entries
    }

    /// Whether the level has no entries (levels 0 and 1).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The blocks checked so far.
    pub fn checked(&self) -> &Checked {
        &self.checked
    }

    /// An error naming the file if it was written since it was opened (its length, times or
    /// identity differ from what `fstat` said then): its bytes under the map, or those read
    /// from it, may then differ from the ones whose blocks were checked, so no value read from
    /// it since may be given. A caller checks this after reading the values of an answer and
    /// before giving it; a level once changed stays refused (open the database again).
    ///
    /// A write changes the times before it changes the bytes, so a write that a read saw is
    /// seen here. What it cannot see: a write within the same tick of the file system's clock
    /// (a few milliseconds) as the write before the file was opened, on a kernel whose
    /// timestamps are that coarse.
    pub fn unchanged(&self) -> Result<(), DbError> {
        let Some(watch) = &self.watch else {
            return Ok(());
        };
        let now = Stamp::of(&watch.file).map_err(|e| DbError::from(e).in_file(&self.path))?;
        if now == watch.stamp {
            return Ok(());
        }
        Err(DbError::Changed {
            level: self.header.level,
            was: watch.stamp.len,
            now: now.len,
        }
        .in_file(&self.path))
    }

    /// log2 of the entries in a block.
    pub fn block_shift(&self) -> u32 {
        u32::from(self.header.block_shift)
    }

    /// The entry at `index` (< `len`), its block checked first if it was not yet.
    #[inline]
    pub fn get(&self, index: u64) -> Result<u8, DbError> {
        let block = index >> self.block_shift();
        if !self.checked[block as usize] {
            self.check_block(block)?;
        }
        let entry = match self.entries_unchecked() {
            Some(packed) => packed.get(index),
            None => {
                // The entry's bytes, and the one after them (the padding or the block table
                // follows the entries: the file has it).
                let width = self.header.width;
                let bit = index * u64::from(width);
                let mut pair = [0u8; 2];
                self.storage.read_at(self.entries_at + bit / 8, &mut pair)?;
                from_pair(pair, bit, (1 << width) - 1)
            }
        };
        self.in_range(index, entry)
    }

    /// `entry`, read at `index`, if it is a value of this level; otherwise the error (a file
    /// whose checksums pass but whose entries do not: written by something else than a build).
    #[inline]
    pub fn in_range(&self, index: u64, entry: u8) -> Result<u8, DbError> {
        if u32::from(entry) > self.header.level {
            return Err(self.error(DbError::OutOfRange {
                level: self.header.level,
                entry: index,
                stored: entry,
            }));
        }
        Ok(entry)
    }

    /// All entries, unchecked, when they are addressable in memory: for the search's probe
    /// (which checks [`Level::checked`] itself) and for a builder that has checked them all.
    pub fn entries_unchecked(&self) -> Option<Packed<'_>> {
        let all = self.storage.as_slice()?;
        // The entries and what follows them: the padding and the block table in a file, the
        // slack of a level in memory.
        let from = &all[self.entries_at as usize..];
        Packed::new(from, u32::from(self.header.width), self.header.entries)
    }

    /// A hint that entry `index` (< `len`) will be read soon: the storage may start loading its
    /// block and, if the block is not checked yet, its checksum.
    pub fn will_need(&self, index: u64) {
        let block = index >> self.block_shift();
        if self.checked[block as usize] {
            let bit = index * u64::from(self.header.width);
            self.storage.will_need(self.entries_at + bit / 8, 2);
        } else {
            let range = self.header.block_bytes_range(block);
            let len = range.end - range.start;
            self.storage.will_need(self.entries_at + range.start, len);
            self.storage
                .will_need(self.header.checksum_offset(block), 8);
        }
    }

    /// Starts loading block `block`'s bytes and its checksum, for a check soon after (nothing
    /// for a level not in memory).
    #[inline]
    pub fn prefetch_block(&self, block: u64) {
        let Some(all) = self.storage.as_slice() else {
            return;
        };
        if let Some(word) = all.get(self.header.checksum_offset(block) as usize) {
            crate::memory::prefetch(word);
        }
        let range = self.header.block_bytes_range(block);
        let from = (self.entries_at + range.start) as usize;
        let to = (self.entries_at + range.end) as usize;
        if let Some(bytes) = all.get(from..to) {
            for line in bytes.chunks(64) {
                crate::memory::prefetch(&line[0]);
            }
        }
    }

    /// Checks block `block` against its checksum, and remembers that it passed.
    #[cold]
    pub fn check_block(&self, block: u64) -> Result<(), DbError> {
        if self.block_passes(block)? {
            Ok(())
        } else {
            Err(self.damaged(block))
        }
    }

    /// Whether block `block` matches its checksum (remembered when it does); an error only if
    /// the bytes cannot be read.
    fn block_passes(&self, block: u64) -> Result<bool, DbError> {
        // Every line of the block asked for at once: the hash then waits on memory once, not
        // once a line; and the stored checksum, read after the hash, loads meanwhile.
        self.prefetch_block(block);
        let range = self.header.block_bytes_range(block);
        let mut owned = Vec::new();
        let bytes = match self.entries_unchecked() {
            Some(entries) => &entries.bytes()[range.start as usize..range.end as usize],
            None => {
                owned.resize((range.end - range.start) as usize, 0);
                self.storage
                    .read_at(self.entries_at + range.start, &mut owned)?;
                &owned[..]
            }
        };
        let found = block_checksum(bytes, self.header.block_seed(block));
        if found != self.stored_checksum(block)? {
            return Ok(false);
        }
        self.checked.set_aliased(block as usize, true);
        Ok(true)
    }

    /// The checksum of block `block` stored in the table.
    fn stored_checksum(&self, block: u64) -> Result<u64, DbError> {
        let mut word = [0u8; 8];
        self.storage
            .read_at(self.header.checksum_offset(block), &mut word)?;
        Ok(u64::from_le_bytes(word))
    }

    /// The error for damaged block `block`, naming the file.
    pub fn damaged(&self, block: u64) -> DbError {
        let range = self.header.block_range(block);
        self.error(DbError::Damaged {
            level: self.header.level,
            block,
            entries: range,
        })
    }

    /// `error`, said of this level's file.
    pub fn error(&self, error: DbError) -> DbError {
        if self.path.as_os_str().is_empty() {
            error
        } else {
            error.in_file(&self.path)
        }
    }

    /// The error `damage` of this level amounts to, naming the file: the first damaged block,
    /// else a damaged block table; `None` if the level is sound.
    pub fn defect(&self, damage: &Damage) -> Option<DbError> {
        match damage.blocks.first() {
            Some(&block) => Some(self.damaged(block)),
            None if damage.table => Some(self.error(DbError::DamagedTable {
                level: self.header.level,
            })),
            None => None,
        }
    }

    /// Checks every block (in parallel, in the current rayon pool) and the table's checksum
    /// against the header; returns the damaged blocks (empty: the level is sound). Stops early,
    /// with [`DbError::Cancelled`], when `cancel` is set; `progress` gets the blocks done.
    pub fn check_all(
        &self,
        cancel: &AtomicBool,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Damage, DbError> {
        if self.path.as_os_str().is_empty() {
            return Ok(Damage::default());
        }
        let blocks = self.header.blocks();
        let mut table = vec![0u8; 8 * blocks as usize];
        self.storage
            .read_at(self.header.table_offset(), &mut table)?;
        let table_ok = table_checksum(&table) == self.header.table_checksum;
        const CHUNK: u64 = 256;
        let done = AtomicU64::new(0);
        let bad: Vec<u64> = (0..blocks.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                if cancel.load(Ordering::Relaxed) {
                    return Err(DbError::Cancelled);
                }
                let mut bad = Vec::new();
                let range = c * CHUNK..((c + 1) * CHUNK).min(blocks);
                let n = range.end - range.start;
                for block in range {
                    if !self.block_passes(block)? {
                        bad.push(block);
                    }
                }
                progress(done.fetch_add(n, Ordering::Relaxed) + n);
                Ok(bad)
            })
            .collect::<Result<Vec<_>, DbError>>()?
            .concat();
        Ok(Damage {
            blocks: bad,
            table: !table_ok,
        })
    }
}

/// What [`Level::check_all`] found wrong.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Damage {
    /// The blocks that failed their check, in order.
    pub blocks: Vec<u64>,
    /// The block table does not match the header's table checksum.
    pub table: bool,
}

/// Opens the level file at `path`, checking its header (the one for `houses`, `rules`,
/// `level` with `entries` entries) and that the file's length is the one the header implies.
/// Entries are checked block by block as they are read; [`Access::Memory`] reads the whole
/// file and checks every block now. Every error names the file; a FIFO or a device is refused
/// without waiting.
pub fn open_level(
    path: &Path,
    access: Access,
    houses: usize,
    rules: Rules,
    level: u32,
    entries: u64,
) -> Result<Level, DbError> {
    open(path, access, houses, rules, level, entries, false).map_err(|e| e.in_file(path))
}

/// [`open_level`] for a file whose entries may have any width (for
/// [`crate::db::upgrade`], which reads byte-wide files).
pub(crate) fn open_level_any_width(
    path: &Path,
    houses: usize,
    rules: Rules,
    level: u32,
    entries: u64,
) -> Result<Level, DbError> {
    open(path, Access::Map, houses, rules, level, entries, true).map_err(|e| e.in_file(path))
}

fn open(
    path: &Path,
    access: Access,
    houses: usize,
    rules: Rules,
    level: u32,
    entries: u64,
    any_width: bool,
) -> Result<Level, DbError> {
    let mut file = crate::files::open_regular(path)?;
    let header = if any_width {
        Header::read_any_width(&mut file)?
    } else {
        Header::read(&mut file)?
    };
    header.expect(houses, rules, level, entries)?;
    let expected = header.file_len();
    let stamp = Stamp::of(&file)?;
    let found = stamp.len;
    if found != expected {
        return Err(DbError::Truncated { expected, found });
    }
    let mut watch = None;
    let storage: Box<dyn Storage> = match access {
        Access::Map => {
            let map = crate::memory::map_file(&file)?;
            watch = Some(Watch { file, stamp });
            Box::new(Mapped { map })
        }
        Access::Read => {
            watch = Some(Watch {
                file: file.try_clone()?,
                stamp,
            });
            Box::new(PlainRead { file, len: found })
        }
        Access::Memory => {
            use std::io::{Read, Seek};
            // Huge pages: a search reads a level at random, and 4 KiB pages would cost a TLB
            // miss on nearly every probe.
            let mut bytes = crate::memory::HugeBytes::zeroed(found as usize).ok_or_else(|| {
                DbError::Io(std::io::Error::new(
                    std::io::ErrorKind::OutOfMemory,
                    format!("cannot allocate {found} bytes"),
                ))
            })?;
            file.rewind()?;
            file.read_exact(&mut bytes)?;
            Box::new(InMemory {
                bytes: Bytes::Huge(bytes),
            })
        }
    };
    let level = Level {
        checked: BitVec::repeat(false, header.blocks() as usize),
        watch,
        header,
        path: path.to_path_buf(),
        storage,
        entries_at: HEADER_LEN as u64,
    };
    if access == Access::Memory {
        let damage = level.check_all(&AtomicBool::new(false), &|_| {})?;
        if let Some(defect) = level.defect(&damage) {
            return Err(defect);
        }
    }
    Ok(level)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_built_level_is_trusted_whole() {
        let level = Level::built(2, Rules::Standard, 3, &[1, 2, 3, 0, 1, 2, 3, 3, 2]);
        assert_eq!(level.len(), 9);
        assert_eq!(level.header().width, 2);
        assert!(level.checked().all());
        assert_eq!(level.get(5).unwrap(), 2);
        assert_eq!(level.get(8).unwrap(), 2);
        let bad = Level::built(2, Rules::Standard, 2, &[3]);
        assert!(matches!(bad.get(0), Err(DbError::OutOfRange { .. })));
    }
}
