"""The same deals and actions through Game, the AEC env, the Gymnasium env and VectorEnv give the
same legal masks, rewards and results (several presets), and seeds reach the core."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from tiengow_env import _kernels as K
from tiengow_env import layout as L
from tiengow_env.env import raw_env
from tiengow_env.game import Game
from tiengow_env.gym_env import TienGowEnv
from tiengow_env.vector import VectorEnv, env_seed

PRESETS = [
    "standard",
    "micro",
    "three_player",
    "hongkong",
    "seed001",
    {"one_red_dot": "choice"},
    {"discards_face_up": True, "must_beat_if_able": True},
]
SEEDS = [0, 1, 2, 3, 17, 123, 4096, 99991]
# Deals with a One Red Dot holder (found by scanning Game(seed=s)): under one_red_dot: choice
# they start with a declare/decline decision.
RED_DOT_SEEDS = [397, 460, 842, 993, 1177, 1228, 1392, 1448]


@dataclass
class Trajectory:
    """One hand played by Game with random legal actions: what every view must reproduce."""

    seed: int
    seats: list[int]
    actions: list[int]
    masks: list[np.ndarray]
    deltas: list[np.ndarray]  # chips paid to each seat by each step
    result: dict
    net: np.ndarray


def play_game(rules, seed: int, rng: np.random.Generator) -> Trajectory | None:
    """None when the deal is decided at once (an automatic One Red Dot declaration)."""
    game = Game(seed=seed, rules=rules)
    if game.is_over:
        return None
    seats, actions, masks, deltas = [], [], [], []
    while not game.is_over:
        mask = game.legal_mask()
        action = int(rng.choice(np.flatnonzero(mask)))
        before = game.net()
        seats.append(game.to_act)
        game.step(action)
        actions.append(action)
        masks.append(mask)
        deltas.append(game.net() - before)
    return Trajectory(seed, seats, actions, masks, deltas, game.result(), game.net())


def trajectories(rules, count: int = 4) -> list[Trajectory]:
    rng = np.random.default_rng(7)
    choice = isinstance(rules, dict) and rules.get("one_red_dot") == "choice"
    seeds = RED_DOT_SEEDS + SEEDS if choice else SEEDS
    count = 6 if choice else count
    out = [t for t in (play_game(rules, s, rng) for s in seeds) if t is not None]
    assert len(out) >= count
    if choice:  # declared and declined One Red Dot hands both come through
        C = Game(rules=rules).combos.num_combos
        firsts = {t.actions[0] - C for t in out[:count] if t.actions[0] >= C}
        assert firsts == {L.DECLARE_OFFSET, L.DECLINE_OFFSET}
    return out[:count]


@pytest.mark.parametrize("rules", PRESETS, ids=str)
def test_aec_env_matches_game(rules):
    env = raw_env(rules=rules, reward_scale=0.5)
    for traj in trajectories(rules):
        env.reset(seed=traj.seed)
        totals = dict.fromkeys(env.agents, 0.0)
        for seat, action, mask, delta in zip(traj.seats, traj.actions, traj.masks, traj.deltas, strict=True):
            agent = env.agent_selection
            assert agent == f"player_{seat}"
            for other in env.agents:
                seen = env.observe(other)["action_mask"]
                assert np.array_equal(seen, mask if other == agent else np.zeros_like(seen))
            env.step(action)
            assert [env.rewards[f"player_{s}"] for s in range(len(env.agents))] == list(delta * 0.5)
            for a in totals:
                totals[a] += env.rewards[a]
        assert all(env.terminations.values())
        assert env.game.result() == traj.result
        assert [totals[f"player_{s}"] for s in range(len(totals))] == list(traj.net * 0.5)


@pytest.mark.parametrize("rules", PRESETS, ids=str)
@pytest.mark.parametrize("learner", [0, 2])
def test_gym_env_matches_game(rules, learner):
    compared = 0
    for traj in trajectories(rules):
        if learner not in traj.seats:
            continue  # the hand ended before this seat decided: the gym env deals on
        compared += 1
        script = iter(zip(traj.seats, traj.actions, traj.masks, strict=True))

        def scripted(observation, action_mask, script=script):
            seat, action, mask = next(script)
            assert seat != learner and np.array_equal(action_mask, mask)
            return action

        env = TienGowEnv(rules=rules, seat=learner, opponents=scripted)
        obs, info = env.reset(seed=traj.seed)
        # Expected reward of each learner step: the chips from the start (first step) or from
        # its previous decision up to its next decision.
        decisions = [k for k, s in enumerate(traj.seats) if s == learner]
        bounds = decisions[1:] + [len(traj.seats)]
        expected = [
            sum(int(traj.deltas[k][learner]) for k in range(0 if i == 0 else decisions[i], end))
            for i, end in enumerate(bounds)
        ]
        got = []
        for _ in decisions:
            seat, action, mask = next(script)
            assert seat == learner
            assert np.array_equal(info["action_mask"], mask)
            assert np.array_equal(env.action_masks(), mask.astype(bool))
            obs, reward, terminated, truncated, info = env.step(action)
            got.append(reward)
        assert got == expected and terminated and not truncated
        assert list(info["episode_chips"]) == list(traj.net)
        assert env.session.game.result() == traj.result
    assert compared >= 2


@pytest.mark.parametrize("rules", PRESETS, ids=str)
def test_vector_env_matches_game(rules):
    base = 40
    rng = np.random.default_rng(3)
    games = [play_game(rules, env_seed(base, i), rng) for i in range(6)]
    venv = VectorEnv(len(games), rules=rules, seed=base, reward_scale=2.0)
    fallback = np.random.default_rng(0)
    steps = max(len(t.actions) for t in games if t is not None)
    for k in range(steps):
        actions = np.zeros(venv.num_envs, dtype=np.int64)
        for i, traj in enumerate(games):
            if traj is not None and k < len(traj.actions):
                assert venv.to_act[i] == traj.seats[k]
                assert np.array_equal(venv.action_mask[i], traj.masks[k])
                legal = venv.legal_actions[i, 1 : 1 + venv.legal_actions[i, 0]]
                assert sorted(legal) == list(np.flatnonzero(traj.masks[k]))
                actions[i] = traj.actions[k]
            else:  # past its recorded hand (or decided at the deal): any legal action
                actions[i] = fallback.choice(np.flatnonzero(venv.action_mask[i]))
        venv.step(actions)
        for i, traj in enumerate(games):
            if traj is not None and k < len(traj.actions):
                assert list(venv.rewards[i]) == list(traj.deltas[k] * 2.0)
                assert venv.terminated[i] == (k == len(traj.actions) - 1)
                if venv.terminated[i]:
                    assert list(venv.episode_net[i]) == list(traj.net)


def continued_deals(rules, seed: int, hands: int) -> list[tuple[np.ndarray, int]]:
    """(dealt masks, dice banker) of the first ``hands`` deals of the core generator seeded
    with ``seed``, each drawn as a first hand (deal, then dice)."""
    from tiengow_env.combos import table_for

    rules_array = table_for(Game(rules=rules).rules).rules_array
    rng = np.zeros(1, dtype=np.uint64)
    K.seed_rng(rng, np.uint64(seed))
    players = int(rules_array[L.R_PLAYERS])
    out = []
    for _ in range(hands):
        masks = np.zeros(L.MAX_SEATS, dtype=np.int64)
        K.deal(rng, rules_array, masks)
        banker = int(K.dice_banker(rng, players))
        out.append((masks[:players].copy(), banker))
    return out


@pytest.mark.parametrize("rules", ["standard", "three_player"])
def test_every_view_deals_game_seed(rules):
    """reset(seed=s) deals Game(seed=s)'s hands and banker in every view; later episodes continue
    the same generator in the AEC env, the Gymnasium env and the vector env alike."""
    for seed in (5, 6, 2**40 + 3):
        game = Game(seed=seed, rules=rules)
        env = raw_env(rules=rules)
        env.reset(seed=seed)
        gym_env = TienGowEnv(rules=rules)
        gym_env.reset(seed=seed)
        for view in (env.game, gym_env.session.game):
            assert [view.dealt(s) for s in range(game.players)] == [game.dealt(s) for s in range(game.players)]
            assert view.banker == game.banker
    seed = env_seed(10, 1)
    expected = continued_deals(rules, seed, 3)
    env = raw_env(rules=rules)
    venv = VectorEnv(2, rules=rules, seed=10)  # env 1 plays Game(seed=env_seed(10, 1))
    rng = np.random.default_rng(1)
    for episode in range(3):
        if episode == 0:
            env.reset(seed=seed)
        else:
            env.reset()
        masks, banker = expected[episode]
        assert [int(env.session.state[L.S_DEALT + s]) for s in range(len(masks))] == list(masks)
        assert env.game.banker == banker
        assert np.array_equal(venv.states[1, L.S_DEALT : L.S_DEALT + len(masks)], masks)
        assert venv.states[1, L.S_BANKER] == banker
        while not all(env.terminations.values()):  # play the AEC hand and env 1 alike
            action = int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])))
            env.step(action)
            actions = venv.random_actions()
            actions[1] = action
            venv.step(actions)
        assert venv.terminated[1]


def first_declared_vector_seed(rules) -> int:
    """The first VectorEnv seed whose env 0 is dealt a hand decided at the deal."""
    return next(v for v in range(100_000) if Game(seed=env_seed(v, 0), rules=rules).is_over)


def test_hand_decided_at_the_deal_is_paid_with_the_next_step():
    vector_seed = first_declared_vector_seed("standard")
    seed = env_seed(vector_seed, 0)
    declared = Game(seed=seed)
    chips = declared.net()
    assert declared.result()["multipliers"]["shutout"] == 2 and sorted(chips)[:3] == [-20, -20, -20]
    w = declared.result()["last_trick_winner"]
    env = raw_env()
    env.reset(seed=seed)
    assert not any(env.terminations.values())
    # The next deal follows from the same generator, as the next hand of a match: W banks.
    assert env.game.banker == w and env.session.state[L.S_STREAK] == (2 if w == declared.banker else 1)
    venv = VectorEnv(1, seed=vector_seed)
    assert np.array_equal(venv.states[0], env.session.state)
    action = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
    env.step(action)
    venv.step(np.array([action]))
    assert [env.rewards[f"player_{s}"] for s in range(4)] == list(chips) == list(venv.rewards[0])
    gym_env = TienGowEnv(seat=0)
    gym_env.reset(seed=seed)
    total = 0.0
    terminated = False
    while not terminated:
        _, reward, terminated, _, info = gym_env.step(gym_env.action_space.sample())
        total += reward
    assert total == info["episode_chips"][0]
    assert info["episode_chips"].sum() == 0


@pytest.mark.parametrize("rules", ["standard", "hongkong", "three_player"])
def test_match_passes_the_bank_and_accumulates(rules):
    """hands=n: each next hand's banker is W of the hand before, the streak counts on, rewards
    sum to the net of every hand, and each hand replays identically through Game."""
    hands = 4
    env = raw_env(rules=rules, hands=hands)
    rng = np.random.default_rng(5)
    for seed in (1, 2, 3):
        env.reset(seed=seed)
        total = np.zeros(env.num_agents)
        hand_total = np.zeros(env.num_agents)
        game = Game(seed=seed, rules=rules)
        banker, streak = game.banker, 1
        played = 0
        while not all(env.terminations.values()):
            if game.is_over:  # the env dealt the next hand in the same step
                w = game.result()["last_trick_winner"]
                assert list(hand_total) == list(game.net())
                streak = streak + 1 if w == banker else 1
                banker = w
                assert env.game.banker == banker and env.session.state[L.S_STREAK] == streak
                game = Game(
                    hands=[env.game.dealt(s) for s in range(env.num_agents)], banker=banker, rules=rules, streak=streak
                )
                hand_total[:] = 0
                played += 1
            assert env.agent_selection == f"player_{game.to_act}"
            mask = env.observe(env.agent_selection)["action_mask"]
            assert np.array_equal(mask.astype(bool), game.legal_mask())
            action = int(rng.choice(np.flatnonzero(mask)))
            before = game.net()
            game.step(action)
            env.step(action)
            step_rewards = np.array([env.rewards[a] for a in env.possible_agents])
            total += step_rewards
            if not game.is_over or all(env.terminations.values()):
                assert list(step_rewards) == list(game.net() - before)
                hand_total += step_rewards
            else:
                hand_total += game.net() - before  # later hands' chips are not in this hand's total
        assert played >= hands - 1  # hands decided at the deal do not count
        assert total.sum() == 0 and list(env.session.episode_chips[: env.num_agents]) == list(total)
