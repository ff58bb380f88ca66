"""Property tests: random deals and random legal play under several rule sets.

Each example deals a hand with ``Game(seed=...)`` and plays it to the end with legal actions
picked by a seeded generator, checking invariants after every step (RULES.md sections 4 to 8).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tiengow_env import layout as L
from tiengow_env.game import Game, replay
from tiengow_env.tiles import NAMES

RULE_SETS = [
    "standard",
    "three_player",
    "micro",
    "hongkong",
    "culin1895",
    "seed001",
    {"one_red_dot": "choice"},
    {"early_death": False, "must_beat_if_able": True},
    {"preset": "standard", "deck": "24_weakened_military"},
]

SETTINGS = settings(max_examples=150, deadline=None, database=None)
seeds = st.integers(min_value=0, max_value=2**63 - 1)
rules_st = st.sampled_from(RULE_SETS)


def play_out(game: Game, choice_seed: int, check=None) -> list[tuple[int, int]]:
    """Play to the end with random legal actions; ``check(game, before, action)`` after each step."""
    rng = np.random.default_rng(choice_seed)
    taken = []
    while not game.is_over:
        legal = game.legal_actions()
        assert legal
        action = int(legal[rng.integers(len(legal))])
        before = game.clone()
        game.step(action)
        taken.append((before.to_act, action))
        if check:
            check(game, before, action)
    return taken


def to_record(game: Game, start: Game, taken: list[tuple[int, int]]) -> dict:
    """The hand record of a played game (forced early-death discards left out, as allowed).

    Consecutive one-tile discard steps of one seat are one record action of n tiles.
    """
    C = game.combos.num_combos
    actions: list[dict] = []
    pending: dict | None = None
    for seat, action in taken:
        if C <= action < C + len(NAMES):
            if pending is not None and pending["seat"] == seat:
                pending["discard"].append(NAMES[action - C])
                continue
            pending = {"seat": seat, "discard": [NAMES[action - C]]}
            actions.append(pending)
            continue
        pending = None
        if action < C:
            actions.append({"seat": seat, "play": game.combos.combos[action].names})
        else:
            actions.append({"seat": seat, "declare": action == C + L.DECLARE_OFFSET})
    return {
        "rules": game.rules.switches(),
        "banker": start.banker,
        "hands": [start.dealt(s) for s in range(game.players)],
        "actions": actions,
    }


@SETTINGS
@given(rules=rules_st, seed=seeds, choice_seed=seeds)
def test_columns_and_chips_add_up(rules, seed, choice_seed):
    game = Game(seed=seed, rules=rules)
    play_out(game, choice_seed)
    res = game.result()
    hand_size = game.rules.hand_size
    assert sum(res["columns"]) == hand_size
    assert sum(res["net"]) == 0
    assert sum(res["trick_bonus"]) == 0 and sum(res["settlement"]) == 0
    # The columns are the sizes of the tricks each seat won.
    won = Counter()
    for trick in res["tricks"]:
        won[trick["winner"]] += trick["size"]
        assert len(trick["winning"]) == trick["size"]
    if res["tricks"]:
        assert [won[s] for s in range(game.players)] == res["columns"]
        assert res["last_trick_winner"] == res["tricks"][-1]["winner"]
        assert all(game.hand(s) == [] for s in range(game.players))
    else:  # One Red Dot: the declarer holds every column
        assert res["columns"][res["last_trick_winner"]] == hand_size
        assert sorted(res["columns"]) == [0] * (game.players - 1) + [hand_size]


@SETTINGS
@given(rules=rules_st, seed=seeds, choice_seed=seeds)
def test_played_tiles_leave_the_hand(rules, seed, choice_seed):
    C = Game(seed=0, rules=rules).combos.num_combos

    def check(game, before, action):
        actor = before.to_act
        if action >= C + L.DECLARE_OFFSET:  # declare / decline move no tile
            assert all(game.hand(s) == before.hand(s) for s in range(game.players))
            return
        moved = game.combos.combos[action].names if action < C else [NAMES[action - C]]
        gone = Counter(before.hand(actor)) - Counter(game.hand(actor))
        assert gone == Counter(moved)
        assert len(before.hand(actor)) - len(game.hand(actor)) == len(moved)
        forced = dict(game.forced)
        for s in range(game.players):
            if s == actor:
                continue
            shrink = len(before.hand(s)) - len(game.hand(s))
            if s in forced:
                assert shrink == 1 and before.hand(s) == [NAMES[forced[s]]]
            else:
                assert shrink == 0
        total = sum(len(before.hand(s)) - len(game.hand(s)) for s in range(game.players))
        assert total == len(moved) + len(game.forced)

    game = Game(seed=seed, rules=rules)
    play_out(game, choice_seed, check)


@SETTINGS
@given(rules=rules_st, seed=seeds, choice_seed=seeds, split=st.integers(0, 40))
def test_clone_is_independent(rules, seed, choice_seed, split):
    game = Game(seed=seed, rules=rules)
    rng = np.random.default_rng(choice_seed)
    for _ in range(split):
        if game.is_over:
            break
        legal = game.legal_actions()
        game.step(legal[rng.integers(len(legal))])
    frozen = game.state.copy()
    copy = game.clone()
    assert np.array_equal(copy.state, game.state)
    play_out(copy, choice_seed + 1)  # playing the clone ...
    assert np.array_equal(game.state, frozen)  # ... leaves the original untouched
    if not game.is_over:
        copy2 = game.clone()
        frozen2 = copy2.state.copy()
        play_out(game, choice_seed + 2)  # and the other way round
        assert np.array_equal(copy2.state, frozen2)


@SETTINGS
@given(rules=rules_st, seed=seeds, choice_seed=seeds, probe=st.integers(-5, 2000))
def test_illegal_step_raises_and_changes_nothing(rules, seed, choice_seed, probe):
    game = Game(seed=seed, rules=rules)
    rng = np.random.default_rng(choice_seed)
    num_actions = game.combos.num_actions
    while not game.is_over:
        legal = game.legal_actions()
        mask = game.legal_mask()
        assert sorted(np.flatnonzero(mask).tolist()) == sorted(legal)
        illegal = [a for a in range(num_actions) if a not in legal]
        bad = [illegal[probe % len(illegal)] if illegal else num_actions, num_actions + probe % 7, -1 - probe % 3]
        for action in bad + [float(legal[0]), str(legal[0]), None, True]:
            frozen = game.state.copy()
            forced = list(game.forced)
            with pytest.raises(ValueError):
                game.step(action)
            assert np.array_equal(game.state, frozen)
            assert game.forced == forced
        game.step(legal[rng.integers(len(legal))])
    frozen = game.state.copy()
    with pytest.raises(ValueError, match="over"):
        game.step(0)
    assert np.array_equal(game.state, frozen)


@SETTINGS
@given(rules=rules_st, seed=seeds, choice_seed=seeds)
def test_replaying_the_record_gives_the_same_result(rules, seed, choice_seed):
    """A played hand written as a record (forced discards left out) replays to its result."""
    game = Game(seed=seed, rules=rules)
    start = game.clone()
    taken = play_out(game, choice_seed)
    assert replay(to_record(game, start, taken)) == game.result()


@SETTINGS
@given(seed=seeds)
def test_random_deal_uses_the_deck(seed):
    for rules in ("standard", "three_player", "micro"):
        game = Game(seed=seed, rules=rules)
        dealt = sorted(t for s in range(game.players) for t in game.dealt(s))
        assert dealt == sorted(NAMES[t] for t in game.rules.deck_types)
        assert all(len(game.dealt(s)) == game.rules.hand_size for s in range(game.players))
        assert 0 <= game.banker < game.players
        # The same seed deals the same hand.
        again = Game(seed=seed, rules=rules)
        assert np.array_equal(again.state, game.state)
