"""The compiled greedy and expert policies against their plain-numpy reference
(tests/policy_reference.py), over random decisions under many rule sets: the agents of
agents/baselines.py, the state adapter used in rollouts and the observation adapter must all
choose what the reference chooses."""

import numpy as np
import pytest
from policy_reference import ReferenceExpert, ReferenceGreedy

from tiengow.agents.baselines import ExpertAgent, GreedyAgent
from tiengow_env import _kernels as K
from tiengow_env import _policy_kernels as PK
from tiengow_env.game import Game
from tiengow_env.rules import RuleSet

RULE_SETS = [
    "standard",
    "hongkong",
    "three_player",
    "culin1895",
    "micro",
    "seed001",
    {"preset": "standard", "one_red_dot": "choice"},
    {"preset": "standard", "combos": "pairs_only"},
    {"preset": "standard", "civilian_triplets": True},
    {"preset": "standard", "must_beat_if_able": True, "early_death": False},
    {"preset": "standard", "deck": "24_weakened_military"},
    {"preset": "standard", "deck": "24_supreme_civilians"},
]


def differences(rules_spec, hands: int, seed: int) -> tuple[int, list]:
    """(decisions compared, the differing ones) over ``hands`` hands of mixed random / expert
    play: every decision is answered by the reference and by both compiled adapters."""
    rules = RuleSet.from_spec(rules_spec)
    agents = {
        "greedy": (ReferenceGreedy(rules), GreedyAgent(rules)),
        "expert": (ReferenceExpert(rules), ExpertAgent(rules)),
    }
    compiled = agents["expert"][1]
    table, rules_array = compiled.combos.table, compiled.combos.rules_array
    scratch = np.empty(compiled.combos.num_actions, dtype=np.int64)
    rng = np.random.default_rng(seed)
    decisions, wrong = 0, []
    for hand in range(hands):
        game = Game(seed=int(rng.integers(2**31)), rules=rules)
        while not game.is_over:
            observation, mask = game.observe()
            for name, (reference, agent) in agents.items():
                expected = reference.act(observation, mask)
                if name == "greedy":
                    from_state = K.greedy_action(game.state, table, rules_array, scratch)
                else:
                    from_state = PK.expert_action(
                        game.state, rules.discards_face_up, agent.singles, table, rules_array, scratch
                    )
                got = (agent.act(observation, mask), int(from_state))
                decisions += 1
                if got != (expected, expected):
                    wrong.append((name, hand, game.state.copy(), expected, got))
            legal = np.flatnonzero(mask)
            pick = agents["expert"][0].act(observation, mask) if rng.random() < 0.5 else int(rng.choice(legal))
            game.step(pick)
    return decisions, wrong


@pytest.mark.parametrize("rules_spec", RULE_SETS, ids=str)
def test_compiled_policies_match_the_reference(rules_spec):
    hands = {"seed001": 2, "micro": 30}.get(str(rules_spec), 6)
    decisions, wrong = differences(rules_spec, hands, seed=1)
    assert decisions > 100
    assert not wrong, wrong[:3]


@pytest.mark.slow
def test_compiled_policies_match_the_reference_over_100000_decisions():
    total = 0
    for k, rules_spec in enumerate(RULE_SETS):
        hands = 150 if rules_spec == "seed001" else 650
        decisions, wrong = differences(rules_spec, hands, seed=100 + k)
        assert not wrong, (rules_spec, wrong[:3])
        total += decisions
    assert total >= 100_000
