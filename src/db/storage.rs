//! Where the bytes of one level live: a memory map, plain reads from the file, or memory.
//!
//! The probe reads through [`Storage`]; the builder and the search want the entries as a slice
//! and take it from [`Storage::as_slice`] (a map or memory; plain reads have none).

use std::fs::File;
use std::path::Path;

use crate::db::DbError;
use crate::db::format::{HEADER_LEN, Header, checksum};
use crate::rules::Rules;

/// How to open level files.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Access {
    /// Map the file read-only (the default: opening costs nothing, pages load on demand).
    #[default]
    Map,
    /// Read each entry from the file when asked (no map; for file systems that cannot map).
    Read,
    /// Read the whole file into memory at open, checking its checksum.
    Memory,
}

/// The entries of one level.
pub trait Storage: Send + Sync {
    /// Entries.
    fn len(&self) -> u64;

    /// Whether the level has no entries (levels 0 and 1).
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entry at `index` (< `len`).
    fn get(&self, index: u64) -> Result<u8, DbError>;

    /// All entries, when they are addressable in memory.
    fn as_slice(&self) -> Option<&[u8]>;
}

/// A memory-mapped level file.
pub struct Mapped {
    map: memmap2::Mmap,
}

impl Storage for Mapped {
    fn len(&self) -> u64 {
        (self.map.len() - HEADER_LEN) as u64
    }

    fn get(&self, index: u64) -> Result<u8, DbError> {
        Ok(self.map[HEADER_LEN + index as usize])
    }

    fn as_slice(&self) -> Option<&[u8]> {
        Some(&self.map[HEADER_LEN..])
    }
}

/// A level file read entry by entry.
pub struct PlainRead {
    file: File,
    len: u64,
}

impl Storage for PlainRead {
    fn len(&self) -> u64 {
        self.len
    }

    fn get(&self, index: u64) -> Result<u8, DbError> {
        let mut byte = [0u8];
        read_at(&self.file, &mut byte, HEADER_LEN as u64 + index)?;
        Ok(byte[0])
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

/// Entries held in memory (built in this process, or read whole from a file).
pub struct InMemory {
    entries: Bytes,
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

impl InMemory {
    /// A level from its entries.
    pub fn new(entries: Vec<u8>) -> InMemory {
        InMemory {
            entries: Bytes::Vec(entries),
        }
    }
}

impl Storage for InMemory {
    fn len(&self) -> u64 {
        self.entries.len() as u64
    }

    fn get(&self, index: u64) -> Result<u8, DbError> {
        Ok(self.entries[index as usize])
    }

    fn as_slice(&self) -> Option<&[u8]> {
        Some(&self.entries)
    }
}

/// Opens the level file at `path`, checking that its header is the one for `houses`, `rules`,
/// `level` with `entries` entries and that the file's length matches. [`Access::Memory`] also
/// checks the entries' checksum (the others leave that to verification: opening must be
/// instant). Every error names the file.
pub fn open_level(
    path: &Path,
    access: Access,
    houses: usize,
    rules: Rules,
    level: u32,
    entries: u64,
) -> Result<Box<dyn Storage>, DbError> {
    open(path, access, houses, rules, level, entries).map_err(|e| e.in_file(path))
}

fn open(
    path: &Path,
    access: Access,
    houses: usize,
    rules: Rules,
    level: u32,
    entries: u64,
) -> Result<Box<dyn Storage>, DbError> {
    let mut file = File::open(path)?;
    let header = Header::read(&mut file)?;
    header.expect(houses, rules, level, entries)?;
    let expected = HEADER_LEN as u64 + entries;
    let found = file.metadata()?.len();
    if found != expected {
        return Err(DbError::Truncated { expected, found });
    }
    Ok(match access {
        Access::Map => Box::new(Mapped {
            map: crate::memory::map_file(&file)?,
        }),
        Access::Read => Box::new(PlainRead { file, len: entries }),
        Access::Memory => {
            use std::io::Read;
            // Huge pages: a search reads a level at random, and 4 KiB pages would cost a TLB
            // miss on nearly every probe.
            let mut bytes =
                crate::memory::HugeBytes::zeroed(entries as usize).ok_or_else(|| {
                    DbError::Io(std::io::Error::new(
                        std::io::ErrorKind::OutOfMemory,
                        format!("cannot allocate {entries} bytes"),
                    ))
                })?;
            // The header was read: the file is at the first entry.
            file.read_exact(&mut bytes)?;
            let sum = checksum(&bytes);
            if sum != header.checksum {
                return Err(DbError::Checksum {
                    expected: header.checksum,
                    found: sum,
                });
            }
            Box::new(InMemory {
                entries: Bytes::Huge(bytes),
            })
        }
    })
}
