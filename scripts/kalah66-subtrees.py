#!/usr/bin/env python3
"""Measure how the cost of solving Kalah(6,6) subtrees grows with the seeds above the databases.

Standard Kalah(6,6) (6 houses, 6 seeds each, 72 seeds) is unsolved. To estimate what a full solve
would cost, this script samples positions reachable from its start that have S seeds left on the
board (in houses, not stores), and solves each exactly with `kalah analyze` on one thread, probing
the endgame databases up to level K (`--max-level K`). Node counts and times as a function of
S - K (the seeds above the deepest database level) can then be extrapolated to S = 72.

Sampling: game g plays uniformly random legal sowings from the start, drawn from
random.Random("<seed>-<g>"), and keeps the first position whose seeds on the board equal a target
S exactly (game not over), for every target S, until each target has --per-target positions.
The sowing follows the project's rules (standard captures) and is, unless --no-verify, checked
ply by ply against `kalah moves --json`.

Solving: every sampled position is solved with
`nice -n 19 kalah analyze POS --db DIR --max-level K --threads 1 --json` under a --timeout
(seconds), the (S, K) pairs in order of S - K (pairs with S <= K, which the database answers at
once, and with S - K above --max-above are left out). Once a solve at some K times out or takes
more than --skip-after seconds, larger S are not tried at that K. No new solve starts after
--budget minutes.

`analyze` proves the exact value of every legal move, which costs more than the root value alone;
`kalah solve --value-only` gives the root value alone but only from a start position. So the
script also solves the starts of Kalah(6,n) for the --starts n both ways, to measure the ratio.

Output: a JSON file with "meta" (settings) and "records", one per solve: position literal,
plies from the start, seeds on board, max level, nodes, ms, value, or "timed_out": true.
It is rewritten after every solve, so an interrupted run keeps what it measured; --append adds a
later run's records (say, other K or S) to the file, and does not repeat the solves found there.

Usage (run it under `nice -n 19` on a shared machine; the solves themselves are niced by --nice):
    python3 kalah66-subtrees.py KALAH_BINARY DB_DIR [-o results.json] [--levels 32,28,24]
        [--targets 34,36,...,66] [--per-target 5] [--starts 3,4,5] [--timeout 600]
        [--skip-after 45] [--max-above 32] [--budget 80] [--tt-mb MIB]
    python3 kalah66-subtrees.py KALAH_BINARY DB_DIR --append --levels 20,16 --targets 36,40,44 \
        --per-target 3 --starts 3,4          # more K and S into the same file
    python3 kalah66-subtrees.py KALAH_BINARY DB_DIR --sample-only   # print the sample only
The file's "meta"."runs" lists the arguments of every run that wrote to it.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time

HOUSES = 6
START_SEEDS = 6
# Board layout, 14 pits: South's houses 1..6 (0..5), South's store (6),
# North's houses 1..6 (7..12), North's store (13).
SOUTH_STORE = HOUSES
NORTH_STORE = 2 * HOUSES + 1
PITS = 2 * HOUSES + 2


def start_board():
    board = [START_SEEDS] * PITS
    board[SOUTH_STORE] = 0
    board[NORTH_STORE] = 0
    return board


def own_houses(player):
    """Pit indices of the player's houses (player 0 = South, 1 = North), house 1 first."""
    first = 0 if player == 0 else HOUSES + 1
    return range(first, first + HOUSES)


def seeds_on_board(board):
    return sum(board[i] for i in range(PITS) if i not in (SOUTH_STORE, NORTH_STORE))


def legal_houses(board, player):
    """House numbers 1..6 (from the mover's side) that hold seeds."""
    return [h + 1 for h, pit in enumerate(own_houses(player)) if board[pit] > 0]


def sow(board, player, house):
    """Play one sowing under standard rules. Returns (new_board, next_player, game_over)."""
    board = list(board)
    store = SOUTH_STORE if player == 0 else NORTH_STORE
    skip = NORTH_STORE if player == 0 else SOUTH_STORE
    pit = own_houses(player)[house - 1]
    seeds, board[pit] = board[pit], 0
    while seeds:
        pit = (pit + 1) % PITS
        if pit == skip:
            continue
        board[pit] += 1
        seeds -= 1
    next_player = 1 - player
    if pit == store:
        next_player = player
    elif pit in own_houses(player) and board[pit] == 1:
        opposite = 2 * HOUSES - pit  # South's house i (i-1) faces North's house 7-i (12-(i-1))
        if board[opposite] > 0:  # standard rules: no capture opposite an empty house
            board[store] += 1 + board[opposite]
            board[pit] = board[opposite] = 0
    south_empty = all(board[i] == 0 for i in own_houses(0))
    north_empty = all(board[i] == 0 for i in own_houses(1))
    if south_empty or north_empty:
        for p, st in ((0, SOUTH_STORE), (1, NORTH_STORE)):
            for i in own_houses(p):
                board[st] += board[i]
                board[i] = 0
        return board, next_player, True
    return board, next_player, False


def literal(board, player):
    """KGP board literal, with ' north' appended when North is to move."""
    south = [board[i] for i in own_houses(0)]
    north = [board[i] for i in own_houses(1)]
    text = "<%d,%d,%d,%s>" % (HOUSES, board[SOUTH_STORE], board[NORTH_STORE],
                              ",".join(str(x) for x in south + north))
    return text + (" north" if player == 1 else "")


def check_with_kalah(kalah, board, player, house, expected):
    """Compare one sowing with `kalah moves --json`; raise on any difference."""
    out = subprocess.run([kalah, "moves", literal(board, player), "--json"],
                         capture_output=True, text=True, check=True).stdout
    moves = {m["house"]: m for m in json.loads(out)["moves"]}
    if sorted(moves) != legal_houses(board, player):
        raise RuntimeError("legal moves differ at %s" % literal(board, player))
    new_board, next_player, over = expected
    got = moves[house]["position"]
    if over:
        # After the end the side to move is meaningless; compare the board part only.
        got = got.split()[0]
        want = literal(new_board, 0)
    else:
        want = literal(new_board, next_player)
    if got != want or moves[house]["game_over"] != over:
        raise RuntimeError("sowing %d at %s: kalah says %s, this script %s"
                           % (house, literal(board, player), got, want))


def sample_positions(targets, per_target, seed, max_games, kalah=None):
    """Random games from the start; keep the first position of each game at each target S."""
    found = {s: [] for s in targets}
    lowest = min(targets)
    for game in range(max_games):
        if all(len(found[s]) >= per_target for s in targets):
            break
        rng = random.Random("%d-%d" % (seed, game))
        board, player, plies, over = start_board(), 0, 0, False
        while not over and seeds_on_board(board) > lowest:
            house = rng.choice(legal_houses(board, player))
            result = sow(board, player, house)
            if kalah:
                check_with_kalah(kalah, board, player, house, result)
            board, player, over = result
            plies += 1
            s = seeds_on_board(board)
            if not over and s in found and len(found[s]) < per_target:
                if all(p["game"] != game for p in found[s]):
                    found[s].append({
                        "position": literal(board, player),
                        "game": game,
                        "plies": plies,
                        "seeds_on_board": s,
                        "to_move": "north" if player == 1 else "south",
                        "store_diff_mover": (board[SOUTH_STORE] - board[NORTH_STORE])
                                            * (1 if player == 0 else -1),
                    })
    return found


def run_kalah(cmd, timeout, niceness):
    """Run one solve of `kalah ... --json`; returns the fields of a result record."""
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=lambda: os.nice(niceness))
    except subprocess.TimeoutExpired:
        return {"timed_out": True, "wall_ms": round((time.monotonic() - started) * 1000)}
    wall_ms = round((time.monotonic() - started) * 1000)
    if proc.returncode != 0:
        return {"timed_out": False, "error": proc.stderr.strip()[-500:], "wall_ms": wall_ms}
    out = json.loads(proc.stdout)
    return {"timed_out": False, "nodes": out["nodes"], "ms": out["time_ms"], "wall_ms": wall_ms,
            "value": out["value"], "best": out["best"], "tt_mb": out.get("tt_mb"),
            "db_max_seeds": out.get("db_max_seeds")}


def db_options(db, level, tt_mb):
    # --long: the searches are meant to run (up to the timeout) even where the cost model
    # puts them past an hour.
    opts = ["--db", db, "--max-level", str(level), "--threads", "1", "--json", "--long"]
    return opts + (["--tt-mb", str(tt_mb)] if tt_mb else [])


def solve_position(kalah, db, level, tt_mb, position, timeout, niceness):
    """Exact value of a position and of each of its moves (`kalah analyze`)."""
    return run_kalah([kalah, "analyze", position] + db_options(db, level, tt_mb), timeout,
                     niceness)


def solve_start(kalah, db, level, tt_mb, seeds, timeout, niceness):
    """Exact value only of the start of Kalah(6, seeds) (`kalah solve --value-only`)."""
    return run_kalah([kalah, "solve", "--houses", str(HOUSES), "--seeds", str(seeds),
                      "--value-only"] + db_options(db, level, tt_mb), timeout, niceness)


def write(path, meta, records):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"meta": meta, "records": records}, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def describe(rec, timeout):
    if rec["timed_out"]:
        return "> %g s (timed out)" % timeout
    if "error" in rec:
        return "error: " + rec["error"]
    return "%d nodes, %d ms, value %+d" % (rec["nodes"], rec["ms"], rec["value"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kalah", help="path of the kalah binary")
    ap.add_argument("db", help="directory of the 6-house standard-rules endgame database levels")
    ap.add_argument("-o", "--output", default="kalah66-subtrees.json")
    ap.add_argument("--levels", default="32,28,24", help="max levels K, comma-separated")
    ap.add_argument("--targets", default=",".join(str(s) for s in range(34, 67, 2)),
                    help="seeds on board S to sample, comma-separated")
    ap.add_argument("--per-target", type=int, default=5, help="positions per S")
    ap.add_argument("--max-above", type=int, default=32,
                    help="leave out the (S, K) pairs with S - K above this")
    ap.add_argument("--starts", default="3,4,5",
                    help="calibration: Kalah(6,n) starts to solve both ways, comma-separated "
                         "n ('' for none)")
    ap.add_argument("--seed", type=int, default=66, help="seed of the random games")
    ap.add_argument("--max-games", type=int, default=10000, help="random games at most")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per solve")
    ap.add_argument("--skip-after", type=float, default=45,
                    help="seconds: a slower solve (or a timeout) stops larger S at that K")
    ap.add_argument("--budget", type=float, default=80, help="minutes; no solve starts later")
    ap.add_argument("--tt-mb", type=int, default=None,
                    help="transposition table MiB for every solve (default: kalah's own choice)")
    ap.add_argument("--nice", type=int, default=19, help="niceness of the solves")
    ap.add_argument("--no-verify", action="store_true",
                    help="do not check the sowing against `kalah moves`")
    ap.add_argument("--sample-only", action="store_true", help="print the sample and stop")
    ap.add_argument("--append", action="store_true",
                    help="add to the records already in --output (more K or S later), "
                         "leaving out the solves found there")
    args = ap.parse_args()

    try:
        levels = sorted({int(x) for x in args.levels.split(",")}, reverse=True)
        targets = sorted({int(x) for x in args.targets.split(",")})
        starts = sorted({int(x) for x in args.starts.split(",") if x.strip()})
    except ValueError:
        ap.error("--levels, --targets and --starts take whole numbers, comma-separated")
    bounds = [(levels, 0, 64, "--levels"), (targets, 1, 72, "--targets"), (starts, 1, 6, "--starts"),
              ([args.per_target], 1, 1000, "--per-target"), ([args.max_games], 1, 10**6, "--max-games"),
              ([args.max_above], 0, 72, "--max-above"), ([args.timeout], 1, 86400, "--timeout"),
              ([args.skip_after], 0, 86400, "--skip-after"), ([args.budget], 0, 10080, "--budget"),
              ([args.nice], 0, 19, "--nice")]
    for values, low, high, name in bounds:
        if any(not low <= v <= high for v in values):
            ap.error("%s must be within %g..%g" % (name, low, high))
    if args.tt_mb is not None and not 1 <= args.tt_mb <= 1 << 20:
        ap.error("--tt-mb must be within 1..1048576")
    sample = sample_positions(targets, args.per_target, args.seed, args.max_games,
                              None if args.no_verify else args.kalah)
    if args.sample_only:
        json.dump(sample, sys.stdout, indent=1)
        print()
        return

    meta = {"kalah": args.kalah, "db": args.db, "levels": levels, "targets": targets,
            "per_target": args.per_target, "starts": starts, "seed": args.seed,
            "timeout_s": args.timeout, "max_above": args.max_above, "tt_mb_option": args.tt_mb,
            "skip_after_s": args.skip_after, "budget_min": args.budget,
            "sample_command": "kalah analyze POS --db DB --max-level K --threads 1 --json",
            "start_commands": ["kalah solve --houses 6 --seeds n --value-only --db DB "
                               "--max-level K --threads 1 --json", "kalah analyze START ..."],
            "sample": sample}
    records = []
    runs = []
    if args.append and os.path.exists(args.output):
        with open(args.output) as f:
            old = json.load(f)
        records, runs = old["records"], old["meta"].get("runs", [])
        for s, positions in old["meta"]["sample"].items():  # same seed: same games
            meta["sample"].setdefault(int(s), positions)
    meta["runs"] = runs + [{"argv": sys.argv[1:], "started": time.strftime("%Y-%m-%d %H:%M:%S"),
                            "records_before": len(records)}]
    deadline = time.monotonic() + args.budget * 60

    def too_slow(rec):
        return rec["timed_out"] or rec["wall_ms"] > args.skip_after * 1000

    def measure(base, command, level):
        """Run one solve (unless --append found it done already), record it, say if too slow."""
        for old in records:
            if (old["position"], old["max_level"], old["command"], old.get("tt_mb_option")) \
                    == (base["position"], level, command, args.tt_mb):
                return too_slow(old)
        rec = dict(base, command=command, tt_mb_option=args.tt_mb)
        if command == "analyze":
            rec.update(solve_position(args.kalah, args.db, level, args.tt_mb, base["position"],
                                      args.timeout, args.nice))
        else:
            rec.update(solve_start(args.kalah, args.db, level, args.tt_mb,
                                   base["seeds_on_board"] // (2 * HOUSES), args.timeout,
                                   args.nice))
        records.append(rec)
        write(args.output, meta, records)
        print("K=%d S=%d %s %s: %s" % (level, rec["seeds_on_board"], command, rec["position"],
                                       describe(rec, args.timeout)), flush=True)
        return too_slow(rec)

    # One group of solves per (S, K): the sampled positions, or a start of Kalah(6,n) solved
    # both ways (the root value alone, then every move) to calibrate `analyze` against
    # `solve --value-only`. Easiest first: by S - K, then K from the top. Once a sampled
    # solve at some K is too slow, larger S are not tried at that K.
    groups = [(s, level, "sample") for level in levels for s in targets]
    groups += [(2 * HOUSES * n, level, "start") for level in levels for n in starts]
    groups = sorted((g for g in groups if g[1] < g[0] <= g[1] + args.max_above),
                    key=lambda g: (g[0] - g[1], -g[1], g[2]))
    stopped = set()
    for s, level, kind in groups:
        if time.monotonic() > deadline:
            break
        if kind == "start":
            n = s // (2 * HOUSES)
            start = [n] * PITS
            start[SOUTH_STORE] = start[NORTH_STORE] = 0
            base = {"position": literal(start, 0), "plies": 0, "seeds_on_board": s,
                    "max_level": level, "above": s - level, "store_diff_mover": 0,
                    "sample": "start of Kalah(6,%d)" % n}
            if not measure(base, "solve --value-only", level):
                measure(base, "analyze", level)  # else it would take several times longer
            continue
        if level in stopped:
            continue
        slow = False
        for pos in sample[s]:
            if time.monotonic() > deadline:
                break
            base = {"position": pos["position"], "plies": pos["plies"], "seeds_on_board": s,
                    "max_level": level, "above": s - level,
                    "store_diff_mover": pos["store_diff_mover"],
                    "sample": "random game %d" % pos["game"]}
            slow |= measure(base, "analyze", level)
        if slow:
            stopped.add(level)
            print("K=%d: no S above %d (a solve took over %g s)" % (level, s, args.skip_after),
                  flush=True)
    meta["budget_left"] = time.monotonic() <= deadline
    write(args.output, meta, records)
    done = [r for r in records if "nodes" in r]
    print("%d solves done, %d timed out" % (len(done),
                                            sum(1 for r in records if r["timed_out"])))


if __name__ == "__main__":
    main()
