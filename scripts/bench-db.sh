#!/usr/bin/env bash
# Builds endgame databases from scratch and prints Markdown tables: per level (entries, time,
# entries/s) and per build (levels, entries, bytes per entry, total time), then times a fresh
# `kalah query` process on a position of the top level.
#
# Usage: scripts/bench-db.sh [TOP ...]          e.g. scripts/bench-db.sh 24 28
# Environment: HOUSES (default 6), RULES (default "standard empty-capture"), DIR (default
# /tmp/kalah-bench-db; emptied first, needs about 1.3 GB for TOP 24 and 5.6 GB for 28 per
# rule set). Each TOP resumes from the levels the previous one built, and its time is the sum
# of all its levels' times.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
kalah=target/release/kalah
houses=${HOUSES:-6}
dir=${DIR:-/tmp/kalah-bench-db}
tops=("$@")
if [ ${#tops[@]} -eq 0 ]; then tops=(24); fi
rm -rf "$dir"
mkdir -p "$dir"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB"
for rules in ${RULES:-standard empty-capture}; do
  for top in "${tops[@]}"; do
    out=$("$kalah" db build -m "$houses" --max-seeds "$top" --rules "$rules" --dir "$dir" --json 2>/dev/null)
    echo
    echo "$houses houses, $rules, levels 0..$top:"
    echo
    echo "| level | entries | time | entries/s |"
    echo "| ---: | ---: | ---: | ---: |"
    echo "$out" | python3 <(cat <<'PY'
import json, sys
d = json.load(sys.stdin)
total_ms = 0
for l in d["levels"]:
    total_ms += l["time_ms"]
    if l["entries"] >= 1000000:
        rate = l["entries"] / max(l["time_ms"], 1) / 1000
        print("| %d | %s | %.2f s | %.1f M |" % (l["level"], format(l["entries"], ","), l["time_ms"] / 1000, rate))
print()
print("total: %s entries, %.4f bytes per entry (headers included), %.1f s of level building"
      % (format(d["entries"], ","), d["bytes"] / d["entries"], total_ms / 1000))
PY
)
  done
  # A fresh process answering a position of the top level (median of 11 runs).
  position="<$houses,0,0$(for _ in $(seq "$houses"); do printf ',2'; done)$(for _ in $(seq "$houses"); do printf ',2'; done)>"
  python3 - "$kalah" "$position" "$rules" "$dir" <<'PY'
import subprocess, sys, time
kalah, position, rules, dir = sys.argv[1:]
times = []
for _ in range(11):
    t = time.perf_counter()
    subprocess.run([kalah, "query", position, "--rules", rules, "--db", dir, "--json"], check=True, capture_output=True)
    times.append(time.perf_counter() - t)
times.sort()
print(f"\nkalah query {position} --rules {rules} (fresh process): median {times[5] * 1000:.1f} ms, max {times[-1] * 1000:.1f} ms")
PY
done
