"""The wheel, as a user installs it: only ``tiengow_env`` and ``tiengow``, working from any folder.

Slow (a wheel build, a fresh venv and cold numba compiles: about 4 minutes here), so marked
``slow``: ``python -m pytest -m slow tests/test_wheel.py``. The venv sees the system's
site-packages (numpy, numba, torch, ...) but imports tiengow from the wheel, which the test
checks. Every command runs from an unrelated folder, and site-packages is listed before and
after: a command must write only where it was told to.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent


def run(command: list[str], cwd: Path, timeout: int = 900, cache: Path | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def listing(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv python, venv tiengow script, site-packages, the wheel) after a build and an install."""
    base = tmp_path_factory.mktemp("wheel")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(base / "dist"), str(ROOT)], base)
    wheel = next((base / "dist").glob("tiengow-*.whl"))
    run([sys.executable, "-m", "venv", "--system-site-packages", str(base / "venv")], base)
    python = base / "venv" / "bin" / "python"
    run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], base)
    site = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], base).strip())
    return python, base / "venv" / "bin" / "tiengow", site, wheel


def test_the_wheel_holds_only_the_two_project_names(installed):
    _, _, _, wheel = installed
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"tiengow", "tiengow_env"}
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "tiengow/configs/ppo.yaml",
        "tiengow/configs/champion.yaml",
        "tiengow/configs/cfr_micro.yaml",
        "tiengow/agents/policies/ppo.pt",
        "tiengow/agents/policies/cfr_standard.npz",
    } <= names


@pytest.fixture(scope="module")
def session(installed, tmp_path_factory):
    """Every command of the check, run once from an unrelated folder: (outputs, site-packages
    listing before, after)."""
    python, tiengow, site, _ = installed
    folder, cache = tmp_path_factory.mktemp("elsewhere"), tmp_path_factory.mktemp("cache")
    where = run(
        [str(python), "-c", "import tiengow, tiengow_env; print(tiengow.__file__, tiengow_env.__file__)"], folder
    ).split()
    before = listing(site)
    out = {"where": where, "version": run([str(tiengow), "--version"], folder)}
    out["train"] = run(
        [str(tiengow), "train", "cfr", "--config", "cfr_micro", "--out", "X.npz", "--json"], folder, cache=cache
    )
    for name, spec, rules in (("cfr", "cfr", []), ("ppo", "ppo", []), ("micro", "cfr:X.npz", ["--rules", "micro"])):
        opponent = "random" if name == "micro" else "greedy"
        out[name] = run(
            [str(tiengow), "eval", spec, "--vs", opponent, "--deals", "50", "--json", *rules], folder, cache=cache
        )
    out["environ"] = run(
        [
            str(python),
            "-c",
            "import os, tiengow_env; from tiengow_env import game; print(os.environ.get('NUMBA_CACHE_DIR'))",
        ],
        folder,
        cache=cache,
    )
    out["cached"] = sorted(path.name.split("-")[0] for path in cache.rglob("*.nbi"))
    return out, before, listing(site), site, folder


def test_commands_work_from_an_unrelated_folder(session):
    out, _, _, site, folder = session
    assert all(path.startswith(str(site)) for path in out["where"])  # the wheel's copy, not a checkout
    assert out["version"].strip().startswith("tiengow ")
    summary = json.loads(out["train"].strip().splitlines()[-1])
    assert summary["algorithm"] == "cfr+" and summary["rules_name"] == "micro" and (folder / "X.npz").exists()
    for name in ("cfr", "ppo", "micro"):
        result = json.loads(out[name].strip().splitlines()[-1])
        assert result["deals"] == 50 and result["ci95"][0] > 0, (name, result)  # each beats its baseline


def test_nothing_is_written_into_site_packages(session):
    _, before, after, _, _ = session
    assert sorted(after - before) == []


def test_the_kernels_are_cached_in_the_users_cache_folder_and_nothing_is_set_for_the_process(session):
    out = session[0]
    assert out["environ"].strip() == "None"
    assert "_kernels.deal" in out["cached"]
    assert any(name.startswith("_cfr_kernels.") for name in out["cached"])  # the training layer's kernels too
