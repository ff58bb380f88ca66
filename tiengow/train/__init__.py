"""The training commands: ``tiengow train ppo|distill|locator|cfr``, ``tiengow exploit``, ``tiengow nashconv``.

Each module here is the argparse side of one trainer of ``tiengow.training``: a parser and a
handler ``(args) -> exit status`` that raises ValueError for people. What they share lives in
``common``.
"""

from __future__ import annotations

import argparse

from . import cfr, distill, exploit, locator, ppo


def add_parsers(subparsers: argparse._SubParsersAction) -> None:
    """Add ``train`` (ppo, distill, locator, cfr), ``exploit`` and ``nashconv`` to the ``tiengow`` parser."""
    train = subparsers.add_parser(
        "train",
        help="train an agent: cfr (CFR+, CFR, MCCFR), ppo, distill (a search bot "
        "into a network), or locator (where the hidden tiles lie)",
    )
    algorithms = train.add_subparsers(dest="algorithm", metavar="ALGORITHM")
    algorithms.required = True
    cfr.add_parsers(subparsers, algorithms)
    ppo.add_parser(algorithms)
    distill.add_parser(algorithms)
    locator.add_parser(algorithms)
    exploit.add_parser(subparsers)
