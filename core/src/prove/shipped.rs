//! The checks shipped with kalah: those of `data/proofs/` and `data/books/`, built into the
//! binary, which count as this installation's own without a mark.
//!
//! A check certifies a fact only when this installation wrote it ([`crate::prove::key`]) or
//! when it is, field for field, one of the checks built into this binary, and the fact it is
//! read with is, letter for letter, the fact that shipped check was made of (its line in the
//! ledger shipped beside it): a shipped check proves nothing of another fact, whatever digest
//! that fact has. The shipped checks are trusted as the rest of the source is: they were made
//! by `scripts/certify-shipped.sh` (each fact proven again by another path, on the levels two
//! below the campaign's, or by one thread where it had more) and come with the code, reviewed
//! as it is. The test suite reads every one of them and proves again, by a third path (no
//! levels at all, one thread), the cheapest facts they certify in each file that a test can
//! afford (`tests/shipped_checks.rs`; its ignored test, every fact within 200 M nodes a
//! bound), and checks that the values they certify are those the table of values gives
//! (`tests/values.rs`, solved two other ways).
//!
//! Only the shipped files are read here, once, the first time a check without a mark asks.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::lanes::Wide;
use crate::prove::certificate::{Check, digest_of_line};
use crate::prove::fact::Fact;

/// Each shipped checks file with its ledger: the ledger's name (as in `data/`), its text and
/// the checks' text.
pub const CHECKED: &[(&str, &str, &str)] = &[
    (
        "data/books/kalah-6-4-standard-book.jsonl",
        include_str!("../../../data/books/kalah-6-4-standard-book.jsonl"),
        include_str!("../../../data/books/kalah-6-4-standard-book.checks.jsonl"),
    ),
    (
        "data/books/kalah-6-4-empty-capture-book.jsonl",
        include_str!("../../../data/books/kalah-6-4-empty-capture-book.jsonl"),
        include_str!("../../../data/books/kalah-6-4-empty-capture-book.checks.jsonl"),
    ),
    (
        "data/books/kalah-6-5-standard-book.jsonl",
        include_str!("../../../data/books/kalah-6-5-standard-book.jsonl"),
        include_str!("../../../data/books/kalah-6-5-standard-book.checks.jsonl"),
    ),
    (
        "data/proofs/kalah-6-5-standard.jsonl",
        include_str!("../../../data/proofs/kalah-6-5-standard.jsonl"),
        include_str!("../../../data/proofs/kalah-6-5-standard.checks.jsonl"),
    ),
    (
        "data/proofs/kalah-6-6-standard.jsonl",
        include_str!("../../../data/proofs/kalah-6-6-standard.jsonl"),
        include_str!("../../../data/proofs/kalah-6-6-standard.checks.jsonl"),
    ),
    (
        "data/proofs/kalah-7-3-standard.jsonl",
        include_str!("../../../data/proofs/kalah-7-3-standard.jsonl"),
        include_str!("../../../data/proofs/kalah-7-3-standard.checks.jsonl"),
    ),
    (
        "data/proofs/kalah-7-3-empty-capture.jsonl",
        include_str!("../../../data/proofs/kalah-7-3-empty-capture.jsonl"),
        include_str!("../../../data/proofs/kalah-7-3-empty-capture.checks.jsonl"),
    ),
    (
        "data/proofs/kalah-7-4-standard.jsonl",
        include_str!("../../../data/proofs/kalah-7-4-standard.jsonl"),
        include_str!("../../../data/proofs/kalah-7-4-standard.checks.jsonl"),
    ),
    (
        "data/proofs/kalah-7-4-empty-capture.jsonl",
        include_str!("../../../data/proofs/kalah-7-4-empty-capture.jsonl"),
        include_str!("../../../data/proofs/kalah-7-4-empty-capture.checks.jsonl"),
    ),
    (
        "data/proofs/kalah-8-3-standard.jsonl",
        include_str!("../../../data/proofs/kalah-8-3-standard.jsonl"),
        include_str!("../../../data/proofs/kalah-8-3-standard.checks.jsonl"),
    ),
    (
        "data/proofs/kalah-9-3-empty-capture.jsonl",
        include_str!("../../../data/proofs/kalah-9-3-empty-capture.jsonl"),
        include_str!("../../../data/proofs/kalah-9-3-empty-capture.checks.jsonl"),
    ),
    (
        "data/proofs/kalah-12-2-empty-capture.jsonl",
        include_str!("../../../data/proofs/kalah-12-2-empty-capture.jsonl"),
        include_str!("../../../data/proofs/kalah-12-2-empty-capture.checks.jsonl"),
    ),
];

/// The shipped checks by the digest of their fact, each with the line of that fact.
struct Shipped {
    by_digest: HashMap<String, (Vec<Check>, Option<String>)>,
}

/// The shipped checks, read the first time they are asked for.
fn shipped() -> &'static Shipped {
    static SHIPPED: OnceLock<Shipped> = OnceLock::new();
    SHIPPED.get_or_init(|| {
        let mut by_digest: HashMap<String, (Vec<Check>, Option<String>)> = HashMap::new();
        for &(_, ledger, checks) in CHECKED {
            for line in checks.lines().filter(|l| !l.trim().is_empty()) {
                // A shipped line that does not read is left out (tests/shipped_checks.rs reads
                // every one of them).
                if let Ok(check) = Check::from_line(line) {
                    by_digest
                        .entry(check.digest.clone())
                        .or_default()
                        .0
                        .push(check);
                }
            }
            for line in ledger.lines() {
                let Ok(fact) = Fact::<Wide>::from_line(line) else {
                    continue;
                };
                let line = fact.to_line();
                if let Some((_, of)) = by_digest.get_mut(&digest_of_line(&line)) {
                    *of = Some(line);
                }
            }
        }
        Shipped { by_digest }
    })
}

/// Whether `check` is one of the checks shipped with kalah, made of the fact whose line
/// ([`Fact::to_line`]) is `fact_line` (see the module docs).
pub fn vouches(check: &Check, fact_line: &str) -> bool {
    shipped()
        .by_digest
        .get(&check.digest)
        .is_some_and(|(checks, of)| {
            of.as_deref() == Some(fact_line) && checks.iter().any(|c| c == check)
        })
}
