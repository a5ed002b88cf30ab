#!/usr/bin/env python3
"""Writes the table of docs/values.md that says what each start of seven houses and more left
out of the tables would take: for Kalah(m,n), m = 7..12, n = 1..MAX_SEEDS, every cell not solved
two ways in data/values/big-starts.jsonl, the cost model's price of its solve (`kalah solve
--all-moves --estimate --json`: the value and every first move's, as the table gives them, on
2 threads) with the levels this machine builds in minutes (7
houses: 0..24, 8 houses: 0..20; the levels' size and build time from `kalah db build
--dry-run`), and with none from 9 houses on (levels exist for 8 houses at most). The model is
rough (off by ten either way; fitted by scripts/cost-fit.py to the starts solved here).

The table sits between the lines `<!-- big-left -->` and `<!-- /big-left -->`. It changes with
the cost model, so it is written again by hand (not checked by the tests).

Usage: scripts/big-values-left.py [MAX_SEEDS]   (default 6)   KALAH=BINARY: that binary
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data/values/big-starts.jsonl"
DOC = ROOT / "docs/values.md"
BEGIN, END = "<!-- big-left -->", "<!-- /big-left -->"
# The levels a cell of M houses would read: the highest this machine builds in minutes.
TOP = {7: 24, 8: 20}


def kalah(args):
    out = subprocess.run([KALAH] + args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"kalah {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout + out.stderr


def duration(seconds):
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("hours", 3600),
                       ("minutes", 60)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.0f} s"


def levels_text(m):
    """The levels of M houses that the estimate reads: their entries, size and build time."""
    out = kalah(["db", "build", "--houses", str(m), "--max-seeds", str(TOP[m]), "--dir",
                 "/nonexistent-dry-run", "--dry-run"])
    found = re.search(r"([\d]+) entries, \d+ bytes \(([\d.]+ [GMT]B)\) to write.*about (\S+) on",
                      out)
    if not found:
        sys.exit(f"cannot read the dry run: {out}")
    entries, size, time = found.groups()
    return (f"levels 0..{TOP[m]} ({int(entries) / 1e9:.1f} G entries, {size} a rule set, "
            f"built in about {time} on 2 threads)")


def main():
    global KALAH
    top_seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    KALAH = os.environ.get("KALAH")
    if not KALAH:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
        KALAH = str(ROOT / "target/release/kalah")
    solved = {}
    for line in DATA.read_text().splitlines():
        if line.strip():
            run = json.loads(line)
            solved.setdefault((run["houses"], run["seeds"], run["rules"]), set()).add(run["way"])
    rows = [
        "| variant | rules | levels read | the cost model's price (nodes, time on 2 cores) |",
        "| --- | --- | --- | --- |",
    ]
    levels = {m: levels_text(m) for m in TOP}
    cells = []
    for m in range(7, 13):
        for order, rules in enumerate(("standard", "empty-capture")):
            for n in range(1, top_seeds + 1):
                if len(solved.get((m, n, rules), ())) >= 2:
                    continue
                db = ["--memory-db", str(TOP[m])] if m in TOP else ["--memory-db", "off"]
                est = json.loads(kalah(["solve", "-m", str(m), "-n", str(n), "--rules", rules,
                                        "--all-moves", "--estimate", "--json", "--threads",
                                        "2"] + db))
                read = levels[m] if m in TOP and est["levels_top"] is not None else "none"
                nodes = est["estimated_nodes"]
                if nodes >= 1e15:
                    cells.append(((m, n, order), f"| Kalah({m},{n}) and up | {rules} | {read} | "
                                  f"{nodes:.2g} nodes or more: centuries |"))
                    break
                cells.append(((m, n, order), f"| Kalah({m},{n}) | {rules} | {read} | "
                              f"{nodes:.2g} nodes, {duration(est['estimated_seconds'])} |"))
    rows += [row for _, row in sorted(cells)]
    doc = DOC.read_text()
    pattern = re.compile(re.escape(BEGIN) + r"\n(?:.*?\n)?" + re.escape(END), re.S)
    if not pattern.search(doc):
        sys.exit(f"{DOC}: no {BEGIN} ... {END} section")
    DOC.write_text(pattern.sub(lambda _: f"{BEGIN}\n" + "\n".join(rows) + f"\n{END}", doc))
    print(f"wrote the table of cells left out in {DOC.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
