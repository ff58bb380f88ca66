"""The tile locator: a network that reads a seat's information state and says where each tile
hidden from it lies. ``champion:locate=A`` draws its worlds by it; the format is defined here.

Without a path it loads the shipped model ``agents/policies/locator.pt`` (trained by
``tiengow train locator --config locator``: ``agents/policies/champion.md``). The network runs in
numpy, like ``ppo``'s.

**The model.** Input: the perfect-recall information state of the seat to act
(``tiengow_env/observation.py``, D floats). A multilayer perceptron (``layers`` hidden layers of
``hidden`` ReLU units) gives logits of shape (2 (P - 1), T): for every other seat, in seats
relative to the observer, one row for its hand and one for its face-down tiles, and a column per
tile type. For each type, the probability of each place is the softmax over the places of its
logit plus the log of the place's size (``tiengow_env.search.location_log_weights``): with zero
logits, the uniform deal.

**Checkpoint format** (written by ``tiengow.training.locator``): a ``torch.save`` dict with
``format`` = ``tiengow-locator``, ``version`` = 1, ``config`` (``rules``, ``hidden``, ``layers``
and the training run's settings) and ``model``, the network's state dict: ``body.{2k}.weight``
and ``.bias`` for layer k = 0 .. layers (the last gives the logits, row-major as above).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np

from tiengow_env.game import Game
from tiengow_env.observation import ObservationLayout
from tiengow_env.rules import RuleSet
from tiengow_env.tiles import NUM_TYPES

from .ppo import read_model_file

DEFAULT_LOCATOR = Path(__file__).resolve().parent / "policies" / "locator.pt"
FORMAT = "tiengow-locator"
VERSION = 1
KIND = "tile-locator checkpoint"


class Locator:
    """The network of a locator checkpoint, in numpy: ``logits(game)`` for the seat to act."""

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], players: int):
        self.layers, self.players = layers, players

    def logits(self, game: Game) -> np.ndarray:
        """(2 (P - 1), T) float64 logits of the hidden tiles' places, from the information state
        of the seat to act (module doc). ValueError for a game without its history."""
        h = game.information_state().astype(np.float64)
        for k, (weight, bias) in enumerate(self.layers):
            h = weight @ h + bias
            if k < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
        return h.reshape(2 * (self.players - 1), NUM_TYPES)


def read_locator(path: str) -> tuple[dict, list[tuple[np.ndarray, np.ndarray]]]:
    """(config, [(weight, bias) of each layer] as float64 numpy) of a locator checkpoint;
    ValueError naming the file when it is not one, or its weights do not fit its config."""
    data = read_model_file(path, KIND, "champion", FORMAT, VERSION)
    config, model = data["config"], data["model"]
    for key in ("hidden", "layers"):
        if type(config.get(key)) is not int or config[key] < 1:
            raise ValueError(
                f"{path} is a damaged {KIND}: its config's {key!r} must be a whole number >= 1, got {config.get(key)!r}"
            )
    try:
        rules = RuleSet.from_spec(config["rules"])
        layers = [
            (
                model[f"body.{2 * k}.weight"].numpy().astype(np.float64),
                model[f"body.{2 * k}.bias"].numpy().astype(np.float64),
            )
            for k in range(config["layers"] + 1)
        ]
    except (KeyError, ValueError) as err:
        raise ValueError(f"{path}: the model weights do not fit its config (missing or bad entry: {err})") from None
    widths = (
        [ObservationLayout(rules.players, rules.hand_size).information_size]
        + [config["hidden"]] * config["layers"]
        + [2 * (rules.players - 1) * NUM_TYPES]
    )
    for k, (weight, bias) in enumerate(layers):
        if weight.shape != (widths[k + 1], widths[k]) or bias.shape != (widths[k + 1],):
            raise ValueError(
                f"{path}: layer {k} has weights {tuple(weight.shape)} and bias {tuple(bias.shape)}; its "
                f"config ({config['layers']} hidden layers of {config['hidden']}, rules {rules.name}) "
                f"needs {(widths[k + 1], widths[k])} and {(widths[k + 1],)}"
            )
        if not (np.all(np.isfinite(weight)) and np.all(np.isfinite(bias))):
            raise ValueError(f"{path} is a damaged {KIND}: layer {k} holds numbers that are not finite")
    return dict(config), layers


@functools.lru_cache(maxsize=8)
def _load(path: str, mtime: float) -> tuple[dict, list[tuple[np.ndarray, np.ndarray]]]:
    return read_locator(path)


def make_locator(path: str | None, rules: RuleSet) -> Locator:
    """The locator at ``path`` (None: the shipped one) for a table of ``rules``; ValueError when
    the file is missing or was trained for another size of information state."""
    path = str(DEFAULT_LOCATOR) if path is None else path
    if not os.path.exists(path):
        raise ValueError(f"{KIND} {path} does not exist; expected a .pt written by tiengow train locator")
    config, layers = _load(os.path.abspath(path), os.path.getmtime(path))
    layout = ObservationLayout(rules.players, rules.hand_size)
    if (
        layers[0][0].shape[1] != layout.information_size
        or layers[-1][0].shape[0] != 2 * (rules.players - 1) * NUM_TYPES
    ):
        raise ValueError(
            f"{path} was trained on rules {RuleSet.from_spec(config['rules']).name!r} (information "
            f"state {layers[0][0].shape[1]}); these rules ({rules.name}) need {layout.information_size}"
        )
    return Locator(layers, rules.players)


__all__ = ["Locator", "make_locator", "read_locator", "DEFAULT_LOCATOR", "FORMAT", "VERSION"]
