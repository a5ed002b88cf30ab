#!/usr/bin/env bash
# Fuzzes the readers of what campaigns leave on disk (ledger lines, checks lines, table file
# headers) for SECONDS seconds (default 600): the properties of tests/fuzz_ledgers.rs, seeded
# from the corpus in tests/corpus/, run over and over with fresh random inputs. A failure
# prints the smallest input proptest found; add it to the corpus (or to a unit test) once fixed.
#
# Usage: scripts/fuzz-ledgers.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
KALAH_FUZZ_SECONDS="$seconds" nice -n 10 cargo test --test fuzz_ledgers -- --ignored \
    --nocapture the_ledger_parsers_fuzzed_for_a_while
