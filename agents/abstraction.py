"""The full-game abstraction used by ``GameMCCFR`` and the ``cfr`` agent.

The standard game is far too large for exact information sets (a seat's 8-tile hand times
every public history), so MCCFR runs on an *abstract* game: the acting seat's information is
reduced to a bucket of a few features, and its legal actions to a few abstract actions. Both
are computed by one compiled function, ``_cfr_play_kernels.abstract_view``, from the game state,
reading only what the acting seat may know (its own tiles, the face-up tiles, how many tiles
each seat holds, the columns and the trick so far); training and play use the same function,
so a policy means the same thing in both.

Abstract actions (each names one concrete action id; options that name the same action as an
earlier one are dropped, so a bucket's options are always distinct):

| id | name         | concrete action                                                        |
|----|--------------|------------------------------------------------------------------------|
| 0  | lead_big     | lead the largest, then strongest combination (the greedy agent's lead) |
| 1  | lead_sure    | the largest *sure* lead (no unseen tiles can beat it), cheapest to give up |
| 2  | lead_low     | the single worth least to keep: give the lead away cheaply             |
| 3  | lead_high    | the strongest single                                                   |
| 4  | beat_cheap   | beat with the weakest beating combination                              |
| 5  | beat_strong  | beat with the strongest beating combination                            |
| 6  | discard      | answer face down                                                       |

Which tiles go face down is not learned: a discard (and a follower who cannot beat) throws, one
tile at a time, the tile worth least to keep, the expert agent's rule (its rank in its suit,
+0.5 x the size of the largest combination of the hand it belongs to, +1 if it is a single no
unseen tile beats). One Red Dot is always declared. Where only one option remains there is no
decision and no bucket.

Bucket features. Leading (key ``0 .. LEAD_KEYS-1``):

| feature          | values             | why                                                          |
|------------------|--------------------|--------------------------------------------------------------|
| tiles in hand    | 1 .. 10            | the stage of the hand: the last tricks decide the settlement |
| own columns      | 0, <par, par, >par | what one more column is worth: 0 columns pays par + 1, each  |
|                  |                    | column below par saves a point, above par earns one          |
| sure tiles       | 0 .. 4+            | tiles of the hand in some sure lead: the certain winning     |
|                  |                    | power, which decides between cashing winners and giving the  |
|                  |                    | lead away                                                    |
| Supreme pair     | 0 / 1              | a sure lead that also collects the trick bonus and, won      |
|                  |                    | last, doubles the settlement                                 |
| seats at 0       | 0 / 1 / 2+         | other seats without a column pay par + 1 to whoever takes    |
|                  |                    | the last trick                                               |
| options          | 3 bits             | which of lead_sure, lead_low, lead_high differ from lead_big |

Answering a lead with a possible beat (key ``LEAD_KEYS + 0 .. FOLLOW_KEYS-1``):

| feature          | values             | why                                                          |
|------------------|--------------------|--------------------------------------------------------------|
| tiles in hand    | 1 .. 10            | the stage of the hand                                        |
| trick size       | 1 .. 4             | columns at stake in this trick                               |
| seats done       | 1 .. 3             | position: the last seat to answer wins for certain with a    |
|                  |                    | beat                                                         |
| own columns      | 0, <par, par, >par | as above                                                     |
| cheap beat sure  | 0 / 1              | the weakest beat wins the trick for certain (last seat, or   |
|                  |                    | no unseen tiles can beat it)                                 |
| strong beat sure | 0 / 1              | the same for the strongest beat                              |
| sure tiles       | 0 .. 4+            | winning the lead is worth more with sure leads to follow     |
| options          | 2 bits             | the strongest beat differs from the weakest; a discard is    |
|                  |                    | allowed                                                      |

These are the facts the expert heuristic (``agents/baselines.py``) rests on (sureness against
the unseen tiles, columns against par, position in the trick), plus the stakes; they are
coarse enough that the few thousand buckets the game reaches are each visited many times in a
few minutes of MCCFR. The key is the features packed in mixed radix (an exact integer, no hash),
so tables are indexed by it directly. Everything also works for other rule sets (a custom deck,
three players); a ``cfr`` policy file records the rule set it was trained on.
"""

from __future__ import annotations

import numpy as np

from tiengow_env import layout as L
from tiengow_env.combos import table_for
from tiengow_env.game import Game
from tiengow_env.rules import RuleSet
from tiengow_env.tiles import NUM_TYPES

from . import _cfr_play_kernels as CK

ABSTRACT_NAMES = ("lead_big", "lead_sure", "lead_low", "lead_high", "beat_cheap", "beat_strong", "discard")
NUM_ABSTRACT = CK.NUM_ABSTRACT
NUM_KEYS = CK.NUM_KEYS
LEAD_KEYS = CK.LEAD_KEYS


def single_of_type(rules: RuleSet) -> np.ndarray:
    """int64 (21,): the combination id of the single tile of each type, -1 if there is none."""
    table = table_for(RuleSet.from_spec(rules))
    out = -np.ones(NUM_TYPES, dtype=np.int64)
    for j, combo in enumerate(table.combos):
        if len(combo.types) == 1:
            out[combo.types[0]] = j
    return out


def bucket(game: Game) -> tuple[int, dict[str, int]]:
    """(bucket key or -1, {abstract action name: concrete action id}) of the seat to act."""
    if game.is_over:
        raise ValueError("the hand is over: no seat is to act")
    options = np.zeros(NUM_ABSTRACT, dtype=np.int64)
    scratch = np.zeros(L.legal_len(game.combos.num_combos), dtype=np.int64)
    key = CK.abstract_view(
        game.state, single_of_type(game.rules), game.combos.table, game.combos.rules_array, scratch, options
    )
    if key < 0:
        return -1, {"forced": int(options[0])}
    return int(key), {ABSTRACT_NAMES[a]: int(options[a]) for a in range(NUM_ABSTRACT) if options[a] >= 0}


def describe(key: int) -> dict[str, object]:
    """The features packed in a bucket key (module doc), for reports and debugging."""
    if not 0 <= key < NUM_KEYS:
        raise ValueError(f"a bucket key is 0..{NUM_KEYS - 1}, got {key}")
    columns = ("0", "<par", "par", ">par")
    if key < LEAD_KEYS:
        key, options = divmod(key, 16)
        key, zero = divmod(key, CK.RADIX_ZERO)
        key, supreme = divmod(key, 2)
        key, sure = divmod(key, CK.RADIX_SURE)
        tiles, col = divmod(key, CK.RADIX_COLUMNS)
        return {
            "kind": "lead",
            "tiles": tiles,
            "columns": columns[col],
            "sure_tiles": sure,
            "supreme": bool(supreme),
            "seats_at_zero": zero,
            "options": ["lead_big"] + [ABSTRACT_NAMES[a + 1] for a in range(3) if options >> a & 1],
        }
    key -= LEAD_KEYS
    key, options = divmod(key, 8)
    key, sure = divmod(key, CK.RADIX_SURE)
    key, strong_sure = divmod(key, 2)
    key, cheap_sure = divmod(key, 2)
    key, col = divmod(key, CK.RADIX_COLUMNS)
    key, acted = divmod(key, CK.RADIX_ACTED)
    tiles, size = divmod(key, CK.RADIX_SIZE)
    return {
        "kind": "follow",
        "tiles": tiles,
        "size": size,
        "seats_done": acted,
        "columns": columns[col],
        "cheap_beat_sure": bool(cheap_sure),
        "strong_beat_sure": bool(strong_sure),
        "sure_tiles": sure,
        "options": ["beat_cheap"] + (["beat_strong"] if options & 1 else []) + (["discard"] if options & 2 else []),
    }


__all__ = ["ABSTRACT_NAMES", "NUM_ABSTRACT", "NUM_KEYS", "single_of_type", "bucket", "describe"]
