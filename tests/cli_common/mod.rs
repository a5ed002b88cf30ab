//! Helpers shared by the test files that run the `kalah` binary.

// Each test file uses some of them.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// The environment variable that names the database home (`kalah::db::home::HOME_VAR`).
pub const DB_HOME_VAR: &str = "KALAH_DB";

/// A database home that does not exist (`kalah-no-db-home-PID` in the system's temporary
/// directory, never made): the home of every `kalah` the tests run, so that a developer's
/// own database (~/.local/share/kalah) never changes what they see.
pub fn missing_db_home() -> PathBuf {
    std::env::temp_dir().join(format!("kalah-no-db-home-{}", std::process::id()))
}

/// The environment variable that names this installation's key (`kalah::prove::key::KEY_VAR`).
pub const KEY_VAR: &str = "KALAH_KEY";

/// The key of the installation the tests run (`kalah-test-key-PID/kalah.key` in the system's
/// temporary directory, made by the first command that writes a check): never the developer's
/// own (~/.local/share/kalah.key).
pub fn test_key() -> PathBuf {
    std::env::temp_dir()
        .join(format!("kalah-test-key-{}", std::process::id()))
        .join("kalah.key")
}

/// The `kalah` binary, to be given its arguments, with [`missing_db_home`] as its database
/// home and [`test_key`] as its key: every test runs `kalah` through this (a test about the
/// home sets `KALAH_DB`, or removes it, itself).
pub fn command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kalah"));
    command.env(DB_HOME_VAR, missing_db_home());
    command.env(KEY_VAR, test_key());
    command
}

/// Runs `kalah` with `args`.
pub fn kalah(args: &[&str]) -> Output {
    command()
        .args(args)
        .output()
        .expect("the kalah binary runs")
}

/// Runs `kalah` with `args`, expects success and returns its JSON output.
pub fn json(args: &[&str]) -> serde_json::Value {
    json_and_stderr(args).0
}

/// Runs `kalah` with `args`, expects success and returns its JSON output and its stderr.
pub fn json_and_stderr(args: &[&str]) -> (serde_json::Value, String) {
    let out = kalah(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}: {stderr}");
    let json = serde_json::from_slice(&out.stdout).expect("valid JSON on stdout");
    (json, stderr)
}

/// A fresh, empty directory `kalah-NAME-PID` in the system's temporary directory.
pub fn fresh_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("kalah-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// How a watched run of `kalah` ended ([`kalah_watched`]).
pub struct Watched {
    /// Exit status, stdout and stderr.
    pub output: Output,
    /// The most memory the process had held (its peak resident set, KiB) 200 ms after each
    /// part of the input was written, where the system says (Linux).
    pub peak_kib: Vec<Option<u64>>,
}

impl Watched {
    /// stderr as text.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// stdout as text.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
}

/// Runs `kalah` with `args`, writing the `parts` of its input one after another with a pause
/// of 200 ms after each (when the process's peak memory so far is read), then closing it. A
/// run that outlives `limit` is killed and fails the test, instead of hanging it; the input is
/// written from another thread, so a process that stops reading cannot block the test either.
pub fn kalah_watched(args: &[&str], parts: Vec<Vec<u8>>, limit: std::time::Duration) -> Watched {
    use std::io::{Read, Write};
    use std::time::{Duration, Instant};
    let mut child = spawn_piped(args);
    let mut stdin = child.stdin.take().expect("piped stdin");
    let status_file = format!("/proc/{}/status", child.id());
    let writer = std::thread::spawn(move || {
        let mut peaks = Vec::new();
        for part in &parts {
            // The process may stop reading (refuse its input) and end: not an error here.
            let _ = stdin.write_all(part);
            std::thread::sleep(Duration::from_millis(200));
            peaks.push(std::fs::read_to_string(&status_file).ok().and_then(|s| {
                let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
                line.split_whitespace().nth(1)?.parse::<u64>().ok()
            }));
        }
        peaks
    });
    let drain = |mut from: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = from.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for kalah") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("kalah {args:?} still running after {limit:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Watched {
        output: Output {
            status,
            stdout: stdout.join().expect("stdout read"),
            stderr: stderr.join().expect("stderr read"),
        },
        peak_kib: writer.join().expect("input written"),
    }
}

/// Runs `kalah` with `args` and `input` on stdin.
pub fn kalah_with_input(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = spawn_piped(args);
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin.write_all(input.as_bytes()).expect("input written");
    drop(stdin);
    child.wait_with_output().expect("the kalah binary ends")
}

/// Sends SIGTERM to `child` (with kill(1), so that no test needs libc), asserting it was sent.
pub fn terminate(child: &std::process::Child) {
    signal(child, "TERM");
}

/// Sends the signal named `name` (`TERM`, `INT`) to `child` with kill(1), asserting it was sent.
fn signal(child: &std::process::Child, name: &str) {
    let sent = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .expect("kill(1) runs");
    assert!(sent.success(), "kill -{name} {}", child.id());
}

/// Sends SIGINT (Ctrl-C) to `child` with kill(1), asserting it was sent.
pub fn interrupt(child: &std::process::Child) {
    signal(child, "INT");
}

/// Starts `command` with its stdout dropped and its stderr piped, to be read a line at a time
/// while it runs.
pub fn spawn_reading_stderr(
    command: &mut Command,
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStderr>,
) {
    let mut child = command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the kalah binary starts");
    let stderr = std::io::BufReader::new(child.stderr.take().expect("stderr is piped"));
    (child, stderr)
}

/// Runs `command` (its stdout and stderr captured), sends it Ctrl-C after `wait`, and returns
/// its output once it has ended (within 30 s, else the test fails).
pub fn interrupted_after(command: &mut Command, wait: std::time::Duration) -> Output {
    let child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the kalah binary starts");
    std::thread::sleep(wait);
    interrupt(&child);
    wait_within(child, std::time::Duration::from_secs(30))
}

/// Waits for `child` to end, with its output; kills it, and fails the test, after `limit`
/// (so that a regression that hangs fails instead of stalling the tests).
pub fn wait_within(mut child: std::process::Child, limit: std::time::Duration) -> Output {
    use std::io::Read;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the kalah process did not end within {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout read"),
        stderr: stderr.join().expect("stderr read"),
    }
}

/// Runs `command` with `input` on stdin, as [`wait_within`] waits for it.
pub fn run_within(mut command: Command, input: &str, limit: std::time::Duration) -> Output {
    use std::io::Write;
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the command runs");
    let mut stdin = child.stdin.take().expect("piped stdin");
    // The input is small; the child may end without reading it.
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    wait_within(child, limit)
}

/// Runs `kalah` with `args` and nothing on stdin, as [`wait_within`] waits for it.
pub fn kalah_within(args: &[&str], limit: std::time::Duration) -> Output {
    let mut command = command();
    command.args(args);
    run_within(command, "", limit)
}

/// Starts `kalah` with `args`, its stdin, stdout and stderr piped.
fn spawn_piped(args: &[&str]) -> std::process::Child {
    command()
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the kalah binary runs")
}
