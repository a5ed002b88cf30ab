#!/usr/bin/env python3
"""Tests proven per CPU-hour of a campaign's ledger, in line ranges (one range a run or an
engine): how many tests the campaign ran, how many proved something (did not run over their
budget), the facts kept from tests over budget (`within`), and the CPU they took.

Usage: scripts/campaign-rate.py LEDGER [--split LINE]...

Each --split starts a new range at that line (from 1). Example, the standard Kalah(6,6)
campaign before and after the engine that keeps finished subtrees (from line 880):
    scripts/campaign-rate.py data/proofs/kalah-6-6-standard.jsonl --split 880
"""

import argparse
import json


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("ledger")
    p.add_argument("--split", type=int, action="append", default=[])
    args = p.parse_args()
    with open(args.ledger, encoding="utf-8") as f:
        lines = [l for l in f.read().split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    bounds = sorted(set([1] + args.split + [len(lines) + 1]))
    print("| lines | tests | proven | over budget | kept (within) | nodes | CPU | proven a CPU-hour | nodes wasted |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for a, b in zip(bounds, bounds[1:]):
        tests = proven = over = kept = 0
        nodes = wasted = 0
        cpu = 0.0
        for line in lines[a - 1:b - 1]:
            if not line.strip():
                continue
            fact = json.loads(line)
            nodes += fact["nodes"]
            cpu += fact["cpu_s"]
            if fact.get("within"):
                kept += 1
                continue
            if fact.get("budget") is None:
                continue  # a lookup or a book entry, not a test
            tests += 1
            if fact["over_budget"]:
                over += 1
                wasted += fact["nodes"]
            else:
                proven += 1
        hours = cpu / 3600
        rate = f"{proven / hours:.1f}" if hours > 0 else "-"
        share = f"{100 * wasted / nodes:.0f}%" if nodes else "-"
        print(f"| {a}..{b - 1} | {tests} | {proven} | {over} | {kept} | {nodes / 1e9:.1f} G | {hours:.2f} h | {rate} | {share} |")


if __name__ == "__main__":
    main()
