"""League ranking: the Bradley–Terry fit on duplicate deals, its intervals, and the heat map."""

import json
import math
import os

import numpy as np
import pytest

from tiengow.agents.arena import ELO, bradley_terry, heat_map, league, text_colour


def match(candidate: str, opponent: str, won: int, lost: int, deals: int = 100) -> dict:
    return {"candidate": candidate, "opponent": opponent, "deals": deals, "deals_won": won, "deals_lost": lost}


def test_two_agents_have_the_closed_form_rating_and_interval():
    """A wins 70 of 100 deals in both matches: with the virtual drawn deal, 140.5 wins of 201."""
    ratings, half = bradley_terry(["a", "b"], [match("a", "b", 70, 30), match("b", "a", 30, 70)])
    p = 140.5 / 201
    assert ratings["a"] - ratings["b"] == pytest.approx(ELO * math.log(p / (1 - p)), rel=1e-9)
    assert ratings["a"] + ratings["b"] == pytest.approx(0, abs=1e-9)
    # var(r_a - r_b) = 1 / (n p (1 - p)); centred, each rating carries a quarter of it
    assert half["a"] == pytest.approx(1.96 * ELO / math.sqrt(4 * 201 * p * (1 - p)), rel=1e-6)


def test_ties_count_half_and_equal_agents_rate_equal():
    ratings, half = bradley_terry(["a", "b"], [match("a", "b", 40, 40), match("b", "a", 30, 30)])
    assert ratings["a"] == pytest.approx(0, abs=1e-9) and ratings["b"] == pytest.approx(0, abs=1e-9)
    assert half["a"] > 0


def test_crushing_a_weak_agent_does_not_outrank_winning_head_to_head():
    """g wins more chips against r than e does (so it leads on mean chips), but e beats g on
    most deals: the rating ranks e first. A sweep (100 of 100) still gets a finite rating."""
    matches = [
        match("g", "r", 100, 0),
        match("r", "g", 0, 100),
        match("e", "r", 97, 3),
        match("r", "e", 4, 96),
        match("e", "g", 60, 40),
        match("g", "e", 38, 62),
    ]
    ratings, half = bradley_terry(["r", "g", "e"], matches)
    assert ratings["e"] > ratings["g"] > ratings["r"]
    assert all(np.isfinite(v) for v in [*ratings.values(), *half.values()])
    assert ratings["e"] - half["e"] > ratings["r"] + half["r"]


def test_league_ranks_by_rating_and_records_its_intervals():
    result = league(["random", "greedy"], deals=3, seed=2, rules="micro")
    assert [row["agent"] for row in result["ranking"]] == ["greedy", "random"]
    top = result["ranking"][0]
    assert top["rating_ci95"][0] < top["rating"] < top["rating_ci95"][1]
    assert "Bradley-Terry" in result["rating"]
    lo, hi = result["cross_ci95"]["greedy"]["random"]
    assert lo <= result["cross_table"]["greedy"]["random"] <= hi
    assert sum(m["deals_won"] + m["deals_lost"] <= m["deals"] for m in result["matches"]) == 2
    json.dumps(result)


@pytest.mark.parametrize(
    "rgba, colour",
    [
        ((0.02, 0.19, 0.38, 1), "white"),
        ((0.4, 0.0, 0.12, 1), "white"),
        ((0.97, 0.97, 0.97, 1), "black"),
        ((0.96, 0.65, 0.51, 1), "black"),
    ],
)
def test_cell_text_is_readable_on_dark_and_light_cells(rgba, colour):
    assert text_colour(rgba) == colour


def test_heat_map_is_written(tmp_path):
    pytest.importorskip("matplotlib")
    result = {
        "deals": 10,
        "agents": ["a", "b"],
        "cross_table": {"a": {"b": 3.0}, "b": {"a": -2.5}},
        "cross_ci95": {"a": {"b": [2.0, 4.0]}, "b": {"a": [-3.0, -2.0]}},
        "ranking": [
            {"agent": "a", "rating": 50.0, "rating_ci95": [10.0, 90.0]},
            {"agent": "b", "rating": -50.0, "rating_ci95": [-90.0, -10.0]},
        ],
    }
    heat_map(result, str(tmp_path / "x.png"))
    assert (tmp_path / "x.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


BAD_OUT = [
    pytest.param(lambda tmp: str(tmp / "a_file" / "league"), r"a_file is not a folder", id="under_a_file"),
    pytest.param(lambda tmp: str(tmp) + "/", r"is a folder; give a file path", id="a_folder"),
    pytest.param(lambda tmp: str(tmp / "taken"), r"\(its \.json file\) .*taken\.json: is a folder", id="json_a_folder"),
    pytest.param(
        lambda tmp: "/proc/tiengow-league",
        r"the folder /proc does not take new files",
        id="read_only",
        marks=pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs Linux's /proc"),
    ),
]


@pytest.mark.parametrize("out, message", BAD_OUT)
def test_league_refuses_an_out_it_cannot_write_before_any_match(tmp_path, monkeypatch, capsys, out, message):
    import re

    import tiengow.agents.arena as arena
    from tiengow.cli import main

    (tmp_path / "a_file").write_text("not a folder")
    (tmp_path / "taken.json").mkdir()

    def no_match(*args, **kwargs):
        raise AssertionError("a match was played")

    monkeypatch.setattr(arena, "league", no_match)
    assert main(["league", "random", "greedy", "--deals", "2", "--out", out(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("tiengow: error: --out "), err
    assert re.search(message, err), err
