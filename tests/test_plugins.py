"""Third-party agents: ``MODULE:FACTORY`` specs, the ``tiengow.agents`` entry points, ``tiengow agents``.

A plugin is duck typed (``FACTORY(rules, seed)`` returns an object with ``act`` and ``reset``)
and imports nothing of the project. It plays in ``eval`` (also in spawned workers), ``league``
and ``play``; every way a plugin can be broken ends in one line naming it.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tiengow.agents import agent_catalogue, make_agent
from tiengow.agents.arena import evaluate
from tiengow.cli import main

ROOT = Path(__file__).resolve().parent.parent


def readme_example() -> str:
    """The module that the docs' "Your own agents" section writes as mybots/lowest.py."""
    text = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    section = text.split("## Your own agents", 1)[1].split("\n## ", 1)[0]
    return re.search(r"cat > mybots/lowest.py <<'PY'\n(.*?)\nPY\n", section, re.S).group(1)


def write_module(folder: Path, name: str, source: str) -> None:
    path = folder.joinpath(*name.split(".")).with_suffix(".py")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))


def tiengow_command() -> list[str]:
    script = Path(sys.executable).parent / "tiengow"
    return [str(script)] if script.exists() else [sys.executable, "-m", "tiengow.cli"]


def test_readme_example_plays_in_eval_from_another_folder(tmp_path):
    # The README's module, written as mybots/lowest.py in a folder on PYTHONPATH; run from there,
    # one process, then with two spawned workers that rebuild it from its spec: same result.
    source = readme_example()
    assert "tiengow" not in source and "import" not in source  # it imports nothing of the project
    assert len(source.strip().splitlines()) <= 12
    write_module(tmp_path, "mybots.lowest", source)
    outputs = []
    for workers in ("1", "2"):
        run = subprocess.run(
            [
                *tiengow_command(),
                "eval",
                "mybots.lowest:make",
                "--vs",
                "random",
                "--deals",
                "20",
                "--workers",
                workers,
                "--json",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
        )
        assert run.returncode == 0, run.stderr
        outputs.append(json.loads(run.stdout.strip().splitlines()[-1]))
        assert outputs[-1].pop("ms_per_decision") > 0  # a measurement: it differs from run to run
    assert outputs[0] == outputs[1]
    assert outputs[0]["candidate"] == "mybots.lowest:make" and outputs[0]["deals"] == 20
    assert outputs[0]["ci95"][0] > 0  # the lowest action id leads the weakest play: still better than random


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    """A folder on sys.path for plugin modules (each test names its own, so none is cached)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


LOWEST = """
    class Lowest:
        def reset(self, seed):
            self.seed = seed

        def act(self, observation, mask, game=None):
            return int(mask.nonzero()[0][0])


    def make(rules, seed):
        return Lowest()
"""


def test_plugin_agent_is_duck_typed_and_gets_a_copy_of_the_game(plugins):
    # A bot that steps the game it is given must not change the hand being played.
    write_module(
        plugins,
        "pl_meddler",
        """
        class Meddler:
            def reset(self, seed):
                pass

            def act(self, observation, mask, game=None):
                action = int(mask.nonzero()[0][0])
                game.step(action)  # it plays on its copy
                return action


        def make(rules, seed):
            return Meddler()
    """,
    )
    write_module(plugins, "pl_lowest", LOWEST)
    agent = make_agent("pl_lowest:make", "standard", seed=4)
    assert agent.name == "pl_lowest:make" and agent.uses_game
    lowest = evaluate("pl_lowest:make", "random", 10, seed=3)
    meddler = evaluate("pl_meddler:make", "random", 10, seed=3)
    assert meddler.chips_per_hand == lowest.chips_per_hand and meddler.chips_by_seat == lowest.chips_by_seat


def test_plugin_plays_in_league_and_play(plugins, tmp_path, monkeypatch, capsys):
    write_module(plugins, "pl_league.bots", LOWEST)
    out = tmp_path / "league"
    assert main(["league", "random", "pl_league.bots:make", "--deals", "6", "--out", str(out)]) == 0
    table = json.loads(out.with_suffix(".json").read_text())
    assert set(table["cross_table"]["pl_league.bots:make"]) == {"random"}
    monkeypatch.setattr(sys, "stdin", io.StringIO("1\n" * 200))
    assert (
        main(["play", "--vs", "pl_league.bots:make", "--hands", "1", "--seed", "2", "--save", str(tmp_path / "match")])
        == 0
    )
    assert "Match over" in capsys.readouterr().out
    assert (tmp_path / "match" / "match.jsonl").exists()


BROKEN = [
    (
        "missing_module",
        "pl_nosuchmodule.bots:make",
        None,
        r"unknown agent 'pl_nosuchmodule\.bots:make': it is not a "
        r"built-in agent, and there is no module 'pl_nosuchmodule' to import",
    ),
    (
        "no_attribute",
        "pl_noattr:create",
        LOWEST,
        r"agent pl_noattr:create: module pl_noattr \(.*pl_noattr\.py\) has "
        r"no attribute 'create'",
    ),
    (
        "import_fails",
        "pl_badimport:make",
        "import pl_not_installed_dependency\n",
        r"agent pl_badimport:make: importing pl_badimport raised ModuleNotFoundError: No module named "
        r"'pl_not_installed_dependency' \(pl_badimport\.py:1\)",
    ),
    (
        "syntax_error",
        "pl_syntax:make",
        "def make(rules, seed) return 1\n",
        r"agent pl_syntax:make: importing pl_syntax raised SyntaxError: ",
    ),
    ("not_callable", "pl_notcallable:make", "make = 3\n", r"agent pl_notcallable:make: int object is not callable"),
    (
        "factory_raises",
        "pl_raises:make",
        "def make(rules, seed):\n    raise RuntimeError('needs a GPU')\n",
        r"agent pl_raises:make: the factory raised RuntimeError: needs a GPU \(pl_raises\.py:2\)",
    ),
    (
        "no_act",
        "pl_noact:make",
        "class Bot:\n    def reset(self, seed):\n        pass\n\n\ndef make(rules, seed):\n    return Bot()\n",
        r"agent pl_noact:make: its factory returned 'Bot', which has no "
        r"act\(observation, mask, game=None\) method",
    ),
    (
        "no_reset",
        "pl_noreset:make",
        "class Bot:\n    def act(self, observation, mask, game=None):\n"
        "        return 0\n\n\ndef make(rules, seed):\n    return Bot()\n",
        r"returned 'Bot', which has no reset\(seed\) method",
    ),
    (
        "illegal_action",
        "pl_illegal:make",
        LOWEST.replace("int(mask.nonzero()[0][0])", "len(mask) - 1"),
        r"agent pl_illegal:make chose 83, which is not a legal action here; legal: \d+ \(\w+ [^)]*\)"
        r"(, \d+ \(\w+ [^)]*\))*$",
    ),
    (
        "a_float",
        "pl_float:make",
        LOWEST.replace("int(mask.nonzero()[0][0])", "float(mask.nonzero()[0][0])"),
        r"agent pl_float:make: act\(\) must return an int action id, got float \d+\.0$",
    ),
    (
        "a_string",
        "pl_string:make",
        LOWEST.replace("int(mask.nonzero()[0][0])", "str(mask.nonzero()[0][0])"),
        r"agent pl_string:make: act\(\) must return an int action id, got str '\d+'$",
    ),
    (
        "a_bool",
        "pl_bool:make",
        LOWEST.replace("int(mask.nonzero()[0][0])", "True"),
        r"agent pl_bool:make: act\(\) must return an int action id, got bool True$",
    ),
    (
        "writes_its_mask",
        "pl_writer:make",
        LOWEST.replace("return int(mask.nonzero()[0][0])", "mask[0] = 1\n            return 0"),
        r"agent pl_writer:make: act\(\) wrote into the observation or mask it was given, which are read-only "
        r"\(pl_writer\.py:7\); copy them first",
    ),
    (
        "factory_signature",
        "pl_factorysig:make",
        LOWEST.replace("def make(rules, seed):", "def make(rules):"),
        r"agent pl_factorysig:make: make\(rules\) \(.*pl_factorysig\.py:\d+\) cannot be called as "
        r"FACTORY\(rules, seed\): too many positional arguments$",
    ),
    (
        "act_signature",
        "pl_actsig:make",
        LOWEST.replace("def act(self, observation, mask, game=None):", "def act(self, observation):"),
        r"agent pl_actsig:make: Lowest\.act\(observation\) \(.*pl_actsig\.py:\d+\) cannot be called as "
        r"act\(observation, mask, game=None\)",
    ),
    (
        "act_raises",
        "pl_actraises:make",
        LOWEST.replace("int(mask.nonzero()[0][0])", "1 // 0"),
        r"agent pl_actraises:make: act raised ZeroDivisionError: integer division or modulo by zero "
        r"\(pl_actraises\.py:\d+\)",
    ),
    # sys.exit in plugin code once ended the whole run silently, with its status
    (
        "act_exits",
        "pl_actexits:make",
        LOWEST.replace("int(mask.nonzero()[0][0])", "__import__('sys').exit(0)"),
        r"agent pl_actexits:make: act raised SystemExit: 0 \(pl_actexits\.py:\d+\)",
    ),
    (
        "factory_exits",
        "pl_factoryexits:make",
        "import sys\n\n\ndef make(rules, seed):\n    sys.exit(3)\n",
        r"agent pl_factoryexits:make: the factory raised SystemExit: 3 \(pl_factoryexits\.py:5\)",
    ),
    (
        "import_exits",
        "pl_importexits:make",
        "import sys\nsys.exit('bye')\n",
        r"agent pl_importexits:make: importing pl_importexits raised SystemExit: bye \(pl_importexits\.py:2\)",
    ),
    ("no_factory_name", "pl_lowest2:", LOWEST, r"agent 'pl_lowest2:': expected MODULE:FACTORY, such as mybots:make"),
    (
        "not_a_module_path",
        "my-bots:make",
        None,
        r"unknown agent 'my-bots:make'; agents are: .*greedy.*, "
        r"or MODULE:FACTORY for your own",
    ),
]


@pytest.mark.parametrize("spec, source, message", [case[1:] for case in BROKEN], ids=[case[0] for case in BROKEN])
def test_a_broken_plugin_stops_with_one_line_naming_it(plugins, capsys, spec, source, message):
    if source is not None:
        write_module(plugins, spec.partition(":")[0], source)
    assert main(["eval", spec, "--vs", "random", "--deals", "2"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert re.search(message, err.strip().removeprefix("tiengow: error: ")), err


def test_debug_shows_the_plugins_own_traceback(plugins, capsys, monkeypatch):
    write_module(
        plugins,
        "pl_debugged",
        LOWEST.replace("int(mask.nonzero()[0][0])", "helper()")
        + """

    def helper():
        return {}["missing key"]
    """,
    )
    monkeypatch.setenv("TIENGOW_DEBUG", "1")
    assert main(["eval", "pl_debugged:make", "--vs", "random", "--deals", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert re.search(r'pl_debugged\.py", line 7, in act\n.*pl_debugged\.py", line 15, in helper\n', err, re.S), err
    assert err.strip().splitlines()[-1] == (
        "tiengow: error: agent pl_debugged:make: act raised KeyError: 'missing key' (pl_debugged.py:15)"
    )
    monkeypatch.delenv("TIENGOW_DEBUG")
    assert main(["eval", "pl_debugged:make", "--vs", "random", "--deals", "2"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_entry_point_plugins_are_found_listed_and_never_hide_a_builtin(plugins, capsys):
    # A fake installed distribution on sys.path with two entry points in the group.
    documented = 'def make(rules, seed):\n    """lowest legal action id, from an installed package"""'
    write_module(plugins, "pl_dist_bots", textwrap.dedent(LOWEST).replace("def make(rules, seed):", documented))
    info = plugins / "pl_dist_bots-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pl-dist-bots\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[tiengow.agents]\npl_lowest = pl_dist_bots:make\ngreedy = pl_dist_bots:make\n"
    )
    agent = make_agent("pl_lowest", "standard")
    assert agent.name == "pl_lowest" and type(agent.bot).__name__ == "Lowest"
    assert type(make_agent("greedy")).__name__ == "GreedyAgent"  # the built-in wins
    with pytest.raises(ValueError, match="takes no argument"):
        make_agent("pl_lowest:3")
    rows = agent_catalogue()
    assert {
        "name": "pl_lowest",
        "kind": "plugin",
        "usage": "pl_lowest",
        "options": [],
        "description": "lowest legal action id, from an installed package",
    } in rows
    assert [row["kind"] for row in rows if row["name"] == "greedy"] == ["heuristic", "plugin"]
    assert main(["agents"]) == 0
    listing = capsys.readouterr().out
    assert re.search(r"^pl_lowest +plugin +lowest legal action id", listing, re.M)
    assert re.search(r"^greedy +plugin +entry point pl_dist_bots:make, hidden by the built-in 'greedy'", listing, re.M)
    assert (
        evaluate("pl_lowest", "random", 5, seed=1).chips_per_hand
        == evaluate("pl_dist_bots:make", "random", 5, seed=1).chips_per_hand
    )


def test_agents_command_lists_every_builtin_with_kind_and_one_line(capsys):
    assert main(["agents", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["agents"]
    kinds = {row["name"]: row["kind"] for row in rows}
    assert {name: kinds[name] for name in ("random", "greedy", "expert", "pimc", "cfr", "ppo", "MODULE:FACTORY")} == {
        "random": "heuristic",
        "greedy": "heuristic",
        "expert": "heuristic",
        "pimc": "search",
        "cfr": "learned",
        "ppo": "learned",
        "MODULE:FACTORY": "plugin",
    }
    assert all(row["description"] and "\n" not in row["description"] for row in rows)
