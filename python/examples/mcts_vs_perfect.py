#!/usr/bin/env python3
"""How far OpenSpiel's MCTS bot plays from perfect play on Kalah(6,4) (OpenSpiel's `mancala`).

For each simulation count, MCTS plays itself GAMES times (random rollouts, UCT constant 2);
every move it makes is valued exactly by kalah (the endgame levels of the database home, or
--db, the opening books, and the search above them): the seeds it loses against the best
move. Prints each game as it ends (on stderr, with the share of positions searched rather
than looked up), then the mean loss a move and the share of perfect moves for each count,
and saves a plot (PNG).

Usage: python examples/mcts_vs_perfect.py [--sims 10 100 1000] [--games 4] [--db DIR]
                                          [--out mcts-vs-perfect.png] [--seed 1]
Needs: pip install ./python open_spiel matplotlib (and the 6-house levels, say 0..24:
`kalah db build --houses 6 --max-seeds 24`, for positions answered in well under a second).
"""

import argparse
import os
import sys
import time

import numpy as np

import kalah


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, nargs="+", default=[10, 100, 1000])
    ap.add_argument("--games", type=int, default=4)
    ap.add_argument("--db")
    ap.add_argument("--out", default="mcts-vs-perfect.png")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if not (1 <= a.games <= 10_000) or any(not (1 <= s <= 1_000_000) for s in a.sims):
        ap.error("--games 1..10000, --sims 1..1000000 each")

    import pyspiel
    from open_spiel.python.algorithms import mcts

    game = pyspiel.load_game("mancala")
    tb = kalah.Tablebase(a.db)
    db = a.db if a.db else None
    memo = {}
    searched = [0, 0.0]

    def move_values(p):
        if p not in memo:
            s = tb.analyze(p)
            if s is None:
                t = time.monotonic()
                s = kalah.solve(p, db=db)
                searched[0] += 1
                searched[1] += time.monotonic() - t
            memo[p] = s.moves
        return memo[p]

    results = {}
    for sims in a.sims:
        rng = np.random.RandomState(a.seed)
        bot = mcts.MCTSBot(game, 2.0, sims, mcts.RandomRolloutEvaluator(1, rng), random_state=rng)
        losses = []
        started = time.monotonic()
        for g in range(a.games):
            state = game.new_initial_state()
            while not state.is_terminal():
                p = kalah.Position.from_openspiel(state)
                action = bot.step(state)
                house = action if action <= 6 else action - 7
                values = move_values(p)
                losses.append(max(values.values()) - values[house])
                state.apply_action(action)
            print(f"  MCTS {sims}: game {g + 1}/{a.games} over, {len(losses)} moves valued, "
                  f"{searched[0]} positions searched so far ({searched[1]:.0f} s), "
                  f"{time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
        results[sims] = np.array(losses)
        l = results[sims]
        print(f"MCTS {sims:>7} simulations: {len(l)} moves in {a.games} games, "
              f"{l.mean():.2f} seeds lost a move, {np.mean(l == 0):.0%} perfect moves, "
              f"worst {l.max()} ({time.monotonic() - started:.0f} s)", flush=True)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    sims = list(results)
    ax.plot(sims, [results[s].mean() for s in sims], "o-", color="tab:blue")
    ax.set_xscale("log")
    ax.set_xlabel("MCTS simulations a move (OpenSpiel, random rollouts)")
    ax.set_ylabel("seeds lost a move (mean)", color="tab:blue")
    ax.set_ylim(bottom=0)
    share = ax.twinx()
    share.plot(sims, [100 * np.mean(results[s] == 0) for s in sims], "s--", color="tab:orange")
    share.set_ylabel("perfect moves (%)", color="tab:orange")
    share.set_ylim(0, 100)
    ax.set_title(f"OpenSpiel MCTS against perfect play, Kalah(6,4), {a.games} self-play games")
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print(f"plot: {os.path.abspath(a.out)}")


if __name__ == "__main__":
    main()
