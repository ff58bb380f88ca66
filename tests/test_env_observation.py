"""Observation and information-state encoders: layout, a slow reference encoder compared over
many states for every seat, and the guarantee that nothing hidden leaks."""

from __future__ import annotations

import numpy as np
import pytest

from tiengow_env import _kernels as K
from tiengow_env import layout as L
from tiengow_env.env import raw_env
from tiengow_env.observation import ObservationLayout
from tiengow_env.tiles import NUM_TYPES, mask_types

PRESETS = [
    "standard",
    "three_player",
    "micro",
    "seed001",
    "culin1895",
    {"one_red_dot": "choice"},
    {"discards_face_up": True},
]


def counts(mask: int) -> np.ndarray:
    return np.bincount(np.array(mask_types(int(mask)), dtype=np.int64), minlength=NUM_TYPES)


def reference_observation(env, seat: int) -> dict[str, np.ndarray]:
    """The observation views of ``seat``, written straight from observation.py's table."""
    st, session = env.session.state, env.session
    P, face_up = session.players, session.rules.discards_face_up
    views = {name: np.zeros(shape) for name, shape, _, _ in session.layout.observation_views()}
    order = [(seat + r) % P for r in range(P)]  # row r is the seat r places after the observer
    views["hand"][:] = counts(st[L.S_HAND + seat])
    for r, s in enumerate(order):
        if s == seat or face_up:
            views["down"][r] = counts(st[L.S_DOWN + s])
        views["up"][r] = counts(st[L.S_UP + s])
        views["columns"][r] = st[L.S_COLS + s]
        views["tiles_left"][r] = len(mask_types(st[L.S_HAND + s]))
        views["chips"][r] = st[L.S_BONUS + s] + st[L.S_SETTLE + s]
    phase = session.game.phase
    if phase in ("lead", "follow"):
        views["leader"][order.index(st[L.S_LEADER])] = 1
    if phase == "follow":
        views["lead"][:] = counts(st[L.S_TABLE + st[L.S_LEADER]])
        views["best"][:] = np.bincount(session.combos.combos[st[L.S_BEST]].types, minlength=NUM_TYPES)
        views["best_seat"][order.index(st[L.S_BEST_SEAT])] = 1
        views["size"][st[L.S_SIZE] - 1] = 1
        views["acted"][0] = st[L.S_ACTED]
        views["owed"][0] = st[L.S_OWED]
    if phase != "over":
        views["to_act"][order.index(st[L.S_TO_ACT])] = 1
    views["phase"][("declare", "lead", "follow", "over").index(phase)] = 1
    views["banker"][order.index(st[L.S_BANKER])] = 1
    views["trick"][st[L.S_TRICK]] = 1
    views["doomed"][0] = st[L.S_DOOMED]
    views["streak"][0] = st[L.S_STREAK]
    return views


def reference_information_state(env, seat: int, log: dict[int, dict]) -> dict[str, np.ndarray]:
    """The information-state views, from ``log``: trick k -> the tiles each seat moved up and
    down in it (found by comparing the state before and after every step)."""
    session, st = env.session, env.session.state
    P, face_up = session.players, session.rules.discards_face_up
    views = {name: np.zeros(shape) for name, shape, _, _ in session.layout.information_views()}
    views.update(reference_observation(env, seat))
    views["dealt"][:] = counts(st[L.S_DEALT + seat])
    rows = [(k, st[L.S_LOG + L.LOG_STRIDE * k + L.LOG_LEADER]) for k in range(st[L.S_TRICK])]
    if session.game.phase in ("lead", "follow"):
        rows.append((st[L.S_TRICK], st[L.S_LEADER]))
    empty = {"up": np.zeros(4, dtype=np.int64), "down": np.zeros(4, dtype=np.int64)}
    for k, leader in rows:
        trick = log.get(k, empty)
        views["trick_leader"][k, (leader - seat) % P] = 1
        for r in range(P):
            s = (seat + r) % P
            views["trick_up"][k, r] = counts(trick["up"][s])
            if s == seat or face_up:
                views["trick_down"][k, r] = counts(trick["down"][s])
            views["trick_count"][k, r] = len(mask_types(trick["up"][s] | trick["down"][s]))
    return views


def play_and_check(rules, seed: int, hands: int = 1):
    """Random hands through the AEC env; at every decision compare every seat's observation and
    information state with the references. Yields at each decision."""
    env = raw_env(rules=rules, hands=hands)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    layout = env.session.layout
    st = env.session.state  # the env steps this array in place
    log: dict[int, dict] = {}
    while True:
        for s, agent in enumerate(env.possible_agents):
            obs = env.observe(agent)["observation"]
            expected = reference_observation(env, s)
            for name, view in layout.views(obs).items():
                assert np.array_equal(view, expected[name]), (name, s, view, expected[name])
            info = env.information_state(agent)
            expected = reference_information_state(env, s, log)
            for name, view in layout.views(info).items():
                assert np.array_equal(view, expected[name]), (name, s)
        yield
        if all(env.terminations.values()):
            return
        mask = env.observe(env.agent_selection)["action_mask"]
        before_up = st[L.S_UP : L.S_UP + 4].copy()
        before_down = st[L.S_DOWN : L.S_DOWN + 4].copy()
        trick = int(st[L.S_TRICK])
        hand_number = env.session.hand_number
        env.step(int(rng.choice(np.flatnonzero(mask))))
        if env.session.hand_number != hand_number:  # the next hand of the match: a new history
            log = {}
            continue
        moved = log.setdefault(trick, {"up": np.zeros(4, dtype=np.int64), "down": np.zeros(4, dtype=np.int64)})
        moved["up"] |= st[L.S_UP : L.S_UP + 4] & ~before_up
        moved["down"] |= st[L.S_DOWN : L.S_DOWN + 4] & ~before_down


@pytest.mark.parametrize("rules", PRESETS, ids=str)
def test_encoders_match_reference(rules):
    decisions = 0
    for seed in range(3):
        for _ in play_and_check(rules, seed):
            decisions += 1
    assert decisions > 10


def test_encoders_match_reference_over_a_match():
    assert sum(1 for _ in play_and_check("hongkong", 4, hands=3)) > 60


@pytest.mark.parametrize(
    "players, size, info_size",
    [(4, 282, 282 + 21 + 10 * (4 + 2 * 4 * 21 + 4)), (3, 233, 233 + 21 + 10 * (3 + 2 * 3 * 21 + 3))],
)
def test_layout(players, size, info_size):
    layout = ObservationLayout(players, 8)
    assert layout.size == size and layout.information_size == info_size
    low, high = layout.bounds()
    assert low.shape == high.shape == (size,) and (low <= high).all()
    vector = np.arange(info_size, dtype=np.float32)
    views = layout.views(vector)
    assert views["hand"].shape == (21,) and views["up"].shape == (players, 21)
    assert views["trick_up"].shape == (10, players, 21)
    assert np.concatenate([v.ravel() for v in views.values()]).tolist() == vector.tolist()
    batch = np.zeros((5, size), dtype=np.float32)
    assert layout.views(batch)["down"].shape == (5, players, 21)
    with pytest.raises(ValueError, match="expected a vector"):
        layout.views(np.zeros(7))


def known_start_values():
    """Seat 0's view of Game(seed=8)'s deal (banker seat 0 leads), checked by hand."""
    env = raw_env()
    env.reset(seed=8)
    views = env.session.layout.views(env.observe("player_0")["observation"])
    assert env.game.hand(0) == ["6-6", "4-4", "6-4", "5-1", "6-3", "5-2", "4-3", "2-1"]
    hand = np.zeros(21)
    hand[[0, 2, 8, 10, 11, 15, 16, 20]] = 1  # their places in tiles.NAMES
    assert np.array_equal(views["hand"], hand)
    assert views["banker"].tolist() == [1, 0, 0, 0] and views["to_act"].tolist() == [1, 0, 0, 0]
    assert views["phase"].tolist() == [0, 1, 0, 0] and views["tiles_left"].tolist() == [8] * 4
    other = env.session.layout.views(env.observe("player_1")["observation"])
    assert other["banker"].tolist() == [0, 0, 0, 1] and other["to_act"].tolist() == [0, 0, 0, 1]
    return env


def test_known_values_relative_seats():
    env = known_start_values()
    env.step(env.session.combos.find([20]))  # seat 0 leads the single 2-1
    for s, agent in enumerate(env.possible_agents):
        views = env.session.layout.views(env.observe(agent)["observation"])
        rel = (0 - s) % 4
        assert views["up"][rel, 20] == 1 and views["up"].sum() == 1
        assert views["lead"][20] == 1 and views["best"][20] == 1
        assert views["best_seat"][rel] == 1 and views["leader"][rel] == 1
        assert views["to_act"][(1 - s) % 4] == 1 and views["size"].tolist() == [1, 0, 0, 0]
        assert views["acted"][0] == 1 and views["tiles_left"][rel] == 7


# ----------------------------------------------------------------------------- nothing leaks
def hide_differently(env, observer: int, rng: np.random.Generator):
    """(state, history) that differ from the env's only in tiles ``observer`` cannot see: the
    other seats' hands and (unless discards are face up) face-down tiles are shuffled among
    them, each seat keeping how many it holds and how many went down in each trick."""
    session = env.session
    state, history = session.state.copy(), session.history.copy()
    players, face_up = session.players, session.rules.discards_face_up
    slots, tiles = [], []  # a slot: (seat, "hand") or (seat, trick k) or (seat, "table")
    recorded = int(history[L.H_COUNT])

    def add(slot, mask):
        for b in range(32):
            if mask >> b & 1:
                slots.append(slot)
                tiles.append(b)

    for s in range(players):
        if s == observer:
            continue
        add((s, "hand"), state[L.S_HAND + s])
        if not face_up:
            for k in range(recorded):
                add((s, k), history[L.HISTORY_STRIDE * k + 2 * s + L.H_DOWN])
            if session.game.phase != "over":
                add((s, "table"), state[L.S_TABLE + s] & state[L.S_DOWN + s])
    shuffled = rng.permutation(tiles)
    for s in range(players):
        if s != observer:
            state[L.S_HAND + s] = 0
            if not face_up:
                state[L.S_TABLE + s] &= ~state[L.S_DOWN + s]
                state[L.S_DOWN + s] = 0
                for k in range(recorded):
                    history[L.HISTORY_STRIDE * k + 2 * s + L.H_DOWN] = 0
    for (s, where), b in zip(slots, shuffled, strict=True):
        bit = np.int64(1) << np.int64(b)
        if where == "hand":
            state[L.S_HAND + s] |= bit
        else:
            state[L.S_DOWN + s] |= bit
            if where == "table":
                state[L.S_TABLE + s] |= bit
            else:
                history[L.HISTORY_STRIDE * where + 2 * s + L.H_DOWN] |= bit
    for s in range(players):
        state[L.S_DEALT + s] = state[L.S_HAND + s] | state[L.S_UP + s] | state[L.S_DOWN + s]
    return state, history


def encode(env, state, history, seat):
    s = env.session
    obs = np.empty(s.layout.size, dtype=np.float32)
    K.write_observation(state, seat, s.table, s.rules_array, s.offsets, s.face_up, obs)
    info = np.empty(s.layout.information_size, dtype=np.float32)
    K.write_information_state(state, history, seat, s.table, s.rules_array, s.offsets, s.face_up, info)
    return obs, info


@pytest.mark.parametrize("rules", ["standard", "three_player", "seed001", {"discards_face_up": True}], ids=str)
def test_observation_leaks_nothing_hidden(rules):
    rng = np.random.default_rng(11)
    changed = 0
    for seed in range(4):
        env = raw_env(rules=rules)
        env.reset(seed=seed)
        while not all(env.terminations.values()):
            for observer in range(env.session.players):
                state, history = hide_differently(env, observer, rng)
                changed += not np.array_equal(state, env.session.state)
                original = encode(env, env.session.state, env.session.history, observer)
                other = encode(env, state, history, observer)
                assert np.array_equal(original[0], other[0])
                assert np.array_equal(original[1], other[1])
                # ...while the seats whose tiles moved see the difference
                for s in range(env.session.players):
                    if s != observer and not np.array_equal(
                        counts(state[L.S_HAND + s]), counts(env.session.state[L.S_HAND + s])
                    ):
                        assert not np.array_equal(
                            encode(env, state, history, s)[0], encode(env, env.session.state, env.session.history, s)[0]
                        )
            mask = env.observe(env.agent_selection)["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
    assert changed > 100
