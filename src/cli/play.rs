//! `kalah play`: a game at the terminal (to be written).

use clap::Args;

use super::CliError;

/// Play a game.
#[derive(Args, Debug)]
pub struct PlayArgs {}

pub fn run(_args: PlayArgs) -> Result<(), CliError> {
    Err(CliError::failure("not yet"))
}
