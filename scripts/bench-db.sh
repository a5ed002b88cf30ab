#!/usr/bin/env bash
# Builds endgame databases from scratch and prints Markdown tables: per level (entries, time,
# entries/s) and per build (levels, entries, bytes per entry, total time), then times a fresh
# `kalah query` process on a position of the top level, and one `kalah query -` answering
# 10 000 random positions of the levels built.
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
  # 10 000 random positions of the levels 2..TOP (seeded), answered by one `kalah query -`.
  python3 - "$kalah" "$houses" "${tops[-1]}" "$rules" "$dir" <<'PY'
import random, subprocess, sys, time
kalah, m, top, rules, dir = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
rng = random.Random(1)
lines = []
while len(lines) < 10000:
    houses = [0] * (2 * m)
    for _ in range(rng.randint(2, top)):
        houses[rng.randrange(2 * m)] += 1
    if sum(houses[:m]) and sum(houses[m:]):
        lines.append(f"<{m},0,0," + ",".join(map(str, houses)) + ">")
text = "\n".join(lines) + "\n"
best = None
for _ in range(3):
    t = time.perf_counter()
    out = subprocess.run([kalah, "query", "-", "--rules", rules, "--db", dir, "--json"],
                         input=text, text=True, check=True, capture_output=True).stdout
    best = min(best or 1e9, time.perf_counter() - t)
assert out.count('"source":"database"') == len(lines)
print(f"kalah query - (10 000 random positions of levels 2..{top}, one process, best of 3): "
      f"{best:.2f} s, {best / len(lines) * 1e6:.0f} us a position")
PY
done
