#!/usr/bin/env python3
"""Writes the tables of docs/values.md's "Seven houses and more" from data/values/big-starts.jsonl
(made by scripts/big-values.sh, and scripts/big-values-ledger.py for a cell proven by a campaign):
one row a cell solved two ways that agree, with the value, the
optimal first moves, every first move's value (or its bounds, for a campaign that proved the
best moves without every other move's exact value) and each way's time and nodes; and the table of
the other rule sets (ManKalah with and without its pie rule, KGP's early end) from
data/values/mankalah-starts.jsonl (made by scripts/mankalah-values.py). The tables sit between
the lines `<!-- big-starts -->` and `<!-- /big-starts -->`, and `<!-- rule-sets -->` and
`<!-- /rule-sets -->`; tests/values.rs checks each row against the files.

Usage: scripts/big-values-table.py [--check]   (--check: fail if the table is not up to date)
"""

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data/values/big-starts.jsonl"
MANKALAH = ROOT / "data/values/mankalah-starts.jsonl"
DOC = ROOT / "docs/values.md"
BEGIN, END = "<!-- big-starts -->", "<!-- /big-starts -->"
RULE_SETS = "<!-- rule-sets -->", "<!-- /rule-sets -->"


def signed(v):
    return f"+{v}" if v > 0 else str(v)


def move_text(mv, seeds):
    """A first move's value, or its bounds where a campaign proved only those (the move is then
    proven worse than the value: the best moves are all exact); `<= U` when the lower bound is
    the widest, all `seeds` of the board to the other side."""
    if mv["value"] is not None:
        return signed(mv["value"])
    if mv["lower"] <= -seeds:
        return f"<= {signed(mv['upper'])}"
    return f"[{signed(mv['lower'])}, {signed(mv['upper'])}]"


def way_text(run):
    if "cpu_ms" in run:
        # A campaign (scripts/big-values-ledger.py): its stints' CPU time, summed.
        return f"{run['way']}: {run['cpu_ms'] / 1000:.0f} s of CPU, {run['nodes'] / 1e6:.1f} M nodes"
    seconds = run["time_ms"] / 1000
    build = run.get("db_build_ms") or 0
    built = f" + {build / 1000:.1f} s to build them" if build >= 100 else ""
    # Runs recorded without the field deepened to 18 plies, the default until 2026-11-29 (15
    # since): a run at another depth says so.
    deepening = run.get("deepening", 18)
    deep = f" (deepening {deepening})" if deepening != 18 else ""
    return f"{run['way']}{deep}: {seconds:.1f} s{built}, {run['nodes'] / 1e6:.1f} M nodes"


def read_runs(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def by_cell(starts):
    """The runs of each cell, (houses, seeds, rules)."""
    cells = {}
    for run in starts:
        cells.setdefault((run["houses"], run["seeds"], run["rules"]), []).append(run)
    return cells


def table(starts):
    cells = by_cell(starts)
    rows = [
        "| variant | rules | value (best first moves) | every first move | the two ways, wall time on "
        "2 cores beside other work (a campaign's: CPU time) |",
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
        moves = " ".join(f"{mv['house']}: {move_text(mv, 2 * m * n)}" for mv in first["moves"])
        ways = "; ".join(way_text(r) for r in runs)
        rows.append(f"| Kalah({m},{n}) | {rules} | {signed(first['value'])} ({best}) | {moves} | {ways} |")
    return "\n".join(rows)


def outcome(v):
    return "South wins" if v > 0 else "North wins" if v < 0 else "draw"


def north_text(sowing, seeds):
    """North's value after a first sowing, as the runs `sowing` (one a way) give it: exact, or
    the bounds all ways prove together (`>= +2` when the upper bound is every seed of the board,
    `seeds`, to North) where scripts/mankalah-values.py needed no more."""
    if sowing[0]["north_value"] is not None:
        return signed(sowing[0]["north_value"])
    lo = max(s["north_lower"] for s in sowing)
    hi = min(s["north_upper"] for s in sowing)
    if hi >= seeds:
        return f">= {signed(lo)}"
    if lo <= -seeds:
        return f"<= {signed(hi)}"
    return f"[{signed(lo)}, {signed(hi)}]"


def rule_sets_table(starts):
    """One row a standard cell of the table above: its ManKalah values where it was valued under
    ManKalah's rules two ways that agree (else dashes), and KGP's winner, Kalah's."""
    runs_of = {(m, n): runs for (m, n, rules), runs in by_cell(starts).items()
               if rules == "standard"}
    # The cells of the table above: solved two ways.
    values = {cell: runs[0]["value"] for cell, runs in runs_of.items() if len(runs) >= 2}
    cells = {cell: [] for cell in values}
    for row in read_runs(MANKALAH):
        cells.setdefault((row["houses"], row["seeds"]), []).append(row)
    rows = [
        "| variant | ManKalah, pie rule: value (South's best first sowings) | ManKalah without the "
        "pie rule | North's value after each first sowing (ManKalah) | KGP, early end: the winner "
        "(Kalah standard's value) | the two ways |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for (m, n), runs in sorted(cells.items()):
        if (m, n) not in values:
            continue
        v = values[(m, n)]
        if len(runs) < 2:
            ways = "; ".join(r["way"] for r in runs_of[(m, n)])
            rows.append(f"| Kalah({m},{n}) | — | — | — | {outcome(v)} ({signed(v)}) | "
                        f"Kalah's: {ways} |")
            continue
        first = runs[0]
        for run in runs[1:]:
            for field in ("value_pie", "best_pie", "value_no_pie", "best_no_pie"):
                if run[field] != first[field]:
                    sys.exit(f"Kalah({m},{n}) ManKalah: the ways disagree on {field}")
            if [s["north_value"] for s in run["first_sowings"]] != [
                    s["north_value"] for s in first["first_sowings"]]:
                sys.exit(f"Kalah({m},{n}) ManKalah: the ways disagree on a first sowing")

        def best(field):
            return ",".join(str(h) for h in first[field])

        sowings = " ".join(
            f"{s['house']}{'*' if s['kalah_extra_turn'] else ''}: "
            f"{north_text([r['first_sowings'][i] for r in runs], 2 * m * n)}"
            for i, s in enumerate(first["first_sowings"]))
        ways = "; ".join(sorted(r["way"] for r in runs))
        rows.append(f"| Kalah({m},{n}) | {signed(first['value_pie'])} ({best('best_pie')}) | "
                    f"{signed(first['value_no_pie'])} ({best('best_no_pie')}) | {sowings} | "
                    f"{outcome(v)} ({signed(v)}) | {ways} |")
    return "\n".join(rows)


def replace(doc, marks, text):
    begin, end = marks
    pattern = re.compile(re.escape(begin) + r"\n(?:.*?\n)?" + re.escape(end), re.S)
    if not pattern.search(doc):
        sys.exit(f"{DOC}: no {begin} ... {end} section")
    return pattern.sub(lambda _: f"{begin}\n{text}\n{end}", doc)


def main():
    doc = DOC.read_text()
    starts = read_runs(DATA)
    new = replace(doc, (BEGIN, END), table(starts))
    new = replace(new, RULE_SETS, rule_sets_table(starts))
    if "--check" in sys.argv[1:]:
        if new != doc:
            sys.exit("docs/values.md: the tables of seven houses and more are not up to date "
                     "(run scripts/big-values-table.py)")
        return
    DOC.write_text(new)
    print(f"wrote the tables of {DOC.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
