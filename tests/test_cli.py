"""The command line: rules cards, exact tree sizes, demo, bench, and one-line errors."""
import json

from pathlib import Path

import pytest

from tiengow.agents.infra import install_hint
from tiengow.cli import main


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


def test_micro_tree_sizes(capsys):
    """1,440 distinct deals: 2,520 physical splits, with the two 6-6 together in 360 of them."""
    status, out, _ = run(capsys, "tree", "--rules", "micro", "--json")
    stats = json.loads(out)
    assert status == 0
    assert stats["deals"] == 1440
    assert stats["decision_nodes"] == 67755 and stats["infosets"] == 1851


def test_tree_refuses_large_games(capsys):
    status, _, err = run(capsys, "tree", "--rules", "standard")
    assert status == 2 and "too large" in err and "\n" == err[-1] and err.count("\n") == 1


@pytest.mark.parametrize("argv, words", [
    (["rules", "nonsense"], "unknown preset"),
    (["rules", "--rules", '{"banker_streak": true}'], "banker_double"),
    (["demo", "--rules", "missing.yaml"], "does not exist"),
    (["eval", "expert", "--vs", "nobody"], "unknown agent"),
    (["replay", "/no/such/file.jsonl"], "cannot read"),
])
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
