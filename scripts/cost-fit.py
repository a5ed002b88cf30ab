#!/usr/bin/env python3
"""Fits the search cost model of core/src/search/cost.rs to the solves this project recorded, and
prints its parameters and how far it is from each solve.

The model (log10 of the nodes of an exact solve, value only):

    log10 N = a + b*m + c*S + k*S^2/100 + [empty-capture] (d*m + e*S) - g*max(0, top - h*S)

m houses a side, S seeds on the board, the endgame levels 0..top read (none: no cut). The
solves with every first move's value (`--all-moves`, most of those recorded) take 10^v times
the nodes of the value alone: v is fitted too. The points:

- data/values/big-starts.jsonl: the starts of 7 to 12 houses, both rules (every move valued);
- data/values/starts.jsonl: the starts of 4 to 6 houses above 3,000 nodes (every move valued);
- VALUE_ONLY below: value-only solves of 6-house starts measured on the AMD EPYC
  (docs/performance.md), and the Kalah(6,6) campaign as a floor: 108 G nodes on its ledger
  without the value, so the solve on the levels 0..32 counts as at least 10^11.3 (weighted 3).

Levels that leave 4 seeds or fewer above them are dropped (the solve is a lookup or nearly;
the model answers 1 node when the levels hold the board). For each h on a grid the rest is
linear least squares; the h with the least squared error wins. Standard library only.

Usage: scripts/cost-fit.py
"""

import json
import math
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# (houses, seeds on the board, top level or None, log10 nodes, weight, name)
VALUE_ONLY = [
    (6, 36, None, 6.48, 1, "Kalah(6,3) standard, no levels"),
    (6, 48, None, 7.78, 1, "Kalah(6,4) standard, no levels"),
    (6, 48, 20, math.log10(18.5e6), 1, "Kalah(6,4) standard, levels 0..20"),
    (6, 48, 24, math.log10(4.5e6), 1, "Kalah(6,4) standard, levels 0..24"),
    (6, 60, 32, math.log10(2.0e7), 1, "Kalah(6,5) standard, levels 0..32"),
    (6, 72, 32, 11.3, 3, "Kalah(6,6) standard, levels 0..32 (floor)"),
]
NAMES = ["a", "b", "c", "k", "d", "e", "g", "v"]


def points():
    out = []
    for row in (ROOT / "data/values/big-starts.jsonl").read_text().splitlines():
        d = json.loads(row)
        if "ledger" in d:
            continue  # a campaign's nodes (scripts/big-values-ledger.py) are not one search's
        top = re.search(r"0\.\.(\d+)", d["way"])
        out.append((d["houses"], 2 * d["houses"] * d["seeds"], d["rules"] == "empty-capture",
                    int(top.group(1)) if top else None, math.log10(d["nodes"]), False, 1,
                    f"{d['variant']} {d['rules']}, {d['way']}"))
    for row in (ROOT / "data/values/starts.jsonl").read_text().splitlines():
        if row.startswith("#"):
            continue
        d = json.loads(row)
        if d["houses"] < 4 or d["nodes"] < 3000:
            continue
        top = d.get("db_max_seeds")
        out.append((d["houses"], 2 * d["houses"] * d["seeds"], d["rules"] == "empty-capture",
                    top, math.log10(d["nodes"]), False, 1,
                    f"{d['variant']} {d['rules']}, levels {'0..' + str(top) if top else 'none'}"))
    for m, s, top, y, w, name in VALUE_ONLY:
        out.append((m, s, False, top, y, True, w, name + ", value only"))
    return [p for p in out if p[3] is None or p[1] - p[3] > 4]


def features(p, h):
    m, s, ec, top, _, value_only, _, _ = p
    cut = max(0.0, top - h * s) if top is not None else 0.0
    return [1.0, m, s, s * s / 100, m * ec, s * ec, -cut, -float(value_only)]


def solve(rows, ys, ws):
    """Weighted least squares by the normal equations (Gauss-Jordan)."""
    n = len(rows[0])
    a = [[sum(w * r[i] * r[j] for r, w in zip(rows, ws)) for j in range(n)]
         + [sum(w * r[i] * y for r, y, w in zip(rows, ys, ws))] for i in range(n)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[piv] = a[piv], a[col]
        for r in range(n):
            if r != col:
                f = a[r][col] / a[col][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col])]
    return [a[i][n] / a[i][i] for i in range(n)]


def main():
    pts = points()
    best = None
    for step in range(0, 51):
        h = step / 100
        rows = [features(p, h) for p in pts]
        try:
            coef = solve(rows, [p[4] for p in pts], [p[6] for p in pts])
        except ZeroDivisionError:
            continue  # no level cuts anything at this h: g is not determined
        err = sum(p[6] * (sum(c * x for c, x in zip(coef, r)) - p[4]) ** 2
                  for p, r in zip(pts, rows))
        if best is None or err < best[0]:
            best = (err, h, coef)
    _, h, coef = best
    print("parameters: " + ", ".join(f"{n} = {c:.3f}" for n, c in zip(NAMES, coef))
          + f", h = {h:.2f}")
    print("| solve | log10 nodes | model | model / measured |")
    print("| --- | ---: | ---: | ---: |")
    worst = 0.0
    for p in sorted(pts, key=lambda p: (p[0], p[1], p[7])):
        y = sum(c * x for c, x in zip(coef, features(p, h)))
        worst = max(worst, abs(y - p[4]))
        print(f"| {p[7]} | {p[4]:.2f} | {y:.2f} | {10 ** (y - p[4]):.2g} |")
    print(f"worst: a factor of {10 ** worst:.1f}")


if __name__ == "__main__":
    main()
