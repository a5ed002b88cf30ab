#!/usr/bin/env bash
# Certifies the books and ledgers built into kalah (data/books, data/proofs): for each, the
# facts its root's bounds and each first move's rest on, proven again by another path
# (`kalah prove --certify --by lower-levels`: the levels two below the database's top and two
# below each fact's seeds), the checks appended to FILE.checks.jsonl beside it. Resumes;
# tests/book.rs then checks that every bound of the shipped books is certified by those files.
#
# Needs the 6-house levels of both rules in the database home (or the directory $DB); the
# figures of the last run are in docs/proofs.md#certificates.
#
# Usage: scripts/certify-shipped.sh [FILE...]   (default: every shipped book and ledger but
#        the Kalah(6,6) campaigns, which run on their own in the background)
set -euo pipefail
cd "$(dirname "$0")/.."
KALAH=${KALAH:-target/release/kalah}
DB_ARGS=()
if [[ -n "${DB:-}" ]]; then DB_ARGS=(--db "$DB"); fi
if [[ $# -gt 0 ]]; then
    files=("$@")
else
    files=(data/books/kalah-6-*-book.jsonl data/proofs/kalah-6-5-*.jsonl)
fi
for f in "${files[@]}"; do
    echo "== $f" >&2
    start=$(date +%s)
    "$KALAH" prove --certify "$f" "${DB_ARGS[@]}" --threads "${THREADS:-2}"
    echo "   $(( $(date +%s) - start )) s" >&2
done
