"""Exact game-tree statistics for small rule sets (``tiengow tree --rules micro``).

A deal is the tuple of the seats' hands as multisets of tile types; two deals that differ
only in which copy of a tile a seat holds are the same deal. The tree walked below is the
environments' decision tree (action ids, so a discard of n tiles is n decisions), with the
banker fixed. Seat s's information set at a decision is its dealt hand and everything it has
seen: every face-up play, every discard as "a tile went down" (its own discards, and all
discards under ``discards_face_up``, with the tile). Forced early-death discards are not
decisions and carry no information (they follow from public facts), so they are left out.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter
from collections.abc import Callable, Iterator

from .combos import table_for
from .game import Game
from .layout import is_discard
from .rules import RuleSet
from .tiles import NAMES

HIDDEN = -1


def distinct_deals(rules: RuleSet) -> Iterator[tuple[tuple[int, ...], ...]]:
    """Every distinct deal of the deck, as one sorted tuple of tile types per seat."""

    def split(pool: tuple[int, ...], seats: int) -> Iterator[tuple[tuple[int, ...], ...]]:
        if seats == 1:
            yield (pool,)
            return
        seen = set()
        for idx in itertools.combinations(range(len(pool)), rules.hand_size):
            hand = tuple(pool[i] for i in idx)
            if hand in seen:
                continue
            seen.add(hand)
            rest = list(pool)
            for i in reversed(idx):
                del rest[i]
            for tail in split(tuple(rest), seats - 1):
                yield (hand, *tail)

    yield from split(tuple(rules.deck_types), rules.players)


def deal_weights(rules: RuleSet) -> list[tuple[tuple[tuple[int, ...], ...], int]]:
    """Every distinct deal (``distinct_deals`` order) with the number of physical deals that give
    it: prod_t copies_t! / prod_{seat, t} count_{seat, t}! (with two 6-6 in the deck, both in
    one hand: 1; split between two hands: 2). Its share of the total is its probability."""
    copies = Counter(rules.deck_types)
    out = []
    for deal in distinct_deals(rules):
        ways = math.prod(math.factorial(n) for n in copies.values())
        for hand in deal:
            ways //= math.prod(math.factorial(n) for n in Counter(hand).values())
        out.append((deal, ways))
    return out


def count_deals(rules: RuleSet) -> int:
    """The number of distinct deals ``distinct_deals`` yields, counted without listing them: the
    ways to give each tile type's copies to the seats so that every seat gets a full hand."""
    rules = RuleSet.from_spec(rules)
    copies = tuple(Counter(rules.deck_types).values())
    players, size = rules.players, rules.hand_size

    @functools.cache
    def ways(kind: int, fills: tuple[int, ...]) -> int:
        if kind == len(copies):
            return int(all(fill == size for fill in fills))
        total = 0
        for split in itertools.product(range(copies[kind] + 1), repeat=players):
            if sum(split) == copies[kind] and all(f + n <= size for f, n in zip(fills, split)):
                total += ways(kind + 1, tuple(f + n for f, n in zip(fills, split)))
        return total

    return ways(0, (0,) * players)


class TreeTooLarge(ValueError):
    """The walk passed its budget of decision nodes."""


def tree_stats(
    rules: RuleSet,
    banker: int = 0,
    max_deals: int | None = None,
    max_nodes: int | None = None,
    on_deal: Callable[[], None] | None = None,
) -> dict:
    """Deals, decision nodes, terminal nodes and information sets per seat (see module doc),
    over every distinct deal or the first ``max_deals``. ``TreeTooLarge`` as soon as the walk
    passes ``max_nodes`` decision nodes; ``on_deal`` is called after each deal."""
    rules = RuleSet.from_spec(rules)
    combos = table_for(rules).num_combos
    infosets: list[set] = [set() for _ in range(rules.players)]
    counts = {"deals": 0, "decision_nodes": 0, "terminal_nodes": 0}

    def walk(game: Game, history: tuple, dealt: tuple) -> None:
        if game.is_over:
            counts["terminal_nodes"] += 1
            return
        seat = game.to_act
        counts["decision_nodes"] += 1
        if max_nodes is not None and counts["decision_nodes"] > max_nodes:
            raise TreeTooLarge(f"the tree has more than {max_nodes:,} decision nodes")
        infosets[seat].add((dealt[seat], _view(history, seat)))
        for action in game.legal_actions():
            child = game.clone()
            child._apply(action)
            walk(child, history + ((seat, action),), dealt)

    def _view(history: tuple, seat: int) -> tuple:
        if rules.discards_face_up:
            return history
        return tuple((s, a if (s == seat or not is_discard(a, combos)) else HIDDEN) for s, a in history)

    for deal in distinct_deals(rules):
        if max_deals is not None and counts["deals"] >= max_deals:
            break
        counts["deals"] += 1
        hands = [[NAMES[t] for t in hand] for hand in deal]
        walk(Game(hands=hands, banker=banker, rules=rules), (), deal)
        if on_deal is not None:
            on_deal()
    return {
        **counts,
        "banker": banker,
        "infosets_per_seat": [len(s) for s in infosets],
        "infosets": sum(len(s) for s in infosets),
    }
