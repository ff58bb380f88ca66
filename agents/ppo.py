"""``ppo[:path]``: plays a PPO checkpoint on the CPU; the checkpoint format is defined here.

Without a path it loads the shipped model ``agents/policies/ppo.pt`` (how it was trained:
``agents/policies/ppo.md``). The network runs in numpy (a batch of one is ~10x faster than a
torch call), batched in ``act_batch``. It plays the most likely legal action; ``ppo:PATH:sample=1``
samples the policy instead. Illegal actions are masked out before the choice, so it never
picks one.

**Checkpoint format** (written by ``tiengow.training.ppo``, read by ``read_checkpoint``): a
``torch.save`` dict with ``format`` = ``tiengow-ppo-checkpoint``, ``version`` = 1, ``config``
(the ``PpoConfig`` fields as a dict) and ``model``, the network's state dict:

| key                        | shape              | meaning                                         |
|----------------------------|--------------------|-------------------------------------------------|
| ``input_scale``            | (D,)               | per-feature factor on the observation            |
| ``trunk.{2k}.weight/bias`` | (H, in), (H,)      | hidden layer k (ReLU), k = 0 .. layers - 1       |
| ``policy.weight/bias``     | (A, H), (A,)       | policy logits (masked before the softmax)        |
| ``value.weight/bias``      | (1, H), (1,)       | value head: chips still to come, x reward_scale   |

Training checkpoints add the optimiser, RNG, env and pool state; an exported policy has none.
Only ``read_checkpoint`` imports torch (to read the file): ``import tiengow_env`` never does.
"""

from __future__ import annotations

import functools
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from tiengow_env.checks import check_not_a_pipe
from tiengow_env.combos import table_for
from tiengow_env.game import Game
from tiengow_env.observation import ObservationLayout
from tiengow_env.rules import RuleSet

from .base import Agent, Bot
from .infra import install_hint

DEFAULT_POLICY = Path(__file__).resolve().parent / "policies" / "ppo.pt"
FORMAT = "tiengow-ppo-checkpoint"
VERSION = 1


def input_scale(rules: RuleSet) -> np.ndarray:
    """Per-feature factor applied to the observation: chips and streak are unbounded counts, the
    rest is already of order 1."""
    layout = ObservationLayout(rules.players, rules.hand_size)
    scale = np.ones(layout.size, dtype=np.float32)
    for name, view in layout.views(np.arange(layout.size)).items():
        if name in ("chips", "streak"):
            scale[view.ravel()] = 0.1
        elif name in ("columns", "tiles_left", "acted", "owed"):
            scale[view.ravel()] = 1.0 / max(rules.hand_size / 2, 1)
    return scale


def read_checkpoint(path: str) -> dict:
    """Read a PPO checkpoint on the CPU (tensors stay torch tensors). ValueError when the file is
    missing, corrupt, not a PPO checkpoint, of another version, or without config and model."""
    data = read_model_file(path, "PPO checkpoint", "ppo", FORMAT, VERSION)
    for key in ("hidden", "layers"):
        value = data["config"].get(key)
        if type(value) is not int or value < (1 if key == "hidden" else 0):
            raise ValueError(
                f"{path} is a damaged PPO checkpoint: its config's {key!r} must be a whole number "
                f"{'>= 1' if key == 'hidden' else '>= 0'}, got {value!r}"
            )
    return data


def read_model_file(path: str, kind: str, reader: str, form: str, version: int) -> dict:
    """A ``torch.save`` dict of a shipped model's format on the CPU: ``format`` = ``form``,
    ``version``, a ``config`` dict and a ``model`` dict of dense float tensors by name. ValueError
    naming the file as a ``kind`` (such as "PPO checkpoint") when it is anything else; ``reader``
    is the agent that reads it (for the hint when torch is missing)."""
    if not os.path.exists(path):
        raise ValueError(f"{kind} {path} does not exist")
    check_not_a_pipe(path, f"{kind} {path}")
    try:
        import torch
    except ImportError:
        raise ValueError(f"the {reader} agent reads PyTorch checkpoints: {install_hint('train')}") from None
    try:
        with warnings.catch_warnings():  # torch's own words about old pickles: the message below is ours
            warnings.simplefilter("ignore")
            data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises many types for a damaged zip or pickle
        # torch's own text runs to several long sentences about weights_only: one clause is enough
        raise ValueError(
            f"{path} is not a readable {kind} (not a PyTorch file of tensors, or "
            f"corrupt or truncated: {type(err).__name__})"
        ) from None
    if not isinstance(data, dict) or data.get("format") != form:
        raise ValueError(f"{path} is not a {kind} (expected format {form!r})")
    if data.get("version") != version:
        raise ValueError(f"{path} is a version {data.get('version')} {kind}; this code reads version {version}")
    missing = [k for k in ("config", "model") if not isinstance(data.get(k), dict)]
    if missing:
        raise ValueError(f"{path} is a damaged {kind}: it has no {missing[0]!r} dictionary")
    for name, tensor in data["model"].items():
        if not isinstance(name, str):
            raise ValueError(
                f"{path} is a damaged {kind}: its model's entries are named by text, got "
                f"{type(name).__name__} {name!r:.40}"
            )
        if (
            not isinstance(tensor, torch.Tensor)
            or tensor.dtype not in (torch.float32, torch.float64)
            or tensor.layout != torch.strided
            or tensor.device.type != "cpu"
        ):
            kind_of = (
                f"a{' sparse' * (tensor.layout != torch.strided)} {tensor.dtype} tensor on {tensor.device.type}"
                if isinstance(tensor, torch.Tensor)
                else type(tensor).__name__
            )
            raise ValueError(
                f"{path} is a damaged {kind}: model entry {name!r} must be a dense float32 "
                f"or float64 tensor in memory, got {kind_of}"
            )
    return data


def policy_layers(
    data: dict, path: str = "checkpoint"
) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]], tuple[np.ndarray, np.ndarray] | None]:
    """The playing part of a checkpoint's network as numpy arrays: (input scale, [(weight, bias)
    of each hidden layer, then of the policy head], (weight, bias) of the value head or None if
    the file has none). ValueError if the weights do not fit its config (``layers`` hidden layers
    of width ``hidden``, the observation and actions of its rules)."""
    config, model = data["config"], data["model"]
    names = [f"trunk.{2 * k}" for k in range(config["layers"])] + ["policy"]
    try:
        scale = model["input_scale"].numpy().copy()
        layers = [(model[f"{name}.weight"].numpy().copy(), model[f"{name}.bias"].numpy().copy()) for name in names]
        value = None
        if "value.weight" in model:
            value = (model["value.weight"].numpy().copy(), model["value.bias"].numpy().copy())
        rules = RuleSet.from_spec(config["rules"])
    except (KeyError, AttributeError, ValueError) as err:
        raise ValueError(f"{path}: the model weights do not fit its config (missing or bad entry: {err})") from None
    widths = (
        [scale.shape[0] if scale.ndim == 1 else -1]
        + [config["hidden"]] * (len(names) - 1)
        + [table_for(rules).num_actions]
    )
    expected = [(widths[k + 1], widths[k]) for k in range(len(names))]
    if (
        scale.shape != (ObservationLayout(rules.players, rules.hand_size).size,)
        or [w.shape for w, _ in layers] != expected
        or any(b.shape != (w.shape[0],) for w, b in layers)
        or (value is not None and (value[0].shape != (1, widths[-2]) or value[1].shape != (1,)))
    ):

        def shapes(pairs):
            return ", ".join(f"{tuple(w.shape)} + bias {tuple(b.shape)}" for w, b in pairs)

        raise ValueError(
            f"{path}: the model weights do not fit its config: input scale {tuple(scale.shape)}, "
            f"layers {shapes(layers)}"
            + (f", value head {shapes([value])}" if value is not None else "")
            + f"; expected input scale ({widths[0]},), layers {expected} (each with its bias), "
            f"value head (1, {widths[-2]}) + bias (1,)"
        )
    arrays = [scale] + [a for pair in layers + ([value] if value is not None else []) for a in pair]
    if not all(np.all(np.isfinite(a)) for a in arrays):
        raise ValueError(f"{path}: the model weights are not all finite numbers (nan or inf): a damaged checkpoint")
    return scale, layers, value


class PpoAgent(Agent):
    """A masked MLP policy: ``layers`` (weight (out, in), bias) pairs, the last being the policy
    head, and the value head ``value`` beside it (None if the checkpoint has none)."""

    name = "ppo"
    trained_rules: RuleSet | None = None  # the rules the checkpoint was trained on

    def __init__(
        self,
        rules: RuleSet,
        seed: int,
        scale: np.ndarray,
        layers: list[tuple[np.ndarray, np.ndarray]],
        sample: bool = False,
        value: tuple[np.ndarray, np.ndarray] | None = None,
        reward_scale: float = 1.0,
    ):
        super().__init__(rules, seed)
        self.scale = scale
        self.layers = layers
        self.sample = sample
        self.value_head = value
        self.reward_scale = reward_scale

    def _trunk(self, observations: np.ndarray) -> np.ndarray:
        hidden = np.asarray(observations, dtype=np.float32) * self.scale
        for weight, bias in self.layers[:-1]:
            hidden = np.maximum(hidden @ weight.T + bias, 0.0)
        return hidden

    def logits(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Masked logits (illegal actions at -inf) for a batch (N, D) of observations."""
        weight, bias = self.layers[-1]
        return np.where(np.asarray(masks, dtype=bool), self._trunk(observations) @ weight.T + bias, -np.inf)

    def values(self, observations: np.ndarray) -> np.ndarray:
        """The value head for a batch (N, D) of observations: the chips still to come in the
        hand for the seat that observes, as trained (the returns divided by the reward scale)."""
        if self.value_head is None:
            raise ValueError("this PPO checkpoint has no value head (model entries value.weight and value.bias)")
        weight, bias = self.value_head
        return (self._trunk(observations) @ weight.T + bias)[:, 0] / self.reward_scale

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        logits = self.logits(*self.check_batch(observations, masks))
        if not self.sample:
            return np.argmax(logits, axis=1).astype(np.int64)
        gumbel = -np.log(-np.log(self.rng.random(logits.shape).clip(1e-20, 1.0)))
        return np.argmax(logits + gumbel, axis=1).astype(np.int64)

    def act(self, observation: np.ndarray, mask: np.ndarray, game: Game | None = None) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(mask)[None])[0])

    def explain(self, observation: np.ndarray, mask: np.ndarray, game: Game | None = None) -> dict:
        """The policy's probabilities over the legal actions (the softmax of the masked logits)."""
        legal = np.flatnonzero(mask)
        logits = self.logits(observation[None], mask[None])[0, legal].astype(np.float64)
        weights = np.exp(logits - logits.max())
        return {"kind": "probabilities", "actions": legal.tolist(), "values": (weights / weights.sum()).tolist()}


@functools.lru_cache(maxsize=8)
def _load(
    path: str, mtime: float
) -> tuple[dict, np.ndarray, list[tuple[np.ndarray, np.ndarray]], tuple[np.ndarray, np.ndarray] | None]:
    data = read_checkpoint(path)
    return (dict(data["config"]),) + policy_layers(data, path)


def make_ppo_agent(given: str | None, rules: RuleSet, seed: int = 0, sample: bool = False) -> PpoAgent:
    """The PPO checkpoint at ``given`` (None: the shipped model) for a table of ``rules``,
    playing its argmax, or sampling the policy with ``sample``."""
    path = str(DEFAULT_POLICY) if given is None else given
    if not os.path.exists(path):
        raise ValueError(
            f"PPO checkpoint {path} does not exist; expected a .pt written by tiengow train ppo"
            + ("" if given else " (the shipped model is missing: reinstall, or give ppo:PATH)")
        )
    config, scale, layers, value = _load(os.path.abspath(path), os.path.getmtime(path))
    rules = RuleSet.from_spec(rules)
    trained = RuleSet.from_spec(config["rules"])
    layout = ObservationLayout(rules.players, rules.hand_size)
    if layers[0][0].shape[1] != layout.size or layers[-1][0].shape[0] != table_for(rules).num_actions:
        raise ValueError(
            f"{path} was trained on rules {trained.name!r} (observation {layers[0][0].shape[1]}, "
            f"{layers[-1][0].shape[0]} actions); these rules ({rules.name}) need observation "
            f"{layout.size} and {table_for(rules).num_actions} actions"
        )
    reward_scale = config.get("reward_scale", 1.0)
    if (
        isinstance(reward_scale, bool)
        or not isinstance(reward_scale, (int, float))
        or not reward_scale > 0
        or not np.isfinite(reward_scale)
    ):
        raise ValueError(f"{path}: the config's reward_scale must be a positive number, got {reward_scale!r}")
    agent = PpoAgent(rules, seed, scale, layers, sample=sample, value=value, reward_scale=float(reward_scale))
    agent.trained_rules = trained  # the play UI warns when the table's rules differ
    return agent


@dataclass(frozen=True)
class PpoConfig:
    """``ppo``: a PPO network."""

    POSITIONAL: ClassVar[str] = "path"
    path: str | None = None
    """a checkpoint written by tiengow train ppo (default: the shipped ppo.pt)"""
    sample: bool = False
    """sample the policy rather than play its most likely action"""


PPO = Bot(
    "learned",
    "a PPO network: the shipped model or the checkpoint PATH (argmax, or sample=1)",
    PpoConfig,
    lambda config, rules, seed: make_ppo_agent(config.path, rules, seed, config.sample),
)


__all__ = [
    "PpoAgent",
    "PpoConfig",
    "PPO",
    "make_ppo_agent",
    "read_checkpoint",
    "read_model_file",
    "policy_layers",
    "input_scale",
    "DEFAULT_POLICY",
    "FORMAT",
    "VERSION",
]
