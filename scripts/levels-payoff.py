#!/usr/bin/env python3
"""What deeper levels buy a campaign: one fixed sample of its open leaves, each tested with the
levels 0..K for every K given, and the tests proven a CPU-hour at each depth.

The sample is the first N open leaves of the campaign's next test, in the order the campaign
takes them (`kalah prove --status LEDGER --leaves N`, with --guess and --all-moves passed on).
Each leaf's test is the campaign's ("value >= T?"), run as `kalah analyze LEAF --at-least T
--max-level K --no-book --long --json` on --threads threads, with at most --cap seconds of CPU
(the process is stopped by the kernel past them: the test counts as not proven, and its CPU
counts in full, as a campaign's test over its budget does). Each row says, for one K: the tests
proven, the CPU they all took, the tests proven a CPU-hour, and the nodes of the proven ones.
Levels missing from the database make their row fail; build them first (`kalah db build`). The
levels should be in the page cache (`kalah db warm --max-level K --hold` beside the run) or the
first tests pay for reading them. The leaves, the depths and the results are printed as
Markdown, with the machine; --json FILE writes them too.

Each leaf is tested under the campaign's rules (the listing names them); --tt-mb gives each
test the table a campaign gives its tests (`prove --tt-mb`), instead of analyze's default,
which for Kalah(6,6) is larger than a machine beside a campaign can spare.

Usage: scripts/levels-payoff.py LEDGER --levels 30,32,33 [--leaves 12] [--cap 150]
           [--threads 1] [--tt-mb MIB] [--guess G] [--all-moves] [--kalah BIN] [--db DIR]
           [--json FILE]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from machine import machine  # noqa: E402


def bounded_int(lo, hi):
    def parse(s):
        v = int(s)
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"must be in {lo}..{hi}")
        return v
    return parse


def levels_list(s):
    try:
        ks = sorted({int(k) for k in s.split(",") if k.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError("expected levels such as 30,32,33")
    if not ks or any(not 0 <= k <= 64 for k in ks) or len(ks) > 8:
        raise argparse.ArgumentTypeError("1 to 8 levels, each 0..64")
    return ks


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("ledger")
    p.add_argument("--levels", type=levels_list, required=True)
    p.add_argument("--leaves", type=bounded_int(1, 1000), default=12)
    p.add_argument("--cap", type=bounded_int(1, 86400), default=150, help="CPU seconds a test may take")
    p.add_argument("--threads", type=bounded_int(1, 64), default=1)
    p.add_argument("--tt-mb", type=bounded_int(1, 1 << 20))
    p.add_argument("--guess", type=bounded_int(-255, 255))
    p.add_argument("--all-moves", action="store_true")
    p.add_argument("--kalah", default="target/release/kalah")
    p.add_argument("--db")
    p.add_argument("--json")
    args = p.parse_args()

    status = [args.kalah, "prove", "--status", args.ledger, "--leaves", str(args.leaves), "--json"]
    if args.guess is not None:
        status += ["--guess", str(args.guess)]
    if args.all_moves:
        status.append("--all-moves")
    listed = json.loads(subprocess.run(status, check=True, capture_output=True, text=True).stdout)
    leaves = listed["leaves"]
    if not leaves:
        sys.exit("levels-payoff: the campaign has no open leaf")

    rules = listed["rules"]
    print(f"machine: {machine()}")
    print(f"\n{len(leaves)} leaves of {args.ledger} (the campaign's next test), "
          f"{rules} rules, {args.threads} thread(s), at most {args.cap} s of CPU a test\n")
    rows = []
    for k in args.levels:
        proven = 0
        nodes = 0
        cpu = 0.0
        results = []
        for leaf in leaves:
            cmd = [args.kalah, "analyze", leaf["position"], "--to-move", leaf["to_move"],
                   "--at-least", str(leaf["at_least"]), "--max-level", str(k), "--no-book",
                   "--long", "--json", "--threads", str(args.threads), "--rules", rules]
            if args.tt_mb is not None:
                cmd += ["--tt-mb", str(args.tt_mb)]
            if args.db:
                cmd += ["--db", args.db]
            before = children_cpu()
            started = time.monotonic()
            run = subprocess.run(["prlimit", f"--cpu={args.cap}", "--"] + cmd,
                                 capture_output=True, text=True)
            spent = children_cpu() - before
            cpu += spent
            if run.returncode == 0:
                out = json.loads(run.stdout)
                proven += 1
                nodes += out.get("nodes") or 0
                results.append({"position": leaf["position"], "proven": True,
                                "holds": out.get("holds"), "nodes": out.get("nodes"),
                                "cpu_s": round(spent, 2)})
            elif run.returncode < 0 or run.returncode in (128 + 9, 128 + 24):
                results.append({"position": leaf["position"], "proven": False, "cpu_s": round(spent, 2)})
            else:
                sys.exit(f"levels-payoff: {' '.join(cmd)} failed (exit {run.returncode}): {run.stderr.strip()}")
            print(f"  levels 0..{k}: {leaf['position']} {'proven' if results[-1]['proven'] else 'over the cap'} "
                  f"in {spent:.1f} s of CPU ({time.monotonic() - started:.1f} s wall)", file=sys.stderr)
        rate = proven / (cpu / 3600) if cpu > 0 else 0.0
        rows.append({"levels": k, "proven": proven, "tests": len(leaves), "cpu_s": round(cpu, 1),
                     "proven_per_cpu_hour": round(rate, 1), "nodes_proven": nodes, "results": results})

    print("| levels | tests proven | CPU | tests proven a CPU-hour | nodes of the proven |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| 0..{r['levels']} | {r['proven']} of {r['tests']} | {r['cpu_s']:.0f} s | "
              f"{r['proven_per_cpu_hour']:.1f} | {r['nodes_proven']:,} |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"ledger": args.ledger, "rules": rules, "tt_mb": args.tt_mb,
                       "leaves": leaves, "cap_s": args.cap, "threads": args.threads,
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
