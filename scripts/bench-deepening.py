#!/usr/bin/env python3
"""How deep the iterative deepening goes before the exact search, against the nodes the solve
takes: `kalah solve --value-only --memory-db off --threads 1 --deepening D` on a few starts
searched without levels, one Markdown row a start and one column a depth.

One thread, so each count is the same on every run and every machine (a change in it is a
change in the tree); the time is printed beside it but depends on the machine and its load.
A run past --limit seconds is stopped and shown as `> LIMIT s`.

Usage: scripts/bench-deepening.py [--kalah BIN] [--depths 12,15,18,21] [--limit S]
                                  [--starts 4,5 5,4 6,3 7,2 8,2 9,2]
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from machine import machine  # noqa: E402


def solve(kalah, m, n, depth, limit):
    """(nodes, seconds) of one run, or None if it ran past `limit` seconds."""
    args = [kalah, "solve", "-m", str(m), "-n", str(n), "--value-only", "--memory-db", "off",
            "--threads", "1", "--long", "--json", "--deepening", str(depth)]
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=limit, check=True)
    except subprocess.TimeoutExpired:
        return None
    answer = json.loads(out.stdout)
    return answer["nodes"], answer["time_ms"] / 1000


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kalah", default="target/release/kalah")
    p.add_argument("--depths", default="12,15,18,21")
    p.add_argument("--limit", type=float, default=120)
    p.add_argument("--starts", nargs="+", default=["4,5", "5,4", "6,3", "7,2", "8,2", "9,2"])
    args = p.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    print(f"machine: {machine()}; one thread, no levels, value only\n")
    print("| start | " + " | ".join(f"--deepening {d}" for d in depths) + " |")
    print("| --- |" + " ---: |" * len(depths))
    for start in args.starts:
        m, n = (int(x) for x in start.split(","))
        cells = []
        for d in depths:
            r = solve(args.kalah, m, n, d, args.limit)
            cells.append(f"> {args.limit:g} s" if r is None else f"{r[0]:,} ({r[1]:.1f} s)")
        print(f"| Kalah({m},{n}) | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
