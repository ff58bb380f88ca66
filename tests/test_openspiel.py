"""python_tiengow checked by OpenSpiel's own code (tiengow_env.openspiel, tiengow.agents.openspiel)."""

import json
import random

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.algorithms import evaluate_bots  # noqa: E402

import tiengow_env.openspiel as TO  # noqa: E402
from tiengow.agents import openspiel as AO  # noqa: E402
from tiengow.agents.arena import evaluate  # noqa: E402
from tiengow.agents.base import make_agent  # noqa: E402
from tiengow.agents.cfr import DEFAULT_POLICY  # noqa: E402
from tiengow_env.game import Game  # noqa: E402
from tiengow_env.tiles import parse_type  # noqa: E402

MICRO_POLICY = str(DEFAULT_POLICY.parent / "cfr_micro.npz")


def load(rules="standard", banker=-1):
    return pyspiel.load_game("python_tiengow", {"rules": rules, "banker": banker})


def random_state(game, decisions, seed):
    """A state after the deal and ``decisions`` random decisions (fewer if the hand ends)."""
    rng = random.Random(seed)
    state = game.new_initial_state()
    while state.is_chance_node():
        outcomes, probabilities = zip(*state.chance_outcomes())
        state.apply_action(rng.choices(outcomes, probabilities)[0])
    for _ in range(decisions):
        if state.is_terminal():
            break
        state.apply_action(rng.choice(state.legal_actions()))
    return state


@pytest.mark.parametrize("rules", ["standard", "micro", "hongkong", "three_player", "seed001"])
def test_random_sim_test(rules):
    pyspiel.random_sim_test(load(rules), num_sims=3, serialize=True, verbose=False)


@pytest.mark.parametrize(
    "rules, banker, first_outcomes, players, max_length",
    [
        ("micro", 0, 1440, 4, 8),  # one chance node: every distinct deal
        ("micro", -1, 4, 4, 8),  # the dice first
        ("standard", 2, 21, 4, 32),  # tile by tile
        ("three_player", -1, 3, 3, 30),
    ],
)
def test_game_info(rules, banker, first_outcomes, players, max_length):
    game = load(rules, banker)
    state = game.new_initial_state()
    outcomes = state.chance_outcomes()
    assert (len(outcomes), game.num_players(), game.max_game_length()) == (first_outcomes, players, max_length)
    assert sum(p for _, p in outcomes) == pytest.approx(1.0)
    assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM


@pytest.mark.parametrize("players, sixes", [(4, [8, 9, 10, 9]), (3, [12, 12, 12])])
def test_dice(players, sixes):
    assert [round(p * 36) for _, p in TO.dice_outcomes(players)] == sixes


def test_micro_deal_weights():
    """A deal with both 6-6 in one hand comes about half as often as one that splits them."""
    state = load("micro", 0).new_initial_state()
    probabilities = sorted({round(p, 12) for _, p in state.chance_outcomes()})
    assert len(state.chance_outcomes()) == 1440 and len(probabilities) == 2
    assert probabilities[1] == pytest.approx(2 * probabilities[0])


def test_tile_by_tile_deal():
    state = load("standard", 0).new_initial_state()
    first = dict(state.chance_outcomes())
    assert len(first) == 21 and first[parse_type("6-6")] == pytest.approx(2 / 32)
    assert first[parse_type("4-2")] == pytest.approx(1 / 32)
    chance = 0
    while state.is_chance_node():
        state.apply_action(min(o for o, _ in state.chance_outcomes()))
        chance += 1
    core = state.tiengow_game
    assert chance == 24 and core.dealt(0)[:2] == ["6-6", "6-6"] and sum(len(core.dealt(s)) for s in range(4)) == 32


@pytest.mark.parametrize(
    "params, message",
    [
        ({"rules": "nope"}, "unknown rules 'nope'"),
        ({"banker": 7}, "banker must be a seat 0..3, or -1 for the dice; got 7"),
        ({"rules": '{"players": 5}'}, "players must be one of 4, 3, got 5"),
        ({"rules": "{bad"}, "is not a JSON object"),
    ],
)
def test_bad_parameters(params, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        pyspiel.load_game("python_tiengow", params)


def test_action_strings_speak_the_game():
    game = load("standard", 0)
    state = random_state(game, 0, 1)
    C = state.tiengow_game.combos.num_combos
    names = [state.action_to_string(a) for a in state.legal_actions()]
    assert all(n.startswith("play ") for n in names)
    assert state.action_to_string(C + parse_type("4-1")) == "discard 4-1 face down"
    face_up = random_state(load('{"discards_face_up": true}', 0), 0, 1)
    assert face_up.action_to_string(C + parse_type("4-1")) == "discard 4-1"
    with pytest.raises(ValueError, match="illegal|not legal"):
        state.apply_action(C + parse_type("4-1"))  # the leader may not discard


@pytest.mark.parametrize("rules", ["standard", "three_player"])
def test_observer_tensors_are_the_core_encoders(rules):
    game = load(rules)
    state = random_state(game, 0, 4)
    rng = random.Random(4)
    while not state.is_terminal():
        core = state.tiengow_game
        for seat in range(game.num_players()):
            np.testing.assert_array_equal(state.information_state_tensor(seat), core.information_state(seat))
            np.testing.assert_array_equal(state.observation_tensor(seat), core.observe(seat)[0])
        state.apply_action(rng.choice(state.legal_actions()))


def test_information_strings_have_perfect_recall():
    """Each seat's string extends the one it had before, and shows the others' discards only as down."""
    game = load("standard", 0)
    state = random_state(game, 0, 5)
    before = [state.information_state_string(s) for s in range(4)]
    rng = random.Random(5)
    hidden = 0
    while not state.is_terminal():
        seat, action = state.current_player(), rng.choice(state.legal_actions())
        state.apply_action(action)
        now = [state.information_state_string(s) for s in range(4)]
        for s in range(4):
            assert now[s].startswith(before[s] + " | ")
            token = now[s].rsplit(" | ", 1)[1]
            if "discard" in state.action_to_string(action) and s != seat:
                assert token == f"{seat}:down"
                hidden += 1
            else:
                name = state.action_to_string(action).removeprefix("play ").removesuffix(" face down")
                assert token == f"{seat}:{name}"
        before = now
    assert hidden > 0


@pytest.mark.parametrize(
    "rules, decisions", [("standard", 11), ("standard", 20), ("three_player", 14), ("seed001", 12)]
)
def test_resample_keeps_the_information_and_redraws_the_rest(rules, decisions):
    game = load(rules)
    state = random_state(game, decisions, 7)
    seat = state.current_player()
    worlds = [state.resample_from_infostate(seat, lambda k=k: k / 10) for k in range(8)]
    for world in worlds:
        assert world.information_state_string(seat) == state.information_state_string(seat)
        np.testing.assert_array_equal(world.information_state_tensor(seat), state.information_state_tensor(seat))
        assert world.legal_actions() == state.legal_actions()
        assert world.tiengow_game.hand(seat) == state.tiengow_game.hand(seat)
        for other in range(game.num_players()):  # public facts: tiles each seat holds
            assert len(world.tiengow_game.hand(other)) == len(state.tiengow_game.hand(other))
    others = {tuple(tuple(w.tiengow_game.hand(s)) for s in range(game.num_players()) if s != seat) for w in worlds}
    assert len(others) > 1  # the hidden tiles vary


def test_resample_does_not_depend_on_the_true_hidden_tiles():
    """Two true worlds that seat sees alike give the same resampled world for the same sampler value."""
    game = load("standard")
    for seed in range(4):
        state = random_state(game, 9 + seed, seed)
        seat = state.current_player()
        twin = state.resample_from_infostate(seat, lambda: 0.61)  # another true world, alike to seat
        assert [twin.tiengow_game.hand(s) for s in range(4)] != [state.tiengow_game.hand(s) for s in range(4)]
        a = state.resample_from_infostate(seat, lambda: 0.25)
        b = twin.resample_from_infostate(seat, lambda: 0.25)
        assert str(a) == str(b) and a.history() == b.history()


def test_resample_at_the_first_decision_keeps_the_seat_to_act():
    """Before any decision the replay is empty, so the world itself must leave the same seat to act:
    a world decided at the deal (a terminal state) or one offering another seat a declaration is
    not this hand. (OpenSpiel's IS-MCTS asserted on the terminal worlds this once returned.)"""
    game = load("standard")
    for seed in range(6):
        state = random_state(game, 0, seed)
        seat = state.current_player()
        for k in range(60):
            world = state.resample_from_infostate(seat, lambda k=k: k / 60)
            assert not world.is_terminal() and world.current_player() == seat
            assert world.information_state_string(seat) == state.information_state_string(seat)


def test_resample_for_another_seat_than_the_one_to_act():
    state = random_state(load("standard"), 10, 3)
    seat = (state.current_player() + 1) % 4
    world = state.resample_from_infostate(seat, lambda: 0.5)
    assert world.information_state_string(seat) == state.information_state_string(seat)


def test_state_of_a_core_game_and_back():
    game = load("standard")
    core = Game(seed=11)
    for _ in range(13):
        core.step(core.legal_actions()[-1])
    state = game.state_of(core)
    assert state.tiengow_game.history == core.history and state.current_player() == core.to_act
    with pytest.raises(ValueError, match="rules 'standard', not 'micro'"):
        game.state_of(Game(seed=1, rules="micro"))


def test_ismcts_plays_whole_standard_hands():
    from open_spiel.python.algorithms import ismcts, mcts

    game = load("standard")
    rng = np.random.RandomState(0)
    bots = [
        ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rng), uct_c=4.0, max_simulations=12, random_state=rng)
        for _ in range(4)
    ]
    for seed in range(2):  # the bot has no restart_at, so evaluate_bots cannot seat it: the same loop by hand
        state = random_state(game, 0, seed)
        decisions = 0
        while not state.is_terminal():
            state.apply_action(bots[state.current_player()].step(state))
            decisions += 1
        assert decisions >= 8 and sum(state.returns()) == 0


def test_expert_in_evaluate_bots_matches_tiengow_eval():
    """Our expert against OpenSpiel's uniform random bot, in OpenSpiel's harness and in ours."""
    deals = 100  # tiengow eval plays each deal once per seat: 400 hands
    ours = evaluate("expert", "random", deals=deals, seed=0)
    game = load("standard")
    rng = np.random.RandomState(1)
    experts = [AO.bot("expert", game, s) for s in range(4)]
    # one random bot per seat for the whole run: fresh bots seeded 0, 1, 2 ... draw alike at first
    randoms = [pyspiel.make_uniform_random_bot(s, 100 + s) for s in range(4)]
    chips = []
    for hand in range(deals * 4):
        seat = hand % 4
        bots = [experts[s] if s == seat else randoms[s] for s in range(4)]
        chips.append(evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)[seat])
    chips = np.array(chips)
    half = 1.96 * chips.std(ddof=1) / np.sqrt(len(chips))
    ours_half = (ours.ci95[1] - ours.ci95[0]) / 2
    assert abs(chips.mean() - ours.chips_per_hand) <= half + ours_half  # the two 95% intervals overlap
    assert chips.mean() > 0 and ours.chips_per_hand > 0


def test_bot_checks_its_game_and_seat():
    with pytest.raises(ValueError, match="expected a python_tiengow game"):
        AO.bot("expert", pyspiel.load_game("kuhn_poker"), 0)
    with pytest.raises(ValueError, match="player must be a seat 0..3"):
        AO.bot("expert", load(), 4)


@pytest.mark.parametrize("spec", ["tiengow.agents.openspiel:uniform_random", "tiengow.agents.openspiel:ismcts"])
def test_openspiel_bots_as_plugin_agents(spec):
    from tiengow.agents.arena import play_hand

    agents = [make_agent(spec, "standard", 0)] + [make_agent("random", "standard", s) for s in range(1, 4)]
    game = play_hand(Game(seed=5), agents, seed=5)
    assert game.is_over and sum(game.net()) == 0


@pytest.mark.slow
def test_nash_conv_of_the_shipped_micro_policy_matches_ours():
    from open_spiel.python.algorithms import exploitability

    from tiengow.agents.cfr import load_policy, tabular_policy_for
    from tiengow.training.cfr_tabular import build_tree, nash_conv

    path = MICRO_POLICY
    game = load("micro", 0)
    theirs = exploitability.nash_conv(game, AO.policy_from_cfr(path, game))
    tree = build_tree("micro", 0)
    ours = nash_conv(tree, tabular_policy_for(tree, load_policy(path)))["nash_conv"]
    assert theirs == pytest.approx(ours, abs=1e-6)


def test_policy_from_cfr_refuses_another_tree():
    with pytest.raises(
        ValueError, match="solved for rules 'micro' with banker seat 0, not rules 'micro' with banker the dice"
    ):
        AO.policy_from_cfr(MICRO_POLICY, load("micro"))


def test_docs_worked_example_runs():
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "openspiel.md").read_text(encoding="utf-8")
    example = re.findall(r"```python\n(.*?)```", page, flags=re.S)[0]
    exec(compile(example, "docs/openspiel.md", "exec"), {})


@pytest.mark.slow
def test_openspiel_cfr_benchmark_writes_its_record(tmp_path):
    """``python -m tiengow.benchmarks.openspiel_cfr`` to one iteration (about five minutes of
    OpenSpiel's Python solver): both solvers' first average policy has the same NashConv, and
    OpenSpiel's own ``nash_conv`` agrees with ours on it."""
    from tiengow.benchmarks.openspiel_cfr import main

    out = tmp_path / "record.json"
    assert main(["--iterations", "1", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    ours, theirs = record["ours"][0]["nash_conv"], record["openspiel"][0]["nash_conv"]
    assert theirs == pytest.approx(ours, abs=1e-6)
    assert record["openspiel_nash_conv_check"]["exploitability.nash_conv"] == pytest.approx(theirs, abs=1e-6)
