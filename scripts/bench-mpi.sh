#!/usr/bin/env bash
# The MPI build against the single build, on this machine (docs/cluster.md, "Measured here"):
#
#     cargo build --release --features mpi
#     scripts/bench-mpi.sh [HOUSES] [MAX_SEEDS] [WORK_DIR]      (default: 6 24 /tmp/kalah-bench-mpi)
#
# 1. `kalah db build` of the levels 0..MAX_SEEDS into WORK_DIR/single, timed;
# 2. `mpirun -np 2` and `mpirun -np 3` (--oversubscribe) of the same build with --mpi, each
#    into its own directory, timed, and compared file for file with the single build;
# 3. a `mpirun -np 2` build killed (SIGKILL to mpirun) once a pair file of the top level is on
#    disk, run again with the same command, and compared.
# Prints one line a run: its wall time, the ratio to the single build, and whether the files
# are byte-identical. Needs about 4 times the levels' size on disk (0.80 GB for 6 houses up to
# 24); the directories are removed at the end. Run it on an otherwise idle machine.
set -euo pipefail
HOUSES=${1:-6}
TOP=${2:-24}
WORK=${3:-/tmp/kalah-bench-mpi}
KALAH=${KALAH:-target/release/kalah}
[[ "$HOUSES" =~ ^[1-8]$ ]] || { echo "HOUSES: 1 to 8" >&2; exit 2; }
[[ "$TOP" =~ ^[0-9]+$ ]] && [ "$TOP" -le 40 ] || { echo "MAX_SEEDS: 0 to 40" >&2; exit 2; }
"$KALAH" db build --help | grep -q -- "--mpi" || { echo "build kalah with --features mpi" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN=(mpirun --oversubscribe --bind-to none --mca btl self,vader)
BUILD=(db build --yes --houses "$HOUSES" --max-seeds "$TOP")
rm -rf "$WORK"
mkdir -p "$WORK"
echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"

seconds() { date +%s.%N; }
same() { # the level files of two directories, byte for byte
  local a b
  for a in "$1"/kalah-*.kdb; do
    b="$2/$(basename "$a")"
    cmp -s "$a" "$b" || { echo "differ: $b"; return; }
  done
  [ "$(ls "$1"/kalah-* | wc -l)" -eq "$(ls "$2"/kalah-* | wc -l)" ] || { echo "other files"; return; }
  echo "byte-identical"
}

start=$(seconds)
"$KALAH" "${BUILD[@]}" --dir "$WORK/single" > /dev/null 2>&1
single=$(awk "BEGIN { print $(seconds) - $start }")
printf 'single build:      %7.1f s\n' "$single"

for np in 2 3; do
  start=$(seconds)
  "${MPIRUN[@]}" -np "$np" "$KALAH" "${BUILD[@]}" --dir "$WORK/np$np" --mpi < /dev/null > /dev/null 2>&1
  t=$(awk "BEGIN { print $(seconds) - $start }")
  printf 'mpirun -np %d:      %7.1f s  %.2fx  %s\n' "$np" "$t" "$(awk "BEGIN { print $t / $single }")" \
    "$(same "$WORK/single" "$WORK/np$np")"
  rm -rf "${WORK:?}/np$np"
done

# Killed once a pair file of the top level is there, then run again.
pattern=$(printf 'kalah-%d-standard-%03d.kdb.tables-' "$HOUSES" "$TOP")
"${MPIRUN[@]}" -np 2 "$KALAH" "${BUILD[@]}" --dir "$WORK/killed" --mpi < /dev/null > /dev/null 2>&1 &
job=$!
until ls "$WORK/killed" 2>/dev/null | grep -v '\.tmp$' | grep -q "^$pattern"; do
  kill -0 "$job" 2>/dev/null || { echo "the job ended before it could be killed" >&2; exit 1; }
  sleep 0.05
done
kill -KILL "$job"
wait "$job" 2>/dev/null || true
pairs=$(ls "$WORK/killed" | grep -v '\.tmp$' | grep -c "^$pattern" || true)
# The killed ranks let go of the build lock within about a second.
for _ in $(seq 50); do
  status=0
  "${MPIRUN[@]}" -np 2 "$KALAH" "${BUILD[@]}" --dir "$WORK/killed" --mpi < /dev/null > /dev/null 2>&1 || status=$?
  [ "$status" -eq 2 ] || break
  sleep 0.2
done
[ "$status" -eq 0 ] || { echo "the resumed build failed ($status)" >&2; exit 1; }
echo "killed in level $TOP with $pairs pair files on disk, resumed: $(same "$WORK/single" "$WORK/killed")"
rm -rf "$WORK"
