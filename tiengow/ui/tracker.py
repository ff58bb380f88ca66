"""``HandLog``: a ``Game`` with a memory of who did what, trick by trick, and its hand record.

People want the story: who led what, who beat, who discarded how many, what early death took.
The game tells it: every step of the core reports what it did, and ``Game.tricks`` lists each
trick's plays from those reports (a bot's discard of n tiles, n single-tile actions, is one
play, as in a hand record). ``HandLog`` adds what a person needs on top: the hands at the start
of each trick, the declarations, events to narrate as they happen, and the hand record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tiengow_env import layout as L
from tiengow_env.combos import Combination
from tiengow_env.game import Game
from tiengow_env.rules import PRESETS, RuleSet
from tiengow_env.tiles import NAMES, mask_types


@dataclass
class Move:
    """One turn of one seat: ``kind`` is lead, beat, discard, forced (early death), declare or decline."""

    seat: int
    kind: str
    types: list[int] = field(default_factory=list)

    def record_action(self) -> dict | None:
        """The hand-record form (RULES.md section 8); None for a forced discard, which records may omit."""
        if self.kind in ("declare", "decline"):
            return {"seat": self.seat, "declare": self.kind == "declare"}
        if self.kind == "forced":
            return None
        key = "discard" if self.kind == "discard" else "play"
        return {"seat": self.seat, key: [NAMES[t] for t in sorted(self.types)]}


@dataclass
class Trick:
    """One trick: its moves so far and, once complete, the winner and any trick bonus."""

    number: int
    leader: int
    hands_before: list[list[int]]
    moves: list[Move] = field(default_factory=list)
    winner: int | None = None
    winning: Combination | None = None
    size: int = 0
    bonus: list[int] | None = None  # chips per seat, when won with a stake (section 5)


def rules_spec(rules: RuleSet) -> str | dict:
    """The record form of a rule set: a preset name, or ``{"preset": "standard", switch: value}``."""
    if rules.name in PRESETS and PRESETS[rules.name] == rules:
        return rules.name
    return {"preset": "standard", **rules.diff()}


class HandLog:
    """A game and its story. ``play(record_action)`` and ``step(action_id)`` return the events
    they caused: ``("move", Move)``, ``("trick", Trick)`` when a trick completes, ``("over", None)``."""

    def __init__(self, game: Game):
        self.game = game
        self.declarations: list[Move] = []
        self.tricks: list[Trick] = []
        self.auto_declared = game.is_over and game.view.declarer is not None
        if self.auto_declared:
            self.declarations.append(Move(game.view.declarer, "declare"))

    @property
    def current(self) -> Trick | None:
        """The trick in progress (None between tricks and before the first lead)."""
        if self.tricks and self.tricks[-1].winner is None:
            return self.tricks[-1]
        return None

    def play(self, action: dict) -> list[tuple[str, object]]:
        """Apply a record action (ValueError if refused, and nothing changes)."""
        kind = None
        if isinstance(action, dict) and "declare" in action:
            kind = "declare" if action["declare"] is True else "decline"
        return self._apply(lambda: self.game.play(action), kind)

    def step(self, action: int) -> list[tuple[str, object]]:
        """Apply an action id (ValueError if illegal)."""
        C = self.game.combos.num_combos
        kind = {L.declare_action(C): "declare", L.decline_action(C): "decline"}.get(int(action))
        return self._apply(lambda: self.game.step(action), kind)

    def _apply(self, apply: Callable[[], None], declaration: str | None) -> list[tuple[str, object]]:
        game = self.game
        actor, phase = game.to_act, game.phase
        hands = [mask_types(hand) for hand in game.view.hands]  # if a trick begins now
        apply()
        events: list[tuple[str, object]] = []
        if phase == "declare" and declaration:
            move = Move(actor, declaration)
            self.declarations.append(move)
            events.append(("move", move))
        first = len(self.tricks) - (self.current is not None)  # the tricks the game may have changed
        for number, told in enumerate(game.tricks[first:], first):
            if number == len(self.tricks):
                self.tricks.append(Trick(number + 1, told.leader, hands))
            trick = self.tricks[number]
            trick.size = told.size
            for k, play in enumerate(told.plays):
                if k < len(trick.moves):
                    trick.moves[k].types = list(play.types)  # a discard may have grown by a tile
                    continue
                move = Move(play.seat, play.kind, list(play.types))
                trick.moves.append(move)
                events.append(("move", move))
            if told.winner is not None:
                trick.winner, trick.winning = told.winner, game.combos.combos[told.winning]
                trick.bonus = list(told.bonus) if any(told.bonus) else None
                events.append(("trick", trick))
        if game.is_over:
            events.append(("over", None))
        return events

    def record(self) -> dict:
        """The hand record of everything applied so far (RULES.md section 8)."""
        game = self.game
        actions = [m.record_action() for m in self.declarations if not self.auto_declared]
        actions += [m.record_action() for t in self.tricks for m in t.moves]
        record = {
            "rules": rules_spec(game.rules),
            "banker": game.banker,
            "hands": [game.dealt(s) for s in range(game.players)],
            "actions": [a for a in actions if a is not None],
        }
        streak = game.view.streak
        if streak > 1:
            record["streak"] = streak
        return record
