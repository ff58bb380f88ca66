"""``VectorEnv``: N hands of Tien Gow stepped together inside compiled code.

One ``step(actions)`` is one call of ``_kernels.vector_step``, which loops over the envs,
applies each env's action for its acting seat, resets finished episodes at once, and
writes the next observation and mask straight into preallocated arrays:

| array          | shape / dtype        | meaning                                                   |
|----------------|----------------------|-----------------------------------------------------------|
| `observation`  | (N, D) float32       | the acting seat's observation (``observation.py``)        |
| `action_mask`  | (N, A) int8 (0/1)    | its legal actions (``.view(bool)`` gives a bool view)      |
| `legal_actions`| (N, A + 1) int16     | the same as a list: the count, then the ids in the core's  |
|                |                      | order (``legal_actions[i, 1:1 + legal_actions[i, 0]]``)   |
| `to_act`       | (N,) int64           | the acting seat                                           |
| `rewards`      | (N, P) float32       | chips paid to each seat (absolute seats) by this step     |
|                |                      | (exact below 2^24 chips, rounded past that)               |
| `terminated`   | (N,) bool            | the step ended env i's episode; it was reset at once, so   |
|                |                      | the observation and mask already belong to the new one    |
| `episode_net`  | (N, P) int64         | net chips of env i's last finished episode (always exact) |

``step`` returns these arrays themselves, not copies: the next step overwrites them.

Actions, observations, rewards and episodes are the AEC env's (``env.py``). Env i's
generator is seeded with ``env_seed(seed, i)`` (``seed=None``: a fresh seed from the OS) exactly
as ``Game(seed=env_seed(seed, i))`` seeds it, and each auto-reset continues it (deal, then dice):
env i's k-th episode is the AEC env's after ``reset(seed=env_seed(seed, i))`` and k - 1 plain
resets. ``env_seed`` passes the seed through SplitMix64 before adding the index, so the envs of
one batch, and the batches of adjacent seeds, deal independent hands. An action
that is not legal raises ``ValueError`` naming the env index and the action, and then no env
has moved.

``random_actions()`` draws a uniformly random legal action per env in compiled code, from
per-env generators seeded (by numpy) from ``seed`` and kept apart from the deals.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _kernels as K
from . import layout as L
from .checks import check_reward_scale, check_seed, legal_list, short_repr
from .combos import table_for
from .observation import ObservationLayout
from .rules import RuleSet
from .state import STATE_LEN


def env_seed(seed: int, index: int) -> int:
    """The ``Game`` seed whose deals env ``index`` of ``VectorEnv(seed=seed)`` plays:
    ``splitmix64(seed) + index`` modulo 2^64 (``seed`` as ``check_seed`` takes it)."""
    return (int(K.splitmix64(np.uint64(check_seed(seed)))) + int(index)) % 2**64


class VectorEnv:
    """N Tien Gow environments in one compiled loop, with auto-reset (module docstring)."""

    def __init__(
        self, num_envs: int, rules: Any = "standard", seed: int | None = 0, hands: int = 1, reward_scale: float = 1.0
    ):
        if type(num_envs) is not int or num_envs < 1:
            raise ValueError(f"num_envs must be an integer >= 1, got {short_repr(num_envs)}")
        if type(hands) is not int or hands < 1:
            raise ValueError(f"hands must be an integer >= 1 (hands per episode), got {short_repr(hands)}")
        seed = check_seed(seed)
        self.rules = RuleSet.from_spec(rules)
        most = self.rules.check_match(hands)  # episode chips stay within int64
        self.reward_scale = check_reward_scale(reward_scale, most, np.float32)
        self.combos = table_for(self.rules)
        self.num_envs = num_envs
        self.hands = hands
        self.players = self.rules.players
        self.num_actions = self.combos.num_actions
        self.layout = ObservationLayout(self.players, self.rules.hand_size)
        self._offsets = self.layout.offsets
        self.observation_size = self.layout.size
        self._face_up = int(self.rules.discards_face_up)
        n, players = num_envs, self.players
        self.states = np.zeros((n, STATE_LEN), dtype=np.int64)
        self._rngs = np.zeros(n, dtype=np.uint64)
        self._action_rngs = np.zeros(n, dtype=np.uint64)
        self._pending = np.zeros((n, L.MAX_SEATS), dtype=np.int64)
        self._hands_done = np.zeros(n, dtype=np.int64)
        self._running = np.zeros((n, L.MAX_SEATS), dtype=np.int64)
        self.observation = np.zeros((n, self.observation_size), dtype=np.float32)
        self.action_mask = np.zeros((n, self.num_actions), dtype=np.int8)
        self.legal_actions = np.zeros((n, self.num_actions + 1), dtype=np.int16)
        self.to_act = np.zeros(n, dtype=np.int64)
        self.rewards = np.zeros((n, players), dtype=np.float32)
        self.terminated = np.zeros(n, dtype=bool)
        self.episode_net = np.zeros((n, players), dtype=np.int64)
        self._actions = np.zeros(n, dtype=np.int64)
        # The kernels' arguments, bundled once (_kernels.py, "vector env").
        self._envs = K.VectorEnvs(self.states, self._rngs, self._pending, self._hands_done, self._running)
        self._tables = K.VectorTables(self.combos.table, self.combos.rules_array, self._offsets)
        self._work = K.VectorScratch(
            np.zeros(L.legal_len(self.combos.num_combos), dtype=np.int64),
            np.zeros(L.MAX_SEATS, dtype=np.int64),
            np.zeros(L.REPORT_LEN, dtype=np.int64),
            np.zeros(L.HISTORY_LEN, dtype=np.int64),
        )
        self._out = K.VectorOutputs(
            self.observation,
            self.action_mask,
            self.legal_actions,
            self.to_act,
            self.rewards,
            self.terminated,
            self.episode_net,
        )
        self.reset(seed)

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Begin a new episode in every env: seeded with ``env_seed(seed, i)``, or, with None,
        continuing each env's generator. Returns (observation, action_mask, to_act)."""
        reseed = seed is not None
        seeds = np.zeros(self.num_envs, dtype=np.uint64)
        if reseed:
            seed = check_seed(seed)  # as Game(seed=...) takes it
            seeds[:] = np.uint64(env_seed(seed, 0)) + np.arange(self.num_envs, dtype=np.uint64)  # wraps mod 2**64
            self._action_rngs[:] = (
                np.random.default_rng(seed).integers(1, 2**63, size=self.num_envs, dtype=np.int64).astype(np.uint64)
            )
        K.vector_reset(*self._envs, reseed, seeds, *self._tables, self._face_up, *self._work, *self._out)
        self.rewards[:] = 0
        self.terminated[:] = False
        return self.observation, self.action_mask, self.to_act

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Apply ``actions[i]`` (an action id) in env i. Returns (observation, action_mask,
        to_act, rewards, terminated), the env's own arrays (module docstring)."""
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or actions.dtype.kind not in "iu":
            raise ValueError(
                f"actions must be an integer array of shape ({self.num_envs},), got {actions.dtype} {actions.shape}"
            )
        self._actions[:] = actions
        # The fields one by one: a tuple argument doubles numba's dispatch cost (_kernels.py).
        bad = K.vector_step(
            *self._envs,
            self._actions,
            *self._tables,
            self._face_up,
            self.hands,
            self.reward_scale,
            *self._work,
            *self._out,
        )
        if bad >= 0:
            raise ValueError(self._illegal_message(bad, int(actions[bad])))
        return self.observation, self.action_mask, self.to_act, self.rewards, self.terminated

    def random_actions(self, out: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random legal action per env (int64 (N,)), drawn in compiled code;
        ``out``, if given, is that array to fill."""
        if out is None:
            out = np.empty(self.num_envs, dtype=np.int64)
        elif (
            not isinstance(out, np.ndarray)
            or out.dtype != np.int64
            or out.shape != (self.num_envs,)
            or not out.flags.writeable
        ):
            raise ValueError(
                f"out must be a writeable int64 array of shape ({self.num_envs},), got "
                + (f"{out.dtype} {out.shape}" if isinstance(out, np.ndarray) else type(out).__name__)
            )
        K.random_legal_actions(self.legal_actions, self._action_rngs, out)
        return out

    def action_name(self, action: int) -> str:
        """Readable action: ``play 6-6+6-3``, ``discard 5-1``, ``declare``, ``decline``."""
        return self.combos.action_name(action)

    def _illegal_message(self, env_index: int, action: int) -> str:
        legal = np.flatnonzero(self.action_mask[env_index])
        return (
            f"env {env_index}: action {action} ({self.action_name(action)}) is not legal for seat "
            f"{int(self.to_act[env_index])}; legal: {legal_list(legal, self.action_name)}"
        )


__all__ = ["VectorEnv", "env_seed"]
