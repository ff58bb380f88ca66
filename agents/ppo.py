"""``ppo[:path]``: plays a PPO checkpoint (``training/ppo.py``) on the CPU.

Without a path it loads the shipped model ``agents/policies/ppo.pt`` (how it was trained:
``agents/policies/ppo.md``). The network runs in numpy (a batch of one is ~10x faster than a
torch call), batched in ``act_batch``. It plays the most likely legal action; ``ppo:path,sample``
samples the policy instead. Illegal actions are masked out before the choice, so it never
picks one.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np

from tiengow_env.combos import table_for
from tiengow_env.game import Game
from tiengow_env.observation import ObservationLayout
from tiengow_env.rules import RuleSet

from .base import Agent, register
from .infra import install_hint

DEFAULT_POLICY = Path(__file__).resolve().parent / "policies" / "ppo.pt"


class PpoAgent(Agent):
    """A masked MLP policy: ``layers`` (weight (out, in), bias) pairs, the last being the policy head."""

    name = "ppo"
    trained_rules: RuleSet | None = None  # the rules the checkpoint was trained on

    def __init__(self, rules: RuleSet, seed: int, scale: np.ndarray, layers: list[tuple[np.ndarray, np.ndarray]],
                 sample: bool = False):
        super().__init__(rules, seed)
        self.scale = scale
        self.layers = layers
        self.sample = sample

    def logits(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Masked logits (illegal actions at -inf) for a batch (N, D) of observations."""
        hidden = np.asarray(observations, dtype=np.float32) * self.scale
        for weight, bias in self.layers[:-1]:
            hidden = np.maximum(hidden @ weight.T + bias, 0.0)
        weight, bias = self.layers[-1]
        return np.where(np.asarray(masks, dtype=bool), hidden @ weight.T + bias, -np.inf)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        logits = self.logits(observations, masks)
        if not self.sample:
            return np.argmax(logits, axis=1).astype(np.int64)
        gumbel = -np.log(-np.log(self.rng.random(logits.shape).clip(1e-20, 1.0)))
        return np.argmax(logits + gumbel, axis=1).astype(np.int64)

    def act(self, observation: np.ndarray, mask: np.ndarray, game: Game | None = None) -> int:
        return int(self.act_batch(observation[None], mask[None])[0])

    def explain(self, observation: np.ndarray, mask: np.ndarray, game: Game | None = None) -> dict:
        """The policy's probabilities over the legal actions (the softmax of the masked logits)."""
        legal = np.flatnonzero(mask)
        logits = self.logits(observation[None], mask[None])[0, legal].astype(np.float64)
        weights = np.exp(logits - logits.max())
        return {"kind": "probabilities", "actions": legal.tolist(), "values": (weights / weights.sum()).tolist()}


@functools.lru_cache(maxsize=8)
def _load(path: str, mtime: float) -> tuple[dict, np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    try:
        import torch
    except ImportError:
        raise ValueError(f"the ppo agent reads PyTorch checkpoints: {install_hint('train')}") from None

    from tiengow.training.ppo import load_checkpoint, network_from_checkpoint
    torch.set_num_threads(1)
    data = load_checkpoint(path)
    net = network_from_checkpoint(data, path)
    linears = [m for m in net.trunk if isinstance(m, torch.nn.Linear)] + [net.policy]
    layers = [(m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy()) for m in linears]
    return dict(data["config"]), net.input_scale.numpy().copy(), layers


def make_ppo_agent(argument: str | None, rules: RuleSet, seed: int = 0) -> PpoAgent:
    """Factory for the registry: ``ppo`` (the shipped model), ``ppo:path/to/checkpoint.pt``, and
    ``ppo:path,sample`` (or ``ppo:sample``) to sample the policy rather than play its argmax."""
    path, sample = None, False
    if argument:
        head, _, tail = argument.rpartition(",")
        if tail == "sample":
            sample, argument = True, head
        elif argument == "sample":
            sample, argument = True, ""
        path = argument or None
    path = str(DEFAULT_POLICY) if path is None else path
    if not os.path.exists(path):
        raise ValueError(f"PPO checkpoint {path} does not exist; expected a .pt written by tiengow train ppo"
                         + ("" if argument else " (the shipped model is missing: reinstall, or give ppo:PATH)"))
    config, scale, layers = _load(os.path.abspath(path), os.path.getmtime(path))
    rules = RuleSet.from_spec(rules)
    trained = RuleSet.from_spec(config["rules"])
    layout = ObservationLayout(rules.players, rules.hand_size)
    if layers[0][0].shape[1] != layout.size or layers[-1][0].shape[0] != table_for(rules).num_actions:
        raise ValueError(f"{path} was trained on rules {trained.name!r} (observation {layers[0][0].shape[1]}, "
                         f"{layers[-1][0].shape[0]} actions); these rules ({rules.name}) need observation "
                         f"{layout.size} and {table_for(rules).num_actions} actions")
    agent = PpoAgent(rules, seed, scale, layers, sample=sample)
    agent.trained_rules = trained  # the play UI warns when the table's rules differ
    return agent


def register_ppo() -> None:
    """Register ``ppo`` with the agent registry (``agents/_builtin.py`` does this once wired)."""
    register("ppo")(make_ppo_agent)


__all__ = ["PpoAgent", "make_ppo_agent", "register_ppo", "DEFAULT_POLICY"]
