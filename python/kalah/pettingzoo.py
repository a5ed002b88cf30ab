"""A PettingZoo AEC environment of Kalah(m, n) whose ``info`` carries perfect play.

>>> from kalah.pettingzoo import env
>>> e = env(houses=6, seeds=4)
>>> e.reset(seed=0)
>>> obs, reward, terminated, truncated, info = e.last()
>>> sorted(info)
['move_values', 'value']

Agents ``player_0`` (South, moves first) and ``player_1`` (North). An action is a house index,
0 to m-1, of the agent to move; an extra turn keeps the same agent selected. Observations are
from the agent's own side: ``observation`` holds its houses 1..m, its store, the opponent's
houses 1..m, the opponent's store; ``action_mask`` marks the houses that hold seeds.

Rewards come at the end: +1, 0 or -1 (``reward="win"``, the default), or the final store
difference (``reward="margin"``). Each agent's ``info``, when it is to move, holds ``value``
(its exact value, stores included) and ``move_values`` (``{action: value}``) wherever the
endgame databases, the opening books (the shipped ones and the checked ledgers of the
database directory) or a search within ``budget`` seconds reach, else ``None`` and ``{}``: an
agent can be trained or graded against perfect play.

Needs ``pettingzoo`` and ``gymnasium`` (``pip install pettingzoo``).
"""

from typing import Any, Optional

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from ._kalah import Position, Tablebase, solve

AGENTS = ["player_0", "player_1"]


def env(**kwargs: Any) -> "KalahEnv":
    """The environment (see the module docs for the arguments of ``KalahEnv``)."""
    return KalahEnv(**kwargs)


class KalahEnv(AECEnv):
    """Kalah(houses, seeds) under ``rules``; ``db`` as for ``kalah.solve`` (``None``: the
    database home's levels, if any; a path; ``False``: none); ``budget``: seconds a search
    beyond the levels and the books may take for ``info`` (0: no search)."""

    metadata = {"name": "kalah_v0", "render_modes": ["ansi", "human"], "is_parallelizable": False}

    def __init__(
        self,
        houses: int = 6,
        seeds: int = 4,
        rules: str = "standard",
        db: Any = None,
        budget: float = 0.05,
        reward: str = "win",
        render_mode: Optional[str] = None,
    ) -> None:
        super().__init__()
        if reward not in ("win", "margin"):
            raise ValueError(f"reward must be 'win' or 'margin', not {reward!r}")
        if not (0 <= budget <= 3600):
            raise ValueError(f"budget must be 0 to 3600 seconds, not {budget}")
        self.houses, self.seeds, self.rules = houses, seeds, rules
        self._start = Position.start(houses, seeds, rules)
        self._db = db
        self._tablebase = self._open(db)
        self._budget = budget
        self._reward_kind = reward
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        total = 2 * houses * seeds
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(0, total, (2 * houses + 2,), dtype=np.int32),
                    "action_mask": spaces.Box(0, 1, (houses,), dtype=np.int8),
                }
            )
            for a in AGENTS
        }
        self.action_spaces = {a: spaces.Discrete(houses) for a in AGENTS}

    def _open(self, db: Any) -> Optional[Tablebase]:
        if db is False:
            return None
        try:
            tb = Tablebase(db) if db is not None else Tablebase()
            tb.max_level(self.houses, self.rules)
            return tb
        except Exception:
            if db is not None:
                raise
            return None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def _agent_of(self, side: Optional[str]) -> str:
        return AGENTS[0] if side == "south" else AGENTS[1]

    def _perfect(self) -> dict:
        """The exact value and each move's value for the side to move, where they reach."""
        p = self._position
        if p.is_over():
            return {"value": None, "move_values": {}}
        s = None
        if self._tablebase is not None:
            s = self._tablebase.analyze(p)
        if (s is None or s.value is None) and self._budget > 0:
            try:
                s = solve(p, db=self._db if self._tablebase is not None else False,
                          time_limit=self._budget, threads=1)
            except TimeoutError:
                s = None
        if s is None:
            return {"value": None, "move_values": {}}
        # The moves whose value is known (the ledgers may know some of them only by bounds).
        moves = {h - 1: v for h, v in s.moves.items() if v is not None}
        return {"value": s.value, "move_values": moves}

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        self.agents = list(self.possible_agents)
        self._position = self._start
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {"value": None, "move_values": {}} for a in self.agents}
        self.agent_selection = AGENTS[0]
        self.infos[self.agent_selection] = self._perfect()

    def observe(self, agent: str) -> dict:
        pits = self._position.to_list()
        m = self.houses
        if agent == AGENTS[1]:
            pits = pits[m + 1 :] + pits[: m + 1]
        mask = np.zeros(m, dtype=np.int8)
        if self._agent_of(self._position.to_move) == agent and not self._position.is_over():
            for h in self._position.moves():
                mask[h - 1] = 1
        return {"observation": np.array(pits, dtype=np.int32), "action_mask": mask}

    def step(self, action: Optional[int]) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None or not (0 <= int(action) < self.houses) or int(action) + 1 not in self._position.moves():
            raise ValueError(f"{agent}: action {action} is not a legal move (see the action mask)")
        self._cumulative_rewards[agent] = 0
        self._position = self._position.play(int(action) + 1)
        self.rewards = {a: 0 for a in self.agents}
        if self._position.is_over():
            margin = self._position.outcome()
            south = margin if self._reward_kind == "margin" else int(np.sign(margin))
            self.rewards = {AGENTS[0]: south, AGENTS[1]: -south}
            self.terminations = {a: True for a in self.agents}
            self.infos = {a: {"value": None, "move_values": {}} for a in self.agents}
        else:
            self.agent_selection = self._agent_of(self._position.to_move)
            self.infos = {a: {"value": None, "move_values": {}} for a in self.agents}
            self.infos[self.agent_selection] = self._perfect()
        self._accumulate_rewards()
        if self.render_mode == "human":
            print(self.render())

    def render(self) -> Optional[str]:
        if self.render_mode is None:
            return None
        return str(self._position)

    def close(self) -> None:
        pass
