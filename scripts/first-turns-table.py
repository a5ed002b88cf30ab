#!/usr/bin/env python3
"""Writes docs/values.md's table of the first turns of Kalah(6,6), both rule sets, from the
shipped ledgers and their checks alone.

Move 1 of Kalah(6,6) ends in South's store, so South's first turn is one of ten: 1-2 .. 1-6
(move 1, then another) and 2 .. 6. For each rule set this reads, with `kalah prove POSITION
--status LEDGER --json`, the bounds the ledger proves at the start (the root and moves 2..6) and
after move 1 (moves 2..6 there are the turns 1-2 .. 1-6), and the certificate of each bound. A
row says, for the root and for each turn: its value (or bounds), whether each bound is
certified, and what it cost: the facts the bounds rest on (their campaign nodes and CPU, as the
ledger records them) and the checks that certified those facts (their nodes and CPU). The
facts a bound rests on are the cheapest support the certificate finds, not every test the
campaign ran to find them (`kalah prove --status` gives that whole). The table sits between the
lines `<!-- first-turns -->` and `<!-- /first-turns -->`.

Usage: scripts/first-turns-table.py [--check] [--kalah BIN]
       (--check: print nothing and fail if the table is not up to date; BIN: default
       target/release/kalah)
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs/values.md"
BEGIN, END = "<!-- first-turns -->", "<!-- /first-turns -->"
START = "<6,0,0,6,6,6,6,6,6,6,6,6,6,6,6>"
AFTER_1 = "<6,1,0,0,7,7,7,7,7,6,6,6,6,6,6>"
RULES = ["standard", "empty-capture"]


def signed(v):
    return f"+{v}" if v > 0 else str(v)


def status(kalah, position, rules):
    ledger = ROOT / f"data/proofs/kalah-6-6-{rules}.jsonl"
    out = subprocess.run([kalah, "prove", position, "--rules", rules, "--status", str(ledger), "--json"],
                         check=True, capture_output=True, text=True, cwd=ROOT).stdout
    return json.loads(out)


def value_text(b):
    if b.get("exact") is not None:
        return f"**{signed(b['exact'])}**"
    return f"[{signed(b['lower'])}, {signed(b['upper'])}]"


def cpu_text(s):
    if s >= 3600:
        return f"{s / 3600:.1f} h"
    if s >= 60:
        return f"{s / 60:.0f} min"
    return f"{s:.0f} s"


def nodes_text(n):
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return str(n)


def cell(claims):
    """The bounds' certificate and costs, from the claims of one value (root or move)."""
    if not claims:
        return "no bound rests on a fact", "-", "-"
    sides = []
    for c in sorted(claims, key=lambda c: c["side"]):
        rel = ">=" if c["side"] == "lower" else "<="
        state = "yes" if c["certified"] else f"no ({c['unchecked']} of {c['facts']} facts left)"
        sides.append(f"{rel} {signed(c['value'])}: {state}")
    nodes = sum(c["cost"]["facts_nodes"] for c in claims)
    cpu = sum(c["cost"]["facts_cpu_s"] for c in claims)
    facts = sum(c["facts"] for c in claims)
    check_nodes = sum(c["cost"]["checks_nodes"] for c in claims)
    check_cpu = sum(c["cost"]["checks_cpu_s"] for c in claims)
    proof = f"{facts} facts, {nodes_text(nodes)} nodes, {cpu_text(cpu)}"
    checks = f"{nodes_text(check_nodes)} nodes, {cpu_text(check_cpu)}" if check_nodes else "-"
    return "; ".join(sides), proof, checks


def rows(kalah):
    out = []
    for rules in RULES:
        at_start = status(kalah, START, rules)
        after_1 = status(kalah, AFTER_1, rules)

        def claims_of(st, house):
            return [c for c in st["certificate"]["claims"] if c["move"] == house]

        out.append(("start", rules, value_text(at_start["value"]), *cell(claims_of(at_start, None))))
        for m in after_1["moves"]:
            out.append((f"1-{m['house']}", rules, value_text(m), *cell(claims_of(after_1, m["house"]))))
        for m in at_start["moves"]:
            if m["house"] == 1:
                continue
            out.append((str(m["house"]), rules, value_text(m), *cell(claims_of(at_start, m["house"]))))
    return out


def table(kalah):
    lines = [
        "| turn | rules | value | certified | proof: the facts its bounds rest on | certificate: their checks |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows(kalah):
        lines.append("| " + " | ".join(r) + " |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true")
    p.add_argument("--kalah", default=str(ROOT / "target/release/kalah"))
    args = p.parse_args()
    doc = DOC.read_text(encoding="utf-8")
    if BEGIN not in doc or END not in doc:
        sys.exit(f"first-turns-table: {DOC} has no {BEGIN} ... {END}")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{BEGIN}\n{table(args.kalah)}\n{END}{tail}"
    if args.check:
        if new != doc:
            sys.exit("first-turns-table: docs/values.md's table of first turns is not up to date "
                     "(scripts/first-turns-table.py writes it)")
        return
    DOC.write_text(new, encoding="utf-8")


if __name__ == "__main__":
    main()
