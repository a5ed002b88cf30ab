//! Why a player could not be made or could not move: the one error of play, taken by every
//! player and engine (so that none of them depends on another for it).

use std::fmt;

/// Why a player could not be made or could not move.
#[derive(Debug)]
pub enum PlayError {
    /// The spec string is malformed.
    Spec(String),
    /// The player cannot play these rules (e.g. `perfect` under `awari-basic`).
    Unsupported(String),
    /// The solver failed.
    Solver(String),
    /// A file could not be read or written.
    Io(std::io::Error),
}

impl fmt::Display for PlayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayError::Spec(s) | PlayError::Unsupported(s) | PlayError::Solver(s) => f.write_str(s),
            PlayError::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for PlayError {}

impl From<std::io::Error> for PlayError {
    fn from(e: std::io::Error) -> PlayError {
        PlayError::Io(e)
    }
}
