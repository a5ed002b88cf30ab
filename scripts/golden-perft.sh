#!/usr/bin/env bash
# Regenerates data/perft/golden.perft: perft counts made by the plain reference implementation
# (`kalah perft --reference`), which tests/perft_golden.rs checks the packed board against.
#
# Usage: scripts/golden-perft.sh [NODE_LIMIT]
# For each entry and rule set, depths 1, 2, ... are counted until a count exceeds NODE_LIMIT
# (default 20000000). Takes a few minutes with the default limit.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-20000000}
cargo build --release --quiet
kalah=target/release/kalah
out=data/perft/golden.perft
tmp=$out.tmp

# id|position: the start of several Kalah(m,n) and named edge cases.
entries=(
  "kalah-1-1|<1,0,0,1,1>"
  "kalah-1-20|<1,0,0,20,20>"
  "kalah-2-2|<2,0,0,2,2,2,2>"
  "kalah-3-3|<3,0,0,3,3,3,3,3,3>"
  "kalah-3-10|<3,0,0,10,10,10,10,10,10>"
  "kalah-4-3|<4,0,0,3,3,3,3,3,3,3,3>"
  "kalah-4-4|<4,0,0,4,4,4,4,4,4,4,4>"
  "kalah-5-5|<5,0,0,5,5,5,5,5,5,5,5,5,5>"
  "kalah-6-1|<6,0,0,1,1,1,1,1,1,1,1,1,1,1,1>"
  "kalah-6-4|<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>"
  "kalah-6-6|<6,0,0,6,6,6,6,6,6,6,6,6,6,6,6>"
  "kalah-7-7|<7,0,0,7,7,7,7,7,7,7,7,7,7,7,7,7,7>"
  "kalah-8-8|<8,0,0,8,8,8,8,8,8,8,8,8,8,8,8,8,8,8,8>"
  "kalah-8-16-wide|<8,0,0,16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,16>"
  "kalah-10-10|<10,0,0,10,10,10,10,10,10,10,10,10,10,10,10,10,10,10,10,10,10,10,10>"
  "kalah-12-12|<12,0,0,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12,12>"
  "lap-capture|<6,0,0,13,1,0,0,0,0,0,0,0,0,0,2>"
  "north-to-move|<6,3,5,0,7,2,0,1,9,4,0,3,1,0,2> north"
  "big-houses|<4,0,0,30,0,0,1,0,25,0,1>"
  "near-end|<6,20,20,0,0,0,0,1,1,1,0,0,0,0,0>"
  "sparse-captures|<5,3,1,1,0,1,0,1,0,2,0,2,0>"
  "wide-425|<12,0,0,50,0,25,0,25,0,25,0,25,0,25,0,0,50,0,25,0,25,0,25,0,25,0,100>"
  "finished|<3,5,7,0,0,0,1,2,3>"
)

{
  echo "# Golden perft counts, made by scripts/golden-perft.sh with the reference implementation."
  echo "# One ply = one sowing. An entry: id, rules, position, then 'perft DEPTH NODES' lines."
  echo "# Node limit: $limit."
} > "$tmp"
for entry in "${entries[@]}"; do
  id=${entry%%|*}
  position=${entry#*|}
  for rules in standard empty-capture; do
    printf '\nid %s-%s\nrules %s\nposition %s\n' "$id" "$rules" "$rules" "$position" >> "$tmp"
    depth=1
    while :; do
      nodes=$("$kalah" perft "$position" --depth "$depth" --rules "$rules" --reference --json |
        sed -E 's/.*"nodes":([0-9]+).*/\1/')
      echo "perft $depth $nodes" >> "$tmp"
      if [ "$nodes" -gt "$limit" ] || [ "$nodes" -eq 0 ] || [ "$depth" -ge 40 ]; then
        break
      fi
      depth=$((depth + 1))
    done
    echo "$id $rules: depth $depth, $nodes nodes" >&2
  done
done
mv "$tmp" "$out"
echo "wrote $out" >&2
