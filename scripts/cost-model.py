#!/usr/bin/env python3
"""The cost model of docs/cluster.md: the size of every 6-house level up to 40 seeds, and the
time, memory and disk to build the levels on N machines with `kalah db build --mpi`.

    python3 scripts/cost-model.py [--houses 6] [--top 40] [--nodes 4] [--cores 32]
        [--rate 7.5e6] [--fs 1e9] [--json]

Sizes are exact (the index and the file format of docs/formats.md). Times are a model, with
its assumptions as options:

- --rate: entries a second that one core builds once the levels below are out of the
  caches but in memory. 7.5 M is what 2 cores of the AMD EPYC gave on the 6-house levels 28
  to 32 (docs/performance.md); the model scales it linearly with cores, which a real
  machine's memory may not.
- A level's time on N ranks is the share of its most loaded rank (the pairs of tables dealt
  as kalah deals them: largest first, to the least loaded rank) over that rank's cores, plus
  rank 0 writing the level: reading every pair file and writing the level file at --fs bytes
  a second of the shared file system.
- Each node must hold its largest pair of tables (one byte an entry) and should hold the
  levels below in its page cache: a build reads about six entries of the levels below, at
  random, for every entry it makes.

Standard library only.
"""

import argparse
import json
from math import comb

BLOCK_ENTRIES = 2048
HEADER = 64


def sides(m, s):
    """Ways to put s seeds in m houses."""
    return comb(s + m - 1, m - 1)


def level_len(m, k):
    return 0 if k == 0 else comb(k + 2 * m - 1, 2 * m - 1) - 2 * sides(m, k)


def width(k):
    return max(1, k.bit_length())


def file_len(m, k):
    n = level_len(m, k)
    payload = (n * width(k) + 7) // 8
    blocks = (n + BLOCK_ENTRIES - 1) // BLOCK_ENTRIES
    return HEADER + (payload + 7) // 8 * 8 + 8 * blocks


def pairs(m, k):
    """Entries of each pair of tables {a, k - a} of level k, a = 1..k/2."""
    return [sides(m, a) * sides(m, k - a) * (1 if 2 * a == k else 2) for a in range(1, k // 2 + 1)]


def most_loaded(m, k, ranks):
    """Entries of the most loaded rank's share, dealt as core/src/db/distributed.rs deals them."""
    load = [0] * ranks
    for size in sorted(pairs(m, k), reverse=True):
        load[load.index(min(load))] += size
    return max(load)


def model(args):
    rows = []
    below = 0
    for k in range(args.top + 1):
        n = level_len(args.houses, k)
        size = file_len(args.houses, k)
        share = most_loaded(args.houses, k, args.nodes) if k >= 2 else 0
        build = share / (args.cores * args.rate)
        write = (n + size) / args.fs
        rows.append(
            {
                "level": k,
                "entries": n,
                "bytes": size,
                "levels_below_bytes": below,
                "largest_pair": max(pairs(args.houses, k), default=0),
                "largest_share": share,
                "build_s": build,
                "write_s": write,
                "cpu_hours": n / args.rate / 3600,
            }
        )
        below += size
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--houses", type=int, default=6, choices=range(1, 9))
    parser.add_argument("--top", type=int, default=40, choices=range(0, 65))
    parser.add_argument("--nodes", type=int, default=4, choices=range(1, 100001))
    parser.add_argument("--cores", type=int, default=32, choices=range(1, 1025))
    parser.add_argument("--rate", type=float, default=7.5e6)
    parser.add_argument("--fs", type=float, default=1e9)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not (1e3 <= args.rate <= 1e12 and 1e6 <= args.fs <= 1e13):
        parser.error("--rate must be 1e3 to 1e12 and --fs 1e6 to 1e13")
    rows = model(args)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(
        f"{args.houses} houses, {args.nodes} nodes x {args.cores} cores, "
        f"{args.rate / 1e6:g} M entries/s a core, {args.fs / 1e9:g} GB/s shared file system"
    )
    print("level   entries(G)  file(GB)  below(GB)  largest pair(GB)  share(G)  build(min)  write(min)  CPU-h")
    total = [0.0, 0.0, 0.0]
    for r in rows:
        total[0] += r["build_s"] + r["write_s"]
        total[1] += r["cpu_hours"]
        total[2] += r["bytes"]
        if r["level"] < 24:
            continue
        print(
            f"{r['level']:5}  {r['entries'] / 1e9:11.2f}  {r['bytes'] / 1e9:8.2f}  "
            f"{r['levels_below_bytes'] / 1e9:9.1f}  {r['largest_pair'] / 1e9:16.2f}  "
            f"{r['largest_share'] / 1e9:8.2f}  {r['build_s'] / 60:10.1f}  "
            f"{r['write_s'] / 60:10.1f}  {r['cpu_hours']:5.1f}"
        )
    print(
        f"levels 0..{args.top}: {total[2] / 1e9:.1f} GB on disk, {total[1]:.1f} CPU-hours, "
        f"{total[0] / 3600:.2f} hours of wall time on {args.nodes} nodes"
    )


if __name__ == "__main__":
    main()
