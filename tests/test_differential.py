"""The compiled core against the independent reference engine (tiengow_env/reference.py).

At every decision of thousands of random hands, both engines must offer the same set of
decisions (kind, multiset of tile types), and every hand must end with the same result.
"""

import numpy as np
import pytest

from tiengow_env import _kernels as K
from tiengow_env import layout as L
from tiengow_env.game import Game
from tiengow_env.reference import RefGame
from tiengow_env.tiles import mask_types

PRESETS = [
    "standard",
    "culin1895",
    "hongkong",
    "three_player",
    "micro",
    "seed001",
    {"one_red_dot": "choice"},
    {"must_beat_if_able": True},
    {"civilian_triplets": True},
    {"combos": "pairs_only"},
    {"deck": "24_weakened_military"},
    {"deck": "24_reduced_populace"},
    {"first_lead": "heaven_holder", "early_death": False},
]
HANDS_PER_PRESET = 800  # 13 presets: over 10,000 hands in all


def kernel_decisions(game: Game) -> dict:
    """{(kind, types): kernel decision code} of the acting seat."""
    scratch = np.zeros(L.decisions_len(game.combos.num_combos), dtype=np.int64)
    out = np.zeros_like(scratch)
    n = K.decisions(game.state, game.combos.table, game.combos.rules_array, scratch, out)
    C = game.combos.num_combos
    kind = {"declare": None, "lead": "lead", "follow": "beat"}[game.phase]
    found = {}
    for code in (int(c) for c in out[:n]):
        if code & int(K.DISCARD_SET):
            key = ("discard", tuple(mask_types(code & ~int(K.DISCARD_SET))))
        elif code >= C:
            key = ("declare", (1,) if code == C + L.DECLARE_OFFSET else (0,))
        else:
            key = (kind, game.combos.combos[code].types)
        found[key] = code
    return found


def play_both(rules, seed: int) -> None:
    game = Game(seed=seed, rules=rules)
    hands = [mask_types(game.state[L.S_DEALT + s]) for s in range(game.players)]
    ref = RefGame(hands, game.banker, game.rules, 1)
    rng = np.random.default_rng(seed)
    while not ref.is_over:
        assert not game.is_over and game.to_act == ref.to_act
        mine = kernel_decisions(game)
        assert set(mine) == ref.decisions(), f"seed {seed}: decisions differ"
        keys = sorted(mine)
        choice = keys[rng.integers(len(keys))]
        K.apply_decision(game.state, mine[choice], game.combos.table, game.combos.rules_array)
        ref.apply(choice)
    assert game.is_over
    assert game.result() == ref.result(), f"seed {seed}: results differ"


@pytest.mark.parametrize("rules", PRESETS, ids=[str(p) for p in PRESETS])
def test_engines_agree(rules):
    for seed in range(HANDS_PER_PRESET):
        play_both(rules, seed)
