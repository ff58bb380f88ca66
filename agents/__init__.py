"""Agents that play Tien Gow, built from spec strings: ``make_agent("expert", rules)``.

Specs (built-in names, installed plugins, ``MODULE:FACTORY``) are documented in ``base.py``.
"""

from .base import BUILTIN, KINDS, Agent, PluginAgent, agent_catalogue, describe_agent, make_agent

__all__ = ["Agent", "BUILTIN", "KINDS", "PluginAgent", "agent_catalogue", "describe_agent", "make_agent"]
