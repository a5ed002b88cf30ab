#!/usr/bin/env bash
# Side by side with other solvers: solves standard Kalah(6,SEEDS) from the start, value only, one
# thread, with this solver and with the other solvers a user has built, every solver looking up
# the boards of at most LEVELS seeds in its own endgame database. Prints the machine and a
# Markdown table: solver, value, nodes (as each solver counts them), best wall time of RUNS runs
# (the whole process: loading, table, search) and its ratio to kalah's. Exits 1 if the values
# disagree. Nothing is fetched or built here: a solver whose path is not given is skipped.
#
# Usage: [CMANCALA=... CMANCALA_DIR=...] [GIRVING=... GIRVING_DB=...] scripts/side-by-side.sh
#
#   KALAH        this solver's binary (default target/release/kalah; build it first). It runs
#                  kalah solve -m 6 -n SEEDS --value-only --max-level LEVELS --threads 1 --json
#                with the levels of the database home (or KALAH_DB=DIR: --db DIR), and
#                --tt-mb KALAH_TT_MB if set (1..65536; default: kalah's own choice).
#   CMANCALA     CMancala's binary, built with memory-mapped EGDB. CMANCALA_DIR: the directory
#                holding its EGDB/ (files EGDB/egdb_1.bin .. egdb_LEVELS.bin, classic rules),
#                where it is run. It gets on stdin the commands
#                  stones SEEDS, mode classic, book false, progress false, time 0, depth 0,
#                  solver local, cache CACHE_BITS, egdb LEVELS, player 1 ai, player 2 human,
#                  autoplay false, start, step, last, quit
#                (no opening book, unlimited time and depth: its one-thread exact solve of the
#                start). All of its EGDB files must be there: it would otherwise build them.
#   GIRVING      Irving's serial solver (kalah-s), built for standard rules (his code captures
#                into an empty opposite house: his capture test must also ask that house to
#                hold seeds, or the value shown is the empty-capture one). GIRVING_DB: its
#                endgame file holding at least LEVELS seeds. It runs
#                  kalah-s -t CACHE_BITS -e LEVELS -E GIRVING_DB s SEEDS
#                (a table of 12 * 2^CACHE_BITS bytes; it reads its levels into memory first).
#   SEEDS        seeds a house, 1..6 (default 4)
#   LEVELS       top endgame level, 1..32 (default 24; kalah's database home must hold 0..LEVELS)
#   RUNS         runs of each solver, 1..20 (default 3), taken in turn; the best time is kept
#   CACHE_BITS   CMancala's and Irving's table, 2^CACHE_BITS entries, 20..30 (default 26)
#   TIMEOUT      seconds a run may take before it is stopped, 1..86400 (default 3600)
#   WARM         1 (default): first `kalah db warm --max-level LEVELS --hold` (in KALAH_DB or
#                the home), so that kalah's levels are in the page cache in 2 MiB pages as
#                `db build` leaves them, not in whatever pieces the cache has broken them into
#                since, and stay mapped while the runs go on; CMancala's EGDB files are mapped
#                and read once as well, and held the same way. Some machines (this project's
#                virtual machines among them) page out cached pages no process maps after a
#                minute unused: without a holder, each solver's levels would age out while the
#                other solver runs. 0: the levels as the cache holds them, nothing held
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "side-by-side: $*" >&2; exit 2; }
bounded() { # NAME VALUE LO HI
  [[ "$2" =~ ^[0-9]{1,6}$ ]] && (( 10#$2 >= $3 && 10#$2 <= $4 )) || die "$1 must be an integer in $3..$4 (got '$2')"
}

KALAH=${KALAH:-target/release/kalah}
SEEDS=${SEEDS:-4}
LEVELS=${LEVELS:-24}
RUNS=${RUNS:-3}
CACHE_BITS=${CACHE_BITS:-26}
TIMEOUT=${TIMEOUT:-3600}
bounded SEEDS "$SEEDS" 1 6
bounded LEVELS "$LEVELS" 1 32
bounded RUNS "$RUNS" 1 20
bounded CACHE_BITS "$CACHE_BITS" 20 30
bounded TIMEOUT "$TIMEOUT" 1 86400
SEEDS=$((10#$SEEDS)); LEVELS=$((10#$LEVELS)); RUNS=$((10#$RUNS))
CACHE_BITS=$((10#$CACHE_BITS)); TIMEOUT=$((10#$TIMEOUT))

[ -x "$KALAH" ] || die "no kalah binary at $KALAH (cargo build --release, or KALAH=PATH)"
# A search (--no-book): the starts of Kalah(6,4), (6,5) and (6,6) are in the shipped ledgers.
kalah_args=(solve -m 6 -n "$SEEDS" --value-only --max-level "$LEVELS" --threads 1 --json --no-book)
if [ -n "${KALAH_DB:-}" ]; then
  [ -d "$KALAH_DB" ] || die "KALAH_DB=$KALAH_DB is not a directory"
  kalah_args+=(--db "$KALAH_DB")
fi
if [ -n "${KALAH_TT_MB:-}" ]; then
  bounded KALAH_TT_MB "$KALAH_TT_MB" 1 65536
  kalah_args+=(--tt-mb "$((10#$KALAH_TT_MB))")
fi

WARM=${WARM:-1}
[[ "$WARM" =~ ^[01]$ ]] || die "WARM must be 0 or 1 (got '$WARM')"
# Processes holding levels mapped (WARM=1), stopped on exit.
holders=()
held_out=$(mktemp)
release() {
  for p in "${holders[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -f "$held_out"
}
trap release EXIT
# hold WHAT PATTERN: waits until the holder just started in the background writes a line
# matching PATTERN to $held_out (then shown), or dies
hold() {
  local pid=$! waited=0
  holders+=("$pid")
  until grep -qE "$2" "$held_out"; do
    kill -0 "$pid" 2>/dev/null || die "holding $1 failed"
    (( waited++ < 6000 )) || die "holding $1 took over 20 minutes"
    sleep 0.2
  done
  echo "$1: $(grep -E "$2" "$held_out" | head -n1)" >&2
  : >"$held_out"
}
if [ "$WARM" = 1 ]; then
  warm_args=(db warm --max-level "$LEVELS" --hold)
  if [ -n "${KALAH_DB:-}" ]; then warm_args+=(--dir "$KALAH_DB"); fi
  "$KALAH" "${warm_args[@]}" >"$held_out" 2>/dev/null &
  hold "kalah's levels 0..$LEVELS, warmed and held" '^[0-9]+ level files' 
fi

solvers=(kalah)
if [ -z "${CMANCALA:-}" ]; then
  echo "CMancala: skipped (CMANCALA=/path/to/binary and CMANCALA_DIR=/dir/with/EGDB not set)" >&2
elif [ ! -x "$CMANCALA" ]; then
  echo "CMancala: skipped (CMANCALA=$CMANCALA is not an executable file)" >&2
elif [ -z "${CMANCALA_DIR:-}" ] || [ ! -d "$CMANCALA_DIR/EGDB" ]; then
  echo "CMancala: skipped (CMANCALA_DIR must name the directory holding its EGDB/)" >&2
else
  missing=
  for ((k = 1; k <= LEVELS; k++)); do
    [ -f "$CMANCALA_DIR/EGDB/egdb_$k.bin" ] || { missing=$k; break; }
  done
  if [ -n "$missing" ]; then
    echo "CMancala: skipped ($CMANCALA_DIR/EGDB/egdb_$missing.bin is missing; it would be built)" >&2
  else
    CMANCALA=$(realpath "$CMANCALA")
    solvers+=(cmancala)
    if [ "$WARM" = 1 ]; then
      # Each file mapped and read a page at a time, then held until stopped.
      python3 -c '
import mmap, signal, sys
d, top = sys.argv[1], int(sys.argv[2])
maps, total = [], 0
for k in range(1, top + 1):
    with open(f"{d}/egdb_{k}.bin", "rb") as f:
        m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    sum(m[i] for i in range(0, len(m), 4096))
    maps.append(m)
    total += len(m)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
print(f"{top} files, {total} bytes", flush=True)
signal.pause()
' "$CMANCALA_DIR/EGDB" "$LEVELS" >"$held_out" 2>/dev/null &
      hold "CMancala's EGDB 1..$LEVELS, read and held" '^[0-9]+ files' 
    fi
  fi
fi
if [ -z "${GIRVING:-}" ]; then
  echo "Irving: skipped (GIRVING=/path/to/kalah-s and GIRVING_DB=/path/to/endgame file not set)" >&2
elif [ ! -x "$GIRVING" ]; then
  echo "Irving: skipped (GIRVING=$GIRVING is not an executable file)" >&2
elif [ -z "${GIRVING_DB:-}" ] || [ ! -f "$GIRVING_DB" ]; then
  echo "Irving: skipped (GIRVING_DB must name its endgame database file)" >&2
else
  solvers+=(girving)
fi

cmancala_input() {
  printf '%s\n' "stones $SEEDS" "mode classic" "book false" "progress false" "time 0" "depth 0" \
    "solver local" "cache $CACHE_BITS" "egdb $LEVELS" "player 1 ai" "player 2 human" \
    "autoplay false" start step last quit
}

# run SOLVER: one timed run; sets out (the output) and secs (the wall time)
run() {
  local t0 t1 status=0
  t0=$EPOCHREALTIME
  case $1 in
    kalah) out=$(timeout "$TIMEOUT" "$KALAH" "${kalah_args[@]}" 2>/dev/null) || status=$? ;;
    cmancala) out=$(cd "$CMANCALA_DIR" && cmancala_input | timeout "$TIMEOUT" "$CMANCALA" 2>&1) || status=$? ;;
    girving) out=$(timeout "$TIMEOUT" "$GIRVING" -t "$CACHE_BITS" -e "$LEVELS" -E "$GIRVING_DB" s "$SEEDS" 2>&1) || status=$? ;;
  esac
  t1=$EPOCHREALTIME
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  if [ "$status" = 124 ]; then secs=timeout; elif [ "$status" != 0 ]; then secs=failed; fi
}

# parse SOLVER: value and nodes of the last run's output (empty when not found)
parse() {
  value= nodes=
  case $1 in
    kalah)
      value=$(sed -nE 's/.*"value":(-?[0-9]+).*/\1/p' <<<"$out")
      nodes=$(sed -nE 's/.*"nodes":([0-9]+).*/\1/p' <<<"$out") ;;
    cmancala) # "Evaluation: 8" (the player to move, South), "Total nodes: 12.345 million"
      value=$(tr '\r' '\n' <<<"$out" | sed -nE 's/.*Evaluation: (-?[0-9]+).*/\1/p' | tail -n1)
      nodes=$(tr '\r' '\n' <<<"$out" | sed -nE 's/.*Total nodes: ([0-9.]+) million.*/\1/p' | tail -n1)
      if [ -n "$nodes" ]; then nodes=$(awk -v n="$nodes" 'BEGIN { printf "%.0f", n * 1e6 }'); fi ;;
    girving) # "Move: s 0, m 3..., r 8, rd 200" (s 0: South to move), "Nodes searched:   N"
      value=$(sed -nE 's/^Move: s 0, m [^,]*, r (-?[0-9]+),.*/\1/p' <<<"$out" | head -n1)
      nodes=$(sed -nE 's/^Nodes searched: *([0-9]+).*/\1/p' <<<"$out" | tail -n1) ;;
  esac
}

declare -A best value_of nodes_of
for s in "${solvers[@]}"; do best[$s]=; value_of[$s]=; nodes_of[$s]=; done
for ((r = 1; r <= RUNS; r++)); do
  for s in "${solvers[@]}"; do
    run "$s"
    echo "run $r/$RUNS $s: $secs s" >&2
    if ! [[ "$secs" =~ ^[0-9.]+$ ]]; then
      if [ -z "${best[$s]}" ]; then best[$s]=$secs; fi
      continue
    fi
    parse "$s"
    value_of[$s]=$value
    nodes_of[$s]=$nodes
    if ! [[ "${best[$s]}" =~ ^[0-9.]+$ ]] || awk -v a="$secs" -v b="${best[$s]}" 'BEGIN { exit !(a < b) }'; then
      best[$s]=$secs
    fi
  done
done

name() {
  case $1 in
    kalah) echo "kalah ($("$KALAH" --version 2>/dev/null | awk '{print $2}'))" ;;
    cmancala) echo "CMancala" ;;
    girving) echo "Irving's kalah-s" ;;
  esac
}
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores;" \
  "load average before the table: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Kalah(6,$SEEDS) standard, value only, one thread, endgame levels 0..$LEVELS," \
  "best wall time of $RUNS run(s); CMancala's and Irving's table 2^$CACHE_BITS entries"
echo
echo "| solver | value | nodes | best time | ratio to kalah |"
echo "| --- | ---: | ---: | ---: | ---: |"
ref=${best[kalah]}
agree=1
for s in "${solvers[@]}"; do
  t=${best[$s]}
  ratio=-
  if [[ "$t" =~ ^[0-9.]+$ ]] && [[ "$ref" =~ ^[0-9.]+$ ]]; then
    ratio=$(awk -v a="$t" -v b="$ref" 'BEGIN { printf "%.2f", a / (b > 0 ? b : 0.001) }')
  fi
  if [[ "$t" =~ ^[0-9.]+$ ]]; then t="$t s"; elif [ "$t" = timeout ]; then t="> $TIMEOUT s"; fi
  v=${value_of[$s]:-?}
  [ "$v" = "${value_of[kalah]:-}" ] || agree=0
  echo "| $(name "$s") | $v | ${nodes_of[$s]:--} | $t | $ratio |"
done
echo
if [ "$agree" = 1 ]; then
  echo "values agree"
else
  echo "VALUES DISAGREE (or a solver gave none)"
  exit 1
fi
