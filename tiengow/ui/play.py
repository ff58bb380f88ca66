"""``tiengow play``: a person plays one seat against bots, hand after hand, as a match.

The match (RULES.md section 7): the first banker is chosen by the dice, then the winner of
each hand's last trick (or the One Red Dot declarer) banks the next hand, with a streak count
while the same seat keeps the bank; net chips add up over the hands. Each finished hand is
saved as a hand record (section 8) in the save directory, as ``hand-001.json``, ... and as
one line of ``match.jsonl``, so that ``tiengow replay DIR/match.jsonl`` gives the same chips.
The save directory (``--save DIR``, by default a new ``runs/play/DATE-TIME``) is created when
the first hand is saved: a match left before then leaves nothing behind.

The person decides whole decisions: a play (lead or beat) or a discard of n tiles, applied as
one record action; bots decide action ids, and a bot's single-tile discards are merged into
one record action. Input is read line by line, from a terminal or a pipe; end of input, or
``q``, ends the match after saying so in one line (exit status 0). The hand in progress is
then not saved, since an unfinished record does not replay.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import secrets
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from tiengow_env import layout as L
from tiengow_env.game import Game
from tiengow_env.rules import RuleSet
from tiengow_env.tiles import NAMES, mask_types, parse_type

from . import render as R
from .tracker import HandLog, Move, Trick

DISCARD_MENU_LIMIT = 10  # more distinct discards than this: list the weakest few, type the others
LEAD_MENU_LIMIT = 40  # more leads than this (same_suit_any): list the largest and strongest

HELP = """\
How to move (one line each):
  3            choose move 3 of the numbered list
  6-6 6-3      play these tiles: lead them, or beat the current best
               (66 63 and 6-6+6-3 work too)
  d 5-1 2-2    discard these tiles face down
  declare      declare One Red Dot when you are asked (or: decline)
  m            show the table and your moves again
  more         list every move, when the list is cut short
  ?            this help
  q            leave the match (finished hands stay saved)
A follower answers with exactly as many tiles as the lead: a combination of
the same class that is strictly stronger than the current best, or any tiles
face down. A trick's winner takes as many columns as the lead had tiles and
leads next; the winner of the last trick settles with everyone."""


class Stop(Exception):
    """The person left (``q``) or the input ended: the match stops after the finished hands."""


@dataclass
class Option:
    """A numbered move: its words and the record action it applies."""

    label: Text
    action: dict


@dataclass
class MatchOptions:
    vs: str
    seat: int
    rules: RuleSet
    hands: int
    seed: int
    save: Path | None
    """the directory for the records; None: a new runs/play/DATE-TIME, made at the first save"""


class AsciiOut:
    """Standard output for a terminal that cannot show Unicode (an ASCII locale): the few
    symbols used get ASCII stand-ins, and anything else prints as ?, never an error."""

    encoding = "ascii"
    STAND_INS = str.maketrans({"·": "|", "★": "*", "─": "-", "…": "..."})

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        text = text.replace(" (天九)", "").translate(self.STAND_INS)
        return self.stream.write(text.encode("ascii", "replace").decode("ascii"))

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()


def make_console() -> Console:
    """The console on standard output (through ``AsciiOut`` where stdout cannot encode Unicode)."""
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
    file = None if encoding.startswith("utf") else AsciiOut(sys.stdout)
    return Console(file=file, highlight=False, markup=False, emoji=False)


def make_reader(console: Console) -> Callable[[str], str]:
    """Read one line after a prompt; EOFError at the end of input. From a pipe the line is echoed,
    so that a transcript shows what was typed."""
    interactive = sys.stdin.isatty()

    def read_line(prompt: str) -> str:
        if interactive:  # markup off: a prompt's "[y/N]" is text, not a style tag
            return console.input(prompt, markup=False)
        console.print(prompt, end="")
        line = sys.stdin.readline()
        if not line:
            console.print()
            raise EOFError
        line = line.rstrip("\r\n")
        console.print(line)
        return line

    return read_line


# ----------------------------------------------------------------------------- reading moves
def parse_tiles(words: list[str]) -> list[int]:
    """Tile types of typed tiles: ``6-6``, ``3-6``, ``66``; ValueError naming a bad word."""
    types = []
    for word in words:
        name = f"{word[0]}-{word[1]}" if len(word) == 2 and word.isdigit() else word
        try:
            types.append(parse_type(name))
        except ValueError:
            raise ValueError(f"{word!r} is not a tile: write tiles as a-b, such as 6-6 or 5-1") from None
    return types


def split_words(text: str) -> list[str]:
    return text.replace("+", " ").replace(",", " ").split()


def menu(game: Game, full: bool = False) -> tuple[list[Option], int]:
    """The numbered whole decisions of the seat to act (plays, then discards, or declare and
    decline), and how many more legal decisions were left out of the list to keep it short
    (none with ``full``: every decision is listed)."""
    seat, combos = game.to_act, game.combos
    C = combos.num_combos
    legal = game.legal_actions()
    if game.phase == "declare":
        return [
            Option(
                Text("declare One Red Dot (the hand ends, you win it with every column)"),
                {"seat": seat, "declare": True},
            ),
            Option(Text("decline, and play the hand"), {"seat": seat, "declare": False}),
        ], 0
    plays = sorted(
        (a for a in legal if a < C),
        key=lambda a: (
            -len(combos.combos[a].types),
            combos.table[a, L.T_CLASS],
            -combos.combos[a].strength,
            combos.combos[a].types,
        ),
    )
    lead_limit, discard_limit = (None, None) if full else (LEAD_MENU_LIMIT, DISCARD_MENU_LIMIT)
    unlisted = max(0, len(plays) - LEAD_MENU_LIMIT) if lead_limit else 0
    plays = plays[:lead_limit]
    options = []
    for a in plays:
        c = combos.combos[a]
        label = Text("lead " if game.phase == "lead" else "beat with ")
        label.append_text(R.combo_text(c))
        options.append(Option(label, {"seat": seat, "play": [NAMES[t] for t in c.types]}))
    if any(L.is_discard(a, C) for a in legal):
        view = game.view
        choices = discard_choices(mask_types(view.hands[seat]), view.size)
        unlisted += max(0, len(choices) - DISCARD_MENU_LIMIT) if discard_limit else 0
        for types in choices[:discard_limit]:
            label = Text("discard ")
            label.append_text(R.tiles_text(types))
            label.append(" face down")
            options.append(Option(label, {"seat": seat, "discard": [NAMES[t] for t in types]}))
    return options, unlisted


def discard_choices(hand: list[int], size: int) -> list[tuple[int, ...]]:
    """Distinct discards of ``size`` tiles, the ones with the lowest tiles first."""
    choices = set(itertools.combinations(sorted(hand), size))
    return sorted(choices, key=lambda types: sorted(types, reverse=True), reverse=True)


def interpret(text: str, options: list[Option], game: Game) -> tuple[str, object]:
    """What a typed line means: ``("apply", action)``, ``("ask", (action, why))`` for tiles that
    cannot be played but could be discarded, ``("help" | "moves" | "more" | "quit", None)``, or
    ``("error", message)``."""
    seat = game.to_act
    words = split_words(text.strip().lower())
    if not words:
        return "error", "Type a move number, tiles such as 6-6 6-3, or ? for help."
    head = words[0]
    if head in ("?", "h", "help"):
        return "help", None
    if head in ("q", "quit", "exit"):
        return "quit", None
    if head in ("m", "moves", "l", "list"):
        return "moves", None
    if head in ("more", "all"):
        return "more", None
    if len(words) == 1 and head.isdigit():
        n = int(head)
        if 1 <= n <= len(options):
            return "apply", options[n - 1].action
        return "error", f"There is no move {n}: choose 1 to {len(options)}, or type tiles."
    if game.phase == "declare":
        if head in ("declare", "y", "yes"):
            return "apply", {"seat": seat, "declare": True}
        if head in ("decline", "n", "no"):
            return "apply", {"seat": seat, "declare": False}
        return "error", "You hold One Red Dot: type declare or decline (or 1 or 2)."
    kind = "play"
    if head in ("d", "discard", "p", "play", "lead", "beat"):
        kind = "discard" if head in ("d", "discard") else "play"
        words = words[1:]
        if not words:
            return "error", f"Which tiles? For example: {head} 5-1"
    if head in ("declare", "decline"):
        return "error", "There is no One Red Dot to declare now."
    if not any(ch.isdigit() for ch in " ".join(words)):
        return "error", (
            f"I do not understand {text.strip()!r}: type a move number, tiles such as 6-6 6-3, or ? for help."
        )
    try:
        types = parse_tiles(words)
    except ValueError as err:
        return "error", f"{err}. Type ? for help."
    hand = mask_types(game.view.hands[seat])
    missing = [t for t in set(types) if types.count(t) > hand.count(t)]
    if missing:
        held = "; ".join(
            f"you hold only {hand.count(t)} x {NAMES[t]}" if t in hand else f"you do not hold {NAMES[t]}"
            for t in sorted(missing)
        )
        return "error", f"{held[0].upper()}{held[1:]}. Your tiles: {R.names(hand)}."
    size = game.view.size
    if game.phase == "follow" and len(types) != size:  # before "is not a combination": the count is what is wrong
        return "error", f"This trick needs exactly {size} tile{'s' * (size > 1)}, got {len(types)}."
    action = {"seat": seat, kind: [NAMES[t] for t in sorted(types)]}
    why = probe(game, action)
    if why is None:
        return "apply", action
    if kind == "play" and game.phase == "follow" and game.combos.find(types) >= 0:
        mine, best = game.combos.combos[game.combos.find(types)], game.combos.combos[game.view.current_best[1]]
        if (mine.cls, mine.strength) == (best.cls, best.strength):
            why += " (a tie never beats)"
    if (
        kind == "play"
        and game.phase == "follow"
        and len(types) == size
        and probe(game, {"seat": seat, "discard": action["play"]}) is None
    ):
        return "ask", ({"seat": seat, "discard": action["play"]}, why)
    return "error", why + "."


def probe(game: Game, action: dict) -> str | None:
    """Why ``action`` cannot be applied now (None if it can), in words for the person."""
    trial = game.clone()
    try:
        trial.play(action)
    except ValueError as err:
        return _for_you(str(err), game)
    return None


def _for_you(message: str, game: Game) -> str:
    """The core's refusal, worded for the person at the acting seat."""
    seat = game.to_act
    message = message.replace(f"seat {seat} can beat and must", "you can beat, and these rules say you must")
    message = message.replace(
        "the leader must play a combination, not discard", "you lead, so you cannot discard: play a combination"
    )
    message = message.replace("must answer with exactly", "this trick needs exactly")
    message = message.replace(f"seat {seat} ", "you ")
    for cls in {c.cls for c in game.combos.combos}:  # the core names classes by their ids: words for people
        title = R.CLASS_TITLES.get(cls) or "{1}-tile {0} set".format(*cls.split("_"))  # same_suit_any: civil_3
        message = re.sub(rf"\b{cls}\b", title, message)
    if " is not a combination" in message:
        message += f" (the numbered list shows every {'lead' if game.phase == 'lead' else 'move'} you have)"
    return message[0].upper() + message[1:]


# ----------------------------------------------------------------------------- the match
class Match:
    """One match of ``options.hands`` hands; ``run()`` plays it and returns the exit status."""

    def __init__(self, options: MatchOptions, console: Console, read_line: Callable[[str], str]):
        from tiengow.agents import make_agent  # agents are users of the core; import them only to play

        self.options, self.console, self.read_line = options, console, read_line
        self.rules = options.rules
        self.players = self.rules.players
        self.me = options.seat
        try:
            self.bots = {
                s: make_agent(options.vs, self.rules, seed=_seed(options.seed, 0, s))
                for s in range(self.players)
                if s != self.me
            }
        except (OSError, ImportError) as err:
            raise ValueError(f"cannot load agent {options.vs!r}: {err}") from None
        self.chips = [0] * self.players
        self.saved: list[Path] = []
        self.save_dir: Path | None = options.save
        self.hand_no = 0

    def name(self, seat: int) -> str:
        return "you" if seat == self.me else f"seat {seat}"

    def out(self, *things, soft_wrap: bool = False) -> None:
        self.console.print(*things, soft_wrap=soft_wrap)

    # ------------------------------------------------------------- hands
    def run(self) -> int:
        o = self.options
        changes = ", ".join(f"{k}={json.dumps(v)}" for k, v in self.rules.diff().items())
        named = self.rules.name + (f" ({changes})" if "custom" in self.rules.name else "")
        self.out(
            Text(f"Tien Gow (天九), {named} rules: you are seat {self.me}, against {o.vs}", "bold"), soft_wrap=True
        )
        where = f"{o.save}/" if o.save is not None else "a new folder under runs/play/"
        self.out(
            f"{o.hands} hand{'s' * (o.hands > 1)}, seed {o.seed}; finished hands are saved in {where}; type ? for help"
        )
        self.warn_if_trained_elsewhere()
        banker, streak = None, 1
        try:
            for self.hand_no in range(1, o.hands + 1):
                game = Game(seed=_seed(o.seed, self.hand_no, 0), banker=banker, rules=self.rules, streak=streak)
                log = self.play_hand(game)
                w = game.result()["last_trick_winner"]
                streak = streak + 1 if w == game.banker else 1
                banker = w
                self.save(log)
        except Stop as stop:
            done = self.hand_no - 1
            if not done:
                self.out(f"{stop} The match stopped before the end of its first hand.")
                return 0
            self.out(
                Text(f"{stop} The match stopped after {done} hand{'s' * (done != 1)}. Chips: ")
                + R.chips_text(self.chips, self.name),
                soft_wrap=True,
            )
            return 0
        self.out(Rule("Match over"))
        self.out(
            Text(f"Final chips after {o.hands} hand{'s' * (o.hands > 1)}: ") + R.chips_text(self.chips, self.name),
            soft_wrap=True,
        )
        place = sum(c > self.chips[self.me] for c in self.chips)
        tied = sum(c == self.chips[self.me] for c in self.chips) > 1
        self.out(f"You finish {('first', 'second', 'third', 'fourth')[place]}{' (tied)' * tied} of {self.players}.")
        self.out(f"Records: {self.save_dir}/hand-001.json to hand-{o.hands:03d}.json, and all in match.jsonl:")
        self.out(f"  tiengow replay {self.save_dir}/match.jsonl    tiengow show {self.save_dir}/hand-001.json")
        return 0

    def warn_if_trained_elsewhere(self) -> None:
        """One line when the bots were trained on other rules than the table's (a checkpoint of
        the same shapes loads under another preset, but it learnt another game)."""
        agent = next(iter(self.bots.values()))
        trained = getattr(agent, "trained_rules", None)
        if trained is None or trained.switches() == self.rules.switches():
            return
        differ = [k for k, v in self.rules.switches().items() if trained.switches().get(k) != v]
        self.out(
            Text(
                f"Note: {self.options.vs} was trained on {trained.name} rules; at this table "
                f"{', '.join(differ)} differ, so expect it to play below its strength.",
                "yellow",
            )
        )

    def play_hand(self, game: Game) -> HandLog:
        o = self.options
        log = HandLog(game)
        streak = game.view.streak
        self.out(Rule(f"Hand {self.hand_no} of {o.hands}"))
        banker = "you are" if game.banker == self.me else f"seat {game.banker} is"
        self.out(
            Text(f"{banker[0].upper()}{banker[1:]} the banker" + (f" (streak {streak})" if streak > 1 else "") + ".")
        )
        self.out(
            Text("Your tiles: ")
            + R.hand_text(mask_types(game.view.hands[self.me]), game.combos, width=self.console.width - 12)
        )
        for s, agent in self.bots.items():
            agent.reset(_seed(o.seed, self.hand_no, s + 1))
        if log.auto_declared:
            self.report(log, [("move", log.declarations[0]), ("over", None)])
        while not game.is_over:
            seat = game.to_act
            if seat == self.me:
                events = self.person_turn(game, log)
            else:
                events = self.bot_turn(game, log, seat)
            self.report(log, events)
        return log

    def bot_turn(self, game: Game, log: HandLog, seat: int) -> list:
        agent = self.bots[seat]
        events: list = []
        while True:  # one turn: a discard of n tiles is n actions
            observation, mask = game.observe()
            events += log.step(agent.act(observation, mask, game=game if agent.uses_game else None))
            if game.is_over or game.to_act != seat or not game.view.owed:
                return events

    # ------------------------------------------------------------- the person
    def person_turn(self, game: Game, log: HandLog) -> list:
        options, unlisted = menu(game)
        self.screen(game, log, options, unlisted)
        while True:
            try:
                line = self.read_line("Your move> ")
            except EOFError:
                raise Stop("End of input.") from None
            what, detail = interpret(line, options, game)
            if what == "apply":
                return log.play(detail)
            if what == "help":
                self.out(HELP)
            elif what == "moves":
                self.screen(game, log, options, unlisted)
            elif what == "more":
                if not unlisted:
                    self.out("Every move is listed already.")
                    continue
                options, unlisted = menu(game, full=True)
                self.screen(game, log, options, unlisted)
            elif what == "quit":
                raise Stop("You left the match.")
            elif what == "ask":
                action, why = detail
                self.out(f"You cannot play {' '.join(action['discard'])}: {why[0].lower()}{why[1:]}.")
                try:
                    answer = self.read_line(f"Discard {' '.join(action['discard'])} face down instead? [y/N] ")
                except EOFError:
                    raise Stop("End of input.") from None
                if answer.strip().lower() in ("y", "yes"):
                    return log.play(action)
                self.out("Not discarded. Choose again.")
            else:
                self.out(Text(str(detail), "yellow"))

    def screen(self, game: Game, log: HandLog, options: list[Option], unlisted: int = 0) -> None:
        """The table, the person's hand and the numbered moves."""
        view, combos = game.view, game.combos
        best = view.current_best  # (seat, combination id) while a trick is in play
        trick = log.current
        number = len(log.tricks) + (0 if trick else 1)
        self.out(Rule(f"Hand {self.hand_no} · trick {number}", style="dim"))
        rows: list = [("seat", "tiles", "columns", "face down", "match chips", "this trick")]
        played = {m.seat: m for m in trick.moves} if trick else {}
        for s in range(self.players):
            who = self.name(s) + (" (banker)" if s == game.banker else "")
            move = played.get(s)
            doing = Text("")
            if move is not None:
                doing = R.move_text(
                    move.kind, move.types, "", combos, title=False, reveal=s == self.me or game.rules.discards_face_up
                )
                if move.kind in ("lead", "beat") and best is not None and s == best[0]:
                    doing.append(" (best)", "bold")
            elif s == game.to_act:
                doing = Text("to play", "bold")
            rows.append(
                (
                    who,
                    str(len(game.hand(s))),
                    str(int(view.columns[s])),
                    str(len(mask_types(view.down[s]))),
                    f"{self.chips[s] + int(view.bonus[s]):+d}",
                    doing,
                )
            )
        self.out(R.grid(rows, right=(1, 2, 3, 4)))
        if best is not None:  # the follow phase
            size = view.size
            leader = self.name(view.leader).capitalize()
            line = Text(f"{leader} led {size} tile{'s' * (size > 1)}. Best so far: ")
            line.append_text(R.combo_text(combos.combos[best[1]]))
            line.append(f", {self.name(best[0])}.")
            self.out(line)
        elif game.phase == "lead":
            self.out("You lead: play any combination of your tiles.")
        else:
            self.out("Your tiles have exactly one red pip: you may declare One Red Dot and win the hand at once.")
        self.out(
            Text("Your hand: ") + R.hand_text(mask_types(view.hands[self.me]), combos, width=self.console.width - 11)
        )
        self.out("Moves:")
        for n, option in enumerate(options, 1):
            self.out(Text(f" {n:3d}  ") + option.label)
        if unlisted:
            self.out(f"  ... and {unlisted} more: type more to list them all, or type their tiles")
        hint = ["a number"]
        if options and "play" in options[0].action:
            hint.append("tiles such as " + " ".join(options[0].action["play"]))
        if game.phase == "follow":
            hint.append("d and tiles to discard")
        self.out(Text(f"(type {', '.join(hint)}; ? for help)", "dim"))

    # ------------------------------------------------------------- what happened
    def report(self, log: HandLog, events: list) -> None:
        game = log.game
        for kind, detail in events:
            if kind == "move":
                move: Move = detail
                reveal = move.seat == self.me or game.rules.discards_face_up
                self.out(
                    Text("  ")
                    + R.move_text(
                        move.kind,
                        move.types,
                        self.name(move.seat),
                        game.combos,
                        you=move.seat == self.me,
                        reveal=reveal,
                    )
                )
            elif kind == "trick":
                self.report_trick(game, detail)
            elif kind == "over":
                self.report_hand(game)

    def report_trick(self, game: Game, trick: Trick) -> None:
        line = Text(
            f"Trick {trick.number}: {self.name(trick.winner)} "
            f"{'win' if trick.winner == self.me else 'wins'} {trick.size} column{'s' * (trick.size > 1)} with ",
            "bold",
        )
        line.append_text(R.combo_text(trick.winning))
        self.out(line)
        if trick.bonus:
            self.out(R.bonus_text(trick.winning, trick.bonus, game, self.name))

    def report_hand(self, game: Game) -> None:
        result = game.result()
        view, _ = R.settlement_view(game, self.name)
        self.out(
            Text(f"Hand {self.hand_no} is over. Columns: ", "bold")
            + Text(" · ".join(f"{self.name(s)} {c}" for s, c in enumerate(result["columns"])))
        )
        for part in view:
            self.out(part, soft_wrap=True)
        if any(result["trick_bonus"]):
            self.out(Text("Trick bonuses: ") + R.chips_text(result["trick_bonus"], self.name))
        self.out(Text("Net this hand: ") + R.chips_text(result["net"], self.name))
        for s in range(self.players):
            self.chips[s] += result["net"][s]
        self.out(
            Text(f"Chips after {self.hand_no} hand{'s' * (self.hand_no > 1)}: ") + R.chips_text(self.chips, self.name),
            soft_wrap=True,
        )
        w = result["last_trick_winner"]
        if self.hand_no < self.options.hands:
            self.out(f"{'You bank' if w == self.me else f'Seat {w} banks'} the next hand.")

    def save(self, log: HandLog) -> None:
        from tiengow.training.runs import run_dir

        if self.save_dir is None:
            self.save_dir = Path(run_dir("play"))
        self.save_dir.mkdir(parents=True, exist_ok=True)
        record = log.record()
        line = json.dumps(record)
        path = self.save_dir / f"hand-{self.hand_no:03d}.json"
        path.write_text(line + "\n", encoding="utf-8")
        with open(self.save_dir / "match.jsonl", "a", encoding="utf-8") as f:
            f.write(line + "\n")
        self.saved.append(path)
        self.out(Text(f"Saved {path}", "dim"))


def _seed(seed: int, hand: int, seat: int) -> int:
    """A 63-bit seed for hand ``hand`` (0: the bots themselves) and seat ``seat``."""
    return int(np.random.SeedSequence([seed, hand, seat]).generate_state(1, np.uint64)[0] >> np.uint64(1))


# ----------------------------------------------------------------------------- the command
def save_directory(text: str | None) -> Path | None:
    """The directory for the hand records, checked but not yet made: new or empty (None: the
    default, a new runs/play/DATE-TIME made at the first save)."""
    from tiengow.training.runs import check_output_path

    if text is None:
        check_output_path(os.path.join("runs", "play", "match.jsonl"), "the default save folder")
        return None
    check_output_path(text, "--save", folder_only=True, empty=True)
    return Path(text)


def cmd_play(args) -> int:
    """``tiengow play``; ValueError with a message for people on bad arguments."""
    from tiengow.options import rules_option

    rules = rules_option(args.rules)
    if not 0 <= args.seat < rules.players:
        raise ValueError(f"--seat must be 0..{rules.players - 1} for {rules.players} players, got {args.seat}")
    if args.hands < 1:
        raise ValueError(f"--hands must be at least 1, got {args.hands}")
    from tiengow.agents import make_agent

    try:
        make_agent(args.vs, rules)  # refuse a bad agent spec before anything is written
    except (OSError, ImportError) as err:
        raise ValueError(f"cannot load agent {args.vs!r}: {err}") from None
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    options = MatchOptions(
        vs=args.vs, seat=args.seat, rules=rules, hands=args.hands, seed=seed, save=save_directory(args.save)
    )
    console = make_console()
    return Match(options, console, make_reader(console)).run()
