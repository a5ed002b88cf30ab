#!/usr/bin/env python3
"""The search benchmark: exact solves on equal levels, one thread, nodes and speed apart.

Runs a fixed suite and prints one Markdown row a solve and a total:
- the starts of standard Kalah(6,4) (levels 0..24 and 0..32) and Kalah(6,5) (levels 0..32),
  value only (`kalah solve --value-only`);
- subtrees of standard Kalah(6,6) from data/kalah66-subtrees.json (the positions sampled by
  scripts/kalah66-subtrees.py), each solved with `kalah analyze` (the value of every move),
  on the levels 0..K they were measured with.

A row whose levels the database does not hold is skipped and said so. Each solve runs --repeat
times (default 3) and keeps its fastest time: the node count is the same every time (one
thread), so a change in it is a change in the tree, and a change in nodes a second with the
same count is a change in speed.

Usage: scripts/bench-search.py [--kalah BIN] [--db DIR] [--repeat R] [--threads T]
                               [--suite starts|subtrees|all] [--json FILE] [--no-warm]
--db defaults to the database home. --threads 2 also runs the starts on two threads (the
Kalah(6,5) target is on 2 threads). The levels used are first read into the page cache in
2 MiB pages (`kalah db warm`), as `db build` leaves them, and held mapped while the suite runs
(`db warm --hold`): this machine pages out cached pages that no process maps after a minute
unused, so the levels of the rows not running would otherwise break up between runs. --no-warm
measures them as the cache holds them (after hours of reclaim, partly in 4 KiB pieces: 15-20%
slower on this machine), or as a holder started by hand keeps them. It warns when another
holder or a campaign (`kalah prove`, even stopped) is running: either can push the levels being
measured out of the page cache.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from levels import hold, home
from machine import machine

ROOT = Path(__file__).resolve().parent.parent

# Subtrees: records of data/kalah66-subtrees.json solved on these levels with 1e6 to 7e6
# nodes when measured (0.5 to 4 s each): 23 positions, about a minute a pass.
SUBTREE_LEVELS = (24, 28, 32)
SUBTREE_MIN_NODES = 1_000_000
SUBTREE_MAX_NODES = 7_000_000


def levels_present(db, houses, rules="standard"):
    """The highest K such that the levels 0..K are all in `db`."""
    top = -1
    while (Path(db) / f"kalah-{houses}-{rules}-{top + 1:03}.kdb").exists():
        top += 1
    return top


def run(cmd):
    started = time.monotonic()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    wall = time.monotonic() - started
    return json.loads(out), wall


def suite(args):
    rows = []
    # The subtrees are searched, never read from a book; builds from before the books have
    # no --no-book (and read none).
    helped = subprocess.run([args.kalah, "analyze", "--help"], capture_output=True, text=True)
    no_book = ["--no-book"] if "--no-book" in helped.stdout else []
    # The starts too: solve reads the shipped books and ledgers since it has --no-book.
    helped = subprocess.run([args.kalah, "solve", "--help"], capture_output=True, text=True)
    solve_no_book = ["--no-book"] if "--no-book" in helped.stdout else []
    if args.suite in ("starts", "all"):
        # Kalah(6,5) on the levels 0..24 would take ten minutes: it runs on 0..32 only.
        for seeds, k in ((4, 24), (4, 32), (5, 32)):
            for threads in sorted({1, args.threads}):
                rows.append(
                    {
                        "name": f"Kalah(6,{seeds}) start",
                        "k": k,
                        "threads": threads,
                        "cmd": ["solve", "-m", "6", "-n", str(seeds), "--value-only",
                                *solve_no_book],
                    }
                )
    if args.suite in ("subtrees", "all"):
        data = json.load(open(ROOT / "data" / "kalah66-subtrees.json"))
        seen = set()
        for r in data["records"]:
            if (
                r.get("command") != "analyze"
                or r.get("timed_out")
                or r["max_level"] not in SUBTREE_LEVELS
                or not SUBTREE_MIN_NODES <= r.get("nodes", 0) <= SUBTREE_MAX_NODES
                or (r["position"], r["max_level"]) in seen
            ):
                continue
            seen.add((r["position"], r["max_level"]))
            rows.append(
                {
                    "name": r["position"],
                    "k": r["max_level"],
                    "threads": 1,
                    "cmd": ["analyze", r["position"], *no_book],
                }
            )
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--kalah", default=str(ROOT / "target" / "release" / "kalah"))
    p.add_argument("--db", default=None, help="database directory (default: the home)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads", type=int, default=1, choices=range(1, 65), metavar="T")
    p.add_argument("--suite", default="all", choices=["starts", "subtrees", "all"])
    p.add_argument("--json", default=None, help="also write the rows to this file")
    p.add_argument(
        "--no-warm", action="store_true", help="neither warm nor hold the levels (`kalah db warm`)"
    )
    args = p.parse_args()
    if not 1 <= args.repeat <= 100:
        p.error("--repeat: 1 to 100")
    if not os.access(args.kalah, os.X_OK):
        p.error(f"--kalah {args.kalah}: not an executable")
    db = args.db or home()
    top = levels_present(db, 6)
    rows = suite(args)
    holder = None
    if not args.no_warm and top >= 0:
        used = max([r["k"] for r in rows if r["k"] <= top], default=top)
        holder, said = hold(args.kalah, db, used, "bench-search")
        print(
            f"warmed and held: levels 0..{used}, {said['bytes']} bytes in {said['seconds']} s",
            file=sys.stderr,
        )
    try:
        measure(args, db, top, rows)
    finally:
        if holder is not None:
            holder.terminate()
            holder.wait()


def measure(args, db, top, rows):
    """Runs `rows` and prints the table (and --json)."""
    print(f"machine: {machine()}; database {db}: levels 0..{top}")
    print()
    print("| solve | levels | threads | value | nodes | best time | nodes/s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    done = []
    skipped = 0
    for row in rows:
        if row["k"] > top:
            skipped += 1
            continue
        cmd = [args.kalah, *row["cmd"], "--db", db, "--max-level", str(row["k"])]
        cmd += ["--threads", str(row["threads"]), "--json"]
        best = None
        nodes = set()
        for _ in range(args.repeat):
            out, _wall = run(cmd)
            ms = out["time_ms"]
            nodes.add(out["nodes"])
            best = ms if best is None else min(best, ms)
        value = out["value"]
        n = max(nodes)
        rate = n / max(best, 1) / 1000
        spread = "" if len(nodes) == 1 else f" (counts {min(nodes)}..{max(nodes)})"
        print(
            f"| {row['name']} | 0..{row['k']} | {row['threads']} | {value:+} | {n}{spread} "
            f"| {best / 1000:.2f} s | {rate:.2f} M |"
        )
        done.append({**row, "value": value, "nodes": n, "best_ms": best})
        sys.stdout.flush()
    ones = [r for r in done if r["threads"] == 1]
    subtrees = [r for r in ones if r["cmd"][0] == "analyze"]
    for label, group in (
        ("starts", [r for r in ones if r["cmd"][0] == "solve"]),
        ("subtrees", subtrees),
        ("subtrees on 0..24 and 0..28", [r for r in subtrees if r["k"] < 32]),
        ("subtrees on 0..32", [r for r in subtrees if r["k"] == 32]),
    ):
        if group:
            nodes = sum(r["nodes"] for r in group)
            ms = sum(r["best_ms"] for r in group)
            print(
                f"| **{label}, one thread: {len(group)} solves** | | 1 | | {nodes} "
                f"| {ms / 1000:.2f} s | {nodes / max(ms, 1) / 1000:.2f} M |"
            )
    if skipped:
        print(f"\n{skipped} solves skipped: their levels are not in {db}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine(), "db": db, "rows": done}, f, indent=1)


if __name__ == "__main__":
    main()
