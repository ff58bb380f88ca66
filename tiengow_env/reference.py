"""Slow, obvious reference engine for one hand of Tien Gow (RULES.md), for differential tests.

Everything here is written straight from RULES.md, on purpose without looking at the fast
engine (``combos.py``, ``_kernels.py``, ``game.py``): the two are meant to be compared, so they
must not share mistakes. Only tile-name parsing (``tiles.NAMES`` / ``tiles.parse_type``) and the
switch parsing of ``rules.RuleSet`` are shared.

Representation, chosen for readability over speed:

* a tile type is an int 0..20 in canonical order (``tiles.NAMES``): the 11 civil types by rank,
  then the 10 military types;
* a hand is a list of 21 counts (how many of each type the seat holds);
* a combination is a sorted tuple of tile types, classified into a ``Combo`` (class, strength);
* a decision is ``(kind, sorted tuple of tile types)``, kind in lead / beat / discard / declare.

Public API: ``RefGame`` (decisions / apply / result), ``ref_replay`` and ``ref_perft``.
"""

from __future__ import annotations

import numbers
from collections import Counter
from typing import NamedTuple

from .rules import PRESETS, RuleSet
from .tiles import NAMES, parse_type

NUM_TYPES = len(NAMES)
TYPE = {name: t for t, name in enumerate(NAMES)}

HEAVEN, EARTH, MAN, GOOSE = TYPE["6-6"], TYPE["1-1"], TYPE["4-4"], TYPE["3-1"]
BIG_SIX, LITTLE_THREE = TYPE["4-2"], TYPE["2-1"]
NINES = (TYPE["6-3"], TYPE["5-4"])

# RULES.md section 1: the civil suit is the first 11 canonical types.
CIVIL_NAMES = ("6-6", "1-1", "4-4", "3-1", "5-5", "3-3", "2-2", "6-5", "6-4", "6-1", "5-1")
CIVIL = frozenset(TYPE[n] for n in CIVIL_NAMES)
MILITARY = frozenset(t for t in range(NUM_TYPES) if t not in CIVIL)
COPIES = {t: (2 if t in CIVIL else 1) for t in range(NUM_TYPES)}


def _pips(t: int) -> int:
    high, low = NAMES[t].split("-")
    return int(high) + int(low)


# Strength of a single tile inside its suit (larger is stronger): civil by rank (Heaven 11 ..
# Red Mallet Six 1), military by pip total, so that the two tiles of one total tie.
SINGLE_RANK = {
    t: (len(CIVIL_NAMES) - CIVIL_NAMES.index(NAMES[t]) if t in CIVIL else _pips(t)) for t in range(NUM_TYPES)
}

# Families (section 1): a civil head and its two military tiles; strength Heaven > ... > Goose.
FAMILY_MILITARY = {
    HEAVEN: (TYPE["6-3"], TYPE["5-4"]),
    EARTH: (TYPE["6-2"], TYPE["5-3"]),
    MAN: (TYPE["5-2"], TYPE["4-3"]),
    GOOSE: (TYPE["4-1"], TYPE["3-2"]),
}
FAMILY_STRENGTH = {HEAVEN: 4, EARTH: 3, MAN: 2, GOOSE: 1}

# Military pairs exist only for these pip totals (section 2): 9s, 8s, 7s, 5s.
MILITARY_PAIR_TOTALS = (9, 8, 7, 5)

# civilian_triplets (section 9): Pendulum 6-6+5-5+4-4 above Fish 3-3+2-2+1-1.
PENDULUM = tuple(sorted(TYPE[n] for n in ("6-6", "5-5", "4-4")))
FISH = tuple(sorted(TYPE[n] for n in ("3-3", "2-2", "1-1")))


def _red_pips(t: int) -> int:
    """Section 1: a half showing 1 or 4 is all red; Heaven shows 6 red pips of its 12."""
    if t == HEAVEN:
        return 6
    return sum(int(h) for h in NAMES[t].split("-") if h in ("1", "4"))


RED_PIPS = {t: _red_pips(t) for t in range(NUM_TYPES)}

DECLARE = ("declare", (1,))
DECLINE = ("declare", (0,))


def tile_names(tiles) -> list[str]:
    """Tile names in canonical order."""
    return [NAMES[t] for t in sorted(tiles)]


def _joined(tiles) -> str:
    return "+".join(tile_names(tiles))


# ------------------------------------------------------------------------ combinations
class Combo(NamedTuple):
    """A classified combination: beating needs the same ``cls`` and a larger ``strength``."""

    tiles: tuple[int, ...]
    cls: str
    strength: int


def supreme_pair_of(rules: RuleSet) -> tuple[int, int]:
    """The Supreme pair of the deck: the nines when the deck's military is exactly 6-3 and 5-4."""
    military = sorted(t for t in rules.deck_types if t in MILITARY)
    if military == sorted(NINES):
        return tuple(sorted(NINES))
    return (BIG_SIX, LITTLE_THREE)


def classify(tiles, rules: RuleSet) -> Combo | None:
    """The class and strength of a multiset of tile types under ``rules``, or None when the
    tiles are no combination (RULES.md section 2, and section 9 for combos / civilian_triplets
    and the nines-as-Supreme decks)."""
    return _classify(tuple(sorted(tiles)), rules.combos, rules.civilian_triplets, supreme_pair_of(rules))


def _classify(tiles: tuple[int, ...], combos: str, civilian_triplets: bool, supreme: tuple[int, int]) -> Combo | None:
    n = len(tiles)
    if tiles == supreme:
        return Combo(tiles, "supreme_pair", 0)
    if combos == "same_suit_any":
        # Any 1 to 4 tiles of one suit; class (suit, size); strength = the highest tile's rank.
        if not 1 <= n <= 4:
            return None
        if all(t in CIVIL for t in tiles):
            suit = "civil"
        elif all(t in MILITARY for t in tiles):
            suit = "military"
        else:
            return None
        return Combo(tiles, f"{suit}_{n}", max(SINGLE_RANK[t] for t in tiles))

    if n == 1:
        (t,) = tiles
        return Combo(tiles, "civil_single" if t in CIVIL else "military_single", SINGLE_RANK[t])
    if n == 2:
        a, b = tiles
        if a == b and a in CIVIL:
            return Combo(tiles, "civil_pair", SINGLE_RANK[a])
        if a in MILITARY and b in MILITARY and _pips(a) == _pips(b) and _pips(a) in MILITARY_PAIR_TOTALS:
            return Combo(tiles, "military_pair", _pips(a))
        if a in FAMILY_MILITARY and b in FAMILY_MILITARY[a]:
            return Combo(tiles, "mixed_pair", FAMILY_STRENGTH[a])
        return None
    if combos == "pairs_only":
        return None
    if n == 3:
        if civilian_triplets and tiles == PENDULUM:
            return Combo(tiles, "civilian_triplet", 2)
        if civilian_triplets and tiles == FISH:
            return Combo(tiles, "civilian_triplet", 1)
        for head, (m1, m2) in FAMILY_MILITARY.items():
            if tiles in (tuple(sorted((head, head, m1))), tuple(sorted((head, head, m2)))):
                return Combo(tiles, "triplet_2c1m", FAMILY_STRENGTH[head])
            if tiles == tuple(sorted((head, m1, m2))):
                return Combo(tiles, "triplet_1c2m", FAMILY_STRENGTH[head])
        return None
    if n == 4:
        for head, (m1, m2) in FAMILY_MILITARY.items():
            if tiles == tuple(sorted((head, head, m1, m2))):
                return Combo(tiles, "quartet", FAMILY_STRENGTH[head])
        return None
    return None


def beats(challenger: Combo, best: Combo) -> bool:
    """Section 2: same class and strictly stronger. The Supreme pair beats nothing."""
    return challenger.cls == best.cls and challenger.cls != "supreme_pair" and challenger.strength > best.strength


def sub_multisets(counts: list[int], size: int) -> list[tuple[int, ...]]:
    """Every distinct multiset of ``size`` tile types inside ``counts``, as sorted tuples."""
    types = [t for t in range(NUM_TYPES) if counts[t] > 0]
    found: list[tuple[int, ...]] = []

    def extend(i: int, remaining: int, chosen: tuple[int, ...]) -> None:
        if remaining == 0:
            found.append(chosen)
            return
        if i == len(types):
            return
        t = types[i]
        for k in range(min(counts[t], remaining), -1, -1):
            extend(i + 1, remaining - k, chosen + (t,) * k)

    extend(0, size, ())
    return found


def _counts(tiles) -> list[int]:
    counts = [0] * NUM_TYPES
    for t in tiles:
        counts[t] += 1
    return counts


# ------------------------------------------------------------------------ the deal
def _is_int(value) -> bool:
    """An integer (numpy ones included), but not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_deal(hands, banker, rules: RuleSet, streak) -> None:
    """Refuse a deal that RULES.md does not allow (ValueError with the reason)."""
    players, hand_size = rules.players, rules.hand_size
    if not _is_int(banker) or not 0 <= banker < players:
        raise ValueError(f"banker must be a seat 0..{players - 1}")
    if not _is_int(streak) or streak < 1:
        raise ValueError(f"streak must be an int >= 1, got {streak!r}")
    if not isinstance(hands, (list, tuple)) or len(hands) != players:
        raise ValueError(f"hands must be a list of {players} hands")
    for seat, hand in enumerate(hands):
        if not isinstance(hand, (list, tuple)) or len(hand) != hand_size:
            raise ValueError(f"hand {seat} must be a list of {hand_size} tiles")
        for t in hand:
            if not _is_int(t) or not 0 <= t < NUM_TYPES:
                raise ValueError(f"hand {seat}: {t!r} is not a tile type 0..{NUM_TYPES - 1}")
    held = Counter(t for hand in hands for t in hand)
    deck = Counter(rules.deck_types)
    for t in range(NUM_TYPES):
        if held[t] != deck[t]:
            raise ValueError(
                f"the hands must use exactly the deck's tiles: they hold {held[t]} x {NAMES[t]}, the deck has {deck[t]}"
            )


class Trick(NamedTuple):
    leader: int
    winner: int
    size: int
    winning: Combo
    lead: Combo


# ------------------------------------------------------------------------ the game
class RefGame:
    """One hand of Tien Gow, played decision by decision (RULES.md sections 3 to 6)."""

    def __init__(self, hands: list[list[int]], banker: int, rules: RuleSet | str = "standard", streak: int = 1) -> None:
        rules = RuleSet.from_spec(rules)
        check_deal(hands, banker, rules, streak)
        self.rules = rules
        # Classification memo (sorted tiles -> Combo or None), shared by copies of this game.
        self._combo_memo: dict[tuple[int, ...], Combo | None] = {}
        self._supreme = supreme_pair_of(rules)
        self.players = rules.players
        self.hand_size = rules.hand_size
        self.par = rules.par
        self.banker = int(banker)
        self.streak = int(streak)
        hands = [[int(t) for t in hand] for hand in hands]
        self.dealt = [tuple(sorted(hand)) for hand in hands]
        self.hands = [_counts(hand) for hand in hands]
        self.columns = [0] * self.players
        self.trick_bonus = [0] * self.players
        self.tricks: list[Trick] = []
        self.banker_first_lead: Combo | None = None  # for the shutout exception
        self.red_dot_declarer: int | None = None
        self.pending_red_dot: list[int] = []  # one_red_dot choice: holders still to decide
        self.over = False
        # The trick in progress.
        self.leader: int | None = None
        self.turn: int | None = None
        self.size: int | None = None  # None until the lead
        self.best: Combo | None = None
        self.best_owner: int | None = None
        self.lead: Combo | None = None
        self.acted = 0
        self.early_death_trick = False

        holders = [s for s in self._seats_from(banker) if sum(RED_PIPS[t] for t in self.dealt[s]) == 1]
        if holders and rules.one_red_dot == "auto":
            self._declare(holders[0])
        elif holders and rules.one_red_dot == "choice":
            self.pending_red_dot = holders
            self.turn = holders[0]
        else:
            self._start_first_trick()
        self._flush_forced()

    # ----------------------------------------------------------------- state queries
    @property
    def to_act(self) -> int | None:
        return None if self.over else self.turn

    @property
    def is_over(self) -> bool:
        return self.over

    def copy(self) -> RefGame:
        other = object.__new__(RefGame)
        other.__dict__.update(self.__dict__)
        other.hands = [list(h) for h in self.hands]
        other.columns = list(self.columns)
        other.trick_bonus = list(self.trick_bonus)
        other.tricks = list(self.tricks)
        other.pending_red_dot = list(self.pending_red_dot)
        return other

    def combo(self, tiles: tuple[int, ...]) -> Combo | None:
        """``classify`` under this game's rules, for sorted ``tiles`` (memoised)."""
        if tiles not in self._combo_memo:
            self._combo_memo[tiles] = _classify(tiles, self.rules.combos, self.rules.civilian_triplets, self._supreme)
        return self._combo_memo[tiles]

    def _seats_from(self, seat: int) -> list[int]:
        """All seats in play order (increasing seat number, wrapping) starting at ``seat``."""
        return [(seat + k) % self.players for k in range(self.players)]

    def _forced_tile(self) -> int | None:
        """The tile the seat to act must discard by early death (section 4), else None."""
        if self.over or self.pending_red_dot or self.size is None or not self.early_death_trick:
            return None
        if self.turn == self.leader or self.columns[self.turn] > 0:
            return None
        (tile,) = [t for t in range(NUM_TYPES) if self.hands[self.turn][t]]
        return tile

    def _beats_available(self, seat: int) -> list[tuple[int, ...]]:
        return [
            tiles
            for tiles in sub_multisets(self.hands[seat], self.size)
            if (combo := self.combo(tiles)) is not None and beats(combo, self.best)
        ]

    def decisions(self) -> set[tuple[str, tuple[int, ...]]]:
        """Legal decisions of the seat to act (empty once the hand is over)."""
        if self.over:
            return set()
        if self.pending_red_dot:
            return {DECLARE, DECLINE}
        if self._forced_tile() is not None:
            return set()  # only reachable inside ref_replay, which applies it itself
        hand = self.hands[self.turn]
        if self.size is None:
            return {
                ("lead", tiles)
                for size in range(1, 5)
                for tiles in sub_multisets(hand, size)
                if self.combo(tiles) is not None
            }
        beat = {("beat", tiles) for tiles in self._beats_available(self.turn)}
        if beat and self.rules.must_beat_if_able:
            return beat
        return beat | {("discard", tiles) for tiles in sub_multisets(hand, self.size)}

    # ----------------------------------------------------------------- transitions
    def apply(self, decision: tuple[str, tuple[int, ...]]) -> None:
        """Apply one legal decision of the seat to act, then any forced early-death discards."""
        kind, tiles = decision
        decision = (kind, tuple(sorted(int(t) for t in tiles)))
        if decision not in self.decisions():
            raise ValueError(f"{decision!r} is not a legal decision for seat {self.to_act}")
        self._apply(*decision)
        self._flush_forced()

    def _flush_forced(self) -> None:
        while (tile := self._forced_tile()) is not None:
            self._apply("discard", (tile,))

    def _apply(self, kind: str, tiles: tuple[int, ...]) -> None:
        seat = self.turn
        if kind == "declare":
            if tiles == (1,):
                self._declare(seat)
                return
            self.pending_red_dot.pop(0)
            if self.pending_red_dot:
                self.turn = self.pending_red_dot[0]
            else:
                self._start_first_trick()
            return
        for t in tiles:
            self.hands[seat][t] -= 1
            assert self.hands[seat][t] >= 0
        if kind == "lead":
            combo = self.combo(tiles)
            self.size, self.best, self.best_owner, self.lead = len(tiles), combo, seat, combo
            if seat == self.banker and self.banker_first_lead is None:
                self.banker_first_lead = combo
        elif kind == "beat":
            self.best, self.best_owner = self.combo(tiles), seat
        self.acted += 1
        if self.acted == self.players:
            self._finish_trick()
        else:
            self.turn = (seat + 1) % self.players

    def _declare(self, seat: int) -> None:
        """One Red Dot: the hand ends, the declarer is W with all the columns (section 6)."""
        self.red_dot_declarer = seat
        self.columns = [0] * self.players
        self.columns[seat] = self.hand_size
        self.pending_red_dot = []
        self.over, self.turn = True, None

    def _start_first_trick(self) -> None:
        leader = self.banker
        if self.rules.first_lead == "heaven_holder":
            holders = [s for s in self._seats_from(self.banker) if self.hands[s][HEAVEN] > 0]
            if holders:  # a deck without 6-6 keeps the banker as leader
                leader = holders[0]
        self._start_trick(leader)

    def _start_trick(self, leader: int) -> None:
        self.leader = self.turn = leader
        self.size = self.best = self.best_owner = self.lead = None
        self.acted = 0
        self.early_death_trick = self.rules.early_death and all(sum(hand) == 1 for hand in self.hands)

    def _finish_trick(self) -> None:
        winner, size = self.best_owner, self.size
        self.columns[winner] += size
        self.tricks.append(Trick(self.leader, winner, size, self.best, self.lead))
        supreme_stake, quartet_stake = self.rules.trick_bonus_stakes
        stake = {"supreme_pair": supreme_stake, "quartet": quartet_stake}.get(self.best.cls, 0)
        if stake:
            for payer in range(self.players):
                if payer != winner:
                    chips = stake * self._bonus_banker_factor(payer, winner)
                    self.trick_bonus[payer] -= chips
                    self.trick_bonus[winner] += chips
        if all(sum(hand) == 0 for hand in self.hands):
            self.over, self.turn = True, None
        else:
            self._start_trick(winner)

    # ----------------------------------------------------------------- payments
    def _banker_factor(self) -> int:
        return 1 + self.streak if self.rules.banker_streak else 2

    def _bonus_banker_factor(self, payer: int, receiver: int) -> int:
        """Section 5: trick bonuses to or from this hand's banker are doubled (1 + streak)."""
        return self._banker_factor() if self.banker in (payer, receiver) else 1

    def _settlement_factor(self, seat: int, w: int) -> int:
        """Section 6 / 9 banker_double: settling_banker doubles every settlement with W;
        hand_banker only those that involve this hand's banker."""
        if self.rules.banker_double == "settling_banker":
            return 2
        return self._banker_factor() if self.banker in (seat, w) else 1

    def unbeatable_in_own_eyes(self, combo: Combo) -> bool:
        """No combination beating ``combo`` can be made from the deck outside the banker's
        dealt hand, counting copies (section 6, shutout exception)."""
        outside = _counts(self.rules.deck_types)
        for t in self.dealt[self.banker]:
            outside[t] -= 1
        for tiles in sub_multisets(outside, len(combo.tiles)):
            other = self.combo(tiles)
            if other is not None and beats(other, combo):
                return False
        return True

    def result(self) -> dict:
        """The replay output (RULES.md section 8) of a finished hand."""
        if not self.over:
            raise ValueError("the hand is not over")
        rules, players = self.rules, self.players
        last = self.tricks[-1] if self.red_dot_declarer is None else None
        w = self.red_dot_declarer if last is None else last.winner

        last_trick = 1
        if (
            last is not None
            and rules.last_trick_bonus
            and (last.winning.cls in ("supreme_pair", "quartet") or last.winning.tiles == (LITTLE_THREE,))
        ):
            last_trick = 2
        shutout = 1
        if rules.shutout_bonus and self.hand_size in self.columns:
            shut = self.columns.index(self.hand_size)
            exempt = (
                shut == self.banker
                and self.banker_first_lead is not None
                and self.unbeatable_in_own_eyes(self.banker_first_lead)
            )
            shutout = 1 if exempt else 2
        multiplier = last_trick * shutout

        # Big Six captures Little Three: L pays every chip owed to W.
        captor_payer = None
        if (
            last is not None
            and rules.big_six_captures
            and last.size == 1
            and last.lead.tiles == (LITTLE_THREE,)
            and last.winning.tiles == (BIG_SIX,)
            and last.winner != last.leader
        ):
            captor_payer = last.leader

        settlement = [0] * players
        for seat in range(players):
            if seat == w:
                continue
            cols = self.columns[seat]
            if cols == 0:
                points = self.par + 1 if rules.zero_column_points == "par+1" else self.par
            elif cols < self.par:
                points = self.par - cols
            elif cols > self.par and rules.pay_over_par:
                points = -(cols - self.par)  # W pays
            else:
                points = 0
            chips = points * self._settlement_factor(seat, w) * multiplier
            if chips > 0:
                payer = seat if captor_payer is None else captor_payer
                settlement[payer] -= chips
                settlement[w] += chips
            elif chips < 0:
                settlement[w] += chips
                settlement[seat] -= chips

        return {
            "tricks": [
                {"leader": t.leader, "winner": t.winner, "size": t.size, "winning": tile_names(t.winning.tiles)}
                for t in self.tricks
            ],
            "columns": list(self.columns),
            "last_trick_winner": w,
            "trick_bonus": list(self.trick_bonus),
            "settlement": settlement,
            "multipliers": {"last_trick": last_trick, "shutout": shutout},
            "net": [b + s for b, s in zip(self.trick_bonus, settlement, strict=True)],
        }

    # ----------------------------------------------------------------- record actions
    def decision_for_action(self, seat: int, verb: str, payload) -> tuple[str, tuple[int, ...]]:
        """The decision meant by a record action of ``seat`` (verb play / discard / declare),
        or ValueError with a reason for people. Does not change the game."""
        if self.over:
            raise ValueError("the hand is over")
        if seat != self.turn:
            raise ValueError(f"wrong seat: seat {self.turn} is to act, not seat {seat}")
        if self.pending_red_dot:
            if verb != "declare":
                raise ValueError(
                    f"seat {seat} holds One Red Dot and must first declare it or decline it (one_red_dot: choice)"
                )
            return DECLARE if payload else DECLINE
        if verb == "declare":
            raise ValueError(f"seat {seat} has no One Red Dot to declare (one_red_dot: {self.rules.one_red_dot})")
        tiles = tuple(sorted(payload))
        forced = self._forced_tile()
        if forced is not None:
            if verb == "discard" and tiles == (forced,):
                return ("discard", tiles)
            raise ValueError(f"seat {seat} must discard {NAMES[forced]} by early death")
        leading = self.size is None
        if leading and verb == "discard":
            raise ValueError("the leader must play a combination, not discard")
        if leading and not 1 <= len(tiles) <= 4:
            raise ValueError(f"a lead has 1 to 4 tiles, got {len(tiles)}")
        if not leading and len(tiles) != self.size:
            raise ValueError(f"must answer with exactly {self.size} tile(s), got {len(tiles)}")
        wanted = Counter(tiles)
        for t in sorted(wanted):
            if wanted[t] > self.hands[seat][t]:
                raise ValueError(f"seat {seat} does not hold {wanted[t]} x {NAMES[t]}")
        if verb == "discard":
            if self.rules.must_beat_if_able and self._beats_available(seat):
                raise ValueError(f"seat {seat} can beat and must (must_beat_if_able)")
            return ("discard", tiles)
        combo = self.combo(tiles)
        if combo is None:
            raise ValueError(f"{_joined(tiles)} is not a combination")
        if leading:
            return ("lead", tiles)
        if combo.cls != self.best.cls:
            raise ValueError(f"{_joined(tiles)} ({combo.cls}) cannot beat a {self.best.cls}")
        if not beats(combo, self.best):
            raise ValueError(f"{_joined(tiles)} does not beat {_joined(self.best.tiles)}")
        return ("beat", tiles)


# ------------------------------------------------------------------------ records
class RecordError(ValueError):
    """A refused hand record: ``action_index`` is the index into ``record['actions']``, or
    None for a record-level error."""

    def __init__(self, reason: str, action_index: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.action_index = action_index


RECORD_KEYS = ("rules", "banker", "hands", "actions", "streak")


def _parse_record(record: object) -> tuple[RefGame, list]:
    """The starting position and the action list of a record (record-level errors only)."""

    def refuse(reason: str) -> RecordError:
        return RecordError(f"record: {reason}")

    if not isinstance(record, dict):
        raise refuse("a hand record must be a JSON object")
    unknown = sorted(str(k) for k in record if k not in RECORD_KEYS)
    if unknown:
        raise refuse(f"unknown key {unknown[0]!r}; keys are: {', '.join(RECORD_KEYS)}")
    spec = record.get("rules", "standard")
    if isinstance(spec, str) and spec not in PRESETS:
        raise refuse(f"unknown preset {spec!r}; presets are: {', '.join(PRESETS)}")
    if not isinstance(spec, (str, dict)):
        raise refuse(f"rules must be a preset name or an object, got {spec!r}")
    try:
        rules = RuleSet.from_spec(spec)
    except ValueError as err:
        raise refuse(str(err)) from None
    for key in ("banker", "hands"):
        if key not in record:
            raise refuse(f"missing {key!r}")
    banker = record["banker"]
    if type(banker) is not int or not 0 <= banker < rules.players:
        raise refuse(f"banker must be a seat 0..{rules.players - 1}")
    hands = record["hands"]
    if not isinstance(hands, list) or len(hands) != rules.players:
        raise refuse(f"hands must be a list of {rules.players} hands")
    hand_types = []
    for seat, hand in enumerate(hands):
        if not isinstance(hand, list) or len(hand) != rules.hand_size:
            raise refuse(f"hand {seat} must be a list of {rules.hand_size} tiles")
        try:
            hand_types.append([parse_type(name) for name in hand])
        except ValueError as err:
            raise refuse(f"hand {seat}: {err}") from None
    actions = record.get("actions", [])
    if not isinstance(actions, list):
        raise refuse("actions must be a list")
    try:
        game = RefGame(hand_types, banker, rules, record.get("streak", 1))
    except ValueError as err:
        raise refuse(str(err)) from None
    return game, actions


def _parse_action(action: object, players: int) -> tuple[int, str, object]:
    """(seat, verb, payload) of one record action; payload is tile types, or a bool to declare."""
    if not isinstance(action, dict):
        raise ValueError("action must be a JSON object")
    if "seat" not in action:
        raise ValueError("action has no 'seat'")
    seat = action["seat"]
    if type(seat) is not int or not 0 <= seat < players:
        raise ValueError(f"seat must be an int 0..{players - 1}, got {seat!r}")
    verbs = [v for v in ("play", "discard", "declare") if v in action]
    if len(verbs) != 1:
        raise ValueError("action needs exactly one of 'play', 'discard' (or 'declare')")
    verb = verbs[0]
    unknown = sorted(str(k) for k in action if k not in ("seat", verb))
    if unknown:
        raise ValueError(f"action has unknown key {unknown[0]!r}")
    payload = action[verb]
    if verb == "declare":
        if type(payload) is not bool:
            raise ValueError(f"'declare' must be true or false, got {payload!r}")
        return seat, verb, payload
    if not isinstance(payload, list):
        raise ValueError(f"{verb!r} must be a list of tile names")
    return seat, verb, [parse_type(name) for name in payload]


def _replay_game(record: dict, complete: bool) -> RefGame:
    """Play a record's actions; with ``complete`` the hand must end exactly with them."""
    game, actions = _parse_record(record)
    # Forced early-death discards are applied lazily here, so that a record that includes
    # one can be matched against it at that seat's turn (section 8).
    for index, action in enumerate(actions):
        try:
            seat, verb, payload = _parse_action(action, game.players)
            while game._forced_tile() is not None and game.turn != seat:
                game._apply("discard", (game._forced_tile(),))
            forced = game._forced_tile() is not None
            decision = game.decision_for_action(seat, verb, payload)
        except ValueError as err:
            raise RecordError(str(err), index) from None
        assert forced or decision in game.decisions(), (decision, "checks disagree with decisions()")
        game._apply(*decision)
    game._flush_forced()
    if complete and not game.is_over:
        raise RecordError("the record ends before the hand is over", len(actions))
    return game


def ref_replay(record: dict) -> dict:
    """Replay a hand record (RULES.md section 8) to its output dict, or raise a ValueError
    (``RecordError``) whose ``action_index`` is the refused action's index, ``len(actions)``
    when the record stops early, or None for a record-level error."""
    return _replay_game(record, complete=True).result()


def ref_perft(record: dict, depth: int) -> int:
    """Distinct decision sequences of length ``depth`` from the position after the record's
    actions; a hand that ends earlier counts once (RULES.md section 8)."""
    return _perft(_replay_game(record, complete=False), depth)


def _perft(game: RefGame, depth: int) -> int:
    if depth == 0 or game.is_over:
        return 1
    decisions = game.decisions()
    if depth == 1:
        return len(decisions)
    total = 0
    for decision in decisions:
        child = game.copy()
        child._apply(*decision)
        child._flush_forced()
        total += _perft(child, depth - 1)
    return total
