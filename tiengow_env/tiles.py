"""The 32 physical tiles of the Civil/Military set and their 21 types (RULES.md section 1).

Tile types are numbered in canonical order, highest first (civil by rank, then military):

    type  0..10   civil     6-6 1-1 4-4 3-1 5-5 3-3 2-2 6-5 6-4 6-1 5-1
    type 11..20   military  6-3 5-4 6-2 5-3 5-2 4-3 4-2 4-1 3-2 2-1

Bit layout of a hand (a ``uint32`` mask over the physical tiles):

    bit 2t, 2t+1   the two copies of civil type t       (bits 0..21)
    bit 11 + t     the single copy of military type t   (bits 22..31)

So ascending bit order is canonical tile order. A *canonical* mask holds the lowest copies
of each type it contains (copy 0 before copy 1); ``canonical()`` maps any hand to the
canonical mask with the same multiset of types, which is what combination masks are
compared against.
"""

from __future__ import annotations

import numpy as np

from .checks import short_repr

NUM_TYPES = 21
NUM_CIVIL = 11
NUM_TILES = 32

NAMES: tuple[str, ...] = (
    "6-6",
    "1-1",
    "4-4",
    "3-1",
    "5-5",
    "3-3",
    "2-2",
    "6-5",
    "6-4",
    "6-1",
    "5-1",
    "6-3",
    "5-4",
    "6-2",
    "5-3",
    "5-2",
    "4-3",
    "4-2",
    "4-1",
    "3-2",
    "2-1",
)
CHINESE: tuple[str, ...] = (
    "Heaven",
    "Earth",
    "Man",
    "Goose",
    "Plum",
    "Long Three",
    "Bench",
    "Tiger Head",
    "Red-Head Ten",
    "Long-Leg Seven",
    "Red Mallet Six",
    "Nine",
    "Nine",
    "Eight",
    "Eight",
    "Seven",
    "Seven",
    "Big Six",
    "Five",
    "Five",
    "Little Three",
)
TYPE_OF_NAME: dict[str, int] = {name: t for t, name in enumerate(NAMES)}

CIVIL, MILITARY = 0, 1
HEAVEN, EARTH, MAN, GOOSE, PLUM = 0, 1, 2, 3, 4
LONG_THREE, BENCH = 5, 6
NINE_63, NINE_54, EIGHT_62, EIGHT_53, SEVEN_52, SEVEN_43 = 11, 12, 13, 14, 15, 16
BIG_SIX, FIVE_41, FIVE_32, LITTLE_THREE = 17, 18, 19, 20


def _make_halves() -> np.ndarray:
    """Pips of the two halves of each type, high half first: shape (21, 2)."""
    return np.array([[int(p) for p in name.split("-")] for name in NAMES], dtype=np.int64)


HALVES = _make_halves()
SUIT = np.array([CIVIL] * NUM_CIVIL + [MILITARY] * (NUM_TYPES - NUM_CIVIL), dtype=np.int64)
PIPS = HALVES.sum(axis=1)
COPIES = np.array([2] * NUM_CIVIL + [1] * (NUM_TYPES - NUM_CIVIL), dtype=np.int64)


def _make_rank() -> np.ndarray:
    """Strength of a single tile inside its suit; larger is stronger.

    Civil: 11 for Heaven down to 1 for the Red Mallet Six. Military: the pip total, so the
    two tiles of one total tie.
    """
    rank = np.zeros(NUM_TYPES, dtype=np.int64)
    rank[:NUM_CIVIL] = np.arange(NUM_CIVIL, 0, -1)
    rank[NUM_CIVIL:] = PIPS[NUM_CIVIL:]
    return rank


RANK = _make_rank()
# Worth of a single tile inside its suit, 0 (weakest) .. 1 (strongest): civil by rank, military
# by pips 3 .. 9. Heuristics (baseline agents, rollouts, abstractions) discard the tile worth least.
TILE_WORTH = np.where(SUIT == 0, (RANK - 1) / 10.0, (RANK - 3) / 6.0).astype(np.float64)


def _make_red_pips() -> np.ndarray:
    """Red pips per type: a half of 1 or 4 is all red; Heaven shows 6 red of its 12."""
    red = np.array([sum(p for p in halves if p in (1, 4)) for halves in HALVES], dtype=np.int64)
    red[HEAVEN] = 6
    return red


RED_PIPS = _make_red_pips()

# Families (RULES.md section 1): civil head -> its two military tiles, strongest family first.
FAMILIES: tuple[tuple[int, tuple[int, int]], ...] = (
    (HEAVEN, (NINE_63, NINE_54)),
    (EARTH, (EIGHT_62, EIGHT_53)),
    (MAN, (SEVEN_52, SEVEN_43)),
    (GOOSE, (FIVE_41, FIVE_32)),
)


def _make_bits() -> tuple[np.ndarray, np.ndarray]:
    """TYPE_BITS[t, k]: the bit of copy k of type t (-1 where there is none); TILE_TYPE[b]."""
    type_bits = -np.ones((NUM_TYPES, 2), dtype=np.int64)
    tile_type = np.zeros(NUM_TILES, dtype=np.int64)
    bit = 0
    for t in range(NUM_TYPES):
        for k in range(COPIES[t]):
            type_bits[t, k] = bit
            tile_type[bit] = t
            bit += 1
    return type_bits, tile_type


TYPE_BITS, TILE_TYPE = _make_bits()
TYPE_MASK = np.array([sum(1 << int(b) for b in TYPE_BITS[t] if b >= 0) for t in range(NUM_TYPES)], dtype=np.uint32)
FULL_DECK = np.uint32(0xFFFFFFFF)
# Bits of copy 0 of the civil types: canonicalisation works on these pairs.
CIVIL_LOW = np.uint32(sum(1 << (2 * t) for t in range(NUM_CIVIL)))


def canonical(hand: int) -> int:
    """The canonical mask with the same multiset of tile types as ``hand`` (see module doc)."""
    hand = int(hand)
    low = (hand | (hand >> 1)) & int(CIVIL_LOW)
    both = hand & (hand >> 1) & int(CIVIL_LOW)
    return (hand & ~((int(CIVIL_LOW) << 1) | int(CIVIL_LOW))) | low | (both << 1)


def type_name(t: int) -> str:
    return NAMES[t]


def parse_type(name: object) -> int:
    """Tile type of a name such as ``"6-3"`` or ``"3-6"``; raises ValueError for anything else."""
    t = TYPE_OF_NAME.get(name) if isinstance(name, str) else None
    if t is None and isinstance(name, str) and len(name) == 3:
        t = TYPE_OF_NAME.get(name[::-1])  # "3-6": only ASCII 1 to 6 are digits (no "６-６")
    if t is not None:
        return t
    if not isinstance(name, str):
        raise ValueError(f"tile name must be a string, got {type(name).__name__} {short_repr(name)}")
    raise ValueError(f"unknown tile name {short_repr(name)}; tiles are written a-b, one of: {' '.join(NAMES)}")


def counts_of(types: list[int] | tuple[int, ...]) -> np.ndarray:
    """Count vector (21,) of a list of tile types."""
    return np.bincount(np.asarray(types, dtype=np.int64), minlength=NUM_TYPES).astype(np.int64)


def mask_types(mask: int) -> list[int]:
    """Tile types of the physical tiles in ``mask``, in canonical order (with repeats)."""
    mask = int(mask)
    return [int(TILE_TYPE[b]) for b in range(NUM_TILES) if mask >> b & 1]


def mask_names(mask: int) -> list[str]:
    return [NAMES[t] for t in mask_types(mask)]


def counts_mask(counts: np.ndarray) -> int:
    """Canonical mask of a count vector (copy 0 first)."""
    mask = 0
    for t in range(NUM_TYPES):
        for k in range(int(counts[t])):
            mask |= 1 << int(TYPE_BITS[t, k])
    return mask


def names_of(types: list[int] | tuple[int, ...]) -> list[str]:
    """Names in canonical order."""
    return [NAMES[t] for t in sorted(types)]
