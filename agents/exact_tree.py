"""The exact game tree of a small rule set: the index of a tabular (exact) CFR policy.

The game (the ``micro`` preset, or any custom deck small enough to walk): one hand, the banker
fixed (seat 0 by default, as ``tiengow tree``), chance is the uniformly random deal. A deal is
the tuple of the seats' hands as multisets of tile types; with duplicate tiles (micro holds two
6-6) distinct deals are not equally likely, so each one is weighted by the number of physical
deals that give it:  w(deal) = prod_t copies_t! / prod_{seat, t} count_{seat, t}!  (both 6-6
in one hand: 1; split between two hands: 2). Utilities are the chips of ``Game.result()["net"]``.
Actions are the environments' action ids (a discard of n tiles is n single-tile decisions) and
information sets are those of ``tiengow_env/tree.py``.

The tree is built once into flat arrays (``GameTree``) by one compiled walk
(``_cfr_play_kernels.build_tree``). Tables are indexed by integer information-set ids and,
inside a set, by *slots*: slot ``info_offset[I] + k`` is the k-th legal action of I. A tabular
policy is one probability per slot; the trainers (``training/cfr_tabular.py``, ``mccfr.py``)
compute it on this tree, and the ``cfr`` agent plays it by finding, at each decision, the
information set whose nodes show the acting seat what it sees now (``view_hash``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from tiengow_env.combos import table_for
from tiengow_env.layout import MAX_SEATS
from tiengow_env.rules import RuleSet
from tiengow_env.tiles import NUM_TYPES, TYPE_BITS
from tiengow_env.tree import deal_weights

from . import _cfr_play_kernels as CK

MAX_TREE_NODES = 20_000_000  # about 1.5 GB of arrays: refuse anything larger


@dataclass
class GameTree:
    """The flat game tree of a small rule set (layout in ``_cfr_play_kernels``, section "the exact tree")."""

    rules: RuleSet
    banker: int
    deals: list[tuple[tuple[int, ...], ...]]  # per root: the seats' hands as sorted tile types
    root_weight: np.ndarray  # (D,) chance probability of each deal (sums to 1)
    player: np.ndarray  # (N,) seat to act, -1 at a terminal
    infoset: np.ndarray  # (N,) information-set id, -1 at a terminal
    first_child: np.ndarray  # (N,)
    num_children: np.ndarray  # (N,)
    depth: np.ndarray  # (N,) decisions since the deal
    utility: np.ndarray  # (N, P) terminal chips per seat
    info_player: np.ndarray  # (I,) seat of each information set
    info_offset: np.ndarray  # (I,) first slot
    info_size: np.ndarray  # (I,) legal actions
    info_key: np.ndarray  # (I,) (sequence id, seat, dealt hand) packed, see build_tree
    slot_action: np.ndarray  # (S,) action id of each slot
    level_nodes: np.ndarray  # nodes sorted by depth
    level_start: np.ndarray  # level_nodes[level_start[d]:level_start[d+1]] are at depth d
    view_hash: np.ndarray | None = None  # (N,) what the acting seat sees (build_tree(views=True)), 0 at terminals

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def num_nodes(self) -> int:
        return int(self.player.shape[0])

    @property
    def num_infosets(self) -> int:
        return int(self.info_player.shape[0])

    @property
    def num_slots(self) -> int:
        return int(self.slot_action.shape[0])

    def fingerprint(self) -> str:
        """A short digest of the information sets and their actions: a policy file records it, so
        that it is only ever read against the tree it was computed on."""
        digest = hashlib.sha256()
        for array in (self.info_player, self.info_size, self.info_key, self.slot_action):
            digest.update(np.ascontiguousarray(array, dtype=np.int64).tobytes())
        return digest.hexdigest()[:16]

    def arrays(self) -> CK.TreeArrays:
        """The arrays the CFR kernels read, in one named tuple (no copies)."""
        return CK.TreeArrays(
            self.root_weight,
            self.player,
            self.infoset,
            self.first_child,
            self.num_children,
            self.utility,
            self.info_player,
            self.info_offset,
            self.info_size,
            self.level_nodes,
            self.level_start,
        )

    def uniform_policy(self) -> np.ndarray:
        """Per slot, 1 / (legal actions of its information set)."""
        return np.repeat(1.0 / self.info_size, self.info_size)


def _hand_masks(deal: tuple[tuple[int, ...], ...]) -> np.ndarray:
    """Physical masks of a deal: the copies of a type go to the seats in seat order."""
    used = [0] * NUM_TYPES
    masks = np.zeros(MAX_SEATS, dtype=np.int64)
    for seat, hand in enumerate(deal):
        for t in hand:
            masks[seat] |= 1 << int(TYPE_BITS[t, used[t]])
            used[t] += 1
    return masks


def build_tree(
    rules: object = "micro",
    banker: int = 0,
    deals: list[tuple[tuple[tuple[int, ...], ...], float]] | None = None,
    views: bool = False,
) -> GameTree:
    """Walk every deal of ``rules`` (or the given ``(deal, weight)`` list) into a ``GameTree``;
    with ``views``, also the ``view_hash`` of every decision node (for play).

    ValueError when the rule set is too large to walk, or (a bug) when perfect recall fails.
    """
    rules = RuleSet.from_spec(rules)
    if not isinstance(banker, int) or not 0 <= banker < rules.players:
        raise ValueError(f"banker must be a seat 0..{rules.players - 1}, got {banker!r}")
    if deals is None:
        if rules.hand_size > 4:
            raise ValueError(
                f"{rules.name} has hands of {rules.hand_size} tiles: its tree is too large for exact "
                "CFR; use a small preset such as micro, or the abstraction (tiengow train cfr)"
            )
        deals = deal_weights(rules)
    if not deals:
        raise ValueError("build_tree needs at least one deal")
    combos = table_for(rules)
    hands = np.stack([_hand_masks(deal) for deal, _ in deals])
    weights = np.array([float(w) for _, w in deals])
    if (weights <= 0).any():
        raise ValueError("deal weights must be positive")
    N = int(CK.count_tree_nodes(hands, banker, combos.table, combos.rules_array))
    if N > MAX_TREE_NODES:
        raise ValueError(f"{rules.name}: the tree has {N:,} nodes, more than the {MAX_TREE_NODES:,} exact CFR allows")
    P = rules.players
    player, infoset, first_child, num_children, depth = (np.zeros(N, dtype=np.int64) for _ in range(5))
    utility = np.zeros((N, P), dtype=np.float64)
    info_player, info_offset, info_size, info_depth, info_key = (np.zeros(N, dtype=np.int64) for _ in range(5))
    slot_action = np.zeros(N, dtype=np.int64)
    view_hash = np.zeros(N if views else 0, dtype=np.int64)
    n, num_info, num_slots, error = CK.build_tree(
        hands,
        banker,
        combos.table,
        combos.rules_array,
        combos.num_actions,
        rules.discards_face_up,
        N,
        CK.TreeBuild(
            player,
            infoset,
            first_child,
            num_children,
            depth,
            utility,
            info_player,
            info_offset,
            info_size,
            info_depth,
            info_key,
            slot_action,
            view_hash,
        ),
    )
    if error:
        raise ValueError(f"{rules.name}: the information sets break perfect recall (build_tree error {error})")
    order = np.argsort(depth, kind="stable")
    level_start = np.searchsorted(depth[order], np.arange(int(depth.max()) + 2))
    return GameTree(
        rules=rules,
        banker=banker,
        deals=[deal for deal, _ in deals],
        root_weight=weights / weights.sum(),
        player=player,
        infoset=infoset,
        first_child=first_child,
        num_children=num_children,
        depth=depth,
        utility=utility,
        info_player=info_player[:num_info].copy(),
        info_offset=info_offset[:num_info].copy(),
        info_size=info_size[:num_info].copy(),
        info_key=info_key[:num_info].copy(),
        slot_action=slot_action[:num_slots].copy(),
        level_nodes=order.astype(np.int64),
        level_start=level_start.astype(np.int64),
        view_hash=view_hash if views else None,
    )


def check_policy(tree: GameTree, policy: np.ndarray) -> np.ndarray:
    """``policy`` as float64 slots; ValueError unless each information set's row is a distribution."""
    policy = np.asarray(policy, dtype=np.float64)
    if policy.shape != (tree.num_slots,):
        raise ValueError(
            f"a policy for this tree has {tree.num_slots} slots (one per legal action of each "
            f"information set), got shape {policy.shape}"
        )
    if not np.isfinite(policy).all() or (policy < -1e-12).any():
        raise ValueError("policy probabilities must be finite and non-negative")
    sums = np.add.reduceat(policy, tree.info_offset)
    bad = np.flatnonzero(np.abs(sums - 1.0) > 1e-6)
    if len(bad):
        raise ValueError(f"information set {bad[0]}: probabilities sum to {sums[bad[0]]:.6f}, expected 1")
    return policy


__all__ = ["GameTree", "build_tree", "deal_weights", "check_policy", "MAX_TREE_NODES"]
