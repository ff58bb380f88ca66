"""Gymnasium environment ``TienGow-v0``: one learning seat against opponent policies.

``gymnasium.make("TienGow-v0", rules="standard", seat=0, opponents=None, hands=1,
reward_scale=1.0)`` (registered by ``import tiengow_env``). Actions, observations, rewards,
episodes and seeds are those of the AEC env (``env.py``), seen from the learning seat:

* ``observation_space``: ``Box`` of D float32 (``observation.py``), the learning seat's view;
* ``action_space``: ``Discrete(A)``, the core's action ids. ``info["action_mask"]`` (int8,
  for ``action_space.sample(mask=...)``) and ``action_masks()`` (bool, the sb3-contrib
  ``MaskablePPO`` convention) give the legal ones. ``action_space.sample()`` with no mask
  returns a ``SampledAction``: a uniformly random legal action of the current decision (so
  plain random agents work), which, stepped at another decision, stands for the legal
  action of the same rank there (as Gymnasium's ``check_env`` needs: it samples before it
  resets);
* reward: the chips paid to the learning seat (times ``reward_scale``) from its previous
  decision up to this one, opponents' decisions included. Chips paid before its first
  decision of an episode come with its first step;
* an illegal action (any other integer outside the mask) raises ``ValueError`` and changes
  nothing.

``opponents`` gives the other seats' policies: None (uniformly random legal actions drawn
from ``env.np_random``), one callable for every opponent, or a list / dict per seat. A policy
is called as ``policy(observation, action_mask) -> action`` with that seat's own observation.

``reset(seed=s)`` deals ``Game(seed=s)``'s hand and seeds ``np_random`` (the random
opponents) with s. If an episode ends before the learning seat's first decision (a One Red
Dot declared at the deal, or by an opponent under ``one_red_dot: choice``), the next
episode is dealt from the same generator and the chips carry into the first reward. At the end
of an episode ``info["episode_chips"]`` gives every seat's chips in it, those carried in
included, so that the learning seat's entry is the sum of its rewards (over ``reward_scale``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .checks import check_reset_options, check_seed, is_integer, short_repr
from .env import RENDER_MODES, Session
from .layout import ENV_ILLEGAL

Policy = Callable[[np.ndarray, np.ndarray], int]


class SampledAction(int):
    """An action drawn by ``LegalDiscrete.sample()`` without a mask: a uniformly random legal
    action of the decision it was drawn at, which keeps its uniform draw ``draw`` in [0, 1).

    Stepped at another decision, where that id may not be legal, it stands for the legal
    action of the same rank there: ``legal[int(draw * len(legal))]``. Gymnasium's
    ``check_env`` does just that (it samples, then resets with a seed, then steps).
    """

    def __new__(cls, value: int, draw: float) -> SampledAction:
        if not (isinstance(draw, (float, int)) and not isinstance(draw, bool) and 0 <= draw < 1):
            raise ValueError(f"a SampledAction's draw is a number in [0, 1), got {short_repr(draw)}")
        action = super().__new__(cls, value)
        action.draw = float(draw)
        return action

    def __getnewargs__(self) -> tuple[int, float]:  # copy and pickle
        return int(self), self.draw

    def resolve(self, mask: np.ndarray) -> int:
        """The id this sample stands for at the decision whose legal mask is ``mask`` (its own
        id, if that is legal or not an action id at all: the step refuses it then)."""
        if not 0 <= int(self) < len(mask) or mask[int(self)]:
            return int(self)
        legal = np.flatnonzero(mask)
        return int(legal[int(self.draw * len(legal))]) if len(legal) else int(self)


class LegalDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose ``sample()`` without a mask draws among the legal actions of the
    env's current decision (``legal`` is the env's int8 mask, updated in place) and returns
    a ``SampledAction`` (any id when there is no decision). With a mask or probabilities it
    is ``Discrete.sample``."""

    def __init__(self, n: int, legal: np.ndarray, seed: int | None = None):
        super().__init__(n, seed=seed)
        self._legal = legal

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None) -> np.int64:
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        draw = float(self.np_random.random())
        legal = np.flatnonzero(self._legal)
        if len(legal) == 0:  # no decision now (the episode is over): any id, resolved when stepped
            return SampledAction(self.start + int(draw * self.n), draw)
        return SampledAction(int(legal[int(draw * len(legal))]), draw)


class TienGowEnv(gym.Env):
    """One learning seat of Tien Gow against opponent policies (module docstring)."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 1}

    def __init__(
        self,
        rules: Any = "standard",
        seat: int = 0,
        opponents: Any = None,
        hands: int = 1,
        reward_scale: float = 1.0,
        render_mode: str | None = None,
    ):
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None, 'ansi', 'human' or 'rgb_array', got {short_repr(render_mode)}")
        self.render_mode = render_mode
        self.session = Session(rules, hands, reward_scale)
        players = self.session.players
        if type(seat) is not int or not 0 <= seat < players:
            raise ValueError(f"seat must be a seat 0..{players - 1}, got {short_repr(seat)}")
        self.seat = seat
        self.opponents = self._opponent_policies(opponents)
        low, high = self.session.bounds()
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        self._obs = np.zeros(self.session.observation_size, dtype=np.float32)
        self._mask = np.zeros(self.session.num_actions, dtype=np.int8)
        self._opp_obs = np.zeros_like(self._obs)
        self._opp_mask = np.zeros_like(self._mask)
        self.action_space = LegalDiscrete(self.session.num_actions, self._mask)
        self._carry = 0  # chips paid to the learning seat before its first decision
        self._carried = np.zeros(self.session.players, dtype=np.int64)  # every seat's, of the episodes skipped
        self._terminated = True
        self._refusal = "call reset() before the first step"  # why step() cannot go on, or None

    def _opponent_policies(self, opponents: Any) -> dict[int, Policy | None]:
        """Seat -> policy (None: the built-in uniformly random policy)."""
        others = [s for s in range(self.session.players) if s != self.seat]
        if opponents is None:
            return dict.fromkeys(others)
        if callable(opponents):
            return dict.fromkeys(others, opponents)
        if isinstance(opponents, Mapping):
            chosen = dict(opponents)
            unknown = [s for s in chosen if not is_integer(s) or s not in others]  # True == 1 == 1.0: refused
            if unknown:
                raise ValueError(
                    f"opponents: {short_repr(unknown[0])} is not an opponent's seat; the keys are "
                    f"the seats {', '.join(map(str, others))}"
                )
        elif isinstance(opponents, Sequence) and not isinstance(opponents, str):
            if len(opponents) not in (len(others), self.session.players):
                raise ValueError(
                    f"opponents must list {len(others)} policies (the other seats in order) "
                    f"or {self.session.players} (one per seat), got {len(opponents)}"
                )
            seats = others if len(opponents) == len(others) else range(self.session.players)
            chosen = dict(zip(seats, opponents, strict=True))
        else:
            raise ValueError(
                f"opponents must be None, a policy, or a list or dict of policies, got {type(opponents).__name__}"
            )
        out = {}
        for s in others:
            policy = chosen.get(s)
            if policy is not None and not callable(policy):
                raise ValueError(f"the policy for seat {s} is not callable: {short_repr(policy)}")
            out[s] = policy
        return out

    # ----------------------------------------------------------------- Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        check_reset_options(options)
        if seed is not None:
            check_seed(seed)  # a ValueError here, not gymnasium's own error type
            seed = int(seed)
        super().reset(seed=seed)
        session = self.session
        if seed is None and not session.seeded:
            seed = int(self.np_random.integers(2**63))
        session.reset(seed)
        self._carry = 0
        self._carried.fill(0)
        self._terminated, self._refusal = False, None
        self._carry = self._play_opponents(before_first_decision=True)
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._refusal is not None:
            raise ValueError(self._refusal)
        session = self.session
        if isinstance(action, SampledAction):
            action = action.resolve(self._mask)
        if session.step(action) < 0:  # not legal: nothing has changed
            raise ValueError(session.illegal_message(int(action)))
        chips = int(session.delta[self.seat]) + self._carry
        self._carry = 0
        chips += self._play_opponents(before_first_decision=False)
        self._terminated = session.episode_over
        if self._terminated:
            self._refusal = "the episode is over; call reset()"
        if self.render_mode == "human":
            self.render()
        return self._observation(), chips * session.reward_scale, self._terminated, False, self._info()

    def information_state(self) -> np.ndarray:
        """The learning seat's perfect-recall information-state vector (``observation.py``)."""
        if not self.session.seeded:
            raise ValueError("call reset() before information_state()")
        return self.session.information_state(self.seat)

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learning seat as a bool vector (sb3-contrib MaskablePPO)."""
        return self._mask.astype(bool)

    def render(self) -> str | np.ndarray | None:
        """``ansi``: the table as text; ``human``: that text printed; ``rgb_array``: a picture
        of the table (``picture.py``)."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; use render_mode='ansi', 'human' or 'rgb_array'")
            return None
        if not self.session.seeded:
            raise ValueError("call reset() before render()")
        if self.render_mode == "rgb_array":
            return self.session.render_rgb()
        names = [f"player_{s}" + (" (learner)" if s == self.seat else "") for s in range(self.session.players)]
        text = self.session.render_text(names)
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    # ----------------------------------------------------------------- internals
    def _play_opponents(self, before_first_decision: bool) -> int:
        """Let the opponents decide until the learning seat is to act or the episode is over;
        return the chips paid to the learning seat meanwhile. If an opponent's policy fails, the
        error goes on to the caller, and the episode cannot go on (``step`` refuses until
        ``reset``): the learner's action and the moves before the failure stand, half a turn."""
        try:
            return self._opponents_until_learner(before_first_decision)
        except Exception:
            self._terminated = True
            self._refusal = (
                "an opponent's policy failed during the last call, so this episode cannot go on; call reset()"
            )
            self._mask.fill(0)
            raise

    def _opponents_until_learner(self, before_first_decision: bool) -> int:
        session = self.session
        chips = 0
        while True:
            if session.episode_over:
                if not before_first_decision:
                    return chips
                self._carried += session.episode_chips[: session.players]
                session.reset(None)  # the learning seat never decided: deal on
                continue
            seat = session.to_act
            if seat == self.seat:
                return chips
            policy = self.opponents[seat]
            session.observe(seat, self._opp_obs, self._opp_mask)
            if policy is None:
                legal = np.flatnonzero(self._opp_mask)
                session.step(int(legal[self.np_random.integers(len(legal))]))
            else:
                try:
                    action = policy(self._opp_obs.copy(), self._opp_mask.copy())
                except Exception as err:
                    err.add_note(f"raised by the opponent policy at seat {seat}")
                    raise
                try:
                    status = session.step(action)
                except ValueError as err:
                    raise ValueError(f"the opponent at seat {seat}: {err}") from None
                if status == ENV_ILLEGAL:
                    raise ValueError(f"the opponent at seat {seat}: {session.illegal_message(int(action))}")
            chips += int(session.delta[self.seat])

    def _observation(self) -> np.ndarray:
        self.session.observe(self.seat, self._obs, self._mask)
        return self._obs.copy()

    def _info(self) -> dict:
        info: dict[str, Any] = {"action_mask": self._mask.copy()}
        if self._terminated:
            info["episode_chips"] = self.session.episode_chips[: self.session.players] + self._carried
        return info


__all__ = ["TienGowEnv", "LegalDiscrete", "SampledAction"]
