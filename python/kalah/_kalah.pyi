"""Type stubs of the compiled part of ``kalah`` (see ``kalah/__init__.py``)."""

from os import PathLike
from typing import Any, Callable, Literal, Optional, Union

import numpy as np
import numpy.typing as npt

Rules = Literal["standard", "empty-capture"]
Side = Literal["south", "north"]

class DatabaseError(Exception):
    """A level of the endgame databases is missing, damaged or changed while in use: no value
    is given from it."""

class Position:
    """A Kalah position: both sides' houses and stores, the side to move, the capture rule.

    Immutable and hashable; ``play`` returns a new position."""

    def __init__(self, literal: str, rules: Rules = "standard", to_move: Optional[Side] = None) -> None:
        """From a KGP literal ``<m,south_store,north_store,s_1..s_m,n_1..n_m>``, optionally
        followed by `` north``. ``ValueError`` if it is not a valid position."""
    @staticmethod
    def start(houses: int, seeds: int, rules: Rules = "standard") -> "Position":
        """The start of Kalah(houses, seeds), South to move."""
    @staticmethod
    def from_list(pits: list[int], to_move: Optional[Side] = "south", rules: Rules = "standard") -> "Position":
        """From ``2m + 2`` counts in sowing order: South's houses 1..m, South's store, North's
        houses 1..m, North's store."""
    @staticmethod
    def from_openspiel(state: Any) -> "Position":
        """From an OpenSpiel ``mancala`` state (Kalah(6,4), standard rules; player 0 is South)."""
    def moves(self) -> list[int]:
        """The legal moves: houses 1..m of the side to move that hold seeds."""
    def play(self, house: int) -> "Position":
        """The position after sowing ``house``; ``ValueError`` if it is not a legal move."""
    def is_over(self) -> bool:
        """Whether a side has no seeds left in its houses."""
    @property
    def to_move(self) -> Optional[Side]:
        """``'south'``, ``'north'``, or ``None`` once the game is over."""
    @property
    def literal(self) -> str:
        """The KGP literal (`` north`` appended when North is to move)."""
    @property
    def rules_name(self) -> Rules: ...
    @property
    def houses(self) -> int: ...
    @property
    def seeds_on_board(self) -> int: ...
    def to_list(self) -> list[int]:
        """The counts as ``from_list`` takes them."""
    def outcome(self) -> Optional[int]:
        """South's final margin once the game is over, else ``None``."""

class Solution:
    """What is known of a position, as ``kalah query --json`` says it: its value (or bounds on
    it), each move's value (or bounds), a perfect line as far as it is known, where they came
    from and whether they are certified (every ledger fact they rest on proven again by
    another path; values from the levels or a search are exact but not certified)."""

    value: Optional[int]
    """Final store difference for the side to move, stores included (South's margin once the
    game is over); ``None`` where only its bounds are known (``Tablebase.analyze`` of a
    position the ledgers bound)."""
    lower: int
    """The value's bounds (both ``value`` when it is known)."""
    upper: int
    certified: bool
    """Whether the value rests on ledger facts each proven again by another path."""
    moves: dict[int, Optional[int]]
    """Each legal move's value for the side to move; ``None`` where only bounds are known."""
    bounds: dict[int, tuple[int, int]]
    """Each legal move's bounds ``(lower, upper)``."""
    move_certified: dict[int, bool]
    """Whether each legal move's bounds are certified."""
    best: list[int]
    """The moves proven worth ``value``, lowest house first."""
    maybe_best: list[int]
    """The moves whose bounds reach ``value`` without proving it."""
    pv: list[str]
    """A perfect game, one turn a string (``"3-6"``: 3, then 6 after the extra turn), as far as
    it is known."""
    pv_complete: bool
    """Whether ``pv`` reaches the end of the game."""
    to_move: Optional[Side]
    source: Literal["database", "ledger", "search", "end"]
    not_searched: Optional[str]
    """Why a search some move's value needed was not done or not finished, else ``None``."""

def solve(
    position: Position,
    *,
    rules: Optional[Rules] = None,
    threads: Optional[int] = None,
    db: Union[None, bool, str, PathLike[str]] = None,
    time_limit: Optional[float] = None,
    tt_mb: Optional[int] = None,
    book: bool = True,
    long: bool = False,
) -> Solution:
    """Solves ``position``: what ``kalah query`` answers, from the levels, the opening books and
    proof ledgers, then a search.

    ``book``: read the books and ledgers built into kalah (Kalah(6,4) and (6,5), both rules,
    and the campaigns of Kalah(6,5) and (6,6)) and the checked ledgers of the database
    directory, as ``kalah query`` reads them (``source == "ledger"``); ``False`` searches
    instead. Where they prove the value but not every move's, the answer gives the other moves'
    bounds (``value`` exact, some ``moves`` ``None``; ``not_searched`` says why).

    ``db``: ``None`` uses the database home's levels for this board if it has any, a path
    those of that directory (an error if it has none), ``False`` none. ``threads``: all cores by
    default. ``time_limit`` (seconds, counted from the call): the search stops there, and
    without the value ``TimeoutError`` is raised, never a guess. Without a time limit, a search
    the cost model puts past an hour is not started (``TimeoutError`` unless the ledgers know
    the value) unless ``long``. Ctrl-C raises ``KeyboardInterrupt``. A damaged level raises
    ``DatabaseError``. ``rules``: solve the same board under these rules instead of the
    position's own."""

class Tablebase:
    """The endgame databases of a directory (the database home by default), opened per board
    size and rule set on first use."""

    def __init__(self, dir: Union[None, str, PathLike[str]] = None) -> None: ...
    @property
    def dir(self) -> str: ...
    def max_level(self, houses: int, rules: Rules = "standard") -> int:
        """The top level (seeds on the board) held; ``DatabaseError`` if none."""
    def value(self, position: Position) -> Optional[int]:
        """The exact value for the side to move, stores included; ``None`` above the top level."""
    def analyze(self, position: Position, *, book: bool = True) -> Optional[Solution]:
        """What the levels (``source`` ``"database"``), else the opening books and ledgers
        (``"ledger"``: the shipped ones and the checked ledgers of the directory, as ``solve``
        reads them; ``book=False`` reads none) know of ``position``, with no search: its value
        or only its bounds (``value`` ``None``), each move's; ``None`` where neither knows
        anything. A board size the directory has no levels for is a ``DatabaseError`` unless
        the books know something."""
    def values(self, boards: npt.ArrayLike, rules: Rules = "standard") -> npt.NDArray[np.int32]:
        """The values of many boards at once, in parallel and without the GIL.

        ``boards``: an (N, 2m+2) array of integer counts, each row as seen by the side to
        move: its houses 1..m, its store, the opponent's houses 1..m, the opponent's store.
        Returns the N values (``int32``: every value a game of up to 65535 seeds can have)
        for the side to move, stores included. Counts are checked as ``Position.from_list``
        checks them, never wrapped or rounded: a float or boolean array, a negative count,
        a count or a row of more than 65535 seeds is a ``ValueError`` naming the row (and
        column); so is the first row that lies above the top level."""

def build_db(
    houses: int,
    max_seeds: int,
    rules: Rules = "standard",
    dir: Union[None, str, PathLike[str]] = None,
    progress: Optional[Callable[[int, int, int, bool], Any]] = None,
    threads: Optional[int] = None,
) -> str:
    """Builds the levels 0..max_seeds (the database home by default) and returns the directory.

    Levels already there are checked and kept. ``progress(level, done, total, finished)`` is
    called from the calling thread as the build goes; an exception it raises, or Ctrl-C, stops
    the build (the finished levels stay)."""
