"""Compiled readers of the state array, for compiled code outside ``tiengow_env``.

The kernels of the agents and trainers (the CFR abstraction, tree building and play) read a
state through these functions instead of ``layout.S_*`` offsets, so that only the kernel
modules of ``tiengow_env`` (``state.py`` names them) know the layout. Each is a one-line
``@njit(cache=True)`` function that LLVM inlines into its caller: it costs nothing.
"""

from numba import njit

from ._numba_cache import register
from .layout import (
    LOG_STRIDE,
    S_ACTED,
    S_BANKER,
    S_BEST,
    S_BEST_SEAT,
    S_BONUS,
    S_COLS,
    S_DEALT,
    S_DECLARER,
    S_DOOMED,
    S_DOWN,
    S_HAND,
    S_LEADER,
    S_LOG,
    S_OWED,
    S_PHASE,
    S_SETTLE,
    S_SIZE,
    S_TABLE,
    S_TO_ACT,
    S_TRICK,
    S_UP,
)

register()  # before the first kernel (_numba_cache.py)


@njit(cache=True)
def hand(state, seat):
    """Tiles ``seat`` still holds (mask)."""
    return state[S_HAND + seat]


@njit(cache=True)
def dealt(state, seat):
    """Tiles ``seat`` was dealt (mask)."""
    return state[S_DEALT + seat]


@njit(cache=True)
def down(state, seat):
    """Tiles ``seat`` has discarded face down (mask)."""
    return state[S_DOWN + seat]


@njit(cache=True)
def up(state, seat):
    """Tiles ``seat`` has played face up (mask)."""
    return state[S_UP + seat]


@njit(cache=True)
def on_table(state, seat):
    """Tiles ``seat`` has put on the table in the current trick (mask)."""
    return state[S_TABLE + seat]


@njit(cache=True)
def columns(state, seat):
    """Columns ``seat`` has won."""
    return state[S_COLS + seat]


@njit(cache=True)
def chips(state, seat):
    """``seat``'s net chips of the hand so far: trick bonuses plus settlement."""
    return state[S_BONUS + seat] + state[S_SETTLE + seat]


@njit(cache=True)
def bonus(state, seat):
    """``seat``'s net chips from trick bonuses."""
    return state[S_BONUS + seat]


@njit(cache=True)
def banker(state):
    """This hand's banker."""
    return state[S_BANKER]


@njit(cache=True)
def phase(state):
    """The phase code (``layout.PHASE_*``)."""
    return state[S_PHASE]


@njit(cache=True)
def to_act(state):
    """The seat to decide (-1 once the hand is over)."""
    return state[S_TO_ACT]


@njit(cache=True)
def leader(state):
    """The leader of the current trick."""
    return state[S_LEADER]


@njit(cache=True)
def size(state):
    """Tiles per player in the current trick."""
    return state[S_SIZE]


@njit(cache=True)
def best(state):
    """Combination id of the current best play of the trick."""
    return state[S_BEST]


@njit(cache=True)
def best_seat(state):
    """The seat that owns the current best play."""
    return state[S_BEST_SEAT]


@njit(cache=True)
def acted(state):
    """Players done in the current trick, the leader included."""
    return state[S_ACTED]


@njit(cache=True)
def owed(state):
    """Face-down tiles the acting seat still owes (0: it has not begun a discard)."""
    return state[S_OWED]


@njit(cache=True)
def tricks_done(state):
    """Tricks completed so far."""
    return state[S_TRICK]


@njit(cache=True)
def doomed(state):
    """1 if early death applies to the current trick, else 0."""
    return state[S_DOOMED]


@njit(cache=True)
def declarer(state):
    """The One Red Dot declarer (-1: nobody)."""
    return state[S_DECLARER]


@njit(cache=True)
def trick_log(state, k, field):
    """Entry ``field`` (``layout.LOG_*``: leader, winner, size, winning id) of completed trick k."""
    return state[S_LOG + LOG_STRIDE * k + field]
