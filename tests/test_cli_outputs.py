"""What the command line writes, and when it checks: outputs are checked before the work and
made after the inputs are read, a path given with --out is taken as it is, a run never writes
over another run's logs, and no input (a closed stream, an odd checkpoint) is an internal error."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from tiengow import cli  # noqa: E402
from tiengow.agents.ppo import DEFAULT_POLICY  # noqa: E402

TINY = [
    "--set",
    "num_envs=16",
    "--set",
    "rollout_steps=16",
    "--set",
    "total_steps=256",
    "--set",
    "eval_interval=0",
    "--set",
    "hidden=16",
]


def one_line_error(capsys, *argv: str) -> str:
    assert cli.main(list(argv)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tiengow: error: "), err
    return err


def test_a_minibatch_of_one_decision_trains_finite_weights(tmp_path):
    """minibatch_size=1: the advantage of one decision has no spread (its std was nan, and every
    weight with it)."""
    out = tmp_path / "one.pt"
    assert cli.main(["train", "ppo", *TINY, "--set", "minibatch_size=1", "--out", str(out)]) == 0
    model = torch.load(out, weights_only=True)["model"]
    assert all(torch.isfinite(t).all() for t in model.values())


def test_out_is_a_path_as_written_not_yaml(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["train", "ppo", *TINY, "--out", "null"]) == 0
    assert (tmp_path / "null").is_file() and not (tmp_path / "runs").exists()
    assert cli.main(["train", "ppo", *TINY, "--out", "x/a b #c.pt"]) == 0
    assert (tmp_path / "x" / "a b #c.pt").is_file()


def test_a_run_does_not_write_over_another_runs_logs(tmp_path, capsys):
    (tmp_path / "curve.json").write_text("precious")
    err = one_line_error(capsys, "train", "ppo", *TINY, "--out", str(tmp_path / "other.pt"))
    assert "already holds the curve.json and logs of another run" in err
    assert (tmp_path / "curve.json").read_text() == "precious" and not (tmp_path / "other.pt").exists()


def test_total_steps_in_whole_updates_is_said(tmp_path, capsys):
    assert cli.main(["train", "ppo", *TINY, "--set", "total_steps=500", "--out", str(tmp_path / "t.pt")]) == 0
    assert "this run trains 256" in capsys.readouterr().err


def test_inputs_are_read_before_any_folder_is_made(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = one_line_error(capsys, "train", "ppo", "--resume", str(DEFAULT_POLICY))
    assert "holds a policy for play" in err
    err = one_line_error(capsys, "train", "ppo", "--resume", str(tmp_path / "missing.pt"))
    assert not (tmp_path / "runs").exists()
    micro = tmp_path / "micro.pt"
    assert cli.main(["train", "ppo", *TINY, "--set", "rules=micro", "--set", "hidden=256", "--out", str(micro)]) == 0
    capsys.readouterr()
    err = one_line_error(capsys, "exploit", "random", "--warm-start", str(micro), "--minutes", "0.1")
    assert "does not fit this run's rules, hidden and layers (size mismatch for" in err
    assert not (tmp_path / "runs" / "exploit").exists()


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc, a folder that takes no new files")
@pytest.mark.parametrize(
    "argv",
    [
        ["league", "random", "greedy", "--deals", "1"],
        ["bench", "--quick", "--only", "memory"],
        ["train", "distill", "--set", "teacher=pimc:2", "--set", "hands=2"],
    ],
    ids=["league", "bench", "distill"],
)
def test_a_default_folder_that_cannot_be_made_is_refused_first(argv, capsys, monkeypatch):
    monkeypatch.chdir("/proc")
    err = one_line_error(capsys, *argv)
    assert "the default output folder runs/" in err and "cannot be created" in err


@pytest.mark.parametrize(
    "argv, suffix",
    [
        (["league", "random", "greedy", "--deals", "1", "--out"], ".png"),
        (["bench", "--quick", "--only", "memory", "--save"], ".md"),
    ],
)
def test_every_file_of_an_output_is_checked_first(argv, suffix, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    (tmp_path / f"z{suffix}").mkdir()
    err = one_line_error(capsys, *argv, str(tmp_path / "z"))
    assert f"its {suffix} file" in err and "is a folder" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"z{suffix}"]


@pytest.mark.parametrize(
    "change, words",
    [
        ("intkey", "entries are named by text, got int 3"),
        ("meta", "tensor in memory, got a torch.float32 tensor on meta"),
    ],
)
def test_odd_checkpoints_are_refused(change, words, tmp_path, capsys):
    data = torch.load(DEFAULT_POLICY, weights_only=True)
    model = dict(data["model"])
    if change == "intkey":
        model[3] = model["input_scale"]
    else:
        model["input_scale"] = torch.empty(model["input_scale"].shape, device="meta")
    path = tmp_path / f"{change}.pt"
    torch.save({**data, "model": model}, path)
    assert words in one_line_error(capsys, "eval", f"ppo:{path}", "--vs", "random", "--deals", "1")


@pytest.mark.parametrize("closed", ["<&-", ">&-"])
def test_a_closed_standard_stream_is_not_an_internal_error(closed, tmp_path):
    command = f"{sys.executable} -m tiengow.cli play --vs random --seed 1 --hands 1 --save {tmp_path / 'p'} {closed}"
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0 and "internal error" not in done.stderr, done.stderr


def test_a_pipe_is_refused_before_it_is_opened(tmp_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "is a pipe or a socket, not a file" in one_line_error(capsys, "eval", f"ppo:{fifo}", "--vs", "random")
    assert "is a pipe or a socket, not a file" in one_line_error(capsys, "train", "ppo", "--config", str(fifo))


def test_config_names_and_settings_are_read_as_people_mean_them(tmp_path, capsys, monkeypatch):
    from tiengow.training.config import parse_overrides, read_settings

    monkeypatch.chdir(tmp_path)
    (tmp_path / "ppo").mkdir()  # a folder named like a shipped config does not hide it
    assert read_settings("ppo")["hidden"] > 0
    (tmp_path / "c.yaml").write_text("lr: 1e-4\nseed: 2.5e3\n")
    assert read_settings("c.yaml") == {"lr": 1e-4, "seed": 2500.0}
    assert parse_overrides(["lr=1e-4", "deck=6-6"]) == {"lr": 1e-4, "deck": "6-6"}
    assert parse_overrides(["seed=1", "seed=2"]) == {"seed": 2}  # the later wins, as with any later option
    for seed in ("1_0", "\u0663"):  # int() takes both
        assert cli.main(["eval", "random", "--vs", "greedy", "--deals", "1", "--seed", seed]) == 2
        assert "argument --seed: must be an integer >= 0" in capsys.readouterr().err


def test_an_old_pickle_checkpoint_is_one_line_without_torchs_warnings(tmp_path, capsys):
    path = tmp_path / "p4.pt"
    torch.save({"x": 1}, path, _use_new_zipfile_serialization=False, pickle_protocol=4)
    assert "is not a readable PPO checkpoint" in one_line_error(capsys, "eval", f"ppo:{path}", "--vs", "random")
