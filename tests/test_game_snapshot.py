"""``Game.clone``, ``snapshot``/``restore`` and the lazily read step log (``tricks``, ``forced``):
a copy or a restored game is the game it copied in every public view, and stepping one never
touches the other; reading the tricks early or late gives the same tricks."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tiengow_env import layout as L
from tiengow_env.game import Game, Snapshot


def views(game: Game) -> dict:
    """Everything a user can read of a game, as plain values."""
    out = {
        "state": game.state.tolist(),
        "history": list(game.history),
        "tricks": game.tricks,
        "forced": game.forced,
        "legal": game.legal_actions(),
        "over": game.is_over,
    }
    if not game.is_over:
        out["information_state"] = game.information_state().tolist()
    return out


CASES = [("standard", 1), ("standard", 2), ("three_player", 3), ("micro", 4), ("seed001", 5)]


@pytest.mark.parametrize("rules,seed", CASES)
def test_clone_and_restore_give_back_the_position(rules, seed):
    rng = random.Random(seed)
    game = Game(seed=seed, rules=rules)
    while not game.is_over:
        before = views(game)
        snapshot, copy = game.snapshot(), game.clone()
        action = rng.choice(game.legal_actions())
        copy.step(action)
        assert views(game) == before  # stepping the clone left the game alone
        game.step(action)
        assert views(game) == views(copy)  # the same action from the same position
        game.restore(snapshot)
        assert views(game) == before
        game.restore(snapshot)  # a snapshot serves again
        assert views(game) == before
        game.step(action)


@pytest.mark.parametrize("rules,seed", CASES)
def test_tricks_read_early_or_late_are_the_same(rules, seed):
    rng = random.Random(seed)
    actions = []
    game = Game(seed=seed, rules=rules)
    while not game.is_over:
        actions.append(rng.choice(game.legal_actions()))
        game.step(actions[-1])
    late = game.tricks
    eager = Game(seed=seed, rules=rules)
    for action in actions:
        eager.step(action)
        assert eager.tricks[:-1] == late[: len(eager.tricks) - 1]  # every finished trick is final
    assert eager.tricks == late and eager.forced == game.forced
    assert [t.winner for t in late] == [
        int(game.state[L.S_LOG + L.LOG_STRIDE * k + L.LOG_WINNER]) for k in range(int(game.state[L.S_TRICK]))
    ]


def test_a_refused_step_changes_nothing_that_can_be_read():
    game = Game(seed=3)
    for _ in range(5):
        game.step(game.legal_actions()[0])
    before = views(game)
    illegal = next(a for a in range(game.combos.num_actions) if a not in game.legal_actions())
    for action in (illegal, -1, game.combos.num_actions, 1.0, True, "3"):
        with pytest.raises(ValueError):
            game.step(action)
        assert views(game) == before


def test_a_state_set_from_outside_in_mid_trick_starts_one_trick():
    source = Game(seed=11)
    while source.phase != "follow" or int(source.state[L.S_ACTED]) != 1 or int(source.state[L.S_TRICK]) < 2:
        source.step(source.legal_actions()[0])
    game = Game(seed=0)
    game.state = source.state.copy()  # the third trick's leader has played: three followers to go
    trick = int(game.state[L.S_TRICK])
    while int(game.state[L.S_TRICK]) == trick:
        game.step(game.legal_actions()[0])
    assert len(game.tricks) == 1
    assert game.tricks[0].leader == int(source.state[L.S_LEADER]) and game.tricks[0].winner is not None
    assert [p.seat for p in game.tricks[0].plays] == [(game.tricks[0].leader + k) % 4 for k in range(1, 4)]


def test_the_log_is_read_before_it_fills():
    """A game whose state is set from outside again and again takes more steps than one hand."""
    game, steps = Game(seed=1), 0
    for seed in range(2, 6):
        game.state = Game(seed=seed).state.copy()
        while not game.is_over:
            game.step(game.legal_actions()[0])
            steps += 1
    assert steps > L.W_ROWS
    assert game.tricks[-1].winner is not None and len(game.history) == steps


@pytest.mark.parametrize("bad", [None, "snapshot", (1, 2)])
def test_restore_refuses_what_is_not_a_snapshot_of_these_rules(bad):
    game = Game(seed=1)
    with pytest.raises(ValueError, match="restore takes a Snapshot"):
        game.restore(bad)
    with pytest.raises(ValueError, match="under these rules"):
        game.restore(Game(seed=1, rules="micro").snapshot())
    assert isinstance(game.snapshot(), Snapshot)
    assert np.array_equal(game.state, Game(seed=1).state)
