"""The ``Agent`` protocol and the registry that builds agents from spec strings.

An agent acts for whichever seat is to act. It sees that seat's observation vector and legal
action mask (``tiengow_env.observation``), and, if it searches, the ``Game`` itself through
``act(..., game=game)``; a searching agent must only use what the acting seat may know
(``tiengow_env.search`` samples the hidden tiles for it).

Specs, resolved in this order (``tiengow agents`` lists them):

1. a built-in name, optionally with an argument: ``random``, ``greedy``, ``expert``,
   ``pimc:64``, ``cfr:PATH``, ``ppo:PATH``, ...; the search bots (grammar in ``agents/pimc.py``)
   take ``pimc[:SAMPLES][:KEY=VALUE]...``, ``ismcts[:ITERATIONS][:KEY=VALUE]...`` and
   ``search[:BUDGET]``, keys ``rollout=random|greedy|expert``, ``epsilon=E``, ``own_epsilon=E``,
   ``endgame=TILES``, ``infer=P``, ``beta=B``, ``halving=1`` and ``paired=1`` (pimc), ``c=C``
   (ismcts): ``pimc:256:rollout=expert``;
   ``pimc:64,random`` still works; ``champion[:SAMPLES][:KEY=VALUE]...`` (``agents/champion.py``);
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

Registering a built-in (``agents/_builtin.py``)::

    @register("greedy", kind="heuristic", description="plays the largest, then strongest combination")
    def _greedy(argument, rules, seed):      # argument: the text after ':' in the spec, or None
        return GreedyAgent(rules, seed)

``kind`` is one of ``KINDS``; ``description`` is one line; ``usage`` (default: the name) is
how ``tiengow agents`` writes the spec, such as ``pimc[:SAMPLES[,POLICY]]``.
"""
from __future__ import annotations

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

AgentFactory = Callable[[str | None, RuleSet, int], "Agent"]
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
            raise ValueError(f"{self.name}: observations are numbers of shape (N, {size}) under rules "
                             f"{self.rules.name}, got {observations.dtype} {observations.shape}")
        if masks.shape != (len(observations), actions) or masks.dtype.kind not in "biu":
            raise ValueError(f"{self.name}: masks are 0/1 of shape ({len(observations)}, {actions}) under rules "
                             f"{self.rules.name}, got {masks.dtype} {masks.shape}")
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
class Registration:
    """One built-in spec: its factory ``(argument, rules, seed) -> Agent`` and how it is listed."""

    name: str
    kind: str
    description: str
    factory: AgentFactory
    usage: str


REGISTRY: dict[str, Registration] = {}


def register(name: str, kind: str | None = None, description: str | None = None,
             usage: str | None = None) -> Callable[[AgentFactory], AgentFactory]:
    """Register a factory ``(argument, rules, seed) -> Agent`` under the spec prefix ``name``
    (module doc). Registering a name again with only a factory replaces the factory and keeps
    its kind and description."""
    def wrap(factory: AgentFactory) -> AgentFactory:
        if kind is None and description is None:
            from . import _builtin  # noqa: F401  (the registration being replaced)
        old = REGISTRY.get(name)
        if kind is None and description is None and old is not None:
            REGISTRY[name] = Registration(name, old.kind, old.description, factory, old.usage)
            return factory
        if kind not in KINDS or not description or "\n" in description:
            raise ValueError(f"register({name!r}) needs kind= one of {', '.join(KINDS)} and a one-line description=")
        REGISTRY[name] = Registration(name, kind, description, factory, usage or name)
        return factory
    return wrap


def make_agent(spec: str, rules: RuleSet | str = "standard", seed: int = 0) -> Agent:
    """Build an agent from a spec string such as ``expert``, ``pimc:64`` or ``mybots:make``."""
    from . import _builtin  # noqa: F401  (registers the built-in agents)
    rules = RuleSet.from_spec(rules)
    seed = check_seed(seed)  # before a factory's work (a checkpoint to read)
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"an agent spec is a string such as 'expert' or 'pimc:64', got {spec!r}")
    name, sep, argument = spec.partition(":")
    if name in REGISTRY:
        if sep and not argument:
            raise ValueError(f"agent spec {spec!r} ends with ':' and nothing after it; write {name!r} alone, or "
                             f"{name}:ARGUMENT")
        agent = REGISTRY[name].factory(argument or None, rules, seed)
        agent.name = spec
        return agent
    entry = _entry_points().get(name)
    if entry is not None:
        if sep:
            raise ValueError(f"agent {name!r} (plugin {entry.value}) takes no argument, got {spec}")
        return PluginAgent(spec, _call_factory(spec, _load_entry_point(spec, entry), rules, seed), rules, seed)
    if sep and _is_dotted(name):
        return PluginAgent(spec, _call_factory(spec, _import_factory(spec, name, argument), rules, seed), rules, seed)
    known = ", ".join(sorted(REGISTRY) + sorted(_entry_points()))
    raise ValueError(f"unknown agent {spec!r}; agents are: {known}, or MODULE:FACTORY for your own "
                     "(tiengow agents lists them)")


def agent_catalogue() -> list[dict[str, str]]:
    """Every spec ``tiengow agents`` lists: {spec, kind, description}, built-ins first, then the
    installed plugins (entry points), then the form of a plugin given by module."""
    from . import _builtin  # noqa: F401
    rows = [{"spec": r.usage, "kind": r.kind, "description": r.description} for r in REGISTRY.values()]
    for name, entry in sorted(_entry_points().items()):
        if name in REGISTRY:
            description = f"entry point {entry.value}, hidden by the built-in {name!r}"
        else:
            try:
                doc = (_load_entry_point(name, entry).__doc__ or "").strip()
                description = doc.splitlines()[0] if doc else f"entry point {entry.value}"
            except ValueError as err:
                description = f"cannot be loaded: {err}"
        rows.append({"spec": name, "kind": "plugin", "description": description})
    rows.append({"spec": "MODULE:FACTORY", "kind": "plugin",
                 "description": "your own bot: FACTORY(rules, seed) returns an object with act() and reset()"})
    return rows


# ============================================================================ plugins
class PluginAgent(Agent):
    """A third-party bot (module doc): gets a copy of the game and read-only views of the
    observation and mask, and its actions are checked. Every error names the agent; the error
    it wraps is chained (``TIENGOW_DEBUG=1`` makes the CLI print that traceback)."""

    uses_game = True

    def __init__(self, spec: str, bot: object, rules: RuleSet, seed: int = 0):
        super().__init__(rules, seed)
        for method, signature, call in (("act", "act(observation, mask, game=None)", ((None, None), {"game": None})),
                                        ("reset", "reset(seed)", ((0,), {}))):
            function = getattr(bot, method, None)
            if not callable(function):
                raise ValueError(f"agent {spec}: its factory returned {type(bot).__name__!r}, which has no "
                                 f"{signature} method")
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
            action = self.bot.act(_read_only(observation), _read_only(mask),
                                  game=None if game is None else game.clone())
        except ValueError as err:
            if "read-only" not in str(err):
                raise ValueError(f"agent {self.name}: act raised {_brief(err)}") from err
            raise ValueError(f"agent {self.name}: act() wrote into the observation or mask it was given, which "
                             f"are read-only ({_where(err)}); copy them first (mask.copy())") from err
        except (Exception, SystemExit) as err:  # plugin code: sys.exit there must not end the run
            raise ValueError(f"agent {self.name}: act raised {_brief(err)}") from err
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"agent {self.name}: act() must return an int action id, got "
                             f"{type(action).__name__} {repr(action)[:40]}")
        if not 0 <= action < len(mask) or not mask[action]:
            legal = legal_list(np.flatnonzero(mask), None if game is None else game.action_name)
            raise ValueError(f"agent {self.name} chose {repr(action)[:40]}, which is not a legal action here; "
                             f"legal: {legal}")
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
        raise ValueError(f"agent {spec}: {name}{signature} ({_source_of(function)}) cannot be called as "
                         f"{expected}: {err}") from None


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
            raise ValueError(f"unknown agent {spec!r}: it is not a built-in agent, and there is no module "
                             f"{err.name!r} to import (searched sys.path and {os.getcwd()}); tiengow agents "
                             "lists the agents") from None
        raise ValueError(f"agent {spec}: importing {module_name} raised {_brief(err)}") from err
    except (Exception, SystemExit) as err:  # plugin code: sys.exit there must not end the run
        raise ValueError(f"agent {spec}: importing {module_name} raised {_brief(err)}") from err
    factory = module
    for part in attribute.split("."):
        if not hasattr(factory, part):
            raise ValueError(f"agent {spec}: module {module_name} ({getattr(module, '__file__', '?')}) has no "
                             f"attribute {attribute!r}")
        factory = getattr(factory, part)
    return factory


def _load_entry_point(spec: str, entry: metadata.EntryPoint) -> Callable:
    try:
        return entry.load()
    except (Exception, SystemExit) as err:  # plugin code: sys.exit there must not end the run
        raise ValueError(f"agent {spec}: loading the entry point {entry.value} raised {_brief(err)}") from err


def _call_factory(spec: str, factory: Callable, rules: RuleSet, seed: int) -> object:
    if not callable(factory):
        raise ValueError(f"agent {spec}: {type(factory).__name__} object is not callable; FACTORY(rules, seed) "
                         "must return the bot")
    _check_signature(spec, factory, getattr(factory, "__qualname__", "the factory"), "FACTORY(rules, seed)",
                     (rules, seed), {})
    try:
        return factory(rules, seed)
    except (Exception, SystemExit) as err:  # plugin code: sys.exit there must not end the run
        raise ValueError(f"agent {spec}: the factory raised {_brief(err)}") from err


__all__ = ["Agent", "AgentFactory", "KINDS", "REGISTRY", "Registration", "register", "make_agent",
           "agent_catalogue", "PluginAgent", "ENTRY_POINT_GROUP"]
