"""PettingZoo AEC environment ``tiengow_v0``: one hand (or a match of hands) of Tien Gow.

Use ``tiengow_env.tiengow_v0.env(rules="standard")`` (illegal actions end the episode, as in
PettingZoo's classic games) or ``raw_env(...)`` (they raise). Agents are ``player_0`` ..
``player_{P-1}``, one per seat (P = 4, or 3 under ``players: 3``); the seat numbers are the
core's (RULES.md section 3).

Actions, ``Discrete(A)``: the core's action ids (``layout.py``), unchanged, with
``C = table_for(rules).num_combos`` (61 for classic rules over the 32-tile deck):

| id            | action                                   | legal when                                  |
|---------------|------------------------------------------|---------------------------------------------|
| 0 .. C-1      | play combination j face up (lead or beat) | leading: held; following: held and beats    |
|               | (``CombinationTable.combos[j]``)         | the current best, before any discard        |
| C + t         | put one tile of type t face down          | following, tile held (never when leading).   |
|  (t = 0..20)  |                                          | A follower answering n tiles takes n such   |
|               |                                          | decisions in a row; the first commits it,   |
|               |                                          | and then only discards are legal            |
| C + 21        | declare One Red Dot                       | only under ``one_red_dot: choice``          |
| C + 22        | decline One Red Dot                       | only under ``one_red_dot: choice``          |

A = C + 23 (84 for classic rules). The mask is exact: it comes from the core's
``legal_actions``, so every legal decision and nothing else (``must_beat_if_able`` included).
Early-death discards are no decisions: the core makes them.

Observations: ``{"observation": float32 (D,), "action_mask": int8 (A,)}``, the observing
seat's view with seats relative to it (table in ``observation.py``; D = 282 with four
players). The mask is all 0 for a seat that is not to act. ``information_state(agent)``
gives the perfect-recall information-state vector (``observation.py``).

Rewards: chips, when they are paid (RULES.md sections 5 and 6): a trick bonus with the step
that ends its trick, the settlement with the step that ends the hand, each multiplied by
``reward_scale``. Every seat is rewarded at every step (mostly 0), and the rewards of a
hand sum to zero (exactly with ``reward_scale=1`` while chips stay below 2^53, as floats do;
the int64 ``session.episode_chips`` always). As PettingZoo's own helpers do, a step updates the ``rewards`` dict in
place (copy it to keep one step's values); ``reset()`` makes new dicts.

Episodes: ``hands=1`` (default) is one hand; ``hands=n`` is a match of n hands (RULES.md
section 7): the next hand is dealt from the same generator, its banker is W of the hand
before (the last trick's winner or the One Red Dot declarer, ``StateView.winner``), the
banker's ``streak`` counts on, and chips accumulate. A hand decided at the deal (an automatic
One Red Dot declaration) takes no decision: it is settled at once, does not count as one of
the ``hands``, its chips are paid with the next step, and the next hand follows as in a match.

Seeds: ``reset(seed=s)`` seeds the core's xorshift generator exactly as ``Game(seed=s)``
does (through SplitMix64), so the first deal and banker are ``Game(seed=s)``'s. ``reset()``
without a seed continues the same generator (deal, then dice) rather than reseeding, so
``reset(seed=vector.env_seed(v, i))`` followed by k plain resets gives the same deals as env i
of ``VectorEnv(seed=v)`` after k auto-resets.

Illegal actions: ``raw_env.step`` raises ``ValueError`` naming the action, the seat and the
legal actions, and changes nothing. ``env()`` (``raw_env(illegal_reward=-1.0)``) follows the
convention of PettingZoo's ``TerminateIllegalWrapper`` instead, step for step: an action id
outside the mask logs PettingZoo's illegal-move warning and ends the episode for everyone
(every termination and truncation True), the offender gets ``illegal_reward`` and the others
0. In both, anything but an action id 0..A-1 for a live agent (a float, a bool, an id out of
range, None) raises ``ValueError`` and changes nothing, and a done agent's only action is None.
An action id is an int, a numpy integer or a 0-d integer array (as ``Discrete(A)`` has them).

Order of calls, in both (what PettingZoo's ``OrderEnforcingWrapper`` checks; ``env()`` does
it natively and is not wrapped, so ``env().unwrapped`` is the env itself): ``step``,
``observe``, ``information_state``, ``render`` and ``agent_iter`` before the first
``reset()`` raise ``ValueError``; ``rewards``, ``terminations``, ``truncations``, ``infos``
and ``agent_selection`` do not exist before it (``AttributeError``; ``agents`` is empty).
``step`` once every agent is done logs PettingZoo's warning and does nothing, and a loop over
``agent_iter()`` raises ``ValueError`` if a pass calls neither ``step`` nor ``reset``. (No
``__getattr__`` gives a friendlier message for those attributes: defining one would slow
every attribute access of the env, as CPython then stops specialising them.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env import AECIterable
from pettingzoo.utils.env_logger import EnvLogger

from . import _kernels as K
from . import layout as L
from .checks import check_number, check_reset_options, check_reward_scale, check_seed, legal_list, short_repr
from .combos import table_for
from .game import Game
from .observation import ObservationLayout, new_history
from .picture import table_picture
from .rules import RuleSet
from .state import STATE_LEN, StateView
from .tiles import mask_names

RENDER_MODES = ("ansi", "human", "rgb_array")
_FLOAT32, _INT8 = np.dtype(np.float32), np.dtype(np.int8)  # dtype objects: np.empty takes them fastest
_NO_CHIPS = [0] * L.MAX_SEATS


class Session:
    """A table playing one episode after another: the state the AEC and Gymnasium envs share.

    ``state`` is the core's state array of the hand in play; ``game`` is a ``Game`` that reads
    that same array (for action names, hands and ``result()``), and must not be stepped.
    """

    def __init__(self, rules: Any = "standard", hands: int = 1, reward_scale: float = 1.0):
        self.rules = RuleSet.from_spec(rules)
        if type(hands) is not int or hands < 1:
            raise ValueError(f"hands must be an integer >= 1 (hands per episode), got {short_repr(hands)}")
        most = self.rules.check_match(hands)  # episode chips stay within int64
        self.reward_scale = check_reward_scale(reward_scale, most, np.float64)
        self.hands = hands
        self.combos = table_for(self.rules)
        self.table = self.combos.table
        self.rules_array = self.combos.rules_array
        self.players = self.rules.players
        self.num_actions = self.combos.num_actions
        self.layout = ObservationLayout(self.players, self.rules.hand_size)
        self.offsets = self.layout.offsets
        self.observation_size = self.layout.size
        self.face_up = int(self.rules.discards_face_up)
        self.state = np.zeros(STATE_LEN, dtype=np.int64)
        self.view = StateView(self.state, self.players)  # the state read by name (state.py)
        self.rng = np.zeros(1, dtype=np.uint64)
        self.history = new_history()
        self.scratch = np.zeros(L.legal_len(self.combos.num_combos), dtype=np.int64)
        self.hands_buf = np.zeros(L.MAX_SEATS, dtype=np.int64)
        self.report = np.zeros(L.REPORT_LEN, dtype=np.int64)  # what the last step did (layout.py)
        self.delta = np.zeros(L.MAX_SEATS, dtype=np.int64)  # chips paid by the last step
        self.pending = np.zeros(L.MAX_SEATS, dtype=np.int64)  # chips of hands decided at the deal
        self.has_pending = False
        self.paid = False  # whether the last step paid any chips (delta is not all 0)
        self.episode_chips = np.zeros(L.MAX_SEATS, dtype=np.int64)  # chips paid in this episode
        self.hands_left = hands
        self.hand_number = 0
        self.seeded = False
        self.episode_over = True
        self.game = Game(seed=0, rules=self.rules)
        self.game.state = self.state

    def bounds(self, information: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """float32 (low, high) of an observation (or information state) under these rules. The
        streak has no bound (hands decided at the deal are not counted among the ``hands``), and
        so neither have the chips under ``banker_streak``; otherwise they are within
        ``RuleSet.payment_bound``."""
        most_chips = np.inf if self.rules.banker_streak else self.rules.payment_bound()
        return self.layout.bounds(most_chips, information=information)

    # ----------------------------------------------------------------- episodes
    def reset(self, seed: int | None = None) -> None:
        """Begin an episode; ``seed`` reseeds the core generator (as ``Game(seed=...)``),
        None continues it (the first time, it seeds from the operating system)."""
        if seed is not None:
            K.seed_rng(self.rng, np.uint64(check_seed(seed)))
        elif not self.seeded:
            K.seed_rng(self.rng, np.random.SeedSequence().generate_state(1, np.uint64)[0])
        self.seeded = True
        K.begin_episode(self.state, self.rng, self.table, self.rules_array, self.history, self.hands_buf, self.pending)
        self.has_pending = self.pending.tolist() != _NO_CHIPS
        self.paid = False
        self.episode_chips.fill(0)
        self.hands_left = self.hands
        self.hand_number = 1
        self.episode_over = False

    def step(self, action: Any) -> int:
        """Apply the acting seat's action; ``delta`` receives the chips it paid to each seat,
        and ``paid`` says whether any changed hands.

        Returns ``_kernels.env_step``'s status (layout.ENV_*): ENV_ILLEGAL, the action is not
        legal (nothing changes; ``illegal_message`` says why), ENV_PLAYING, ENV_NEXT_HAND (the
        next hand of the match began) or ENV_EPISODE_OVER. Raises ValueError when no episode
        is in play or ``action`` is not an integer id 0..A-1 (nothing changes).
        """
        if type(action) is not int:  # plain ints skip the slower checks
            if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
                action = action.item()  # a 0-d array: in Discrete(A), and what SB3's predict returns for one env
            elif isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
                raise ValueError(f"an action is an integer id 0..{self.num_actions - 1}, got {short_repr(action)}")
            action = int(action)
        if not 0 <= action < self.num_actions:
            raise ValueError(f"an action is an integer id 0..{self.num_actions - 1}, got {short_repr(action)}")
        if self.episode_over:
            raise ValueError("no episode in play (it is over, or has not begun); call reset()")
        status = K.env_step(
            self.state,
            action,
            self.table,
            self.rules_array,
            self.rng,
            self.history,
            self.hands_left,
            self.scratch,
            self.hands_buf,
            self.report,
            self.delta,
        )
        if status == L.ENV_ILLEGAL:
            return status
        delta = self.delta
        if self.has_pending:
            delta += self.pending
            self.pending.fill(0)
            self.has_pending = False
        self.paid = delta.tolist() != _NO_CHIPS  # most steps pay nothing (numpy's any() is slower here)
        if self.paid:
            self.episode_chips += delta
        if status == L.ENV_NEXT_HAND:
            self.hands_left -= 1
            self.hand_number += 1
        elif status == L.ENV_EPISODE_OVER:
            self.episode_over = True
        return status

    def illegal_message(self, action: int) -> str:
        """Why ``action`` (an id 0..A-1) is not legal now, with the legal actions."""
        seat = self.to_act
        legal = self.game.legal_actions()
        return (
            f"action {action} ({self.game.action_name(action)}) is not legal for seat {seat}; legal: "
            f"{legal_list(legal, self.game.action_name)}"
        )

    # ----------------------------------------------------------------- views
    @property
    def to_act(self) -> int:
        """The seat to decide (-1 once the episode is over)."""
        seat = self.view.to_act
        return -1 if seat is None else seat

    def observe(self, seat: int, obs_out: np.ndarray, mask_out: np.ndarray) -> None:
        K.observe(
            self.state, seat, self.table, self.rules_array, self.offsets, self.face_up, self.scratch, obs_out, mask_out
        )

    def information_state(self, seat: int) -> np.ndarray:
        out = np.empty(self.layout.information_size, dtype=np.float32)
        K.write_information_state(
            self.state, self.history, seat, self.table, self.rules_array, self.offsets, self.face_up, out
        )
        return out

    def render_rgb(self) -> np.ndarray:
        """The (H, W, 3) uint8 picture of the table (``picture.py``; every hand shown)."""
        return table_picture(self.state, self.players, self.rules.hand_size)

    def render_text(self, names: list[str]) -> str:
        """A readable picture of the table (every hand shown: this is for people, not agents)."""
        view, g, players = self.view, self.game, self.players
        phase = g.phase
        head = f"Tien Gow ({self.rules.name})"
        if self.hands > 1:
            head += f", hand {self.hand_number} of {self.hands}"
        tricks = view.tricks_done
        head += f", trick {min(tricks + 1, self.rules.hand_size)}" if phase != "over" else ", hand over"
        head += f", banker {names[view.banker]}"
        if view.streak > 1:
            head += f" (streak {view.streak})"
        lines = [head]
        to_act = self.to_act
        width = max(len(n) for n in names)
        for s in range(players):
            mark = ">" if s == to_act else " "
            hand = " ".join(mask_names(view.hands[s])) or "-"
            line = (
                f"{mark} {names[s]:<{width}}  cols {int(view.columns[s])}  chips {int(view.chips[s]):+d}  hand: {hand}"
            )
            down = mask_names(view.down[s])
            if down:
                line += f"  down: {' '.join(down)}"
            lines.append(line)
        if phase == "declare":
            lines.append(f"One Red Dot: {names[to_act]} may declare")
        elif phase in ("lead", "follow"):
            leader = view.leader
            if phase == "lead":
                lines.append(f"Trick: {names[leader]} to lead")
            else:
                parts = []
                for k in range(players):
                    s = (leader + k) % players
                    on_table = int(view.on_table[s])
                    if on_table:
                        up = mask_names(on_table & int(view.up[s]))
                        down = mask_names(on_table & int(view.down[s]))
                        parts.append(f"{names[s]} " + ("+".join(up) if up else f"{len(down)} down"))
                best_seat, best = view.current_best
                lines.append(
                    f"Trick of {view.size}: "
                    + ", ".join(parts)
                    + f"; best {self.combos.combos[best].label} ({names[best_seat]})"
                )
                if view.owed:
                    lines.append(f"{names[to_act]} owes {view.owed} more face down")
        else:
            result = g.result()
            lines.append(
                f"Hand over: W = {names[result['last_trick_winner']]}, net "
                + ", ".join(f"{names[s]} {v:+d}" for s, v in enumerate(result["net"]))
            )
        if self.hands > 1:
            lines.append(
                "Episode chips: " + ", ".join(f"{names[s]} {int(self.episode_chips[s]):+d}" for s in range(players))
            )
        return "\n".join(lines)


class raw_env(AECEnv):  # noqa: N801  (PettingZoo's naming convention)
    """Tien Gow as a PettingZoo AEC environment (module docstring: actions, observations,
    rewards, episodes, seeds, illegal actions and the order of calls).

    ``illegal_reward=None`` (the default here) makes an illegal action raise ``ValueError``;
    a number makes it end the episode as PettingZoo's ``TerminateIllegalWrapper`` does
    (``env()`` passes -1).
    """

    metadata = {"render_modes": list(RENDER_MODES), "name": "tiengow_v0", "is_parallelizable": False, "render_fps": 1}

    def __init__(
        self,
        render_mode: str | None = None,
        rules: Any = "standard",
        hands: int = 1,
        reward_scale: float = 1.0,
        illegal_reward: float | None = None,
    ):
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None, 'ansi', 'human' or 'rgb_array', got {short_repr(render_mode)}")
        self.render_mode = render_mode
        self.illegal_reward = (
            None
            if illegal_reward is None
            else check_number(illegal_reward, "illegal_reward (or None, for an illegal action to raise ValueError)")
        )
        self.session = Session(rules, hands, reward_scale)
        players = self.session.players
        self.possible_agents = [f"player_{s}" for s in range(players)]
        self.agent_name_mapping = {agent: s for s, agent in enumerate(self.possible_agents)}
        low, high = self.session.bounds()
        num_actions = self.session.num_actions
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(low, high, dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, (num_actions,), dtype=np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(num_actions) for agent in self.possible_agents}
        info_low, info_high = self.session.bounds(information=True)
        self._information_space = spaces.Box(info_low, info_high, dtype=np.float32)
        self._zero_rewards = dict.fromkeys(self.possible_agents, 0.0)
        self._all_false = dict.fromkeys(self.possible_agents, False)
        self._has_reset = False
        self._rewards_paid = False  # some entry of self.rewards is not 0
        self._moves = 0  # calls of step() and reset(), for agent_iter()'s check
        self.agents = []

    # ----------------------------------------------------------------- spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[self.possible_agents[self._seat(agent)]]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[self.possible_agents[self._seat(agent)]]

    def _seat(self, agent: str) -> int:
        try:
            return self.agent_name_mapping[agent]
        except (KeyError, TypeError):  # TypeError: an unhashable name
            raise ValueError(
                f"unknown agent {short_repr(agent)}; the agents are {', '.join(self.possible_agents)}"
            ) from None

    def information_state_space(self, agent: str) -> spaces.Box:
        return self._information_space

    @property
    def rules(self) -> RuleSet:
        return self.session.rules

    @property
    def game(self) -> Game:
        """A read-only ``Game`` over the hand in play (names, hands, ``result()``)."""
        return self.session.game

    # ----------------------------------------------------------------- AEC API
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        check_reset_options(options)
        self.session.reset(seed)
        self._has_reset = True
        self._moves += 1
        self.agents = self.possible_agents[:]
        self.rewards = self._zero_rewards.copy()
        self._rewards_paid = False
        self._cumulative_rewards = self._zero_rewards.copy()
        self.terminations = self._all_false.copy()
        self.truncations = self._all_false.copy()
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[self.session.to_act]
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if not self._has_reset:
            raise ValueError("call reset() before observe()")
        session = self.session
        obs = np.empty(session.observation_size, _FLOAT32)
        mask = np.empty(session.num_actions, _INT8)
        session.observe(self._seat(agent), obs, mask)
        return {"observation": obs, "action_mask": mask}

    def information_state(self, agent: str) -> np.ndarray:
        """The agent's perfect-recall information-state vector (observation.py)."""
        if not self._has_reset:
            raise ValueError("call reset() before information_state()")
        return self.session.information_state(self._seat(agent))

    def step(self, action: Any) -> None:
        self._moves += 1
        if not self.agents:
            if not self._has_reset:
                raise ValueError("call reset() before step()")
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        session = self.session
        status = session.step(action)  # ValueError for anything but an action id, before any change
        if status == L.ENV_ILLEGAL:
            self._illegal_action(agent, action)
            return
        cumulative = self._cumulative_rewards
        cumulative[agent] = 0.0
        if session.paid or self._rewards_paid:  # else every reward is 0 already, and stays 0
            self._rewards_paid = session.paid
            rewards, scale = self.rewards, session.reward_scale
            for name, chips in zip(self.possible_agents, session.delta.tolist()):
                rewards[name] = reward = chips * scale
                cumulative[name] += reward
        if status == L.ENV_EPISODE_OVER:
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self.agent_selection = self.possible_agents[session.to_act]
        if self.render_mode == "human":
            self.render()

    def _illegal_action(self, agent: str, action: Any) -> None:
        """An action id outside the mask: ValueError, or with ``illegal_reward`` the convention
        of PettingZoo's ``TerminateIllegalWrapper``, step for step."""
        if self.illegal_reward is None:
            raise ValueError(self.session.illegal_message(int(action)))
        EnvLogger.warn_on_illegal_move()
        self._cumulative_rewards[agent] = 0.0
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.rewards[agent] = self.illegal_reward
        self._rewards_paid = True
        self._accumulate_rewards()
        self._deads_step_first()

    def agent_iter(self, max_iter: int = 2**63) -> Iterator[str]:
        """The agent to act, until every agent is done; as with PettingZoo's
        ``OrderEnforcingWrapper``, each pass of the loop must call ``step()`` (or ``reset()``)."""
        if not self._has_reset:
            raise ValueError("call reset() before agent_iter()")
        return self._agent_turns(max_iter)

    def _agent_turns(self, max_iter: int) -> Iterator[str]:
        moves = None
        for agent in AECIterable(self, max_iter):
            if self._moves == moves:
                raise ValueError("call step() (or reset()) once in each pass of a loop over agent_iter()")
            moves = self._moves
            yield agent

    def render(self) -> str | np.ndarray | None:
        """``ansi``: the table as text; ``human``: that text printed; ``rgb_array``: a picture
        of the table (``picture.py``)."""
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn(
                "render() called without a render_mode; use render_mode='ansi', 'human' or 'rgb_array'"
            )
            return None
        if not self._has_reset:
            raise ValueError("call reset() before render()")
        if self.render_mode == "rgb_array":
            return self.session.render_rgb()
        text = self.session.render_text(self.possible_agents)
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def close(self) -> None:
        pass

    def __str__(self) -> str:
        return "tiengow_v0"


def env(
    render_mode: str | None = None,
    rules: Any = "standard",
    hands: int = 1,
    reward_scale: float = 1.0,
    illegal_reward: float = -1.0,
) -> raw_env:
    """``raw_env`` where an illegal action ends the episode with ``illegal_reward`` for its agent
    (PettingZoo's classic-game convention, without wrapper layers: module docstring)."""
    return raw_env(
        render_mode=render_mode, rules=rules, hands=hands, reward_scale=reward_scale, illegal_reward=illegal_reward
    )


__all__ = ["env", "raw_env", "Session"]
