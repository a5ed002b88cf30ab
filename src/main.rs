//! The `kalah` command: parse the command line, run, map errors to exit codes.

mod cli;

fn main() -> std::process::ExitCode {
    kalah::default_sigpipe();
    cli::main()
}
