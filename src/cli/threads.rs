//! Threads the command line starts beside its work: a progress ticker, a watcher of Ctrl-C, a
//! saver of the table. One the system cannot start (out of memory or of threads: `ulimit -v`,
//! `ulimit -u`) is an error that says so, never a panic (`std::thread::Scope::spawn` panics,
//! and a panic in a scope waits forever for the threads it started). A caller that has
//! started other threads in the scope stops them first (they all watch a flag it sets).

use std::thread::{Scope, ScopedJoinHandle};

use super::CliError;

/// Starts `work` on a thread of `scope`, named `kalah-WHAT`; an error naming `what` when the
/// system cannot start one.
pub fn spawn_scoped<'scope, 'env, T: Send + 'scope>(
    scope: &'scope Scope<'scope, 'env>,
    what: &str,
    work: impl FnOnce() -> T + Send + 'scope,
) -> Result<ScopedJoinHandle<'scope, T>, CliError> {
    std::thread::Builder::new()
        .name(format!("kalah-{what}"))
        .spawn_scoped(scope, work)
        .map_err(|e| cannot_start(what, &e))
}

/// Starts `work` on a thread of its own, named `kalah-WHAT`, left to run; an error naming
/// `what` when the system cannot start one.
pub fn spawn(what: &str, work: impl FnOnce() + Send + 'static) -> Result<(), CliError> {
    std::thread::Builder::new()
        .name(format!("kalah-{what}"))
        .spawn(work)
        .map(drop)
        .map_err(|e| cannot_start(what, &e))
}

fn cannot_start(what: &str, e: &std::io::Error) -> CliError {
    CliError::failure(format!(
        "cannot start a thread ({what}): {e} (out of memory or of threads: a limit such as \
         ulimit -v or ulimit -u?)"
    ))
}
