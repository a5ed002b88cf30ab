#!/usr/bin/env bash
# Solves Kalah(m,n) from the start for growing m and n under both rules and prints a Markdown
# table: value, nodes, time, nodes/s. Each row is a full `kalah solve` (value, optimal first
# moves, perfect line) with all cores, unless VALUE_ONLY=1.
#
# Usage: scripts/bench-solve.sh [VARIANT ...]   e.g. scripts/bench-solve.sh 4,4 6,4
# Default variants: Kalah(4,1..6), Kalah(5,1..5), Kalah(6,1..4). A solve longer than TIMEOUT
# seconds (default 900) is stopped and shown as such. DB=DIR solves with the endgame databases
# in DIR (one directory may hold both rule sets: see scripts/bench-db.sh); MEMORY_DB=SEEDS|off
# sets --memory-db (default: auto, which builds small levels in memory for boards of 40 seeds
# or more). "levels" is the top level probed, "build" the time to build them in memory (not
# part of "time"); "total" is both.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
kalah=target/release/kalah
extra=()
if [ "${VALUE_ONLY:-0}" = 1 ]; then extra=(--value-only); fi
if [ -n "${DB:-}" ]; then extra+=(--db "$DB"); fi
if [ -n "${MEMORY_DB:-}" ]; then extra+=(--memory-db "$MEMORY_DB"); fi
variants=("$@")
if [ ${#variants[@]} -eq 0 ]; then
  variants=(4,1 4,2 4,3 4,4 4,5 4,6 5,1 5,2 5,3 5,4 5,5 6,1 6,2 6,3 6,4)
fi
field() { sed -E "s/.*\"$1\":([^,}]*).*/\1/"; }
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
echo
echo "| variant | rules | value | best | nodes | time | nodes/s | levels | build | total |"
echo "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for v in "${variants[@]}"; do
  m=${v%,*}
  n=${v#*,}
  for rules in standard empty-capture; do
    # A search (--no-book): Kalah(6,4) would be read from its opening book at once.
    if ! out=$(timeout "${TIMEOUT:-900}" "$kalah" solve -m "$m" -n "$n" --rules "$rules" --json --no-book "${extra[@]}"); then
      echo "| Kalah($m,$n) | $rules | | | | > ${TIMEOUT:-900} s | | | | |"
      continue
    fi
    value=$(echo "$out" | field value)
    best=$(echo "$out" | sed -E 's/.*"best":\[([^]]*)\].*/\1/')
    nodes=$(echo "$out" | field nodes)
    ms=$(echo "$out" | field time_ms)
    rate=$(awk -v n="$nodes" -v t="$ms" 'BEGIN { printf "%.1f M", n / (t > 0 ? t : 1) / 1000 }')
    secs=$(awk -v t="$ms" 'BEGIN { printf "%.2f s", t / 1000 }')
    levels=$(echo "$out" | field db_max_seeds)
    build_ms=$(echo "$out" | field db_build_ms)
    if [ "$build_ms" = null ]; then build_ms=0; fi
    build=$(awk -v t="$build_ms" 'BEGIN { printf "%.2f s", t / 1000 }')
    total=$(awk -v t="$ms" -v b="$build_ms" 'BEGIN { printf "%.2f s", (t + b) / 1000 }')
    if [ "$levels" = null ]; then levels=-; build=-; fi
    echo "| Kalah($m,$n) | $rules | $value | $best | $nodes | $secs | $rate | $levels | $build | $total |"
  done
done
