"""Shared fixtures: the public conformance records of the rules contract, kept in tests/data.

The records are a copy of the contract's own file (``../shared/conformance/records.jsonl`` beside
a checkout that has it); tests/data/README.md says how to refresh them. The copy makes a clone
complete: the same tests run, and the same number of them, with or without ``../shared``. When
``../shared`` is there, ``test_conformance.py`` also checks that the copy is current."""

import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
RECORDS = DATA / "conformance.jsonl"
SHARED_RECORDS = Path(__file__).resolve().parents[2] / "shared" / "conformance" / "records.jsonl"


def read_jsonl(path: Path) -> list[dict]:
    """Every non-blank line of a JSON Lines data file; a missing file is an error that names it
    (a test that needs data never passes or skips without it)."""
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: the tests need it (see tests/data/README.md)")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def conformance_lines() -> list[dict]:
    """The conformance records: {"record", "expected"} or {"record", "error": true, ...} lines."""
    return read_jsonl(RECORDS)


@pytest.fixture(scope="session")
def records_path() -> Path:
    """The path of the conformance records (checked to exist and to be readable)."""
    conformance_lines()
    return RECORDS
