#!/usr/bin/env python3
"""Two builds of kalah on the subtree benchmark, in turn: the speed of the search compared.

Runs `scripts/bench-search.py --suite subtrees --repeat 1` with a base build and a new build,
one after the other, PASSES times, and prints for each pass and for the best of the passes
(each row's fastest run, as bench-search takes a row) the nodes a second of both and their
ratio, by level group: the subtrees on the levels 0..24 and 0..28, those on 0..32, and all.
The node counts are printed too: a change in them is a change in the tree, not in speed.

Each build may read its own database (--base-db, --new-db: an older build may need the levels
as they were written then). Before a side runs, the levels of the other side's database are
dropped from the page cache (when the two differ; pages a running process maps stay), and its
own levels 0..32 are read and held mapped by `HOLDER db warm --hold` while it runs: this
machine pages out cached pages no process maps after a minute, and both sides must be measured
the same way. The holder is the new build unless --holder says otherwise (builds before
`db warm --hold` cannot hold).

The machine's speed drifts by the hour here: only runs taken in turn, in the same minutes, are
compared, and a ratio from one pass is worth little on its own. Stop any campaign and any other
holder first (both sides' holders warn if one is running): the two databases and a campaign's
table do not fit the memory together.

Usage: scripts/compare-search.py --base BIN [--base-db DIR] [--new BIN] [--new-db DIR]
                                 [--passes N] [--holder BIN] [--json FILE]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from levels import hold, home
from machine import machine

ROOT = Path(__file__).resolve().parent.parent
GROUPS = (
    ("0..24 and 0..28", lambda k: k < 32),
    ("0..32", lambda k: k == 32),
    ("all", lambda k: True),
)


def drop_from_cache(db):
    """Asks the kernel to drop the cached pages of the level files in `db`."""
    for f in Path(db).glob("kalah-*.kdb"):
        fd = os.open(f, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def run_side(kalah, db, holder, other_db):
    """One pass of the subtree benchmark with `kalah` on `db`: its rows by (name, levels)."""
    if other_db != db:
        drop_from_cache(other_db)
    proc, _ = hold(holder, db, 32, "compare-search")
    try:
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            subprocess.run(
                [sys.executable, str(ROOT / "scripts" / "bench-search.py"), "--kalah", kalah,
                 "--db", db, "--suite", "subtrees", "--repeat", "1", "--no-warm",
                 "--json", out.name],
                check=True, stdout=subprocess.DEVNULL,
            )
            rows = json.load(open(out.name))["rows"]
    finally:
        proc.terminate()
        proc.wait()
    return {(r["name"], r["k"]): r for r in rows}


def best_of(passes):
    """Each row's fastest run over `passes`."""
    best = {}
    for rows in passes:
        for key, r in rows.items():
            if key not in best or r["best_ms"] < best[key]["best_ms"]:
                best[key] = r
    return best


def compare(label, base, new):
    """Prints one line per level group: nodes a second of both, and the ratio."""
    keys = sorted(set(base) & set(new))
    lines = []
    for name, within in GROUPS:
        group = [k for k in keys if within(k[1])]
        if not group:
            continue
        bn = sum(base[k]["nodes"] for k in group)
        bt = sum(base[k]["best_ms"] for k in group)
        nn = sum(new[k]["nodes"] for k in group)
        nt = sum(new[k]["best_ms"] for k in group)
        b_rate, n_rate = bn / bt / 1000, nn / nt / 1000
        lines.append({"group": name, "solves": len(group), "base_nodes": bn, "base_ms": bt,
                      "new_nodes": nn, "new_ms": nt, "ratio": n_rate / b_rate})
        print(f"| {label} | {name} ({len(group)}) | {bn} | {b_rate:.3f} M | {nn} | "
              f"{n_rate:.3f} M | {n_rate / b_rate:.2f}x |")
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--base", required=True, help="the build compared against")
    p.add_argument("--base-db", default=None, help="its database (default: the home)")
    p.add_argument("--new", default=str(ROOT / "target" / "release" / "kalah"))
    p.add_argument("--new-db", default=None, help="its database (default: the home)")
    p.add_argument("--holder", default=None, help="the build that holds the levels (--new)")
    p.add_argument("--passes", type=int, default=3)
    p.add_argument("--json", default=None, help="also write the figures to this file")
    args = p.parse_args()
    if not 1 <= args.passes <= 20:
        p.error("--passes: 1 to 20")
    base_db = args.base_db or home()
    new_db = args.new_db or home()
    holder = args.holder or args.new
    for path in (args.base, args.new, holder):
        if not os.access(path, os.X_OK):
            p.error(f"{path}: not an executable")
    print(f"machine: {machine()}")
    print(f"base {args.base} on {base_db}; new {args.new} on {new_db}")
    print()
    print("| pass | subtrees on | base nodes | base nodes/s | new nodes | new nodes/s | ratio |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    bases, news, figures = [], [], []
    for i in range(1, args.passes + 1):
        bases.append(run_side(args.base, base_db, holder, new_db))
        news.append(run_side(args.new, new_db, holder, base_db))
        figures.append({"pass": i, "groups": compare(str(i), bases[-1], news[-1])})
        sys.stdout.flush()
    figures.append({"pass": "best", "groups": compare(f"best of {args.passes} a row",
                                                      best_of(bases), best_of(news))})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine(), "base": args.base, "new": args.new,
                       "passes": figures}, f, indent=1)


if __name__ == "__main__":
    main()
