"""Shared fixtures: the conformance records beside the repository (../shared)."""
import json
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
RECORDS = SHARED / "conformance" / "records.jsonl"


def conformance_lines() -> list[dict]:
    if not RECORDS.exists():
        return []
    return [json.loads(line) for line in RECORDS.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="session")
def records_path() -> Path:
    if not RECORDS.exists():
        pytest.skip(f"no conformance file at {RECORDS}")
    return RECORDS
