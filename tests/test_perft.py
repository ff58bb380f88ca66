"""perft (RULES.md section 8): the published counts, and agreement with a slow count."""

import pytest

from tiengow_env.game import Game, parse_record, perft

DEAL = {
    "banker": 0,
    "hands": [
        ["1-1", "3-1", "3-3", "6-4", "6-4", "6-3", "4-3", "3-2"],
        ["6-6", "4-4", "5-5", "3-3", "6-1", "5-1", "5-2", "2-1"],
        ["6-6", "3-1", "2-2", "2-2", "6-1", "5-4", "5-3", "4-1"],
        ["1-1", "4-4", "5-5", "6-5", "6-5", "5-1", "6-2", "4-2"],
    ],
}


@pytest.mark.parametrize("depth, count", [(0, 1), (1, 9), (2, 124), (3, 1879), (4, 34883), (5, 233749), (6, 2014714)])
def test_published_counts(depth, count):
    assert perft(DEAL, depth) == count


def slow_perft(game: Game, depth: int) -> int:
    """perft by brute force over record actions: every multiset of tiles, tried through `play`."""
    import itertools

    if depth == 0 or game.is_over:
        return 1
    seat, total = game.to_act, 0
    hand = game.hand(seat)
    tried = set()
    for size in range(1, 5):
        for tiles in itertools.combinations(sorted(hand), size):
            for kind in ("play", "discard"):
                if (kind, tiles) in tried:
                    continue
                tried.add((kind, tiles))
                child = game.clone()
                try:
                    child.play({"seat": seat, kind: list(tiles)})
                except ValueError:
                    continue
                total += slow_perft(child, depth - 1)
    return total


@pytest.mark.parametrize(
    "actions",
    [[], [{"seat": 0, "play": ["6-4", "6-4"]}], [{"seat": 0, "play": ["3-2"]}, {"seat": 1, "discard": ["5-1"]}]],
)
def test_kernel_perft_matches_brute_force(actions):
    record = dict(DEAL, actions=actions)
    game, _ = parse_record(record)
    for action in actions:
        game.play(action)
    assert perft(record, 3) == slow_perft(game, 3)
