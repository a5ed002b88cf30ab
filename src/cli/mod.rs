//! The command line: clap derive types whose doc comments are the help, and the plumbing from
//! them to the library. Errors become one line on stderr and a non-zero exit code.

mod answer;
mod args;
mod at_least;
mod bench;
mod books;
mod completions;
mod db;
mod db_choice;
mod files;
mod game_db;
mod hints;
mod human;
mod kgp;
mod man;
mod mankalah;
mod matchcmd;
mod moves;
#[cfg(feature = "mpi")]
mod mpi;
mod perft;
mod play;
mod progress;
mod prove;
mod query;
mod replay;
mod replay_forecast;
mod replay_plot;
mod replay_ply;
mod search;
mod search_progress;
mod serve;
mod show;
mod solve;
mod table_file;
mod thinking;
mod threads;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exact Kalah (mancala): rules, positions, perft, the exact solver, endgame databases, play,
/// matches and bots for game servers.
///
/// Positions are KGP board literals, South to move unless stated:
///   '<m,south_store,north_store,s_1,...,s_m,n_1,...,n_m>'  (quote it: < and > are shell syntax)
/// Rows go in their owner's sowing order; North's house 1 faces South's house m. Put `north`
/// after the literal ('<...> north') or pass --to-move north for North to move.
///
/// Limits: 1 to 12 houses a side, at most 65535 seeds in a game (Kalah(12,12) has 288).
/// Rules: `standard` (a capture needs a non-empty opposite house) or `empty-capture`; play,
/// match, show and moves also know `awari-basic` and `mankalah`. Databases: 1 to 8 houses, levels up to 64 seeds.
#[derive(Parser, Debug)]
#[command(name = "kalah", version, about, long_about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Show(show::ShowArgs),
    Moves(moves::MovesArgs),
    Perft(perft::PerftArgs),
    Solve(solve::SolveArgs),
    Analyze(solve::AnalyzeArgs),
    Query(query::QueryArgs),
    Bench(bench::BenchArgs),
    Prove(Box<prove::ProveArgs>),
    Db(db::DbArgs),
    Play(play::PlayArgs),
    Replay(replay::ReplayArgs),
    Match(matchcmd::MatchArgs),
    Kgp(kgp::KgpArgs),
    Mankalah(mankalah::MankalahArgs),
    Serve(serve::ServeArgs),
    Completions(completions::CompletionsArgs),
    Man(man::ManArgs),
}

/// A failed command: what to print, and the exit code.
#[derive(Debug)]
pub struct CliError {
    message: String,
    code: u8,
}

impl CliError {
    /// Bad input from the user (exit code 2).
    pub fn input(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            code: 2,
        }
    }

    /// Something failed while running (exit code 1).
    pub fn failure(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            code: 1,
        }
    }
}

impl From<std::convert::Infallible> for CliError {
    fn from(never: std::convert::Infallible) -> CliError {
        match never {}
    }
}

/// Watches for Ctrl-C or SIGTERM (after [`kalah::catch_interrupt`]) on a thread of `scope`
/// until `done` is set, and calls `stop` when one comes (it cancels a long job, which then stops
/// at its next check, or says what was kept and ends the process). An error if the thread
/// cannot be started ([`threads::spawn_scoped`]).
fn cancel_on_interrupt<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    done: &'scope std::sync::atomic::AtomicBool,
    stop: impl FnOnce() + Send + 'scope,
) -> Result<(), CliError> {
    threads::spawn_scoped(scope, "interrupt", move || {
        while !done.load(std::sync::atomic::Ordering::Relaxed) {
            if kalah::interrupted() {
                stop();
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    })
    .map(drop)
}

/// Parses the command line, runs the command, maps errors to exit codes.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return clap_error(err),
    };
    // A long command says so when Ctrl-C comes before it has anything to keep (reading its
    // inputs, opening the levels, making its table, asking); from its first piece of work on,
    // its own handling (kalah::catch_interrupt) says what it kept and what it dropped.
    if matches!(
        cli.command,
        Command::Solve(_)
            | Command::Analyze(_)
            | Command::Query(_)
            | Command::Bench(_)
            | Command::Prove(_)
            | Command::Db(_)
            | Command::Play(_)
            | Command::Replay(_)
            | Command::Match(_)
    ) {
        kalah::exit_on_interrupt("kalah: interrupted: no answer, nothing written\n");
    }
    let result = match cli.command {
        Command::Show(a) => show::run(a),
        Command::Moves(a) => moves::run(a),
        Command::Perft(a) => perft::run(a),
        Command::Solve(a) => solve::run_solve(a),
        Command::Analyze(a) => solve::run_analyze(a),
        Command::Query(a) => query::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Prove(a) => prove::run(*a),
        Command::Db(a) => db::run(a),
        Command::Play(a) => play::run(a),
        Command::Replay(a) => replay::run(a),
        Command::Match(a) => matchcmd::run(a),
        Command::Kgp(a) => kgp::run(a),
        Command::Mankalah(a) => mankalah::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Completions(a) => completions::run(a),
        Command::Man(a) => man::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // One write, so that the line is not split by what another process writes to the
            // same stream (the ranks of an MPI job share mpirun's).
            let line = format!("kalah: {}\n", err.message);
            let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
            ExitCode::from(err.code)
        }
    }
}

/// `kalah` and the subcommands that `args` names, in order (`kalah db build`): the command
/// whose help a usage error points to.
fn command_path(args: impl Iterator<Item = std::ffi::OsString>) -> String {
    use clap::CommandFactory;
    let mut command = Cli::command();
    let mut path = vec!["kalah".to_owned()];
    for arg in args {
        let Some(arg) = arg.to_str() else { break };
        let Some(sub) = command.find_subcommand(arg).cloned() else {
            break;
        };
        path.push(sub.get_name().to_owned());
        command = sub;
    }
    path.join(" ")
}

/// The most characters of a usage error shown (it may quote a value of any length).
const MAX_CLAP_MESSAGE: usize = 400;

/// Help and version go to stdout as clap draws them; a usage error is cut to its first line.
fn clap_error(err: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = err.print();
            ExitCode::from(if err.use_stderr() { 2 } else { 0 })
        }
        _ => {
            // The message proper runs up to the first blank line (usage and tips follow).
            let text = err.render().to_string();
            let message: Vec<&str> = text
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            let message = message.join(" ");
            let message = message.strip_prefix("error: ").unwrap_or(&message);
            // The message repeats what was typed: control characters escaped, a huge value cut.
            let message = kalah::text::escape_within(message, MAX_CLAP_MESSAGE);
            // clap's suggestion (a close option or subcommand) comes after the first blank line.
            use clap::error::{ContextKind, ContextValue};
            let suggested = [ContextKind::SuggestedArg, ContextKind::SuggestedSubcommand]
                .into_iter()
                .find_map(|kind| match err.get(kind) {
                    Some(ContextValue::String(s)) => Some(s.clone()),
                    Some(ContextValue::Strings(v)) if !v.is_empty() => Some(v.join("` or `")),
                    _ => None,
                })
                .map(|s| format!("; did you mean `{}`?", kalah::text::escape_within(&s, 80)))
                .unwrap_or_default();
            // The help of the command the error is about: the subcommands on the command line.
            let command = command_path(std::env::args_os().skip(1));
            eprintln!("kalah: {message}{suggested} (see {command} --help)");
            ExitCode::from(2)
        }
    }
}
