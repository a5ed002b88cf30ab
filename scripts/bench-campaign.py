#!/usr/bin/env python3
"""The campaign benchmark: how much a proof campaign (`kalah prove`) costs against the direct
solve of the same position, and how much of it went into tests that proved nothing.

Each position of the suite is first solved directly, value only (`kalah solve --value-only`
for a start, `kalah analyze --value-only --no-book` for another position), one thread, on the
levels 0..K. Then a campaign proves the same value from an empty ledger, one thread, the same
levels and the same default table, once for each budget: a fraction of the solve's nodes
(default 1/1000, 1/200, 1/50 and 1/10; at least 1000 nodes). Printed, one Markdown row a run:

- facts: lines of the ledger; "over" those that ran out of their budget (and were split), and
  "harvested" those proven inside a test that ran out of its budget (a subtree that test had
  finished, written as its own fact);
- nodes: the sum of every fact's nodes (every node the campaign searched, its tests' guesses
  and estimates included), and that sum over the solve's;
- CPU: user + system time of the whole `kalah prove` process (the proof tree, the ledger and
  the searches), and that over the solve's;
- waste: the share of the nodes spent in tests that proved nothing (the nodes of the facts that
  ran out of their budget, less what they harvested);
- the value the campaign proved, which must be the solve's (a difference stops the script).

The issue's target: at a budget of 1/200 of the solve's nodes, at most 1.5 times the solve's
nodes and at most 30% waste. `--suite` picks the positions (`all`, `starts`, `subtrees`, or
`check`: positions not tuned on, to check that a change holds beyond the suite), `--position
"LITERAL:RULES:K"` (repeatable) runs others. The levels must be in the database (`--db`, else
the home); a row whose levels are missing is skipped and said so. Node counts do not depend on
the machine (one thread); CPU does: the machine is printed first.

Usage: scripts/bench-campaign.py [--kalah BIN] [--solver BIN] [--db DIR] [--suite S] [--position P]...
                                 [--fractions 1000,200,50,10] [--json FILE]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from levels import home
from machine import machine

ROOT = Path(__file__).resolve().parent.parent

# (name, position or None for the start of Kalah(6,N), seeds N, rules, levels K). The other
# positions are two to four sowings into the game, drawn at random among those whose direct
# solve on these levels takes 10 to 100 M nodes (a few seconds to a minute).
STARTS = [
    ("Kalah(6,4) start", None, 4, "standard", 20),
    ("Kalah(6,4) start", None, 4, "empty-capture", 20),
]
SUBTREES = [
    ("Kalah(6,5) after 2 4", "<6,2,0,5,0,6,0,7,7,6,6,6,5,5,5> north", None, "standard", 28),
    ("Kalah(6,5) after 2 3", "<6,2,0,5,0,0,7,7,7,6,6,5,5,5,5> north", None, "standard", 28),
    ("Kalah(6,5) after 3 2 4 4", "<6,2,2,6,6,1,0,7,7,7,1,7,0,7,7> north", None,
     "empty-capture", 24),
]
# Not tuned on: positions of the same kind, drawn the same way, to check that a change holds
# beyond the suite.
CHECK = [
    ("Kalah(6,4) after 4 6", "<6,1,1,5,5,5,0,5,5,5,4,4,4,4,0>", None, "standard", 16),
    ("Kalah(6,4) after 6 3", "<6,1,1,5,4,4,4,4,0,5,5,0,5,5,5>", None, "empty-capture", 16),
    ("Kalah(6,5) after 5 2", "<6,1,1,6,5,5,5,0,6,6,0,7,6,6,6>", None, "standard", 28),
]


def levels_present(db, houses, rules):
    """The highest K such that the levels 0..K of `rules` are all in `db`."""
    top = -1
    while (Path(db) / f"kalah-{houses}-{rules}-{top + 1:03}.kdb").exists():
        top += 1
    return top


def timed(cmd):
    """Runs `cmd`; returns its stdout, and its user + system CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, cpu


def direct_solve(args, db, row):
    """The direct solve of `row`: its value, nodes and CPU seconds."""
    name, position, seeds, rules, k = row
    solver = args.solver or args.kalah
    if position is None:
        cmd = [solver, "solve", "-m", "6", "-n", str(seeds), "--value-only"]
    else:
        cmd = [solver, "analyze", position, "--value-only", "--no-book"]
    cmd += ["--rules", rules, "--threads", "1", "--db", db, "--max-level", str(k), "--json"]
    out, cpu = timed(cmd)
    answer = json.loads(out)
    return answer["value"], answer["nodes"], cpu


def campaign(args, db, row, budget):
    """One campaign from an empty ledger; returns its figures."""
    name, position, seeds, rules, k = row
    with tempfile.TemporaryDirectory(prefix="bench-campaign-") as tmp:
        ledger = Path(tmp) / "ledger.jsonl"
        root = ["-m", "6", "-n", str(seeds)] if position is None else [position]
        cmd = [args.kalah, "prove", *root, "--rules", rules, "--threads", "1", "--db", db]
        cmd += ["--max-level", str(k), "--budget", str(budget), "--ledger", str(ledger)]
        cmd += ["--json"]
        started = time.monotonic()
        out, cpu = timed(cmd)
        wall = time.monotonic() - started
        status = json.loads(out.strip().splitlines()[-1])
        facts = [json.loads(line) for line in ledger.read_text().splitlines()]
    over = [f for f in facts if f.get("over_budget")]
    harvested = [f for f in facts if f.get("within")]
    nodes = sum(f["nodes"] for f in facts)
    wasted = sum(f["nodes"] for f in over)
    return {
        "budget": budget,
        "facts": len(facts),
        "over": len(over),
        "harvested": len(harvested),
        "nodes": nodes,
        "wasted": wasted,
        "cpu": cpu,
        "wall": wall,
        "value": status["value"]["exact"],
    }


def suite(name):
    return {
        "starts": STARTS,
        "subtrees": SUBTREES,
        "all": STARTS + SUBTREES,
        "check": CHECK,
    }[name]


def parse_position(text):
    try:
        literal, rules, k = text.rsplit(":", 2)
        return (literal, literal, None, rules, int(k))
    except ValueError:
        raise SystemExit(f"--position {text!r}: expected LITERAL:RULES:K")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--kalah", default=str(ROOT / "target" / "release" / "kalah"))
    p.add_argument("--solver", default=None,
                   help="the binary of the direct solves (default --kalah): to measure an older "
                        "campaign engine against the same solves")
    p.add_argument("--db", default=None, help="database directory (default: the home)")
    p.add_argument("--suite", default="all", choices=["all", "starts", "subtrees", "check"])
    p.add_argument("--position", action="append", default=[], metavar="LITERAL:RULES:K")
    p.add_argument("--fractions", default="1000,200,50,10",
                   help="budgets as fractions of the solve's nodes: 1/F for each F")
    p.add_argument("--json", default=None, help="also write the rows to this file")
    args = p.parse_args()
    if not os.access(args.kalah, os.X_OK):
        p.error(f"--kalah {args.kalah}: not an executable")
    try:
        fractions = [int(f) for f in args.fractions.split(",")]
    except ValueError:
        p.error("--fractions: whole numbers separated by commas")
    if not fractions or any(not 1 <= f <= 1_000_000 for f in fractions):
        p.error("--fractions: 1 to 10^6 each")
    db = args.db or home()
    rows = [parse_position(t) for t in args.position] or suite(args.suite)
    print(f"machine: {machine()}; database {db}; one thread")
    print()
    print("| position | rules | levels | budget | facts (over, harvested) | nodes | / solve "
          "| CPU | / solve | waste |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    done = []
    skipped = 0
    for row in rows:
        name, _position, _seeds, rules, k = row
        if levels_present(db, 6, rules) < k:
            skipped += 1
            continue
        value, solve_nodes, solve_cpu = direct_solve(args, db, row)
        print(f"| {name} | {rules} | 0..{k} | solve | | {solve_nodes:,} | 1 | {solve_cpu:.1f} s "
              f"| 1 | value {value:+} |")
        sys.stdout.flush()
        for fraction in fractions:
            budget = max(1000, solve_nodes // fraction)
            c = campaign(args, db, row, budget)
            if c["value"] != value:
                raise SystemExit(f"{name}: the campaign proved {c['value']}, the solve {value}")
            waste = c["wasted"] / max(c["nodes"], 1)
            print(f"| {name} | {rules} | 0..{k} | 1/{fraction}: {budget:,} "
                  f"| {c['facts']} ({c['over']}, {c['harvested']}) | {c['nodes']:,} "
                  f"| {c['nodes'] / solve_nodes:.2f} | {c['cpu']:.1f} s "
                  f"| {c['cpu'] / max(solve_cpu, 1e-3):.2f} | {100 * waste:.0f}% |")
            sys.stdout.flush()
            done.append({"name": name, "rules": rules, "levels": k, "fraction": fraction,
                         "solve_nodes": solve_nodes, "solve_cpu": solve_cpu, **c})
    if skipped:
        print(f"\n{skipped} positions skipped: their levels are not all in {db}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine(), "db": db, "rows": done}, f, indent=1)


if __name__ == "__main__":
    main()
