//! `kalah completions`: a shell completion script, generated from the command definitions.

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::{Cli, CliError};

/// Print a completion script for SHELL on stdout: subcommands, options and their fixed values.
///
/// Save it where the shell looks for completions: for bash, `kalah completions bash >
/// ~/.local/share/bash-completion/completions/kalah`; for zsh, `kalah completions zsh >
/// ~/.zfunc/_kalah` with `fpath+=~/.zfunc` before `compinit` in ~/.zshrc; for fish, `kalah
/// completions fish > ~/.config/fish/completions/kalah.fish`. A new shell then completes kalah's
/// commands and options.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_name = "SHELL")]
    shell: Shell,
}

pub fn run(args: CompletionsArgs) -> Result<(), CliError> {
    let mut cmd = Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "kalah", &mut std::io::stdout().lock());
    Ok(())
}
