"""The bit-level kernels against plain Python, and whole-hand playouts in compiled code."""

import numpy as np
import pytest

from tiengow_env import _kernels as K
from tiengow_env import layout as L
from tiengow_env.combos import table_for
from tiengow_env.rules import PRESETS
from tiengow_env.tiles import NUM_TYPES, TYPE_BITS, canonical, counts_mask, mask_types

RNG = np.random.default_rng(0)
HANDS = [int(h) for h in RNG.integers(0, 2**32, size=200, dtype=np.int64)]


@pytest.mark.parametrize("hand", HANDS[:50])
def test_bit_helpers(hand):
    assert K.popcount(hand) == bin(hand).count("1")
    if hand:
        assert K.lowest_bit(hand) == (hand & -hand).bit_length() - 1
    assert K.canonical(hand) == canonical(hand) == counts_mask(np.bincount(mask_types(hand), minlength=NUM_TYPES))


@pytest.mark.parametrize("hand", HANDS[:50])
def test_take_removes_held_copies_of_the_needed_types(hand):
    types = mask_types(hand)
    need_types = types[::2]  # any sub-multiset of the hand
    need = counts_mask(np.bincount(need_types, minlength=NUM_TYPES))
    taken = K.take(hand, need)
    assert taken & ~hand == 0
    assert sorted(mask_types(taken)) == sorted(need_types)


def test_canonical_of_one_copy_is_copy_zero():
    copy1 = 1 << int(TYPE_BITS[0, 1])
    assert K.canonical(copy1) == 1 << int(TYPE_BITS[0, 0])


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_deal_gives_the_whole_deck(preset):
    rules = PRESETS[preset]
    table = table_for(rules)
    rng = np.zeros(1, dtype=np.uint64)
    K.seed_rng(rng, 5)
    hands = np.zeros(L.MAX_SEATS, dtype=np.int64)
    for _ in range(20):
        K.deal(rng, table.rules_array, hands)
        union = 0
        for s in range(rules.players):
            assert K.popcount(hands[s]) == rules.hand_size
            assert union & hands[s] == 0
            union |= int(hands[s])
        assert union == rules.deck_mask


def test_deal_is_uniform_per_tile():
    """Each physical tile lands with each seat a quarter of the time (chi-square, loose bound)."""
    table = table_for(PRESETS["standard"])
    rng = np.zeros(1, dtype=np.uint64)
    K.seed_rng(rng, 11)
    hands = np.zeros(L.MAX_SEATS, dtype=np.int64)
    counts = np.zeros((32, 4))
    n = 4000
    for _ in range(n):
        K.deal(rng, table.rules_array, hands)
        for s in range(4):
            for b in range(32):
                counts[b, s] += (hands[s] >> b) & 1
    chi2 = ((counts - n / 4) ** 2 / (n / 4)).sum()
    assert chi2 < 96 * 1.6  # 96 degrees of freedom; a bad shuffle gives thousands


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_random_hands_conserve_chips_and_columns(preset):
    rules = PRESETS[preset]
    table = table_for(rules)
    net = np.zeros((300, rules.players), dtype=np.int64)
    steps = K.random_hands(300, 3, table.table, table.rules_array, net)
    assert steps > 0
    assert (net.sum(axis=1) == 0).all()
    again = np.zeros_like(net)
    K.random_hands(300, 3, table.table, table.rules_array, again)
    assert (again == net).all()  # same seed, same hands


def test_seeded_rng_differs_by_seed():
    a, b = np.zeros(1, dtype=np.uint64), np.zeros(1, dtype=np.uint64)
    K.seed_rng(a, 1)
    K.seed_rng(b, 2)
    assert [K.rand_below(a, 1000) for _ in range(5)] != [K.rand_below(b, 1000) for _ in range(5)]
    assert all(0 <= K.rand_below(a, 7) < 7 for _ in range(200))
