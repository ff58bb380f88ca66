"""The shipped configs, installed as package data: ``--config ppo`` finds ``ppo.yaml`` here."""
