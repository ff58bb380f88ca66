"""On Ray: evaluation gives exactly the local result, and PPO trains with rollout workers as
actors; both go on when workers die mid-run."""

import json
import subprocess

import numpy as np
import pytest

from tiengow.agents.arena import evaluate

ray = pytest.importorskip("ray")
torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def test_eval_on_ray_equals_local(local_ray):
    local = evaluate("greedy", "random", deals=60, seed=9)
    assert evaluate("greedy", "random", deals=60, seed=9, ray_address="local") == local


def test_a_sequential_test_on_ray_stops_where_the_local_one_does(local_ray):
    """Chunks finish in any order on Ray; the test reads them in deal order, and the rest are cancelled."""
    from tiengow.agents.sprt import Hypotheses

    local = evaluate("expert", "greedy", deals=2000, seed=45010, sprt=Hypotheses(0.5, 1.0))
    assert evaluate("expert", "greedy", deals=2000, seed=45010, sprt=Hypotheses(0.5, 1.0), ray_address="local") == local
    assert local.deals < 2000 and local.sprt["verdict"] != "undecided"


def test_killed_workers_are_retried_without_losing_or_double_counting(local_ray):
    local = evaluate("expert", "greedy", deals=100, seed=3)
    killed = []

    def kill_running_tasks_once(_: int) -> None:
        # At each finished chunk until one kill lands (at the first, the next tasks may not have
        # started yet on a loaded machine: pkill then finds nothing and returns 1).
        if not killed and subprocess.run(["pkill", "-9", "-f", "ray::_play_deals"], check=False).returncode == 0:
            killed.append(0)

    result = evaluate("expert", "greedy", deals=100, seed=3, ray_address="local", progress=kill_running_tasks_once)
    assert killed == [0]  # a worker really was killed mid-run
    assert result == local


# ============================================================================ PPO rollout workers
def ppo_config(tmp_path, **changes):
    from tiengow.training.ppo import PpoConfig

    settings = dict(
        rules="micro",
        num_envs=32,
        rollout_steps=8,
        total_steps=32 * 8 * 6,
        hidden=32,
        layers=1,
        minibatch_size=128,
        pool_interval=1,
        pool_size=2,
        opponent_mix=0.5,
        pool_weights={"greedy": 1.0, "past": 1.0},
        eval_interval=0,
        log_dir=str(tmp_path / "tb"),
        out=str(tmp_path / "ppo.pt"),
        checkpoint_interval=2,
        seed=5,
    )
    settings.update(changes)
    return PpoConfig.from_dict(settings)


def test_train_ppo_on_ray_from_the_cli_writes_a_loadable_checkpoint(local_ray, tmp_path, capsys):
    from tiengow.agents.base import make_agent
    from tiengow.cli import main

    config = ppo_config(tmp_path)
    sets = [f"--set={name}={json.dumps(value)}" for name, value in config.to_dict().items()]
    assert main(["train", "ppo", *sets, "--ray", "--rollout-workers", "2", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["update"] == 6 and summary["global_step"] == 32 * 8 * 6
    assert make_agent(f"ppo:{config.out}", "micro").layers
    assert evaluate(f"ppo:{config.out}", "random", 20, seed=1, rules="micro").deals == 20
    assert list((tmp_path / "tb").glob("events.out.tfevents.*"))  # the same TensorBoard logging


def test_ray_training_resumes_exactly(local_ray, tmp_path):
    """Two workers' env and random states go into the checkpoint: 4 updates, then 2 more after a
    resume, equal 6 in one go (so a Ray run is also reproducible from its seed)."""
    from tiengow.training.ppo_checkpoints import load_checkpoint
    from tiengow.training.ppo_runner import RayCollection, train

    straight = ppo_config(tmp_path / "a", log_dir=None)
    train(straight, notice=lambda text: None, ray=RayCollection("local", 2))
    split = ppo_config(tmp_path / "b", log_dir=None)
    train(split, notice=lambda text: None, ray=RayCollection("local", 2), max_updates=4)
    assert len(load_checkpoint(split.out)["rollouts"]) == 2
    train(split, resume=split.out, notice=lambda text: None, ray=RayCollection("local", 2))
    a, b = load_checkpoint(straight.out)["model"], load_checkpoint(split.out)["model"]
    for name in a:
        np.testing.assert_array_equal(a[name].numpy(), b[name].numpy())


def test_a_killed_rollout_worker_is_restarted_and_training_goes_on(local_ray, tmp_path):
    from tiengow.training.ppo_checkpoints import load_checkpoint
    from tiengow.training.ppo_runner import RayCollection, train

    config = ppo_config(tmp_path, total_steps=32 * 8 * 8, log_dir=None)
    killed, messages = [], []

    def kill_one_worker(steps: int, point: dict) -> None:
        if steps >= 32 * 8 * 3 and not killed:  # a rollout is in flight now (collection overlaps the update)
            pids = subprocess.run(["pgrep", "-f", "ray::RolloutWorker"], capture_output=True, text=True).stdout.split()
            assert pids, "no rollout worker process found"
            killed.append(subprocess.run(["kill", "-9", pids[0]], check=False).returncode)

    summary = train(config, progress=kill_one_worker, notice=messages.append, ray=RayCollection("local", 2))
    assert killed == [0]
    assert any("died; restarting it" in text for text in messages), messages
    assert summary["update"] == 8
    assert load_checkpoint(config.out)["update"] == 8


def test_ray_options_are_checked(local_ray, tmp_path, capsys):
    from tiengow.cli import main
    from tiengow.training.ppo_runner import RayCollection, train

    assert main(["train", "ppo", "--rollout-workers", "2"]) == 2
    assert "--rollout-workers needs --ray" in capsys.readouterr().err
    with pytest.raises(ValueError, match="3 rollout workers need 3 CPUs .* the Ray cluster has 2"):
        train(ppo_config(tmp_path), ray=RayCollection("local", 3))
    # A fresh process: this one is connected to the test's Ray instance already.
    done = subprocess.run(
        ["tiengow", "eval", "greedy", "--vs", "random", "--deals", "4", "--ray", "127.0.0.1:1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "tiengow: error: no Ray cluster answers at 127.0.0.1:1 (Connection refused); start one with "
        "`ray start --head` there, or use --ray alone for a local instance"
    ]


@pytest.mark.parametrize("address", ["foo", "1.2.3.4:99999", ":6379", "host:port"])
def test_a_ray_address_that_is_not_host_port_is_refused_in_words(address):
    from tiengow.agents.infra import _check_reachable

    with pytest.raises(ValueError, match=r"--ray takes the HOST:PORT of a Ray cluster, .*; got '"):
        _check_reachable(address)  # Ray's own "Invalid address format: foo" said not what was expected
