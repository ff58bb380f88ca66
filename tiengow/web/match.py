"""A match on the server, one per browser session: a person against bots (play) or bots alone (watch).

The match runs as ``tiengow play`` runs one (RULES.md section 7): the first banker by the
dice, then the winner of each hand's last trick banks the next hand, with a streak count while
the same seat keeps the bank; net chips add up over the hands. Every finished hand is saved as
a hand record (section 8), ``hand-001.json``, ... and all of them in ``match.jsonl``, in the
match's own folder under the records folder, each file written whole (``atomic_write``).

Requests change a match only through ``new_match``, ``move``, ``step`` and ``next_hand``; each
checks its input completely and raises ``Refused`` (a message for people and an HTTP status)
before it changes anything, so a refused request leaves the match as it was.
"""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tiengow.agents.base import BUILTIN, Agent, build_builtin, builtin
from tiengow.agents.infra import atomic_write
from tiengow.agents.spec import option_rows, parse_spec
from tiengow.ui.play import interpret, menu
from tiengow.ui.tracker import HandLog
from tiengow_env.checks import short_repr
from tiengow_env.game import Game
from tiengow_env.rules import PRESETS, RuleSet
from tiengow_env.tiles import mask_names, mask_types

from . import views as V
from .folders import file_inside

MAX_HANDS = 100
BUDGET_LIMITS = {  # the most a page's bot may search per decision (``SearchAgent.budget``)
    "samples": 10_000,
    "iterations": 10_000,
    "particles": 10_000,
}
TILE_NAME_LENGTH = 5  # "6-6"; a longer word is no tile name


class Refused(Exception):
    """A request that cannot be carried out: ``message`` for the person, ``status`` for HTTP."""

    def __init__(self, message: str, status: int = 400, **details):
        super().__init__(message)
        self.status = status
        self.details = details


@dataclass(frozen=True)
class PageBot:
    """A bot seat of a page's match: the spec as the request wrote it (what the page shows and the
    agent is called), the built-in's name and its config, any file option resolved in the bots folder."""

    spec: str
    name: str
    config: object

    def make(self, rules: RuleSet, seed: int) -> Agent:
        return build_builtin(self.name, self.config, rules, seed, self.spec)


@dataclass
class MatchConfig:
    """What a new match is: the mode, the rules, the person's seat (None when watching), the
    checked bot of every bot seat, the number of hands and the seed of the deals and bots."""

    mode: str
    rules: RuleSet
    seat: int | None
    bots: dict[int, PageBot]
    hands: int
    seed: int


def parse_config(body: object, bots_dir: Path | None) -> MatchConfig:
    """A ``/api/new`` request body as a ``MatchConfig``; ``Refused`` naming the first bad field.

    Body: ``{"mode": "play" | "watch", "rules": preset name or {"preset": ..., switch: value},
    "seat": 0, "bots": spec or [spec per seat], "hands": 4, "seed": 7}`` (all but mode optional).
    A rules file is never read; bot files only in ``bots_dir`` (``check_agent``)."""
    if not isinstance(body, dict):
        raise Refused("the request body must be a JSON object")
    known = {"mode", "rules", "seat", "bots", "hands", "seed"}
    unknown = sorted(set(body) - known)
    if unknown:
        raise Refused(f"unknown field {unknown[0]!r}; fields are: {', '.join(sorted(known))}")
    mode = body.get("mode", "play")
    if mode not in ("play", "watch"):
        raise Refused(f"mode must be 'play' or 'watch', got {mode!r}")
    spec = body.get("rules", "standard")
    if isinstance(spec, str) and spec not in PRESETS:
        raise Refused(f"unknown rules preset {spec!r}; presets are: {', '.join(PRESETS)}")
    if not isinstance(spec, (str, dict)):
        raise Refused("rules must be a preset name or an object of switches")
    try:
        rules = RuleSet.from_spec(spec)
    except ValueError as err:
        raise Refused(f"rules: {err}") from None
    players = rules.players
    if mode == "watch" and "seat" in body:
        raise Refused("a watched match is bots only: it has no seat of yours, so leave out seat")
    seat = body.get("seat", 0) if mode == "play" else None
    if mode == "play" and (type(seat) is not int or not 0 <= seat < players):
        raise Refused(f"seat must be a seat 0..{players - 1} for {players} players, got {seat!r}")
    bot_seats = [s for s in range(players) if s != seat]
    specs = body.get("bots", "expert")
    if isinstance(specs, str):
        specs = [specs] * len(bot_seats)
    if not isinstance(specs, list) or len(specs) != len(bot_seats):
        raise Refused(
            f"bots must be an agent spec or a list of {len(bot_seats)} specs (seats "
            f"{', '.join(map(str, bot_seats))}), got {json.dumps(specs)[:80]}"
        )
    chosen = {s: check_agent(text, rules, s, bots_dir) for s, text in zip(bot_seats, specs)}
    hands = body.get("hands", 4)
    if type(hands) is not int or not 1 <= hands <= MAX_HANDS:
        raise Refused(f"hands must be a whole number from 1 to {MAX_HANDS}, got {hands!r}")
    seed = body.get("seed")
    if seed is None:
        seed = secrets.randbelow(2**31)
    if type(seed) is not int or not 0 <= seed < 2**63:
        raise Refused(f"seed must be a whole number from 0 to 2^63 - 1, got {seed!r}")
    return MatchConfig(mode, rules, seat, chosen, hands, seed)


def check_agent(spec: object, rules: RuleSet, seat: int, bots_dir: Path | None) -> PageBot:
    """The one check of an agent spec a request names (``parse_config`` calls it for every bot
    seat); ``Refused`` with a one-line message. A request may name only the built-in agents, with
    a bounded search (``BUDGET_LIMITS``), and files only inside ``bots_dir``, the folder that
    ``tiengow serve --bots-dir`` gave (None: no files, the shipped networks only). A plugin or
    ``MODULE:FACTORY`` would run code on the server: those are for the command line. No message
    says whether a file outside the folder exists, and none shows a path of the server."""
    if not isinstance(spec, str) or not spec.strip():
        raise Refused(f"seat {seat}: an agent spec is a string such as 'expert' or 'pimc:64', got {spec!r}")
    spec = spec.strip()
    name, sep, argument = spec.partition(":")
    if name not in BUILTIN:
        raise Refused(
            f"seat {seat}: {spec[:80]!r} is not a built-in agent; the page plays "
            f"{', '.join(sorted(BUILTIN))} (plugins and MODULE:FACTORY run code, so only the command "
            "line loads them)"
        )
    bot = builtin(name)
    try:
        config = parse_spec(name, argument if sep else None, bot.config)
    except ValueError as err:
        raise Refused(f"seat {seat}: {err}") from None
    files = {}  # option -> (the name the request gave, the file it names in the bots folder)
    for row in option_rows(bot.config):
        given = getattr(config, row["key"]) if row["type"] == "path" else None
        if given is None:
            continue
        path = file_inside(bots_dir, given) if bots_dir is not None else None
        if path is None:
            raise Refused(f"seat {seat}: {name}'s {row['key']} option {files_allowed(bots_dir)}")
        files[row["key"]] = (given, path)
    if files:
        config = dataclasses.replace(config, **{key: str(path) for key, (_, path) in files.items()})
    chosen = PageBot(spec, name, config)
    try:
        agent = chosen.make(rules, 0)
    except ValueError as err:  # a file of the folder that is no model: named as the request named it
        message = str(err)
        for given, path in files.values():
            message = message.replace(str(path), given)
        raise Refused(f"seat {seat}: {message}") from None
    for key, value in getattr(agent, "budget", {}).items():
        if value > BUDGET_LIMITS[key]:
            raise Refused(
                f"seat {seat}: {spec[:80]!r} asks for {key} {value}; a bot on the page searches with "
                f"at most {BUDGET_LIMITS[key]}"
            )
    return chosen


def files_allowed(bots_dir: Path | None) -> str:
    """The end of a refused file option: what the page may name instead (never a path of the server)."""
    shipped = "the built-in agents with the shipped networks (ppo, cfr and champion without a path)"
    if bots_dir is None:
        return (
            f"names a file, and this server reads no bot files: the page plays {shipped}; "
            "tiengow serve --bots-dir DIR offers the files in DIR"
        )
    return (
        f"names no file of the server's bots folder: the page plays {shipped}, and the files of "
        "that folder by their path inside it, such as ppo:NAME.pt, cfr:NAME.npz or champion:prior=NAME.pt"
    )


def for_page(message: str) -> str:
    """A message of ``tiengow play``'s reader, worded for the page (no typing, no numbered list)."""
    return message.replace(" Type ? for help.", "").replace(
        "the numbered list shows every", "the legal moves below show every"
    )


def hand_seed(seed: int, hand: int, seat: int) -> int:
    """A 63-bit seed for hand ``hand`` (0: the bots themselves) and seat ``seat`` of a match."""
    return int(np.random.SeedSequence([seed, hand, seat]).generate_state(1, np.uint64)[0] >> np.uint64(1))


class WebMatch:
    """One match and its current hand. ``view()`` is what the page draws."""

    def __init__(self, config: MatchConfig, folder: Path):
        self.config, self.folder = config, folder
        self.rules = config.rules
        self.players = self.rules.players
        self.me = config.seat
        self.bots = {s: bot.make(self.rules, hand_seed(config.seed, 0, s)) for s, bot in config.bots.items()}
        self.chips = [0] * self.players
        self.hand_no = 0
        self.banker: int | None = None
        self.streak = 1
        self.records: list[dict] = []  # the finished hands' records, in order
        self.finished: list[dict] = []  # per finished hand: number, net chips, record file (or why not saved)
        self.version = 0  # counts changes, so the page knows when to redraw
        self.start_hand()

    # ------------------------------------------------------------- names
    def name(self, seat: int) -> str:
        return "you" if seat == self.me else f"seat {seat}"

    def reveal(self, seat: int) -> bool:
        """Whether the person sees this seat's face-down tiles (all of them when watching)."""
        return self.me is None or seat == self.me or self.rules.discards_face_up

    # ------------------------------------------------------------- hands
    def start_hand(self) -> None:
        self.hand_no += 1
        seed = self.config.seed
        game = Game(seed=hand_seed(seed, self.hand_no, 0), banker=self.banker, rules=self.rules, streak=self.streak)
        self.log = HandLog(game)
        self.explained: dict | None = None
        self.settlement: dict | None = None
        for s, agent in self.bots.items():
            agent.reset(hand_seed(seed, self.hand_no, s + 1))
        if self.log.auto_declared:
            self.finish_hand()
        if self.me is not None:
            self.play_bots()

    @property
    def game(self) -> Game:
        return self.log.game

    @property
    def match_over(self) -> bool:
        return self.game.is_over and self.hand_no >= self.config.hands

    def play_bots(self) -> None:
        """Play the bots' turns until the person is to act or the hand is over."""
        game = self.game
        while not game.is_over and game.to_act != self.me:
            seat = game.to_act
            while True:  # one turn: a discard of n tiles is n decisions
                self.decide(seat, explain=False)
                if game.is_over or game.to_act != seat or not game.view.owed:
                    break

    def decide(self, seat: int, explain: bool) -> None:
        """One decision of the bot at ``seat`` (with its explanation when watching)."""
        game, agent = self.game, self.bots[seat]
        observation, mask = game.observe()
        board = game if agent.uses_game else None
        explained = agent.explain(observation, mask, game=board) if explain else None
        before = game.clone()
        action = agent.act(observation, mask, game=board)
        if explain:
            self.explained = {
                "seat": seat,
                "agent": agent.name,
                **(V.explanation_view(explained, action, before) or {"kind": None, "bars": [], "more": 0}),
            }
        self.settle_if_over(self.log.step(action))

    def settle_if_over(self, events: list) -> None:
        """After a decision's events: at the end of the hand, settle and save it."""
        if any(kind == "over" for kind, _ in events):
            self.finish_hand()

    def story(self) -> list[str]:
        """The hand so far in words: each move (a discard of n tiles as one), each trick's winner
        and trick bonus."""
        game, log = self.game, self.log
        lines = [V.move_view(m, game, self.name, True)["text"] for m in log.declarations]
        for trick in log.tricks:
            lines += [V.move_view(m, game, self.name, self.reveal(m.seat))["text"] for m in trick.moves]
            if trick.winner is not None:
                lines.append(V.trick_line(trick, self.name))
                if trick.bonus:
                    lines.append(V.trick_view(trick, game, self.name, self.reveal)["bonus_text"])
        return lines

    def finish_hand(self) -> None:
        game = self.game
        self.settlement = V.settlement_view(game, self.name, self.chips)
        net = self.settlement["net"]
        self.chips = [c + n for c, n in zip(self.chips, net)]
        winner = self.settlement["last_trick_winner"]
        self.streak = self.streak + 1 if winner == game.banker else 1
        self.banker = winner
        self.finished.append({"hand": self.hand_no, "net": net, **self.save(self.log.record())})

    def save(self, record: dict) -> dict:
        """Write this hand's record and the match's ``match.jsonl``, each file whole:
        ``{"record": its file, relative to the records folder}``, or, if the disk refuses,
        ``{"record": None, "save_error": why}``. The hand counts either way (the move that
        ended it stands), and the next hand's ``match.jsonl`` holds this record again."""
        self.records.append(record)
        path = self.folder / f"hand-{self.hand_no:03d}.json"
        line = json.dumps(record)
        every = "".join(json.dumps(r) + "\n" for r in self.records)
        try:
            atomic_write(str(path), lambda f: f.write((line + "\n").encode()))
            atomic_write(str(self.folder / "match.jsonl"), lambda f: f.write(every.encode()))
        except OSError as err:
            return {
                "record": None,
                "save_error": f"cannot save the hand record {path.name} in {self.folder}: {err.strerror or err}",
            }
        return {"record": f"{self.folder.name}/{path.name}"}

    # ------------------------------------------------------------- requests
    def move(self, body: object) -> None:
        """The person's decision: ``{"option": n}`` (the n-th of the listed moves, from 0),
        ``{"play": [tiles]}``, ``{"discard": [tiles]}`` or ``{"declare": true | false}``, with
        ``"version"``, that of the view it was chosen in (the page sends it: a second click, or a
        move sent twice, then finds the game moved on and is refused)."""
        game = self.game
        if self.me is None:
            raise Refused("this match is bots only: there is no seat of yours to move", 409)
        self.check_in_play()
        if game.to_act != self.me:
            raise Refused(f"it is not your turn: seat {game.to_act} is to act", 409)
        move = dict(body) if isinstance(body, dict) else {}
        version = move.pop("version", None)
        if version is not None and type(version) is not int:
            raise Refused(f"version is the whole number of the view the move was chosen in, got {short_repr(version)}")
        if version is not None and version != self.version:
            raise Refused(
                f"this move was chosen in view {version}, and the game has moved on to view "
                f"{self.version}: look at the table again",
                409,
            )
        if len(move) != 1:
            raise Refused(
                'a move is one of {"option": n}, {"play": [tiles]}, {"discard": [tiles]} '
                'or {"declare": true|false}, with "version": the view\'s version if you like'
            )
        ((kind, value),) = move.items()
        options, _ = menu(game)
        if kind == "option":
            if type(value) is not int or not 0 <= value < len(options):
                raise Refused(f"there is no move {value!r}: choose 0 to {len(options) - 1}")
            action = options[value].action
        elif kind == "declare":
            if not isinstance(value, bool):
                raise Refused(f"declare must be true or false, got {value!r}")
            what, action = interpret("declare" if value else "decline", options, game)
            if what != "apply":
                raise Refused(str(action))
        elif kind in ("play", "discard"):
            if game.phase == "declare":
                raise Refused("You hold exactly one red pip: declare One Red Dot, or decline it, first.")
            if (
                not isinstance(value, list)
                or not value
                or len(value) > self.rules.hand_size
                or not all(isinstance(t, str) and 0 < len(t) <= TILE_NAME_LENGTH for t in value)
            ):
                raise Refused(f'{kind} needs a list of 1 to {self.rules.hand_size} tile names such as "6-6"')
            odd = [t for t in value if not re.fullmatch(r"\d-\d", t)]
            if odd:
                raise Refused(f"{odd[0]!r} is not a tile: write tiles as a-b, such as 6-6 or 5-1")
            what, detail = interpret(("d " if kind == "discard" else "p ") + " ".join(value), options, game)
            if what == "ask":
                discard, why = detail
                raise Refused(
                    f"You cannot play {' '.join(value)}: {for_page(why[0].lower() + why[1:])}. "
                    "You may discard them face down instead.",
                    400,
                    discard=discard["discard"],
                )
            if what != "apply":
                raise Refused(for_page(str(detail)))
            action = detail
        else:
            raise Refused(f"unknown move {kind!r}: use option, play, discard or declare")
        self.settle_if_over(self.log.play(action))
        self.version += 1
        if not game.is_over:
            self.play_bots()

    def step(self) -> None:
        """Watching: the acting bot makes one decision."""
        if self.me is not None:
            raise Refused("this match has a seat of yours: bots move by themselves, and you move with /api/move", 409)
        self.check_in_play()
        self.decide(self.game.to_act, explain=True)
        self.version += 1

    def check_in_play(self) -> None:
        """``Refused`` (409) once the hand is over: start the next hand, or a new match."""
        self.check_match_on()
        if self.game.is_over:
            raise Refused("the hand is over: start the next hand", 409)

    def check_match_on(self) -> None:
        if self.match_over:
            raise Refused(
                f"the match is over after {self.config.hands} hand{'s' * (self.config.hands > 1)}: start a new match",
                409,
            )

    def next_hand(self) -> None:
        if not self.game.is_over:
            raise Refused("the hand is not over yet", 409)
        self.check_match_on()
        self.start_hand()
        self.version += 1

    # ------------------------------------------------------------- the page
    def view(self) -> dict:
        """Everything the page draws, as JSON data. A pure function of the match's state."""
        game, view, log = self.game, self.game.view, self.log
        config = self.config
        trick = log.current
        best_seat = view.current_best[0] if trick is not None and game.phase == "follow" else None
        shown = trick or (log.tricks[-1] if log.tricks else None)
        seats = []
        for s in range(self.players):
            hand = mask_types(view.hands[s])
            visible = self.me is None or s == self.me
            seats.append(
                {
                    "seat": s,
                    "name": self.name(s),
                    "agent": config.bots[s].spec if s in config.bots else None,
                    "you": s == self.me,
                    "banker": s == game.banker,
                    "to_act": s == game.to_act,
                    **V.seat_counts(game, s),
                    "chips": self.chips[s] + (0 if game.is_over else int(view.bonus[s])),
                    "hand": V.groups_view(hand, game) if visible else None,
                    "down": mask_names(view.down[s]) if self.reveal(s) else None,
                }
            )
        your_turn = self.me is not None and game.to_act == self.me
        moves, unlisted = [], 0
        if your_turn:
            options, unlisted = menu(game)
            moves = [{"option": k, "label": o.label.plain, "action": o.action} for k, o in enumerate(options)]
        return {
            "mode": config.mode,
            "version": self.version,
            "rules": self.rules.name,
            "seed": config.seed,
            "hand": self.hand_no,
            "hands": config.hands,
            "me": self.me,
            "players": self.players,
            "banker": game.banker,
            "streak": view.streak,
            "phase": game.phase,
            "to_act": game.to_act,
            "trick_number": len(log.tricks) + (0 if trick or game.is_over else 1),
            "trick": V.trick_view(shown, game, self.name, self.reveal, best_seat) if shown else None,
            "seats": seats,
            "your_turn": your_turn,
            "moves": moves,
            "unlisted": unlisted,
            "size": view.size if game.phase == "follow" else None,
            "lines": self.story(),
            "explain": self.explained,
            "settlement": self.settlement,
            "match_over": self.match_over,
            "finished": list(self.finished),
            "folder": self.folder.name,
        }
