#!/usr/bin/env python3
"""Times `kalah query` of database positions from a cold start: before each run the level files
of the database are dropped from the page cache (posix_fadvise DONTNEED on every file, after a
sync), so that the process opens and maps them and reads from disk every block it touches, as
the first query after a reboot does. Prints the time of each run and the median, warm (the same
query asked just before) and cold.

Usage: scripts/cold-query.py DIR [HOUSES] [RULES] [RUNS]
e.g.   scripts/cold-query.py /data/k6 6 standard 11      (after `cargo build --release`)

The positions are random boards of the database's top level and the one below it (drawn with a
fixed seed), South to move, empty stores; each run asks one of them.
"""

import glob
import os
import random
import statistics
import subprocess
import sys
import time


def drop_cache(files):
    os.sync()
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def random_position(rng, houses, seeds):
    # Seeds spread over both sides, each side at least one seed (a position of the level).
    while True:
        cut = sorted(rng.randrange(seeds + 1) for _ in range(2 * houses - 1))
        pits = [b - a for a, b in zip([0] + cut, cut + [seeds])]
        if sum(pits[:houses]) and sum(pits[houses:]):
            return "<%d,0,0,%s>" % (houses, ",".join(map(str, pits)))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    directory = sys.argv[1]
    houses = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    rules = sys.argv[3] if len(sys.argv) > 3 else "standard"
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 11
    kalah = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target", "release", "kalah")
    files = sorted(glob.glob(os.path.join(directory, "kalah-%d-%s-*.kdb" % (houses, rules))))
    if not files:
        sys.exit("no level files for %d houses, %s rules in %s" % (houses, rules, directory))
    top = len(files) - 1
    rng = random.Random(18)
    print("machine: %s, %d cores" % (cpu_name(), os.cpu_count()))
    print("%d houses, %s rules, levels 0..%d in %s" % (houses, rules, top, directory))
    for cold in (False, True):
        times = []
        for _ in range(runs):
            position = random_position(rng, houses, top - rng.randrange(2))
            command = [kalah, "query", position, "--db", directory, "--rules", rules, "--json"]
            if cold:
                drop_cache(files)
            else:
                subprocess.run(command, capture_output=True)
            start = time.perf_counter()
            out = subprocess.run(command, capture_output=True)
            took = time.perf_counter() - start
            if out.returncode != 0:
                sys.exit("%s: %s" % (position, out.stderr.decode()))
            times.append(took * 1000)
        label = "cold" if cold else "warm"
        print("%s: %s ms; median %.1f ms, worst %.1f ms" % (
            label, " ".join("%.1f" % t for t in times), statistics.median(times), max(times)))


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


if __name__ == "__main__":
    main()
