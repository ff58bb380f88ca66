"""Evaluation on Ray gives exactly the local result, even when workers die mid-run."""
import subprocess

import pytest

from agents.arena import evaluate

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def test_eval_on_ray_equals_local(local_ray):
    local = evaluate("greedy", "random", deals=60, seed=9)
    assert evaluate("greedy", "random", deals=60, seed=9, ray_address="local") == local


def test_killed_workers_are_retried_without_losing_or_double_counting(local_ray):
    local = evaluate("expert", "greedy", deals=100, seed=3)
    killed = []

    def kill_running_tasks_once(_: int) -> None:
        if not killed:
            killed.append(subprocess.run(["pkill", "-9", "-f", "ray::_play_deals"], check=False).returncode)

    result = evaluate("expert", "greedy", deals=100, seed=3, ray_address="local", progress=kill_running_tasks_once)
    assert killed == [0]  # a worker really was killed mid-run
    assert result == local
