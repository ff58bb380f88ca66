"""The ``Agent`` protocol and the registry that builds agents from spec strings.

An agent acts for whichever seat is to act. It sees that seat's observation vector and legal
action mask (``tiengow_env.observation``), and, if it searches, the ``Game`` itself through
``act(..., game=game)``; a searching agent must only use what the acting seat may know
(``tiengow_env.search`` samples the hidden tiles for it).

Specs, resolved in this order (``tiengow agents`` lists them, ``tiengow agents SPEC`` shows one):

1. a built-in name (``BUILTIN``), optionally with options: ``NAME[:VALUE][:KEY=VALUE]...``,
   parsed onto the bot's frozen config dataclass by ``agents/spec.py`` (``pimc:64:epsilon=0.5``,
   ``cfr:PATH``, ``champion:locate=0``);
2. the name of an installed plugin: an entry point in the group ``tiengow.agents`` (in a
   package's pyproject: ``[project.entry-points."tiengow.agents"] mybot = "mypkg.bots:make"``);
3. ``MODULE:FACTORY``: any importable module (a dotted path, looked up on ``sys.path``, the
   current folder last) and a callable in it. A built-in or plugin name never reaches this
   step, so a module named like one (``random``) must be given by a longer path.

A plugin factory is called as ``FACTORY(rules, seed)`` (a ``tiengow_env.rules.RuleSet`` and an
int) and returns any object with ``act(observation, mask, game=None) -> action id`` and
``reset(seed)``: duck typed, it need not import this project. It receives a copy of the game
(it may search on it), and every action it returns is checked: an illegal one is an error
naming the agent.

A built-in is a ``Bot`` (its kind, one line, its config class and its factory ``(config,
rules, seed) -> Agent``) named in ``BUILTIN`` by where it lives, imported only when used.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata

import numpy as np

from tiengow_env.checks import check_seed, legal_list
from tiengow_env.combos import table_for
from tiengow_env.game import Game
from tiengow_env.observation import ObservationLayout
from tiengow_env.rules import RuleSet

from .spec import parse_spec, suggest, usage

KINDS = ("heuristic", "search", "learned", "plugin")
ENTRY_POINT_GROUP = "tiengow.agents"


class Agent:
    """Chooses legal actions. Subclasses override ``act`` (and ``act_batch`` when they can do
    better than one row at a time)."""

    name = "agent"
    uses_game = False  # True for agents that need ``game=`` (search)

    def __init__(self, rules: RuleSet, seed: int = 0):
        self.rules = rules
        self.rng = np.random.default_rng(check_seed(seed))

    def reset(self, seed: int) -> None:
        """Start a new hand; ``seed`` (a non-negative integer) makes any randomness of the agent
        reproducible."""
        self.rng = np.random.default_rng(check_seed(seed))

    def act(self, observation: np.ndarray, mask: np.ndarray, game: Game | None = None) -> int:
        raise NotImplementedError

    def explain(self, observation: np.ndarray, mask: np.ndarray, game: Game | None = None) -> dict | None:
        """The agent's view of its next choice, for people watching it (``tiengow serve``):
        ``{"kind": "probabilities" | "values", "actions": [legal action ids], "values": [floats]}``,
        a policy's probabilities or a search's value per action; None (the default) when the
        agent has no such view. It must leave the agent as it was: ``act`` after ``explain``
        chooses what it would have chosen without it."""
        return None

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One action per row of ``(N, D)`` observations and ``(N, A)`` masks."""
        return np.array([self.act(o, m) for o, m in zip(observations, masks)], dtype=np.int64)

    def check_batch(self, observations: object, masks: object) -> tuple[np.ndarray, np.ndarray]:
        """``(N, D)`` observations and ``(N, A)`` masks of this agent's rules as arrays, once each
        mask row has a legal action; ValueError saying what was expected otherwise. For agents
        whose compiled or matrix code would read any array it is given."""
        size, actions = _shapes(self.rules)
        observations, masks = np.asarray(observations), np.asarray(masks)
        if observations.ndim != 2 or observations.shape[1] != size or observations.dtype.kind not in "fiu":
            raise ValueError(
                f"{self.name}: observations are numbers of shape (N, {size}) under rules "
                f"{self.rules.name}, got {observations.dtype} {observations.shape}"
            )
        if masks.shape != (len(observations), actions) or masks.dtype.kind not in "biu":
            raise ValueError(
                f"{self.name}: masks are 0/1 of shape ({len(observations)}, {actions}) under rules "
                f"{self.rules.name}, got {masks.dtype} {masks.shape}"
            )
        empty = np.flatnonzero(~masks.any(axis=1))
        if len(empty):
            raise ValueError(f"{self.name}: mask row {empty[0]} has no legal action")
        return observations, masks


@functools.lru_cache(maxsize=32)
def _shapes(rules: RuleSet) -> tuple[int, int]:
    """The observation size and the number of actions under ``rules``."""
    return ObservationLayout(rules.players, rules.hand_size).size, table_for(rules).num_actions


# ============================================================================ registry
@dataclass(frozen=True)
class Bot:
    """A built-in bot: how it is listed, its options and its factory."""

    kind: str
    """one of KINDS"""
    description: str
    """one line for tiengow agents"""
    config: type | None
    """its frozen config dataclass (agents/spec.py), None when it takes no options"""
    build: Callable[[object, RuleSet, int], Agent]
    """the factory: (config, rules, seed) -> Agent"""


BUILTIN: dict[str, str] = {  # spec name -> the Bot, as module:attribute (resolved when first used)
    "random": ".baselines:RANDOM",
    "greedy": ".baselines:GREEDY",
    "expert": ".baselines:EXPERT",
    "pimc": ".search:PIMC",
    "ismcts": ".search:ISMCTS",
    "search": ".search:SEARCH",
    "champion": ".search:CHAMPION",
    "ppo": ".ppo:PPO",
    "cfr": ".cfr:CFR",
}


@functools.cache
def builtin(name: str) -> Bot:
    """The built-in bot ``name`` (a key of ``BUILTIN``), its module imported now."""
    module, _, attribute = BUILTIN[name].partition(":")
    return getattr(importlib.import_module(module, __package__), attribute)


def build_builtin(name: str, config: object, rules: RuleSet, seed: int, spec: str) -> Agent:
    """The built-in ``name`` made from its parsed ``config``, called ``spec`` in reports (what
    ``make_agent`` does after parsing; ``tiengow serve`` calls it with file options it resolved)."""
    agent = builtin(name).build(config, rules, seed)
    agent.name, agent.config = spec, config
    return agent


def make_agent(spec: str, rules: RuleSet | str = "standard", seed: int = 0) -> Agent:
    """Build an agent from a spec string such as ``expert``, ``pimc:64`` or ``mybots:make``."""
    rules = RuleSet.from_spec(rules)
    seed = check_seed(seed)  # before a factory's work (a checkpoint to read)
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"an agent spec is a string such as 'expert' or 'pimc:64', got {spec!r}")
    name, sep, argument = spec.partition(":")
    if name in BUILTIN:
        return build_builtin(name, parse_spec(name, argument if sep else None, builtin(name).config), rules, seed, spec)
    entry = _entry_points().get(name)
    if entry is not None:
        if sep:
            raise ValueError(f"agent {name!r} (plugin {entry.value}) takes no argument, got {spec}")
        return PluginAgent(spec, _call_factory(spec, _load_entry_point(spec, entry), rules, seed), rules, seed)
    if sep and _is_dotted(name):
        return PluginAgent(spec, _call_factory(spec, _import_factory(spec, name, argument), rules, seed), rules, seed)
    known = sorted(BUILTIN) + sorted(_entry_points())
    raise ValueError(
        f"unknown agent {spec[:80]!r}{suggest(name, known)}; agents are: {', '.join(known)}, or "
        "MODULE:FACTORY for your own (tiengow agents lists them)"
    )


def agent_catalogue() -> list[dict[str, object]]:
    """Every spec ``tiengow agents`` lists: {name, kind, usage, description, options}, built-ins
    first, then the installed plugins (entry points), then the form of a plugin given by module.
    ``options`` are ``agents.spec.option_rows``: {key, type, default, range, doc}."""
    from .spec import option_rows

    rows = []
    for name in BUILTIN:
        bot = builtin(name)
        rows.append(
            {
                "name": name,
                "kind": bot.kind,
                "usage": usage(name, bot.config),
                "description": bot.description,
                "options": option_rows(bot.config),
            }
        )
    for name, entry in sorted(_entry_points().items()):
        if name in BUILTIN:
            description = f"entry point {entry.value}, hidden by the built-in {name!r}"
        else:
            try:
                doc = (_load_entry_point(name, entry).__doc__ or "").strip()
                description = doc.splitlines()[0] if doc else f"entry point {entry.value}"
            except ValueError as err:
                description = f"cannot be loaded: {err}"
        rows.append({"name": name, "kind": "plugin", "usage": name, "description": description, "options": []})
    rows.append(
        {
            "name": "MODULE:FACTORY",
            "kind": "plugin",
            "usage": "MODULE:FACTORY",
            "options": [],
            "description": "your own bot: FACTORY(rules, seed) returns an object with act() and reset()",
        }
    )
    return rows


def describe_agent(spec: str, rules: RuleSet | str = "standard") -> dict[str, object]:
    """``spec`` resolved (built, so that a missing file or a plugin's failure shows): {spec,
    name, kind, description, config: {key: value}} for ``tiengow agents SPEC``. ValueError, one
    line, when it does not resolve."""
    agent = make_agent(spec, rules)
    name = spec.partition(":")[0]
    config = getattr(agent, "config", None)
    if name in BUILTIN:
        bot = builtin(name)
        kind, description = bot.kind, bot.description
    elif isinstance(agent, PluginAgent):
        entry = _entry_points().get(name)
        kind = "plugin"
        description = f"entry point {entry.value}" if entry is not None else f"{type(agent.bot).__name__} from {spec}"
    else:
        kind, description = "plugin", spec
    return {
        "spec": spec,
        "name": name,
        "kind": kind,
        "description": description,
        "config": None if config is None else dataclasses.asdict(config),
    }


# ============================================================================ plugins
class PluginAgent(Agent):
    """A third-party bot (module doc): gets a copy of the game and read-only views of the
    observation and mask, and its actions are checked. Every error names the agent; the error
    it wraps is chained (``TIENGOW_DEBUG=1`` makes the CLI print that traceback)."""

    uses_game = True

    def __init__(self, spec: str, bot: object, rules: RuleSet, seed: int = 0):
        super().__init__(rules, seed)
        for method, signature, call in (
            ("act", "act(observation, mask, game=None)", ((None, None), {"game": None})),
            ("reset", "reset(seed)", ((0,), {})),
        ):
            function = getattr(bot, method, None)
            if not callable(function):
                raise ValueError(
                    f"agent {spec}: its factory returned {type(bot).__name__!r}, which has no {signature} method"
                )
            _check_signature(spec, function, f"{type(bot).__name__}.{method}", signature, *call)
        self.name = spec
        self.bot = bot

    def reset(self, seed: int) -> None:
        super().reset(seed)
        try:
            self.bot.reset(seed)
        except (Exception, SystemExit) as err:  # plugin code: sys.exit there must not end the run
            raise ValueError(f"agent {self.name}: reset({seed}) raised {_brief(err)}") from err

    def act(self, observation: np.ndarray, mask: np.ndarray, game: Game | None = None) -> int:
        try:
            action = self.bot.act(
                _read_only(observation), _read_only(mask), game=None if game is None else game.clone()
            )
        except ValueError as err:
            if "read-only" not in str(err):
                raise ValueError(f"agent {self.name}: act raised {_brief(err)}") from err
            raise ValueError(
                f"agent {self.name}: act() wrote into the observation or mask it was given, which "
                f"are read-only ({_where(err)}); copy them first (mask.copy())"
            ) from err
        except (Exception, SystemExit) as err:  # plugin code: sys.exit there must not end the run
            raise ValueError(f"agent {self.name}: act raised {_brief(err)}") from err
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise ValueError(
                f"agent {self.name}: act() must return an int action id, got "
                f"{type(action).__name__} {repr(action)[:40]}"
            )
        if not 0 <= action < len(mask) or not mask[action]:
            legal = legal_list(np.flatnonzero(mask), None if game is None else game.action_name)
            raise ValueError(
                f"agent {self.name} chose {repr(action)[:40]}, which is not a legal action here; legal: {legal}"
            )
        return int(action)


def _read_only(array: np.ndarray) -> np.ndarray:
    """A view of ``array`` that cannot be written: a bot writing into its mask would change the
    caller's own (the arena reuses it), so plugins get these."""
    view = array.view()
    view.flags.writeable = False
    return view


def _check_signature(spec: str, function: Callable, name: str, expected: str, args: tuple, kwargs: dict) -> None:
    """ValueError pointing at the plugin's own file unless ``function`` can be called as
    ``expected`` says (with ``args`` and ``kwargs``)."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # a builtin or C callable without a signature: nothing to check
        return
    try:
        signature.bind(*args, **kwargs)
    except TypeError as err:
        raise ValueError(
            f"agent {spec}: {name}{signature} ({_source_of(function)}) cannot be called as {expected}: {err}"
        ) from None


def _source_of(function: Callable) -> str:
    """``file:line`` where ``function`` (or a class) is defined, or its module's name."""
    target = inspect.unwrap(function)
    try:
        _, line = inspect.getsourcelines(target)
        return f"{inspect.getsourcefile(target)}:{line}"
    except (OSError, TypeError):
        return getattr(target, "__module__", None) or "?"


def _entry_points() -> dict[str, metadata.EntryPoint]:
    """The installed plugins: entry points of the group ``tiengow.agents`` by name."""
    return {entry.name: entry for entry in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _is_dotted(path: str) -> bool:
    return all(part.isidentifier() for part in path.split("."))


def _brief(err: BaseException) -> str:
    """``Type: message (file:line)`` of an exception raised in plugin code, on one line."""
    message = str(err).strip().splitlines()
    text = f"{type(err).__name__}: {message[0] if message else ''}".rstrip(": ")
    return text + (f" ({_where(err)})" if err.__traceback__ else "")


def _where(err: BaseException) -> str:
    """``file:line`` of the innermost frame of ``err``'s traceback outside numpy (the line of
    plugin code that raised it, not numpy's internals)."""
    frames = traceback.extract_tb(err.__traceback__)
    outside = [f for f in frames if f"{os.sep}numpy{os.sep}" not in f.filename] or frames
    return f"{os.path.basename(outside[-1].filename)}:{outside[-1].lineno}" if outside else "?"


def _import_factory(spec: str, module_name: str, attribute: str) -> Callable:
    """``module_name`` imported (the current folder is searched last) and its ``attribute``."""
    if not attribute or not _is_dotted(attribute):
        raise ValueError(f"agent {spec!r}: expected MODULE:FACTORY, such as mybots:make (FACTORY a name in MODULE)")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())  # as `python -m` would; spawned workers inherit sys.path
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name is not None and (module_name == err.name or module_name.startswith(err.name + ".")):
            raise ValueError(
                f"unknown agent {spec!r}: it is not a built-in agent, and there is no module "
                f"{err.name!r} to import (searched sys.path and {os.getcwd()}); tiengow agents "
                "lists the agents"
            ) from None
        raise ValueError(f"agent {spec}: importing {module_name} raised {_brief(err)}") from err
    except (Exception, SystemExit) as err:  # plugin code: sys.exit there must not end the run
        raise ValueError(f"agent {spec}: importing {module_name} raised {_brief(err)}") from err
    factory = module
    for part in attribute.split("."):
        if not hasattr(factory, part):
            raise ValueError(
                f"agent {spec}: module {module_name} ({getattr(module, '__file__', '?')}) has no "
                f"attribute {attribute!r}"
            )
        factory = getattr(factory, part)
    return factory


def _load_entry_point(spec: str, entry: metadata.EntryPoint) -> Callable:
    try:
        return entry.load()
    except (Exception, SystemExit) as err:  # plugin code: sys.exit there must not end the run
        raise ValueError(f"agent {spec}: loading the entry point {entry.value} raised {_brief(err)}") from err


def _call_factory(spec: str, factory: Callable, rules: RuleSet, seed: int) -> object:
    if not callable(factory):
        raise ValueError(
            f"agent {spec}: {type(factory).__name__} object is not callable; FACTORY(rules, seed) must return the bot"
        )
    _check_signature(
        spec, factory, getattr(factory, "__qualname__", "the factory"), "FACTORY(rules, seed)", (rules, seed), {}
    )
    try:
        return factory(rules, seed)
    except (Exception, SystemExit) as err:  # plugin code: sys.exit there must not end the run
        raise ValueError(f"agent {spec}: the factory raised {_brief(err)}") from err


__all__ = [
    "Agent",
    "Bot",
    "BUILTIN",
    "KINDS",
    "builtin",
    "build_builtin",
    "make_agent",
    "agent_catalogue",
    "describe_agent",
    "PluginAgent",
    "ENTRY_POINT_GROUP",
]
