"""The rules API over the compiled core: ``Game``, ``replay`` and ``perft`` (RULES.md section 8).

Everything that comes from outside (tile names, hands, record actions, action ids) is checked
here, before it reaches the kernels; a refused input raises ``ValueError`` naming what was
wrong and what was expected, and leaves the game as it was.
"""

from __future__ import annotations

import codecs
import functools
import json
import os
from typing import Any, NamedTuple

import numpy as np

from . import _kernels as K
from . import layout as L
from .checks import DuplicateKeyError, check_seed, is_integer, legal_list, load_json, short_repr
from .combos import CombinationTable, table_for
from .rules import PRESETS, RuleSet
from .state import StateView
from .tiles import NAMES, NUM_TYPES, TILE_TYPE, TYPE_BITS, mask_names, mask_types, parse_type

RECORD_KEYS = {"rules", "banker", "hands", "actions", "streak"}
ACTION_KINDS = ("play", "discard", "declare")


_TILE_TYPES = [int(t) for t in TILE_TYPE]
_PLAY_KINDS = {L.KIND_LEAD: "lead", L.KIND_BEAT: "beat", L.KIND_DISCARD: "discard"}
_SCRATCH, _PHASE, _OVER = L.W_SCRATCH, L.S_PHASE, L.PHASE_OVER  # read on every decision


def _types_of(mask: int) -> tuple[int, ...]:
    """Tile types of a physical mask, sorted; visits only the set bits (masks here are small)."""
    types = []
    while mask:
        low = mask & -mask
        types.append(_TILE_TYPES[low.bit_length() - 1])
        mask ^= low
    return tuple(sorted(types))


class Play(NamedTuple):
    """One seat's turn in a trick: ``kind`` is lead, beat, discard or forced (an early-death
    discard, RULES.md section 4); ``types`` are the tile types it put on the table, sorted."""

    seat: int
    kind: str
    types: tuple[int, ...]


class Trick(NamedTuple):
    """One trick as the step reports told it: its leader and size (tiles per player), each
    seat's play in turn order; once the trick is over, its winner, the winning combination id
    (``Game.combos.combos[winning]``) and the trick-bonus chips each seat received (section 5,
    all 0 without a stake). The three stay None while the trick is in play."""

    leader: int
    size: int
    plays: tuple[Play, ...]
    winner: int | None = None
    winning: int | None = None
    bonus: tuple[int, ...] | None = None


class Snapshot(NamedTuple):
    """Everything a step changes in a ``Game``, copied by ``Game.snapshot()`` for ``restore()``."""

    combos: CombinationTable
    state: np.ndarray
    work: np.ndarray
    history: list[int]
    tricks: list[Trick]
    logged: int
    trick_base: int
    forced_read: list[tuple[int, int]]
    forced_taken: int


class RecordError(ValueError):
    """A hand record that cannot be replayed; ``action_index`` is None for the record itself."""

    def __init__(self, reason: str, action_index: int | None):
        super().__init__(reason)
        self.action_index = action_index


class Game:
    """One hand of Tien Gow.

    ``Game(seed=7)`` deals at random (fresh entropy when the seed is None; the banker by the
    dice of RULES.md section 3, unless
    given); ``Game(hands=[[...], ...], banker=0)`` starts from explicit hands (tile names in
    either order). ``rules`` is anything ``RuleSet.from_spec`` accepts.

    Decisions are action ids (``legal_actions()``, the environments' action space) or hand
    record actions such as ``{"seat": 1, "discard": ["5-1", "2-2"]}`` (``play()``); ``history``
    lists the action ids applied so far (forced discards are not decisions and are not in it).

    A step is one call into the compiled core, which checks the action, applies it and logs
    what it did; ``tricks`` and ``forced`` read that log only when asked. ``clone()`` copies
    the game, and ``snapshot()`` / ``restore()`` take it back to an earlier point: what a
    Python tree search needs.
    """

    def __init__(
        self,
        seed: int | None = None,
        *,
        hands: list[list[str]] | None = None,
        banker: int | None = None,
        rules: Any = "standard",
        streak: int = 1,
    ):
        self.rules = RuleSet.from_spec(rules)
        self.combos: CombinationTable = table_for(self.rules)
        players = self.rules.players
        streak = self.rules.check_streak(streak)  # RULES.md section 8: payments stay within int64
        seed = check_seed(seed)
        rng = np.zeros(1, dtype=np.uint64)
        K.seed_rng(rng, np.uint64(seed))
        if hands is None:
            masks = np.zeros(L.MAX_SEATS, dtype=np.int64)
            K.deal(rng, self.combos.rules_array, masks)
        else:
            masks = self._hand_masks(hands)
        if banker is None:
            banker = int(K.dice_banker(rng, players))
        if not is_integer(banker) or not 0 <= banker < players:
            raise ValueError(f"banker must be a seat 0..{players - 1}, got {short_repr(banker)}")
        self.state = np.zeros(L.S_LEN, dtype=np.int64)
        K.new_hand(self.state, masks, int(banker), streak, self.combos.table, self.combos.rules_array)
        self._tables = _packed_tables(self.rules)
        self._num_actions = self.combos.num_actions
        # layout.W_*: the trick history (for information_state), the log of step reports not
        # yet read into _tricks, and the scratch of legal_actions
        self._work = np.zeros(L.work_len(self.combos.num_combos), dtype=np.int64)
        self._logged = 0  # rows of the work array's log that _tricks has not read yet
        self._tricks: list[Trick] = []
        self._trick_base = 0  # the number of the trick _tricks[0] is (> 0 when the state was set from outside)
        self._forced_read: list[tuple[int, int]] = []  # the last step's forced discards, once its row is read
        self._forced_taken = 0  # of those, how many play() has taken as record actions
        self.history: list[int] = []  # the action ids step() and play() applied, in order

    def _hand_masks(self, hands: object) -> np.ndarray:
        """Masks of explicit hands, checked against the deck (copies go to seats in order)."""
        r = self.rules
        if not isinstance(hands, (list, tuple)) or len(hands) != r.players:
            raise ValueError(f"hands must be a list of {r.players} hands")
        deck = np.bincount(np.array(r.deck_types), minlength=NUM_TYPES)
        used = np.zeros(NUM_TYPES, dtype=np.int64)
        masks = np.zeros(L.MAX_SEATS, dtype=np.int64)
        for s, hand in enumerate(hands):
            if not isinstance(hand, (list, tuple)) or len(hand) != r.hand_size:
                raise ValueError(f"hand {s} must be a list of {r.hand_size} tiles")
            for name in hand:
                t = parse_type(name)
                if used[t] >= deck[t]:
                    raise ValueError(f"hand {s}: too many {NAMES[t]}; the deck has {deck[t]}")
                masks[s] |= 1 << int(TYPE_BITS[t, used[t]])
                used[t] += 1
        return masks

    # ----------------------------------------------------------------- views
    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def view(self) -> StateView:
        """The state read by name (``state.py``): read-only, and it follows the game as it moves on."""
        return StateView(self.state, self.rules.players)

    @property
    def is_over(self) -> bool:
        return self.state.item(_PHASE) == _OVER

    @property
    def to_act(self) -> int | None:
        return None if self.is_over else int(self.state[L.S_TO_ACT])

    @property
    def banker(self) -> int:
        return int(self.state[L.S_BANKER])

    @property
    def phase(self) -> str:
        return ("declare", "lead", "follow", "over")[int(self.state[L.S_PHASE])]

    @property
    def tricks(self) -> list[Trick]:
        """Every trick of the hand so far, the one in play last (empty before the first lead),
        as the steps of this game reported them."""
        self._read_log()
        return list(self._tricks)

    @property
    def forced(self) -> list[tuple[int, int]]:
        """(seat, tile type) of the early-death discards that followed the last decision, in
        play order (RULES.md section 4); ``play()`` takes them off as a record spells them out."""
        forced = self._forced_in(self._logged - 1) if self._logged else self._forced_read
        return forced[self._forced_taken :]

    @property
    def columns(self) -> list[int]:
        """Columns each seat has won so far."""
        return self.state[L.S_COLS : L.S_COLS + self.players].tolist()

    @property
    def current_best(self) -> tuple[int, int] | None:
        """(seat, combination id) of the best play of the trick in play; None before its lead."""
        if self.state[L.S_PHASE] != L.PHASE_FOLLOW:
            return None
        return int(self.state[L.S_BEST_SEAT]), int(self.state[L.S_BEST])

    def hand(self, seat: int) -> list[str]:
        return mask_names(self.state[L.S_HAND + self._seat(seat)])

    def dealt(self, seat: int) -> list[str]:
        return mask_names(self.state[L.S_DEALT + self._seat(seat)])

    def _seat(self, seat: object) -> int:
        if not is_integer(seat) or not 0 <= seat < self.players:
            raise ValueError(f"seat must be a seat 0..{self.players - 1}, got {short_repr(seat)}")
        return int(seat)

    def legal_actions(self) -> list[int]:
        """The acting seat's legal action ids, in the core's order (empty once the hand is over)."""
        n = K.game_legal(self.state, self._tables, self._work)
        return self._work[_SCRATCH : _SCRATCH + n].tolist()

    def legal_mask(self) -> np.ndarray:
        mask = np.zeros(self.combos.num_actions, dtype=np.int8)
        K.legal_mask(self.state, self.combos.table, self.combos.rules_array, self._work[_SCRATCH:], mask)
        return mask.astype(bool)

    def observe(self, seat: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Observation vector (observation.py) and legal-action mask of ``seat`` (default: the
        seat to act); the mask is all False for a seat that is not to act."""
        if seat is None and self.is_over:
            raise ValueError(f"observe needs a seat 0..{self.players - 1}; the hand is over")
        seat = self._seat(self.to_act if seat is None else seat)
        offsets = _observation_offsets(self.players, self.rules.hand_size)
        obs = np.zeros(offsets[-1], dtype=np.float32)
        mask = np.zeros(self.combos.num_actions, dtype=np.int8)
        K.observe(
            self.state,
            seat,
            self.combos.table,
            self.combos.rules_array,
            offsets[:-1],
            self.rules.discards_face_up,
            self._work[_SCRATCH:],
            obs,
            mask,
        )
        return obs, mask.astype(bool)

    def information_state(self, seat: int | None = None) -> np.ndarray:
        """Perfect-recall information state (observation.py) of ``seat`` (default: the seat to
        act), float32, from the tricks this game has played. ValueError for a game whose state
        was set from outside, so that its tricks do not lead to the state: the public plays, the
        seat's own face-down tiles and every seat's count of them must agree."""
        if seat is None and self.is_over:
            raise ValueError(f"information_state needs a seat 0..{self.players - 1}; the hand is over")
        seat = self._seat(self.to_act if seat is None else seat)
        state, seen = self.state, self._work[L.W_HISTORY : L.W_HISTORY + L.HISTORY_LEN]
        rows = seen[: L.H_COUNT].reshape(L.MAX_TRICKS, L.MAX_SEATS, 2)
        up, down = np.bitwise_or.reduce(rows[:, :, L.H_UP]), np.bitwise_or.reduce(rows[:, :, L.H_DOWN])
        downs = state[L.S_DOWN : L.S_DOWN + L.MAX_SEATS]
        if (
            seen[L.H_COUNT] != state[L.S_TRICK]
            or not np.array_equal(up, state[L.S_UP : L.S_UP + L.MAX_SEATS])
            or down[seat] != downs[seat]
            or [int(m).bit_count() for m in down] != [int(m).bit_count() for m in downs]
        ):
            raise ValueError(
                "this game's tricks do not lead to its state (the state was set from outside), so its "
                "information state is not known"
            )
        layout = _layout(self.players, self.rules.hand_size)
        out = np.zeros(layout.information_size, dtype=np.float32)
        K.write_information_state(
            state,
            seen,
            seat,
            self.combos.table,
            self.combos.rules_array,
            layout.offsets,
            self.rules.discards_face_up,
            out,
        )
        return out

    def action_name(self, action: int) -> str:
        """Readable action: ``play 6-6+6-3``, ``discard 5-1``, ``declare``, ``decline``."""
        if not is_integer(action):
            raise ValueError(f"an action is an integer id 0..{self.combos.num_actions - 1}, got {short_repr(action)}")
        return self.combos.action_name(int(action))

    def clone(self) -> Game:
        """A game of its own in the same position: stepping one leaves the other as it was."""
        fields = self.__dict__.copy()  # a dict's copy, then one assignment: cheaper than setting attributes
        fields["state"] = self.state.copy()
        fields["_work"] = self._work.copy()
        fields["_tricks"] = self._tricks.copy()  # tricks are tuples and _forced_read is never changed: sharing is safe
        fields["history"] = self.history.copy()
        other = object.__new__(Game)
        other.__dict__ = fields
        return other

    __copy__ = clone  # copy.copy(game) is a game of its own too, not a view of this one

    def snapshot(self) -> Snapshot:
        """This position, for ``restore()``: a tree search snapshots a node once and restores it
        before each child, instead of cloning the game for every child."""
        return Snapshot(
            self.combos,
            self.state.copy(),
            self._work.copy(),
            self.history.copy(),
            self._tricks.copy(),
            self._logged,
            self._trick_base,
            self._forced_read,
            self._forced_taken,
        )

    def restore(self, snapshot: Snapshot) -> None:
        """Go back to the position of ``snapshot()`` (of this game or one of the same rules), in
        place: the state array stays the same object. A snapshot may be restored many times."""
        if not isinstance(snapshot, Snapshot) or snapshot.combos is not self.combos:
            raise ValueError(
                f"restore takes a Snapshot that a game under these rules ({self.rules.name}) made, "
                f"got {short_repr(snapshot)}"
            )
        self.state[:] = snapshot.state
        self._work[:] = snapshot.work
        self.history = snapshot.history.copy()
        self._tricks = snapshot.tricks.copy()
        self._logged, self._trick_base = snapshot.logged, snapshot.trick_base
        self._forced_read, self._forced_taken = snapshot.forced_read, snapshot.forced_taken

    # ----------------------------------------------------------------- acting
    def step(self, action: int) -> None:
        """Apply one action id of the acting seat; ValueError if it is not legal now (and then
        nothing has changed)."""
        if type(action) is not int or not 0 <= action < self._num_actions:  # plain ints skip the slower checks
            if not is_integer(action) or not 0 <= action < self._num_actions:
                raise ValueError(f"an action is an integer id 0..{self._num_actions - 1}, got {short_repr(action)}")
            action = int(action)
        self._apply(action)

    def _apply(self, action: int) -> None:
        """Step the kernel (one call: it checks the action, steps and logs its report); ValueError
        naming the reason if the action is not legal now, and then nothing has changed."""
        row = self._logged
        if row == L.W_ROWS:  # only a game whose state was set from outside again and again gets here
            self._read_log()
            row = 0
        if K.game_step(self.state, action, row, self._tables, self._work) == L.GAME_ILLEGAL:
            raise self._refusal(action)
        self._logged = row + 1
        self._forced_taken = 0
        self.history.append(action)

    def _refusal(self, action: int) -> ValueError:
        """Why step() refuses ``action``, an action id that is not legal now."""
        if self.is_over:
            return ValueError(f"action {action}: the hand is over")
        legal = self.legal_actions()
        return ValueError(
            f"action {action} ({self.action_name(action)}) is not legal for seat "
            f"{self.to_act}; legal: {legal_list(legal, self.action_name)}"
        )

    def _row(self, row: int) -> list[int]:
        """Row ``row`` of the work array's log: a step report, then the trick's leader and size before it."""
        at = L.W_LOG + L.W_ROW * row
        return self._work[at : at + L.W_ROW].tolist()

    def _forced_in(self, row: int) -> list[tuple[int, int]]:
        """(seat, tile type) of the forced discards a logged step reported, in play order."""
        report = self._row(row)
        seat, players = report[L.REP_SEAT], self.rules.players
        forced = []
        for k in range(1, players):  # early death goes round in play order after the decision
            s = (seat + k) % players
            if report[L.REP_FORCED + s]:
                forced.append((s, _types_of(report[L.REP_FORCED + s])[0]))
        return forced

    def _read_log(self) -> None:
        """Read the logged step reports into the tricks, and empty the log."""
        for row in range(self._logged):
            self._read_report(self._row(row))
        if self._logged:
            self._forced_read = self._forced_in(self._logged - 1)
        self._logged = 0

    def _read_report(self, report: list[int]) -> None:
        """Add one step's report to the tricks: the trick's plays, forced discards, its end."""
        kind = report[L.REP_KIND]
        if kind == L.KIND_DECLARE or kind == L.KIND_DECLINE:
            return
        seat, players, number = report[L.REP_SEAT], self.rules.players, report[L.REP_TRICK]
        types = _types_of(report[L.REP_TILES])
        if not self._tricks:
            self._trick_base = number  # > 0: the state was set from outside, and the story starts here
        if kind == L.KIND_LEAD:
            self._tricks.append(Trick(seat, len(types), ()))
        elif self._trick_base + len(self._tricks) <= number:  # the state was set from outside in mid-trick
            self._tricks.append(Trick(report[L.W_ROW_LEADER], report[L.W_ROW_SIZE], ()))
        trick = self._tricks[-1]
        plays = trick.plays
        if kind == L.KIND_DISCARD and plays and plays[-1].seat == seat:  # the next tile of one discard
            plays = plays[:-1] + (Play(seat, "discard", tuple(sorted(plays[-1].types + types))),)
        else:
            plays += (Play(seat, _PLAY_KINDS[kind], types),)
        for k in range(1, players):  # early death goes round in play order after the decision
            s = (seat + k) % players
            if report[L.REP_FORCED + s]:
                plays += (Play(s, "forced", _types_of(report[L.REP_FORCED + s])),)
        if report[L.REP_WINNER] >= 0:
            bonus = tuple(report[L.REP_BONUS : L.REP_BONUS + players])
            trick = Trick(trick.leader, trick.size, plays, report[L.REP_WINNER], report[L.REP_WINNING], bonus)
        else:
            trick = Trick(trick.leader, trick.size, plays)
        self._tricks[-1] = trick

    def play(self, action: object) -> None:
        """Apply one hand-record action (RULES.md section 8); ValueError with the reason, and
        then nothing has changed. It accepts exactly what ``step()`` would, also when ``step()``
        has already put down part of a face-down answer (then only the tiles still owed)."""
        seat, kind, value = parse_action(action, self.players)
        for k, (s, t) in enumerate(self.forced):
            if s == seat:  # a forced early-death discard that the record spells out
                if kind == "discard" and value == [t]:
                    self._forced_taken += k + 1
                    return
                raise ValueError(f"seat {s} must discard {NAMES[t]} by early death")
        if self.is_over:
            declarer = int(self.state[L.S_DECLARER])
            if declarer >= 0 and not self.history:  # nobody decided: One Red Dot ended the hand at the deal
                raise ValueError(
                    f"the hand is over: seat {declarer} declared One Red Dot at the deal, by itself "
                    f"(one_red_dot: {self.rules.one_red_dot}); a record leaves that declaration out"
                )
            raise ValueError("the hand is over")
        if seat != self.to_act:
            raise ValueError(f"wrong seat: seat {self.to_act} is to act, not seat {seat}")
        C = self.combos.num_combos
        phase = self.phase
        if kind == "declare":
            if phase != "declare":
                raise ValueError(f"seat {seat} cannot declare One Red Dot now")
            choice = L.declare_action(C) if value else L.decline_action(C)
            self._apply(choice)
            return
        if phase == "declare":
            raise ValueError(f"seat {seat} must first declare or decline One Red Dot")
        owed = int(self.state[L.S_OWED])  # > 0: step() has put down part of this seat's answer
        if kind == "play":
            if owed:
                raise ValueError(
                    f"seat {seat} has begun a face-down answer and owes {owed} more tile(s): "
                    "only face-down discards are legal now"
                )
            self._check_held(seat, value)
            j = self.combos.find(value)
            if j < 0:
                raise ValueError(f"{'+'.join(NAMES[t] for t in sorted(value))} is not a combination")
            if phase == "follow":
                self._check_beats(j)
            self._apply(j)
            return
        if phase == "lead":
            raise ValueError("the leader must play a combination, not discard")
        if owed and len(value) != owed:
            raise ValueError(
                f"seat {seat} owes {owed} more tile{'s' if owed > 1 else ''} face down "
                f"(step() put down the rest), got {len(value)}"
            )
        size = int(self.state[L.S_SIZE])
        if not owed and len(value) != size:
            raise ValueError(f"must answer with exactly {size} tile(s), got {len(value)}")
        self._check_held(seat, value)
        if self.rules.must_beat_if_able and any(a < C for a in self.legal_actions()):
            raise ValueError(f"seat {seat} can beat and must (must_beat_if_able)")
        tiles = sorted(value)
        first = L.discard_action(C, tiles[0])
        if first not in self.legal_actions():  # then the others are legal too: they are held
            raise self._refusal(first)
        for t in tiles:
            self._apply(L.discard_action(C, t))

    def _check_held(self, seat: int, types: list[int]) -> None:
        hand = mask_types(self.state[L.S_HAND + seat])
        for t in set(types):
            if types.count(t) > hand.count(t):
                raise ValueError(f"seat {seat} does not hold {types.count(t)} x {NAMES[t]}")

    def _check_beats(self, j: int) -> None:
        best = int(self.state[L.S_BEST])
        size = int(self.state[L.S_SIZE])
        mine, theirs = self.combos.combos[j], self.combos.combos[best]
        if len(mine.types) != size:
            raise ValueError(f"must answer with exactly {size} tile(s), got {len(mine.types)}")
        if mine.cls != theirs.cls:
            raise ValueError(f"{mine.label} ({mine.cls}) cannot beat a {theirs.cls}")
        if mine.strength <= theirs.strength:
            raise ValueError(f"{mine.label} does not beat {theirs.label}")

    # ----------------------------------------------------------------- results
    def result(self) -> dict:
        """The replay output of RULES.md section 8 (valid once the hand is over)."""
        if not self.is_over:
            raise ValueError("the hand is not over yet")
        st, players = self.state, self.players
        tricks = []
        for k in range(int(st[L.S_TRICK])):  # the kernel's own trick log (layout.py)
            log = st[L.S_LOG + L.LOG_STRIDE * k : L.S_LOG + L.LOG_STRIDE * (k + 1)]
            tricks.append(
                {
                    "leader": int(log[L.LOG_LEADER]),
                    "winner": int(log[L.LOG_WINNER]),
                    "size": int(log[L.LOG_SIZE]),
                    "winning": self.combos.combos[int(log[L.LOG_WINNING])].names,
                }
            )

        def seats(offset: int) -> list[int]:
            return [int(v) for v in st[offset : offset + players]]

        bonus, settle = seats(L.S_BONUS), seats(L.S_SETTLE)
        return {
            "tricks": tricks,
            "columns": seats(L.S_COLS),
            "last_trick_winner": int(st[L.S_WINNER]),
            "trick_bonus": bonus,
            "settlement": settle,
            "multipliers": {"last_trick": int(st[L.S_MULT_LAST]), "shutout": int(st[L.S_MULT_SHUT])},
            "net": [b + s for b, s in zip(bonus, settle)],
        }

    def net(self) -> np.ndarray:
        st = self.state
        return (st[L.S_BONUS : L.S_BONUS + self.players] + st[L.S_SETTLE : L.S_SETTLE + self.players]).copy()


@functools.cache
def _packed_tables(rules: RuleSet) -> np.ndarray:
    """The rule set's ``rules`` array and table in one array, as ``_kernels.unpack_tables`` reads them."""
    combos = table_for(rules)
    return np.concatenate([[len(combos.rules_array)], combos.rules_array, combos.table.ravel()]).astype(np.int64)


@functools.cache
def _layout(players: int, hand_size: int):
    """The observation layout of a table (one per table size: its views are computed once)."""
    from .observation import ObservationLayout

    return ObservationLayout(players, hand_size)


@functools.cache
def _observation_offsets(players: int, hand_size: int) -> np.ndarray:
    """The observation layout's offsets, then the observation size."""
    layout = _layout(players, hand_size)
    return np.append(layout.offsets, layout.size)


def parse_action(action: object, players: int) -> tuple[int, str, Any]:
    """(seat, kind, tile types or bool) of a record action; ValueError if it is malformed."""
    if not isinstance(action, dict):
        raise ValueError("action must be a JSON object")
    if "seat" not in action:
        raise ValueError("action has no 'seat'")
    seat = action["seat"]
    if type(seat) is not int or not 0 <= seat < players:
        raise ValueError(f"seat must be an int 0..{players - 1}, got {short_repr(seat)}")
    kinds = [k for k in ACTION_KINDS if k in action]
    extra = set(action) - {"seat", *ACTION_KINDS}
    if len(kinds) != 1 or extra:
        raise ValueError(
            "action needs exactly one of 'play', 'discard' (or 'declare')"
            + (f"; unknown keys: {', '.join(sorted(str(k)[:40] for k in extra))[:200]}" if extra else "")
        )
    kind = kinds[0]
    value = action[kind]
    if kind == "declare":
        if not isinstance(value, bool):
            raise ValueError(f"'declare' must be true or false, got {short_repr(value)}")
        return seat, kind, value
    if not isinstance(value, list) or not value:
        raise ValueError(f"'{kind}' must be a list of tile names")
    return seat, kind, [parse_type(name) for name in value]


def parse_record(record: object) -> tuple[Game, list]:
    """A fresh ``Game`` at the start of the record, and its actions; RecordError if malformed."""

    def bad(reason: str) -> RecordError:
        return RecordError(f"record: {reason}", None)

    if not isinstance(record, dict):
        raise bad("a hand record must be a JSON object")
    unknown = sorted(set(record) - RECORD_KEYS, key=str)
    if unknown:
        raise bad(f"unknown key {short_repr(unknown[0])}; keys are {', '.join(sorted(RECORD_KEYS))}")
    for key in ("banker", "hands"):
        if key not in record:
            raise bad(f"missing {key!r}")
    spec = record.get("rules", "standard")
    if isinstance(spec, str) and spec not in PRESETS:  # a record never names a file
        raise bad(f"unknown preset {short_repr(spec)}; presets are: {', '.join(PRESETS)}")
    if spec is None:  # RULES.md section 8: rules may not be null
        raise bad("rules may not be null: give a preset name or an object of switches")
    try:
        rules = RuleSet.from_spec(spec)
    except ValueError as err:
        raise bad(str(err)) from None
    banker = record["banker"]
    if type(banker) is not int or not 0 <= banker < rules.players:
        raise bad(f"banker must be a seat 0..{rules.players - 1}, got {short_repr(banker)}")
    streak = record.get("streak", 1)
    if type(streak) is not int:  # a JSON integer (not true, not 2.0)
        raise bad(f"streak must be an integer from 1 to 2^63 - 1, got {short_repr(streak)}")
    try:
        streak = rules.check_streak(streak)
    except ValueError as err:
        raise bad(str(err)) from None
    actions = record.get("actions", [])
    if not isinstance(actions, list):
        raise bad("'actions' must be a list")
    if not isinstance(record["hands"], list):  # Game(hands=None) would deal at random
        raise bad(
            f"hands must be a list of {rules.players} hands, each a list of tile names; "
            f"got {short_repr(record['hands'])}"
        )
    try:
        game = Game(hands=record["hands"], banker=banker, rules=rules, streak=streak)
    except ValueError as err:
        raise bad(str(err)) from None
    return game, actions


def play_record(record: object) -> Game:
    """The game after every action of a record (a whole hand, or a position for perft)."""
    game, actions = parse_record(record)
    for i, action in enumerate(actions):
        try:
            game.play(action)
        except ValueError as err:
            raise RecordError(str(err), i) from None
    return game


def replay(record: object) -> dict:
    """Replay a hand record to its result (RULES.md section 8); RecordError if it is refused."""
    game = play_record(record)
    if not game.is_over:
        raise RecordError("the record ends before the hand is over", len(record.get("actions", [])))
    return game.result()


def longest_hand(rules: RuleSet) -> int:
    """The most decisions a hand can take (RULES.md section 8): a single in every trick, each
    seat deciding in each, after one declare-or-decline per seat under ``one_red_dot: choice``."""
    return rules.players * (rules.hand_size + (rules.one_red_dot == "choice"))


def perft(record: object, depth: int) -> int:
    """Distinct decision sequences of ``depth`` decisions after the record's actions (section 8).

    ``depth`` may not pass ``longest_hand`` of the record's rules: every hand is over by then,
    so a deeper count is the same number."""
    if type(depth) is not int or depth < 0:
        raise ValueError(f"depth must be an integer >= 0, got {short_repr(depth)}")
    game = play_record(record)
    longest = longest_hand(game.rules)
    if depth > longest:
        raise ValueError(
            f"depth {depth} is beyond the longest possible hand ({longest} decisions under "
            f"these rules); every hand is over by then, so depth {longest} gives the same count"
        )
    return int(K.perft(game.state, depth, game.combos.table, game.combos.rules_array))


MAX_RECORDS_BYTES = 256 * 2**20  # a records file is read whole: a larger one (or an endless stream) is refused


def load_records(path: str) -> list[Any]:
    """Records of a ``.json`` file (one record) or ``.jsonl`` file (one per line); OSError if
    the file cannot be read, ValueError if it is larger than ``MAX_RECORDS_BYTES``.

    JSON Lines are split on ``"\n"`` only (never on U+2028, form feeds and the like, which may
    sit inside a JSON string), so the list has exactly one entry per line. A final ``"\n"``
    ends the last line and starts no new one; an empty file has no lines. A UTF-8 byte order
    mark at the start of the file is skipped (as JSON allows, and as rules files are read). A
    line that cannot be a record (not UTF-8, not JSON, nested too deeply, empty or blank) is a
    ``RecordError`` in its place, and the other lines are read as usual.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"load_records takes the path of a .json or .jsonl file, got {short_repr(path)}")
    path = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read(MAX_RECORDS_BYTES + 1)
    if len(data) > MAX_RECORDS_BYTES:
        raise ValueError(
            f"{path} is larger than {MAX_RECORDS_BYTES >> 20} MB, too large to read as hand records; "
            "split it into smaller files"
        )
    data = data.removeprefix(codecs.BOM_UTF8)  # Windows editors write one
    if not path.lower().endswith(".jsonl"):  # RECORDS.JSONL too, as rules files are named
        return [_parse_json(data, path)]
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the "\n" that ends the last line (or an empty file)
    return [_parse_json(line, f"line {n}") for n, line in enumerate(lines, 1)]


def _parse_json(raw: bytes, where: str) -> Any:
    """One JSON value from UTF-8 bytes, or a RecordError that says why not."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return RecordError(
            f"{where} is not valid UTF-8 (byte {raw[err.start : err.start + 1]!r} at offset {err.start})", None
        )
    if not text.strip(" \t\r"):
        return RecordError(f"{where} is empty; expected a hand record (a JSON object)", None)
    try:
        return load_json(text)
    except RecursionError:
        return RecordError(f"{where} is nested too deeply to be a hand record", None)
    except DuplicateKeyError as err:
        return RecordError(f"{where} is not a hand record: {err}", None)
    except ValueError as err:
        if not isinstance(err, json.JSONDecodeError):  # int(): a number of thousands of digits
            return RecordError(f"{where} holds a number too long to be read ({str(err).split(';')[0]})", None)
        return RecordError(f"{where} is not JSON: {err}", None)


__all__ = [
    "Game",
    "Play",
    "Trick",
    "Snapshot",
    "RecordError",
    "replay",
    "perft",
    "longest_hand",
    "parse_record",
    "play_record",
    "load_records",
]
