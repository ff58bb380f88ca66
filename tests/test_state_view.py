"""StateView reads the state array by name: each property against the layout offsets, along
whole seeded hands of each rule set, and it never writes."""

from __future__ import annotations

import numpy as np
import pytest

from tiengow_env import Game, StateView
from tiengow_env import layout as L
from tiengow_env.state import STATE_LEN

PER_SEAT = {
    "hands": L.S_HAND,
    "dealt": L.S_DEALT,
    "down": L.S_DOWN,
    "up": L.S_UP,
    "on_table": L.S_TABLE,
    "columns": L.S_COLS,
    "bonus": L.S_BONUS,
    "settlement": L.S_SETTLE,
}


def expected(state: np.ndarray, players: int) -> dict:
    """What each property should read, straight from the offsets."""

    def seat_or_none(offset: int) -> int | None:
        return None if state[offset] < 0 else int(state[offset])

    over = state[L.S_PHASE] == L.PHASE_OVER
    tricks = int(state[L.S_TRICK])
    return {
        **{name: state[start : start + players].tolist() for name, start in PER_SEAT.items()},
        "chips": (state[L.S_BONUS : L.S_BONUS + players] + state[L.S_SETTLE : L.S_SETTLE + players]).tolist(),
        "banker": int(state[L.S_BANKER]),
        "streak": int(state[L.S_STREAK]),
        "phase": ("declare", "lead", "follow", "over")[state[L.S_PHASE]],
        "is_over": bool(over),
        "to_act": None if over else int(state[L.S_TO_ACT]),
        "tricks_done": tricks,
        "declarer": seat_or_none(L.S_DECLARER),
        "winner": seat_or_none(L.S_WINNER),
        "multipliers": (int(state[L.S_MULT_LAST]), int(state[L.S_MULT_SHUT])),
        "trick_log": [[int(state[L.S_LOG + L.LOG_STRIDE * k + f]) for f in range(4)] for k in range(tricks)],
        "leader": int(state[L.S_LEADER]),
        "size": int(state[L.S_SIZE]),
        "current_best": (int(state[L.S_BEST_SEAT]), int(state[L.S_BEST]))
        if state[L.S_PHASE] == L.PHASE_FOLLOW
        else None,
        "acted": int(state[L.S_ACTED]),
        "owed": int(state[L.S_OWED]),
        "doomed": bool(state[L.S_DOOMED]),
        "banker_first": None if state[L.S_BANKER_FIRST] < 0 else bool(state[L.S_BANKER_FIRST]),
    }


def read(view: StateView) -> dict:
    out = {}
    for name in expected(np.zeros(STATE_LEN, dtype=np.int64), view.players):
        value = getattr(view, name)
        out[name] = value.tolist() if isinstance(value, np.ndarray) else value
    return out


@pytest.mark.parametrize(
    "rules, seeds", [("standard", range(6)), ("hongkong", range(3)), ("micro", range(3)), ("three_player", range(3))]
)
def test_every_property_reads_its_offset_along_whole_hands(rules, seeds):
    for seed in seeds:
        game = Game(seed=seed, rules=rules)
        rng = np.random.default_rng(seed)
        view = game.view
        while True:
            assert read(view) == expected(game.state, game.players)
            assert read(StateView(game.state.copy(), game.players)) == read(view)  # any state array
            if game.is_over:
                break
            legal = game.legal_actions()
            game.step(legal[rng.integers(len(legal))])


def test_the_view_is_read_only_and_follows_the_game():
    game = Game(seed=3)
    view = game.view
    hands = view.hands
    with pytest.raises(ValueError, match="read-only"):
        hands[0] = 0
    assert game.state.flags.writeable  # the game's own array stays writeable
    before = hands.copy()
    while game.phase != "follow":
        game.step(game.legal_actions()[0])
    assert not np.array_equal(hands, before)  # the same view shows the game as it is now


@pytest.mark.parametrize(
    "state, players, message",
    [
        (np.zeros(10, dtype=np.int64), 4, r"int64 array of shape \(90,\), got int64 \(10,\)"),
        (np.zeros(STATE_LEN, dtype=np.int32), 4, "got int32"),
        ([0] * STATE_LEN, 4, "got list"),
        (np.zeros(STATE_LEN, dtype=np.int64), 5, "players must be 3 or 4, got 5"),
    ],
)
def test_a_bad_state_is_named(state, players, message):
    with pytest.raises(ValueError, match=message):
        StateView(state, players)
