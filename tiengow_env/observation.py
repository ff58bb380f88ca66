"""Observation and information-state layouts: named views over one flat float32 vector.

Both encodings are written by compiled kernels (``_kernels.write_observation`` and
``_kernels.write_information_state``); this module is their Python-side specification. It
says where each view starts, its shape and its bounds, and it slices a vector back into
named views (``ObservationLayout.views``).

Seats are *relative to the observer*: row ``r`` of a per-seat view is seat
``(observer + r) % players``, so row 0 is always the observer. ``P`` is the number of
players (4, or 3), ``T = 21`` tile types in canonical order (``tiles.NAMES``), ``H`` the
hand size, ``K = layout.MAX_TRICKS = 10``.

Observation of seat ``o``: ``D = (3 + 2P) T + 7P + 23`` floats, 282 with four players and 233
with three.

| view         | shape    | values  | meaning                                                             |
|--------------|----------|---------|---------------------------------------------------------------------|
| `hand`       | (T,)     | 0..2    | tiles o holds, counted per type                                     |
| `down`       | (P, T)   | 0..2    | face-down discards this hand, per seat and type: row 0 is o's own;   |
|              |          |         | other rows stay 0 unless `discards_face_up` makes discards public   |
| `up`         | (P, T)   | 0..2    | tiles each seat has played face up this hand (this trick included)  |
| `lead`       | (T,)     | 0..2    | the combination that led the current trick (0 before the lead)      |
| `best`       | (T,)     | 0..2    | the current best combination of the trick                           |
| `best_seat`  | (P,)     | one-hot | who owns the current best                                           |
| `leader`     | (P,)     | one-hot | who leads the current trick                                         |
| `to_act`     | (P,)     | one-hot | who decides now (row 0 whenever o is the acting seat)               |
| `size`       | (4,)     | one-hot | tiles per player in this trick, 1..4 (0 before the lead)            |
| `acted`      | (1,)     | 0..P    | players done in this trick, the leader included                     |
| `owed`       | (1,)     | 0..4    | face-down tiles the acting seat still owes: > 0 once it has begun a |
|              |          |         | discard, and then only discard actions are legal                    |
| `phase`      | (4,)     | one-hot | declare (One Red Dot choice), lead, follow, over                    |
| `columns`    | (P,)     | 0..H    | columns won so far                                                  |
| `tiles_left` | (P,)     | 0..H    | tiles each seat still holds                                         |
| `banker`     | (P,)     | one-hot | this hand's banker                                                  |
| `trick`      | (K + 1,) | one-hot | tricks completed so far                                             |
| `chips`      | (P,)     | chips   | net chips of this hand so far (trick bonuses; settlement at the end)|
| `doomed`     | (1,)     | 0/1     | early death applies to this trick (every hand holds one tile)       |
| `streak`     | (1,)     | >= 1    | hands the banker has held the bank, this one included               |

Everything above is public or o's own: no other seat's hand, and no other seat's face-down
tiles (only how many went down: `tiles_left` and `up` give it).

Information state of seat ``o`` (perfect recall over the public history plus o's own
tiles): the observation above, then the following, ``D + T + K (2P T + 2P)`` floats in all
(2063 with four players, 1574 with three).

| view            | shape        | meaning                                                      |
|-----------------|--------------|--------------------------------------------------------------|
| `dealt`         | (T,)         | o's dealt hand                                               |
| `trick_leader`  | (K, P)       | one-hot leader of trick k (completed tricks and the current) |
| `trick_up`      | (K, P, T)    | tiles each seat played face up in trick k                    |
| `trick_down`    | (K, P, T)    | face-down tiles of trick k that o may see (own, or all under |
|                 |              | `discards_face_up`)                                          |
| `trick_count`   | (K, P)       | how many tiles each seat has put down in trick k (up or down)|

Since play within a trick passes in seat order from the leader, these rows give the whole
public sequence of decisions. What they leave out is the order in which o itself put the
tiles of one discard face down. That order changes nothing in the game: RULES.md section 8
counts a discard of n tiles as one decision (one multiset).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .layout import HISTORY_LEN, MAX_TRICKS
from .tiles import NUM_TYPES

# Kernel indices into ``ObservationLayout.offsets`` (the start of each view); the kernels read
# the offsets through these constants, in this order.
(
    O_HAND,
    O_DOWN,
    O_UP,
    O_LEAD,
    O_BEST,
    O_BEST_SEAT,
    O_LEADER,
    O_TO_ACT,
    O_SIZE,
    O_ACTED,
    O_OWED,
    O_PHASE,
    O_COLUMNS,
    O_TILES_LEFT,
    O_BANKER,
    O_TRICK,
    O_CHIPS,
    O_DOOMED,
    O_STREAK,
    O_SIZE_TOTAL,
    O_DEALT,
    O_TRICK_LEADER,
    O_TRICK_UP,
    O_TRICK_DOWN,
    O_TRICK_COUNT,
    O_INFO_TOTAL,
) = range(26)
NUM_OFFSETS = 26

# The history that the information state needs and the state array does not keep: per trick
# and per seat, the tiles put up and down (``_kernels.record_tricks`` fills it from each step's
# report; its layout, HISTORY_LEN entries, is in layout.py).


def new_history() -> np.ndarray:
    """An empty trick history (int64, ``HISTORY_LEN``), for ``_kernels.record_tricks``."""
    return np.zeros(HISTORY_LEN, dtype=np.int64)


@dataclass(frozen=True)
class ObservationLayout:
    """Where each view of the observation and information-state vectors lives (module doc)."""

    players: int
    hand_size: int

    def observation_views(self) -> list[tuple[str, tuple[int, ...], float, float]]:
        """(name, shape, low, high) of each observation view, in vector order."""
        P, T, H = self.players, NUM_TYPES, self.hand_size
        return [
            ("hand", (T,), 0, 2),
            ("down", (P, T), 0, 2),
            ("up", (P, T), 0, 2),
            ("lead", (T,), 0, 2),
            ("best", (T,), 0, 2),
            ("best_seat", (P,), 0, 1),
            ("leader", (P,), 0, 1),
            ("to_act", (P,), 0, 1),
            ("size", (4,), 0, 1),
            ("acted", (1,), 0, P),
            ("owed", (1,), 0, 4),
            ("phase", (4,), 0, 1),
            ("columns", (P,), 0, H),
            ("tiles_left", (P,), 0, H),
            ("banker", (P,), 0, 1),
            ("trick", (MAX_TRICKS + 1,), 0, 1),
            ("chips", (P,), -np.inf, np.inf),
            ("doomed", (1,), 0, 1),
            ("streak", (1,), 0, np.inf),  # the chips: bounds()
        ]

    def information_views(self) -> list[tuple[str, tuple[int, ...], float, float]]:
        """(name, shape, low, high) of each information-state view, in vector order."""
        P, T, K = self.players, NUM_TYPES, MAX_TRICKS
        return self.observation_views() + [
            ("dealt", (T,), 0, 2),
            ("trick_leader", (K, P), 0, 1),
            ("trick_up", (K, P, T), 0, 2),
            ("trick_down", (K, P, T), 0, 2),
            ("trick_count", (K, P), 0, 4),
        ]

    @functools.cached_property
    def offsets(self) -> np.ndarray:
        """int64 (NUM_OFFSETS,): start of each view (O_* order), O_SIZE_TOTAL and O_INFO_TOTAL
        holding the two vector sizes. This array is what the kernels read."""
        out = np.zeros(NUM_OFFSETS, dtype=np.int64)
        pos = 0
        for i, (_, shape, _, _) in enumerate(self.observation_views()):
            out[i] = pos
            pos += int(np.prod(shape))
        out[O_SIZE_TOTAL] = pos
        for i, (_, shape, _, _) in enumerate(self.information_views()[len(self.observation_views()) :]):
            out[O_DEALT + i] = pos
            pos += int(np.prod(shape))
        out[O_INFO_TOTAL] = pos
        return out

    @property
    def size(self) -> int:
        """Length D of the observation vector."""
        return int(self.offsets[O_SIZE_TOTAL])

    @property
    def information_size(self) -> int:
        return int(self.offsets[O_INFO_TOTAL])

    def bounds(self, most_chips: float = np.inf, information: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """float32 (low, high) arrays for a Box space, the chips view within +-``most_chips``
        (``RuleSet.payment_bound`` gives it; open without it). The streak view is open."""
        views = self.information_views() if information else self.observation_views()
        given = {"chips": (-most_chips, most_chips)}
        limits = [given.get(name, (lo, hi)) + (int(np.prod(shape)),) for name, shape, lo, hi in views]
        low = np.concatenate([np.full(n, lo, dtype=np.float32) for lo, _, n in limits])
        high = np.concatenate([np.full(n, hi, dtype=np.float32) for _, hi, n in limits])
        return low, high

    @functools.cached_property
    def _slices(self) -> dict[bool, list[tuple[str, slice, tuple[int, ...]]]]:
        """(name, slice, shape) of each view, for observations (False) and information states."""
        out = {}
        for information in (False, True):
            specs = self.information_views() if information else self.observation_views()
            out[information], pos = [], 0
            for name, shape, _, _ in specs:
                n = int(np.prod(shape))
                out[information].append((name, slice(pos, pos + n), shape))
                pos += n
        return out

    def views(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """Named views (no copies) of an observation or information-state vector.

        The last axis is the vector; leading axes (a batch, as in ``VectorEnv``) are kept.
        """
        information = vector.shape[-1] == self.information_size
        if not information and vector.shape[-1] != self.size:
            raise ValueError(
                f"expected a vector of {self.size} (observation) or {self.information_size} "
                f"(information state) floats, got {vector.shape[-1]}"
            )
        lead = vector.shape[:-1]
        return {name: vector[..., part].reshape(lead + shape) for name, part, shape in self._slices[information]}


__all__ = ["ObservationLayout", "new_history", "HISTORY_LEN"]
