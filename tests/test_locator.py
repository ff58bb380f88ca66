"""The tile locator: the information state of a Game, the likelihood of a sampled world's hidden
tiles, the locator checkpoint, ``champion:locate=A``, and ``tiengow train locator``."""

from pathlib import Path

import numpy as np
import pytest
import torch

from tiengow.agents.base import make_agent
from tiengow.agents.locator import DEFAULT_LOCATOR, FORMAT, VERSION, make_locator, read_locator
from tiengow.cli import main
from tiengow.training.locator import LocatorConfig, hidden_places
from tiengow_env import layout as L
from tiengow_env.env import Session
from tiengow_env.game import Game
from tiengow_env.rules import RuleSet
from tiengow_env.search import location_log_weights, sample_worlds
from tiengow_env.tiles import NUM_TYPES, TILE_TYPE

TINY = [
    "--set",
    "teacher=pimc:8",
    "--set",
    "hands=2",
    "--set",
    "workers=1",
    "--set",
    "epochs=1",
    "--set",
    "check_every=1",
    "--set",
    "hidden=8",
]


@pytest.mark.parametrize("rules", ["standard", "culin1895", "three_player"])
def test_a_games_information_state_is_the_envs_at_every_decision(rules):
    session, game, expert = Session(rules), Game(seed=5, rules=rules), make_agent("expert", rules)
    session.reset(5)  # the same deal as Game(seed=5)
    while not game.is_over:
        for seat in range(game.players):
            assert np.array_equal(game.information_state(seat), session.information_state(seat))
        observation, mask = game.observe()
        action = expert.act(observation, mask)
        game.step(action)
        session.step(action)


def test_a_game_whose_state_was_set_from_outside_has_no_information_state():
    game, other, expert = Game(seed=1), Game(seed=2), make_agent("expert")
    for _ in range(5):
        other.step(expert.act(*other.observe()))
    game.state = other.state.copy()  # five decisions in, with no history
    with pytest.raises(ValueError, match="tricks do not lead to its state"):
        game.information_state()


def test_a_worlds_log_weight_adds_the_logit_of_each_hidden_tiles_place():
    game = Game(seed=7)
    expert = make_agent("expert")
    for _ in range(9):
        game.step(expert.act(*game.observe()))
    seat = game.to_act
    worlds = sample_worlds(game, 50, seed=3)
    assert np.all(location_log_weights(worlds, seat, 4, np.zeros((6, NUM_TYPES))) == 0)
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(6, NUM_TYPES))
    expected = [
        sum(
            logits[row, t]
            for row, place in enumerate(hidden_places(world, seat, 4))
            for t in range(NUM_TYPES)
            for _ in range(place[t])
        )
        for world in worlds
    ]
    np.testing.assert_allclose(location_log_weights(worlds, seat, 4, logits), expected)
    with pytest.raises(ValueError, match=r"logits must be of shape \(6, 21\)"):
        location_log_weights(worlds, seat, 4, logits[:4])


def test_hidden_places_are_the_other_seats_tiles_in_seats_relative_to_the_observer():
    game = Game(seed=11)
    places = hidden_places(game.state, 2, 4)
    for r in range(1, 4):
        hand = [TILE_TYPE[b] for b in range(32) if int(game.state[L.S_HAND + (2 + r) % 4]) >> b & 1]
        assert places[r - 1].tolist() == np.bincount(hand, minlength=NUM_TYPES).tolist()
        assert places[3 + r - 1].sum() == 0  # nothing face down yet


def test_the_shipped_locator_loads_and_reads_the_seat_to_act():
    locator = make_locator(None, RuleSet.from_spec("standard"))
    logits = locator.logits(Game(seed=4))
    assert logits.shape == (6, NUM_TYPES) and np.all(np.isfinite(logits))
    with pytest.raises(ValueError, match="trained on rules 'standard'.*these rules \\(three_player\\) need 1574"):
        make_locator(None, RuleSet.from_spec("three_player"))


def damaged(tmp_path: Path, change) -> str:
    data = torch.load(DEFAULT_LOCATOR, weights_only=True)
    change(data)
    path = tmp_path / "bad.pt"
    torch.save(data, path)
    return str(path)


@pytest.mark.parametrize(
    "change, words",
    [
        (
            lambda d: d.update(format="tiengow-ppo-checkpoint"),
            f"is not a tile-locator checkpoint \\(expected format '{FORMAT}'\\)",
        ),
        (lambda d: d.update(version=VERSION + 1), "is a version 2 tile-locator checkpoint"),
        (lambda d: d["config"].update(layers=3), "the model weights do not fit its config"),
        (lambda d: d["config"].update(hidden=128), "layer 0 has weights \\(256, 2063\\).*needs \\(128, 2063\\)"),
        (lambda d: d["model"]["body.2.bias"].fill_(float("nan")), "layer 1 holds numbers that are not finite"),
        (lambda d: d["model"].update({"body.0.weight": torch.zeros(3, dtype=torch.int64)}), "dense float32"),
    ],
)
def test_a_damaged_locator_is_refused_with_what_is_wrong(tmp_path, change, words):
    path = damaged(tmp_path, change)
    with pytest.raises(ValueError, match=words):
        read_locator(path)
    with pytest.raises(ValueError, match=f"champion: locator={path}: .*" + words):
        make_agent(f"champion:8:locator={path}")


def test_champion_locate_options():
    game = Game(seed=9)
    expert = make_agent("expert")
    for _ in range(10):
        game.step(expert.act(*game.observe()))
    plain, located = make_agent("champion:8:locate=0"), make_agent("champion:8")
    weighed = make_agent("champion:8:particles=512:exact=0")
    assert plain.sampler.worlds(game, 1, plain.workspace) is None and "particles" not in plain.budget
    states, weights = located.sampler.worlds(game, 1, located.workspace)
    assert len(states) == 4096 and np.all(weights == 1.0)  # drawn from the belief: nothing to weigh
    assert len(np.unique(states, axis=0)) > 0.5 * len(states)
    assert located.budget["particles"] == 4096
    states, weights = weighed.sampler.worlds(game, 1, weighed.workspace)
    assert len(states) == 512 and weights.max() == 1.0 and weights.min() < 1.0  # the history says something
    outside = Game(seed=9)
    outside.state = game.state.copy()  # no history: uniform worlds
    assert located.sampler.worlds(outside, 1, located.workspace) is None
    assert weighed.sampler.worlds(outside, 1, weighed.workspace) is None
    with pytest.raises(ValueError, match="locator=PATH is read only with locate > 0"):
        make_agent(f"champion:locate=0:locator={DEFAULT_LOCATOR}")
    with pytest.raises(ValueError, match="locate is a number from 0"):
        make_agent("champion:locate=-1")


def test_a_tiny_run_writes_a_locator_the_champion_searches_with(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "locator", "--config", "locator", *TINY]) == 0
    printed = capsys.readouterr()
    (out,) = Path("runs/train-locator").glob("*/locator.pt")  # the default output, in ./runs only
    assert f"wrote {out}:" in printed.out and "of 2 hands" in printed.out and "gain" in printed.out
    assert "locator: 2/2 hands played by pimc:8" in printed.err
    config, layers = read_locator(str(out))
    assert config["hidden"] == 8 and config["teacher"] == "pimc:8" and layers[0][0].shape == (8, 2063)
    game = Game(seed=3)
    agent = make_agent(f"champion:16:locator={out}", "standard", 1)
    observation, mask = game.observe()
    assert mask[agent.act(observation, mask, game=game)]


@pytest.mark.parametrize(
    "settings, words",
    [
        (["--set", "teacher=expert"], "teacher must be a search bot's spec"),
        (["--set", "hands=1", "--set", "workers=2"], "at least one per worker"),
        (["--set", "validation=0"], "validation"),
        (["--set", "hidden=0"], "hidden"),
    ],
)
def test_bad_settings_are_refused_before_any_hand(tmp_path, monkeypatch, capsys, settings, words):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "locator", "--config", "locator", *settings]) == 2
    assert words in capsys.readouterr().err and not Path("runs").exists()


def test_too_few_steps_to_measure_says_so_and_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "locator", "--config", "locator", *TINY, "--set", "check_every=100000", "--out", "x.pt"]) == 2
    assert "fewer than check_every=100000" in capsys.readouterr().err and not Path("x.pt").exists()


def test_the_shipped_config_is_the_default():
    assert LocatorConfig.from_file("locator") == LocatorConfig()
