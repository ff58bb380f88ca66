"""Training that survives an interruption (``training/interrupt.py``): SIGINT and SIGTERM stop a
trainer after the unit of work under way, with a checkpoint and the command that resumes it."""
from __future__ import annotations

import os
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
SETTINGS = ["rules=micro", "num_envs=16", "rollout_steps=8", "hidden=16", "layers=1", "minibatch_size=64",
            "eval_interval=0", "log_dir=false", "checkpoint_interval=1000", "overlap=false", "seed=4",
            "pool_weights={greedy: 1.0, past: 1.0}", "pool_interval=3"]


def tiengow(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tiengow", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


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
