"""The search kernels and bots: the exact endgame against brute force on the reference
engine, searches that never read hidden tiles, scripted positions with one right move,
ISMCTS against the exact CFR+ strategy of micro, belief weights, and the spec grammar."""

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tiengow.agents.base import make_agent
from tiengow.agents.locator import DEFAULT_LOCATOR
from tiengow_env import _kernels as K
from tiengow_env import _search_kernels as SK
from tiengow_env import search as S
from tiengow_env.game import Game
from tiengow_env.layout import S_ACTED, S_BANKER_FIRST, S_COLS, S_DEALT, S_DOWN, S_HAND, S_LEN, S_TABLE
from tiengow_env.reference import RefGame
from tiengow_env.rules import RuleSet
from tiengow_env.tiles import NAMES, NUM_TYPES, TILE_TYPE, mask_types

HERE = Path(__file__).parent
LOCATOR_2400 = DEFAULT_LOCATOR.with_name("locator_2400.pt")  # the champions' before the 20,000-hand locator


# ============================================================================ exact endgame
def reference_max_n(game: RefGame) -> tuple[tuple[float, ...], bool]:
    """(max-n chips per seat, whether a tie of the actor left the others' chips ambiguous),
    by brute force over the reference engine's decisions (a discard set is one decision)."""
    if game.is_over:
        return tuple(float(x) for x in game.result()["net"]), False
    actor = game.to_act
    children = []
    ambiguous = False
    for decision in sorted(game.decisions()):
        child = game.copy()
        child.apply(decision)
        value, unclear = reference_max_n(child)
        children.append(value)
        ambiguous |= unclear
    best = max(v[actor] for v in children)
    tied = {v for v in children if v[actor] == best}
    return next(v for v in children if v[actor] == best), ambiguous or len(tied) > 1


def positions(rules_spec, tiles_left: int, count: int, seed: int):
    """(Game, RefGame) pairs at the same position with at most ``tiles_left`` tiles in hands,
    reached by random decisions of the reference engine mirrored into the Game."""
    rng = np.random.default_rng(seed)
    rules = RuleSet.from_spec(rules_spec)
    found = 0
    while found < count:
        game = Game(seed=int(rng.integers(2**31)), rules=rules)
        hands = [mask_types(int(game.state[s])) for s in range(rules.players)]
        ref = RefGame(hands, game.banker, rules)
        while not game.is_over and int(sum(len(game.hand(s)) for s in range(rules.players))) > tiles_left:
            decisions = sorted(ref.decisions())
            kind, tiles = decisions[int(rng.integers(len(decisions)))]
            seat = ref.to_act
            ref.apply((kind, tiles))
            verb = {"lead": "play", "beat": "play", "discard": "discard"}[kind]
            game.play({"seat": seat, verb: [NAMES[t] for t in tiles]})
        if not game.is_over:
            found += 1
            yield game, ref


@pytest.mark.parametrize(
    "rules_spec, tiles_left", [("standard", 8), ("hongkong", 6), ("three_player", 6), ("culin1895", 6), ("micro", 8)]
)
def test_endgame_solver_matches_brute_force_on_the_reference_engine(rules_spec, tiles_left):
    compared = 0
    ws = S.Workspace(RuleSet.from_spec(rules_spec))
    for game, ref in positions(rules_spec, tiles_left, 8, seed=7):
        expected, ambiguous = reference_max_n(ref)
        values, nodes = S.endgame_values(game, ws)
        assert nodes >= 1
        if not ambiguous:  # a tie of some actor may leave the others' chips to the tie-break
            assert tuple(values) == expected
            compared += 1
    assert compared >= 4


SEARCH_SPECS = [
    "pimc",
    "pimc:8:epsilon=1",
    "ismcts:150",
    "pimc:8:epsilon=0.5:halving=1",
    "ismcts:100:epsilon=0.5",
    "search:0.1",
    "champion:8",
    "pimc:8:epsilon=0.5:paired=1",
    "champion:8:locate=0:epsilon=0.3",
    "champion:8:particles=16",
    "champion:8:depth=0",
    "champion:8:locate=0:depth=0",
]


def decision_points(count: int, seed: int):
    """Games at decisions with several legal actions, from expert play."""
    expert = make_agent("expert")
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        game = Game(seed=int(rng.integers(2**31)))
        while not game.is_over:
            observation, mask = game.observe()
            if mask.sum() > 1 and rng.random() < 0.15:
                out.append(game.clone())
            game.step(expert.act(observation, mask))
    return out[:count]


@pytest.mark.parametrize("spec", SEARCH_SPECS)
def test_searches_read_no_hidden_tiles(spec):
    differed = 0
    for k, game in enumerate(decision_points(4, seed=11)):
        other = game.clone()  # the same game with the hidden tiles dealt again
        rng = np.zeros(1, dtype=np.uint64)
        rng[0] = np.uint64(1234 + k)
        SK.deal_world(game.state, game.to_act, False, game.combos.table, game.combos.rules_array, rng, other.state)
        differed += not np.array_equal(other.state, game.state)
        bot = make_agent(spec)
        first = bot.search(game, 99 + k)
        second = bot.search(other, 99 + k)
        for a, b in zip(first, second):
            np.testing.assert_array_equal(a, b)
        observation, mask = game.observe()
        bot.reset(5)
        chosen = bot.act(observation, mask, game=game)
        bot.reset(5)
        assert bot.act(observation, mask, game=other) == chosen
    assert differed >= 3


# ============================================================================ one right move
def last_trick_positions(count: int, seed: int):
    """Positions from expert play where the seat to act answers last in the final trick of
    single tiles, can beat, has fewer than par columns and nobody has more than par: beating
    makes it W, who collects; discarding makes it pay W. Exactly one right move."""
    expert = make_agent("expert")
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < count:
        game = Game(seed=int(rng.integers(2**31)))
        while not game.is_over:
            observation, mask = game.observe()
            state, seat, par = game.state, game.to_act, game.rules.par
            legal = np.flatnonzero(mask)
            if (
                len(game.hand(seat)) == 1
                and len(legal) == 2
                and legal[0] < game.combos.num_combos
                and state[S_ACTED] == game.players - 1
                and state[S_COLS + seat] < par
                and all(state[S_COLS + s] <= par for s in range(game.players))
                and all(len(game.hand(s)) <= 1 for s in range(game.players))
            ):
                found.append((game.clone(), int(legal[0])))
                break
            game.step(expert.act(observation, mask))
    return found


@pytest.mark.parametrize(
    "spec", ["pimc:16", "pimc:16:epsilon=0.5:paired=1", "pimc:16:epsilon=0.5:halving=1", "ismcts:100", "search:0.05"]
)
def test_positions_with_one_right_move(spec):
    for k, (game, right) in enumerate(last_trick_positions(4, seed=21)):
        bot = make_agent(spec, seed=k)
        observation, mask = game.observe()
        assert bot.act(observation, mask, game=game) == right


# ============================================================================ halving, epsilon
def test_halving_with_two_actions_is_plain_pimc_and_with_more_keeps_its_best():
    points = decision_points(30, seed=8)
    two = next(g for g in points if len(g.legal_actions()) == 2)
    for epsilon in (0.0, 0.5):
        plain = S.pimc_details(two, 24, seed=3, epsilon=epsilon)
        halved = S.pimc_details(two, 24, seed=3, epsilon=epsilon, halving=True)
        np.testing.assert_allclose(plain[1], halved[1], rtol=0, atol=1e-12)
        assert halved[1][halved[2]] >= plain[1].max() - 1e-12  # the same best, up to rounding in a tie
    many = next(g for g in points if len(g.legal_actions()) >= 5)
    ws = S.Workspace(many.rules)
    actions = np.array(many.legal_actions(), dtype=np.int64)
    out = SK.PimcOut(
        np.zeros(len(actions)), np.zeros(len(actions), dtype=np.int64), np.zeros(len(actions), dtype=np.int64)
    )
    SK.pimc_values(
        many.state,
        many.to_act,
        actions,
        np.zeros(len(actions)),
        SK.PimcSettings(40, 0.0, True, False),
        S._pool(None),
        ws.tables,
        S._rng(3),
        out,
    )
    values, worlds, rounds = out
    assert worlds.sum() <= 40 * len(actions) and worlds.max() > 40  # the same rollouts, more for the finalists
    best = int(np.argmax(rounds))
    assert list(rounds).count(rounds[best]) == 1 and worlds[best] == worlds.max()
    runner_up = [i for i in range(len(actions)) if rounds[i] == rounds[best] - 1 and worlds[i] == worlds[best]]
    assert len(runner_up) == 1 and values[best] >= values[runner_up[0]]
    assert S.pimc_details(many, 40, seed=3, halving=True)[2] == best


def test_epsilon_zero_is_the_plain_rollout_and_epsilon_changes_the_values():
    game = decision_points(1, seed=4)[0]
    default = S.pimc_values(game, 32, seed=7)[1]
    np.testing.assert_array_equal(default, S.pimc_values(game, 32, seed=7, epsilon=0.0)[1])
    assert not np.array_equal(default, S.pimc_values(game, 32, seed=7, epsilon=0.4)[1])
    with pytest.raises(ValueError, match="probability from 0 to 1"):
        S.pimc_values(game, 8, epsilon=1.5)
    with pytest.raises(ValueError, match="probability from 0 to 1"):
        S.ismcts_values(game, 8, epsilon=float("nan"))


def test_paired_rollouts_change_nothing_without_randomness_and_steady_the_comparison():
    """With epsilon 0 the rollouts draw no random numbers, so pairing them changes nothing.
    With epsilon 0.5 every action of a world is finished with the same random numbers, so the
    gap between two actions varies less from seed to seed than with independent rollouts."""
    game = next(g for g in decision_points(20, seed=3) if len(g.legal_actions()) >= 2)
    np.testing.assert_array_equal(S.pimc_values(game, 24, seed=2)[1], S.pimc_values(game, 24, seed=2, paired=True)[1])
    gaps = {
        paired: [np.subtract(*S.pimc_values(game, 16, seed=k, epsilon=0.5, paired=paired)[1][:2]) for k in range(40)]
        for paired in (False, True)
    }
    assert np.var(gaps[True]) < 0.7 * np.var(gaps[False])
    assert make_agent("pimc:8:paired=1").evaluator.paired and not make_agent("pimc:8").evaluator.paired


def test_champion_ranks_by_its_pimc_values_plus_the_weighted_log_policy():
    from tiengow.agents.ppo import make_ppo_agent

    prior = make_ppo_agent(None, RuleSet.from_spec("standard"))
    for k, game in enumerate(decision_points(6, seed=9)):
        observation, mask = game.observe()
        explained = prior.explain(observation, mask)
        probabilities = dict(zip(explained["actions"], explained["values"]))
        bonus = 2 * np.log([probabilities[a] for a in game.legal_actions()])
        expected = S.pimc_extended_details(game, 16, seed=40 + k, epsilon=0.5, bonus=bonus)
        actions, scores, chips = make_agent("champion:16:weight=2:locate=0").search(game, 40 + k)
        np.testing.assert_array_equal(actions, expected[0])
        np.testing.assert_array_equal(chips, expected[1])
        assert int(np.argmax(scores)) == expected[2] == int(np.argmax(expected[1] + bonus))
        unguided = make_agent("champion:16:weight=0:locate=0").search(game, 40 + k)
        assert int(np.argmax(unguided[1])) == int(np.argmax(expected[1]))
        shallow = S.pimc_details(game, 16, seed=40 + k, epsilon=0.5, halving=True, bonus=bonus, paired=True)
        actions, scores, chips = make_agent("champion:16:weight=2:locate=0:depth=0").search(game, 40 + k)
        np.testing.assert_array_equal(chips, shallow[1])
        assert int(np.argmax(scores)) == shallow[2]


def _one_world(game: Game) -> tuple[np.ndarray, np.ndarray]:
    """A belief that holds one world: the true deal."""
    return game.state[None].copy(), np.ones(1)


def _playout(game: Game, world: np.ndarray, action: int, epsilon: float, stream: int) -> float:
    """The acting seat's chips when ``action`` is played in ``world`` and the hand finished by
    the rollouts' policy on the random stream ``stream``."""
    tables = S.Workspace(game.rules).tables
    scratch = np.zeros(game.combos.num_actions + 64, dtype=np.int64)
    child = np.zeros_like(world)
    rng = np.array([stream], dtype=np.uint64)
    return SK.rollout(world, action, game.to_act, epsilon, tables.table, tables.rules, rng, scratch, child)


def test_extended_pimc_finishes_a_world_alone_in_its_information_set_as_a_rollout():
    """With one world no information set of the next decision holds a second world to choose
    by: each action's value is the world's plain rollout, on the world's own random stream."""
    for k, game in enumerate(decision_points(4, seed=21)):
        rng = S._rng(70 + k)
        K.rand_below(rng, SK.EPSILON_UNIT)  # the kernel's draw of the world from the pool
        stream = int(K.splitmix64(rng[0]) | np.uint64(1))
        actions, means, _ = S.pimc_extended_details(game, 1, seed=70 + k, epsilon=0.5, worlds=_one_world(game))
        expected = [_playout(game, game.state, a, 0.5, stream) for a in actions]
        np.testing.assert_array_equal(means, expected)
    with pytest.raises(ValueError, match="samples is at most 100,000, got 100,001"):
        S.pimc_extended_details(game, 10**5 + 1)


def test_extended_pimc_chooses_the_next_decision_by_the_worlds_of_its_information_set():
    """Greedy rollouts in copies of one world all reach the seat's next decision by the same
    moves: one information set, so every action is worth the best next action's playout."""
    checked = 0
    for k, game in enumerate(decision_points(6, seed=22)):
        actions, means, _ = S.pimc_extended_details(game, 8, seed=k, epsilon=0.0, worlds=_one_world(game))
        seat = game.to_act
        for action, mean in zip(actions, means):
            mid = game.clone()
            mid.step(int(action))
            scratch = np.zeros(mid.combos.num_actions + 64, dtype=np.int64)
            while not mid.is_over and mid.to_act != seat:  # the others by the rollouts' greedy policy
                mid.step(int(K.greedy_action(mid.state, mid.combos.table, mid.combos.rules_array, scratch)))
            if mid.is_over:
                assert mean == mid.net()[seat]
                continue
            best = max(_playout(mid, mid.state, b, 0.0, 1) for b in mid.legal_actions())
            assert mean == best
            checked += 1
    assert checked >= 6


def test_a_bonus_that_dwarfs_the_values_decides():
    game = next(g for g in decision_points(20, seed=6) if len(g.legal_actions()) >= 3)
    for halving in (False, True):
        for pick in range(3):
            bonus = np.zeros(len(game.legal_actions()))
            bonus[pick] = 1000.0
            assert S.pimc_details(game, 16, seed=1, halving=halving, bonus=bonus)[2] == pick
    with pytest.raises(ValueError, match="finite number for each"):
        S.pimc_details(game, 8, bonus=np.zeros(1))


def test_the_ppo_value_head_reads_chips_to_come():
    from tiengow.agents.ppo import make_ppo_agent

    prior = make_ppo_agent(None, RuleSet.from_spec("standard"))
    observations = np.array([g.observe()[0] for g in decision_points(6, seed=4)])
    values = prior.values(observations)
    assert values.shape == (6,) and np.all(np.isfinite(values)) and np.all(np.abs(values) < 200)
    prior.value_head = None
    with pytest.raises(ValueError, match="no value head"):
        prior.values(observations)


# ============================================================================ ISMCTS on micro
def test_ismcts_first_leads_on_micro_follow_the_exact_cfr_plus_strategy():
    from tiengow.training.cfr import load_policy, tabular_policy_for
    from tiengow.training.cfr_tabular import build_tree

    tree = build_tree("micro", 0)
    policy = tabular_policy_for(tree, load_policy(str(HERE.parent / "agents" / "policies" / "cfr_micro.npz")))
    bot = make_agent("ismcts:300", rules="micro", seed=1)
    agree, uniform, weight = 0.0, 0.0, 0.0
    for d in range(0, len(tree.deals), 16):  # every 16th deal: 90 deals, every root information set
        info = tree.infoset[d]
        offset, size = tree.info_offset[info], tree.info_size[info]
        if size < 2:
            continue
        game = Game(hands=[[NAMES[t] for t in hand] for hand in tree.deals[d]], banker=0, rules="micro")
        observation, mask = game.observe()
        bot.reset(d)
        action = bot.act(observation, mask, game=game)
        slots = list(tree.slot_action[offset : offset + size])
        w = tree.root_weight[d]
        agree += w * policy[offset + slots.index(action)]
        uniform += w / size
        weight += w
    # The CFR+ probability of ISMCTS's lead, against a uniform choice's.
    assert agree / weight > uniform / weight + 0.2


# ============================================================================ given worlds
def test_pimc_draws_its_worlds_from_a_given_belief():
    game = next(g for g in decision_points(10, seed=12) if len(g.legal_actions()) >= 2)
    worlds = S.sample_worlds(game, 3, seed=2)
    one = S.pimc_details(game, 16, seed=5, worlds=(worlds[:1], np.ones(1)))
    again = S.pimc_details(game, 16, seed=5, worlds=(worlds, np.array([1.0, 0.0, 0.0])))
    np.testing.assert_array_equal(one[1], again[1])  # weight 0: never drawn
    other = S.pimc_details(game, 16, seed=5, worlds=(worlds[1:2], np.ones(1)))
    assert not np.array_equal(one[1], other[1])
    for bad, match in (
        ((worlds[:, :5], np.ones(3)), "states of shape"),
        ((worlds, np.ones(2)), "one weight each"),
        ((worlds, np.array([1.0, -1.0, 0.0])), "finite, >= 0"),
        ((worlds, np.zeros(3)), "not all 0"),
    ):
        with pytest.raises(ValueError, match=match):
            S.pimc_details(game, 8, worlds=bad)


@pytest.mark.parametrize(
    "spec, bad",
    [
        ("pimc:x", "samples is a whole number from 1 to 1,000,000,000"),
        ("pimc:8:foo=1", "unknown option"),
        ("ismcts:0", "iterations is a whole number from 1 to"),
        ("search:0", "budget is a number from 0.001"),
        ("pimc:8:epsilon=2", "epsilon is a number from 0.0 to 1.0"),
        ("ismcts:8:epsilon=-0.1", "epsilon is a number from 0.0 to 1.0"),
        ("pimc:8:halving=2", "halving is 0"),
        ("pimc:8:paired=2", "paired is 0"),
        ("ismcts:8:halving=1", "unknown option"),
        ("champion:x", "samples is a whole number from 1"),
        ("champion:8:c=1", "unknown option"),
        ("champion:8:epsilon=3", "epsilon is a number from 0.0 to 1.0"),
        ("champion:8:prior=/no/such.pt", "prior=/no/such.pt: .* does not exist"),
        ("champion:8:locate=0:locator=x.pt", "locator=PATH is read only with locate"),
        ("champion:8:particles=0", "particles is a whole number from 1"),
        ("champion:200000", "with depth=1 samples is at most 100,000"),
        ("pimc:99999999999999999999", "from 1 to 1,000,000,000"),
        ("search:99999999999999999999", "budget is a number from 0.001 to 1,000,000"),
        ("pimc:8:epsilon=nan", "epsilon is a number from 0.0 to 1.0"),
        ("ismcts:0000000000010000000000000", "from 1 to 10,000,000"),
        ("pimc:00000000000000000000002000000000", "from 1 to 1,000,000,000"),
        ("ismcts:1000000000", "iterations is a whole number from 1 to 10,000,000"),
        ("champion:8:particles=2000000", "from 1 to 1,000,000"),
        ("champion:8:weight", "weight needs a value, as in weight=VALUE"),
        ("champion:8:prior=", "prior needs a value"),
    ],
)
def test_bad_search_specs_are_refused_with_a_reason(spec, bad):
    with pytest.raises(ValueError, match=bad):
        make_agent(spec)


@pytest.mark.parametrize(
    "spec, evaluator, budget",
    [
        ("pimc", "Rollouts", {"samples": 32}),
        ("pimc:64", "Rollouts", {"samples": 64}),
        ("search:2", "Rollouts", {"samples": 2000}),
        ("ismcts", "Ismcts", {"iterations": 1000}),
        ("ismcts:50", "Ismcts", {"iterations": 50}),
        ("champion", "ExtendedRollouts", {"samples": 1200, "particles": 4096}),
        ("champion:16:locate=0", "ExtendedRollouts", {"samples": 16}),
        (
            f"champion:2200:depth=0:particles=512:exact=0:locator={LOCATOR_2400}",
            "Rollouts",
            {"samples": 2200, "particles": 512},
        ),
    ],
)
def test_search_specs(spec, evaluator, budget):
    bot = make_agent(spec)
    assert type(bot.evaluator).__name__ == evaluator and bot.budget == budget


def test_explain_gives_a_value_per_searched_action():
    game = decision_points(1, seed=2)[0]
    observation, mask = game.observe()
    for spec in ("pimc:16", "ismcts:200"):
        bot = make_agent(spec)
        explained = bot.explain(observation, mask, game=game)
        assert explained["kind"] == "values" and len(explained["actions"]) == len(explained["values"]) >= 2
        assert set(explained["actions"]) <= set(np.flatnonzero(mask).tolist())
        assert bot.explain(observation, mask, game=game) == explained  # explaining draws nothing
        chosen = bot.act(observation, mask, game=game)
        if spec.startswith("pimc"):  # pimc plays the action of the best value it explained
            assert chosen == explained["actions"][int(np.argmax(explained["values"]))]


# ============================================================================ without the JIT
@pytest.mark.parametrize(
    "target",
    [
        "test_search.py::test_endgame_solver_matches_brute_force_on_the_reference_engine[micro-8]",
        "test_search.py::test_halving_with_two_actions_is_plain_pimc_and_with_more_keeps_its_best",
        "test_search.py::test_pimc_draws_its_worlds_from_a_given_belief",
        "test_search.py::test_extended_pimc_finishes_a_world_alone_in_its_information_set_as_a_rollout",
        "test_search.py::test_extended_pimc_chooses_the_next_decision_by_the_worlds_of_its_information_set",
        pytest.param(
            "test_search.py::test_paired_rollouts_change_nothing_without_randomness_and_steady_the_comparison",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "test_search_policies.py::test_compiled_policies_match_the_reference[micro]", marks=pytest.mark.slow
        ),
        pytest.param(
            "test_search.py::test_searches_read_no_hidden_tiles[pimc:8:epsilon=0.5:paired=1]", marks=pytest.mark.slow
        ),
        pytest.param("test_search.py::test_positions_with_one_right_move[ismcts:100]", marks=pytest.mark.slow),
        pytest.param("test_search.py::test_located_worlds_are_drawn_from_the_belief_exactly", marks=pytest.mark.slow),
    ],
)
def test_search_kernels_without_jit(target):
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", str(HERE / target)],
        capture_output=True,
        text=True,
        env=env,
        cwd=HERE.parent,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]


# ============================================================================ worlds drawn from the locator's belief
def _places(game: Game) -> list[tuple[int, int, int]]:
    """(seat, its state column, the logits' row) of each place the tiles hidden from the acting
    seat may lie in: the others' hands and, with face-down discards, their face-down tiles."""
    seat, players = game.to_act, game.players
    face_up = S.Workspace(game.rules).tables.face_up
    places = []
    for r in range(1, players):
        other = (seat + r) % players
        places.append((other, S_HAND, r - 1))
        if not face_up:
            places.append((other, S_DOWN, players - 1 + r - 1))
    return places


def _belief_marginals(game: Game, logits: np.ndarray) -> np.ndarray:
    """Each hidden tile's chance of each place (rows: ``_places``) under the belief that weighs a
    deal by the product of its tiles' exp(logit), summed over the deals by a memoised recursion
    over the places' open sizes, forwards and backwards."""
    places = _places(game)
    sizes = tuple(int(game.state[column + seat]).bit_count() for seat, column, _ in places)
    hidden = [b for b in range(32) if any(int(game.state[column + seat]) >> b & 1 for seat, column, _ in places)]
    weight = np.exp([[logits[row, TILE_TYPE[b]] for _, _, row in places] for b in hidden])

    def less(left: tuple[int, ...], p: int) -> tuple[int, ...]:
        return left[:p] + (left[p] - 1,) + left[p + 1 :]

    @functools.cache
    def rest(j: int, left: tuple[int, ...]) -> float:  # the mass of placing hidden[j:]
        if j == len(hidden):
            return 1.0
        return sum(weight[j, p] * rest(j + 1, less(left, p)) for p in range(len(places)) if left[p])

    marginals = np.zeros((len(places), 32))
    ahead = {sizes: 1.0}  # the mass of placing hidden[:j], by the sizes left open
    for j, tile in enumerate(hidden):
        after: dict[tuple[int, ...], float] = {}
        for left, mass in ahead.items():
            for p in range(len(places)):
                if left[p]:
                    marginals[p, tile] += mass * weight[j, p] * rest(j + 1, less(left, p))
                    after[less(left, p)] = after.get(less(left, p), 0.0) + mass * weight[j, p]
        ahead = after
    return marginals / rest(0, sizes)


@pytest.mark.parametrize("steps", [3, 14])
def test_located_worlds_are_drawn_from_the_belief_exactly(steps):
    game = Game(seed=31 + steps)
    for _ in range(steps):
        game.step(game.legal_actions()[-1])
    logits = 2.0 * np.random.default_rng(steps).normal(size=(2 * (game.players - 1), NUM_TYPES))
    draws = 20_000
    worlds = S.located_worlds(game, draws, logits, seed=steps)
    for s in range(game.players):  # what the seat knows is kept: every other column, and each place's size
        for column in (S_HAND, S_DOWN):
            counts = [int(w).bit_count() for w in worlds[:, column + s]]
            assert set(counts) == {int(game.state[column + s]).bit_count()}
    dealt_again = {base + s for s, _, _ in _places(game) for base in (S_HAND, S_DOWN, S_DEALT, S_TABLE)}
    kept = [c for c in range(S_LEN) if c not in dealt_again | {S_BANKER_FIRST}]
    np.testing.assert_array_equal(worlds[:, kept], np.broadcast_to(game.state[kept], (draws, len(kept))))
    expected = _belief_marginals(game, logits)
    for p, (seat, column, _) in enumerate(_places(game)):
        seen = ((worlds[:, column + seat, None] >> np.arange(32)) & 1).mean(axis=0)
        spread = np.sqrt(expected[p] * (1 - expected[p]) / draws)
        assert np.all(np.abs(seen - expected[p]) <= 5 * spread + 1e-12), (p, seen, expected[p])


def test_located_worlds_check_their_inputs():
    game = Game(seed=3)
    with pytest.raises(ValueError, match=r"logits must be of shape \(6, 21\)"):
        S.located_worlds(game, 4, np.zeros((3, NUM_TYPES)))
    with pytest.raises(ValueError, match="power must be a finite number >= 0"):
        S.located_worlds(game, 4, np.zeros((6, NUM_TYPES)), power=-1.0)
    with pytest.raises(ValueError, match="samples must be a whole number >= 1, got 0"):
        S.located_worlds(game, 0, np.zeros((6, NUM_TYPES)))


# ============================================================================ decision stability
def test_stability_counts_the_decisions_and_more_samples_agree_more():
    from tiengow.benchmarks.stability import stability

    result = stability(["pimc:1", "pimc:256"], hands=2, seed=900000, driver="greedy")
    choices = 0
    for h in range(2):  # the driver's hands again: every decision with a choice is counted once
        game, driver = Game(seed=900000 + h), make_agent("greedy", "standard", 900001)
        driver.reset(900000 + h)
        while not game.is_over:
            observation, mask = game.observe()
            choices += mask.sum() > 1
            game.step(driver.act(observation, mask, game=game))
    assert result["decisions"] == choices > 20
    # One world decides by the luck of its draw (0.82 against 0.63 on these two hands).
    assert result["self"]["pimc:256"] > result["self"]["pimc:1"] + 0.1
    assert 0.0 < result["pairs"]["pimc:1 vs pimc:256"] < 1.0
    assert stability(["pimc:1", "pimc:256"], hands=2, seed=900000, driver="greedy") == result  # seeded


def test_stability_bounds_what_a_clone_can_agree_with(tmp_path):
    """With more copies, the modal share brackets a clone's best agreement: the held-out mode's
    agreement <= the in-sample modal share, and two copies agree no more often than that."""
    from tiengow.benchmarks.stability import main, stability

    two = stability(["pimc:2", "pimc:64"], hands=2, seed=900100, driver="greedy")
    assert "modal" not in two
    many = stability(["pimc:2", "pimc:64"], hands=2, seed=900100, driver="greedy", copies=6)
    assert many["decisions"] == two["decisions"] > 20
    for bot in ("pimc:2", "pimc:64"):
        assert 0 < many["modal_held_out"][bot] <= many["modal"][bot] <= 1
        assert many["self"][bot] <= many["modal"][bot]
    # the sampling noise of one world against 64: the smaller search repeats itself less
    assert many["modal"]["pimc:2"] < many["modal"]["pimc:64"]
    with pytest.raises(ValueError, match="at least 2 copies"):
        stability(["pimc:2"], hands=1, seed=0, copies=1)
    out = tmp_path / "s.json"
    assert main(["--bots", "pimc:2", "--hands", "1", "--copies", "3", "--driver", "greedy", "--save", str(out)]) == 0
    saved = json.loads(out.read_text())
    assert saved["copies"] == 3 and "modal" in saved and "--copies 3 --save" in saved["command"]
    assert main(["--bots", "pimc:2", "--save", "/proc/no/such.json"]) == 2  # refused before any search


def test_stability_refuses_what_does_not_search(capsys):
    from tiengow.benchmarks.stability import main, stability

    with pytest.raises(ValueError, match="'expert' is not a search bot"):
        stability(["search", "expert"], hands=1, seed=0)
    with pytest.raises(ValueError, match="at least one search bot"):
        stability([], hands=1, seed=0)
    with pytest.raises(ValueError, match="an integer from 0 to 2\\^63 - 1 - hands; got -5"):
        stability(["pimc:4"], hands=1, seed=-5)
    with pytest.raises(ValueError, match="each bot once"):
        stability(["pimc:4", "pimc:4"], hands=1, seed=0)
    assert main(["--bots", "greedy"]) == 2
    assert "stability: error: stability: 'greedy' is not a search bot" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:  # argparse's own refusal, naming the option
        main(["--bots", "search,search"])
    assert stop.value.code == 2 and "argument --bots: lists each item once" in capsys.readouterr().err


@pytest.mark.parametrize("module", ["oracle", "stability"])
def test_the_module_commands_end_in_one_line_like_tiengow(module, monkeypatch, capsys):
    """Ctrl-C and a bug of ours once showed a traceback here; now as in ``tiengow eval``."""
    import importlib

    bench = importlib.import_module(f"tiengow.benchmarks.{module}")
    for error, code, line in (
        (KeyboardInterrupt(), 130, f"python -m tiengow.benchmarks.{module}: interrupted"),
        (RuntimeError("boom"), 70, "internal error: RuntimeError: boom (a bug in tiengow"),
    ):

        def fail(*args, error=error, **kwargs):
            raise error

        monkeypatch.setattr(bench, "report", fail)
        monkeypatch.delenv("TIENGOW_DEBUG", raising=False)
        assert bench.main(["--bots", "pimc:1"]) == code
        err = capsys.readouterr().err
        assert line in err and "Traceback" not in err


# ============================================================================ the oracle (value of information)
def test_the_oracle_searches_the_true_deal_and_its_regret_is_near_zero():
    from tiengow.benchmarks.oracle import make, regrets

    game = Game(seed=61)
    oracle = make(RuleSet.from_spec("standard"), 0)
    states, weights = oracle.sampler.worlds(game, 1, oracle.workspace)
    assert np.array_equal(states[0], game.state) and weights.tolist() == [1.0]
    rows = regrets(["tiengow.benchmarks.oracle:make", "pimc:1"], hands=2, seed=4)
    assert rows.shape[1] == 2 and len(rows) > 40 and rows.min() >= 0.0
    assert rows[:, 0].mean() < 0.2 < 1.0 < rows[:, 1].mean()  # one uniform world guesses; the oracle knows
    assert np.array_equal(regrets(["tiengow.benchmarks.oracle:make", "pimc:1"], hands=2, seed=4), rows)  # seeded


def test_the_oracle_measure_pools_seeds_over_workers_and_refuses_bad_input(capsys):
    from tiengow.benchmarks.oracle import main, measure

    one = measure(["pimc:8", "pimc:1"], hands=1, seeds=[5, 6])
    assert measure(["pimc:8", "pimc:1"], hands=1, seeds=[5, 6], workers=2) == one
    assert one["decisions"] > 30 and set(one["pairs"]) == {"pimc:8 minus pimc:1"}
    mean, half = one["pairs"]["pimc:8 minus pimc:1"]
    assert mean == pytest.approx(one["regret"]["pimc:8"][0] - one["regret"]["pimc:1"][0]) and half > 0
    with pytest.raises(ValueError, match="at least one bot"):
        measure([], hands=1, seeds=[1])
    with pytest.raises(ValueError, match="unknown agent 'nobot'"):
        measure(["search", "nobot"], hands=1, seeds=[1])
    with pytest.raises(ValueError, match="got hands=0"):
        measure(["search"], hands=0, seeds=[1])
    with pytest.raises(ValueError, match="each bot and each seed once"):
        measure(["pimc:1", "pimc:1"], hands=1, seeds=[1])
    for argv, message in (
        (["--seeds", "1,x"], "argument --seeds: must be an integer >= 0, got 'x'"),
        (["--seeds", "1,,2"], "argument --seeds: takes items separated by single commas"),
        (["--seeds", "1,1"], "argument --seeds: lists each item once; '1' is given twice"),
        (["--seeds", "9223372036854775808"], "at most 2^63 - 1"),
        (["--bots", "search,search"], "argument --bots: lists each item once"),
    ):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2 and message in capsys.readouterr().err
    assert main(["--bots", "nobot"]) == 2
    assert "oracle: error: unknown agent 'nobot'" in capsys.readouterr().err
    main(["--bots", "pimc:1", "--hands", "1", "--seeds", "5,6", "--json"])
    assert json.loads(capsys.readouterr().out)["regret"] == {"pimc:1": one["regret"]["pimc:1"]}
