"""Every line of ../shared/conformance/records.jsonl, through `replay` and through the CLI."""
import json
import subprocess
import sys

import pytest
from conftest import conformance_lines

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
    run = subprocess.run([sys.executable, "-m", "tiengow.cli", "replay", str(path)],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 2  # the file holds illegal records too
    assert "Traceback" not in run.stderr
    out = [json.loads(o) for o in run.stdout.splitlines()]
    assert len(out) == len(lines)
    for line, got in zip(lines, out):
        if line.get("error"):
            assert set(got) == {"error", "action_index"} and got["error"]
        else:
            assert {k: got[k] for k in KEYS} == {k: line["expected"][k] for k in KEYS}
