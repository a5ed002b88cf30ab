#!/usr/bin/env python3
"""The Python package's speed: Tablebase.values (the batch) in positions a second, the cost
of one Tablebase.value call above the probe itself, and beside them the cost of starting the
kalah binary once a position (`kalah query POSITION --json`, as a program without the package
would; $KALAH_BIN or target/release/kalah).

Usage: scripts/bench-python.py [--db DIR] [--houses M] [--top K] [--rows N] [--repeat R]
Needs the package installed (pip install ./python) and the levels 0..K of M houses in DIR (the
database home by default). Boards are random with 1..K seeds, mover first; the batch runs
--repeat times after one warm-up pass (the levels then sit in the page cache) and the best is
kept. Prints the machine and one line a figure.
"""

import argparse
import os
import random
import time

import numpy as np

import kalah

from machine import machine


def boards(rng, houses, top, n):
    rows = np.zeros((n, 2 * houses + 2), dtype=np.uint8)
    for i in range(n):
        seeds = rng.randint(1, top)
        pits = [0] * (2 * houses)
        for _ in range(seeds):
            pits[rng.randrange(2 * houses)] += 1
        rows[i, :houses] = pits[:houses]
        rows[i, houses + 1 : 2 * houses + 1] = pits[houses:]
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db")
    ap.add_argument("--houses", type=int, default=6)
    ap.add_argument("--top", type=int, default=24)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    tb = kalah.Tablebase(a.db)
    top = min(a.top, tb.max_level(a.houses))
    rng = random.Random(1)
    rows = boards(rng, a.houses, top, a.rows)
    print(f"machine: {machine()}; levels 0..{top} of {a.houses} houses in {tb.dir}")
    tb.values(rows)  # warm-up: the blocks read are checked once and cached
    best = min(timed(lambda: tb.values(rows)) for _ in range(a.repeat))
    print(f"values(): {a.rows:,} boards in {best:.3f} s: {a.rows / best / 1e6:.2f} M positions/s")
    # One value() a call: the Python call, the position, the probe.
    positions = []
    for r in rows[:20_000]:
        pits = [int(x) for x in r]
        m = a.houses
        if sum(pits[:m]) and sum(pits[m + 1 : 2 * m + 1]):
            positions.append(kalah.Position.from_list(pits))
    for p in positions:
        tb.value(p)
    t = min(timed(lambda: [tb.value(p) for p in positions]) for _ in range(a.repeat))
    single = t / len(positions)
    batch = best / a.rows
    print(f"value(): {single * 1e6:.2f} us a call; the batch's probe {batch * 1e6:.2f} us a board "
          f"(2 cores), so about {(single - 2 * batch) * 1e6:.2f} us above the probe")
    per = binary_per_position(tb, positions, 100)
    if per is None:
        print("the binary: not built (cargo build --release), not measured")
    else:
        print(f"the binary started once a position (kalah query --json, 100 positions): "
              f"{per * 1e3:.2f} ms a position, {per / single:,.0f} times value()")


def binary_per_position(tb, positions, count):
    """Seconds a position when each is a fresh `kalah query` process."""
    import subprocess
    from pathlib import Path

    binary = os.environ.get("KALAH_BIN") or str(Path(__file__).resolve().parent.parent / "target" / "release" / "kalah")
    if not Path(binary).exists():
        return None
    sample = positions[:count]
    t = time.perf_counter()
    for p in sample:
        subprocess.run([binary, "query", p.literal, "--json", "--db", str(tb.dir)],
                       capture_output=True, check=True)
    return (time.perf_counter() - t) / len(sample)


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
