"""Rule switches and presets (RULES.md section 9).

``RuleSet`` holds every switch with its default. ``RuleSet.from_spec`` accepts a preset name,
a dict ``{"preset": name, switch: value, ...}`` (as in hand records), a path to a YAML or TOML
file holding such a dict, or a ``RuleSet``. Everything is validated here, once, so that the
compiled core only ever sees consistent rules.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from dataclasses import dataclass, field
from typing import Any

from .checks import INT64_MAX, is_integer, load_json, load_yaml, read_small_file, short_repr
from .tiles import COPIES, NAMES, NUM_TYPES, TYPE_BITS, parse_type

NAMED_DECKS: dict[str, tuple[str, ...]] = {}


def _make_named_decks() -> dict[str, tuple[str, ...]]:
    """Named decks as tuples of tile names (one name per physical tile, canonical order)."""
    full = tuple(NAMES[t] for t in range(NUM_TYPES) for _ in range(COPIES[t]))
    civil = full[:22]
    return {
        "32": full,
        "30_no_supreme": tuple(n for n in full if n not in ("4-2", "2-1")),
        "24_weakened_military": civil + ("6-3", "5-4"),
        "24_supreme_civilians": civil + ("4-2", "2-1"),
        "24_reduced_populace": tuple(n for n in civil if n != "5-1") + ("6-3", "5-4", "4-2", "2-1"),
    }


NAMED_DECKS = _make_named_decks()

CHOICES: dict[str, tuple[Any, ...]] = {
    "first_lead": ("banker", "heaven_holder"),
    "must_beat_if_able": (False, True),
    "discards_face_up": (False, True),
    "combos": ("classic", "pairs_only", "same_suit_any"),
    "civilian_triplets": (False, True),
    "early_death": (True, False),
    "zero_column_points": ("par+1", "par"),
    "pay_over_par": (True, False),
    "banker_double": ("settling_banker", "hand_banker"),
    "banker_streak": (False, True),
    "last_trick_bonus": (True, False),
    "shutout_bonus": (True, False),
    "big_six_captures": (True, False),
    "one_red_dot": ("auto", "choice", "off"),
    "players": (4, 3),
}


@dataclass(frozen=True)
class RuleSet:
    """Every switch of RULES.md section 9; the defaults are the ``standard`` game."""

    first_lead: str = "banker"
    must_beat_if_able: bool = False
    discards_face_up: bool = False
    combos: str = "classic"
    civilian_triplets: bool = False
    early_death: bool = True
    zero_column_points: str = "par+1"
    pay_over_par: bool = True
    banker_double: str = "settling_banker"
    banker_streak: bool = False
    trick_bonus_stakes: tuple[int, int] = (2, 4)
    last_trick_bonus: bool = True
    shutout_bonus: bool = True
    big_six_captures: bool = True
    one_red_dot: str = "auto"
    deck: str | tuple[str, ...] = "32"
    players: int = 4
    name: str = field(default="custom", compare=False)

    # ----------------------------------------------------------------- derived facts
    # (cached: a RuleSet is immutable, and these sit on hot paths such as observations)
    @functools.cached_property
    def deck_types(self) -> tuple[int, ...]:
        """The deck as tile types, one entry per physical tile, canonical order."""
        names = NAMED_DECKS[self.deck] if isinstance(self.deck, str) else self.deck
        return tuple(sorted(parse_type(n) for n in names))

    @functools.cached_property
    def deck_mask(self) -> int:
        """The deck as a mask over physical tiles: copy k of a type is its k-th bit."""
        mask, seen = 0, [0] * NUM_TYPES
        for t in self.deck_types:
            mask |= 1 << int(TYPE_BITS[t, seen[t]])
            seen[t] += 1
        return mask

    @functools.cached_property
    def hand_size(self) -> int:
        return len(self.deck_types) // self.players

    @functools.cached_property
    def par(self) -> int:
        return self.hand_size // 2

    def payment_bound(self, streak: int = 1) -> int:
        """RULES.md section 8's bound on every payment and seat total of one hand, in chips:
        ``(players - 1) * F * (par * max(trick_bonus_stakes) + 4 * (par + 1))``, with F the
        banker factor (1 + streak under ``banker_streak``, else 2)."""
        factor = 1 + streak if self.banker_streak else 2
        return (self.players - 1) * factor * (self.par * max(self.trick_bonus_stakes) + 4 * (self.par + 1))

    def check_streak(self, streak: object) -> int:
        """``streak`` as an int, once it is an integer 1 .. 2^63 - 1 whose payments stay within
        the signed 64-bit range (RULES.md section 8); ValueError otherwise."""
        if not is_integer(streak) or not 1 <= streak <= INT64_MAX:
            raise ValueError(f"streak must be an integer from 1 to 2^63 - 1, got {short_repr(streak)}")
        streak = int(streak)
        bound = self.payment_bound(streak)
        if bound > INT64_MAX:
            raise ValueError(
                f"streak {streak} with banker_streak and trick_bonus_stakes "
                f"{list(self.trick_bonus_stakes)} lets one hand pay up to {bound} chips, beyond "
                "2^63 - 1 (RULES.md section 8); use a smaller streak or smaller stakes"
            )
        return streak

    def check_match(self, hands: int) -> int:
        """The most chips a match of ``hands`` hands can pay (hand k has a streak of at most k, so
        each pays at most ``payment_bound(hands)``); ValueError when int64 cannot hold it."""
        total = hands * self.payment_bound(hands)
        if total > INT64_MAX:
            raise ValueError(
                f"a match of {hands} hands with trick_bonus_stakes {list(self.trick_bonus_stakes)} "
                f"could pay up to {total} chips, beyond 2^63 - 1 (RULES.md section 8); "
                "use fewer hands or smaller stakes"
            )
        return total

    def switches(self) -> dict[str, Any]:
        """The switches as plain JSON values (the ``name`` is not a switch)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "name"}
        out["trick_bonus_stakes"] = list(self.trick_bonus_stakes)
        if not isinstance(self.deck, str):
            out["deck"] = list(self.deck)
        return out

    def diff(self) -> dict[str, Any]:
        """The switches that differ from ``standard``."""
        base = STANDARD.switches()
        return {k: v for k, v in self.switches().items() if base[k] != v}

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_spec(cls, spec: object = "standard") -> RuleSet:
        """Rules from a preset name, a dict, a YAML/TOML path, or a RuleSet (see module doc)."""
        if isinstance(spec, RuleSet):
            return spec.checked  # a RuleSet built by hand is checked too (once)
        if isinstance(spec, os.PathLike):
            spec = os.fspath(spec)
        if spec is None:
            raise ValueError(
                "rules may not be null: give a preset name (such as 'standard'), a dict of switches or a file path"
            )
        if isinstance(spec, str):
            if spec in PRESETS:
                return PRESETS[spec]
            if spec.lower().endswith(RULES_SUFFIXES):
                return cls.from_spec(_load_file(spec))
            if os.path.exists(spec):
                raise ValueError(
                    f"{short_repr(spec)} is no preset, and a rules file is named "
                    f"{', '.join('*' + x for x in RULES_SUFFIXES)}; presets are: {', '.join(PRESETS)}"
                )
            raise ValueError(f"unknown preset {short_repr(spec)}; presets are: {', '.join(PRESETS)}")
        if isinstance(spec, dict):
            return cls._from_dict(spec)
        raise ValueError(
            f"rules must be a preset name, a dict or a file path, got {type(spec).__name__} {short_repr(spec)}"
        )

    @classmethod
    def _from_dict(cls, spec: dict) -> RuleSet:
        spec = dict(spec)
        preset = spec.pop("preset", "standard")
        if not isinstance(preset, str) or preset not in PRESETS:
            raise ValueError(f"unknown preset {short_repr(preset)}; presets are: {', '.join(PRESETS)}")
        base = PRESETS[preset]
        valid = [f.name for f in dataclasses.fields(cls) if f.name != "name"]
        unknown = sorted((k for k in spec if k not in valid), key=str)
        if unknown:
            raise ValueError(f"unknown rule switch {short_repr(unknown[0])}; switches are: {', '.join(valid)}")
        values = {}
        for key, value in spec.items():
            values[key] = _check_value(key, value)
        if values.get("players") == 3 and "deck" not in values and base.deck == "32":
            values["deck"] = "30_no_supreme"  # RULES.md section 9: three players default to it
        rules = dataclasses.replace(base, **values)
        rules.validate()
        same = [name for name, known in PRESETS.items() if known == rules]
        return dataclasses.replace(rules, name=same[0] if same else f"{preset}+custom")

    @functools.cached_property
    def checked(self) -> RuleSet:
        """This RuleSet with every switch checked and written as a preset writes it (tuples, tile
        names high-low), once ``validate()`` passes (ValueError otherwise); named after the
        preset it equals, if it was built by hand (``custom``)."""
        values = {
            f.name: _check_value(f.name, getattr(self, f.name)) for f in dataclasses.fields(self) if f.name != "name"
        }
        rules = dataclasses.replace(self, **values)
        rules.validate()
        same = [name for name, known in PRESETS.items() if known == rules]
        return dataclasses.replace(rules, name=same[0]) if same and rules.name == "custom" else rules

    def validate(self) -> None:
        """Refuse combinations of switches that RULES.md does not allow."""
        if self.banker_streak and self.banker_double != "hand_banker":
            raise ValueError(
                f"banker_streak needs banker_double: hand_banker (got banker_double: {self.banker_double})"
            )
        if self.civilian_triplets and self.combos != "classic":
            raise ValueError(f"civilian_triplets needs combos: classic (got combos: {self.combos})")
        if isinstance(self.deck, str) and self.deck not in NAMED_DECKS:
            raise ValueError(
                f"unknown deck {short_repr(self.deck)}; decks are: {', '.join(NAMED_DECKS)} or a list of tile names"
            )
        types = self.deck_types
        for t in set(types):
            if types.count(t) > COPIES[t]:
                raise ValueError(f"deck has {types.count(t)} x {NAMES[t]}; the set has only {COPIES[t]}")
        if len(types) == 0 or len(types) % self.players:
            raise ValueError(f"a deck of {len(types)} tiles cannot be dealt evenly to {self.players} players")
        if self.hand_size % 2:
            raise ValueError(
                f"a deck of {len(types)} tiles gives {self.players} hands of {self.hand_size}; "
                "the hand size must be even"
            )
        bound = self.payment_bound()
        if bound > INT64_MAX:
            raise ValueError(
                f"trick_bonus_stakes {list(self.trick_bonus_stakes)} let one hand pay up to "
                f"{bound} chips, beyond 2^63 - 1 (RULES.md section 8); with these rules each "
                f"stake may be at most {self._largest_stake()}"
            )

    def _largest_stake(self) -> int:
        """The largest stake that keeps ``payment_bound()`` (streak 1) within int64."""
        factor = (self.players - 1) * 2
        return max(0, (INT64_MAX // factor - 4 * (self.par + 1)) // self.par)


def _check_value(key: str, value: object) -> object:
    if key == "trick_bonus_stakes":  # their size is bounded in RuleSet.validate, with the deck known
        if isinstance(value, (list, tuple)) and len(value) == 2 and all(type(v) is int and v >= 0 for v in value):
            return (int(value[0]), int(value[1]))
        raise ValueError(
            f"trick_bonus_stakes must be two non-negative integers [supreme, quartet], got {short_repr(value)}"
        )
    if key == "deck":
        if type(value) is int and value == 32:  # RULES.md section 9 writes this value as the number 32
            return "32"
        if isinstance(value, str):
            if value in NAMED_DECKS:
                return value
            raise ValueError(
                f"unknown deck {short_repr(value)}; decks are: {', '.join(NAMED_DECKS)} or a list of tile names"
            )
        if isinstance(value, (list, tuple)):
            types = [parse_type(n) for n in value]
            return tuple(NAMES[t] for t in sorted(types))
        raise ValueError(f"deck must be a deck name or a list of tile names, got {short_repr(value)}")
    allowed = CHOICES[key]
    # bool is a subclass of int: compare types too, so that `players: true` is refused.
    if not any(type(value) is type(a) and value == a for a in allowed):
        quote = (
            f" (YAML reads an unquoted {'on' if value else 'off'} or {str(value).lower()} as a boolean: quote the word)"
            if isinstance(value, bool) and {"on", "off"} & set(allowed)
            else ""
        )
        raise ValueError(
            f"{key} must be one of {', '.join(json.dumps(a) for a in allowed)}, got {short_repr(value)}{quote}"
        )
    return value


def parse_error_text(err: Exception) -> str:
    """One line for a YAML, JSON or TOML syntax error: the problem and where it is
    (``expected ',' or ']', but got ':' at line 2, column 2``)."""
    mark = getattr(err, "problem_mark", None)  # yaml's MarkedYAMLError
    if mark is not None:
        return f"{getattr(err, 'problem', None) or err} at line {mark.line + 1}, column {mark.column + 1}"
    if isinstance(err, json.JSONDecodeError):
        return f"{err.msg} at line {err.lineno}, column {err.colno}"
    lines = str(err).splitlines()
    return lines[0] if lines else type(err).__name__


RULES_SUFFIXES = (".yaml", ".yml", ".toml", ".json")


def _load_file(path: str) -> dict:
    if not os.path.exists(path):
        raise ValueError(f"rules file {path!r} does not exist")
    raw = read_small_file(path, f"rules file {path!r}")
    try:
        if path.lower().endswith(".toml"):
            import tomllib

            data = tomllib.loads(raw.decode())
        elif path.lower().endswith(".json"):
            data = load_json(raw)
        else:
            data = load_yaml(raw)
    except Exception as err:  # every parser has its own error type; all mean a malformed file
        raise ValueError(f"rules file {path!r} is not valid: {parse_error_text(err)}") from None
    if not isinstance(data, dict):
        got = "nothing (it is empty)" if data is None else f"a {type(data).__name__} value, {short_repr(data)}"
        raise ValueError(
            f"rules file {path!r} must hold a mapping of switches, such as `players: 3` (`{{}}` for "
            f"the standard game); it holds {got}"
        )
    return data


STANDARD = RuleSet(name="standard")
PRESETS: dict[str, RuleSet] = {
    "standard": STANDARD,
    "culin1895": RuleSet(
        discards_face_up=True,
        pay_over_par=False,
        banker_double="hand_banker",
        banker_streak=True,
        last_trick_bonus=False,
        shutout_bonus=False,
        big_six_captures=False,
        one_red_dot="off",
        name="culin1895",
    ),
    "hongkong": RuleSet(banker_double="hand_banker", banker_streak=True, name="hongkong"),
    "three_player": RuleSet(players=3, deck="30_no_supreme", name="three_player"),
    "micro": RuleSet(deck=("6-6", "6-6", "3-1", "6-3", "5-4", "4-2", "3-2", "2-1"), one_red_dot="off", name="micro"),
    "seed001": RuleSet(first_lead="heaven_holder", must_beat_if_able=True, combos="same_suit_any", name="seed001"),
}
