//! `kalah replay`: a recorded game, move by move (to be written).

use clap::Args;

use super::CliError;

/// Replay a recorded game.
#[derive(Args, Debug)]
pub struct ReplayArgs {}

pub fn run(_args: ReplayArgs) -> Result<(), CliError> {
    Err(CliError::failure("not yet"))
}
