"""tiengow: Tien Gow (天九) for AI research.

Public API (loaded on first use, so that ``import tiengow_env`` stays fast):

* ``Game``, ``replay``, ``perft``, ``RuleSet``: the rules (``game.py``, ``rules.py``);
* ``tiengow_v0``: the PettingZoo AEC environment module (``tiengow_v0.env()``,
  ``tiengow_v0.raw_env()``; see ``env.py``);
* ``TienGowEnv``: the single-seat Gymnasium environment, registered as ``"TienGow-v0"``
  (``gym_env.py``);
* ``VectorEnv``: N games stepped together in compiled code (``vector.py``);
* ``ObservationLayout``: the named views of the observation vectors (``observation.py``);
* ``StateView``: the state array read by name (``state.py``; ``Game.view`` gives a game's).
"""

from __future__ import annotations

import importlib
from typing import Any

from gymnasium.envs.registration import register as _register
from gymnasium.envs.registration import registry as _registry

__version__ = "0.3.0"

if "TienGow-v0" not in _registry:
    _register(id="TienGow-v0", entry_point="tiengow_env.gym_env:TienGowEnv")

_LAZY = {
    "Game": ("game", "Game"),
    "replay": ("game", "replay"),
    "perft": ("game", "perft"),
    "RuleSet": ("rules", "RuleSet"),
    "VectorEnv": ("vector", "VectorEnv"),
    "TienGowEnv": ("gym_env", "TienGowEnv"),
    "ObservationLayout": ("observation", "ObservationLayout"),
    "StateView": ("state", "StateView"),
    "tiengow_v0": ("env", None),
}

__all__ = sorted(_LAZY) + ["__version__"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'tiengow_env' has no attribute {name!r}")
    module_name, attribute = _LAZY[name]
    module = importlib.import_module(f".{module_name}", __name__)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value
