"""Index layouts shared by the table builder (``combos.py``) and the kernels (``_kernels.py``).

The kernels read these constants as compile-time values; their on-disk cache is checked against
this file too (``_numba_cache.py``), so a changed constant compiles them afresh.

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
    S_LOG + LOG_STRIDE*k + LOG_*   trick k: LOG_LEADER, LOG_WINNER, LOG_SIZE, LOG_WINNING (the
                 winning combination id); written when the trick ends

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

``report`` (int64, length REPORT_LEN), what one decision did, written by ``_kernels.step`` when
it is given one (the playouts pass none and skip it):

    REP_STATUS   STEP_GOES_ON: the trick goes on (or the next One Red Dot holder decides);
                 STEP_TRICK_OVER: the decision ended a trick, and the next one has begun;
                 STEP_HAND_OVER: the hand is over (REP_SETTLE holds the settlement)
    REP_SEAT     the seat that decided        REP_KIND    KIND_* of its decision
    REP_TILES    the physical tiles it put on the table: the combination of a lead or a beat
                 (face up), or the one tile of a discard action (face down); 0 for a declaration
    REP_TRICK    the trick the decision belongs to (the tricks completed before it)
    REP_WINNER   winner of the trick the decision ended (-1 if it ended none); REP_WINNING its
                 winning combination id
    REP_FORCED+s tiles seat s then discarded by early death (RULES.md section 4), else 0
    REP_BONUS+s  trick-bonus chips seat s received in this step, < 0 when it paid (section 5)
    REP_SETTLE+s settlement chips of seat s when the step ended the hand (section 6), else 0

``history`` (int64, HISTORY_LEN), the tiles of each trick for the information state (filled by
``_kernels.record_tricks`` from the reports): the mask seat s put face up in trick k at
``HISTORY_STRIDE * k + 2 * s + H_UP``, face down at ``... + H_DOWN``; its last entry,
H_COUNT, counts the completed tricks.

``work`` (int64) of a ``Game``, everything but its state, in one array so that a step crosses
into compiled code once and a clone copies two arrays (``_kernels.game_step``):

    W_HISTORY    its trick ``history`` (HISTORY_LEN entries, above)
    W_LOG + W_ROW*r   the report of step r since the game last read its log (``Game.tricks``
                 reads it lazily), then W_ROW_LEADER and W_ROW_SIZE: the leader and the size of
                 the trick in play before that step; W_ROWS rows, one per decision a hand can
                 hold (every decision but a declaration puts down a tile of the NUM_TILES)
    W_SCRATCH    the legal action ids (``legal_len(C)`` entries)

``env_step`` (the AEC env's step) returns ENV_ILLEGAL (nothing changed), ENV_PLAYING,
ENV_NEXT_HAND (a hand ended and the match's next hand began) or ENV_EPISODE_OVER.

Scratch sizes: ``legal_actions`` writes at most one entry per action id, so its scratch holds
``legal_len(C)`` = C + EXTRA_ACTIONS entries; ``decisions`` (perft) lists up to
MAX_DISCARD_SETS discard multisets besides, ``decisions_len(C)``.
"""

from numba.extending import register_jitable

from .tiles import NUM_TILES, NUM_TYPES

MAX_SEATS = 4
MAX_TRICKS = 10  # a deck of at most 32 tiles dealt to at least 3 players

S_HAND, S_DEALT, S_DOWN, S_UP, S_COLS, S_BONUS, S_SETTLE, S_TABLE = 0, 4, 8, 12, 16, 20, 24, 28
(
    S_BANKER,
    S_STREAK,
    S_PHASE,
    S_TO_ACT,
    S_LEADER,
    S_SIZE,
    S_BEST,
    S_BEST_SEAT,
    S_ACTED,
    S_OWED,
    S_TRICK,
    S_DOOMED,
    S_BANKER_FIRST,
    S_WINNER,
    S_DECLARER,
    S_MULT_LAST,
    S_MULT_SHUT,
) = range(32, 49)
S_LOG = 50
LOG_LEADER, LOG_WINNER, LOG_SIZE, LOG_WINNING = range(4)
LOG_STRIDE = 4
S_LEN = S_LOG + LOG_STRIDE * MAX_TRICKS

PHASE_DECLARE, PHASE_LEAD, PHASE_FOLLOW, PHASE_OVER = 0, 1, 2, 3

T_MASK, T_SIZE, T_CLASS, T_STRENGTH, T_BEAT_START, T_BEAT_END, T_STAKE, T_LAST_BONUS, T_MIN_TYPE = range(9)
T_COLS = 9
STAKE_NONE, STAKE_SUPREME, STAKE_QUARTET = 0, 1, 2

(
    R_PLAYERS,
    R_HAND_SIZE,
    R_PAR,
    R_DECK,
    R_COMBOS,
    R_HEAVEN_LEADS,
    R_MUST_BEAT,
    R_EARLY_DEATH,
    R_ZERO_POINTS,
    R_PAY_OVER_PAR,
    R_HAND_BANKER,
    R_STREAK_FACTOR,
    R_STAKE_SUPREME,
    R_STAKE_QUARTET,
    R_LAST_BONUS,
    R_SHUTOUT_BONUS,
    R_BIG_SIX,
    R_RED_DOT,
    R_SINGLE_21,
    R_SINGLE_42,
    R_LEAD_BY_TYPE,
) = range(21)
R_LEAD_START = 21
R_LEAD_IDS = R_LEAD_START + NUM_TYPES + 1
LEAD_CHUNK = 64  # leads are tested this many at a time, into one int64 bit set
NO_TILES = 1 << 32  # the mask of a padding entry: a tile beyond the 32 of the deck


def lead_padded(num_combos: int) -> int:
    """Length of the padded id and mask lists of the lead index."""
    return -(-num_combos // LEAD_CHUNK) * LEAD_CHUNK


RED_DOT_OFF, RED_DOT_AUTO, RED_DOT_CHOICE = 0, 1, 2

REP_STATUS, REP_SEAT, REP_KIND, REP_TILES, REP_TRICK, REP_WINNER, REP_WINNING = range(7)
REP_FORCED = 7
REP_BONUS = REP_FORCED + MAX_SEATS
REP_SETTLE = REP_BONUS + MAX_SEATS
REPORT_LEN = REP_SETTLE + MAX_SEATS
STEP_GOES_ON, STEP_TRICK_OVER, STEP_HAND_OVER = range(3)
KIND_LEAD, KIND_BEAT, KIND_DISCARD, KIND_DECLARE, KIND_DECLINE = range(5)

H_UP, H_DOWN = 0, 1
HISTORY_STRIDE = 2 * MAX_SEATS  # one trick: an up and a down mask per seat
H_COUNT = HISTORY_STRIDE * MAX_TRICKS
HISTORY_LEN = H_COUNT + 1

W_HISTORY = 0
W_ROW_LEADER, W_ROW_SIZE = REPORT_LEN, REPORT_LEN + 1
W_ROW = REPORT_LEN + 2
W_ROWS = NUM_TILES + MAX_SEATS
W_LOG = W_HISTORY + HISTORY_LEN
W_SCRATCH = W_LOG + W_ROW * W_ROWS
GAME_ILLEGAL = -1  # game_step's answer to an action that is not legal now (nothing changed)

ENV_ILLEGAL, ENV_PLAYING, ENV_NEXT_HAND, ENV_EPISODE_OVER = -1, 0, 1, 2

# Action ids (the environments' Discrete space): 0..C-1 play combination j (lead or beat),
# C+t discard one tile of type t, then C+NUM_TYPES declare One Red Dot, C+NUM_TYPES+1 decline.
# The helpers below build and test them; being ``register_jitable``, they run in Python and
# compile into the kernels alike (their cost there is nil).
DECLARE_OFFSET = NUM_TYPES
DECLINE_OFFSET = NUM_TYPES + 1
EXTRA_ACTIONS = NUM_TYPES + 2  # action ids after the C combinations: a discard per type, declare, decline
MAX_DISCARD_SETS = 210  # distinct n-tile discards (n <= 4) from a hand of at most 10 tiles: C(10, 4)


@register_jitable
def discard_action(num_combos: int, tile_type: int) -> int:
    """Action id: put one tile of type ``tile_type`` face down."""
    return num_combos + tile_type


@register_jitable
def is_discard(action: int, num_combos: int) -> bool:
    """True for the action id of a face-down discard (of any type)."""
    return num_combos <= action < num_combos + NUM_TYPES


@register_jitable
def declare_action(num_combos: int) -> int:
    """Action id: declare One Red Dot."""
    return num_combos + DECLARE_OFFSET


@register_jitable
def decline_action(num_combos: int) -> int:
    """Action id: decline to declare One Red Dot."""
    return num_combos + DECLINE_OFFSET


@register_jitable
def hidden_discard(num_combos: int) -> int:
    """The id a search edge carries for another seat's face-down tile, whose type the observer
    does not see: the first id after every action, so no action has it."""
    return num_combos + EXTRA_ACTIONS


@register_jitable
def legal_len(num_combos: int) -> int:
    """Entries of a scratch for ``legal_actions``: one per action id."""
    return num_combos + EXTRA_ACTIONS


@register_jitable
def decisions_len(num_combos: int) -> int:
    """Entries of a scratch or decision list for ``decisions`` (perft): the actions, then
    every discard multiset."""
    return legal_len(num_combos) + MAX_DISCARD_SETS


def work_len(num_combos: int) -> int:
    """Entries of a ``Game``'s work array under a table of ``num_combos`` combinations."""
    return W_SCRATCH + legal_len(num_combos)
