#!/bin/sh
# Rebuilds the opening books that kalah ships (data/books/), or carries them deeper.
#
#   scripts/make-books.sh                 # every book, to the depth it ships with
#   scripts/make-books.sh 6 4 standard 6  # one book, to another depth
#
# Each book holds the exact value of every board up to its depth below the start (boards of 24
# seeds or fewer left out: the readers' levels 0..24 hold them), solved with the 6-house levels
# of the database home (build them first: `kalah db build --houses 6 --max-seeds 30 --yes` and
# the same with `--rules empty-capture`; any top level of 24 or more gives the same book, a
# deeper one sooner). A book resumes from its file: stopped at any moment, the same command
# goes on, and a deeper run adds only the boards below the old depth. The books are built into
# the binary: rebuild kalah after changing one. KALAH names the binary (default
# target/release/kalah); figures: docs/proofs.md#opening-books.
set -eu
cd "$(dirname "$0")/.."
KALAH=${KALAH:-target/release/kalah}

book() {
    "$KALAH" prove -m "$1" -n "$2" --rules "$3" --book "$4" --book-levels 24 \
        --ledger "data/books/kalah-$1-$2-$3-book.jsonl"
}

if [ $# -eq 4 ]; then
    book "$1" "$2" "$3" "$4"
elif [ $# -eq 0 ]; then
    book 6 4 standard 6
    book 6 4 empty-capture 6
    book 6 5 standard 2
    book 6 5 empty-capture 2
else
    echo "usage: scripts/make-books.sh [HOUSES SEEDS RULES DEPTH]" >&2
    exit 2
fi
