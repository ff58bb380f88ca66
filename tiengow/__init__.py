"""tiengow: the layers above the game core.

The installed import names are ``tiengow_env`` (the core: tables, kernels, ``Game``, the
environments) and ``tiengow``, which maps the checkout's folders below one project-unique name:

    tiengow.agents       agents/        bots, and the loaders of the shipped models
    tiengow.training     training/      trainers (PPO, CFR); they write models in the agents' format
    tiengow.benchmarks   benchmarks/    throughput figures, beside peer platforms
    tiengow.cli          tiengow/cli.py the ``tiengow`` command
    tiengow.ui           tiengow/ui/    ``tiengow play`` and ``tiengow show`` in a terminal

Imports run one way: tiengow_env < agents < training < cli, ui, benchmarks.
"""

from tiengow_env import __version__

__all__ = ["__version__"]
