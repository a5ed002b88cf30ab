#!/usr/bin/env python3
"""Values the starts of data/values/big-starts.jsonl under the Manchester ManKalah rules and
writes them to data/values/mankalah-starts.jsonl, one object a cell and way.

ManKalah is standard Kalah but for two rules of its start (RULES.md): South's first sowing never
earns an extra turn, and North may answer it with SWAP (the pie rule), taking over South's side
and leaving the first player to move from North's. So each first sowing h leaves North to move
in a position worth w_h to North. North then moves (worth w_h to it) or swaps (the first player
moves in the same position from the other side: worth -w_h to the swapper), whichever is more,
|w_h|. The first player's value is therefore -min_h |w_h| with the pie rule, at most 0, and
max_h -w_h without it (the first sowing alone).

A first sowing that does not end in South's store passes the turn under Kalah too, so its w_h is
minus that first move's value in the start's solve (its `moves`). The one that ends in the store
(house m-n+1 when n <= m) would earn an extra turn under Kalah; under ManKalah the turn passes,
so that position is valued afresh by `kalah analyze POSITION --to-move north`, with the same
levels and threads as the start's run (each of the two ways of big-starts.jsonl again). The
sowing is done here from the rules' text (RULES.md), not by the project's engine, and checked:
every first sowing that passes the turn must give the value of the start's solve (the script
values those too when --check-passing is given).

A start solved for its value and optimal moves only (`MOVES=best` in big-values.sh) bounds its
other first moves, and so North's value w after those sowings. The rules need less than each w:
only where |w| stands against the least |w| of the other sowings (the pie rule), and -w against
the best of them (without it). So a bounded w is narrowed by `kalah analyze POSITION --to-move
north --at-least T` (one null-window test each, with the start's levels and threads) until its
bounds settle both, and is written with them (`north_value` null, `north_lower`,
`north_upper`, and its `tests`) when they do before it is exact.

A cell proven by a campaign (Kalah(7,4), (8,3): its rows name their `ledger`) has no solve to run
again. With `--max-level K` it is valued on the levels 0..K of the database home (way
`files-0..K`, its `start_way` the campaign's row whose bounds it starts from); run it with two
values of K for the two ways. Without it, such a cell is left out.

Usage: scripts/mankalah-values.py [--check-passing] [--way WAY] [--max-level K] [VARIANT ...]
e.g. 7,1 8,2. Default: every standard cell of big-starts.jsonl, each way (`--way search-only`:
that one). Each row replaces its old row (same cell and way) as soon as it is done; the others
are kept.
KALAH=BINARY runs that binary instead of building one.

Every answer of kalah is kept, as it comes, in a cache (MANKALAH_CACHE, default
~/.cache/kalah/mankalah-answers.jsonl: the command and its JSON answer a line), so that a run
stopped at any point and started again asks nothing twice; the rows it writes are the same.
"""

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from machine import machine

ROOT = Path(__file__).resolve().parent.parent
STARTS = ROOT / "data/values/big-starts.jsonl"
OUT = ROOT / "data/values/mankalah-starts.jsonl"


def first_sowing(m, n, house):
    """The pits after South sows `house` (1..m) from the start of Kalah(m,n), standard rules:
    [s_1..s_m, South store, n_1..n_m, North store], and whether the last seed fell in South's
    store."""
    pits = [n] * m + [0] + [n] * m + [0]
    i = house - 1
    seeds, pits[i] = pits[i], 0
    while seeds:
        i = (i + 1) % (2 * m + 2)
        if i == 2 * m + 1:  # North's store is skipped
            continue
        pits[i] += 1
        seeds -= 1
    if i < m and pits[i] == 1 and pits[2 * m - i] > 0:  # standard capture
        pits[m] += 1 + pits[2 * m - i]
        pits[i] = pits[2 * m - i] = 0
    return pits, i == m


def literal(m, pits):
    south, north = pits[:m], pits[m + 1 : 2 * m + 1]
    return "<" + ",".join(str(x) for x in [m, pits[m], pits[2 * m + 1]] + south + north) + ">"


def level_args(command):
    """The options of a start's run that choose its levels and threads."""
    words = shlex.split(command)
    keep = []
    for i, w in enumerate(words):
        if w in ("--memory-db", "--threads", "--max-level", "--db"):
            keep += [w, words[i + 1]]
        elif w == "--no-db":
            keep.append(w)
    return keep


CACHE = Path(os.environ.get("MANKALAH_CACHE",
                            Path.home() / ".cache/kalah/mankalah-answers.jsonl"))


def cached():
    """The answers kept by earlier runs: command -> JSON answer."""
    if not CACHE.exists():
        return {}
    answers = {}
    for line in CACHE.read_text().splitlines():
        try:
            kept = json.loads(line)
            answers[kept["command"]] = kept["answer"]
        except (ValueError, KeyError):
            continue  # a line cut short by a stop: asked again
    return answers


ANSWERS = None


def analyze(kalah, position, extra, ask=("--value-only",)):
    """North's value in `position` (`ask`: `--value-only`), or what `ask` asks of it: kalah's
    JSON answer (from the cache if an earlier run had it), the command, and the seconds."""
    global ANSWERS
    if ANSWERS is None:
        ANSWERS = cached()
    args = ["analyze", position, "--to-move", "north", "--rules", "standard", *ask, "--json",
            "--long"] + extra
    command = "kalah " + " ".join(shlex.quote(a) for a in args)
    if command in ANSWERS:
        return ANSWERS[command], command, 0.0
    start = time.time()
    out = subprocess.run([kalah] + args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"kalah {' '.join(args)} failed: {out.stderr.strip()}")
    row = json.loads(out.stdout)
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    with CACHE.open("a") as f:
        f.write(json.dumps({"command": command, "answer": row}, separators=(",", ":")) + "\n")
    ANSWERS[command] = row
    return row, command, time.time() - start


def next_test(lo, hi, least, best):
    """The next value to test North's w in [lo, hi] at (`--at-least`), or None once [lo, hi]
    settles where |w| stands against `least`, the least |w| of the other sowings (the pie rule),
    and -w against `best`, the best -w of the others (without it), ties included. A w that may
    reach either (|w| <= least, or -w >= best) is the new best or ties it, and is made exact."""
    if lo == hi:
        return None
    if not (lo > least or hi < -least):
        if hi > least:
            return least + 1  # past the least |w| from above?
        if lo < -least:
            return -least  # else past it from below?
        return middle(lo, hi)
    if not lo > -best:
        if hi > -best:
            return -best + 1  # worse for South than the best without the pie rule?
        return middle(lo, hi)
    return None


def middle(lo, hi):
    """A test that halves [lo, hi] (lo < hi): `--at-least` the middle, rounded up."""
    return (lo + hi + 1) // 2


def settle(kalah, pos, lo, hi, least, best, extra, label):
    """North's w in `pos`, known in [lo, hi], narrowed by tests until `next_test` has none:
    (lo, hi, the tests)."""
    tests = []
    while (t := next_test(lo, hi, least, best)) is not None:
        got, cmd, secs = analyze(kalah, pos, extra, ("--at-least", str(t)))
        if got["holds"]:
            lo = max(lo, got["lower"])
        else:
            hi = min(hi, got["upper"])
        if lo > hi:
            sys.exit(f"{label}: a test gives bounds that do not meet the start's: {cmd}")
        tests.append({"at_least": t, "holds": got["holds"], "lower": got["lower"],
                      "upper": got["upper"], "command": cmd, "nodes": got["nodes"],
                      "time_ms": got["time_ms"]})
        print(f"{label}: North >= {t}? {'yes' if got['holds'] else 'no'}: [{lo}, {hi}] "
              f"({got['nodes']} nodes, {secs:.1f} s)", file=sys.stderr)
    return lo, hi, tests


def option(args, name, what):
    """The value of option `name` in `args` (both words taken out of them), or None."""
    if name not in args:
        return None
    i = args.index(name)
    if i + 1 >= len(args):
        sys.exit(f"{name} needs {what}")
    value = args.pop(i + 1)
    args.pop(i)
    return value


def main():
    args = sys.argv[1:]
    check_passing = "--check-passing" in args
    way = option(args, "--way", "a way, e.g. search-only")
    max_level = option(args, "--max-level", "a level, e.g. 26")
    if max_level is not None and not (max_level.isdigit() and 0 < int(max_level) <= 64):
        sys.exit(f"--max-level {max_level}: a level from 1 to 64")
    wanted = {f"Kalah({a})" for a in args if not a.startswith("--")}
    kalah = os.environ.get("KALAH")
    if not kalah:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
        kalah = str(ROOT / "target/release/kalah")
    starts = [json.loads(l) for l in STARTS.read_text().splitlines() if l.strip()]
    starts = [r for r in starts if r["rules"] == "standard" and (not wanted or r["variant"] in wanted)]
    # Each job: a start's run, the way it is valued here, and the options of its levels.
    jobs = [(r, r["way"], level_args(r["command"])) for r in starts if "ledger" not in r]
    # A campaign's cell (scripts/big-values-ledger.py) has no solve to run again: it is valued
    # once on the levels 0..K on disk (--max-level K), from the bounds of its first run.
    campaigns = {}
    for r in starts:
        if "ledger" in r:
            campaigns.setdefault(r["variant"], r)
    for variant, r in campaigns.items():
        if max_level is None:
            print(f"{variant}: proven by a campaign ({r['ledger']}); --max-level K values it on "
                  f"the levels 0..K on disk", file=sys.stderr)
        else:
            jobs.append((r, f"files-0..{max_level}", ["--max-level", max_level]))
    jobs = [j for j in jobs if way is None or j[1] == way]
    for start, way_here, extra in jobs:
        m, n = start["houses"], start["seeds"]
        sowings = []
        bounded = []
        for mv in start["moves"]:
            h = mv["house"]
            pits, in_store = first_sowing(m, n, h)
            pos = literal(m, pits)
            entry = {"house": h, "position": pos, "kalah_extra_turn": in_store}
            if in_store or (check_passing and mv["value"] is not None):
                got, cmd, secs = analyze(kalah, pos, extra)
                entry.update(north_value=got["value"], command=cmd, nodes=got["nodes"],
                             time_ms=got["time_ms"])
                if not in_store and got["value"] != -mv["value"]:
                    sys.exit(f"{start['variant']} ({way_here}), house {h}: North's value "
                             f"{got['value']} after the sowing, but the start's solve says the "
                             f"move is worth {mv['value']}")
                print(f"{start['variant']} {way_here} house {h}: {pos} north {got['value']} "
                      f"({got['nodes']} nodes, {secs:.1f} s)", file=sys.stderr)
            elif mv["value"] is None:
                # Bounded by the start's solve: settled below, against the exact ones.
                entry.update(north_value=None, north_lower=-mv["upper"],
                             north_upper=-mv["lower"])
                bounded.append(entry)
            else:
                entry["north_value"] = -mv["value"]
            sowings.append(entry)
        for entry in bounded:
            exact = [s["north_value"] for s in sowings if s["north_value"] is not None]
            label = f"{start['variant']} {way_here} house {entry['house']}"
            lo, hi, tests = settle(kalah, entry["position"], entry["north_lower"],
                                   entry["north_upper"], min(abs(w) for w in exact),
                                   max(-w for w in exact), extra, label)
            entry.update(north_lower=lo, north_upper=hi, tests=tests)
            if lo == hi:
                entry["north_value"] = lo
                del entry["north_lower"], entry["north_upper"]
        # What stayed bounded is past the others on both counts (settle), so the values and the
        # best sowings are the exact ones'.
        exact = [s for s in sowings if s["north_value"] is not None]
        pie = -min(abs(s["north_value"]) for s in exact)
        no_pie = max(-s["north_value"] for s in exact)
        row = {
            "variant": start["variant"], "houses": m, "seeds": n, "rule_set": "mankalah",
            "capture": "standard", "way": way_here,
            # The run whose first moves' values and bounds these start from, if another way.
            **({"start_way": start["way"]} if way_here != start["way"] else {}),
            "value_pie": pie,
            "best_pie": [s["house"] for s in exact if -abs(s["north_value"]) == pie],
            "value_no_pie": no_pie,
            "best_no_pie": [s["house"] for s in exact if -s["north_value"] == no_pie],
            "first_sowings": sowings, "start_command": start["command"], "machine": machine(),
        }
        print(f"{start['variant']} {way_here}: pie {pie}, no pie {no_pie}", file=sys.stderr)
        write(row)


def write(row):
    """Writes `row` into OUT in place of its old row (same cell and way), whole (a temporary
    file renamed), the rows in order."""
    old = [json.loads(l) for l in OUT.read_text().splitlines() if l.strip()] if OUT.exists() else []
    kept = [r for r in old if (r["variant"], r["way"]) != (row["variant"], row["way"])]
    order = lambda r: (r["houses"], r["seeds"], r["way"])
    tmp = OUT.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n"
                           for r in sorted(kept + [row], key=order)))
    tmp.replace(OUT)
    print(f"wrote {OUT.relative_to(ROOT)} ({len(kept) + 1} rows)", file=sys.stderr)

if __name__ == "__main__":
    main()
