"""Agents that play Tien Gow, built from spec strings: ``make_agent("expert", rules)``."""
from .base import REGISTRY, Agent, make_agent, register

__all__ = ["Agent", "REGISTRY", "make_agent", "register"]
