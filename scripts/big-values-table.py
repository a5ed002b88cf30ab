#!/usr/bin/env python3
"""Writes the table of docs/values.md's "Seven houses and more" from data/values/big-starts.jsonl
(made by scripts/big-values.sh): one row a cell solved two ways that agree, with the value, the
optimal first moves, every first move's value and each way's time and nodes. The table sits
between the lines `<!-- big-starts -->` and `<!-- /big-starts -->`; tests/values.rs checks each
row against the file.

Usage: scripts/big-values-table.py [--check]   (--check: fail if the table is not up to date)
"""

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data/values/big-starts.jsonl"
DOC = ROOT / "docs/values.md"
BEGIN, END = "<!-- big-starts -->", "<!-- /big-starts -->"


def signed(v):
    return f"+{v}" if v > 0 else str(v)


def way_text(run):
    seconds = run["time_ms"] / 1000
    build = run.get("db_build_ms") or 0
    built = f" + {build / 1000:.1f} s to build them" if build >= 100 else ""
    return f"{run['way']}: {seconds:.1f} s{built}, {run['nodes'] / 1e6:.1f} M nodes"


def table():
    cells = {}
    for line in DATA.read_text().splitlines():
        if line.strip():
            run = json.loads(line)
            cells.setdefault((run["houses"], run["seeds"], run["rules"]), []).append(run)
    rows = [
        "| variant | rules | value (best first moves) | every first move | the two ways, wall time on "
        "2 cores beside other work |",
        "| --- | --- | --- | --- | --- |",
    ]
    for (m, n, rules), runs in sorted(cells.items(), key=lambda c: (c[0][0], c[0][1], c[0][2] != "standard")):
        if len(runs) < 2:
            continue
        first = runs[0]
        for run in runs[1:]:
            for field in ("value", "best", "moves"):
                if run[field] != first[field]:
                    sys.exit(f"Kalah({m},{n}) {rules}: the ways disagree on {field}")
        best = ",".join(str(h) for h in first["best"])
        moves = " ".join(f"{mv['house']}: {signed(mv['value'])}" for mv in first["moves"])
        ways = "; ".join(way_text(r) for r in runs)
        rows.append(f"| Kalah({m},{n}) | {rules} | {signed(first['value'])} ({best}) | {moves} | {ways} |")
    return "\n".join(rows)


def main():
    doc = DOC.read_text()
    pattern = re.compile(re.escape(BEGIN) + r"\n(?:.*?\n)?" + re.escape(END), re.S)
    if not pattern.search(doc):
        sys.exit(f"{DOC}: no {BEGIN} ... {END} section")
    new = pattern.sub(lambda _: f"{BEGIN}\n{table()}\n{END}", doc)
    if "--check" in sys.argv[1:]:
        if new != doc:
            sys.exit("docs/values.md: the table of seven houses and more is not up to date "
                     "(run scripts/big-values-table.py)")
        return
    DOC.write_text(new)
    print(f"wrote the table of {DOC.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
