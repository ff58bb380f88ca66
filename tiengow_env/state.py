"""``StateView``: the state array read by name, the state's twin of ``ObservationLayout``.

A hand in progress is one int64 array (``Game.state``; its layout is in ``layout.py``). Code
outside the kernel modules reads it only through this view, so that a change of layout
touches the kernels and this file, nothing above them. ``Game.view`` gives the view of a
game; ``StateView(state, players)`` wraps any state array, such as a world a search sampled.

The view copies nothing and writes nothing: per-seat properties are read-only numpy views
of the state (they follow the game as it moves on; ``.copy()`` keeps a snapshot), the other
properties are plain Python values read when asked. Tiles are masks over physical tiles
(``tiles.mask_types`` and ``tiles.mask_names`` read them).

The kernel modules, which alone index the state with ``layout.S_*`` offsets, are
``layout.py`` (which defines them), this module, the compiled modules ``tiengow_env/_*kernels.py``
and the two validating halves of kernels that own state arrays: ``game.py`` (``Game``) and
``search.py``. Compiled code elsewhere (the CFR kernels of the agents and trainers) reads the
state through the compiled readers of ``_state_kernels.py``. ``tests/test_layers.py`` checks it.
"""

from __future__ import annotations

import numpy as np

from . import layout as L

PHASES = ("declare", "lead", "follow", "over")  # by the layout's PHASE_* code
STATE_LEN = L.S_LEN  # entries of a state array, for code that allocates one


class StateView:
    """Read-only named view of one state array of a game of ``players`` seats (module doc)."""

    __slots__ = ("_state", "players")

    def __init__(self, state: np.ndarray, players: int):
        if not isinstance(state, np.ndarray) or state.dtype != np.int64 or state.shape != (L.S_LEN,):
            got = f"{state.dtype} {state.shape}" if isinstance(state, np.ndarray) else type(state).__name__
            raise ValueError(f"a state is an int64 array of shape ({L.S_LEN},), got {got}")
        if players not in (3, 4):
            raise ValueError(f"players must be 3 or 4, got {players!r}")
        self._state = state.view()
        self._state.flags.writeable = False
        self.players = players

    def _seats(self, start: int) -> np.ndarray:
        return self._state[start : start + self.players]

    # ------------------------------------------------------------------ per seat, (players,) int64
    @property
    def hands(self) -> np.ndarray:
        """Tiles each seat still holds (masks)."""
        return self._seats(L.S_HAND)

    @property
    def dealt(self) -> np.ndarray:
        """Tiles each seat was dealt (masks)."""
        return self._seats(L.S_DEALT)

    @property
    def down(self) -> np.ndarray:
        """Tiles each seat has discarded face down this hand (masks; private to their seat)."""
        return self._seats(L.S_DOWN)

    @property
    def up(self) -> np.ndarray:
        """Tiles each seat has played face up this hand, the current trick included (masks)."""
        return self._seats(L.S_UP)

    @property
    def on_table(self) -> np.ndarray:
        """Tiles each seat has put on the table in the current trick, face up or down (masks)."""
        return self._seats(L.S_TABLE)

    @property
    def columns(self) -> np.ndarray:
        """Columns each seat has won so far."""
        return self._seats(L.S_COLS)

    @property
    def bonus(self) -> np.ndarray:
        """Each seat's net chips from trick bonuses so far (RULES.md section 5)."""
        return self._seats(L.S_BONUS)

    @property
    def settlement(self) -> np.ndarray:
        """Each seat's settlement chips (section 6); zeros until the hand is over."""
        return self._seats(L.S_SETTLE)

    @property
    def chips(self) -> np.ndarray:
        """Each seat's net chips of this hand so far: bonus plus settlement (a new array)."""
        return self.bonus + self.settlement

    # ------------------------------------------------------------------ the hand
    @property
    def banker(self) -> int:
        """This hand's banker."""
        return int(self._state[L.S_BANKER])

    @property
    def streak(self) -> int:
        """Hands the banker has held the bank, this one included (>= 1)."""
        return int(self._state[L.S_STREAK])

    @property
    def phase(self) -> str:
        """``declare`` (One Red Dot choice), ``lead``, ``follow`` or ``over``."""
        return PHASES[int(self._state[L.S_PHASE])]

    @property
    def is_over(self) -> bool:
        """The hand is over (settled)."""
        return bool(self._state[L.S_PHASE] == L.PHASE_OVER)

    @property
    def to_act(self) -> int | None:
        """The seat to decide; None once the hand is over."""
        return None if self.is_over else int(self._state[L.S_TO_ACT])

    @property
    def tricks_done(self) -> int:
        """Tricks completed so far."""
        return int(self._state[L.S_TRICK])

    @property
    def declarer(self) -> int | None:
        """The seat that declared One Red Dot; None if nobody did."""
        seat = int(self._state[L.S_DECLARER])
        return None if seat < 0 else seat

    @property
    def winner(self) -> int | None:
        """W: the last trick's winner or the One Red Dot declarer; None before the end."""
        seat = int(self._state[L.S_WINNER])
        return None if seat < 0 else seat

    @property
    def multipliers(self) -> tuple[int, int]:
        """Settlement multipliers (1 or 2): the last-trick bonus and the shutout (section 6)."""
        return int(self._state[L.S_MULT_LAST]), int(self._state[L.S_MULT_SHUT])

    @property
    def trick_log(self) -> np.ndarray:
        """int64 (tricks_done, 4), one row per completed trick: its leader, winner, size (tiles
        per player) and winning combination id (read-only)."""
        start = L.S_LOG
        return self._state[start : start + L.LOG_STRIDE * self.tricks_done].reshape(-1, L.LOG_STRIDE)

    # ------------------------------------------------------------------ the trick in play
    @property
    def leader(self) -> int:
        """The seat that leads (or led) the current trick."""
        return int(self._state[L.S_LEADER])

    @property
    def size(self) -> int:
        """Tiles per player in the current trick (1..4); meaningful once it is led."""
        return int(self._state[L.S_SIZE])

    @property
    def current_best(self) -> tuple[int, int] | None:
        """(seat, combination id) of the best play of the trick in play; None before its lead."""
        if self._state[L.S_PHASE] != L.PHASE_FOLLOW:
            return None
        return int(self._state[L.S_BEST_SEAT]), int(self._state[L.S_BEST])

    @property
    def acted(self) -> int:
        """Players done in the current trick, the leader included."""
        return int(self._state[L.S_ACTED])

    @property
    def owed(self) -> int:
        """Face-down tiles the acting seat still owes: > 0 once it has begun a discard."""
        return int(self._state[L.S_OWED])

    @property
    def doomed(self) -> bool:
        """Early death applies to the current trick (RULES.md section 4)."""
        return bool(self._state[L.S_DOOMED])

    @property
    def banker_first(self) -> bool | None:
        """None until the banker leads; then whether that first lead was unbeatable in the
        banker's own eyes (the shutout exception of section 6)."""
        value = int(self._state[L.S_BANKER_FIRST])
        return None if value < 0 else bool(value)

    def __repr__(self) -> str:
        return (
            f"StateView(phase={self.phase!r}, banker={self.banker}, to_act={self.to_act}, "
            f"tricks_done={self.tricks_done}, columns={self.columns.tolist()})"
        )


__all__ = ["StateView", "PHASES", "STATE_LEN"]
