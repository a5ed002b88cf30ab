//! The `kalah` command: parse the command line, run, map errors to exit codes.

mod cli;

/// mimalloc rather than the system allocator: `kalah serve` allocates and frees a few dozen
/// small blocks an answer, and with glibc's malloc that was a seventh of its time under load
/// (docs/serve-load.md). The searches and builds allocate little and are unaffected.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    kalah::default_sigpipe();
    kalah::catch_bus_error();
    cli::main()
}
