#!/usr/bin/env python3
"""Checks a strong solution: that `kalah query` answers positions of Kalah(m,n) from the level
files of the database (source `database`), and that what they say agrees with a search that
reads only the levels below them.

The positions are drawn at random (seeded), not played: every distribution of the 2mn seeds of
the board over the houses and the stores, with either side to move, is a position the levels
must answer, reachable or not. Each has K seeds on the board, K drawn evenly from TOP-SPAN+1 ..
TOP (the levels the check is about; TOP = 2mn by default), the rest split at random between
the stores. They are queried in one batch (`kalah query - --json`) with the levels 0..TOP, which
must answer each from the files, and again with only the levels 0..TOP-SPAN (`--max-level`), so
that the search answers them, probing those levels; the two must agree on the value and on
every move's value. A draw that leaves a side without seeds (the game over: no position to
move in, which `query` refuses) is drawn again.

Appends one object to data/values/strong-checks.jsonl: the variant, rules, levels, positions,
their answers, the two runs' times, the command and the machine. Exits 1 at the first
disagreement or a position not answered from the files.

Usage: scripts/strong-check.py M N [--rules R] [--count C] [--span S] [--top K] [--seed X]
       (defaults: standard, 200 positions, span 2, seed 1)   KALAH=BINARY: that binary
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from machine import machine

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data/values/strong-checks.jsonl"


def position(rng, m, seeds, k):
    """A random position of `m` houses a side with `k` of its `seeds` on the board, each side
    with seeds in its houses (`k` >= 2)."""
    pits = [0] * (2 * m)
    while sum(pits[:m]) == 0 or sum(pits[m:]) == 0:
        pits = [0] * (2 * m)
        for _ in range(k):
            pits[rng.randrange(2 * m)] += 1
    south_store = rng.randint(0, seeds - k)
    north_store = seeds - k - south_store
    side = rng.choice(["south", "north"])
    literal = ",".join(str(x) for x in [m, south_store, north_store] + pits)
    return f"<{literal}> {side}"


def query(kalah, lines, rules, extra):
    args = [kalah, "query", "-", "--json", "--rules", rules, "--no-book"] + extra
    start = time.time()
    out = subprocess.run(args, input="\n".join(lines) + "\n", capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({out.returncode}): {out.stderr.strip()[-2000:]}")
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    if len(rows) != len(lines):
        sys.exit(f"{len(rows)} answers to {len(lines)} positions")
    return rows, time.time() - start


def moves(row):
    return {m["house"]: m["value"] for m in row["moves"]}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("houses", type=int)
    p.add_argument("seeds", type=int)
    p.add_argument("--rules", default="standard", choices=["standard", "empty-capture"])
    p.add_argument("--count", type=int, default=200)
    p.add_argument("--span", type=int, default=2)
    p.add_argument("--top", type=int)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    m, total = a.houses, 2 * a.houses * a.seeds
    top = total if a.top is None else a.top
    if not (1 <= a.span <= top - 2 and 1 <= a.count <= 100_000 and top <= total):
        sys.exit("need 1 <= span <= top - 2, top <= 2mn and 1 <= count <= 100000")
    kalah = os.environ.get("KALAH")
    if not kalah:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
        kalah = str(ROOT / "target/release/kalah")
    rng = random.Random(a.seed)
    lines = [position(rng, m, total, rng.randint(top - a.span + 1, top)) for _ in range(a.count)]
    files, files_s = query(kalah, lines, a.rules, ["--max-level", str(top)])
    below, below_s = query(kalah, lines, a.rules, ["--max-level", str(top - a.span)])
    for line, f, b in zip(lines, files, below):
        if f["source"] != "database":
            sys.exit(f"{line}: answered by {f['source']}, not the files")
        if (f["value"], moves(f)) != (b["value"], moves(b)):
            sys.exit(f"{line}: the files say {f['value']} {moves(f)}, the search on levels "
                     f"0..{top - a.span} {b['value']} {moves(b)}")
    row = {
        "variant": f"Kalah({m},{a.seeds})", "rules": a.rules, "levels": f"0..{top}",
        "seeds_on_board": [top - a.span + 1, top], "positions": a.count,
        "from_files": a.count, "agree": a.count, "seed": a.seed,
        "files_s": round(files_s, 2), "search_levels": f"0..{top - a.span}",
        "search_s": round(below_s, 2),
        "search_nodes": sum(b.get("nodes", 0) for b in below),
        "command": "scripts/strong-check.py " + " ".join(sys.argv[1:]), "machine": machine(),
    }
    with OUT.open("a") as out:
        out.write(json.dumps(row, separators=(",", ":")) + "\n")
    print(f"{row['variant']} {a.rules}: {a.count} positions of {top - a.span + 1}..{top} seeds "
          f"on the board, all answered from levels 0..{top} ({files_s:.1f} s) and all agree with the search on levels 0..{top - a.span} ({below_s:.1f} s)",
          file=sys.stderr)


if __name__ == "__main__":
    main()
