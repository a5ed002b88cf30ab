#!/usr/bin/env python3
"""Writes a cell of data/values/big-starts.jsonl from a campaign instead of two solves: a start of
seven houses and more whose `kalah solve --all-moves` would run for hours is proven by
`kalah prove --all-moves` (a ledger: work that any stop or machine can carry on), and checked by
`kalah prove --certify` (every fact under the value and under each first move's value proven
again on the levels two below). The two rows it writes, one a way:

- "campaign-files-0..T" ("campaign-search-only" for a board of more than 8 houses, which has
  no levels): the value, the optimal first moves and every first move's value, from
  `kalah prove --status LEDGER --json`: nothing is written unless the value is exact and every
  first move proven best or worse; a worse move the campaign has only bounded so far is written
  with `"value": null` and its `lower` and `upper` bounds. Its nodes and CPU are the ledger's
  (every stint summed), `cpu_ms` in place of a solve's wall `time_ms`;
- "certified-files-0..T2" ("certified-serial" for checks by one thread, `--by serial`, the
  path of a board with no levels): the same values, checked: nothing is written unless every
  bound of the value and of the first moves that rests on a fact is certified; its nodes and CPU
  are those of the checks in the checks file beside the ledger.

Rows of the same cell and rules are replaced; the others are kept. Both carry "ledger" (the
ledger's path in the repository), which scripts/cost-fit.py leaves out of its fit (a campaign's
nodes are not one search's).

Usage: KALAH=target/release/kalah scripts/big-values-ledger.py LEDGER "kalah prove ..." \\
           "kalah prove --certify ..."
(the two commands as they were run, for the record; e.g. the ledger
data/proofs/kalah-8-3-standard.jsonl)
"""

import json
import os
import subprocess
import sys
from pathlib import Path

from machine import machine

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data/values/big-starts.jsonl"


def jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def levels_way(tops):
    """The levels of a way: "files-0..T" (the tops read, "/" between them), or "search-only"."""
    tops = sorted(t for t in tops if t is not None)
    return f"files-0..{'/'.join(map(str, tops))}" if tops else "search-only"


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    ledger = Path(sys.argv[1]).resolve()
    prove_cmd, certify_cmd = sys.argv[2], sys.argv[3]
    kalah = os.environ.get("KALAH", str(ROOT / "target/release/kalah"))
    status = json.loads(subprocess.run([kalah, "prove", "--status", str(ledger), "--json"],
                                       check=True, capture_output=True, text=True).stdout)
    if status["value"]["exact"] is None:
        sys.exit(f"{ledger.name}: the value is not proven yet ({status['value']})")
    undecided = status["best_moves"]["undecided"]
    if undecided:
        sys.exit(f"{ledger.name}: moves {undecided} not yet proven best or worse (--all-moves "
                 "decides them first)")
    bounded = [m["house"] for m in status["moves"] if m["exact"] is None]
    if bounded:
        print(f"{ledger.name}: moves {bounded} bounded only (proven worse than the value); "
              "--all-moves goes on to their exact values", file=sys.stderr)
    m = status["houses"]
    facts = jsonl(ledger)
    seeds = sum(int(x) for x in status["position"].strip("<>").split(",")[1:]) // (2 * m)
    tops = {f["levels"]["top"] for f in facts if f.get("levels")}
    value = status["value"]["exact"]
    moves = [{"house": mv["house"], "value": mv["exact"]} if mv["exact"] is not None
             else {"house": mv["house"], "value": None, "lower": mv["lower"], "upper": mv["upper"]}
             for mv in status["moves"]]
    rel = str(ledger.relative_to(ROOT))
    common = {
        "variant": f"Kalah({m},{seeds})", "houses": m, "seeds": seeds, "rules": status["rules"],
        "position": status["position"], "to_move": status["to_move"], "value": value,
        "best": [mv["house"] for mv in moves if mv["value"] == value], "moves": moves,
        "ledger": rel, "machine": machine(),
    }
    rows = [dict(common, way=f"campaign-{levels_way(tops)}",
                 facts=status["facts"], nodes=status["nodes"],
                 cpu_ms=round(status["cpu_s"] * 1000), command=prove_cmd)]
    # Every bound that rests on a fact is a claim of the certificate (the others follow from
    # the sowings alone): all of them certified, and the value's two among them.
    claims = status["certificate"]["claims"] if status.get("certificate") else []
    certified = {(c["move"], c["side"]) for c in claims if c["certified"]}
    if len(certified) < len(claims) or not {(None, "lower"), (None, "upper")} <= certified:
        sys.exit(f"{ledger.name}: {len(certified)} of the {len(claims)} bounds (the value's and "
                 "the first moves') certified: run `kalah prove --certify` to the end first (a "
                 "cell enters the table only checked a second way)")
    checks = [c for f in status["certificate"]["files"] for c in jsonl(ROOT / f)]
    ctops = {c["levels"]["top"] for c in checks if c.get("levels")}
    serial = all(c["by"] == "serial" for c in checks)
    rows.append(dict(common, way="certified-serial" if serial else f"certified-{levels_way(ctops)}",
                     facts=len(checks), nodes=sum(c["nodes"] for c in checks),
                     cpu_ms=round(sum(c["cpu_s"] for c in checks) * 1000),
                     command=certify_cmd))
    kept = [r for r in jsonl(OUT)
            if (r["variant"], r["rules"]) != (common["variant"], common["rules"])]
    OUT.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in kept + rows))
    for r in rows:
        print(f"{r['variant']} {r['rules']}, {r['way']}: {r['value']:+} (best {r['best']}), "
              f"{r['nodes'] / 1e6:.1f} M nodes, {r['cpu_ms'] / 1000:.0f} s of CPU",
              file=sys.stderr)


if __name__ == "__main__":
    main()
