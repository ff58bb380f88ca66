"""Combination tables (RULES.md section 2 and the ``combos`` switches of section 9).

A combination type is a multiset of tile types. ``CombinationTable(rules)`` lists the types
that the rule set allows *and* the deck can make, sorted by (class, strength, tiles), and
packs them into the int64 arrays the kernels read (layout in ``layout.py``):

* each row carries the canonical mask of its tiles, so "can this hand make combination j"
  is ``canonical(hand) & mask == mask``;
* because rows are sorted by class and strength, the combinations that beat row j are one
  contiguous id range, and legal beats are a scan of that range only;
* legal leads test the contiguous masks of all rows 64 at a time, in vector instructions
  (about 20 ns for the 61 classic rows). Past ``LEAD_SCAN_LIMIT`` rows a CSR index groups the
  rows by their highest tile, and leads scan only the groups of the tile types in hand. This keeps
  ``same_suit_any`` (1,617 rows) fast: an 8-tile hand touches at most 8 groups, each holding
  only combinations headed by one of its own tiles.

For the classic rules over the 32-tile deck this gives 61 types (``CLASSIC.num_combos``)
and 84 physical masks (``physical_masks()``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from . import layout as L
from .rules import RuleSet
from .tiles import (
    BIG_SIX,
    CHINESE,
    COPIES,
    FAMILIES,
    LITTLE_THREE,
    NAMES,
    NINE_54,
    NINE_63,
    NUM_CIVIL,
    NUM_TYPES,
    RANK,
    SUIT,
    TYPE_BITS,
    counts_mask,
)

CLASS_NAMES: tuple[str, ...] = (
    "civil_single",
    "military_single",
    "civil_pair",
    "military_pair",
    "mixed_pair",
    "supreme_pair",
    "triplet_2c1m",
    "triplet_1c2m",
    "quartet",
    "civilian_triplet",
    "civil_1",
    "civil_2",
    "civil_3",
    "civil_4",
    "military_1",
    "military_2",
    "military_3",
    "military_4",
)
CLASS_ID = {name: i for i, name in enumerate(CLASS_NAMES)}
LEAD_SCAN_LIMIT = 128  # above this many combinations, leads are found by the per-type index
FAMILY_STRENGTH = {head: 4 - i for i, (head, _) in enumerate(FAMILIES)}  # Heaven 4 .. Goose 1
PENDULUM = (0, 2, 4)  # 6-6 4-4 5-5
FISH = (1, 5, 6)  # 1-1 3-3 2-2


@dataclass(frozen=True)
class Combination:
    types: tuple[int, ...]  # sorted tile types, with repeats
    cls: str
    strength: int

    @property
    def names(self) -> list[str]:
        return [NAMES[t] for t in self.types]

    @property
    def label(self) -> str:
        return "+".join(self.names)


def _classic_candidates(rules: RuleSet, nines_supreme: bool) -> list[Combination]:
    """Every combination of the classic / pairs_only systems over all 21 types."""
    out = [
        Combination((t,), "civil_single" if SUIT[t] == 0 else "military_single", int(RANK[t])) for t in range(NUM_TYPES)
    ]
    out += [Combination((t, t), "civil_pair", int(RANK[t])) for t in range(NUM_CIVIL)]
    supreme = (NINE_63, NINE_54) if nines_supreme else (BIG_SIX, LITTLE_THREE)
    out.append(Combination(supreme, "supreme_pair", 1))
    pairs = [(NINE_63, NINE_54), (13, 14), (15, 16), (18, 19)]  # 9s, 8s, 7s, 5s
    out += [Combination(p, "military_pair", int(RANK[p[0]])) for p in pairs if p != supreme]
    for head, (m1, m2) in FAMILIES:
        strength = FAMILY_STRENGTH[head]
        out += [Combination((head, m), "mixed_pair", strength) for m in (m1, m2)]
        if rules.combos == "classic":
            out += [Combination((head, head, m), "triplet_2c1m", strength) for m in (m1, m2)]
            out.append(Combination((head, m1, m2), "triplet_1c2m", strength))
            out.append(Combination((head, head, m1, m2), "quartet", strength))
    if rules.civilian_triplets:
        out.append(Combination(tuple(sorted(PENDULUM)), "civilian_triplet", 2))
        out.append(Combination(tuple(sorted(FISH)), "civilian_triplet", 1))
    return out


def _same_suit_candidates(nines_supreme: bool) -> list[Combination]:
    """same_suit_any: any 1 to 4 tiles of one suit, class (suit, size), strength of the top tile."""
    supreme = (NINE_63, NINE_54) if nines_supreme else (BIG_SIX, LITTLE_THREE)
    out = [Combination(supreme, "supreme_pair", 1)]
    for suit, prefix in ((0, "civil"), (1, "military")):
        pool = [t for t in range(NUM_TYPES) if SUIT[t] == suit for _ in range(COPIES[t])]
        for size in range(1, 5):
            for types in sorted(set(itertools.combinations(pool, size))):
                if types != supreme:
                    out.append(Combination(types, f"{prefix}_{size}", int(RANK[types[0]])))
    return out


class CombinationTable:
    """The combination types of one rule set, and the arrays the kernels use (see module doc)."""

    def __init__(self, rules: RuleSet):
        self.rules = rules
        deck = np.bincount(np.array(rules.deck_types), minlength=NUM_TYPES)
        military = {t for t in rules.deck_types if SUIT[t] == 1}
        # RULES.md section 9: with the nines as the only military tiles they form the Supreme pair.
        nines_supreme = military == {NINE_63, NINE_54}
        if rules.combos == "same_suit_any":
            candidates = _same_suit_candidates(nines_supreme)
        else:
            candidates = _classic_candidates(rules, nines_supreme)

        def makeable(c: Combination) -> bool:
            return all(c.types.count(t) <= deck[t] for t in set(c.types))

        self.combos: list[Combination] = sorted(
            (c for c in candidates if makeable(c)), key=lambda c: (CLASS_ID[c.cls], c.strength, [-t for t in c.types])
        )
        self.index = {c.types: j for j, c in enumerate(self.combos)}
        self.num_combos = len(self.combos)
        self.num_actions = L.legal_len(self.num_combos)  # the combinations, then L.EXTRA_ACTIONS
        self.table = self._make_table()
        self.rules_array = self._make_rules_array()

    def _make_table(self) -> np.ndarray:
        """The (C, T_COLS) int64 table; column layout in layout.py."""
        table = np.zeros((self.num_combos, L.T_COLS), dtype=np.int64)
        class_end, stronger_from = {}, {}
        for j, c in enumerate(self.combos):  # rows are sorted by (class, strength)
            class_end[c.cls] = j + 1
            stronger_from.setdefault((c.cls, c.strength), j)
        for j, c in enumerate(self.combos):
            counts = np.bincount(np.array(c.types), minlength=NUM_TYPES)
            above = [k for (cls, s), k in stronger_from.items() if cls == c.cls and s > c.strength]
            table[j, L.T_MASK] = counts_mask(counts)
            table[j, L.T_SIZE] = len(c.types)
            table[j, L.T_CLASS] = CLASS_ID[c.cls]
            table[j, L.T_STRENGTH] = c.strength
            table[j, L.T_BEAT_START] = min(above, default=class_end[c.cls])
            table[j, L.T_BEAT_END] = class_end[c.cls]
            table[j, L.T_STAKE] = {"supreme_pair": L.STAKE_SUPREME, "quartet": L.STAKE_QUARTET}.get(c.cls, L.STAKE_NONE)
            table[j, L.T_LAST_BONUS] = c.cls in ("supreme_pair", "quartet") or c.types == (LITTLE_THREE,)
            table[j, L.T_MIN_TYPE] = c.types[0]
        return table

    def _make_rules_array(self) -> np.ndarray:
        """Switches as integers, then the lead index (layout.py)."""
        r = self.rules
        scalars = np.zeros(L.R_LEAD_START, dtype=np.int64)
        scalars[L.R_PLAYERS] = r.players
        scalars[L.R_HAND_SIZE] = r.hand_size
        scalars[L.R_PAR] = r.par
        scalars[L.R_DECK] = r.deck_mask
        scalars[L.R_COMBOS] = self.num_combos
        scalars[L.R_HEAVEN_LEADS] = r.first_lead == "heaven_holder"
        scalars[L.R_MUST_BEAT] = r.must_beat_if_able
        scalars[L.R_EARLY_DEATH] = r.early_death
        scalars[L.R_ZERO_POINTS] = r.par + 1 if r.zero_column_points == "par+1" else r.par
        scalars[L.R_PAY_OVER_PAR] = r.pay_over_par
        scalars[L.R_HAND_BANKER] = r.banker_double == "hand_banker"
        scalars[L.R_STREAK_FACTOR] = r.banker_streak
        scalars[L.R_STAKE_SUPREME], scalars[L.R_STAKE_QUARTET] = r.trick_bonus_stakes
        scalars[L.R_LAST_BONUS] = r.last_trick_bonus
        scalars[L.R_SHUTOUT_BONUS] = r.shutout_bonus
        scalars[L.R_BIG_SIX] = r.big_six_captures
        scalars[L.R_RED_DOT] = {"off": L.RED_DOT_OFF, "auto": L.RED_DOT_AUTO, "choice": L.RED_DOT_CHOICE}[r.one_red_dot]
        scalars[L.R_SINGLE_21] = self.index.get((LITTLE_THREE,), -1)
        scalars[L.R_SINGLE_42] = self.index.get((BIG_SIX,), -1)
        by_head = [[j for j, c in enumerate(self.combos) if c.types[0] == t] for t in range(NUM_TYPES)]
        starts = np.cumsum([0] + [len(g) for g in by_head])
        ids = np.zeros(L.lead_padded(self.num_combos), dtype=np.int64)
        masks = np.full(len(ids), L.NO_TILES, dtype=np.int64)
        ids[: self.num_combos] = [j for group in by_head for j in group]
        masks[: self.num_combos] = self.table[ids[: self.num_combos], L.T_MASK]
        scalars[L.R_LEAD_BY_TYPE] = self.num_combos > LEAD_SCAN_LIMIT
        return np.concatenate([scalars, starts, ids, masks]).astype(np.int64)

    # ----------------------------------------------------------------- lookups
    def find(self, types: list[int] | tuple[int, ...]) -> int:
        """Combination id of a multiset of tile types, or -1 when it is not a combination."""
        return self.index.get(tuple(sorted(types)), -1)

    def class_name(self, j: int) -> str:
        return self.combos[j].cls

    def physical_masks(self) -> dict[int, int]:
        """Every physical realisation of every combination: {mask: combination id}."""
        out = {}
        deck = self.rules.deck_mask
        for j, c in enumerate(self.combos):
            choices = [
                [1 << int(TYPE_BITS[t, k]) for k in range(COPIES[t]) if deck >> int(TYPE_BITS[t, k]) & 1]
                for t in sorted(set(c.types))
            ]
            needs = [c.types.count(t) for t in sorted(set(c.types))]
            per_type = [[sum(bits) for bits in itertools.combinations(ch, n)] for ch, n in zip(choices, needs)]
            for parts in itertools.product(*per_type):
                out[sum(parts)] = j
        return out

    def action_name(self, action: int) -> str:
        """Readable action: ``play 6-6+6-3``, ``discard 5-1``, ``declare``, ``decline``."""
        C = self.num_combos
        if 0 <= action < C:
            return "play " + self.combos[action].label
        if L.is_discard(action, C):
            return "discard " + NAMES[action - C]
        return {L.declare_action(C): "declare", L.decline_action(C): "decline"}.get(action, f"action {action}")

    def describe(self, j: int) -> str:
        c = self.combos[j]
        return f"{c.label} ({c.cls}, strength {c.strength})"


_TABLES: dict[RuleSet, CombinationTable] = {}


def table_for(rules: RuleSet) -> CombinationTable:
    """The (cached) combination table of a rule set."""
    if rules not in _TABLES:
        _TABLES[rules] = CombinationTable(rules)
    return _TABLES[rules]


__all__ = ["CLASS_NAMES", "Combination", "CombinationTable", "table_for", "CHINESE"]
