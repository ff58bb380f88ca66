"""The README runs as pasted: each Python block is executed, and each shell line of "The
command line" is run through the `tiengow` entry point, except the lines marked long below."""
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tiengow import cli

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")

# Lines of "The command line" that take minutes, each with why it is not run here.
LONG = {
    "tiengow demo": "the full demo ladder (50 deals of pimc against expert) takes about a minute",
    "tiengow bench --peers": "every figure and the peers take minutes, and the peers need the [peers] extra",
}


def blocks(language: str, text: str = README) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def command_lines() -> list[str]:
    section = README.split("## The command line", 1)[1].split("\n## ", 1)[0]
    (block,) = blocks("bash", section)
    lines = []
    for line in block.splitlines():
        command = line.split("  #", 1)[0].strip()  # a comment starts after two spaces
        if command:
            lines.append(command)
    return lines


def test_the_readme_has_what_the_tests_run():
    assert len(blocks("python")) >= 1
    lines = command_lines()
    assert len(lines) >= 10 and all(line.startswith("tiengow ") for line in lines)
    assert set(LONG) <= set(lines), "a line marked long is no longer in the README"


@pytest.mark.parametrize("number", range(len(blocks("python"))))
def test_python_block_runs_as_pasted(number, tmp_path):
    """In a fresh interpreter, from an unrelated folder, as a reader would paste it."""
    code = blocks("python")[number]
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]


@pytest.mark.parametrize("line", command_lines())
def test_command_line_runs_as_pasted(line, capsys, monkeypatch):
    """Through the entry point in this process (the console script calls the same main), from
    the checkout as the README says; outputs go to runs/, which git ignores."""
    if line in LONG:
        pytest.skip(LONG[line])
    monkeypatch.chdir(ROOT)
    argv = shlex.split(line)[1:]
    try:
        status = cli.main(argv)
    except SystemExit as done:  # --version
        status = done.code
    out = capsys.readouterr()
    assert status == 0, out.err[-2000:]
    assert out.out.strip() and "Traceback" not in out.err
