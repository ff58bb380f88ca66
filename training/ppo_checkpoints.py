"""PPO checkpoints: writing them (atomically) in the agents' format, reading them for a resume.

The format is defined by the reader the ``ppo`` agent uses (``tiengow.agents.ppo``: ``FORMAT``,
``VERSION``, ``read_checkpoint``). A training checkpoint holds, beside ``config`` and ``model``:
``optimizer``, ``rng`` (torch and the learner's shuffle generator), ``rollouts`` (each rollout
worker's env arrays, seating, credit bookkeeping and random streams), ``pool`` (the past
snapshots), ``curve`` (the evaluations so far), ``update``, ``global_step`` and ``elapsed``:
``--resume`` continues exactly. ``export_policy`` keeps only what plays.

Rollout workers hand their state over as numpy (``numpy_tree``); ``torch.save`` keeps tensors
(``torch_tree``), so that ``weights_only`` loading reads every part.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from tiengow.agents.infra import atomic_write
from tiengow.agents.ppo import FORMAT, VERSION, read_checkpoint

# Settings a checkpoint's network, optimiser and env arrays depend on: resuming with others is refused.
STRUCTURAL = ("rules", "hands", "hidden", "layers", "num_envs")


def save_checkpoint(path: str, payload: dict) -> None:
    """``torch.save`` of ``payload`` with the format header, atomically: a reader never sees half a file."""
    atomic_write(path, lambda f: torch.save({"format": FORMAT, "version": VERSION, **payload}, f))


def load_checkpoint(path: str, config: Any | None = None) -> dict:
    """Read a checkpoint on the CPU. ValueError when the file is missing, corrupt, not a PPO
    checkpoint, or (given a ``PpoConfig``) trained with other structural settings."""
    data = read_checkpoint(path)
    if config is not None:
        saved = data["config"]
        wrong = [
            f"{name}: checkpoint {saved.get(name)!r}, config {getattr(config, name)!r}"
            for name in STRUCTURAL
            if saved.get(name) != getattr(config, name)
        ]
        if wrong:
            raise ValueError(
                f"{path} does not fit this config (" + "; ".join(wrong) + "); resume with the "
                "checkpoint's settings for these fields"
            )
    return data


def export_policy(checkpoint: str, out: str) -> None:
    """Write the playing part of a training checkpoint (config, model, progress and learning curve;
    no optimiser, env or pool state) to ``out``: what ships as ``agents/policies/ppo.pt``."""
    data = load_checkpoint(checkpoint)
    save_checkpoint(
        out, {key: data[key] for key in ("config", "model", "update", "global_step", "elapsed", "curve") if key in data}
    )


def arrays_state(owner: Any, names: list[str]) -> dict:
    """Copies of the named array attributes of ``owner``."""
    return {name: np.array(getattr(owner, name), copy=True) for name in names}


def load_arrays(owner: Any, saved: dict) -> None:
    """Write saved arrays back into ``owner``'s arrays in place; ValueError on a shape or dtype change."""
    for name, value in saved.items():
        target = getattr(owner, name)
        if target.shape != value.shape or target.dtype != value.dtype:
            raise ValueError(
                f"checkpoint array {name} is {value.dtype}{value.shape}, expected {target.dtype}{target.shape}"
            )
        target[...] = value


def numpy_tree(tree: Any) -> Any:
    """Tensors as numpy arrays, through dicts and lists. Rollout workers take and give numpy only:
    Ray moves numpy arrays without pickling, and the learner's tensors stay its own."""
    if isinstance(tree, torch.Tensor):
        return tree.detach().numpy().copy()
    if isinstance(tree, dict):
        return {key: numpy_tree(value) for key, value in tree.items()}
    if isinstance(tree, list):
        return [numpy_tree(value) for value in tree]
    return tree


def torch_tree(tree: Any) -> Any:
    """Numpy arrays as tensors (copies), through dicts and lists: what ``torch.save`` keeps."""
    if isinstance(tree, np.ndarray):
        return torch.tensor(tree)
    if isinstance(tree, dict):
        return {key: torch_tree(value) for key, value in tree.items()}
    if isinstance(tree, list):
        return [torch_tree(value) for value in tree]
    return tree


__all__ = [
    "save_checkpoint",
    "load_checkpoint",
    "export_policy",
    "numpy_tree",
    "torch_tree",
    "arrays_state",
    "load_arrays",
    "STRUCTURAL",
]
