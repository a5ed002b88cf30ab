//! Helpers shared by the test files that run the `kalah` binary.

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
    let out = kalah(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}
