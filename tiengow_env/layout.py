"""Index layouts shared by the table builder (``combos.py``) and the kernels (``_kernels.py``).

The kernels read these constants as compile-time values, and numba's on-disk cache is keyed on
the file that defines each kernel, not on this one: after changing a constant here (or a table
in ``tiles.py``), delete the ``__pycache__`` folders, or the cached kernels keep the old values.

Three int64 arrays carry a game into compiled code:

``state`` (length ``S_LEN``), one hand in progress:

    S_HAND+s     tiles seat s still holds (uint32 mask over physical tiles, see tiles.py)
    S_DEALT+s    tiles seat s was dealt
    S_DOWN+s     tiles seat s has discarded face down (only s may see these)
    S_UP+s       tiles seat s has played face up
    S_COLS+s     columns seat s has won
    S_BONUS+s    seat s's net chips from trick bonuses (RULES.md section 5)
    S_SETTLE+s   seat s's settlement chips (section 6), filled when the hand ends
    S_TABLE+s    tiles seat s has put on the table in the current trick (up or down)
    S_BANKER     this hand's banker          S_STREAK      hands held by the banker (>= 1)
    S_PHASE      PHASE_*                     S_TO_ACT      seat to decide (-1 when over)
    S_LEADER     leader of the current trick S_SIZE        tiles per player in this trick
    S_BEST       combination id of the current best, S_BEST_SEAT its owner
    S_ACTED      players done in this trick (the leader included)
    S_OWED       face-down tiles the acting seat still owes (0: it has not started)
    S_TRICK      tricks completed            S_DOOMED      early death applies to this trick
    S_BANKER_FIRST  -1 until the banker leads; then 1 if that first lead was unbeatable
                 "in their own eyes" (section 6, shutout exception), else 0
    S_WINNER     W: last trick winner or One Red Dot declarer (-1 before the end)
    S_DECLARER   One Red Dot declarer (-1)
    S_MULT_LAST, S_MULT_SHUT   settlement multipliers (1 or 2)
    S_LOG + 4*k + (0..3)   trick k: leader, winner, size, winning combination id

``table`` (shape (C, T_COLS)), one row per combination type, ids sorted by (class, strength)
so that the combinations that beat id j are exactly ids T_BEAT_START..T_BEAT_END-1 of row j:

    T_MASK       canonical mask of its tiles (lowest copies, see tiles.canonical)
    T_SIZE       number of tiles             T_CLASS     comparison class id (combos.CLASS_NAMES)
    T_STRENGTH   strength inside the class   T_STAKE     STAKE_NONE / STAKE_SUPREME / STAKE_QUARTET
    T_LAST_BONUS 1 if winning the last trick with it doubles the settlement
    T_MIN_TYPE   its highest-ranked tile type (the smallest type index)

``rules`` (int64), the rule switches as integers followed by the lead index:

    R_* scalars (below); then the lead index: R_LEAD_START (NUM_TYPES + 1 offsets), the C
    combination ids grouped by T_MIN_TYPE (from R_LEAD_IDS), and their canonical masks in the
    same order (from R_LEAD_IDS + lead_padded(C)). Both lists are padded to a multiple of
    LEAD_CHUNK entries with id 0 and mask NO_TILES, which no hand can make. With
    R_LEAD_BY_TYPE the leads of a hand are found by scanning only the groups of the types it
    holds (large tables such as same_suit_any); otherwise all masks are tested LEAD_CHUNK at a
    time in a fixed-length loop that compiles to vector instructions (classic: 61 masks).
"""
from .tiles import NUM_TYPES

MAX_SEATS = 4
MAX_TRICKS = 10  # a deck of at most 32 tiles dealt to at least 3 players

S_HAND, S_DEALT, S_DOWN, S_UP, S_COLS, S_BONUS, S_SETTLE, S_TABLE = 0, 4, 8, 12, 16, 20, 24, 28
(S_BANKER, S_STREAK, S_PHASE, S_TO_ACT, S_LEADER, S_SIZE, S_BEST, S_BEST_SEAT, S_ACTED, S_OWED,
 S_TRICK, S_DOOMED, S_BANKER_FIRST, S_WINNER, S_DECLARER, S_MULT_LAST, S_MULT_SHUT) = range(32, 49)
S_LOG = 50
S_LEN = S_LOG + 4 * MAX_TRICKS

PHASE_DECLARE, PHASE_LEAD, PHASE_FOLLOW, PHASE_OVER = 0, 1, 2, 3

T_MASK, T_SIZE, T_CLASS, T_STRENGTH, T_BEAT_START, T_BEAT_END, T_STAKE, T_LAST_BONUS, T_MIN_TYPE = range(9)
T_COLS = 9
STAKE_NONE, STAKE_SUPREME, STAKE_QUARTET = 0, 1, 2

(R_PLAYERS, R_HAND_SIZE, R_PAR, R_DECK, R_COMBOS, R_HEAVEN_LEADS, R_MUST_BEAT, R_EARLY_DEATH,
 R_ZERO_POINTS, R_PAY_OVER_PAR, R_HAND_BANKER, R_STREAK_FACTOR, R_STAKE_SUPREME, R_STAKE_QUARTET,
 R_LAST_BONUS, R_SHUTOUT_BONUS, R_BIG_SIX, R_RED_DOT, R_SINGLE_21, R_SINGLE_42, R_LEAD_BY_TYPE) = range(21)
R_LEAD_START = 21
R_LEAD_IDS = R_LEAD_START + NUM_TYPES + 1
LEAD_CHUNK = 64  # leads are tested this many at a time, into one int64 bit set
NO_TILES = 1 << 32  # the mask of a padding entry: a tile beyond the 32 of the deck


def lead_padded(num_combos: int) -> int:
    """Length of the padded id and mask lists of the lead index."""
    return -(-num_combos // LEAD_CHUNK) * LEAD_CHUNK


RED_DOT_OFF, RED_DOT_AUTO, RED_DOT_CHOICE = 0, 1, 2

# Action ids (the environments' Discrete space): 0..C-1 play combination j (lead or beat),
# C+t discard one tile of type t, then C+NUM_TYPES declare One Red Dot, C+NUM_TYPES+1 decline.
DECLARE_OFFSET = NUM_TYPES
DECLINE_OFFSET = NUM_TYPES + 1
