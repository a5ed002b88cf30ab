//! `kalah match`: two players, many games (to be written).

use clap::Args;

use super::CliError;

/// Play a match between two players.
#[derive(Args, Debug)]
pub struct MatchArgs {}

pub fn run(_args: MatchArgs) -> Result<(), CliError> {
    Err(CliError::failure("not yet"))
}
