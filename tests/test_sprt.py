"""The sequential test (agents/sprt.py): its error rates on thousands of simulated tests, its
deals beside a fixed-size test, the arena's use of it whatever the workers, paired seeds,
match records and the ladder."""

import json
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

from tiengow.agents import sprt as S
from tiengow.agents.arena import compare, evaluate, play_hand
from tiengow.agents.base import Agent
from tiengow.cli import main
from tiengow_env.game import Game

TRIALS = 4000
SD = 4.8  # the standard deviation of a per-deal duplicate score (expert against greedy, 400 deals)


def normal(mean):
    return lambda rng, shape: mean + SD * rng.standard_normal(shape)


def skewed(mean):  # gamma, skewness 0.5 and the same sd: right-skewed like real per-deal scores (0.34)
    return lambda rng, shape: mean + SD * (rng.standard_gamma(16, shape) - 16) / 4


@pytest.mark.parametrize(
    "draw, d0, d1, slack",
    [
        (normal, 0.0, 0.5, 0.0),
        (normal, 0.0, 1.0, 0.0),
        (normal, -0.3, 0.3, 0.0),
        # skewed scores: a low sample mean comes with a low sample variance, so H0 is accepted a
        # little too often at D1 (6.1% measured at beta 5%); the test allows that much, and no more
        (skewed, 0.0, 0.5, 0.015),
    ],
)
def test_error_rates_hold_on_thousands_of_simulated_tests(draw, d0, d1, slack):
    """TRIALS tests with the mean at D0 and TRIALS at D1: the observed error rates are within
    alpha and beta, allowing three standard errors of simulation noise; the average deals used
    is about half of what a fixed-size test of the same power needs."""
    h = S.Hypotheses(d0, d1)
    noise = 3 * math.sqrt(0.05 * 0.95 / TRIALS)
    fixed = S.fixed_deals(SD, h)
    for mean, wrong, rate in ((d0, 1, h.alpha), (d1, 0, h.beta)):
        verdict, used = S.simulate(draw(mean), h, TRIALS, 20 * fixed, seed=7)
        assert (verdict == -1).mean() < 0.001
        assert (verdict == wrong).mean() <= rate + noise + slack
        assert used.mean() < 0.6 * fixed
        assert used.min() >= S.MIN_DEALS


def test_llr_is_the_closed_form_and_sprt_stops_where_simulate_does():
    scores = np.random.default_rng(3).normal(0.4, 2.0, 400)
    h = S.Hypotheses(0.0, 0.5, 0.1, 0.2)
    n, mean, var = 50, scores[:50].mean(), scores[:50].var()
    assert S.llr(n, scores[:50].sum(), (scores[:50] ** 2).sum(), h) == pytest.approx(
        n * 0.5 * (2 * mean - 0.5) / (2 * var), rel=1e-9
    )
    assert h.bounds == pytest.approx((math.log(0.2 / 0.9), math.log(0.8 / 0.1)))
    test = S.Sprt(h, 400)
    for chunk in np.array_split(scores, 7):  # chunk boundaries do not matter
        if test.feed(chunk):
            break
    verdict, used = S.simulate(lambda rng, shape: scores[None, : shape[1]], h, 1, 400, block=400)
    result = test.result()
    assert (result.verdict, result.deals) == ({1: "H1", 0: "H0", -1: "undecided"}[verdict[0]], used[0])
    assert result.verdict != "undecided"


@pytest.mark.parametrize(
    "text, alpha, beta, message",
    [
        ("1,0", 0.05, 0.05, "D0 must be below D1"),
        ("0", 0.05, 0.05, "takes D0,D1"),
        ("0,x", 0.05, 0.05, "takes D0,D1"),
        ("0,1", 0.5, 0.05, "alpha is an error rate above 0 and below 0.5"),
        ("0,1", 0.05, 0.0, "beta is an error rate above 0 and below 0.5"),
        ("0,nan", 0.05, 0.05, "must be a finite number"),
    ],
)
def test_bad_hypotheses_are_refused_with_what_was_expected(text, alpha, beta, message):
    with pytest.raises(ValueError, match=message):
        S.parse_hypotheses(text, alpha, beta)


def test_zero_variance_is_decisive():
    h = S.Hypotheses(0.0, 0.5)
    test = S.Sprt(h, 100)
    assert test.feed(np.zeros(30)) and test.result().verdict == "H0" and test.result().deals == S.MIN_DEALS


def test_the_verdict_and_deals_do_not_depend_on_the_workers():
    """expert against greedy with bounds near its edge: the test reads several chunks (25 deals
    each) in deal order, and stops at the same deal with one worker or two."""
    h = S.Hypotheses(0.5, 1.0)
    one = evaluate("expert", "greedy", 2000, seed=45010, sprt=h)
    two = evaluate("expert", "greedy", 2000, seed=45010, sprt=h, workers=2)
    assert one.sprt["verdict"] != "undecided" and one.deals > 25
    assert one == two and one.deals == one.sprt["deals"]


def test_a_decided_test_with_workers_ends_without_a_traceback():
    """The verdict closes the pool with chunks still queued: the executor's thread once printed
    an InvalidStateError traceback there (its workers were killed under it)."""
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "tiengow",
            "eval",
            "expert",
            "--vs",
            "random",
            "--sprt",
            "0,0.3",
            "--workers",
            "2",
            "--seed",
            "1",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0 and "H1 accepted" in run.stdout
    assert "Traceback" not in run.stderr and "Exception" not in run.stderr, run.stderr[-2000:]


def test_a_paired_test_is_of_the_difference_and_an_identical_pair_accepts_h0():
    same = compare("greedy", "greedy", "random", 500, seed=45011, sprt=S.Hypotheses(0.0, 0.5))
    assert same.difference == 0 and same.sprt["verdict"] == "H0" and same.sprt["deals"] == S.MIN_DEALS
    assert same.candidate.deals == same.baseline.deals == S.MIN_DEALS


class Draws(Agent):
    """Plays the first legal action and keeps the first random number of each decision; with
    ``spend``, it draws that many numbers more at its first decision (as a bot that searched
    more would)."""

    def __init__(self, rules, spend=0):
        super().__init__(rules)
        self.spend, self.seen = spend, []

    def act(self, observation, mask, game=None):
        self.seen.append(self.rng.random())
        if len(self.seen) == 1:
            self.rng.random(self.spend)
        return int(np.flatnonzero(mask)[0])


@pytest.mark.parametrize("spend", [0, 1, 17])
def test_paired_seeds_give_each_decision_the_same_numbers_whatever_was_drawn_before(spend):
    from tiengow_env.rules import RuleSet

    rules = RuleSet.from_spec("standard")
    plain = [Draws(rules) for _ in range(4)]
    spender = [Draws(rules, spend) for _ in range(4)]
    play_hand(Game(seed=5), plain, 9)
    play_hand(Game(seed=5), spender, 9)
    assert all(a.seen == b.seen and len(a.seen) > 1 for a, b in zip(plain, spender))
    assert len({round(x, 12) for agent in plain for x in agent.seen}) == sum(len(a.seen) for a in plain)


RECORD_KEYS = {
    "kind",
    "command",
    "version",
    "commit",
    "date",
    "rules",
    "candidate",
    "opponent",
    "baseline",
    "seed",
    "deals",
    "mean",
    "ci95",
    "sprt",
    "ms_per_decision",
    "machine",
}


def test_eval_sprt_prints_its_verdict_and_writes_the_record(tmp_path, capsys):
    argv = ["eval", "greedy", "--vs", "random", "--sprt", "0,1", "--seed", "45001", "--json", "--record", str(tmp_path)]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sprt"]["verdict"] == "H1" and out["deals"] == out["sprt"]["deals"] <= 60
    assert set(out["sprt"]) >= {"d0", "d1", "alpha", "beta", "verdict", "deals", "llr", "bounds"}
    record = json.loads((tmp_path / "greedy_vs_random_seed45001_standard.json").read_text())
    assert set(record) == RECORD_KEYS
    assert record["command"] == "tiengow " + " ".join(argv)
    assert record["sprt"] == out["sprt"] and record["mean"] == out["chips_per_hand"]
    assert set(record["machine"]) == {"cpu", "cores", "python", "platform"}
    assert record["ms_per_decision"].keys() == {"greedy"} and record["baseline"] is None


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--sprt", "0,1", "--deals", "50"], "give the most it may play as --max-deals"),
        (["--alpha", "0.1"], "--alpha is an option of the sequential test"),
        (["--max-deals", "10"], "--max-deals is an option of the sequential test"),
        (["--sprt", "0.5,0"], "D0 must be below D1"),
    ],
)
def test_bad_sprt_options_are_one_line_before_any_work(argv, message, capsys):
    assert main(["eval", "greedy", "--vs", "random", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_ladder_places_bots_and_forms_its_rungs():
    from tiengow import ladder

    assert ladder.rungs(list(ladder.LADDER))[-2:] == [("champion", "search"), ("champion", "ppo")]
    placed = ladder.place(["mine:make@ppo", "top:make"])
    assert placed[placed.index("ppo") + 1] == "mine:make" and placed[-1] == "top:make"
    assert ("mine:make", "ppo") in ladder.rungs(placed) and ("search", "mine:make") in ladder.rungs(placed)
    with pytest.raises(ValueError, match="'nobody' is not on the ladder"):
        ladder.place(["mine:make@nobody"])


def test_ladder_is_resumable_and_renders_the_same_table_again(tmp_path, monkeypatch, capsys):
    from tiengow import ladder

    monkeypatch.setattr(ladder, "LADDER", ("random", "greedy", "expert"))
    monkeypatch.setattr(ladder, "EXTRA_RUNGS", (("expert", "random"),))
    argv = ["ladder", "--rules", "micro", "--sprt", "0,1", "--record", str(tmp_path)]
    assert main(argv) == 0
    first = (tmp_path / "ladder.md").read_text()
    assert len(list(tmp_path.glob("*.json"))) == 3 and first.count("\n") == 2 + 3
    assert main(argv) == 0
    assert "kept" in capsys.readouterr().out and (tmp_path / "ladder.md").read_text() == first
    assert "(greedy_vs_random_seed45000_micro.json)" in first


def test_zero_variance_gives_infinite_evidence_or_none_exactly_between_without_a_warning():
    from tiengow.agents.sprt import Hypotheses, llr

    h = Hypotheses(0.0, 0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(llr(np.array([10, 10, 10]), np.array([0.0, 1.5, 5.0]), np.array([0.0, 0.225, 2.5]), h)) == [
            -np.inf,
            0.0,
            np.inf,
        ]
