"""Agents choose only legal actions; the duplicate arena is well formed and reproducible."""

import json
import subprocess
import sys

import numpy as np
import pytest

from tiengow.agents import make_agent
from tiengow.agents.arena import compare, evaluate, play_hand
from tiengow_env.game import Game
from tiengow_env.rules import PRESETS

PRESET_RULES = sorted(PRESETS) + [{"one_red_dot": "choice"}, {"must_beat_if_able": True}]


@pytest.mark.parametrize("spec", ["random", "greedy", "expert", "pimc:4"])
@pytest.mark.parametrize("rules", PRESET_RULES, ids=str)
def test_agents_only_choose_legal_actions(spec, rules):
    """Every action of every seat is checked by Game.step, which refuses illegal ones."""
    hands = 12 if spec.startswith("pimc") else 120
    for seed in range(hands):
        game = Game(seed=seed, rules=rules)
        agents = [make_agent(spec, game.rules, seed=s) for s in range(game.players)]
        play_hand(game, agents, seed)
        assert game.is_over


def test_declaring_agents_declare_one_red_dot():
    hands = [
        ["5-5", "5-5", "3-3", "3-3", "2-2", "2-2", "6-5", "3-1"],
        ["6-6", "6-6", "1-1", "1-1", "4-4", "4-4", "3-1", "6-5"],
        ["6-4", "6-4", "6-1", "6-1", "5-1", "5-1", "6-3", "5-4"],
        ["6-2", "5-3", "5-2", "4-3", "4-2", "4-1", "3-2", "2-1"],
    ]
    for spec in ("greedy", "expert"):
        game = Game(hands=hands, banker=1, rules={"one_red_dot": "choice"})
        obs, mask = game.observe()
        action = make_agent(spec, game.rules).act(obs, mask)
        assert game.action_name(action) == "declare"


def test_unknown_specs_are_refused():
    with pytest.raises(ValueError, match="agents are"):
        make_agent("nobody")
    with pytest.raises(ValueError, match="samples"):
        make_agent("pimc:many")
    with pytest.raises(ValueError, match="takes no options"):
        make_agent("greedy:3")


def test_eval_is_well_formed_reproducible_and_zero_sum():
    a = evaluate("greedy", "random", deals=30, seed=4)
    b = evaluate("greedy", "random", deals=30, seed=4, workers=2)
    assert a == b  # same numbers whatever the number of workers (the timing is not compared)
    assert a.ms_per_decision > 0 and b.ms_per_decision > 0
    assert a.hands == 4 * 30 and len(a.chips_by_seat) == 4
    assert abs(sum(a.chips_by_seat)) < 1e-9
    assert a.ci95[0] < a.chips_per_hand < a.ci95[1]


def test_eval_ends_with_a_message_when_a_worker_dies():
    """A worker killed mid-run (the OOM killer, a stray kill) ends the evaluation at once with a
    message, instead of leaving it waiting for deals that will never come."""
    import multiprocessing as mp
    import os
    import signal
    import threading
    import time

    outcome = []

    def run():
        try:
            evaluate("search", "greedy", deals=64, seed=1, workers=2)
            outcome.append("finished")
        except OSError as err:
            outcome.append(str(err))

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.time() + 60
    while len(mp.active_children()) < 2 and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(2)  # the workers are playing
    os.kill(mp.active_children()[0].pid, signal.SIGKILL)
    thread.join(60)
    assert outcome == ["a worker process of the evaluation died (killed, or out of memory): no result; run it again"]


def test_eval_times_the_candidate_only():
    slow = evaluate("pimc:64", "greedy", deals=2, seed=1)
    fast = evaluate("greedy", "pimc:64", deals=2, seed=1)
    assert slow.ms_per_decision > 5 * fast.ms_per_decision


def test_the_clock_leaves_out_the_first_hand_in_a_process():
    """A cold numba cache once made the first run report seconds of compiling as the time a
    decision takes; a bot that is slow on its first decision only stands for that here."""
    import time

    from tiengow.agents.arena import play_deals
    from tiengow.agents.base import Agent
    from tiengow_env.rules import RuleSet

    class SlowStart(Agent):
        name = "slow-start (test)"
        started = False

        def act(self, observation, mask, game=None):
            if not SlowStart.started:
                SlowStart.started = True
                end = time.thread_time() + 0.5
                while time.thread_time() < end:
                    pass
            return int(np.flatnonzero(mask)[0])

    rules = RuleSet.from_spec("standard")
    rows = play_deals(SlowStart(rules), [make_agent("greedy", rules) for _ in range(4)], rules, 3, 0, 1)
    decisions, seconds = rows[:, :, -2].sum(), rows[:, :, -1].sum()
    assert SlowStart.started and decisions > 20 and seconds / decisions < 0.005


def test_ci_shrinks_with_more_deals():
    small = evaluate("random", "random", deals=20, seed=1)
    large = evaluate("random", "random", deals=160, seed=1)
    assert large.ci95[1] - large.ci95[0] < 0.6 * (small.ci95[1] - small.ci95[0])


def test_greedy_beats_random_clearly():
    result = evaluate("greedy", "random", deals=100, seed=2)
    assert result.ci95[0] > 5  # measured: about +16 chips per hand


def test_compare_plays_both_candidates_on_the_same_deals_and_pairs_their_scores():
    same = compare("greedy", "greedy", "random", deals=12, seed=5)
    assert same.candidate == same.baseline and same.difference == 0 and same.ci95 == [0.0, 0.0]
    both = compare("pimc:8", "greedy", "expert", deals=16, seed=2, workers=2)
    assert both.candidate == evaluate("pimc:8", "expert", deals=16, seed=2)
    assert both.baseline == evaluate("greedy", "expert", deals=16, seed=2)
    assert np.isclose(both.difference, both.candidate.chips_per_hand - both.baseline.chips_per_hand)
    assert both.ci95[0] < both.difference < both.ci95[1] and -1 <= both.correlation <= 1
    with pytest.raises(ValueError, match="unknown agent"):
        compare("greedy", "nobody", "random", deals=2)


def test_cli_eval_with_a_baseline_prints_both_and_the_paired_difference(capsys):
    from tiengow.cli import main

    assert main(["eval", "expert", "--baseline", "greedy", "--vs", "random", "--deals", "8", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert out.count("chips per hand") == 3 and "expert minus greedy, deal by deal" in out
    assert main(["eval", "expert", "--baseline", "greedy", "--vs", "random", "--deals", "8", "--json"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert {"candidate", "baseline", "difference", "ci95", "correlation", "sprt"} == set(line) and line["sprt"] is None
    assert main(["eval", "expert", "--baseline", "nobody", "--vs", "random", "--deals", "8"]) == 2
    assert "unknown agent" in capsys.readouterr().err


def test_cli_eval_json_last_line(tmp_path):
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "tiengow.cli",
            "eval",
            "expert",
            "--vs",
            "greedy",
            "--deals",
            "6",
            "--seed",
            "3",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    line = json.loads(run.stdout.strip().splitlines()[-1])
    assert {"candidate", "opponent", "deals", "hands", "chips_per_hand", "ci95"} <= set(line)
    assert line["deals"] == 6 and line["hands"] == 24
    assert np.isclose(sum(line["chips_by_seat"]), 0)


@pytest.mark.parametrize("spec", ["random", "greedy", "expert", "ppo"])
def test_agents_refuse_arrays_they_cannot_read(spec):
    agent = make_agent(spec)
    observation, mask = Game(seed=1).observe()
    assert mask[agent.act(observation, mask)]
    with pytest.raises(ValueError, match="mask row 0 has no legal action"):
        agent.act(observation, np.zeros_like(mask))
    with pytest.raises(ValueError, match=r"observations are numbers of shape \(N, 282\) under rules standard"):
        agent.act(np.zeros(3), np.ones(2, bool))
    with pytest.raises(ValueError, match=r"masks are 0/1 of shape \(1, 84\)"):
        agent.act(observation, mask[:-1])
    three = Game(seed=1, rules="three_player").observe()
    with pytest.raises(ValueError, match="observations are numbers"):
        agent.act(*three)
    with pytest.raises(ValueError, match="mask row [01] has no legal action"):
        agent.act_batch(np.stack([observation] * 2), np.stack([mask, np.zeros_like(mask)]))


@pytest.mark.parametrize("seed", [-1, 1.5, True, "7"])
def test_agent_seeds_are_checked(seed):
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        make_agent("random", seed=seed)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        make_agent("greedy").reset(seed)
