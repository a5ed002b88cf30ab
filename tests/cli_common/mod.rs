//! Helpers shared by the test files that run the `kalah` binary.

// Each test file uses some of them.
#![allow(dead_code)]

use std::process::{Command, Output};

/// Runs `kalah` with `args`.
pub fn kalah(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kalah"))
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

/// Runs `kalah` with `args` and `input` on stdin.
pub fn kalah_with_input(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_kalah"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the kalah binary runs");
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin.write_all(input.as_bytes()).expect("input written");
    drop(stdin);
    child.wait_with_output().expect("the kalah binary ends")
}
