"""The search kernels and bots: the exact endgame against brute force on the reference
engine, searches that never read hidden tiles, scripted positions with one right move,
ISMCTS against the exact CFR+ strategy of micro, belief weights, and the spec grammar."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tiengow.agents.base import make_agent
from tiengow_env import _search_kernels as SK
from tiengow_env import search as S
from tiengow_env.game import Game
from tiengow_env.layout import S_ACTED, S_COLS, S_DEALT, S_DOWN, S_HAND, S_OWED, S_UP
from tiengow_env.reference import RefGame
from tiengow_env.rules import RuleSet
from tiengow_env.tiles import NAMES, mask_names, mask_types

HERE = Path(__file__).parent


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


@pytest.mark.parametrize("rules_spec, tiles_left", [("standard", 8), ("hongkong", 6), ("three_player", 6),
                                                    ("culin1895", 6), ("micro", 8)])
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


def test_endgame_threshold_zero_is_the_plain_rollout_and_solving_changes_values():
    game = next(g for g, _ in positions("standard", 12, 1, seed=3))
    ws = S.Workspace(game.rules)
    _, rollout, nodes, _ = S.pimc_details(game, 16, "greedy", 5, endgame=0, workspace=ws)
    assert nodes == 0
    _, solved, nodes, _ = S.pimc_details(game, 16, "greedy", 5, endgame=12, workspace=ws)
    assert nodes > 16 and not np.array_equal(rollout, solved)


# ============================================================================ hidden information
SEARCH_SPECS = ["pimc", "pimc:8:rollout=expert:endgame=6:beta=1.5", "pimc:8,random", "ismcts:150",
                "ismcts:100:rollout=greedy:endgame=4", "pimc:8:epsilon=0.5:halving=1:beta=1",
                "ismcts:100:rollout=greedy:epsilon=0.5", "search:0.1", "champion:8",
                "pimc:8:epsilon=0.5:infer=0.2:paired=1:greedy_end=3", "ismcts:100:infer=0",
                "champion:8:value=0.5:worlds=8", "champion:8:belief=1:particles=16",
                "champion:8:rollout=expert:epsilon=0.3"]


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
            if (len(game.hand(seat)) == 1 and len(legal) == 2 and legal[0] < game.combos.num_combos
                    and state[S_ACTED] == game.players - 1 and state[S_COLS + seat] < par
                    and all(state[S_COLS + s] <= par for s in range(game.players))
                    and all(len(game.hand(s)) <= 1 for s in range(game.players))):
                found.append((game.clone(), int(legal[0])))
                break
            game.step(expert.act(observation, mask))
    return found


@pytest.mark.parametrize("spec", ["pimc:16", "pimc:16:rollout=expert:endgame=8", "pimc:16:epsilon=0.5:halving=1",
                                  "ismcts:100", "search:0.05"])
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
        assert halved[1][halved[3]] >= plain[1].max() - 1e-12  # the same best, up to rounding in a tie
    many = next(g for g in points if len(g.legal_actions()) >= 5)
    ws = S.Workspace(many.rules)
    actions = np.array(many.legal_actions(), dtype=np.int64)
    values = np.zeros(len(actions))
    worlds = np.zeros(len(actions), dtype=np.int64)
    rounds = np.zeros(len(actions), dtype=np.int64)
    SK.pimc_values(many.state, many.to_act, actions, np.zeros(len(actions)), True, False, 40, S.POLICIES["greedy"],
                   np.zeros(S.MAX_SEATS), False, 0, 0, 0.0, np.zeros((0, 3), dtype=np.int64), 1.0, *S._pool(many, None),
                   False, ws.singles, many.combos.table, many.combos.rules_array, S._rng(3), ws.solver, values, worlds,
                   rounds)
    assert worlds.sum() <= 40 * len(actions) and worlds.max() > 40  # the same rollouts, more for the finalists
    best = int(np.argmax(rounds))
    assert list(rounds).count(rounds[best]) == 1 and worlds[best] == worlds.max()
    runner_up = [i for i in range(len(actions)) if rounds[i] == rounds[best] - 1 and worlds[i] == worlds[best]]
    assert len(runner_up) == 1 and values[best] >= values[runner_up[0]]
    assert S.pimc_details(many, 40, seed=3, halving=True)[3] == best


def test_epsilon_zero_is_the_plain_rollout_and_epsilon_changes_the_values():
    game = decision_points(1, seed=4)[0]
    default = S.pimc_values(game, 32, seed=7)[1]
    np.testing.assert_array_equal(default, S.pimc_values(game, 32, seed=7, epsilon=0.0)[1])
    assert not np.array_equal(default, S.pimc_values(game, 32, seed=7, epsilon=0.4)[1])
    with pytest.raises(ValueError, match="probability from 0 to 1"):
        S.pimc_values(game, 8, epsilon=1.5)
    with pytest.raises(ValueError, match="probability from 0 to 1"):
        S.ismcts_values(game, 8, epsilon=float("nan"))


def test_own_epsilon_sets_the_searching_seats_rollout_decisions_apart():
    """own_epsilon equal to epsilon is the default; otherwise it changes only the searching
    seat's own rollout decisions, so it changes the values."""
    game = decision_points(1, seed=4)[0]
    default = S.pimc_values(game, 32, seed=7, epsilon=0.5)[1]
    np.testing.assert_array_equal(default, S.pimc_values(game, 32, seed=7, epsilon=0.5, own_epsilon=0.5)[1])
    assert not np.array_equal(default, S.pimc_values(game, 32, seed=7, epsilon=0.5, own_epsilon=0.0)[1])
    visits = S.ismcts_values(game, 64, seed=7, epsilon=0.5)[1]
    np.testing.assert_array_equal(visits, S.ismcts_values(game, 64, seed=7, epsilon=0.5, own_epsilon=0.5)[1])
    with pytest.raises(ValueError, match="own_epsilon must be a probability from 0 to 1"):
        S.pimc_values(game, 8, own_epsilon=-0.5)
    agent = make_agent("pimc:8:epsilon=0.5:own_epsilon=0")
    assert (agent.epsilon, agent.own_epsilon) == (0.5, 0.0)
    assert make_agent("ismcts:8:own_epsilon=0.25").own_epsilon == 0.25


# ============================================================================ paired rollouts
def test_paired_rollouts_change_nothing_without_randomness_and_steady_the_comparison():
    """With epsilon 0 the rollouts draw no random numbers, so pairing them changes nothing.
    With epsilon 0.5 every action of a world is finished with the same random numbers, so the
    gap between two actions varies less from seed to seed than with independent rollouts."""
    game = next(g for g in decision_points(20, seed=3) if len(g.legal_actions()) >= 2)
    np.testing.assert_array_equal(S.pimc_values(game, 24, seed=2)[1], S.pimc_values(game, 24, seed=2, paired=True)[1])
    gaps = {paired: [np.subtract(*S.pimc_values(game, 16, seed=k, epsilon=0.5, paired=paired)[1][:2])
                     for k in range(40)] for paired in (False, True)}
    assert np.var(gaps[True]) < 0.7 * np.var(gaps[False])
    assert make_agent("pimc:8:paired=1").paired and not make_agent("pimc:8").paired


def test_low_discard_rollouts_throw_the_tile_worth_least_when_their_random_action_discards():
    """With epsilon 1 every rollout decision is random; with ``low_discard`` a random discard
    becomes the discard of the tile worth least (ties to the lowest id), the rest unchanged:
    the kernel's rollout equals this step-by-step replay of the same random numbers."""
    from tiengow_env import _kernels as K
    from tiengow_env.tiles import NUM_TYPES, TILE_WORTH
    changed = 0
    for game in decision_points(12, seed=8):
        ws, table, rules = S.Workspace(game.rules), game.combos.table, game.combos.rules_array
        C = game.combos.num_combos
        scratch = np.empty(C + NUM_TYPES + 2, dtype=np.int64)
        finished = {}
        for low in (False, True):
            state, rng = game.state.copy(), S._rng(5)
            SK.finish_world(state, S.POLICIES["greedy"], np.ones(S.MAX_SEATS), low, 0, 0, False, ws.singles, table,
                            rules, rng, scratch, ws.solver, 1)
            finished[low] = state
        replay = game.clone()
        rng = S._rng(5)
        while not replay.is_over:
            K.rand_below(rng, SK.EPSILON_UNIT)  # the epsilon draw: always random at epsilon 1
            legal = replay.legal_actions()
            n = K.legal_actions(replay.state, table, rules, scratch)
            assert sorted(scratch[:n]) == sorted(legal)
            action = int(scratch[K.rand_below(rng, n)])
            if C <= action < C + NUM_TYPES:
                action = min((a for a in legal if C <= a < C + NUM_TYPES), key=lambda a: (TILE_WORTH[a - C], a))
            replay.step(action)
        np.testing.assert_array_equal(finished[True], replay.state)
        changed += not np.array_equal(finished[True], finished[False])
    assert changed > 0
    assert make_agent("pimc:8:low_discard=1").low_discard and not make_agent("pimc:8").low_discard
    assert make_agent("ismcts:8:low_discard=1").low_discard
    assert make_agent("champion:8:low_discard=1").searcher.low_discard


def test_greedy_end_rollouts_play_the_policy_alone_once_a_seat_holds_few_tiles():
    """With epsilon 1 every rollout decision is random, except, with ``greedy_end`` G, those
    of a seat holding at most G tiles, which are greedy's and draw no random number: the
    kernel's rollout equals this step-by-step replay of the same random numbers. G = 0 is the
    rollout as it was; G at least the hand size is the greedy rollout."""
    from tiengow_env import _kernels as K
    from tiengow_env.tiles import NUM_TYPES
    greedy = make_agent("greedy")
    changed = 0
    for game in decision_points(12, seed=9):
        ws, table, rules = S.Workspace(game.rules), game.combos.table, game.combos.rules_array
        scratch = np.empty(game.combos.num_combos + NUM_TYPES + 2, dtype=np.int64)
        finished = {}
        for end in (0, 2, 8):
            state, rng = game.state.copy(), S._rng(5)
            SK.finish_world(state, S.POLICIES["greedy"], np.ones(S.MAX_SEATS), False, end, 0, False, ws.singles,
                            table, rules, rng, scratch, ws.solver, 1)
            finished[end] = state
        for end in (0, 2, 8):
            replay, rng = game.clone(), S._rng(5)
            while not replay.is_over:
                if len(replay.hand(replay.to_act)) <= end:
                    replay.step(greedy.act(*replay.observe()))
                    continue
                K.rand_below(rng, SK.EPSILON_UNIT)  # the epsilon draw: always random at epsilon 1
                n = K.legal_actions(replay.state, table, rules, scratch)
                replay.step(int(scratch[K.rand_below(rng, n)]))
            np.testing.assert_array_equal(finished[end], replay.state)
        changed += not np.array_equal(finished[2], finished[0])
    assert changed > 0
    assert make_agent("pimc:8:greedy_end=2").greedy_end == 2 and make_agent("pimc:8").greedy_end == 0
    assert make_agent("champion:8").searcher.greedy_end == 0
    assert make_agent("champion:8:greedy_end=2").searcher.greedy_end == 2
    assert make_agent("champion:8:infer=0.2").searcher.infer == 0.2
    game = decision_points(1, seed=4)[0]  # the search passes it on: a whole hand greedy is epsilon 0
    np.testing.assert_array_equal(S.pimc_values(game, 16, seed=7, epsilon=0.5, greedy_end=8)[1],
                                  S.pimc_values(game, 16, seed=7, epsilon=0.0)[1])
    assert not np.array_equal(S.pimc_values(game, 16, seed=7, epsilon=0.5, greedy_end=2)[1],
                              S.pimc_values(game, 16, seed=7, epsilon=0.0)[1])
    with pytest.raises(ValueError, match="greedy_end must be a number of tiles >= 0"):
        S.pimc_values(game, 16, greedy_end=-1)


# ============================================================================ discard inference
def random_play_with_discards(seed: int, rules: RuleSet):
    """A random game (a seat that can beat discards half the time): before each decision, a
    copy of the game and, for every discard decision so far in play order, whether that seat
    could have beaten."""
    rng = np.random.default_rng(seed)
    game = Game(seed=seed, rules=rules)
    C = game.combos.num_combos
    seen = []
    while not game.is_over:
        legal = game.legal_actions()
        beats = [a for a in legal if a < C]
        discards = [a for a in legal if a >= C]
        pool = beats if beats and (not discards or rng.random() < 0.5) else discards or legal
        action = int(pool[int(rng.integers(len(pool)))])
        fresh_discard = game.phase == "follow" and action >= C and game.state[S_OWED] == 0
        could_beat = bool(beats)
        game.step(action)
        if fresh_discard:
            seen.append(could_beat)
        if not game.is_over:
            yield game.clone(), list(seen)


def test_discard_events_read_only_public_facts_and_bound_the_hand_from_below():
    """Each row names another seat's discard decision (in play order, early death left out),
    the combination it did not beat, and tiles that seat surely held then; a true state counts
    a row as beatable only when the seat could in fact have beaten."""
    rules = RuleSet.from_spec("standard")
    checked = 0
    for seed in range(6):
        for game, could_beat in random_play_with_discards(seed, rules):
            events = S.discard_events(game, every=True)
            observer = game.to_act
            plays = [p for t in game.tricks for p in t.plays if p.kind == "discard" and p.seat != observer]
            assert [int(e[0]) for e in events] == [p.seat for p in plays]
            for e in events:
                assert int(e[2]) & ~int(game.state[S_UP + int(e[0])]) == 0  # tiles it has put face up
            truths = []  # could each of these seats beat, in play order?
            others = iter(could_beat)
            for t in game.tricks:
                for p in t.plays:
                    if p.kind == "discard":
                        truth = next(others)
                        if p.seat != observer:
                            truths.append(truth)
            for row, truth in zip(events, truths):
                counted = SK.beatable_discards(game.state, row[None], game.combos.table, game.combos.rules_array)
                assert counted <= truth
                checked += counted
            other = game.clone()  # the same game with the hidden tiles dealt again: the same rows
            rng = S._rng(seed)
            SK.deal_world(game.state, observer, False, game.combos.table, game.combos.rules_array, rng, other.state)
            np.testing.assert_array_equal(S.discard_events(other, every=True), events)
            table = game.combos.table
            agreed = [tuple(e) for e in events if SK.beatable_discards(np.zeros_like(game.state), e[None], table,
                                                                       game.combos.rules_array)]
            assert [tuple(e) for e in events if tuple(e) not in agreed] == [tuple(e) for e in S.discard_events(game)]
    assert checked > 10  # the test did meet discards that the true hand shows had a beat


def test_inferred_worlds_follow_the_discards_and_must_beat_makes_them_hard_facts():
    rules = RuleSet.from_spec("standard")
    # Three discards or more, none by a seat that could have beaten, so that worlds consistent with
    # all of them exist (the true one). Seed 5 is the first whose uniform worlds contradict them:
    # seeds 1, 4 deal no such game, and in seeds 2, 3 no world contradicts the discards.
    game = next(g for g, could_beat in random_play_with_discards(5, rules)
                if len(S.discard_events(g)) >= 3 and not any(could_beat))
    events = S.discard_events(game)
    table, rules_array = game.combos.table, game.combos.rules_array
    world = np.zeros_like(game.state)

    def contradicted(keep: float) -> float:
        rng = S._rng(7)
        total = 0
        for _ in range(300):
            SK.draw_world(game.state, game.to_act, events, keep, False, table, rules_array, rng, world)
            total += SK.beatable_discards(world, events, table, rules_array)
        return total / 300

    uniform, some, none = contradicted(1.0), contradicted(0.3), contradicted(0.0)
    assert uniform > 0.2 and some < 0.8 * uniform and none == 0
    rng, other = S._rng(7), S._rng(7)
    SK.draw_world(game.state, game.to_act, events, 1.0, False, table, rules_array, rng, world)
    plain = world.copy()
    SK.deal_world(game.state, game.to_act, False, table, rules_array, other, world)
    np.testing.assert_array_equal(plain, world)  # keep = 1 is the plain draw
    assert S._inference(game, 1.0)[1] == 1.0 and len(S._inference(game, 1.0)[0]) == 0
    strict = Game(seed=0, rules=RuleSet.from_spec({"must_beat_if_able": True}))
    assert S._inference(strict, 1.0)[1] == 0.0
    worlds, _ = S.sample_worlds(game, 50, seed=3, infer=0.0)  # the public sampler draws as the searches do
    assert all(SK.beatable_discards(w, events, table, rules_array) == 0 for w in worlds)
    with pytest.raises(ValueError, match="infer must be a probability from 0 to 1"):
        S.pimc_values(game, 8, infer=2.0)
    assert make_agent("pimc:8:infer=0.25").infer == 0.25 and make_agent("ismcts:8:infer=0").infer == 0


# ============================================================================ champion
def test_champion_ranks_by_its_pimc_values_plus_the_weighted_log_policy():
    from tiengow.agents.ppo import make_ppo_agent
    prior = make_ppo_agent(None, RuleSet.from_spec("standard"))
    for k, game in enumerate(decision_points(6, seed=9)):
        observation, mask = game.observe()
        explained = prior.explain(observation, mask)
        probabilities = dict(zip(explained["actions"], explained["values"]))
        bonus = 2 * np.log([probabilities[a] for a in game.legal_actions()])
        expected = S.pimc_details(game, 16, seed=40 + k, epsilon=0.5, halving=True, bonus=bonus, paired=True)
        actions, scores, chips = make_agent("champion:16:weight=2:locate=0").search(game, 40 + k)
        np.testing.assert_array_equal(actions, expected[0])
        np.testing.assert_array_equal(chips, expected[1])
        assert int(np.argmax(scores)) == expected[3]
        unguided = make_agent("champion:16:weight=0:locate=0").search(game, 40 + k)
        plain = S.pimc_details(game, 16, seed=40 + k, epsilon=0.5, halving=True, paired=True)
        assert int(np.argmax(unguided[1])) == plain[3]


def test_a_bonus_that_dwarfs_the_values_decides():
    game = next(g for g in decision_points(20, seed=6) if len(g.legal_actions()) >= 3)
    for halving in (False, True):
        for pick in range(3):
            bonus = np.zeros(len(game.legal_actions()))
            bonus[pick] = 1000.0
            assert S.pimc_details(game, 16, seed=1, halving=halving, bonus=bonus)[3] == pick
    with pytest.raises(ValueError, match="finite number for each"):
        S.pimc_details(game, 8, bonus=np.zeros(1))


def first_legal(observations, masks, rng):
    return np.argmax(masks, axis=1)


def test_lookahead_plays_each_action_then_the_others_until_the_seat_acts_again():
    for k, game in enumerate(decision_points(5, seed=21)):
        seat = game.to_act
        valued = []

        def value(observations, valued=valued):
            valued.append(observations.copy())
            return np.full(len(observations), 10.0)

        actions, looked = S.lookahead_values(game, 6, first_legal, value, seed=k)
        worlds, _ = S.sample_worlds(game, 6, seed=k)
        expected, rows = np.zeros(len(actions)), []
        for world in worlds:
            for i, action in enumerate(actions):
                other = game.clone()
                other.state[:] = world
                other.step(int(action))
                while not other.is_over and other.to_act != seat:
                    other.step(min(other.legal_actions()))
                expected[i] += other.state[SK.S_BONUS + seat] + other.state[SK.S_SETTLE + seat]
                if not other.is_over:
                    expected[i] += 10.0
                    rows.append(other.observe(seat)[0])
        np.testing.assert_allclose(looked, expected / len(worlds))
        np.testing.assert_array_equal(np.concatenate(valued) if valued else np.zeros((0, len(rows[0]))),
                                      np.array(rows).reshape(-1, len(rows[0])))


def test_lookahead_refuses_bad_input_with_a_reason():
    game = decision_points(1, seed=3)[0]
    zero = lambda observations: np.zeros(len(observations))  # noqa: E731
    with pytest.raises(ValueError, match="positive integer"):
        S.lookahead_values(game, 0, first_legal, zero)
    with pytest.raises(ValueError, match="one legal action per observation"):
        S.lookahead_values(game, 4, lambda o, m, r: np.argmin(m, axis=1), zero)
    with pytest.raises(ValueError, match="one finite number of chips per observation"):
        S.lookahead_values(game, 4, first_legal, lambda observations: np.full((len(observations), 2), np.nan))
    over = Game(seed=1)
    while not over.is_over:
        over.step(over.legal_actions()[0])
    with pytest.raises(ValueError, match="nothing to search"):
        S.lookahead_values(over, 4, first_legal, zero)


def test_champion_with_a_value_share_ranks_by_the_mix_of_rollouts_and_lookahead():
    bot = make_agent("champion:16:weight=1:value=0.4:worlds=8:locate=0")
    for k, game in enumerate(decision_points(4, seed=8)):
        observation, mask = game.observe()
        explained = bot.prior.explain(observation, mask)
        probabilities = dict(zip(explained["actions"], explained["values"]))
        log_pi = np.log([probabilities[a] for a in game.legal_actions()])
        with bot.threads.limit(limits=1, user_api="blas"):  # the champion's products, summed in its order
            _, looked = S.lookahead_values(game, 8, bot._policy, bot.prior.values, 30 + k)
        bonus = (0.4 * looked + log_pi) / 0.6
        expected = S.pimc_details(game, 16, seed=30 + k, epsilon=0.5, halving=True, bonus=bonus, paired=True)
        actions, scores, chips = bot.search(game, 30 + k)
        np.testing.assert_array_equal(actions, expected[0])
        np.testing.assert_allclose(chips, 0.6 * expected[1] + 0.4 * looked)
        assert int(np.argmax(scores)) == expected[3]
    assert make_agent("champion:8:endgame=4").searcher.endgame == 4
    assert make_agent("champion:8:rollout=expert").searcher.policy == "expert"


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
        slots = list(tree.slot_action[offset:offset + size])
        w = tree.root_weight[d]
        agree += w * policy[offset + slots.index(action)]
        uniform += w / size
        weight += w
    # The CFR+ probability of ISMCTS's lead, against a uniform choice's.
    assert agree / weight > uniform / weight + 0.2


# ============================================================================ belief weights
def test_belief_weights_favour_worlds_where_the_others_threw_weak_tiles():
    game = next(g for g in decision_points(40, seed=5) if any(
        g.state[S_DOWN + s] for s in range(4) if s != g.to_act))
    worlds, uniform = S.sample_worlds(game, 200, beta=0.0, seed=1)
    _, weighted = S.sample_worlds(game, 200, beta=2.0, seed=1)
    assert np.allclose(uniform, 1 / 200) and abs(weighted.sum() - 1) < 1e-9
    assert weighted.max() > 2 / 200  # the weights do discriminate between worlds


@pytest.mark.parametrize("beta", [50.0, 1000.0, 1e9])
def test_belief_weights_stay_finite_at_any_inverse_temperature(beta):
    # exp(-beta v) underflows to 0 for a large beta: the likelihood is taken in log space, and
    # the search's running weights rescale when a likelier world comes (once a ZeroDivisionError)
    game = next(g for g in decision_points(40, seed=5) if sum(
        bin(g.state[S_DOWN + s]).count("1") for s in range(4) if s != g.to_act) >= 3)
    _, weights = S.sample_worlds(game, 100, beta=beta, seed=1)
    assert np.all(np.isfinite(weights)) and abs(weights.sum() - 1) < 1e-9
    _, chips, _, _ = S.pimc_details(game, 16, "greedy", 3, beta=beta)
    assert len(chips) and np.all(np.isfinite(chips))


# ============================================================================ policy-based inference
def linear_log_policy(observations, masks):
    """A fixed, made-up model of play: log-softmax over the legal actions of a linear map."""
    weights = np.random.default_rng(0).normal(size=(observations.shape[1], masks.shape[1]))
    logits = np.where(masks, observations.astype(np.float64) @ weights, -np.inf)
    top = logits.max(axis=1, keepdims=True)
    return logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))


def replayed_log_likelihood(game: Game, world: np.ndarray, log_policy) -> float:
    """``history_log_likelihoods`` of one world, step by step through the Game API."""
    seat, C = game.to_act, game.combos.num_combos
    dealt = [world[S_HAND + s] | world[S_DOWN + s] | world[S_UP + s] for s in range(game.players)]
    dealt[seat] = game.state[S_DEALT + seat]
    replay = Game(hands=[mask_names(int(m)) for m in dealt], banker=game.banker, rules=game.rules)
    to_go_down = [mask_types(int(world[S_DOWN + s])) for s in range(game.players)]
    total = 0.0
    for action in game.history:
        actor = replay.to_act
        if actor != seat and action >= C and action < C + len(NAMES):  # the world's own face-down tile
            action = C + to_go_down[actor].pop(0)
        observation, mask = replay.observe()
        if actor != seat and replay.state[S_OWED] == 0:
            log_p = log_policy(observation[None], mask[None])[0]
            total += np.logaddexp.reduce(log_p[C:C + len(NAMES)]) if action >= C else log_p[action]
        replay.step(action)
    return total


def test_history_log_likelihoods_replay_each_world_and_score_the_others_decisions():
    tried = 0
    for k, game in enumerate(decision_points(5, seed=13)):
        worlds, _ = S.sample_worlds(game, 6, seed=k)
        got = S.history_log_likelihoods(game, worlds, linear_log_policy)
        expected = [replayed_log_likelihood(game, world, linear_log_policy) for world in worlds]
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
        tried += bool(game.history)
        truth = S.history_log_likelihoods(game, game.state[None], linear_log_policy)
        assert np.isfinite(truth).all()  # the true deal always explains the history
    assert tried >= 4


def test_history_log_likelihoods_say_nothing_without_a_history_from_the_deal():
    fresh = Game(seed=3)
    worlds, _ = S.sample_worlds(fresh, 8, seed=1)
    np.testing.assert_array_equal(S.history_log_likelihoods(fresh, worlds, linear_log_policy), np.zeros(8))
    game = next(g for g in decision_points(10, seed=4) if len(g.history) > 4)
    worlds, _ = S.sample_worlds(game, 8, seed=1)
    outside = Game(seed=1)
    outside.state[:] = game.state  # the state set from outside, as the vector env does: no history
    np.testing.assert_array_equal(S.history_log_likelihoods(outside, worlds, linear_log_policy), np.zeros(8))
    outside.history = [game.history[-1]] + game.history[1:]  # a history that does not lead here
    np.testing.assert_array_equal(S.history_log_likelihoods(outside, worlds, linear_log_policy), np.zeros(8))
    outside.history = [10**9, "declare"]  # not action ids at all
    np.testing.assert_array_equal(S.history_log_likelihoods(outside, worlds, linear_log_policy), np.zeros(8))
    with pytest.raises(ValueError, match="log-probability per action"):
        S.history_log_likelihoods(game, worlds, lambda o, m: np.zeros((len(o), 2)))
    with pytest.raises(ValueError, match=r"states of shape \(N, "):
        S.history_log_likelihoods(game, worlds[:, :4], linear_log_policy)
    over = Game(seed=1)
    while not over.is_over:
        over.step(over.legal_actions()[0])
    with pytest.raises(ValueError, match="nothing to infer"):
        S.history_log_likelihoods(over, worlds, linear_log_policy)


def test_pimc_draws_its_worlds_from_a_given_belief():
    game = next(g for g in decision_points(10, seed=12) if len(g.legal_actions()) >= 2)
    worlds, _ = S.sample_worlds(game, 3, seed=2)
    one = S.pimc_details(game, 16, seed=5, worlds=(worlds[:1], np.ones(1)))
    again = S.pimc_details(game, 16, seed=5, worlds=(worlds, np.array([1.0, 0.0, 0.0])))
    np.testing.assert_array_equal(one[1], again[1])  # weight 0: never drawn
    other = S.pimc_details(game, 16, seed=5, worlds=(worlds[1:2], np.ones(1)))
    assert not np.array_equal(one[1], other[1])
    for bad, match in (((worlds[:, :5], np.ones(3)), "states of shape"), ((worlds, np.ones(2)), "one weight each"),
                       ((worlds, np.array([1.0, -1.0, 0.0])), "finite, >= 0"), ((worlds, np.zeros(3)), "not all 0")):
        with pytest.raises(ValueError, match=match):
            S.pimc_details(game, 8, worlds=bad)


def test_champion_with_a_belief_searches_the_worlds_the_policy_explains():
    bot = make_agent("champion:16:belief=0.5:particles=12:locate=0")
    game = next(g for g in decision_points(20, seed=14) if len(g.history) > 8 and len(g.legal_actions()) >= 2)
    states, _ = S.sample_worlds(game, 12, seed=3)
    with bot.threads.limit(limits=1, user_api="blas"):
        log_likelihood = S.history_log_likelihoods(game, states, bot._log_policy)
    weights = np.exp(0.5 * (log_likelihood - log_likelihood.max()))
    observation, mask = game.observe()
    explained = bot.prior.explain(observation, mask)
    probabilities = dict(zip(explained["actions"], explained["values"]))
    bonus = 0.25 * np.log([probabilities[a] for a in game.legal_actions()])
    expected = S.pimc_details(game, 16, seed=3, epsilon=0.5, halving=True, bonus=bonus, paired=True,
                              worlds=(states, weights))
    actions, scores, chips = bot.search(game, 3)
    np.testing.assert_allclose(chips, expected[1])
    assert int(np.argmax(scores)) == expected[3]


# ============================================================================ specs
@pytest.mark.parametrize("spec, bad", [("pimc:x", "a number of samples from 1 to 1,000,000,000"),
                                       ("pimc:8:foo=1", "unknown option"),
                                       ("pimc:8:rollout=smart", "rollout must be one of"),
                                       ("ismcts:0", "a number of iterations from 1 to"),
                                       ("pimc:8:endgame=-1", "endgame is a whole number of tiles from 0 to 16"),
                                       ("search:0", "positive budget"),
                                       ("pimc:8,smart", "pimc:SAMPLES,POLICY"),
                                       ("pimc:8:epsilon=2", "probability from 0 to 1"),
                                       ("pimc:8:own_epsilon=1.1", "probability from 0 to 1"),
                                       ("pimc:8:infer=1.5", "probability from 0 to 1"),
                                       ("ismcts:8:epsilon=-0.1", "probability from 0 to 1"),
                                       ("pimc:8:halving=2", "halving is 0"), ("pimc:8:paired=2", "paired is 0"),
                                       ("ismcts:8:halving=1", "unknown option"),
                                       ("champion:x", "a number of samples from 1"),
                                       ("champion:8:c=1", "unknown option"),
                                       ("pimc:8:low_discard=yes", "low_discard is 0 or 1"),
                                       ("pimc:8:greedy_end=2.5", "greedy_end is a whole number of tiles"),
                                       ("champion:8:greedy_end=-1", "whole number of tiles from 0 to 32"),
                                       ("champion:8:infer=2", "probability from 0 to 1"),
                                       ("champion:8:rollout=ppo", "rollout must be one of"),
                                       ("champion:8:epsilon=3", "probability from 0 to 1"),
                                       ("champion:8:prior=/no/such.pt", "prior=/no/such.pt: .* does not exist"),
                                       ("champion:8:value=1", r"up to \(not including\) 1"),
                                       ("champion:8:value=0.5:worlds=0", "worlds is a whole number of lookahead"),
                                       ("champion:8:endgame=-2", "endgame is a whole number of tiles from 0 to 16"),
                                       ("champion:8:belief=-1", "belief is a number from 0 to 1,000,000,000"),
                                       ("champion:8:belief=1:particles=0", "particles is a whole number of belief"),
                                       ("pimc:99999999999999999999", "from 1 to 1,000,000,000"),
                                       ("pimc:8:endgame=99999999999999999999", "endgame is a whole number of tiles"),
                                       ("search:99999999999999999999", "budget factor of at most 1,000,000"),
                                       ("pimc:8:epsilon=nan", "probability from 0 to 1"),
                                       ("pimc:8:beta=inf", "beta is a number from 0 to 1,000,000,000"),
                                       # zero-padded counts are read whole (they got past the cap once)
                                       ("ismcts:0000000000010000000000000", "from 1 to 10,000,000"),
                                       ("pimc:00000000000000000000002000000000", "from 1 to 1,000,000,000"),
                                       ("ismcts:1000000000", "iterations from 1 to 10,000,000"),  # 64 GB of nodes
                                       ("pimc:8:endgame=17", "from 0 to 16"),  # hours a decision
                                       ("champion:8:value=-0.1", r"from 0 up to \(not including\) 1"),
                                       ("champion:8:value=0.5:worlds=1000000000", "from 1 to 1,000,000"),
                                       ("champion:8:belief=1:particles=2000000", "from 1 to 1,000,000"),
                                       ("champion:8:weight", "weight needs a value, as in weight=VALUE"),
                                       ("champion:8:prior=", "prior= needs a value")])
def test_bad_search_specs_are_refused_with_a_reason(spec, bad):
    with pytest.raises(ValueError, match=bad):
        make_agent(spec)


@pytest.mark.parametrize("spec, kind, count, policy", [
    ("pimc", "PimcAgent", 32, "greedy"), ("pimc:64", "PimcAgent", 64, "greedy"),
    ("pimc:64,random", "PimcAgent", 64, "random"), ("pimc:256:rollout=expert", "PimcAgent", 256, "expert"),
    ("ismcts", "IsmctsAgent", 1000, "greedy"), ("ismcts:50:rollout=random", "IsmctsAgent", 50, "random")])
def test_search_specs(spec, kind, count, policy):
    bot = make_agent(spec)
    assert type(bot).__name__ == kind and bot.policy == policy
    assert getattr(bot, "samples", getattr(bot, "iterations", None)) == count


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
@pytest.mark.parametrize("target", [
    "test_search.py::test_endgame_solver_matches_brute_force_on_the_reference_engine[micro-8]",
    "test_search.py::test_halving_with_two_actions_is_plain_pimc_and_with_more_keeps_its_best",
    "test_search.py::test_inferred_worlds_follow_the_discards_and_must_beat_makes_them_hard_facts",
    "test_search.py::test_lookahead_plays_each_action_then_the_others_until_the_seat_acts_again",
    "test_search.py::test_history_log_likelihoods_replay_each_world_and_score_the_others_decisions",
    "test_search.py::test_low_discard_rollouts_throw_the_tile_worth_least_when_their_random_action_discards",
    "test_search.py::test_greedy_end_rollouts_play_the_policy_alone_once_a_seat_holds_few_tiles",
    pytest.param("test_search.py::test_paired_rollouts_change_nothing_without_randomness_and_steady_the_comparison",
                 marks=pytest.mark.slow),
    pytest.param("test_search_policies.py::test_compiled_policies_match_the_reference[micro]", marks=pytest.mark.slow),
    pytest.param("test_search.py::test_searches_read_no_hidden_tiles[pimc:8:rollout=expert:endgame=6:beta=1.5]",
                 marks=pytest.mark.slow),
    pytest.param("test_search.py::test_positions_with_one_right_move[ismcts:100]", marks=pytest.mark.slow),
])
def test_search_kernels_without_jit(target):
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", str(HERE / target)],
                         capture_output=True, text=True, env=env, cwd=HERE.parent, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]


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
    for error, code, line in ((KeyboardInterrupt(), 130, f"python -m tiengow.benchmarks.{module}: interrupted"),
                              (RuntimeError("boom"), 70, "internal error: RuntimeError: boom (a bug in tiengow")):
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
    states, weights = make(RuleSet.from_spec("standard"), 0)._worlds(game, seed=1)
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
    for argv, message in ((["--seeds", "1,x"], "argument --seeds: must be an integer >= 0, got 'x'"),
                          (["--seeds", "1,,2"], "argument --seeds: takes items separated by single commas"),
                          (["--seeds", "1,1"], "argument --seeds: lists each item once; '1' is given twice"),
                          (["--seeds", "9223372036854775808"], "at most 2^63 - 1"),
                          (["--bots", "search,search"], "argument --bots: lists each item once")):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2 and message in capsys.readouterr().err
    assert main(["--bots", "nobot"]) == 2
    assert "oracle: error: unknown agent 'nobot'" in capsys.readouterr().err
    main(["--bots", "pimc:1", "--hands", "1", "--seeds", "5,6", "--json"])
    assert json.loads(capsys.readouterr().out)["regret"] == {"pimc:1": one["regret"]["pimc:1"]}
