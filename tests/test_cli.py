"""The command line: rules cards, exact tree sizes, demo, bench, and one-line errors."""

import argparse
import io
import itertools
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tiengow.agents.infra import install_hint
from tiengow.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "tiengow" / "examples"  # shipped with the package


def run(capsys, *argv):
    status = main(list(argv))
    out = capsys.readouterr()
    return status, out.out, out.err


def test_rules_lists_presets(capsys):
    status, out, _ = run(capsys, "rules")
    assert status == 0
    for preset in ("standard", "culin1895", "hongkong", "three_player", "micro", "seed001"):
        assert preset in out


@pytest.mark.parametrize("preset, combos", [("standard", 61), ("three_player", 58), ("micro", 17), ("seed001", 1617)])
def test_rules_card_json(capsys, preset, combos):
    status, out, _ = run(capsys, "rules", preset, "--json")
    card = json.loads(out)
    assert status == 0 and len(card["combinations"]) == combos
    assert card["switches"]["players"] in (3, 4)


def test_rules_card_text_names_classes(capsys):
    status, out, _ = run(capsys, "rules", "--rules", '{"civilian_triplets": true}')
    assert status == 0 and "civilian_triplet" in out and "quartet" in out


def test_rules_card_refuses_a_preset_and_rules_together(capsys):
    status, out, err = run(capsys, "rules", "micro", "--rules", "hongkong")
    assert status == 2 and out == ""
    assert "a preset name ('micro') or --rules ('hongkong'), not both" in err


def test_micro_tree_sizes(capsys):
    """1,440 distinct deals: 2,520 physical splits, with the two 6-6 together in 360 of them."""
    status, out, _ = run(capsys, "tree", "--rules", "micro", "--json")
    stats = json.loads(out)
    assert status == 0
    assert stats["deals"] == 1440
    assert stats["decision_nodes"] == 67755 and stats["infosets"] == 1851


def test_tree_refuses_large_games(capsys):
    status, _, err = run(capsys, "tree", "--rules", "standard")
    assert status == 2 and "\n" == err[-1] and err.count("\n") == 1
    assert "standard has 462,750,885,101,340 distinct deals: its tree is too large to walk" in err


DECK16 = "6-6 6-6 1-1 1-1 3-1 6-3 5-4 4-2 3-2 2-1 5-5 4-4 3-3 2-2 6-5 6-4".split()


@pytest.mark.parametrize("players, deck", [(4, DECK16[:8]), (3, DECK16[:6]), (3, DECK16[:12]), (4, DECK16)])
def test_the_deals_are_counted_without_listing_them(players, deck):
    from tiengow_env.rules import RuleSet
    from tiengow_env.tree import count_deals, distinct_deals

    rules = RuleSet(deck=tuple(deck), players=players, one_red_dot="off")
    listed = sum(1 for _ in itertools.islice(distinct_deals(rules), 20_000))
    assert count_deals(rules) == listed or (listed == 20_000 and count_deals(rules) > 20_000)


def test_a_custom_deck_whose_tree_is_too_large_is_refused_before_the_walk(capsys):
    """A 16-tile deck for four (16 s a deal) and a 12-tile deck for three (14,070 deals, thousands
    of nodes each) are refused in seconds, and so is a small tree above its --max-nodes."""
    for rules in ({"deck": DECK16, "one_red_dot": "off"}, {"deck": DECK16[:12], "players": 3, "one_red_dot": "off"}):
        started = time.perf_counter()
        status, out, err = run(capsys, "tree", "--rules", json.dumps(rules))
        assert status == 2 and out == "" and "its tree is too large to walk" in err and "--max-nodes" in err
        assert time.perf_counter() - started < 30
    small = ["tree", "--rules", json.dumps({"deck": DECK16[:6], "players": 3, "one_red_dot": "off"})]
    status, _, err = run(capsys, *small, "--max-nodes", "329")  # 33 deals, 10 nodes in the first: 330 at least
    assert status == 2 and "has 33 distinct deals and more than 9 decision nodes in the first" in err
    status, _, err = run(capsys, *small, "--max-nodes", "400")  # the first deal makes it look small enough
    assert status == 2 and "the walk passed --max-nodes 400 decision nodes before its last deal" in err
    status, out, _ = run(capsys, *small, "--max-nodes", "594", "--json")
    assert status == 0 and json.loads(out)["decision_nodes"] == 594 and json.loads(out)["deals"] == 33


@pytest.mark.parametrize(
    "argv, words",
    [
        (["rules", "nonsense"], "unknown preset"),
        (["rules", "--rules", '{"banker_streak": true}'], "banker_double"),
        (["demo", "--rules", "missing.yaml"], "does not exist"),
        (["eval", "expert", "--vs", "nobody"], "unknown agent"),
        (["replay", "/no/such/file.jsonl"], "cannot read"),
    ],
)
def test_errors_are_one_line(capsys, argv, words):
    status, _, err = run(capsys, *argv)
    assert status == 2
    assert words in err and "Traceback" not in err and err.count("\n") == 1


def test_a_missing_optional_package_is_named_with_its_extra(capsys, monkeypatch):
    import sys

    monkeypatch.delitem(sys.modules, "tiengow.training.ppo", raising=False)
    monkeypatch.setitem(sys.modules, "torch", None)  # as if PyTorch were not installed
    status, _, err = run(capsys, "train", "ppo", "--set", "total_steps=1")
    assert status == 2
    assert err == f"tiengow: error: this command needs torch, which is not installed; {install_hint('train')}\n"
    assert "pip install -e" in install_hint("train")  # this checkout is an editable install


def test_install_hints_fit_the_install(monkeypatch, tmp_path):
    """An editable install is told the checkout's path; an install from a wheel the extra by name."""
    from tiengow.agents import infra

    checkout = Path(infra.__file__).resolve().parents[1]
    assert install_hint("ray") == f'pip install -e "{checkout}[ray]"'
    monkeypatch.setattr(infra, "__file__", str(tmp_path / "site-packages" / "tiengow" / "agents" / "infra.py"))
    assert install_hint("train") == 'pip install "tiengow[train]"'


def test_demo_prints_a_hand_and_throughput(capsys):
    status, out, _ = run(capsys, "demo", "--hands", "2000", "--deals", "3", "--seed", "3")
    assert status == 0
    assert "banker seat" in out and "hands/s" in out and "net chips" in out and "pimc    vs expert" in out


# ----------------------------------------------------------------------------- options and errors
def all_parsers():
    """(name, parser) of every command and sub-command of ``tiengow``."""
    from tiengow.cli import build_parser

    todo, found = [("tiengow", build_parser())], []
    while todo:
        name, parser = todo.pop()
        found.append((name, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo += [(f"{name} {sub}", p) for sub, p in action.choices.items()]
    return found


def test_every_option_has_help_with_its_default():
    missing = []
    for name, parser in all_parsers():
        formatter = parser._get_formatter()
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)):
                continue
            text = formatter._expand_help(action) if action.help else ""
            if not text:
                missing.append(f"{name} {action.dest}: no help")
            elif (
                action.default is not None
                and action.default is not False
                and not action.required
                and "default" not in text
            ):
                missing.append(f"{name} {action.dest}: default {action.default!r} not said")
    assert len(all_parsers()) >= 14
    assert not missing, missing


@pytest.mark.parametrize(
    "argv, where",
    [
        (["train", "cfr", "--config", "cfr_micro", "--set", "iterations=2"], "tiengow train cfr --help"),
        (["eval", "greedy", "--vs", "random", "--bogus"], "tiengow eval --help"),
        (["rules", "micro", "extra"], "tiengow rules --help"),
    ],
)
def test_an_unknown_word_points_at_the_help_of_its_sub_command(capsys, argv, where):
    status, _, err = run(capsys, *argv)
    assert status == 2 and err.startswith("tiengow: error: unrecognized arguments: ")
    assert err.endswith(f"(see {where})\n")


def test_every_help_text_reads_as_printed():
    # argparse expands %-escapes in an option's help, not in a description: there "%%" stays "%%"
    doubled = [name for name, parser in all_parsers() if "%%" in parser.format_help()]
    assert not doubled, doubled


BAD_YAML = "a: [1, 2\nb: }\n"


@pytest.mark.parametrize(
    "argv, words",
    [
        (["eval", "greedy", "--vs", "random", "--workers", "0"], "--workers"),
        (["eval", "greedy", "--vs", "random", "--workers", "-3"], "--workers"),
        (["eval", "greedy", "--vs", "random", "--seed", "-1"], "--seed"),
        (["eval", "greedy", "--vs", "random", "--deals", "0"], "--deals"),
        (["eval", "greedy", "--vs", "random", "--deals", "many"], "--deals"),
        (["league", "random", "greedy", "--workers", "0"], "--workers"),
        (["demo", "--hands", "0"], "--hands"),
        (["tree", "--banker", "-1"], "--banker"),
        (["perft", "x.json", "--depth", "-1"], "--depth"),
        (["play", "--hands", "0"], "--hands"),
        (["play", "--seed", "-5"], "--seed"),
        (["show", "x.json", "--index", "0"], "--index"),
        (["train", "cfr", "--config", "cfr_micro.yaml", "--iterations", "0"], "--iterations"),
        (["nashconv", "uniform", "--banker", "-1"], "--banker"),
        (
            ["rules", "--rules", '{"preset": '],
            "--rules is not a valid JSON object: Expecting value at line 1, column 12",
        ),
        (["eval", "greedy", "--vs", "random", "--rules", "{BAD}"], "--rules is not a valid JSON object"),
        (["eval", "greedy", "--vs", "random", "--rules", "BAD.yaml"], "at line 2, column 2"),
        (["train", "cfr", "--config", "BAD.yaml"], "config BAD.yaml is not valid YAML"),
        (["eval", "ppo:GARBAGE.pt", "--vs", "random", "--deals", "1"], "is not a readable PPO checkpoint"),
        (["bench", "--only", "nosuch"], "names are: core_hands_per_s"),
        (["league", "random", "greedy", "--deals", "1", "--out", "FILE/x"], "--out FILE/x"),
        (["train", "cfr", "--config", "cfr_micro.yaml", "--out", "FILE/p.npz"], "--out FILE/p.npz"),
        (["play", "--vs", "random", "--save", "FILE/match"], "--save FILE/match"),
        (["bench", "--save", "FILE/b"], "--save FILE/b"),
        (["replay", "--check", "nosuch.jsonl"], "cannot read nosuch.jsonl"),
    ],
)
def test_bad_inputs_get_one_short_message(argv, words, capsys, monkeypatch, tmp_path):
    """At most three lines on stderr naming what was wrong, no traceback, a non-zero exit, and no
    long work first (the league, the bench and the trainer would fail this test if started)."""
    from tiengow.agents import arena
    from tiengow.benchmarks import bench
    from tiengow.training import cfr

    monkeypatch.chdir(tmp_path)
    (tmp_path / "BAD.yaml").write_text(BAD_YAML)
    (tmp_path / "GARBAGE.pt").write_bytes(bytes(range(256)) * 2)
    (tmp_path / "FILE").write_text("a file, not a folder")
    (tmp_path / "cfr_micro.yaml").write_text("algorithm: cfr+\nrules: micro\niterations: 2\n")

    def no_work(*args, **kwargs):
        raise AssertionError("the work started before the bad input was refused")

    monkeypatch.setattr(arena, "league", no_work)
    monkeypatch.setattr(bench, "measure", no_work)
    monkeypatch.setattr(cfr, "train", no_work)
    status, out, err = run(capsys, *argv)
    assert status != 0
    assert words in err and "Traceback" not in err
    assert 1 <= len(err.splitlines()) <= 3 and len(err) < 400, err


def test_parse_errors_are_one_line_in_the_common_form(capsys):
    status, _, err = run(capsys, "eval", "greedy", "--vs", "random", "--workers", "0")
    assert status == 2
    assert err == (
        "tiengow: error: argument --workers: must be an integer from 1 to 256, got 0 (see tiengow eval --help)\n"
    )


def test_version(capsys):
    from tiengow_env import __version__

    status, out, _ = run(capsys, "--version")
    assert status == 0 and out == f"tiengow {__version__}\n"


def test_python_dash_m_tiengow_is_the_command(tmp_path):
    from tiengow_env import __version__

    done = subprocess.run(
        [sys.executable, "-m", "tiengow", "--version"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout == f"tiengow {__version__}\n", done.stderr


def test_a_closed_pipe_ends_quietly(tmp_path):
    """`tiengow replay F | head -1`: the reader goes away after one line; no traceback. The file
    is long enough (about 1 MB of results) that the writer meets the closed pipe."""
    records = (EXAMPLES / "match.jsonl").read_text() * 400
    (tmp_path / "many.jsonl").write_text(records)
    command = f"{shlex.quote(sys.executable)} -m tiengow.cli replay {tmp_path / 'many.jsonl'} | head -1"
    run = subprocess.run(["bash", "-c", "set -o pipefail; " + command], capture_output=True, text=True, timeout=300)
    assert run.stdout.count("\n") == 1 and run.stdout.startswith("{")
    assert run.stderr == ""
    assert run.returncode == 141  # 128 + SIGPIPE, as for any program the pipe closed on


# ----------------------------------------------------------------------------- replay --check
def test_replay_check_agrees_with_the_conformance_file(records_path, capsys):
    status, out, _ = run(capsys, "replay", "--check", str(records_path))
    lines = out.splitlines()
    total = len([x for x in records_path.read_text().splitlines() if x.strip()])
    assert status == 0
    assert lines[-1] == f"{records_path}: {total} of {total} lines agree"
    assert len(lines) == total + 1 and all(line.endswith(": agrees") for line in lines[:-1])


def test_replay_check_reports_each_disagreement(tmp_path, capsys):
    good = [json.loads(x) for x in (EXAMPLES / "check.jsonl").read_text().splitlines()]
    wrong_net = json.loads(json.dumps(good[0]))
    wrong_net["expected"]["net"] = [0, 0, 0, 0]
    wrong_tricks = json.loads(json.dumps(good[1]))
    wrong_tricks["expected"]["tricks"][0]["winner"] = (wrong_tricks["expected"]["tricks"][0]["winner"] + 1) % 4
    must_refuse = {"record": good[0]["record"], "error": True, "reason": "a test says so"}
    path = tmp_path / "check.jsonl"
    path.write_text(
        "\n".join(json.dumps(x) for x in [good[0], wrong_net, wrong_tricks, must_refuse, {"x": 1}]) + "\nnot json\n"
    )
    status, out, _ = run(capsys, "replay", "--check", str(path))
    lines = out.splitlines()
    assert status == 1
    assert lines[0] == "line 1 (example): agrees"
    assert lines[1].startswith("line 2 (example): net: got [") and lines[1].endswith("expected [0, 0, 0, 0]")
    assert lines[2] == "line 3 (example): tricks differ"
    assert lines[3] == "line 4: accepted, but must be refused: a test says so"
    assert lines[4].startswith("line 5: not a check line")
    assert lines[5].startswith("line 6: line 6 is not JSON")
    assert lines[6] == f"{path}: 1 of 6 lines agree, 5 do not"


# ----------------------------------------------------------------------------- the first run
def test_a_cold_numba_cache_is_detected(monkeypatch, tmp_path):
    from tiengow.cli import core_cache_is_cold
    from tiengow_env import _kernels
    from tiengow_env.game import Game

    Game(seed=0)  # deals: the core kernel is compiled and cached, if it was not yet
    assert _kernels.deal.signatures and core_cache_is_cold() is False
    index = _kernels.deal._cache._cache_file
    monkeypatch.setattr(index, "_source_stamp", ("other", "sources"))  # an edited file of the core
    assert core_cache_is_cold() is True
    monkeypatch.undo()
    monkeypatch.setattr(index, "_index_path", str(tmp_path / "none.nbi"))  # no cache at all
    assert core_cache_is_cold() is True


@pytest.mark.parametrize("tty, cold, said", [(True, True, True), (True, False, False), (False, True, False)])
def test_the_compiling_notice_only_on_a_terminal_with_a_cold_cache(tty, cold, said, monkeypatch):
    from tiengow import cli

    err = io.StringIO()
    err.isatty = lambda: tty
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(cli, "core_cache_is_cold", lambda: cold)
    cli._say_if_compiling()
    assert (err.getvalue() == "compiling the core (first run only)…\n") == said and (said or not err.getvalue())


# ----------------------------------------------------------------------------- outputs
def test_league_without_matplotlib_still_writes_json_and_table(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    status, out, err = run(capsys, "league", "random", "greedy", "--deals", "2", "--out", str(tmp_path / "lg"))
    assert status == 0, err
    result = json.loads((tmp_path / "lg.json").read_text())
    assert [row["agent"] for row in result["ranking"]] == ["greedy", "random"]
    assert not (tmp_path / "lg.png").exists()
    notes = [line for line in out.splitlines() if "matplotlib" in line]
    assert len(notes) == 1 and "no heat map" in notes[0] and "[train]" in notes[0]
    assert "ranking by rating" in out and "±" in out


def test_bench_writes_its_table_where_asked_only(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, err = run(capsys, "bench", "--quick", "--only", "memory")
    assert status == 0
    (folder,) = (tmp_path / "runs" / "bench").iterdir()
    assert sorted(p.name for p in folder.iterdir()) == ["bench.json", "bench.md"]
    assert f"wrote runs/bench/{folder.name}/bench.json" in err
    figures = json.loads((folder / "bench.json").read_text())
    assert figures["bytes_per_game_state"] > 0 and figures["command"] == "tiengow bench --quick --only memory"
    status, _, _ = run(capsys, "bench", "--quick", "--only", "memory", "--save", "mine/latest")
    assert status == 0 and (tmp_path / "mine" / "latest.md").read_text().startswith("`tiengow bench --quick")


@pytest.mark.parametrize(
    "failure, status, words",
    [
        (TypeError("a bug"), 70, "tiengow: internal error: TypeError: a bug (a bug in tiengow; TIENGOW_DEBUG=1 shows"),
        (
            OSError(28, "No space left on device", "runs/x.json"),
            1,
            "tiengow: error: No space left on device (runs/x.json)",
        ),
    ],
)
def test_an_unexpected_failure_is_one_line_not_a_traceback(capsys, monkeypatch, failure, status, words):
    from tiengow import cli

    def broken(args):
        raise failure

    monkeypatch.setitem(cli.COMMANDS, "rules", broken)
    monkeypatch.delenv("TIENGOW_DEBUG", raising=False)
    code, out, err = run(capsys, "rules")
    assert code == status and err.startswith(words) and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "argv, words",
    [
        (["demo", "--hands", "0"], "argument --hands: must be an integer from 1 to 10,000,000, got 0"),
        (["demo", "--seed", str(2**64)], "argument --seed: must be an integer >= 0 and at most 2^63 - 1"),
        (["eval", "greedy", "--vs", "random", "--seed", "9" * 5000], "got a 5000-digit number"),
        (["eval", "greedy:", "--vs", "random"], "agent spec 'greedy:' ends with ':' and nothing after it"),
        (["eval", "pimc:8:epsilon=0.1:epsilon=0.2", "--vs", "random"], "epsilon is given twice"),
        (
            ["league", "greedy", "greedy", "random", "--deals", "1"],
            "a league lists each agent once; 'greedy' is given 2",
        ),
        (["league", "greedy", "random", "--deals", "1", "--out", ""], "--out: give a file path, got ''"),
        (
            ["league", "greedy", "random", "--deals", "1", "--out", "/proc/x"],
            "--out /proc/x: the folder /proc does not",
        ),
        (["bench", "--quick", "--save", "dir/"], "--save dir/: is a folder; give a file path"),
    ],
)
def test_bad_numbers_specs_and_outputs_are_refused_up_front(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 2 and words in err and err.count("\n") == 1 and not out


def test_demo_with_fewer_hands_than_its_warm_up(capsys):
    code, out, _ = run(capsys, "demo", "--hands", "3", "--deals", "0")
    assert code == 0 and "3 random hands in the compiled core" in out


def test_eval_json_is_strict_json_for_a_single_deal(capsys):
    code, out, _ = run(capsys, "eval", "greedy", "--vs", "random", "--deals", "1", "--json")
    assert code == 0 and json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))["ci95"] == [None, None]


def test_replay_check_refuses_a_malformed_expectation(tmp_path, capsys):
    from conftest import RECORDS

    record = json.loads(RECORDS.read_text().splitlines()[0])["record"]
    lines = [{"record": record, "expected": x} for x in ("net", {"tricks": 5}, {}, {"colums": [1, 2, 3, 4]})]
    path = tmp_path / "check.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, out, _ = run(capsys, "replay", "--check", str(path))
    assert code == 1 and out.count("not a check line") == 4 and "unknown expected field 'colums'" in out
