"""Agent specs: one parser onto each bot's frozen config, one error format, ``tiengow agents``."""

import ast
import dataclasses
import json
from pathlib import Path

import pytest

from tiengow.agents import make_agent
from tiengow.agents.base import BUILTIN, builtin
from tiengow.agents.search import ChampionConfig, IsmctsConfig, PimcConfig, SearchConfig
from tiengow.agents.spec import field_docs, option_rows, parse_spec
from tiengow.cli import main

PARSED = [  # (name, argument, the config it parses to)
    ("pimc", None, PimcConfig()),
    ("pimc", "64", PimcConfig(samples=64)),
    ("pimc", "064:epsilon=0.5:halving=1", PimcConfig(samples=64, epsilon=0.5, halving=True)),
    ("pimc", "paired=1:samples=8", PimcConfig(samples=8, paired=True)),
    ("ismcts", "50:c=0.7", IsmctsConfig(iterations=50, c=0.7)),
    ("search", "2", SearchConfig(budget=2.0)),
    ("champion", "locate=0:weight=0", ChampionConfig(locate=0.0, weight=0.0)),
    ("champion", "16:prior=C:\\models\\p.pt", ChampionConfig(samples=16, prior="C:\\models\\p.pt")),
]


@pytest.mark.parametrize("name, argument, expected", PARSED)
def test_a_spec_parses_onto_its_config(name, argument, expected):
    assert parse_spec(name, argument, builtin(name).config) == expected


REFUSED = [  # (spec, the one-line error)
    ("Expert", "unknown agent 'Expert' (did you mean 'expert'?); agents are: "),
    ("expert ", "unknown agent 'expert ' (did you mean 'expert'?)"),
    (
        "pimc:16:epsilom=0.5",
        "unknown option 'epsilom' (did you mean 'epsilon'?); pimc takes samples, epsilon, halving, paired",
    ),
    ("pimc:0", "samples is a whole number from 1 to 1,000,000,000, got samples=0"),
    ("pimc:2.5", "samples is a whole number from 1 to 1,000,000,000, got samples=2.5"),
    ("pimc:16:epsilon=nan", "epsilon is a number from 0.0 to 1.0, got epsilon=nan"),
    ("pimc:16:halving=2", "halving is 0 or 1, got halving=2"),
    ("pimc:16:halving=1:halving=0", "halving is given twice"),
    ("pimc:16:halving", "halving needs a value, as in halving=VALUE"),
    ("pimc:16:fast", "'fast' is not KEY=VALUE"),
    ("pimc:16:epsilon=", "epsilon needs a value"),
    ("pimc:64,random", "samples is a whole number"),  # the old SAMPLES,POLICY spelling went
    ("pimc:16:rollout=expert", "unknown option 'rollout'"),  # a lost option went
    ("champion:value=0.5", "unknown option 'value'"),
    ("expert:3", "agent 'expert' takes no options, got 'expert:3'"),
    ("pimc:", "ends with ':' and nothing after it"),
    ("ismcts:20000000", "iterations is a whole number from 1 to 10,000,000"),
]


@pytest.mark.parametrize("spec, message", REFUSED)
def test_a_bad_spec_is_one_line_saying_what_was_expected(spec, message):
    with pytest.raises(ValueError) as err:
        make_agent(spec)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_every_option_has_a_one_line_doc_and_a_default_in_range():
    for name in BUILTIN:
        config = builtin(name).config
        if config is None:
            continue
        assert dataclasses.is_dataclass(config) and config.__dataclass_params__.frozen
        assert set(field_docs(config)) == {f.name for f in dataclasses.fields(config)}, name
        for row in option_rows(config):
            assert row["doc"] and row["type"] in ("int", "float", "bool", "path", "choice")
            if row["type"] in ("int", "float"):
                assert row["range"][0] <= row["default"] <= row["range"][1], (name, row)


def test_base_resolves_builtins_lazily_without_importing_them():
    source = Path(__file__).resolve().parents[1] / "agents" / "base.py"
    imported = {
        node.module
        for node in ast.walk(ast.parse(source.read_text()))
        if isinstance(node, ast.ImportFrom) and node.level == 1
    }
    assert imported == {"spec"}  # the bots' modules are named in BUILTIN as data


def test_agents_json_has_the_keys_the_docs_read(capsys):
    assert main(["agents", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)["agents"]}
    assert set(rows["pimc"]) == {"name", "kind", "usage", "description", "options"}
    assert rows["pimc"]["usage"] == "pimc[:SAMPLES][:KEY=VALUE]..."
    assert rows["pimc"]["options"][0] == {
        "key": "samples",
        "type": "int",
        "default": 32,
        "range": [1, 10**9],
        "doc": "worlds each legal action is played out in (in all, with halving)",
    }
    assert [o["key"] for o in rows["champion"]["options"]] == [
        "samples",
        "weight",
        "epsilon",
        "locate",
        "particles",
        "exact",
        "locator",
        "prior",
        "depth",
    ]


def test_agents_spec_prints_the_full_config_or_the_one_line_error(capsys):
    assert main(["agents", "pimc:64:epsilon=0.5", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["kind"] == "search" and found["config"] == {
        "samples": 64,
        "epsilon": 0.5,
        "halving": False,
        "paired": False,
    }
    assert main(["agents", "search:2"]) == 0
    assert "budget = 2.0" in capsys.readouterr().out
    assert main(["agents", "pimc:16:epsilom=0.5"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tiengow: error:") and "did you mean 'epsilon'" in err and "\n" not in err


def test_agents_spec_resolves_a_plugin_given_by_module(tmp_path, monkeypatch, capsys):
    (tmp_path / "pl_spec_bots.py").write_text(
        "class Lowest:\n    def act(self, observation, mask, game=None):\n"
        "        return int(mask.nonzero()[0][0])\n\n"
        "    def reset(self, seed):\n        pass\n\n\n"
        "def make(rules, seed):\n    return Lowest()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["agents", "pl_spec_bots:make", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["kind"] == "plugin" and found["config"] is None and "Lowest" in found["description"]
    assert main(["agents", "pl_spec_bots:nothing"]) == 2
    assert "has no attribute 'nothing'" in capsys.readouterr().err
