"""Commands without output options write only under runs/ of the current folder: in a clone of
the checkout they leave `git status` empty, outside it they make nothing but runs/, and they
never write into the installed package."""

import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tiengow import cli

ROOT = Path(__file__).resolve().parents[1]  # the checkout the package is installed from


def git_status(folder: Path) -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=folder,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@pytest.fixture
def clone(tmp_path):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout")
    target = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--local", str(ROOT), str(target)], check=True)
    return target


def test_default_outputs_leave_the_checkout_clean(clone, monkeypatch, capsys):
    package_before = git_status(ROOT)
    monkeypatch.chdir(clone)
    monkeypatch.setattr(sys, "stdin", io.StringIO("1\n" * 60))
    commands = [
        ["train", "cfr", "--config", "configs/cfr_micro.yaml", "--iterations", "2"],
        ["bench", "--quick", "--only", "memory"],
        ["play", "--vs", "random", "--hands", "1", "--seed", "1"],
        ["league", "random", "greedy", "--deals", "2"],
    ]
    for argv in commands:
        assert cli.main(argv) == 0, argv
    printed = capsys.readouterr()
    assert git_status(clone) == ""  # the shipped cfr_micro.npz, benchmarks/results/latest.* untouched
    assert sorted(p.name for p in (clone / "runs").iterdir()) == ["bench", "league", "play", "train-cfr"]
    (policy,) = (clone / "runs" / "train-cfr").glob("*/cfr_micro.npz")
    assert f"wrote {policy.relative_to(clone)}" in printed.out
    (league,) = (clone / "runs" / "league").glob("*/league.json")
    assert f"wrote {league.relative_to(clone)}" in printed.out
    assert git_status(ROOT) == package_before  # nothing written into the installed package


def test_outside_a_checkout_nothing_but_runs_appears(clone, tmp_path, monkeypatch, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert cli.main(["train", "cfr", "--config", str(clone / "configs" / "cfr_micro.yaml"), "--iterations", "1"]) == 0
    assert [p.name for p in elsewhere.iterdir()] == ["runs"]  # no ./agents/policies/
