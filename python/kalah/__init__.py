"""Exact values of Kalah (mancala) positions, for the people who train and grade agents.

A thin layer over the kalah solver and its endgame databases (written in Rust): positions,
exact solves, database lookups one at a time or by the million, database builds.

>>> import kalah
>>> p = kalah.Position.start(4, 3)
>>> kalah.solve(p, db=False).value
6

Values are final store differences for the side to move, stores included, under perfect play
(once the game is over: South's margin). See ``help(kalah.Position)``, ``help(kalah.solve)``,
``help(kalah.Tablebase)`` and ``help(kalah.build_db)``; ``kalah.pettingzoo`` is a PettingZoo
environment whose ``info`` carries perfect play (``pip install pettingzoo``).
"""

from ._kalah import DatabaseError, Position, Solution, Tablebase, build_db, solve

__all__ = ["DatabaseError", "Position", "Solution", "Tablebase", "build_db", "solve"]
__version__ = "0.1.0"
