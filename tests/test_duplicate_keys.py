"""A key given twice in any input (a record, a rules file, a config, --rules, --set, a CFR
policy's meta, an HTTP body) is refused with a message naming the key, never read as its last
value: which of the two the writer meant is unknown, and RULES.md refuses unknown keys too."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from scripted import MICRO, MICRO_ACTIONS

from tiengow import cli
from tiengow.agents.cfr import FORMAT, VERSION, load_policy
from tiengow.training.config import parse_overrides, read_settings
from tiengow_env.checks import DuplicateKeyError, load_json, load_yaml
from tiengow_env.game import RecordError, load_records
from tiengow_env.rules import RuleSet

GOOD = {"rules": "micro", "banker": 0, "hands": MICRO, "actions": MICRO_ACTIONS}


def twice(key: str, first: object) -> str:
    """GOOD as JSON text with ``key`` given once more, before its own value."""
    return json.dumps(GOOD).replace("{", "{" + json.dumps(key) + ": " + json.dumps(first) + ", ", 1)


def test_load_json_refuses_a_key_twice_at_any_depth_and_reads_everything_else():
    assert load_json('{"a": {"b": [1, {"c": 2}]}, "d": null}') == {"a": {"b": [1, {"c": 2}]}, "d": None}
    assert load_json(b'[{"a": 1}, {"a": 2}]') == [{"a": 1}, {"a": 2}]  # the same key in two objects
    for text in ('{"a": 1, "a": 1}', '{"x": [{"a": 1, "b": 2, "a": 3}]}'):
        with pytest.raises(DuplicateKeyError, match="the key 'a' appears twice"):
            load_json(text)


def test_load_yaml_refuses_a_key_twice_with_its_line_and_keeps_merges():
    assert load_yaml("a: 1\nb: {c: 2}\n") == {"a": 1, "b": {"c": 2}}
    assert load_yaml("base: &b {p: 1, q: 2}\nmine:\n  <<: *b\n  p: 3\n")["mine"] == {"p": 3, "q": 2}
    assert load_yaml("") is None
    for text, line in (("a: 1\nb: 2\na: 3\n", 3), ("x:\n  y: 1\n  y: 2\n", 3), ("{a: 1, a: 2}", 1)):
        with pytest.raises(yaml.YAMLError) as err:
            load_yaml(text)
        assert "appears twice" in str(err.value) and err.value.problem_mark.line + 1 == line


def test_a_record_with_a_key_twice_is_an_error_line_of_its_own(tmp_path, capsys):
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join([json.dumps(GOOD), twice("banker", 1), json.dumps(GOOD)]) + "\n")
    records = load_records(str(path))
    assert [isinstance(r, RecordError) for r in records] == [False, True, False]
    assert str(records[1]) == "line 2 is not a hand record: the key 'banker' appears twice in one object"
    assert cli.main(["replay", str(path)]) == 2
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [("error" in line) for line in lines] == [False, True, False]
    assert "'banker' appears twice" in lines[1]["error"]


def test_a_nested_key_twice_in_an_action_is_refused_too(tmp_path):
    text = json.dumps(GOOD).replace('{"seat": 0', '{"seat": 1, "seat": 0', 1)
    assert text != json.dumps(GOOD)
    path = tmp_path / "one.json"
    path.write_text(text)
    [record] = load_records(str(path))
    assert isinstance(record, RecordError) and "'seat' appears twice" in str(record)


@pytest.mark.parametrize(
    "suffix, text, says",
    [
        (
            ".yaml",
            "deck: micro\nlast_trick_bonus: false\nlast_trick_bonus: true\n",
            "the key 'last_trick_bonus' appears twice at line 3, column 1",
        ),
        (
            ".json",
            '{"deck": "micro", "last_trick_bonus": false, "last_trick_bonus": true}',
            "the key 'last_trick_bonus' appears twice in one object",
        ),
        (
            ".toml",
            'deck = "micro"\nlast_trick_bonus = false\nlast_trick_bonus = true\n',
            "Cannot overwrite a value (at line 3, column 24)",
        ),  # tomllib's own words
    ],
)
def test_a_rules_file_with_a_switch_twice_is_refused(tmp_path, capsys, suffix, text, says):
    path = tmp_path / f"rules{suffix}"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        RuleSet.from_spec(str(path))
    assert str(err.value) == f"rules file {str(path)!r} is not valid: {says}"
    assert cli.main(["rules", "--rules", str(path)]) == 2
    assert says in capsys.readouterr().err


def test_rules_given_as_json_on_the_command_line_with_a_switch_twice_are_refused(capsys):
    spec = '{"deck": "micro", "shutout_bonus": true, "shutout_bonus": false}'
    assert cli.main(["eval", "random", "--vs", "random", "--deals", "1", "--rules", spec]) == 2
    assert capsys.readouterr().err.strip() == (
        "tiengow: error: --rules is not a valid JSON object: the key 'shutout_bonus' appears twice in one object"
    )


def test_a_config_or_an_override_with_a_setting_twice_is_refused(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("lr: 1.0e-4\nminibatches: 4\nlr: 2.0e-4\n")
    with pytest.raises(
        ValueError,
        match=r"config .*mine.yaml is not valid YAML: the key 'lr' appears twice "
        r"at line 3, column 1",
    ):
        read_settings(str(path))
    with pytest.raises(ValueError, match=r"--set 'pool_weights=\{greedy: 1, greedy: 2\}': .*'greedy' appears twice"):
        parse_overrides(["pool_weights={greedy: 1, greedy: 2}"])
    assert parse_overrides(["pool_weights={greedy: 1, expert: 2}"]) == {"pool_weights": {"greedy": 1, "expert": 2}}


def test_a_cfr_policy_whose_meta_has_a_key_twice_is_refused(tmp_path):
    path = tmp_path / "policy.npz"
    meta = '{"rules": {"deck": "micro"}, "rules": {"deck": "standard"}}'
    np.savez(
        path,
        format=np.array(FORMAT),
        version=np.array(VERSION),
        kind=np.array("tabular"),
        meta=np.array(meta),
        policy=np.zeros(3),
        fingerprint=np.zeros(3),
        banker=np.array(0),
    )
    with pytest.raises(ValueError, match="the 'meta' entry is not a valid JSON object: the key 'rules' appears twice"):
        load_policy(str(path))
