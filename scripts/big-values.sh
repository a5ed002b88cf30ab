#!/usr/bin/env bash
# Solves the starts of Kalah(m,n) with seven houses and more, both capture rules, two ways, and
# writes each run to data/values/big-starts.jsonl: one `kalah solve --json --all-moves` object a
# line with three fields added: "way" (how it was solved), "command" (the arguments given) and
# "machine". A cell is written there only once it is solved both ways; a cell solved one way
# only (the other past LIMIT) goes to data/values/big-starts-one-way.jsonl. tests/values.rs checks that the two ways agree on every cell both reached, solves
# the small cells again and has the naive solver check the smallest.
#
# The two ways, each with another set of endgame levels, built in memory for the run (no file is
# read): "levels-0..L", the levels up to L seeds (L by the houses, as many as build in seconds:
# 16 for 7 houses, 14 for 8, and below the start's seeds), and a second run with the levels up
# to L-4 seeds, or none at all ("search-only", --memory-db off) where the start has 24 seeds or
# fewer. Levels are for 8 houses at most: from 9 houses on, the two ways are "search-only" on
# every thread and "search-only-serial" (--threads 1: another order of search, another table).
# Starts of more than 42 seeds with 7 or 8 houses (Kalah(7,4), (8,3) and up) are beyond levels
# built in memory: their two ways read the levels on disk (the database home, or DB=DIR) up to
# TOP and to SECOND seeds (`files-0..L`: --max-level L; defaults 22 and 20), which
# `kalah db build --houses M --max-seeds TOP --rules R` makes first (7 houses to 22 seeds: 2.4 GB,
# about 5 minutes on 2 cores; 8 houses to 19: 2.6 GB).
# A run that takes longer than LIMIT seconds (default 1800) is left out, and said so on stderr.
# SOLVE_ARGS="..." adds those arguments to every run (and to its recorded command), e.g.
# SOLVE_ARGS="--table-file FILE --save-every 10 --tt-mb 2048": a run stopped by LIMIT, Ctrl-C or
# the end of a session then resumes from FILE when the script is run again, and the row records
# that last run's time and nodes only (give each way its own FILE: WAYS one way a run).
# WAYS="W ..." runs those ways instead (each `off`, `serial`, `files:L` or a top level L built in
# memory, e.g. WAYS=12 for the levels 0..12 of a 7- or 8-house board; from 9 houses on, none).
# A cell that ends with one run here takes its second from $one_way: the latest run there of the
# same cell and rules by another way.
# MOVES=best solves for the value and the optimal first moves only (no --all-moves), where every
# move's exact value would take hours more: each other move is written proven worse, with
# "value": null, "lower" the widest bound and "upper" the value less 2 (every first move's value
# has the parity of the seeds), as a campaign's bounded moves are; "every_move": false says so.
#
# Usage: nice -n 19 scripts/big-values.sh [VARIANT ...]   e.g. scripts/big-values.sh 7,1 8,2
# (RULES=standard or RULES=empty-capture: one capture rule only)
# Default: Kalah(7..12, 1), Kalah(7..10, 2) and Kalah(7,3), the quickest first. Runs of the variants given
# replace their old rows (of the same way); the others are kept.
set -euo pipefail
cd "$(dirname "$0")/.."
case ${MOVES:=all} in
  all | best) ;;
  *) echo "big-values.sh: MOVES is all (the default) or best, not '$MOVES'" >&2; exit 2 ;;
esac

# KALAH=BINARY runs that binary instead of building one.
if [ -z "${KALAH:-}" ]; then cargo build --release --quiet; fi
kalah=${KALAH:-target/release/kalah}
out=data/values/big-starts.jsonl
one_way=data/values/big-starts-one-way.jsonl
limit=${LIMIT:-1800}
machine="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"

variants=("$@")
if [ ${#variants[@]} -eq 0 ]; then
  variants=(7,1 8,1 9,1 10,1 7,2 8,2 7,3 11,1 9,2 12,1 10,2)
fi
touch "$out"
# The top level built in memory for M houses (7 or 8; its largest level has some 70 M boards).
top_for() {
  case $1 in 7) echo 16 ;; *) echo 14 ;; esac
}
for v in "${variants[@]}"; do
  m=${v%,*}
  n=${v#*,}
  seeds=$((2 * m * n))
  top=$(top_for "$m")
  if [ "$top" -ge "$seeds" ]; then top=$((seeds - 2)); fi
  if [ "$seeds" -le 24 ]; then second=off; else second=$((top - 4)); fi
  ways=("$top" "$second")
  if [ "$m" -ge 9 ]; then ways=(off serial); fi
  if [ "$m" -le 8 ] && [ "$seeds" -gt 42 ]; then ways=("files:${TOP:-22}" "files:${SECOND:-20}"); fi
  if [ -n "${WAYS:-}" ]; then read -r -a ways <<<"$WAYS"; fi
  for rules in ${RULES:-standard empty-capture}; do
    # The runs of this cell, written to the file only when both ways are done (a cell solved
    # one way goes to $one_way instead: not checked, not in the table).
    runs=()
    for levels in "${ways[@]}"; do
      args=(solve --houses "$m" --seeds "$n" --rules "$rules" --json --long)
      if [ "$MOVES" = all ]; then args+=(--all-moves); fi
      case $levels in
        off) way=search-only; args+=(--memory-db off) ;;
        serial) way=search-only-serial; args+=(--memory-db off --threads 1) ;;
        files:*)
          way="files-0..${levels#files:}"
          args+=(--max-level "${levels#files:}")
          if [ -n "${DB:-}" ]; then args+=(--db "$DB"); fi
          ;;
        *) way="levels-0..$levels"; args+=(--memory-db "$levels") ;;
      esac
      if [ -n "${SOLVE_ARGS:-}" ]; then
        read -r -a extra <<<"$SOLVE_ARGS"
        args+=("${extra[@]}")
      fi
      echo "Kalah($v) $rules, $way: kalah ${args[*]}" >&2
      status=0
      row=$(timeout "$limit" "$kalah" "${args[@]}" 2>"$out.err") || status=$?
      if [ "$status" -eq 124 ]; then
        echo "  left out: not solved within $limit s" >&2
        continue
      elif [ "$status" -ne 0 ]; then
        echo "  failed: $(tail -1 "$out.err")" >&2
        continue
      fi
      row=$(jq -c --arg way "$way" --arg cmd "kalah ${args[*]}" --arg machine "$machine" \
        '. + {way: $way, command: $cmd, machine: $machine}' <<<"$row")
      if [ "$MOVES" = best ]; then
        row=$(jq -c --argjson m "$m" --argjson seeds "$seeds" '. as $r | . + {every_move: false,
          moves: [range(1; $m + 1) | . as $h | if ($r.best | index($h)) != null
            then {house: $h, value: $r.value}
            else {house: $h, value: null, lower: (0 - $seeds), upper: ($r.value - 2)} end]}' <<<"$row")
      fi
      echo "  $(jq -c '{value, best, time_ms, nodes}' <<<"$row")" >&2
      runs+=("$row")
    done
    if [ ${#runs[@]} -eq 1 ] && [ -f "$one_way" ]; then
      # The other way, from an earlier run of this cell left on its own.
      other=$(jq -c --arg v "Kalah($v)" --arg r "$rules" --arg w "$(jq -r .way <<<"${runs[0]}")" \
        'select(.variant == $v and .rules == $r and .way != $w)' "$one_way" | tail -1)
      if [ -n "$other" ]; then
        echo "  its other way, from $one_way: $(jq -c '{way, value, best, nodes}' <<<"$other")" >&2
        runs+=("$other")
        jq -c --arg v "Kalah($v)" --arg r "$rules" \
          'select(.variant != $v or .rules != $r)' "$one_way" >"$one_way.tmp"
        mv "$one_way.tmp" "$one_way"
      fi
    fi
    if [ ${#runs[@]} -lt 2 ]; then
      if [ ${#runs[@]} -gt 0 ]; then printf "%s\n" "${runs[@]}" >>"$one_way"; fi
      echo "  Kalah($v) $rules: not solved two ways; its run (if any) is in $one_way" >&2
      continue
    fi
    # Replace the rows of the same cell and rules; keep the others.
    jq -c --arg v "Kalah($v)" --arg r "$rules" \
      'select(.variant != $v or .rules != $r)' "$out" >"$out.tmp"
    printf '%s\n' "${runs[@]}" >>"$out.tmp"
    mv "$out.tmp" "$out"
  done
done
rm -f "$out.err"
echo "wrote $out ($(grep -c . "$out") runs)" >&2
