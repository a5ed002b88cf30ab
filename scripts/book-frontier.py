#!/usr/bin/env python3
"""How long the search takes at each depth below a start: what an opening book must cover.

For each depth asked, the distinct boards first met at that depth below the start of
Kalah(HOUSES,SEEDS) (`kalah prove --book D --list`: finished boards and those the levels hold
left out), or a sample of them, are answered by `kalah query - --no-book` in one batch (its
table kept warm from one to the next, as `kalah serve` keeps it), and the time of each answer
is summed up: median, 90th percentile, the slowest, and how many took longer than the budget.
A book of depth D answers the positions above depth D at once; those at depth D and below are
searched, so D is deep enough when the boards at depth D are answered within the budget.

    scripts/book-frontier.py --houses 6 --seeds 4 --depths 2 3 4 --sample 200

Pass --db and --max-level as `kalah serve` would read them; --kalah names the binary
(default: target/release/kalah). Prints a table, or JSON lines with --json.
"""

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import os


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--houses", type=int, required=True)
    ap.add_argument("--seeds", type=int, required=True)
    ap.add_argument("--rules", default="standard", choices=["standard", "empty-capture"])
    ap.add_argument("--depths", type=int, nargs="+", required=True)
    ap.add_argument("--sample", type=int, default=0, help="boards a depth at most (0: all)")
    ap.add_argument("--budget-ms", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tt-mb", type=int, default=64, help="as kalah serve's default")
    ap.add_argument("--db", default=None)
    ap.add_argument("--max-level", type=int, default=None)
    ap.add_argument("--kalah", default="target/release/kalah")
    ap.add_argument("--seed", type=int, default=1, help="of the sample")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not all(0 <= d <= 16 for d in args.depths):
        sys.exit("book-frontier: depths go from 0 to 16")

    db_args = []
    if args.db:
        db_args += ["--db", args.db]
    if args.max_level is not None:
        db_args += ["--max-level", str(args.max_level)]
    variant = ["-m", str(args.houses), "-n", str(args.seeds), "--rules", args.rules]
    if not args.json:
        print(f"Kalah({args.houses},{args.seeds}) {args.rules}, {args.threads} threads, "
              f"table {args.tt_mb} MiB, budget {args.budget_ms} ms")
        print(f"{'depth':>5} {'boards':>7} {'asked':>6} {'median ms':>9} {'p90 ms':>7} "
              f"{'max ms':>7} {'over':>5}")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = os.path.join(tmp, "unused.jsonl")
        for depth in args.depths:
            listing = subprocess.run(
                [args.kalah, "prove", *variant, "--book", str(depth), "--list",
                 "--ledger", scratch, *db_args],
                check=True, capture_output=True, text=True).stdout
            boards = []
            for line in listing.splitlines():
                literal, _, d = line.rpartition(" ")
                if int(d) == depth:
                    boards.append(literal)
            asked = boards
            if args.sample and len(boards) > args.sample:
                asked = random.Random(args.seed).sample(boards, args.sample)
            done = subprocess.run(
                [args.kalah, "query", "-", "--json", "--no-book", "--rules", args.rules,
                 "--threads", str(args.threads), "--tt-mb", str(args.tt_mb), *db_args],
                input="\n".join(asked) + "\n", check=True, capture_output=True, text=True)
            times = []
            sources = {}
            for line in done.stdout.splitlines():
                answer = json.loads(line)
                times.append(answer["time_ms"])
                sources[answer["source"]] = sources.get(answer["source"], 0) + 1
            times.sort()
            row = {
                "depth": depth,
                "boards": len(boards),
                "asked": len(asked),
                "median_ms": statistics.median(times) if times else None,
                "p90_ms": times[int(0.9 * (len(times) - 1))] if times else None,
                "max_ms": times[-1] if times else None,
                "over_budget": sum(t > args.budget_ms for t in times),
                "sources": sources,
            }
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(f"{depth:>5} {row['boards']:>7} {row['asked']:>6} {row['median_ms']:>9} "
                      f"{row['p90_ms']:>7} {row['max_ms']:>7} {row['over_budget']:>5}",
                      flush=True)


if __name__ == "__main__":
    main()
