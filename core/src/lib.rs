//! # kalah-core: exact Kalah on a bit-packed board
//!
//! A Kalah (mancala) rules engine and exact solver: the rules of Kalah(m, n) under both capture
//! variants, a bit-packed board whose sowings are a few word operations, the KGP position
//! notation, perft, and a parallel MTD(f) solver with a lock-free transposition table.
//!
//! The core of the `kalah` workspace: no crate of terminals, sockets, servers or plots, so
//! that it compiles to WebAssembly (the static explorer). The `kalah` crate re-exports it whole
//! (`kalah::answer` is [`answer`]) beside the command line, the server and the bots. Features:
//! `mmap` maps level files and large tables (see the `memory` module); without it they are
//! read into plain allocations. Where no thread can be started (WebAssembly in a browser) a
//! solver of one thread searches on the calling thread.
//!
//! ## Glossary
//!
//! - **house**: one of the `m` pits on a side; numbered 1..m from its owner's view, house m next
//!   to the owner's store.
//! - **store**: a player's scoring pit; seeds there never come back.
//! - **seed**: the counters; **level** = seeds on the board (houses only).
//! - **side**: South (moves first) or North; the **mover** is the side to move.
//! - **sowing**: lifting one house and dropping its seeds one per pit (one **ply**); a **turn**
//!   is one sowing plus one more for each extra turn earned (`3-6`).
//! - **key**: the houses seen from the mover, stores excluded ([`Board::key`]).
//! - **rules**: the capture rule, [`Rules::Standard`] or [`Rules::EmptyCapture`].
//!
//! ## Quick start
//!
//! ```
//! use kalah_core::{AnyPosition, Rules, Setup, perft, with_position};
//!
//! let setup: Setup = "<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>".parse()?;
//! let pos = AnyPosition::from_setup(&setup, Rules::Standard)?;
//! let nodes = with_position!(pos, p => perft(&p, 4));
//! assert_eq!(nodes, 942);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Solving: the value is the final store difference for the side to move under perfect play.
//!
//! ```
//! use kalah_core::{Narrow, Position, Rules, Solver, SolverConfig, Variant};
//!
//! let start = Position::<Narrow>::start(Variant::new(4, 3, Rules::Standard)?).unwrap();
//! let config = SolverConfig { threads: 1, tt_mib: 16, ..SolverConfig::default() };
//! let solver = Solver::new(4, Rules::Standard, config)?;
//! let analysis = solver.analyze(&start, false, &mut |_progress| {})?;
//! assert_eq!(analysis.value, 6); // South, who moves first, wins Kalah(4,3) by 6
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Data flows one way: rules → lanes → board → position → notation / perft → analysis (the
//! answer's types) → db (the endgame databases) → search, which probes them → book and prove
//! (the ledgers) → answer ([`answer`]: the one answer to a position, from every source in one
//! order, that every front end shows) → api ([`api`]: that answer as the JSON the explorers
//! read, served by `kalah serve` and by the static explorer's WebAssembly module); [`clock`]
//! is the time they all read. The library never prints: progress comes back through
//! callbacks, statistics through values.

#![deny(missing_docs)]

pub mod analysis;
pub mod answer;
pub mod api;
pub mod board;
pub mod book;
pub mod clock;
pub mod db;
pub mod fast_hash;
pub mod files;
pub mod lanes;
mod memory;
pub mod notation;
pub mod perft;
pub mod play;
pub mod position;
pub mod prove;
pub mod reference;
pub mod render;
pub mod rng;
pub mod rules;
#[cfg(test)]
mod scratch;
pub mod search;
pub mod text;

/// For the `kalah` binary: end quietly when the output is closed (see the command line).
#[doc(hidden)]
pub fn default_sigpipe() {
    memory::default_sigpipe();
}

/// For the `kalah` binary: a level file cut short under its map ends the process with a
/// message, not a bare "Bus error".
#[doc(hidden)]
pub fn catch_bus_error() {
    memory::catch_bus_error();
}

/// For the `kalah` binary: Ctrl-C only sets a flag ([`interrupted`]), for a command that saves
/// its work before it ends.
#[doc(hidden)]
pub fn catch_interrupt() {
    memory::catch_interrupt();
}

/// Until [`catch_interrupt`] takes over, Ctrl-C ends the process at once with `message` on
/// stderr and exit code 130 (not silently): for a long command before it has anything to keep.
#[doc(hidden)]
pub fn exit_on_interrupt(message: &'static str) {
    memory::exit_on_interrupt(message);
}

/// [`catch_interrupt`], and a second Ctrl-C or SIGTERM ends the process at once (exit 130).
pub fn catch_interrupt_twice() {
    memory::catch_interrupt_twice();
}

/// Whether Ctrl-C was pressed since [`catch_interrupt`].
#[doc(hidden)]
pub fn interrupted() -> bool {
    memory::interrupted()
}

/// The machine's physical memory in bytes, as the OS reports it; `None` where it does not say.
/// (The command line bounds table sizes by it.)
pub fn physical_memory() -> Option<u64> {
    memory::physical_memory()
}

/// The memory this process may use for one large structure: half the physical memory, or
/// half its address-space limit (`ulimit -v`) if that is less.
pub fn memory_budget() -> Option<u64> {
    [memory::physical_memory(), memory::address_space_limit()]
        .into_iter()
        .flatten()
        .min()
        .map(|bytes| bytes / 2)
}

/// CPU time this process has used so far (user and system, all its threads), where the OS
/// says.
pub fn cpu_time() -> Option<std::time::Duration> {
    memory::cpu_time()
}

/// The cores this process may use (at least 1), asked of the OS once: the answer costs a
/// dozen system calls (cgroup files) each time, and the command line needs it for every
/// command's `--threads` bound.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

pub use analysis::{Analysis, MoveValue};
pub use board::{Board, Sowing};
pub use lanes::{Lanes, Narrow, Wide};
pub use notation::{NotationError, ParseMoveError, Turn};
pub use perft::{divide, perft, perft_board};
pub use position::{AnyPosition, Defect, IllegalMove, Move, Outcome, Position, Setup, SetupError};
pub use render::render;
pub use rng::Rng;
pub use rules::{MAX_HOUSES, MAX_SEEDS, MIN_HOUSES, Rules, Side, Variant, VariantError};
pub use search::{Algorithm, Progress, SolveError, Solver, SolverConfig};
