#!/usr/bin/env bash
# Load test of `kalah serve`: throughput and p50/p99 latency of database answers
# (GET /api/v1/position) at 1, 16 and 64 concurrent keep-alive connections, measured with wrk;
# the server's memory before and after at least 100,000 more requests; a sample of answers
# checked against `kalah query`. Prints a Markdown table (or one JSON object with --json).
#
# Usage: scripts/serve-load.sh [--json]
# Needs: cargo, python3, and wrk (Debian's package: installed with apt-get when missing, as root
# or through sudo). Takes about 40 s after the release build: a database of 6 houses 0..14
# (about 1 s), a warm-up of 3 s, the memory run (5 s at 20,000 answers/s), three runs of 10 s.
# The figures in docs/serve-load.md were measured with it on a 2-core AMD EPYC, wrk and the
# server sharing both cores.
#
# Steps: build a database (HOUSES, default 6; levels 0..TOP, default 14; standard rules) in a
# temporary directory; draw POSITIONS (default 4000) distinct random positions it holds (each
# level 2..TOP alike, as in scripts/bench-db.sh; both sides holding seeds, stores 0..40, either
# side to move); start `kalah serve --db DIR --bind 127.0.0.1:0` with its access log in LOG
# (default: a file in the temporary directory; LOG=/dev/null leaves it out); warm it up (WARMUP,
# default 3s, at the most connections: every position at least once); read its RSS; send at
# least MEMORY_REQUESTS (default 100000) more (runs of 5 s) and read it again; then one wrk run
# of DURATION (default 10s) for each count of CONNECTIONS (default "1 16 64"), with
# min(WRK_THREADS, connections) threads (WRK_THREADS default 2). Requests go through the
# positions in turn, each wrk thread from its own place; the wrk script counts answers not 2xx
# or not from the database. Last, SAMPLE (default 20) answers are compared with
# `kalah query --db DIR --json` (value, best moves, every move's value, perfect line).
#
# Fails (exit 1) on any answer not 2xx or not from the database, any socket error, a wrong
# answer in the sample, or RSS growing by more than RSS_BOUND_MIB (default 10) MiB over the
# memory run. 10 MiB over 100,000 requests is 105 bytes a request, less than any answer's body
# (300 to 700 bytes): keeping one body a request fails the check, while the allocator's arenas
# and the mapped database (read in by the warm-up, which asks for the same positions) stay far
# below it (measured: under 0.5 MiB). The targets (20,000 answers/s at 64 connections, p99
# under 10 ms) are reported, not enforced: wrk shares the cores.
set -euo pipefail
cd "$(dirname "$0")/.."

json=0
for arg in "$@"; do
  case $arg in
    --json) json=1 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $arg (see --help)" >&2; exit 2 ;;
  esac
done

houses=${HOUSES:-6}
top=${TOP:-14}
positions=${POSITIONS:-4000}
warmup=${WARMUP:-3s}
duration=${DURATION:-10s}
connections=(${CONNECTIONS:-1 16 64})
wrk_threads=${WRK_THREADS:-2}
memory_requests=${MEMORY_REQUESTS:-100000}
rss_bound_mib=${RSS_BOUND_MIB:-10}
sample=${SAMPLE:-20}
say() { echo "$*" >&2; }

if ! command -v wrk >/dev/null; then
  say "wrk is missing: installing Debian's package"
  sudo=()
  if [ "$(id -u)" != 0 ]; then sudo=(sudo); fi
  if ! "${sudo[@]}" apt-get install -y wrk >&2; then
    "${sudo[@]}" apt-get update >&2
    "${sudo[@]}" apt-get install -y wrk >&2
  fi
fi

cargo build --release --quiet
kalah=target/release/kalah
tmp=$(mktemp -d /tmp/kalah-serve-load.XXXXXX)
log=${LOG:-$tmp/access.log}
server=
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

say "building the database: $houses houses, levels 0..$top"
"$kalah" db build --houses "$houses" --max-seeds "$top" --dir "$tmp/db" --json >/dev/null 2>&1

# Positions: a level drawn from 2..TOP, its seeds dropped into random houses, both sides holding
# some (the game not over), stores 0..40, either side to move; distinct literals, seeded.
python3 - "$houses" "$top" "$positions" "$tmp" <<'PY'
import random, sys
m, top, count, tmp = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rng = random.Random(1)
seen = []
found = set()
while len(seen) < count:
    houses = [0] * (2 * m)
    for _ in range(rng.randint(2, top)):
        houses[rng.randrange(2 * m)] += 1
    if not (sum(houses[:m]) and sum(houses[m:])):
        continue
    literal = f"<{m},{rng.randint(0, 40)},{rng.randint(0, 40)}," + ",".join(map(str, houses)) + ">"
    if rng.random() < 0.5:
        literal += " north"
    if literal not in found:
        found.add(literal)
        seen.append(literal)
with open(f"{tmp}/positions.txt", "w") as f:
    f.writelines(p + "\n" for p in seen)
with open(f"{tmp}/paths.txt", "w") as f:
    for p in seen:
        encoded = p.replace("<", "%3C").replace(">", "%3E").replace(" ", "%20")
        f.write(f"/api/v1/position?position={encoded}\n")
PY

# The wrk script: each thread goes through the paths from its own place. done() prints one
# JSON line: requests, requests/s, p50 and p99 in microseconds, answers not 2xx, 2xx answers
# not from the database, socket errors.
cat >"$tmp/load.lua" <<'LUA'
local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("id", #threads)
end
function init(args)
  requests = {}
  for path in io.lines(args[1]) do
    requests[#requests + 1] = wrk.format("GET", path)
  end
  next_request = ((id - 1) * 7919) % #requests
  answers, not_2xx, not_database = 0, 0, 0
end
function request()
  next_request = next_request % #requests + 1
  return requests[next_request]
end
function response(status, headers, body)
  answers = answers + 1
  if status < 200 or status > 299 then
    not_2xx = not_2xx + 1
  elseif not string.find(body, '"source":"database"', 1, true) then
    not_database = not_database + 1
  end
end
function done(summary, latency, requests)
  local bad, other = 0, 0
  for _, thread in ipairs(threads) do
    bad = bad + thread:get("not_2xx")
    other = other + thread:get("not_database")
  end
  local e = summary.errors
  io.write(string.format(
    'RESULT {"requests":%d,"seconds":%.3f,"rps":%.1f,"p50_us":%d,"p99_us":%d,' ..
    '"not_2xx":%d,"not_database":%d,"socket_errors":%d}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99), bad, other,
    e.connect + e.read + e.write + e.timeout))
end
LUA

"$kalah" serve --db "$tmp/db" --bind 127.0.0.1:0 >"$tmp/stdout" 2>"$log" &
server=$!
for _ in $(seq 100); do
  if [ -s "$tmp/stdout" ]; then break; fi
  sleep 0.1
done
first=$(head -n1 "$tmp/stdout")
port=$(echo "$first" | sed -nE 's#^listening on http://127\.0\.0\.1:([0-9]+)/.*#\1#p')
if [ -z "$port" ]; then
  say "the server did not say where it listens: ${first:-nothing on stdout}"
  exit 1
fi
url=http://127.0.0.1:$port
say "$first"

# One wrk run: CONNECTIONS DURATION; prints its RESULT object.
failed=0
run_wrk() {
  local c=$1 d=$2 t=$wrk_threads
  if [ "$c" -lt "$t" ]; then t=$c; fi
  local out
  out=$(wrk -t"$t" -c"$c" -d"$d" --timeout 5s -s "$tmp/load.lua" "$url" -- "$tmp/paths.txt")
  local result
  result=$(echo "$out" | sed -n 's/^RESULT //p')
  if [ -z "$result" ]; then
    say "wrk gave no result:"
    say "$out"
    exit 1
  fi
  echo "$result"
}
field() { sed -E "s/.*\"$1\":([^,}]*).*/\1/"; }
check() {
  local what=$1 result=$2
  local errors=0 f
  for f in not_2xx not_database socket_errors; do
    errors=$((errors + $(echo "$result" | field $f)))
  done
  if [ "$errors" -ne 0 ]; then
    say "FAIL $what: $errors answers not 2xx, not from the database, or socket errors: $result"
    failed=1
  fi
}
rss_kib() { awk -v k="$1" '$1 == k ":" {print $2}' "/proc/$server/status"; }

max_c=0
for c in "${connections[@]}"; do if [ "$c" -gt "$max_c" ]; then max_c=$c; fi; done
say "warming up: $max_c connections for $warmup"
warm=$(run_wrk "$max_c" "$warmup")
check warm-up "$warm"
if [ "$(echo "$warm" | field requests)" -lt "$positions" ]; then
  say "the warm-up did not go through every position once: raise WARMUP"
  exit 1
fi
rss_warm=$(rss_kib VmRSS) anon_warm=$(rss_kib RssAnon) file_warm=$(rss_kib RssFile)

# wrk runs for a time, not a count: runs of 5 s until MEMORY_REQUESTS have been answered.
say "memory run: $memory_requests requests at $max_c connections"
memory_done=0
while [ "$memory_done" -lt "$memory_requests" ]; do
  memory=$(run_wrk "$max_c" 5s)
  check "memory run" "$memory"
  memory_done=$((memory_done + $(echo "$memory" | field requests)))
done
rss_after=$(rss_kib VmRSS) anon_after=$(rss_kib RssAnon) file_after=$(rss_kib RssFile)

results=()
for c in "${connections[@]}"; do
  say "$c connections for $duration"
  r=$(run_wrk "$c" "$duration")
  check "$c connections" "$r"
  results+=("$c $r")
done
rss_end=$(rss_kib VmRSS)
log_bytes=$(stat -c %s "$log" 2>/dev/null || echo 0)

# The sample: the API's answers against kalah query's.
say "checking $sample answers against kalah query"
if ! python3 - "$kalah" "$tmp" "$url" "$sample" "$top" <<'PY'; then failed=1; fi
import json, subprocess, sys, urllib.parse, urllib.request
kalah, tmp, url = sys.argv[1:4]
sample, top = int(sys.argv[4]), int(sys.argv[5])
positions = open(f"{tmp}/positions.txt").read().split("\n")[:-1]
step = max(1, len(positions) // sample)
wrong = 0
for p in positions[::step][:sample]:
    query = urllib.parse.urlencode({"position": p}, quote_via=urllib.parse.quote)
    api = json.load(urllib.request.urlopen(f"{url}/api/v1/position?{query}"))
    cli = json.loads(subprocess.run([kalah, "query", "--db", f"{tmp}/db", "--json", p],
                                    check=True, capture_output=True, text=True).stdout)
    moves = lambda answer: sorted((m["house"], m["value"]) for m in answer["moves"])
    a = (api["value"], api["best"], api["pv"], moves(api), api["source"], api["db_max_seeds"],
         api["position"])
    b = (cli["value"], cli["best"], cli["pv"], moves(cli), "database", top, p)
    if a != b:
        wrong += 1
        print(f"FAIL {p}: API {a}, kalah query {b}", file=sys.stderr)
print(f"{min(sample, len(positions))} answers checked, {wrong} wrong", file=sys.stderr)
sys.exit(1 if wrong else 0)
PY

growth=$((rss_after - rss_warm))
if [ "$growth" -gt $((rss_bound_mib * 1024)) ]; then
  say "FAIL memory: RSS grew by $growth KiB over $memory_done requests (bound $rss_bound_mib MiB)"
  failed=1
fi

machine="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
machine="$machine, $(free -g | awk '/Mem:/ {print $2}') GiB"
commit=$(git rev-parse --short HEAD)
if ! git diff --quiet HEAD -- src Cargo.toml Cargo.lock; then commit="$commit+changes"; fi
if [ "$log" = /dev/null ]; then log_bytes=None; fi
wrk_version=$(wrk --version 2>&1 | awk 'NR == 1 {print $2}' || true) # exits 1
printf '%s\n' "${results[@]}" >"$tmp/runs.txt"
python3 - "$json" "$tmp/runs.txt" "$wrk_threads" <<PY
import json, sys
as_json, runs_file, wrk_threads = sys.argv[1] == "1", sys.argv[2], int(sys.argv[3])
runs = []
for line in open(runs_file):
    c, result = line.split(" ", 1)
    run = {"connections": int(c), "wrk_threads": min(int(c), wrk_threads)}
    runs.append({**run, **json.loads(result)})
at64 = next((r for r in runs if r["connections"] == 64), None)
met = at64 is not None and at64["rps"] >= 20000 and at64["p99_us"] < 10000
kib = {"warm": $rss_warm, "after": $rss_after, "end": $rss_end, "anon_warm": $anon_warm,
       "anon_after": $anon_after, "file_warm": $file_warm, "file_after": $file_after}
summary = {"machine": "$machine", "commit": "$commit", "houses": $houses, "top": $top,
           "positions": $positions, "runs": runs, "rss_kib": kib, "memory_requests": $memory_done,
           "rss_bound_mib": $rss_bound_mib, "log_bytes": $log_bytes, "target_met": met,
           "ok": $failed == 0}
if as_json:
    print(json.dumps(summary))
    sys.exit()
print(f"machine: {summary['machine']}; commit {summary['commit']}; wrk $wrk_version")
print(f"database: $houses houses, standard, levels 0..$top; $positions distinct positions")
print()
print("| connections | wrk threads | answers/s | p50 | p99 | answers | not 2xx | socket errors |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for r in runs:
    print(f"| {r['connections']} | {r['wrk_threads']} | {r['rps']:,.0f} "
          f"| {r['p50_us'] / 1000:.2f} ms | {r['p99_us'] / 1000:.2f} ms | {r['requests']:,} "
          f"| {r['not_2xx'] + r['not_database']} | {r['socket_errors']} |")
mib = lambda k: f"{kib[k] / 1024:.1f} MiB"
print()
print(f"RSS after the warm-up: {mib('warm')} (anonymous {mib('anon_warm')}, file-backed "
      f"{mib('file_warm')}: the binary and the mapped database); after {$memory_done:,} more "
      f"requests: {mib('after')} (anonymous {mib('anon_after')}, file-backed {mib('file_after')}), "
      f"growth {kib['after'] - kib['warm']} KiB (bound $rss_bound_mib MiB); "
      f"after the runs: {mib('end')}")
log = summary["log_bytes"]
print("access log: " + ("/dev/null" if log is None else f"{log:,} bytes"))
if at64 is None:
    print("target: not measured (no run at 64 connections)")
else:
    print(f"target: {'met' if met else 'missed'} (at 64 connections {at64['rps']:,.0f} answers/s, "
          f"p99 {at64['p99_us'] / 1000:.2f} ms; target at least 20,000/s with p99 under 10 ms)")
PY
if [ "$failed" != 0 ]; then
  say "FAILED"
  exit 1
fi
