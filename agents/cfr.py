"""``cfr[:path]``: plays a CFR policy file, and the definition of that file format.

Two kinds of policy, both written by ``tiengow train cfr``:

* **abstract** (full game, ``algorithm: mccfr_abstract``): the acting seat's bucket
  (``abstraction.py``: features of its own tiles and of the public state, nothing hidden) maps
  to a distribution over a few abstract actions, each naming one concrete action. A bucket the
  policy never reached falls back to the greedy agent's choice. The policy is sampled (or, if
  the file says ``act: argmax``, its most likely action is played). Without a path the agent
  loads the shipped ``agents/policies/cfr_standard.npz`` (``tiengow train cfr --config cfr --out
  agents/policies/cfr_standard.npz``).
* **tabular** (an exact small tree, ``cfr+``/``cfr``/``mccfr`` on ``micro``; the policies
  ``tiengow nashconv`` measures): one probability per legal action of each information set of
  the exact tree (``exact_tree.py``). The agent rebuilds that tree once per process and finds
  the acting seat's information set from what the seat sees (``_cfr_play_kernels.view_hash``,
  seats counted from the banker, so any banker works); it plays under the rules it was solved
  for and refuses others. It samples the (mixed) equilibrium strategy.

Policy files (``.npz``, written atomically by ``save_policy``) hold ``format`` =
``tiengow-cfr-policy``, ``version``, ``kind`` and ``meta`` (JSON: rules, algorithm,
iterations, seconds, curve), then per kind:

* ``tabular``: ``policy`` (float64, one probability per slot of the exact tree),
  ``fingerprint`` (``GameTree.fingerprint()``), ``banker``;
* ``abstract``: ``keys`` (int64, sorted bucket keys), ``probabilities`` (float32, keys x 7
  abstract actions, ``abstraction.ABSTRACT_NAMES``), ``act`` (``sample`` or ``argmax``).
"""

from __future__ import annotations

import functools
import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from tiengow_env import _kernels as K
from tiengow_env import layout as L
from tiengow_env.checks import DuplicateKeyError, load_json
from tiengow_env.combos import table_for
from tiengow_env.game import Game
from tiengow_env.rules import RuleSet

from . import _cfr_play_kernels as PK
from .abstraction import NUM_ABSTRACT, NUM_KEYS, single_of_type
from .base import Agent, Bot
from .exact_tree import GameTree, build_tree, check_policy
from .infra import atomic_write

DEFAULT_POLICY = Path(__file__).resolve().parent / "policies" / "cfr_standard.npz"
FORMAT = "tiengow-cfr-policy"
VERSION = 1
ACTS = ("sample", "argmax")  # how an abstract policy is played: sample it, or its most likely action
REQUIRED = {"tabular": ("policy", "fingerprint", "banker"), "abstract": ("keys", "probabilities", "act")}


# ============================================================================ policy files
def save_policy(path: str, kind: str, meta: dict, **arrays: np.ndarray) -> None:
    """Write a policy file of ``kind`` (module doc) atomically: a reader never sees half a file."""
    if kind not in REQUIRED:
        raise ValueError(f"unknown policy kind {kind!r}; expected one of {', '.join(REQUIRED)}")

    def write(f) -> None:
        np.savez_compressed(
            f,
            format=np.array(FORMAT),
            version=np.array(VERSION),
            kind=np.array(kind),
            meta=np.array(json.dumps(meta)),
            **arrays,
        )

    atomic_write(path, write)


def load_policy(path: str) -> dict[str, Any]:
    """A policy file as a dict (``kind``, ``meta``, ``path`` and its arrays); ValueError naming the
    file and what was expected when it is missing, corrupt or not a CFR policy."""
    expected = f"a tiengow CFR policy file (.npz with format={FORMAT!r}, written by tiengow train cfr)"
    if not os.path.exists(path):
        raise ValueError(f"policy file {path} does not exist; expected {expected}")
    if not os.path.isfile(path):  # a folder, a device or a pipe: a zip archive is read by seeking
        raise ValueError(f"policy file {path} is not a regular file; expected {expected}")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"policy file {path} is not an .npz (zip) archive; expected {expected}")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as err:
        raise ValueError(f"policy file {path} is corrupt or not an .npz file ({err}); expected {expected}") from None
    if str(arrays.get("format", "")) != FORMAT:
        raise ValueError(f"{path} is not a CFR policy file; expected {expected}")
    version = arrays.get("version")
    if version is None or version.shape != () or version.dtype.kind not in "iu" or int(version) != VERSION:
        shown = "none" if version is None else repr(version.tolist())
        raise ValueError(f"{path}: policy file version {shown} is not supported; expected {VERSION}")
    kind = str(arrays.get("kind", ""))
    if kind not in REQUIRED:
        raise ValueError(f"{path}: unknown policy kind {kind!r}; expected one of {', '.join(REQUIRED)}")
    missing = [name for name in REQUIRED[kind] if name not in arrays]
    if missing:
        raise ValueError(f"{path}: a {kind} policy needs the arrays {', '.join(REQUIRED[kind])}; missing {missing[0]}")
    try:
        meta = load_json(str(arrays["meta"]))
    except DuplicateKeyError as err:
        raise ValueError(f"{path}: the 'meta' entry is not a valid JSON object: {err}; expected {expected}") from None
    except (KeyError, ValueError, RecursionError):
        meta = None
    if not isinstance(meta, dict):
        raise ValueError(f"{path}: the 'meta' entry is missing or not a JSON object; expected {expected}")
    out = {"kind": kind, "meta": meta, "path": path}
    if kind == "tabular":
        banker = arrays["banker"]
        if banker.shape != () or banker.dtype.kind not in "iu" or arrays["policy"].dtype.kind not in "fiu":
            raise ValueError(
                f"{path}: a tabular policy needs a whole-number 'banker' and a numeric 'policy' "
                f"array; got banker {banker.tolist()!r:.40} and a {arrays['policy'].dtype} policy"
            )
        if not isinstance(meta.get("rules"), dict):
            raise ValueError(
                f"{path}: a tabular policy's meta must hold the switches of the rules it solves "
                f"('rules': {{...}}), got {str(meta.get('rules'))[:40]!r}"
            )
        out.update(
            policy=np.asarray(arrays["policy"], dtype=np.float64),
            fingerprint=str(arrays["fingerprint"]),
            banker=int(banker),
        )
    else:
        if arrays["keys"].dtype.kind not in "iu" or arrays["probabilities"].dtype.kind not in "fiu":
            raise ValueError(
                f"{path}: an abstract policy needs whole-number 'keys' and numeric 'probabilities'; "
                f"got {arrays['keys'].dtype} and {arrays['probabilities'].dtype}"
            )
        keys = np.asarray(arrays["keys"], dtype=np.int64)
        probabilities = np.asarray(arrays["probabilities"], dtype=np.float64)
        if (
            keys.ndim != 1
            or probabilities.shape != (len(keys), NUM_ABSTRACT)
            or (np.diff(keys) <= 0).any()
            or (len(keys) and (keys[0] < 0 or keys[-1] >= NUM_KEYS))
        ):
            raise ValueError(
                f"{path}: an abstract policy needs sorted keys in 0..{NUM_KEYS - 1} and a "
                f"(keys, {NUM_ABSTRACT}) probability table; got {keys.shape} and {probabilities.shape}"
            )
        if not np.isfinite(probabilities).all() or (probabilities < 0).any():
            raise ValueError(f"{path}: probabilities must be finite and non-negative")
        act = str(arrays["act"])
        if act not in ACTS:
            raise ValueError(f"{path}: 'act' must be one of {', '.join(ACTS)}, got {act[:40]!r}")
        out.update(keys=keys, probabilities=probabilities, act=act)
    return out


def tabular_policy_for(tree: GameTree, loaded: dict[str, Any]) -> np.ndarray:
    """The slot probabilities of a loaded tabular policy, checked against ``tree``."""
    if loaded["kind"] != "tabular":
        raise ValueError(
            f"{loaded['path']} is an abstract (full-game) policy; NashConv needs a tabular policy of "
            f"the exact tree (tiengow train cfr --config cfr_micro)"
        )
    if (
        loaded["banker"] != tree.banker
        or RuleSet.from_spec(loaded["meta"]["rules"]).switches() != tree.rules.switches()
    ):
        raise ValueError(
            f"{loaded['path']} was computed for another game tree (rules "
            f"{loaded['meta'].get('rules_name')!r}, banker {loaded['banker']}); expected rules "
            f"{tree.rules.name!r}, banker {tree.banker}"
        )
    if loaded["fingerprint"] != tree.fingerprint():
        raise ValueError(
            f"{loaded['path']}: its tree fingerprint does not match the tree of its own rules and "
            "banker (a damaged file, or one written by another version of the tree)"
        )
    return check_policy(tree, loaded["policy"])


# ============================================================================ abstract policies
class CfrAgent(Agent):
    """Acts from an abstract policy table: sorted bucket ``keys`` and ``probabilities`` rows."""

    name = "cfr"
    uses_game = True  # the bucket features are computed from the state, reading only what the seat knows

    def __init__(self, rules: RuleSet, seed: int, keys: np.ndarray, probabilities: np.ndarray, sample: bool = True):
        super().__init__(rules, seed)
        self.keys = np.ascontiguousarray(keys, dtype=np.int64)
        self.probabilities = np.ascontiguousarray(probabilities, dtype=np.float64)
        self.sample = sample
        self.combos = table_for(rules)
        self._single = single_of_type(rules)
        self._scratch = np.zeros(L.legal_len(self.combos.num_combos), dtype=np.int64)
        self._options = np.zeros(NUM_ABSTRACT, dtype=np.int64)
        self._xorshift = np.zeros(1, dtype=np.uint64)
        self.fallbacks = 0  # decisions in buckets the policy does not cover
        self.reset(seed)

    def reset(self, seed: int) -> None:
        super().reset(seed)
        K.seed_rng(self._xorshift, np.uint64(int(seed) % 2**64))

    def act(self, observation: np.ndarray, mask: np.ndarray, game: Game | None = None) -> int:
        if game is None:
            raise ValueError("the cfr agent reads its bucket from the game: call act(observation, mask, game=game)")
        table, rules = self.combos.table, self.combos.rules_array
        action = PK.policy_action(
            game.state,
            self.keys,
            self.probabilities,
            self.sample,
            self._single,
            table,
            rules,
            self._xorshift,
            self._scratch,
            self._options,
        )
        if action < 0:
            self.fallbacks += 1
            action = K.greedy_action(game.state, table, rules, self._scratch)
        return int(action)

    def act_batch(self, observations, masks):
        raise ValueError("the cfr agent reads its bucket from the game: use act(..., game=game)")


# ============================================================================ tabular policies
class TabularPlay:
    """A tabular policy ready to play: ``index`` maps a ``view_hash`` to its information set."""

    def __init__(self, tree: GameTree, policy: np.ndarray, path: str):
        decisions = tree.player >= 0
        pairs = np.unique(np.stack([tree.view_hash[decisions], tree.infoset[decisions]]), axis=1)
        hashes, counts = np.unique(pairs[0], return_counts=True)
        if (counts > 1).any():  # two information sets look the same to their seat: the view misses something
            raise ValueError(
                f"{path}: the exact tree of {tree.rules.name} has information sets that the play-time "
                "view cannot tell apart, so this tabular policy cannot be played"
            )
        self.index = dict(zip(pairs[0].tolist(), pairs[1].tolist()))
        self.info_offset = tree.info_offset
        self.info_size = tree.info_size
        self.slot_action = tree.slot_action
        # per information set, the running sum of its slots' probabilities: one searchsorted samples it
        self.cumulative = np.concatenate(
            [np.cumsum(policy[o : o + n]) for o, n in zip(tree.info_offset, tree.info_size)]
        )
        self.face_up = tree.rules.discards_face_up


class TabularCfrAgent(Agent):
    """Samples an exact tabular policy at the acting seat's information set (module doc)."""

    name = "cfr"
    uses_game = True  # the information set is read from the state (only what the seat sees)

    def __init__(self, rules: RuleSet, seed: int, play: TabularPlay):
        super().__init__(rules, seed)
        self.play = play
        self.combos = table_for(rules)
        self._scratch = np.zeros(L.legal_len(self.combos.num_combos), dtype=np.int64)
        self._view = np.zeros(PK.VIEW_LEN, dtype=np.int64)
        self.fallbacks = 0  # decisions whose information set was not found (none under the policy's rules)

    def act(self, observation: np.ndarray, mask: np.ndarray, game: Game | None = None) -> int:
        if game is None:
            raise ValueError("the cfr agent reads its information set from the game: call act(..., game=game)")
        play = self.play
        info = play.index.get(int(PK.view_hash(game.state, play.face_up, self.combos.rules_array, self._view)))
        if info is not None:
            offset, size = play.info_offset[info], play.info_size[info]
            actions = play.slot_action[offset : offset + size]
            if mask[actions].all() and size == int(np.count_nonzero(mask)):
                cumulative = play.cumulative[offset : offset + size]
                k = int(np.searchsorted(cumulative, self.rng.random() * cumulative[-1], side="right"))
                return int(actions[min(k, size - 1)])
        self.fallbacks += 1
        return int(K.greedy_action(game.state, self.combos.table, self.combos.rules_array, self._scratch))

    def act_batch(self, observations, masks):
        raise ValueError("the cfr agent reads its information set from the game: use act(..., game=game)")


# ============================================================================ factory
@functools.lru_cache(maxsize=8)
def _load(path: str, mtime: float) -> dict[str, Any]:
    return load_policy(path)


@functools.lru_cache(maxsize=4)
def _tabular_play(path: str, mtime: float, switches: str) -> TabularPlay:
    """The exact tree of a tabular policy file, rebuilt once per process and rule set."""
    loaded = _load(path, mtime)
    tree = build_tree(RuleSet.from_spec(json.loads(switches)), loaded["banker"], views=True)
    return TabularPlay(tree, tabular_policy_for(tree, loaded), path)


def make_cfr_agent(argument: str | None, rules: RuleSet, seed: int = 0) -> Agent:
    """The policy file at ``argument`` (None: the shipped policy; an abstract or a tabular
    policy file, module doc) for a table of ``rules``."""
    path = str(DEFAULT_POLICY) if argument is None else argument
    if not os.path.exists(path):
        raise ValueError(
            f"cfr policy file {path} does not exist; expected a .npz written by tiengow train cfr"
            + ("" if argument else " (the shipped policy is missing: reinstall, or give cfr:PATH)")
        )
    rules = RuleSet.from_spec(rules)
    path = os.path.abspath(path)
    loaded = _load(path, os.path.getmtime(path))
    if loaded["kind"] == "abstract":
        return CfrAgent(rules, seed, loaded["keys"], loaded["probabilities"], sample=loaded["act"] == "sample")
    solved = loaded["meta"].get("rules")
    if not isinstance(solved, dict) or RuleSet.from_spec(solved).switches() != rules.switches():
        name = loaded["meta"].get("rules_name", "its own rules")
        raise ValueError(
            f"{argument} is an exact policy of the rules {name!r}: play it under those rules "
            f"(--rules {name}), not {rules.name!r}"
        )
    play = _tabular_play(path, os.path.getmtime(path), json.dumps(rules.switches(), sort_keys=True))
    return TabularCfrAgent(rules, seed, play)


@dataclass(frozen=True)
class CfrConfig:
    """``cfr``: a CFR policy file."""

    POSITIONAL: ClassVar[str] = "path"
    path: str | None = None
    """a policy written by tiengow train cfr, full game or exact micro (default: the shipped cfr_standard.npz)"""


CFR = Bot(
    "learned",
    "a CFR policy: the shipped full-game MCCFR one, or PATH (full game, or exact micro)",
    CfrConfig,
    lambda config, rules, seed: make_cfr_agent(config.path, rules, seed),
)

__all__ = [
    "CfrAgent",
    "CfrConfig",
    "CFR",
    "TabularCfrAgent",
    "make_cfr_agent",
    "DEFAULT_POLICY",
    "FORMAT",
    "VERSION",
    "save_policy",
    "load_policy",
    "tabular_policy_for",
]
