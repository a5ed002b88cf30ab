//! A build split over the ranks of a job ([`Ranks`]: the processes of an MPI job, or threads),
//! each rank building its share of every level over the levels below, read from a directory
//! that every rank sees.
//!
//! **The split.** A board of table `a` of level `k` ([`crate::db::index`]) depends on boards of
//! its own level only through sowings that keep both sides' seeds and pass the turn, and those
//! boards are in table `k - a` (and theirs in table `a`). So a level splits into *pairs of
//! tables* `{a, k - a}`, `a = 1 ..= k / 2`, each built alone ([`build_pair`]) with no work
//! done twice. The pairs of a level are dealt to the ranks largest first, each to the rank with
//! the fewest entries so far (ties to the lower rank): the shares differ by at most the
//! smallest pairs, and the deal depends only on the level and the number of ranks.
//!
//! ```text
//!  level k:  | a=1 | a=2 | ... | a=k/2 | ... | a=k-2 | a=k-1 |
//!               \_____\____ pair {2, k-2} ___/      /
//!                \_________ pair {1, k-1} _________/
//! ```
//!
//! **Files.** A rank writes each pair it builds to its own *pair file* in the directory (one
//! byte an entry, table `a` then table `k - a`, behind a small header with a checksum, written
//! whole and renamed into place: see [`pair_file_name`]). When every pair of the level
//! is on disk, rank 0 writes the level file from them exactly as a single build writes it (so
//! the files are byte-identical to [`crate::db::build()`]'s), checking each pair file's entries
//! against its checksum as it reads them, and deletes them. A killed job run again finds the finished levels (checked and kept, as by a
//! single build) and the finished pair files of the level it was on (checked and kept), and
//! builds the rest, with any number of ranks.
//!
//! **Messages.** Rank 0 leads: for each level it says to every rank whether to build or keep
//! it, gathers the progress of each rank (which it reports through the callback) and a last
//! word from each when its share is done (or failed), writes the level, and goes on. A failure
//! anywhere stops every rank, with the failing rank's error. Ranks poll for messages, sleeping
//! between polls, so a rank that waits leaves its cores to the ranks that work.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::clock::Instant;

use xxhash_rust::xxh3::{Xxh3, xxh3_64_with_seed};

use crate::db::build::{
    BuildProgress, BuildReport, Held, LevelReport, SideTables, Source, build_pair, notify,
    pair_len, plan, remove_temporaries, table_len, write_level_from,
};
use crate::db::index::Layout;
use crate::db::packed::Packed;
use crate::db::ranks::Ranks;
use crate::db::storage::{Access, Level, open_level};
use crate::db::{DbError, level_file_name};
use crate::rules::Rules;

/// Time between two polls for messages of a waiting rank.
const POLL: Duration = Duration::from_millis(2);
/// Time between two progress reports of a working rank.
const REPORT_EVERY: Duration = Duration::from_millis(250);
/// The longest error text a rank sends (longer ones are cut).
const MAX_ERROR_LEN: usize = 1000;

/// The pairs `a` (tables `a` and `k - a`) of level `k` that `rank` of `size` ranks builds,
/// largest first (see the module docs).
pub fn share(layout: &Layout, k: u32, rank: usize, size: usize) -> Vec<u32> {
    let mut pairs: Vec<(u64, u32)> = (1..=k / 2).map(|a| (pair_len(layout, k, a), a)).collect();
    // Largest first; of two the same size, the lower a first.
    pairs.sort_by_key(|&(len, a)| (std::cmp::Reverse(len), a));
    let mut load = vec![0u64; size];
    let mut mine = Vec::new();
    for (len, a) in pairs {
        let least = (0..size)
            .min_by_key(|&r| (load[r], r))
            .expect("at least one rank");
        load[least] += len;
        if least == rank {
            mine.push(a);
        }
    }
    mine
}

/// The name of the pair file of tables `a` and `k - a` of level `k`:
/// `kalah-<houses>-<rules>-<k>.kdb.tables-<a>-<k-a>`. Its layout (little-endian):
///
/// ```text
///  offset size
///       0    8  magic "KALAHPRT"
///       8    1  houses
///       9    1  rules (0 standard, 1 empty-capture)
///      10    2  zero
///      12    4  level k
///      16    4  a
///      20    4  zero
///      24    8  entries n (of table a, then of table k - a)
///      32    8  xxh3-64 of the entries, seeded with the pair (see pair_seed)
///      40    n  the entries, one byte each, as a build holds them
/// ```
pub fn pair_file_name(houses: usize, rules: Rules, k: u32, a: u32) -> String {
    format!("{}.tables-{a}-{}", level_file_name(houses, rules, k), k - a)
}

/// The entries that the pair files of level `k` in `dir` hold, by their lengths (unchecked: a
/// damaged one is found, removed and rebuilt when a build resumes). What a build by pairs
/// resumes from, and need not write again.
pub fn pair_entries_on_disk(dir: &Path, houses: usize, rules: Rules, k: u32) -> u64 {
    (0..=k)
        .filter_map(|a| std::fs::metadata(dir.join(pair_file_name(houses, rules, k, a))).ok())
        .map(|meta| meta.len().saturating_sub(PAIR_HEADER_LEN as u64))
        .sum()
}

const PAIR_MAGIC: &[u8; 8] = b"KALAHPRT";
const PAIR_HEADER_LEN: usize = 40;

fn pair_seed(houses: usize, rules: Rules, k: u32, a: u32) -> u64 {
    0x5041_4952
        ^ u64::from(a) << 16
        ^ u64::from(k) << 40
        ^ (houses as u64) << 52
        ^ u64::from(rules.code()) << 60
}

fn pair_header(houses: usize, rules: Rules, k: u32, a: u32, len: u64, sum: u64) -> [u8; 40] {
    let mut header = [0u8; PAIR_HEADER_LEN];
    header[..8].copy_from_slice(PAIR_MAGIC);
    header[8] = houses as u8;
    header[9] = rules.code();
    header[12..16].copy_from_slice(&k.to_le_bytes());
    header[16..20].copy_from_slice(&a.to_le_bytes());
    header[24..32].copy_from_slice(&len.to_le_bytes());
    header[32..40].copy_from_slice(&sum.to_le_bytes());
    header
}

impl Job<'_> {
    /// Writes the pair file of tables `a` and `k - a` whole (through a temporary file renamed
    /// into place). It is not synced: one torn by a power cut fails its checksum when the
    /// build is run again, and is rebuilt.
    fn write_pair(&self, k: u32, a: u32, entries: &[u8]) -> Result<(), DbError> {
        let (houses, rules, path) = (self.houses, self.rules, self.pair_path(k, a));
        let len = entries.len() as u64;
        let sum = xxh3_64_with_seed(entries, pair_seed(houses, rules, k, a));
        crate::files::write_whole(&path, |file| {
            file.write_all(&pair_header(houses, rules, k, a, len, sum))?;
            file.write_all(entries)
        })
        .map_err(|e| DbError::from(e).in_file(&path))
    }

    /// The pair file of tables `a` and `k - a` opened past its header, with the checksum the
    /// header stores, if it is there and its header and length are the ones expected (its
    /// entries are not read).
    fn open_pair(&self, k: u32, a: u32) -> Result<Option<(std::fs::File, u64)>, DbError> {
        let path = self.pair_path(k, a);
        let len = pair_len(&self.layout, k, a);
        let in_file = |e: std::io::Error| DbError::from(e).in_file(&path);
        let mut file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(in_file(e)),
        };
        let mut header = [0u8; PAIR_HEADER_LEN];
        let expected = pair_header(self.houses, self.rules, k, a, len, 0);
        let fits = file.metadata().map_err(in_file)?.len() == PAIR_HEADER_LEN as u64 + len
            && file.read_exact(&mut header).is_ok()
            && header[..32] == expected[..32];
        let sum = u64::from_le_bytes(header[32..40].try_into().expect("8 bytes"));
        Ok(fits.then_some((file, sum)))
    }

    /// Whether the pair file of tables `a` and `k - a` is there and whole: its header is the
    /// one expected and its entries match their checksum. A file that is there but not whole
    /// is removed (it is rebuilt).
    fn pair_is_whole(&self, k: u32, a: u32) -> Result<bool, DbError> {
        let path = self.pair_path(k, a);
        let whole = match self.open_pair(k, a)? {
            Some((mut file, sum)) => {
                let mut hasher = Xxh3::with_seed(pair_seed(self.houses, self.rules, k, a));
                let mut buf = vec![0u8; 1 << 20];
                loop {
                    let n = file
                        .read(&mut buf)
                        .map_err(|e| DbError::from(e).in_file(&path))?;
                    if n == 0 {
                        break;
                    }
                    hasher.update(&buf[..n]);
                }
                hasher.digest() == sum
            }
            None => false,
        };
        if !whole {
            remove_if_there(&path)?;
        }
        Ok(whole)
    }
}

/// Removes the file at `path`, if it is there.
fn remove_if_there(path: &Path) -> Result<(), DbError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(DbError::from(e).in_file(path)),
        _ => Ok(()),
    }
}

/// A pair file read into its level by rank 0, its tables in the order of the file (table `a`
/// comes before table `k - a` in the level too), its entries hashed as they are read.
struct PairStream {
    file: std::fs::File,
    hasher: Xxh3,
    /// Entries not read yet.
    left: u64,
    /// The checksum its header stores.
    sum: u64,
    /// All its entries were read, and they do not match the checksum.
    damaged: bool,
}

/// One table of a [`PairStream`]: `left` more entries of it. Reading the pair's last entry
/// fails if the pair does not match its checksum.
struct Section {
    pair: std::rc::Rc<std::cell::RefCell<PairStream>>,
    left: u64,
}

impl Read for Section {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        if want == 0 {
            return Ok(0);
        }
        let mut pair = self.pair.borrow_mut();
        let n = pair.file.read(&mut buf[..want])?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        pair.hasher.update(&buf[..n]);
        pair.left -= n as u64;
        self.left -= n as u64;
        if pair.left == 0 && pair.hasher.digest() != pair.sum {
            pair.damaged = true;
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "a pair file does not match its checksum",
            ));
        }
        Ok(n)
    }
}

/// A message between ranks.
#[derive(Debug, PartialEq, Eq)]
enum Message {
    /// Rank 0 to all: build your share of level `level`, or (`keep`) the level is on disk,
    /// open it.
    Go { level: u32, keep: bool },
    /// A rank to rank 0: entries of its share of level `level` done.
    Progress { level: u32, done: u64 },
    /// A rank to rank 0: its share of level `level` is done (on disk), or the error that
    /// stopped it.
    Finished { level: u32, error: Option<String> },
    /// Rank 0 to all: the build stops, because of rank `rank`'s error.
    Stop { rank: u32, error: String },
    /// Rank 0 to all: every level is built.
    End,
}

impl Message {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut put = |kind: u8, a: u32, b: u64, text: &str| {
            out.push(kind);
            out.extend_from_slice(&a.to_le_bytes());
            out.extend_from_slice(&b.to_le_bytes());
            let mut end = text.len().min(MAX_ERROR_LEN);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            out.extend_from_slice(&text.as_bytes()[..end]);
        };
        match self {
            Message::Go { level, keep } => put(0, *level, u64::from(*keep), ""),
            Message::Progress { level, done } => put(1, *level, *done, ""),
            Message::Finished { level, error: None } => put(2, *level, 0, ""),
            Message::Finished {
                level,
                error: Some(error),
            } => put(2, *level, 1, error),
            Message::Stop { rank, error } => put(3, *rank, 0, error),
            Message::End => put(4, 0, 0, ""),
        }
        out
    }

    fn decode(bytes: &[u8]) -> Option<Message> {
        if bytes.len() < 13 {
            return None;
        }
        let a = u32::from_le_bytes(bytes[1..5].try_into().ok()?);
        let b = u64::from_le_bytes(bytes[5..13].try_into().ok()?);
        let text = String::from_utf8_lossy(&bytes[13..]).into_owned();
        Some(match (bytes[0], b) {
            (0, keep) => Message::Go {
                level: a,
                keep: keep != 0,
            },
            (1, done) => Message::Progress { level: a, done },
            (2, 0) => Message::Finished {
                level: a,
                error: None,
            },
            (2, _) => Message::Finished {
                level: a,
                error: Some(text),
            },
            (3, _) => Message::Stop {
                rank: a,
                error: text,
            },
            (4, _) => Message::End,
            _ => return None,
        })
    }
}

/// The next message for this rank, waiting for it.
fn receive(ranks: &dyn Ranks) -> Result<(usize, Message), DbError> {
    loop {
        if let Some((from, bytes)) = ranks.try_receive() {
            return match Message::decode(&bytes) {
                Some(message) => Ok((from, message)),
                None => Err(DbError::Rank {
                    rank: from,
                    error: format!("a message this rank cannot read ({} bytes)", bytes.len()),
                }),
            };
        }
        std::thread::sleep(POLL);
    }
}

/// What every rank knows of the build.
struct Job<'a> {
    dir: &'a Path,
    houses: usize,
    rules: Rules,
    layout: Layout,
    sides: SideTables,
    pool: &'a rayon::ThreadPool,
    cancel: &'a AtomicBool,
}

impl Job<'_> {
    fn level_path(&self, k: u32) -> PathBuf {
        self.dir.join(level_file_name(self.houses, self.rules, k))
    }

    fn pair_path(&self, k: u32, a: u32) -> PathBuf {
        self.dir.join(pair_file_name(self.houses, self.rules, k, a))
    }

    fn open(&self, k: u32) -> Result<Level, DbError> {
        let len = self.layout.level_len(k);
        open_level(
            &self.level_path(k),
            Access::Map,
            self.houses,
            self.rules,
            k,
            len,
        )
    }

    /// Builds the pairs of level `k` in `pairs` that are not on disk yet, adding to `done` as
    /// it goes (the entries of the pairs found on disk at once).
    fn build_share(
        &self,
        levels: &[Level],
        k: u32,
        pairs: &[u32],
        done: &AtomicU64,
    ) -> Result<(), DbError> {
        let lower: Vec<Packed<'_>> = levels
            .iter()
            .map(|l| l.entries_unchecked().expect("a mapped level"))
            .collect();
        // The pairs an earlier build finished count as done first, so that the entries done
        // rise from there at the rate of this build.
        let mut left = Vec::new();
        for &a in pairs {
            if self.pair_is_whole(k, a)? {
                done.fetch_add(pair_len(&self.layout, k, a), Ordering::Relaxed);
            } else {
                left.push(a);
            }
        }
        for a in left {
            let base = done.load(Ordering::Relaxed);
            let entries = self.pool.install(|| {
                build_pair(
                    &self.layout,
                    &self.sides,
                    self.rules,
                    &lower,
                    k,
                    a,
                    self.cancel,
                    &|d| {
                        done.fetch_max(base + d, Ordering::Relaxed);
                    },
                )
            })?;
            self.write_pair(k, a, &entries)?;
            done.store(base + pair_len(&self.layout, k, a), Ordering::Relaxed);
        }
        Ok(())
    }
}

/// Builds the levels `0..=max_level` of Kalah with `houses` houses a side under `rules` into
/// `dir`, which every rank of `ranks` sees, each rank building its share of each level (see
/// the module docs) in `pool`. Every rank of the job calls it with the same arguments. The
/// files are byte-identical to those of [`crate::db::build()`].
///
/// Rank 0 holds the directory's build lock, removes what a killed build left half-written,
/// checks and keeps the levels already built, reports progress through `progress` (the
/// entries of the level done by all ranks together) and returns the [`BuildReport`]; the other
/// ranks never call `progress` and return an empty report. A failure on any rank stops them
/// all: that rank returns its error, the others [`DbError::Rank`] (or [`DbError::Cancelled`]
/// if the failure was a cancel). Setting `cancel` on a rank stops its work between work units.
#[allow(clippy::too_many_arguments)]
pub fn build_distributed(
    ranks: &dyn Ranks,
    dir: &Path,
    houses: usize,
    rules: Rules,
    max_level: u32,
    pool: &rayon::ThreadPool,
    cancel: &AtomicBool,
    progress: &(dyn Fn(BuildProgress) + Sync),
) -> Result<BuildReport, DbError> {
    let job = plan(houses, max_level, Held::LargestPair).map(|layout| Job {
        dir,
        houses,
        rules,
        sides: SideTables::new(&layout),
        layout,
        pool,
        cancel,
    });
    if ranks.rank() == 0 {
        lead(ranks, job, progress)
    } else {
        follow(ranks, job)
    }
}

/// Stops the other ranks of a job whose rank 0 cannot start the build (it then does not call
/// [`build_distributed`]), with `error` as the reason; they return [`DbError::Rank`].
pub fn refuse(ranks: &dyn Ranks, error: &str) {
    let stop = Message::Stop {
        rank: 0,
        error: error.to_owned(),
    }
    .encode();
    (1..ranks.size()).for_each(|r| ranks.send(r, &stop));
}

/// Rank 0's part (see [`build_distributed`]): the levels, then the end or the stop of the
/// other ranks.
fn lead(
    ranks: &dyn Ranks,
    job: Result<Job<'_>, DbError>,
    progress: &(dyn Fn(BuildProgress) + Sync),
) -> Result<BuildReport, DbError> {
    let others = 1..ranks.size();
    let result = job.and_then(|job| lead_levels(ranks, &job, progress));
    match &result {
        Ok(_) => others.for_each(|r| ranks.send(r, &Message::End.encode())),
        Err(error) => {
            let (rank, error) = match error {
                DbError::Rank { rank, error } => (*rank as u32, error.clone()),
                error => (0, error.to_string()),
            };
            let stop = Message::Stop { rank, error }.encode();
            others.for_each(|r| ranks.send(r, &stop));
        }
    }
    result
}

fn lead_levels(
    ranks: &dyn Ranks,
    job: &Job<'_>,
    progress: &(dyn Fn(BuildProgress) + Sync),
) -> Result<BuildReport, DbError> {
    let (dir, pool, cancel) = (job.dir, job.pool, job.cancel);
    crate::files::make_dir(dir).map_err(|e| DbError::from(e).in_file(dir))?;
    let _lock = crate::db::lock::lock(dir)?;
    remove_temporaries(dir, job.houses, job.rules).map_err(|e| DbError::from(e).in_file(dir))?;
    let mut levels: Vec<Level> = Vec::new();
    let mut report = BuildReport::default();
    for k in 0..=job.layout.max_level() {
        let total = job.layout.level_len(k);
        let path = job.level_path(k);
        let start = Instant::now();
        let kept = path.exists();
        if kept {
            let level = job.open(k)?;
            let damage = pool.install(|| level.check_all(cancel, &|_| {}))?;
            if let Some(defect) = level.defect(&damage) {
                return Err(defect);
            }
            // Pair files a job killed between writing the level and deleting them left.
            job.remove_pairs(k)?;
        }
        for r in 1..ranks.size() {
            ranks.send(
                r,
                &Message::Go {
                    level: k,
                    keep: kept,
                }
                .encode(),
            );
        }
        // This rank's share, while the others' progress comes in.
        let mine = share(&job.layout, k, 0, ranks.size());
        let own = AtomicU64::new(0);
        let mut done = vec![0u64; ranks.size()];
        let mut finished: Vec<Option<Option<String>>> = vec![None; ranks.size()];
        let mut pump = |finished: &mut Vec<Option<Option<String>>>| -> Result<(), DbError> {
            while let Some((from, bytes)) = ranks.try_receive() {
                match Message::decode(&bytes) {
                    Some(Message::Progress { level, done: d }) if level == k => done[from] = d,
                    Some(Message::Finished { level, error }) if level == k => {
                        finished[from] = Some(error)
                    }
                    _ => {
                        return Err(DbError::Rank {
                            rank: from,
                            error: "an unexpected message".into(),
                        });
                    }
                }
            }
            if !kept {
                done[0] = own.load(Ordering::Relaxed);
                notify(progress, k, done.iter().sum(), total, start, None);
            }
            Ok(())
        };
        let own_result = if kept {
            Ok(())
        } else {
            std::thread::scope(|s| {
                let worker = s.spawn(|| job.build_share(&levels, k, &mine, &own));
                while !worker.is_finished() {
                    let pumped = pump(&mut finished).and_then(|()| failed(&finished));
                    if let Err(e) = pumped {
                        // Stop this rank's share too, and stop the job.
                        cancel.store(true, Ordering::Relaxed);
                        let _ = worker.join();
                        return Err(e);
                    }
                    std::thread::sleep(POLL);
                }
                worker.join().expect("the build thread does not panic")
            })
        };
        own_result?;
        finished[0] = Some(None);
        while finished.iter().any(Option::is_none) {
            pump(&mut finished)?;
            failed(&finished)?;
            std::thread::sleep(POLL);
        }
        if cancel.load(Ordering::Relaxed) {
            return Err(DbError::Cancelled);
        }
        if !kept {
            pool.install(|| job.assemble(k))?;
        }
        let level = job.open(k)?;
        notify(progress, k, total, total, start, Some(kept));
        report.levels.push(LevelReport::of(&level, start, kept));
        levels.push(level);
    }
    Ok(report)
}

impl Job<'_> {
    /// Writes level `k` from its pair files, then removes them. Each pair file's header is
    /// checked first, and its entries against their checksum as they are read: a pair file
    /// missing or damaged stops the level before it is renamed into place, and a damaged one
    /// is removed (the next run builds it again).
    fn assemble(&self, k: u32) -> Result<(), DbError> {
        let damaged = |a: u32| {
            DbError::Corrupt(format!(
                "the pair file of tables {a} and {} of level {k} is missing or damaged",
                k - a
            ))
            .in_file(&self.pair_path(k, a))
        };
        let mut pairs = Vec::new();
        for a in 1..=k / 2 {
            let Some((file, sum)) = self.open_pair(k, a)? else {
                remove_if_there(&self.pair_path(k, a))?;
                return Err(damaged(a));
            };
            pairs.push(std::rc::Rc::new(std::cell::RefCell::new(PairStream {
                file,
                hasher: Xxh3::with_seed(pair_seed(self.houses, self.rules, k, a)),
                left: pair_len(&self.layout, k, a),
                sum,
                damaged: false,
            })));
        }
        // Table a of the level, in order: the next table of its pair's file.
        let mut source: Box<dyn Read> = Box::new(std::io::empty());
        for a in 1..k {
            let pair = pairs[a.min(k - a) as usize - 1].clone();
            let left = table_len(&self.layout, k, a);
            source = Box::new(source.chain(Section { pair, left }));
        }
        let path = self.level_path(k);
        let len = self.layout.level_len(k);
        // The lineage of the level below as its file says (see `db::format`).
        let lineage = match k {
            0 => None,
            _ => {
                let below = self.level_path(k - 1);
                let mut file = crate::files::open_regular(&below)
                    .map_err(|e| DbError::from(e).in_file(&below))?;
                let header =
                    crate::db::format::Header::read(&mut file).map_err(|e| e.in_file(&below))?;
                Some(crate::db::format::lineage_after(&header))
            }
        };
        let written = write_level_from(
            &path,
            self.houses,
            self.rules,
            k,
            len,
            Source::Reader(&mut source),
            lineage,
        );
        if let Some(a) = (1..=k / 2).find(|&a| pairs[a as usize - 1].borrow().damaged) {
            remove_if_there(&self.pair_path(k, a))?;
            return Err(damaged(a));
        }
        written.map_err(|e| e.in_file(&path))?;
        self.remove_pairs(k)
    }

    /// Removes the pair files of level `k` that are there.
    fn remove_pairs(&self, k: u32) -> Result<(), DbError> {
        (1..=k / 2).try_for_each(|a| remove_if_there(&self.pair_path(k, a)))
    }
}

/// The error a rank returns when rank 0 stops the build because of rank `rank`'s `error`.
fn stopped(rank: u32, error: String) -> DbError {
    if error == DbError::Cancelled.to_string() {
        DbError::Cancelled
    } else {
        DbError::Rank {
            rank: rank as usize,
            error,
        }
    }
}

/// The error of the first rank whose share failed, if any.
fn failed(finished: &[Option<Option<String>>]) -> Result<(), DbError> {
    match finished
        .iter()
        .enumerate()
        .find_map(|(r, f)| f.clone().flatten().map(|e| (r, e)))
    {
        Some((rank, error)) => Err(stopped(rank as u32, error)),
        None => Ok(()),
    }
}

/// The part of every rank but rank 0 (see [`build_distributed`]).
fn follow(ranks: &dyn Ranks, job: Result<Job<'_>, DbError>) -> Result<BuildReport, DbError> {
    // This rank's own error, sent to rank 0, which answers with a stop.
    let (job, mut own) = match job {
        Ok(job) => (Some(job), None),
        Err(e) => (None, Some(e)),
    };
    let mut levels: Vec<Level> = Vec::new();
    loop {
        let (_, message) = receive(ranks)?;
        match message {
            Message::Go { level, keep } => {
                let result = match (&job, &own) {
                    (Some(job), None) => follow_level(ranks, job, &mut levels, level, keep),
                    _ => Ok(None),
                };
                match result {
                    Ok(None) => {
                        let error = own.as_ref().map(ToString::to_string);
                        ranks.send(0, &Message::Finished { level, error }.encode());
                    }
                    Ok(Some((rank, error))) => return Err(stopped(rank, error)),
                    Err(e) => {
                        let error = Some(e.to_string());
                        ranks.send(0, &Message::Finished { level, error }.encode());
                        own = Some(e);
                    }
                }
            }
            Message::End => return Ok(BuildReport::default()),
            Message::Stop { rank, error } => return Err(own.unwrap_or(stopped(rank, error))),
            _ => {
                return Err(DbError::Rank {
                    rank: 0,
                    error: "an unexpected message".into(),
                });
            }
        }
    }
}

/// Opens the levels below `k` not yet open, then builds this rank's share of level `k` (or,
/// if it is kept, opens it), reporting progress to rank 0. A stop from rank 0 that comes
/// while it works cancels the work and is returned.
fn follow_level(
    ranks: &dyn Ranks,
    job: &Job<'_>,
    levels: &mut Vec<Level>,
    k: u32,
    keep: bool,
) -> Result<Option<(u32, String)>, DbError> {
    while levels.len() < k as usize {
        levels.push(job.open(levels.len() as u32)?);
    }
    if keep {
        levels.push(job.open(k)?);
        return Ok(None);
    }
    let mine = share(&job.layout, k, ranks.rank(), ranks.size());
    let done = AtomicU64::new(0);
    let mut stop = None;
    let built = std::thread::scope(|s| {
        let worker = s.spawn(|| job.build_share(levels, k, &mine, &done));
        let mut last = Instant::now();
        while !worker.is_finished() {
            if let Some((_, bytes)) = ranks.try_receive() {
                if let Some(Message::Stop { rank, error }) = Message::decode(&bytes) {
                    job.cancel.store(true, Ordering::Relaxed);
                    stop = Some((rank, error));
                }
            }
            if last.elapsed() >= REPORT_EVERY {
                let done = done.load(Ordering::Relaxed);
                ranks.send(0, &Message::Progress { level: k, done }.encode());
                last = Instant::now();
            }
            std::thread::sleep(POLL);
        }
        worker.join().expect("the build thread does not panic")
    });
    if stop.is_some() {
        return Ok(stop);
    }
    built?;
    // Rank 0 writes the level once every share is done; it is opened at the next message.
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::Scratch;

    /// Writes the pair files of level `k` of `job`, from the levels below in its directory.
    fn write_pairs(job: &Job<'_>, k: u32) {
        let levels: Vec<Level> = (0..k).map(|j| job.open(j).unwrap()).collect();
        let done = AtomicU64::new(0);
        let all: Vec<u32> = (1..=k / 2).collect();
        job.build_share(&levels, k, &all, &done).unwrap();
    }

    #[test]
    fn rank_0_checks_the_pair_files_as_it_writes_the_level() {
        let (houses, rules, k) = (3, Rules::Standard, 9);
        let dir = Scratch::new("assemble");
        let (pool, cancel) = (
            rayon::ThreadPoolBuilder::new().build().unwrap(),
            AtomicBool::new(false),
        );
        pool.install(|| crate::db::build(&dir, houses, rules, k, &cancel, &|_| {}))
            .unwrap();
        let level = dir.join(level_file_name(houses, rules, k));
        let built = std::fs::read(&level).unwrap();
        std::fs::remove_file(&level).unwrap();
        let layout = plan(houses, k, Held::LargestPair).unwrap();
        let job = Job {
            dir: &dir,
            houses,
            rules,
            sides: SideTables::new(&layout),
            layout,
            pool: &pool,
            cancel: &cancel,
        };
        // A byte of table 7 (the second table of pair 2) flipped: no level, the file removed.
        write_pairs(&job, k);
        let damaged = job.pair_path(k, 2);
        let mut bytes = std::fs::read(&damaged).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&damaged, bytes).unwrap();
        let error = job.assemble(k).unwrap_err().to_string();
        assert!(
            error.contains("tables-2-7") && error.contains("missing or damaged"),
            "{error}"
        );
        assert!(!level.exists() && !damaged.exists());
        // Whole pair files, then a byte of one of them flipped before a run that resumes: it
        // is found, removed and built again. The level is that of the single build, and no
        // pair file is left.
        write_pairs(&job, k);
        let mut bytes = std::fs::read(job.pair_path(k, 3)).unwrap();
        bytes[PAIR_HEADER_LEN] ^= 1;
        std::fs::write(job.pair_path(k, 3), bytes).unwrap();
        assert!(!job.pair_is_whole(k, 3).unwrap() && !job.pair_path(k, 3).exists());
        assert!(job.pair_is_whole(k, 4).unwrap());
        write_pairs(&job, k);
        job.assemble(k).unwrap();
        assert_eq!(std::fs::read(&level).unwrap(), built);
        assert!((1..=k / 2).all(|a| !job.pair_path(k, a).exists()));
        // A share resumed: the pair files on disk (whole) are kept, not written again (a new
        // file would be a new inode), and the rest are built.
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let levels: Vec<Level> = (0..k).map(|j| job.open(j).unwrap()).collect();
            let done = AtomicU64::new(0);
            job.build_share(&levels, k, &[1, 3], &done).unwrap();
            let inode = |a| std::fs::metadata(job.pair_path(k, a)).unwrap().ino();
            let before = (inode(1), inode(3));
            job.build_share(&levels, k, &[1, 2, 3, 4], &done).unwrap();
            assert_eq!((inode(1), inode(3)), before);
            assert!(job.pair_path(k, 2).exists() && job.pair_path(k, 4).exists());
        }
    }
}
