#!/usr/bin/env bash
# Regenerates data/values/starts.jsonl: the exact solution of the start of Kalah(m,n), both
# capture rules, one `kalah solve --json --all-moves` object a line (value, optimal first moves,
# every first move's value, the perfect line). tests/values.rs solves the small ones again and
# checks them against this file, and checks the file against the values published for
# Kalah(6,4) and Kalah(6,5).
#
# Usage: scripts/golden-values.sh [VARIANT ...]   e.g. scripts/golden-values.sh 4,4 6,4
# Default: Kalah(1..6, 1..6) but Kalah(6,6) (out of reach); Kalah(6,5) is solved value only
# (about 10 minutes for both rules on 2 cores), every other variant with --all-moves (a few
# minutes in all). Rows for variants given on the command line replace their old rows.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
kalah=target/release/kalah
out=data/values/starts.jsonl
mkdir -p "$(dirname "$out")"
tmp=$out.tmp

variants=("$@")
if [ ${#variants[@]} -eq 0 ]; then
  for m in 1 2 3 4 5 6; do
    for n in 1 2 3 4 5 6; do
      if [ "$m,$n" != 6,6 ]; then variants+=("$m,$n"); fi
    done
  done
fi

# Keep the rows of the variants not being solved again.
: >"$tmp"
if [ -f "$out" ]; then
  pattern=$(printf '"variant":"Kalah(%s)"|' "${variants[@]}")
  grep -v '^#' "$out" | grep -vE "${pattern%|}" >>"$tmp" || true
fi
for v in "${variants[@]}"; do
  m=${v%,*}
  n=${v#*,}
  for rules in standard empty-capture; do
    mode=(--all-moves)
    if [ "$v" = 6,5 ]; then mode=(--value-only); fi
    echo "Kalah($v) $rules ${mode[*]}" >&2
    # A search, never the opening books' answer (--no-book): the file records the solver's.
    "$kalah" solve --houses "$m" --seeds "$n" --rules "$rules" "${mode[@]}" --no-book --json >>"$tmp"
  done
done
# One order whatever was solved again: by houses, seeds, then standard before empty-capture.
awk '
  { match($0, /"variant":"Kalah\([0-9]+,[0-9]+\)"/); v = substr($0, RSTART + 17, RLENGTH - 19)
    split(v, mn, ","); r = ($0 ~ /"rules":"standard"/) ? 0 : 1
    printf "%03d %03d %d\t%s\n", mn[1], mn[2], r, $0 }' "$tmp" | sort | cut -f2- >"$out.sorted"
{
  echo "# Made by scripts/golden-values.sh on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores."
  echo "# One 'kalah solve --json' object a line (see the README for the fields)."
  cat "$out.sorted"
} >"$out"
rm -f "$tmp" "$out.sorted"
echo "wrote $out ($(grep -vc '^#' "$out") solves)" >&2
