"""Builders for scripted hands in table-driven tests: record actions and expected tricks."""


def P(seat: int, *tiles: str) -> dict:
    """A face-up play (a lead or a beat)."""
    return {"seat": seat, "play": list(tiles)}


def D(seat: int, *tiles: str) -> dict:
    """A face-down discard."""
    return {"seat": seat, "discard": list(tiles)}


def T(leader: int, winner: int, *winning: str) -> dict:
    """One trick of the replay output; ``winning`` in canonical order."""
    return {"leader": leader, "winner": winner, "size": len(winning), "winning": list(winning)}


def DECLARE(seat: int, yes: bool) -> dict:
    """A One Red Dot decision under ``one_red_dot: choice``."""
    return {"seat": seat, "declare": yes}


# The deal of RULES.md section 8 (banker 0).
DEAL = [
    ["1-1", "3-1", "3-3", "6-4", "6-4", "6-3", "4-3", "3-2"],
    ["6-6", "4-4", "5-5", "3-3", "6-1", "5-1", "5-2", "2-1"],
    ["6-6", "3-1", "2-2", "2-2", "6-1", "5-4", "5-3", "4-1"],
    ["1-1", "4-4", "5-5", "6-5", "6-5", "5-1", "6-2", "4-2"],
]
# A micro hand (2 tiles each): seat 0 leads 6-6 and wins, then leads 6-3; the others have no
# column and are forced, so the hand is over after seat 0's second lead.
MICRO = [["6-6", "6-3"], ["6-6", "3-1"], ["5-4", "4-2"], ["3-2", "2-1"]]
MICRO_ACTIONS = [P(0, "6-6"), D(1, "3-1"), D(2, "4-2"), D(3, "2-1"), P(0, "6-3")]
