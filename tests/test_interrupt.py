"""Training that survives an interruption (``training/interrupt.py``): SIGINT and SIGTERM stop a
trainer after the unit of work under way, with a checkpoint and the command that resumes it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tiengow.training.ppo_checkpoints import load_checkpoint  # noqa: E402

# A micro run of many short updates, with no overlap: a run interrupted and resumed is then the
# uninterrupted run exactly (with overlap, the pipeline drains where it stopped, as at a checkpoint).
# The learning rate is constant: annealed, it would follow each run's own total_steps, and the
# interrupted run (total_steps 10^6) and the straight one (a few updates) would differ from update 2.
SETTINGS = [
    "rules=micro",
    "num_envs=16",
    "rollout_steps=8",
    "hidden=16",
    "layers=1",
    "minibatch_size=64",
    "eval_interval=0",
    "log_dir=false",
    "checkpoint_interval=1000",
    "overlap=false",
    "seed=4",
    "pool_weights={greedy: 1.0, past: 1.0}",
    "pool_interval=3",
    "anneal_lr=false",
]


def tiengow(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tiengow", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs
    )


def sets(*settings: str) -> list[str]:
    return [item for setting in settings for item in ("--set", setting)]


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM])
def test_train_ppo_stops_with_a_checkpoint_and_resumes_exactly(signal_number, tmp_path):
    out = str(tmp_path / "ppo.pt")
    run = tiengow("train", "ppo", *sets(*SETTINGS, "total_steps=1000000"), "--out", out)
    deadline = time.monotonic() + 240
    for line in run.stderr:  # plain progress lines: the first comes after the first update
        if line.startswith("ppo update") or time.monotonic() > deadline:
            break
    run.send_signal(signal_number)
    _, err = run.communicate(timeout=240)
    assert run.returncode == 128 + signal_number, err
    name = signal.Signals(signal_number).name
    assert f"tiengow: stopped by {name} after update" in err
    assert f"checkpoint {out}; resume with: tiengow train ppo --resume {out}" in err
    stopped = load_checkpoint(out)
    updates = stopped["update"]
    assert updates >= 1
    # Resumed to two updates more, it matches a run of that many updates in one go.
    target = f"total_steps={(updates + 2) * 16 * 8}"
    resumed = tiengow("train", "ppo", "--resume", out, *sets(target))
    assert resumed.wait(timeout=240) == 0, resumed.stderr.read()
    straight = str(tmp_path / "straight.pt")
    whole = tiengow("train", "ppo", *sets(*SETTINGS, target), "--out", straight)
    assert whole.wait(timeout=240) == 0, whole.stderr.read()
    a, b = load_checkpoint(out), load_checkpoint(straight)
    assert a["update"] == b["update"] == updates + 2
    for key in b["model"]:
        np.testing.assert_array_equal(a["model"][key].numpy(), b["model"][key].numpy())


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM])
def test_the_first_signal_asks_to_stop_and_the_second_stops_at_once(signal_number):
    from tiengow.training.interrupt import stop_on_signal

    before = signal.getsignal(signal_number)
    with stop_on_signal() as stop:
        assert not stop
        os.kill(os.getpid(), signal_number)
        time.sleep(0.1)  # the handler runs in the main thread at its next bytecode
        assert stop.signal == signal_number
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal_number)
            time.sleep(0.1)
    assert signal.getsignal(signal_number) is before  # the handlers are put back


# distill and locator: a small run of three chunks a worker (chunks.CHUNK_HANDS = 25 hands), so that
# the signal, sent at the first progress line, comes before the last chunk.
HANDS_RUNS = {
    "distill": ["teacher=pimc:4", "hands=70", "workers=1", "seed=9", "epochs=2", "batch=64"],
    "locator": [
        "teacher=pimc:4",
        "hands=70",
        "workers=1",
        "seed=9",
        "hidden=16",
        "layers=1",
        "epochs=2",
        "batch=256",
        "check_every=2",
    ],
}


@pytest.mark.parametrize("trainer, signal_number", [("locator", signal.SIGINT), ("distill", signal.SIGTERM)])
def test_distill_and_locator_stop_between_chunks_and_resume_exactly(trainer, signal_number, tmp_path):
    out = str(tmp_path / f"{trainer}.pt")
    run = tiengow("train", trainer, *sets(*HANDS_RUNS[trainer]), "--out", out)
    deadline = time.monotonic() + 240
    for line in run.stderr:  # the first progress line: within 5 seconds of the first hands
        if line.startswith(f"{trainer}: ") or time.monotonic() > deadline:
            break
    run.send_signal(signal_number)
    _, err = run.communicate(timeout=240)
    assert run.returncode == 128 + signal_number, err
    partial = out + ".partial"
    name = signal.Signals(signal_number).name
    assert re.search(
        rf"tiengow: stopped by {name} after (25|50) of 70 hands; checkpoint {re.escape(partial)}; "
        rf"resume with: tiengow train {trainer} --resume {re.escape(partial)}\n",
        err,
    ), err
    assert sorted(os.listdir(tmp_path)) == [f"{trainer}.pt.partial"] and "Traceback" not in err
    # a setting the hands played depend on cannot change; the fit's can
    changed = tiengow("train", trainer, "--resume", partial, "--set", "seed=10")
    _, err = changed.communicate(timeout=240)
    assert changed.returncode == 2 and "seed cannot change on resume" in err
    resumed = tiengow("train", trainer, "--resume", partial)
    _, err = resumed.communicate(timeout=240)
    assert resumed.returncode == 0, err
    assert sorted(os.listdir(tmp_path)) == [f"{trainer}.pt"]  # the partial file is used up
    straight = str(tmp_path / "straight.pt")
    whole = tiengow("train", trainer, *sets(*HANDS_RUNS[trainer]), "--out", straight)
    _, err = whole.communicate(timeout=240)
    assert whole.returncode == 0, err
    a, b = torch.load(out, weights_only=True), torch.load(straight, weights_only=True)
    assert a["model"].keys() == b["model"].keys()
    for key in b["model"]:
        np.testing.assert_array_equal(a["model"][key].numpy(), b["model"][key].numpy())


def test_a_partial_file_keeps_the_work_done_and_refuses_other_trainers(tmp_path):
    from tiengow.training.chunks import WorkerData, load_partial, save_partial

    rng = np.random.default_rng(3)
    rng.integers(10, size=5)
    done = [WorkerData(2, rng.bit_generator.state, [{"x": np.arange(3.0)}, {"x": np.arange(2.0)}]), WorkerData()]
    path = str(tmp_path / "run.pt.partial")
    save_partial(path, "train distill", {"hands": 9}, done)
    config, loaded = load_partial(path, "train distill")
    assert config == {"hands": 9} and [worker.hands for worker in loaded] == [2, 0]
    np.testing.assert_array_equal(loaded[0].arrays()["x"], [0.0, 1.0, 2.0, 0.0, 1.0])
    again = np.random.default_rng(0)
    again.bit_generator.state = loaded[0].carry
    assert again.integers(2**63) == rng.integers(2**63) and loaded[1].parts == []
    with pytest.raises(ValueError, match="a partial run of tiengow train distill, not of tiengow train locator"):
        load_partial(path, "train locator")
    with pytest.raises(ValueError, match="no such file"):
        load_partial(str(tmp_path / "missing"), "train locator")


def alive(pid: str) -> bool:
    """Whether process ``pid`` still runs (a zombie that nobody reaped has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_second_signal_kills_the_workers_at_once_and_leaves_nothing(tmp_path):
    """The first Ctrl-C waits for the chunk under way (minutes of search here); the second ends the
    run and its worker processes at once, with no partial file."""
    out = str(tmp_path / "locator.pt")
    run = tiengow("train", "locator", *sets("teacher=pimc:400", "hands=200", "workers=1"), "--out", out)
    for line in run.stderr:  # the first progress line: the worker is playing its first chunk
        if line.startswith("locator: "):
            break
    children = subprocess.run(["pgrep", "-P", str(run.pid)], capture_output=True, text=True).stdout.split()
    assert children  # the worker (and multiprocessing's resource tracker)
    run.send_signal(signal.SIGINT)
    time.sleep(1.0)
    run.send_signal(signal.SIGINT)
    start = time.monotonic()
    _, err = run.communicate(timeout=60)
    assert time.monotonic() - start < 30
    assert run.returncode == 130 and "tiengow: interrupted" in err and "Traceback" not in err
    assert os.listdir(tmp_path) == []
    time.sleep(1.0)
    assert not [pid for pid in children if alive(pid)]


def test_sigterm_ends_an_evaluation_and_its_workers(tmp_path):
    """Outside a trainer SIGTERM ends a command as Ctrl-C does: no traceback, no worker left
    searching on its own, nothing written."""
    record = tmp_path / "matches"
    run = tiengow("eval", "search", "--vs", "expert", "--deals", "400", "--workers", "2", "--record", str(record))
    deadline = time.monotonic() + 120
    children: list[str] = []
    while len(children) < 3 and time.monotonic() < deadline:  # two workers and the resource tracker
        time.sleep(0.5)
        children = subprocess.run(["pgrep", "-P", str(run.pid)], capture_output=True, text=True).stdout.split()
    time.sleep(3.0)  # the workers at their deals
    run.send_signal(signal.SIGTERM)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 143 and "tiengow: terminated" in err and "Traceback" not in err, err
    time.sleep(1.0)
    assert not [pid for pid in children if alive(pid)]
    assert not record.exists() or not os.listdir(record)


def test_a_locator_stopped_in_its_fit_keeps_every_hand_and_fits_again_on_resume(tmp_path):
    from tiengow.training.interrupt import Interrupted
    from tiengow.training.locator import LocatorConfig, train_locator

    settings = [
        f"{name}={value}"
        for name, value in (
            ("teacher", "pimc:4"),
            ("hands", 12),
            ("workers", 1),
            ("hidden", 8),
            ("layers", 1),
            ("batch", 64),
            ("check_every", 1),
        )
    ]
    config = LocatorConfig.from_file(None, settings + [f"out={tmp_path / 'a.pt'}"])

    def signal_in_the_fit(stage: str, count: int, gain: float) -> None:
        if stage == "fit":
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.1)  # the handler runs at the next bytecode

    with pytest.raises(Interrupted, match="stopped by SIGTERM in the fit, all hands played") as stopped:
        train_locator(config, progress=signal_in_the_fit)
    assert stopped.value.status == 143
    resumed, partial = LocatorConfig.for_resume(str(tmp_path / "a.pt.partial"), [])
    assert [worker.hands for worker in partial.done] == [12] and resumed.out == str(tmp_path / "a.pt")
    train_locator(resumed, resume=partial)
    straight = LocatorConfig.from_file(None, settings + [f"out={tmp_path / 'b.pt'}"])
    train_locator(straight)
    a, b = torch.load(tmp_path / "a.pt", weights_only=True), torch.load(tmp_path / "b.pt", weights_only=True)
    for key in b["model"]:
        np.testing.assert_array_equal(a["model"][key].numpy(), b["model"][key].numpy())
    assert sorted(os.listdir(tmp_path)) == ["a.pt", "b.pt"]
