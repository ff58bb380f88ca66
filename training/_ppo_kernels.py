"""Compiled helpers of ``training/ppo.py``: fast opponent seats, per-seat credit assignment, GAE.

Credit assignment bookkeeping (per env i and absolute seat s), kept across rollouts:

    pending[i, s]   index (in the rollout's decision buffer) of seat s's last decision in env i's
                    current episode; NO_DECISION (-1) when s has not decided yet in this episode;
                    DROPPED (-2) when its last decision belongs to an earlier rollout (it is no
                    longer in the buffer, so the chips it earns are dropped with it)
    carry[i, s]     chips paid to s in this episode before its first decision (for instance a
                    hand decided at the deal): credited to that first decision

Each decision d of the buffer gets ``reward[d]`` = the chips paid to its seat from its own step
up to (not including) the seat's next decision, ``next_decision[d]`` = that next decision of the
same seat in the same env (-1 if none yet), and ``done[d]`` = the episode ended before it.
"""

from __future__ import annotations

from numba import njit

from tiengow_env import _kernels as K

NO_DECISION = -1
DROPPED = -2


@njit(cache=True)
def greedy_actions(states, rows, table, rules, scratch, out):
    """out[i] = the compiled greedy policy's action for env ``i`` of each ``rows`` entry."""
    for k in range(rows.shape[0]):
        i = rows[k]
        out[i] = K.greedy_action(states[i], table, rules, scratch)


@njit(cache=True)
def record_decisions(rows, seats, first, pending, carry, reward, next_decision, done):
    """Decisions ``first + k`` were just taken by seat ``seats[k]`` in env ``rows[k]``: link each to
    the seat's previous decision in that env and hand it the chips carried to its first decision."""
    for k in range(rows.shape[0]):
        i, s, d = rows[k], seats[k], first + k
        reward[d] = 0.0
        next_decision[d] = -1
        done[d] = False
        previous = pending[i, s]
        if previous >= 0:
            next_decision[previous] = d
        elif previous == NO_DECISION:
            reward[d] += carry[i, s]
        carry[i, s] = 0.0
        pending[i, s] = d


@njit(cache=True)
def assign_rewards(rewards, terminated, scale, pending, carry, reward, done):
    """After a step: each seat's chips go to its pending decision (the last one it took, whoever
    acted now); a finished episode closes every seat's chain (``done``) and resets the bookkeeping."""
    n_envs, players = rewards.shape
    for i in range(n_envs):
        for s in range(players):
            chips = rewards[i, s] * scale
            d = pending[i, s]
            if d >= 0:
                reward[d] += chips
            elif d == NO_DECISION:
                carry[i, s] += chips
            if terminated[i]:
                if d >= 0:
                    done[d] = True
                pending[i, s] = NO_DECISION
                carry[i, s] = 0.0


@njit(cache=True)
def per_seat_gae(reward, value, next_decision, done, count, gamma, lam, advantage, valid):
    """Generalised advantage estimation along each seat's own chain of decisions.

    delta_d = r_d + gamma * V(next_d) * (1 - done_d) - V(d);  A_d = delta_d + gamma * lam * A_next
    (Schulman et al. 2016, eq. 16). Decisions are stored in time order, so one backward pass
    sees every successor first. A decision whose chain was cut by the end of the rollout
    (neither a successor nor the episode's end) has no target: it only bootstraps its
    predecessor and is marked invalid (A = 0).
    """
    for d in range(count - 1, -1, -1):
        if done[d]:
            advantage[d] = reward[d] - value[d]
            valid[d] = True
        elif next_decision[d] >= 0:
            n = next_decision[d]
            advantage[d] = reward[d] + gamma * value[n] - value[d] + gamma * lam * advantage[n]
            valid[d] = True
        else:
            advantage[d] = 0.0
            valid[d] = False
