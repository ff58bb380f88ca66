"""Agents that play Tien Gow, built from spec strings: ``make_agent("expert", rules)``.

Specs (built-in names, installed plugins, ``MODULE:FACTORY``) are documented in ``base.py``.
"""
from .base import KINDS, REGISTRY, Agent, PluginAgent, agent_catalogue, make_agent, register

__all__ = ["Agent", "KINDS", "PluginAgent", "REGISTRY", "agent_catalogue", "make_agent", "register"]
