//! `kalah man`: manual pages in roff, generated from the command definitions.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory};
use clap_mangen::Man;

use super::{Cli, CliError};

/// Print the manual page of kalah (roff, section 1) on stdout, or write one page a command.
///
/// Install it with `kalah man > ~/.local/share/man/man1/kalah.1` (make the directory first),
/// then read it with `man kalah`. With --dir DIR, DIR gets kalah.1 and one page for every
/// subcommand (kalah-solve.1, kalah-db-build.1, ...), each written whole: complete or absent.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write kalah.1 and one page a subcommand into DIR (made if missing) instead of printing
    /// the main page.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

pub fn run(args: ManArgs) -> Result<(), CliError> {
    // `kalah help` is clap's own: no page of its own, no entry in the list of commands.
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let Some(dir) = args.dir else {
        let page = render(cmd).map_err(|e| CliError::failure(format!("man page: {e}")))?;
        std::io::stdout()
            .lock()
            .write_all(&page)
            .map_err(|e| CliError::failure(format!("cannot write the man page: {e}")))?;
        return Ok(());
    };
    std::fs::create_dir_all(&dir).map_err(|e| {
        CliError::input(format!("cannot make the directory {}: {e}", dir.display()))
    })?;
    let mut written = 0;
    write_pages(cmd, &dir, &mut written)?;
    println!("{written} manual pages written to {}", dir.display());
    Ok(())
}

/// The roff page of `cmd`.
fn render(cmd: clap::Command) -> std::io::Result<Vec<u8>> {
    let mut page = Vec::new();
    man_page(cmd).render(&mut page)?;
    Ok(page)
}

/// The page of `cmd`, every page footed with kalah's name and version (a subcommand has none
/// of its own).
fn man_page(cmd: clap::Command) -> Man {
    Man::new(cmd).source(format!("kalah {}", env!("CARGO_PKG_VERSION")))
}

/// Writes the page of `cmd` (named by its display name, `kalah-db-build.1`) and those of its
/// visible subcommands, counting them in `written`.
fn write_pages(cmd: clap::Command, dir: &Path, written: &mut usize) -> Result<(), CliError> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub.clone(), dir, written)?;
    }
    let man = man_page(cmd);
    let path = dir.join(man.get_filename());
    let mut page = Vec::new();
    man.render(&mut page)
        .map_err(|e| CliError::failure(format!("man page {}: {e}", path.display())))?;
    kalah::files::write_whole(&path, |file| file.write_all(&page))
        .map_err(|e| CliError::failure(format!("cannot write {}: {e}", path.display())))?;
    *written += 1;
    Ok(())
}
