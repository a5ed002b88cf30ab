//! # kalah: exact Kalah on a bit-packed board
//!
//! The library of the `kalah` command: everything of [`kalah_core`] (the rules, the board, the
//! search, the endgame levels, the books, the ledgers and the one answer to a position),
//! re-exported whole so that `kalah::answer`, `kalah::Solver` and every other path stay as they
//! were, with the memory-mapped levels on (`kalah-core`'s `mmap` feature); and the bots, which
//! play over sockets and so live here rather than in the core.
//!
//! ```
//! use kalah::{AnyPosition, Rules, Setup, perft, with_position};
//!
//! let setup: Setup = "<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>".parse()?;
//! let pos = AnyPosition::from_setup(&setup, Rules::Standard)?;
//! assert_eq!(with_position!(pos, p => perft(&p, 4)), 942);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

pub use kalah_core::*;

pub mod bots;
