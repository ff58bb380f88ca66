"""PPO (training/ppo.py): four-seat credit assignment, learning on micro, checkpoints, the agent."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tiengow.agents.base import make_agent  # noqa: E402  (after the torch skip)
from tiengow.training import _ppo_kernels as PK  # noqa: E402
from tiengow.training.config import parse_overrides  # noqa: E402
from tiengow.training.ppo import Collector, PpoConfig, make_network, network_from_checkpoint  # noqa: E402
from tiengow.training.ppo_checkpoints import export_policy, load_checkpoint  # noqa: E402
from tiengow.training.ppo_eval import time_to_strength  # noqa: E402
from tiengow.training.ppo_pool import SELF, Seating, draw_seating  # noqa: E402
from tiengow.training.ppo_runner import train  # noqa: E402
from tiengow_env.vector import VectorEnv  # noqa: E402


def tiny_config(tmp_path, **changes) -> PpoConfig:
    settings = dict(
        rules="micro",
        num_envs=32,
        rollout_steps=8,
        total_steps=32 * 8 * 4,
        hidden=32,
        layers=1,
        minibatch_size=128,
        pool_interval=1,
        pool_size=2,
        opponent_mix=0.5,
        pool_weights={"greedy": 1.0, "expert": 0.2, "past": 1.0},
        eval_interval=0,
        log_dir=False,
        out=str(tmp_path / "ppo.pt"),
        checkpoint_interval=2,
        seed=5,
    )
    settings.update(changes)
    return PpoConfig.from_dict(settings)


# ============================================================================ credit assignment
class LoggingEnv(VectorEnv):
    """A VectorEnv that remembers, per step, who acted, whether that seat was the learner's (from
    ``seating``, as the collector decides it), and what each absolute seat was paid."""

    seating: Seating

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.log = []
        self.learner_rows = []

    def step(self, actions):
        acting = self.to_act.copy()
        self.learner_rows.append((self.seating.kind == SELF) | (acting == self.seating.learner_seat))
        out = super().step(actions)
        self.log.append((acting, self.rewards.copy(), self.terminated.copy(), self.episode_net.copy()))
        return out


def reference_credit(log, num_envs, players, learner_rows, carried_in=()):
    """Plain-Python statement of the rule: every decision is (env, seat); seat s's chips from a step
    belong to s's last decision in that episode before the step (its own decision included), or
    to its first decision when none came before; they are dropped while s's last decision is
    from before the rollout (``carried_in``)."""
    rewards, done, next_of, owner = [], [], [], []
    last: dict = {key: "dropped" for key in carried_in}  # (env, seat) -> decision index or "dropped"
    carry: dict = {}
    for t, (acting, paid, terminated, _) in enumerate(log):
        for i in range(num_envs):
            if not learner_rows[t][i]:
                continue
            s = int(acting[i])
            d = len(rewards)
            rewards.append(carry.get((i, s), 0.0) if last.get((i, s)) is None else 0.0)
            carry.pop((i, s), None)
            done.append(False)
            next_of.append(-1)
            owner.append((i, s))
            if isinstance(last.get((i, s)), int):
                next_of[last[(i, s)]] = d
            last[(i, s)] = d
        for i in range(num_envs):
            for s in range(players):
                d = last.get((i, s))
                if isinstance(d, int):
                    rewards[d] += float(paid[i, s])
                elif d is None:
                    carry[(i, s)] = carry.get((i, s), 0.0) + float(paid[i, s])
                if terminated[i]:
                    if isinstance(d, int):
                        done[d] = True
                    last.pop((i, s), None)
                    carry.pop((i, s), None)
    return np.array(rewards), np.array(done), np.array(next_of), owner


@pytest.mark.parametrize("rules,opponent_mix", [("standard", 0.0), ("standard", 1.0), ("micro", 0.5)])
def test_rewards_go_to_each_seats_last_decision(rules, opponent_mix, tmp_path):
    """Two rollouts with the collector against a plain-Python reference: the chips (trick bonuses at
    other seats' turns, settlements) land on the right seat's right decision, every seat's chain
    ends at the episode's end, and a chain carried in from an earlier rollout drops its chips."""
    config = tiny_config(
        tmp_path,
        rules=rules,
        num_envs=16,
        rollout_steps=60,
        opponent_mix=opponent_mix,
        pool_weights={"greedy": 1.0},
        reward_scale=1.0,
    )
    env = LoggingEnv(config.num_envs, config.rules, seed=11)
    seating = Seating(
        np.zeros(16, np.int64),
        np.zeros(16, np.int64),
        np.full((16, env.players), -1, np.int64),
        np.zeros((16, env.players)),
    )
    rng = np.random.default_rng(0)
    draw_seating(config, rng, seating, np.arange(16), 0, env.players)
    collector = Collector(config, env, seating, rng)
    net = make_network(config)
    env.seating = seating
    other_turn_chips = 0
    for _ in range(2):
        env.log.clear()
        env.learner_rows.clear()
        carried_in = {(i, s) for i in range(16) for s in range(env.players) if seating.pending[i, s] >= 0}
        buffer = collector.collect(net, {})
        rewards, done, next_of, owner = reference_credit(env.log, 16, env.players, env.learner_rows, carried_in)
        n = buffer.count
        assert n == len(rewards) > 0
        np.testing.assert_allclose(buffer.reward[:n], rewards, atol=1e-9)
        np.testing.assert_array_equal(buffer.done[:n], done)
        np.testing.assert_array_equal(buffer.next_decision[:n], next_of)
        # Chips paid at a step where the seat did not act, credited to an earlier decision of its own.
        for acting, paid, _, _ in env.log:
            other_turn_chips += int(
                sum(np.count_nonzero(paid[i, np.arange(env.players) != acting[i]]) for i in range(16))
            )
        # Whole episodes inside the rollout: a seat's credited chips add up to its episode net.
        if opponent_mix == 0.0:
            check_episode_sums(env.log, buffer, owner)
    assert other_turn_chips > 0


def check_episode_sums(log, buffer, owner):
    """In self-play, the decisions of seat s in an episode that starts and ends inside the rollout
    are credited exactly its net chips of that episode (``episode_net``)."""
    n = buffer.count
    # Walk each env's decisions in order and cut them at the episode ends.
    by_env: dict = {}
    for d in range(n):
        by_env.setdefault(owner[d][0], []).append(d)
    checked = 0
    for i, decisions in by_env.items():
        ends = [t for t, entry in enumerate(log) if entry[2][i]]
        # decisions of env i happen one per step (self-play): decision k of env i is step k
        for a, b in zip(ends[:-1], ends[1:]):
            episode = decisions[a + 1 : b + 1]
            net = log[b][3][i]
            for s in range(net.shape[0]):
                total = sum(buffer.reward[d] for d in episode if owner[d][1] == s)
                assert total == pytest.approx(float(net[s]))
                checked += 1
    assert checked > 0


@pytest.mark.parametrize(
    "name,steps,expected_reward,expected_next,expected_done",
    [
        # seat 0 acts, seat 1 acts, a trick bonus of 4 to seat 0 and -4 to seat 1 comes at seat 2's turn,
        # then seat 0 acts again and the hand ends at seat 1's second decision (settlement +6 / -6).
        (
            "bonus at another seat's turn",
            [
                (0, [0, 0, 0, 0], False),
                (1, [0, 0, 0, 0], False),
                (2, [4, -4, 0, 0], False),
                (0, [0, 0, 0, 0], False),
                (1, [6, -6, 0, 0], True),
            ],
            [4.0, -4.0, 0.0, 6.0, -6.0],
            [3, 4, -1, -1, -1],
            [False, False, True, True, True],
        ),
        # chips paid before seat 3's first decision (a hand decided at the deal) go to that first decision
        (
            "chips before the first decision",
            [(0, [-2, -2, -2, 6], False), (3, [1, 0, 0, -1], False)],
            [-1.0, 5.0],
            [-1, -1],
            [False, False],
        ),
    ],
)
def test_credit_kernels_on_a_script(name, steps, expected_reward, expected_next, expected_done):
    """The two kernels on a scripted sequence of one env (table: who acts, chips per seat, end)."""
    pending = np.full((1, 4), PK.NO_DECISION, np.int64)
    carry = np.zeros((1, 4))
    reward = np.zeros(16)
    next_decision = np.full(16, -1, np.int64)
    done = np.zeros(16, bool)
    for k, (seat, chips, terminated) in enumerate(steps):
        PK.record_decisions(np.array([0]), np.array([seat]), k, pending, carry, reward, next_decision, done)
        PK.assign_rewards(np.array([chips], np.float32), np.array([terminated]), 1.0, pending, carry, reward, done)
    n = len(steps)
    np.testing.assert_allclose(reward[:n], expected_reward)
    np.testing.assert_array_equal(next_decision[:n], expected_next)
    np.testing.assert_array_equal(done[:n], expected_done)


def test_gae_runs_along_each_seats_chain():
    """lambda = 1, V = 0: each decision's advantage is its seat's chips from it to the episode end;
    a chain cut by the rollout's end is left out."""
    reward = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    value = np.zeros(5, np.float32)
    next_decision = np.array([2, 3, -1, -1, -1])  # seat A: 0 -> 2 (done); seat B: 1 -> 3 -> 4 (cut)
    next_decision[3] = 4
    done = np.array([False, False, True, False, False])
    advantage = np.zeros(5, np.float32)
    valid = np.zeros(5, bool)
    PK.per_seat_gae(reward, value, next_decision, done, 5, 1.0, 1.0, advantage, valid)
    np.testing.assert_allclose(advantage, [4.0, 6.0, 3.0, 4.0, 0.0])
    np.testing.assert_array_equal(valid, [True, True, True, True, False])


# ============================================================================ learning
def test_short_micro_run_beats_random(tmp_path):
    """A seeded short run on micro learns: its argmax policy beats random by > 3 chips per hand
    (untrained it scores about 0; greedy scores about +5.3 here)."""
    from tiengow.agents.arena import evaluate

    config = PpoConfig.from_dict(
        dict(
            rules="micro",
            num_envs=128,
            rollout_steps=16,
            total_steps=100_000,
            hidden=64,
            layers=2,
            lr=1e-3,
            minibatch_size=1024,
            update_epochs=2,
            pool_weights={"greedy": 1.0, "past": 1.0},
            pool_interval=5,
            eval_interval=0,
            log_dir=False,
            out=str(tmp_path / "micro.pt"),
            checkpoint_interval=1000,
            seed=3,
        )
    )
    train(config, notice=lambda text: None)
    result = evaluate(f"ppo:{tmp_path / 'micro.pt'}", "random", 400, seed=7, rules="micro")
    assert result.chips_per_hand > 3.0, result
    assert result.ci95[0] > 2.0, result


# Recorded before ppo.py and ppo_runner.py were split (commit 683ae8a; both loops gave these numbers
# on the trainers branch), then once more when the SplitMix64 seed mixer dealt every seeded hand anew:
# the losses of each update and the sum of each parameter after three updates of this seeded run.
RECORDED_LOSSES = [
    (-0.00017056223268374637, 1.281883716583252, 0.5791857838630676),
    (-0.00012398749322528602, 1.5690655410289764, 0.5133975446224213),
    (-2.4041024916154896e-05, 1.123666226863861, 0.5467368960380554),
]
RECORDED_SUMS = {
    "trunk.0.weight": 1.0547199814682244,
    "trunk.0.bias": -0.0069796182797290385,
    "policy.weight": -0.02696154985733301,
    "policy.bias": -0.005464968562591821,
    "value.weight": -0.47440734691917896,
    "value.bias": 0.0015543962363153696,
}


@pytest.mark.parametrize("loop", ["ppo.train", "ppo_runner.train"])
def test_a_seeded_run_gives_the_recorded_numbers(loop, tmp_path):
    """The plain loop of ppo.py and the runner (overlap off, one process) give the same losses and
    weights as the trainer did before they were split, update by update."""
    from tiengow.training import ppo

    config = tiny_config(
        tmp_path,
        num_envs=16,
        total_steps=16 * 8 * 3,
        hidden=16,
        minibatch_size=64,
        checkpoint_interval=100,
        seed=11,
        overlap=False,
    )
    points = []
    if loop == "ppo.train":
        model = ppo.train(config, progress=lambda steps, point: points.append(point)).state_dict()
    else:
        train(config, notice=lambda text: None, progress=lambda steps, point: points.append(point))
        model = load_checkpoint(config.out)["model"]
    # float32 products round differently on other CPUs (an AMD EPYC gives the policy losses, which
    # are near 0, a few 1e-9 apart): hence an absolute tolerance far below any change of the algorithm
    # (flat lists: pytest.approx does not look inside tuples, which it would compare exactly)
    losses = [p[key] for p in points for key in ("policy", "value", "entropy")]
    assert losses == pytest.approx([x for row in RECORDED_LOSSES for x in row], rel=1e-5, abs=1e-7)
    assert {k: float(v.double().sum()) for k, v in model.items() if k != "input_scale"} == pytest.approx(
        RECORDED_SUMS, rel=1e-5, abs=1e-7
    )


# ============================================================================ checkpoints
def parameters(path) -> list[np.ndarray]:
    return [v.numpy() for v in load_checkpoint(str(path))["model"].values()]


def test_checkpoint_round_trip_and_exact_resume(tmp_path):
    """Two updates, a checkpoint, two more after --resume == four updates in one go (overlapped
    collection, pool snapshots and an expert seat included)."""
    straight = tiny_config(tmp_path / "a")
    summary = train(straight, notice=lambda text: None)
    assert summary["update"] == 4
    split = tiny_config(tmp_path / "b")
    assert train(split, notice=lambda text: None, max_updates=2)["update"] == 2
    data = load_checkpoint(split.out, split)
    assert data["update"] == 2 and data["config"] == split.to_dict()
    net = network_from_checkpoint(data)
    assert sum(p.numel() for p in net.parameters()) > 0
    messages = []
    assert train(split, resume=split.out, notice=messages.append)["update"] == 4
    assert "resumed" in messages[0]
    for a, b in zip(parameters(straight.out), parameters(split.out)):
        np.testing.assert_array_equal(a, b)
    assert load_checkpoint(straight.out)["global_step"] == load_checkpoint(split.out)["global_step"]


def test_corrupt_or_mismatched_checkpoint_is_refused(tmp_path):
    config = tiny_config(tmp_path, total_steps=32 * 8)
    train(config, notice=lambda text: None)
    blob = (tmp_path / "ppo.pt").read_bytes()
    (tmp_path / "truncated.pt").write_bytes(blob[: len(blob) // 2])
    (tmp_path / "garbage.pt").write_bytes(b"not a checkpoint at all")
    for name in ("truncated.pt", "garbage.pt"):
        with pytest.raises(ValueError, match="not a readable PPO checkpoint"):
            load_checkpoint(str(tmp_path / name))
        with pytest.raises(ValueError, match="not a readable PPO checkpoint"):
            make_agent(f"ppo:{tmp_path / name}", "micro")
        with pytest.raises(ValueError, match="not a readable PPO checkpoint"):
            train(config, resume=str(tmp_path / name))
    torch.save({"format": "something-else"}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="not a PPO checkpoint"):
        load_checkpoint(str(tmp_path / "other.pt"))
    with pytest.raises(ValueError, match="hidden: checkpoint 32, config 64"):
        train(tiny_config(tmp_path, hidden=64), resume=str(tmp_path / "ppo.pt"))
    with pytest.raises(ValueError, match="does not exist"):
        load_checkpoint(str(tmp_path / "missing.pt"))
    export_policy(str(tmp_path / "ppo.pt"), str(tmp_path / "play.pt"))  # what ships: no optimiser, no env
    assert (tmp_path / "play.pt").stat().st_size < len(blob)
    assert make_agent(f"ppo:{tmp_path / 'play.pt'}", "micro").layers
    with pytest.raises(ValueError, match="holds a policy for play"):
        train(config, resume=str(tmp_path / "play.pt"))
    with pytest.raises(ValueError, match="trained on rules 'micro'"):
        make_agent(f"ppo:{tmp_path / 'ppo.pt'}", "standard")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no temporary file left


def _damaged(data: dict, change: str) -> dict:
    """The shipped checkpoint with one thing broken."""
    import copy

    data = copy.deepcopy(data)
    config, model = data["config"], data["model"]
    if change == "config a list":
        data["config"] = list(config.items())
    elif change == "model a tensor":
        data["model"] = torch.zeros(3)
    elif change == "no hidden":
        del config["hidden"]
    elif change == "layers a string":
        config["layers"] = "x"
    elif change == "bfloat16":
        model["policy.weight"] = model["policy.weight"].to(torch.bfloat16)
    elif change == "int weights":
        model["policy.weight"] = model["policy.weight"].to(torch.int64)
    elif change == "sparse":
        model["policy.weight"] = model["policy.weight"].to_sparse()
    elif change == "nan":
        model["trunk.0.weight"][0, 0] = float("nan")
    elif change == "value head":
        model["value.weight"] = torch.zeros(2, 2)
    return data


@pytest.mark.parametrize(
    "change, words",
    [
        ("config a list", "it has no 'config' dictionary"),
        ("model a tensor", "it has no 'model' dictionary"),
        ("no hidden", "its config's 'hidden' must be a whole number >= 1, got None"),
        ("layers a string", "its config's 'layers' must be a whole number >= 0, got 'x'"),
        (
            "bfloat16",
            "model entry 'policy.weight' must be a dense float32 or float64 tensor in memory, got a "
            "torch.bfloat16 tensor on cpu",
        ),
        ("int weights", "got a torch.int64 tensor"),
        ("sparse", "got a sparse torch.float32 tensor"),
        ("nan", "the model weights are not all finite numbers"),
        ("value head", "value head (2, 2) + bias (1,); expected"),
    ],
)
def test_a_damaged_checkpoint_is_refused_naming_the_file_and_the_field(tmp_path, change, words):
    from tiengow.agents.ppo import DEFAULT_POLICY

    path = tmp_path / "damaged.pt"
    torch.save(_damaged(torch.load(DEFAULT_POLICY, weights_only=True), change), path)
    with pytest.raises(ValueError) as err:
        make_agent(f"ppo:{path}")
    assert str(path) in str(err.value) and words in str(err.value) and "\n" not in str(err.value)


# ============================================================================ the command line (issue 16)
def _cli(*argv: str) -> int:
    from tiengow.cli import main

    return main(list(argv))


def test_resume_alone_uses_the_checkpoints_config_and_refuses_shape_changes(tmp_path, capsys):
    """``tiengow train ppo --resume CKPT`` continues exactly with the stored config (the same weights
    as one straight run); ``--set`` goes on top, but not on a field the arrays depend on."""
    straight = tiny_config(tmp_path / "a")
    train(straight, notice=lambda text: None)
    split = tiny_config(tmp_path / "b")
    train(split, notice=lambda text: None, max_updates=2)
    assert _cli("train", "ppo", "--resume", split.out, "--set", "hidden=32", "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["update"] == 4 and summary["out"] == split.out
    for a, b in zip(parameters(straight.out), parameters(split.out)):
        np.testing.assert_array_equal(a, b)
    for change, field in (("hidden=64", "hidden"), ("num_envs=16", "num_envs"), ("rules=standard", "rules")):
        assert _cli("train", "ppo", "--resume", split.out, "--set", change) == 2
        err = capsys.readouterr().err
        assert f"--set {change.split('=')[0]}=" in err and f"trained with {field} =" in err and err.count("\n") == 1
    with pytest.raises(ValueError, match="lr must be a finite number > 0"):
        PpoConfig.for_resume(split.out, ["lr=-1"])
    copy = tmp_path / "copy"  # a copied run goes on in the copy, and leaves the original alone
    shutil.copytree(os.path.dirname(split.out), copy)
    before = Path(split.out).read_bytes()
    assert _cli("train", "ppo", "--resume", str(copy / "ppo.pt"), "--set", "total_steps=1024", "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["out"] == str(copy / "ppo.pt")
    assert Path(split.out).read_bytes() == before


def test_max_seconds_counts_this_run(tmp_path):
    """A resumed run's time limit counts from its own start, not from the checkpoint's elapsed time:
    a tiny limit still allows the first update of the new run."""
    config = tiny_config(tmp_path, total_steps=32 * 8 * 10)
    train(config, notice=lambda text: None, max_updates=2)
    assert load_checkpoint(config.out)["elapsed"] > 0.001
    messages = []
    resumed = PpoConfig.for_resume(config.out, ["max_seconds=0.001"])
    assert train(resumed, resume=config.out, notice=messages.append)["update"] == 3
    assert any("time limit" in text and "in this run" in text for text in messages)


def test_every_run_ends_with_an_evaluation(tmp_path):
    """A run shorter than eval_interval still evaluates its final policy: eval/ tags in TensorBoard
    and a non-empty curve.json."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    config = tiny_config(
        tmp_path,
        total_steps=32 * 8 * 2,
        eval_interval=1000,
        eval_deals=8,
        eval_opponents=["random"],
        log_dir=str(tmp_path / "tb"),
    )
    summary = train(config, notice=lambda text: None)
    assert [(p["opponent"], p["step"]) for p in summary["curve"]] == [("random", 32 * 8 * 2)]
    assert json.loads((tmp_path / "tb" / "curve.json").read_text()) == summary["curve"]
    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    assert [e.step for e in events.Scalars("eval/chips_vs_random")] == [32 * 8 * 2]
    assert events.Scalars("eval/chips_vs_random")[0].value == pytest.approx(summary["curve"][0]["chips_per_hand"])


def test_time_to_strength_is_the_first_evaluation_with_its_ci_above_zero():
    def point(step, opponent, low, high):
        return {
            "step": step,
            "seconds": step / 10,
            "opponent": opponent,
            "chips_per_hand": (low + high) / 2,
            "ci95": [low, high],
        }

    curve = [
        point(600, "expert", 0.2, 1.0),
        point(1200, "search", -0.3, 0.5),
        point(300, "expert", -1.0, 0.1),
        point(1200, "expert", -0.1, 0.9),
        {"step": 1200, "seconds": 120.0, "exploit": "learned", "gain": 0.1},
        point(600, "search", -0.9, 0.0),
    ]
    assert time_to_strength(curve) == {"expert": {"minutes": 1.0, "step": 600}, "search": None}
    assert time_to_strength([]) == {}


def test_after_resume_the_curve_and_time_to_strength_count_the_evaluations_before_it(tmp_path):
    """Issue 48: a run stopped (here at max_updates) and resumed reports over all its evaluations,
    those of the first session included, with their minutes of training counted on from there."""
    config = tiny_config(tmp_path, eval_interval=1, eval_deals=4, eval_opponents=["random"])
    first = train(config, notice=lambda text: None, max_updates=2)["curve"]
    assert [p["step"] for p in first] == [256, 512]
    assert load_checkpoint(config.out)["curve"] == first
    resumed = train(config, resume=config.out, notice=lambda text: None)["curve"]
    assert resumed[:2] == first and [p["step"] for p in resumed] == [256, 512, 768, 1024]
    seconds = [p["seconds"] for p in resumed]
    assert seconds == sorted(seconds) and seconds[2] > seconds[1]  # counted on, not from 0 again
    # the report over the resumed curve: a first-session evaluation above zero is the one it names
    lifted = [{**p, "ci95": [0.1, 0.2]} if p["step"] == 512 else {**p, "ci95": [-1.0, 1.0]} for p in resumed]
    assert time_to_strength(lifted) == {"random": {"minutes": round(first[1]["seconds"] / 60, 2), "step": 512}}


def test_no_evaluation_line_comes_after_the_final_summary(tmp_path):
    import subprocess
    import sys

    settings = [
        "rules=micro",
        "num_envs=32",
        "rollout_steps=8",
        "total_steps=1024",
        "hidden=16",
        "layers=1",
        "minibatch_size=128",
        "eval_interval=1",
        "eval_deals=4",
        "eval_opponents=[random]",
        f"log_dir={tmp_path / 'tb'}",
    ]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tiengow",
            "train",
            "ppo",
            "--out",
            str(tmp_path / "ppo.pt"),
            *[part for item in settings for part in ("--set", item)],
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    (summary,) = [k for k, line in enumerate(lines) if line.startswith(f"wrote {tmp_path / 'ppo.pt'}:")]
    # evaluations due while one plays are skipped; the final one is always there, before the summary
    assert any(line.startswith("eval at 1,024 steps") for line in lines[:summary]), done.stdout
    assert not [line for line in lines[summary:] if "eval at" in line or "exploitability at" in line]


def test_default_outputs_go_to_a_new_run_folder_with_plain_progress(tmp_path, monkeypatch, capsys):
    """Without out/log_dir everything goes to runs/train-ppo/<timestamp>/ under the current folder, and
    the command says so; without a terminal, progress comes as plain lines (no bar, no escapes)."""
    monkeypatch.chdir(tmp_path)
    sets = [
        f"--set={name}={json.dumps(value)}"
        for name, value in tiny_config(tmp_path).to_dict().items()
        if name not in ("out", "log_dir")
    ]
    assert _cli("train", "ppo", *sets) == 0
    out, err = capsys.readouterr()
    folders = list((tmp_path / "runs" / "train-ppo").iterdir())
    assert [p.name for p in tmp_path.iterdir()] == ["runs"] and len(folders) == 1
    run = folders[0]
    assert (run / "ppo.pt").exists() and list(run.glob("events.out.tfevents.*")) and (run / "curve.json").exists()
    assert f"wrote {os.path.join('runs', 'train-ppo', run.name, 'ppo.pt')}" in out
    lines = err.strip().splitlines()
    assert lines and all(line.startswith("ppo update ") for line in lines), err
    assert "ppo update 4: 1,024/1,024 env steps" in lines[-1]
    assert "\x1b" not in err and "\r" not in err


# ============================================================================ config and agent
def test_the_champion_config_trains_as_the_ppo_config():
    """``champion`` searches with the shipped ppo network, so its config trains exactly as ppo.yaml
    did and differs only in what it evaluates while training (expert, search, exploitability)."""
    ppo, champion = PpoConfig.from_file("ppo").to_dict(), PpoConfig.from_file("champion").to_dict()
    differ = {name for name in ppo if ppo[name] != champion[name]}
    assert differ == {"eval_interval", "eval_deals", "eval_opponents", "exploit_interval"}
    assert champion["eval_opponents"] == ["expert", "search"] and champion["exploit_interval"] > 0


def test_config_overrides_and_errors(tmp_path):
    config = PpoConfig.from_file("configs/ppo.yaml", ["lr=1e-4", "num_envs=16", "pool_weights={greedy: 1}"])
    assert config.lr == 1e-4 and config.num_envs == 16 and config.pool_weights == {"greedy": 1}
    assert parse_overrides(["target_kl=null"]) == {"target_kl": None}
    with pytest.raises(ValueError, match="unknown setting 'learning_rate'"):
        PpoConfig.from_file("configs/ppo.yaml", ["learning_rate=1"])
    with pytest.raises(ValueError, match="name=value"):
        PpoConfig.from_file(None, ["lr"])
    with pytest.raises(ValueError, match="num_envs must be a whole number from 1 to 1,048,576, got 0"):
        PpoConfig.from_file(None, ["num_envs=0"])


@pytest.mark.parametrize(
    "override, words",
    [
        ("ent_coef=abc", "ent_coef must be a finite number >= 0, got 'abc'"),
        ("target_kl=-1", "target_kl must be a finite number > 0 or null, got -1"),
        ("lr=inf", "lr must be a finite number > 0, got 'inf'"),
        ("clip_coef=nan", "clip_coef must be a finite number"),
        ("max_seconds=nan", "max_seconds must be a finite number > 0 or null"),
        ("threads=1000000", "threads must be a whole number from 1 to 256"),
        ("pool_size=1.5", "pool_size must be a whole number from 0 to 10,000, got 1.5"),
        ("seed=1e30", "seed must be a whole number from 0 to 9,223,372,036,854,775,807"),
        ("overlap=maybe", "overlap must be true or false, got 'maybe'"),
        ("anneal_lr=3", "anneal_lr must be true or false"),
        ("eval_opponents=nope", "eval_opponents must be a list of agent specs"),
        ("eval_opponents=[nope]", "eval_opponents: unknown agent 'nope'"),
        ("eval_deals=-5", "eval_deals must be a whole number from 1"),
        ("out=o/", "out is the checkpoint's file path"),
    ],
)
def test_every_setting_is_checked_before_training(override, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        PpoConfig.from_file("configs/ppo.yaml", [override])


def test_agent_batched_act_is_legal_and_matches_torch(tmp_path):
    config = tiny_config(tmp_path, rules="standard", total_steps=32 * 8, opponent_mix=0.0)
    train(config, notice=lambda text: None)
    agent = make_agent(f"ppo:{config.out}", "standard")
    env = VectorEnv(64, "standard", seed=3)
    net = network_from_checkpoint(load_checkpoint(config.out))
    for _ in range(40):
        actions = agent.act_batch(env.observation, env.action_mask)
        assert env.action_mask[np.arange(64), actions].all()
        with torch.no_grad():
            log_probs, _ = net(torch.from_numpy(env.observation), torch.from_numpy(env.action_mask.view(bool)))
        best = log_probs.argmax(1).numpy()
        rows = np.arange(64)  # numpy and torch may break a float32 near-tie apart: both are then best
        np.testing.assert_allclose(log_probs[rows, actions].numpy(), log_probs[rows, best].numpy(), atol=1e-5)
        assert agent.act(env.observation[0], env.action_mask[0]) == actions[0]
        env.step(actions)
    sampler = make_agent(f"ppo:{config.out}:sample=1", "standard", seed=1)
    assert sampler.sample and env.action_mask[np.arange(64), sampler.act_batch(env.observation, env.action_mask)].all()


def test_shipped_model_loads_and_plays_legal_actions():
    """The default ``ppo`` agent is the shipped model (agents/policies/ppo.pt, <= 5 MB)."""
    from tiengow.agents.ppo import DEFAULT_POLICY

    assert DEFAULT_POLICY.exists() and DEFAULT_POLICY.stat().st_size <= 5 * 2**20
    agent = make_agent("ppo", "standard")
    env = VectorEnv(32, "standard", seed=9)
    for _ in range(40):
        actions = agent.act_batch(env.observation, env.action_mask)
        assert env.action_mask[np.arange(32), actions].all()
        env.step(actions)


@pytest.mark.slow
def test_shipped_model_beats_expert():
    """The acceptance check at a smaller size: ``tiengow eval ppo --vs expert`` on 400 deals."""
    from tiengow.agents.arena import evaluate

    result = evaluate("ppo", "expert", 400, seed=0)
    assert result.ci95[0] > 0, result


def test_the_agent_needs_no_trainer_and_no_torch_at_import():
    """What a shipped bot needs to play lives in the agents layer: loading and playing ``ppo`` imports
    nothing of ``tiengow.training``, and importing the agent module does not import torch."""
    import subprocess
    import sys

    code = (
        "import sys; import tiengow.agents.ppo; assert 'torch' not in sys.modules; "
        "from tiengow.agents.base import make_agent; from tiengow_env.vector import VectorEnv; "
        "env = VectorEnv(4, 'standard', seed=1); agent = make_agent('ppo', 'standard'); "
        "agent.act_batch(env.observation, env.action_mask); "
        "print(sorted(m for m in sys.modules if m.startswith('tiengow.training')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
