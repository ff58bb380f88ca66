"""Every line of the conformance records (tests/data/conformance.jsonl), through `replay` and
through the CLI; and the copy is current when the rules contract's own file is beside the checkout."""

import json
import subprocess
import sys

import pytest
from conftest import RECORDS, SHARED_RECORDS, conformance_lines, read_jsonl

from tiengow_env.game import RecordError, replay

KEYS = ("columns", "last_trick_winner", "trick_bonus", "settlement", "net", "multipliers", "tricks")
LINES = conformance_lines()


@pytest.mark.parametrize("line", LINES, ids=[f"{i + 1}-{line.get('tag')}" for i, line in enumerate(LINES)])
def test_record(line):
    if line.get("error"):
        with pytest.raises(RecordError):
            replay(line["record"])
        return
    got = replay(line["record"])
    assert {k: got[k] for k in KEYS} == {k: line["expected"][k] for k in KEYS}


def test_cli_replays_the_whole_file(records_path, tmp_path):
    lines = conformance_lines()
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(line["record"]) + "\n" for line in lines))
    run = subprocess.run(
        [sys.executable, "-m", "tiengow.cli", "replay", str(path)], capture_output=True, text=True, check=False
    )
    assert run.returncode == 2  # the file holds illegal records too
    assert "Traceback" not in run.stderr
    out = [json.loads(o) for o in run.stdout.splitlines()]
    assert len(out) == len(lines)
    for line, got in zip(lines, out):
        if line.get("error"):
            assert set(got) == {"error", "action_index"} and got["error"]
        else:
            assert {k: got[k] for k in KEYS} == {k: line["expected"][k] for k in KEYS}


def test_the_copy_has_every_record_of_the_contract():
    """``../shared`` may add checks, never remove them: a record of the contract's file that the
    copy lacks fails here, naming the refresh, instead of going unchecked."""
    if not SHARED_RECORDS.exists():
        pytest.skip(f"no rules contract beside the checkout ({SHARED_RECORDS}); the copy in {RECORDS.name} is used")
    ours = {json.dumps(line, sort_keys=True) for line in conformance_lines()}
    theirs = read_jsonl(SHARED_RECORDS)
    missing = [n for n, line in enumerate(theirs, 1) if json.dumps(line, sort_keys=True) not in ours]
    assert not missing, (
        f"{len(missing)} lines of {SHARED_RECORDS} (first: line {missing[0]}) are not in {RECORDS}: "
        f"cp {SHARED_RECORDS} {RECORDS}"
    )
