//! `kalah prove --merge`: ledgers merged into one, checked against each other.

use kalah::prove;
use serde_json::json;

use super::super::CliError;
use super::super::args::print_json;
use super::{ProveArgs, prove_error};

pub fn run(args: &ProveArgs) -> Result<(), CliError> {
    let into = args.ledger.as_ref().expect("clap requires --ledger");
    for path in &args.merge {
        if !path.is_file() {
            return Err(CliError::input(format!(
                "--merge {}: not a ledger file",
                path.display()
            )));
        }
    }
    let merged = prove::merge(&args.merge, into).map_err(prove_error)?;
    if args.json {
        print_json(&json!({
            "ledger": into.display().to_string(),
            "added": merged.added,
            "already": merged.already,
        }));
    } else {
        println!(
            "{}: {} facts added, {} already there; no contradiction",
            into.display(),
            merged.added,
            merged.already
        );
    }
    Ok(())
}
