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
