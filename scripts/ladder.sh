#!/usr/bin/env bash
# The ladder of algorithms: nodes and time of each on small variants, both rules, one thread,
# value only (`kalah solve --value-only --algorithm A --threads 1`). Prints a Markdown table.
#
# Usage: scripts/ladder.sh [TIMEOUT_SECONDS]   (default 60; a slower run shows as "> T s")
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-60}
cargo build --release --quiet
kalah=target/release/kalah
field() { sed -E "s/.*\"$1\":([^,}]*).*/\1/"; }
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
echo
echo "| variant | rules | value | minimax | memo | alphabeta | scout | mtdf |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for v in "3 2" "3 3" "4 2" "4 3" "5 2" "4 4"; do
  set -- $v
  for rules in standard empty-capture; do
    row="| Kalah($1,$2) | $rules |"
    value=""
    cells=""
    for algorithm in minimax memo alphabeta scout mtdf; do
      if out=$(timeout "$limit" "$kalah" solve -m "$1" -n "$2" --rules "$rules" --value-only \
          --algorithm "$algorithm" --threads 1 --json 2>/dev/null); then
        value=$(echo "$out" | field value)
        nodes=$(echo "$out" | field nodes)
        ms=$(echo "$out" | field time_ms)
        cells="$cells $nodes nodes, $ms ms |"
      else
        cells="$cells > $limit s |"
      fi
    done
    echo "$row $value |$cells"
  done
done
