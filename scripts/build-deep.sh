#!/usr/bin/env bash
# Builds the 6-house levels up to TOP (default 32) for one rule set on one machine, resumably,
# and reports what the build cost: time and rate per level, peak memory of the process, and the
# machine's memory in use and in the page cache every 30 s (from `free`), so that the order of
# work and the page-cache behaviour of a deep build can be read off.
#
# Usage: scripts/build-deep.sh DIR [TOP] [RULES]     e.g. scripts/build-deep.sh /data/k6 32
#
# Resuming: run the same command again. Every finished level is a complete file (written to a
# temporary file and renamed), so a build stopped by Ctrl-C, a kill or a power cut resumes at
# the first level that is not there; the levels kept are checked block by block first.
#
# Needs (6 houses, levels 0..32): 14.2 GB of disk, and memory for the level being built (one
# byte an entry while it is built: 5.75 GB for level 32) beside the levels below it in the page
# cache (9.6 GB for 0..31): about 16 GB, which a 24 GiB machine has. See docs/commands.md
# ("Deep levels on one machine") and docs/performance.md ("Packed levels").
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/build-deep.sh DIR [TOP] [RULES]}
top=${2:-32}
rules=${3:-standard}
cargo build --release --quiet
kalah=$PWD/target/release/kalah
mkdir -p "$dir"
log="$dir/build-deep-$rules-$top.log"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB" | tee -a "$log"
# Memory in use and page cache, every 30 s, while the build runs.
(while true; do
   free -m | awk -v t="$(date +%T)" '/Mem:/ {printf "%s memory: %d MiB in use, %d MiB page cache\n", t, $3, $6}'
   sleep 30
 done) >> "$log" &
sampler=$!
trap 'kill $sampler 2>/dev/null' EXIT
start=$(date +%s)
/usr/bin/time -f "peak memory of the build: %M KB, %e s" \
  "$kalah" db build -m 6 --max-seeds "$top" --rules "$rules" --dir "$dir" --yes --json \
  > "$dir/build-deep-$rules-$top.json" 2>> "$log"
echo "wall time: $(( $(date +%s) - start )) s" | tee -a "$log"
python3 - "$dir/build-deep-$rules-$top.json" <<'PY' | tee -a "$log"
import json, sys
d = json.load(open(sys.argv[1]))
print("| level | entries | bytes | time | entries/s |")
print("| ---: | ---: | ---: | ---: | ---: |")
for l in d["levels"]:
    if l["entries"] >= 10_000_000:
        kept = " (kept)" if l["kept"] else ""
        rate = l["entries"] / max(l["time_ms"], 1) / 1000
        print("| %d | %s | %s | %.1f s%s | %.1f M |" % (l["level"], format(l["entries"], ","),
              format(l["bytes"], ","), l["time_ms"] / 1000, kept, rate))
print("total: %s entries, %s bytes (%.4f bytes an entry), %.0f s of level building"
      % (format(d["entries"], ","), format(d["bytes"], ","), d["bytes"] / d["entries"],
         sum(l["time_ms"] for l in d["levels"]) / 1000))
PY
grep -E "memory:|peak" "$log" | tail -n 40
