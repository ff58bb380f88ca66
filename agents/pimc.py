"""``pimc[:samples]``: a determinized Monte-Carlo search bot.

At each decision it samples ``samples`` deals of the tiles it cannot see, consistent with
everything it has seen (``tiengow_env.search``), plays every legal action out to the end of
the hand with a fast default policy inside compiled code (``greedy`` by default, or
``random``), and takes the action with the best mean chips. With one legal action it does
not search.
"""
from __future__ import annotations

import numpy as np

from tiengow_env.game import Game
from tiengow_env.rules import RuleSet
from tiengow_env.search import pimc_values

from .base import Agent

DEFAULT_SAMPLES = 32


class PimcAgent(Agent):
    name = "pimc"
    uses_game = True

    def __init__(self, rules: RuleSet, seed: int = 0, samples: int = DEFAULT_SAMPLES, policy: str = "greedy"):
        super().__init__(rules, seed)
        self.samples = samples
        self.policy = policy

    def act(self, observation: np.ndarray, mask: np.ndarray, game: Game | None = None) -> int:
        if game is None:
            raise ValueError("the pimc agent searches: call act(observation, mask, game=game)")
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        actions, values = self._search(game)
        return int(actions[int(np.argmax(values))])

    def explain(self, observation: np.ndarray, mask: np.ndarray, game: Game | None = None) -> dict | None:
        """The mean chips of each legal action over the sampled worlds. The random state is put
        back, so that ``act`` next searches the same worlds and takes the best value shown."""
        if game is None:
            return None
        state = self.rng.bit_generator.state
        actions, values = self._search(game)
        self.rng.bit_generator.state = state
        return {"kind": "values", "actions": actions.tolist(), "values": values.tolist()}

    def _search(self, game: Game) -> tuple[np.ndarray, np.ndarray]:
        return pimc_values(game, self.samples, self.policy, int(self.rng.integers(2**63)))

    def act_batch(self, observations, masks):
        raise ValueError("the pimc agent searches one game at a time: use act(..., game=game)")
