"""Sequential probability ratio test on per-deal duplicate scores (``tiengow eval --sprt``).

Method: Wald's SPRT (A. Wald, *Sequential Tests of Statistical Hypotheses*, Ann. Math. Statist.
16(2), 1945) in the normal-approximation form of the generalised SPRT that Stockfish's fishtest
uses (M. Van den Bergh, *A generalized sequential probability ratio test*, 2021, the note behind
fishtest's ``LLR`` function). The per-deal scores x_1..x_n (chips per hand, or the deal-by-deal
difference of two candidates) are taken as normal with an unknown variance; the variance is
estimated from the deals so far, s^2 = (1/n) sum (x_i - mean)^2, and the log-likelihood ratio of
H1 (mean = d1) against H0 (mean = d0) is::

    LLR = n (d1 - d0) (2 mean - d0 - d1) / (2 s^2)

The test stops as soon as LLR >= log((1 - beta) / alpha) (H1 accepted: the mean is at least d1)
or LLR <= log(beta / (1 - alpha)) (H0 accepted: at most d0), looking after every deal once
``MIN_DEALS`` have been played (before that, s^2 is too noisy to trust). Wald's bounds keep the
error rates at about alpha (H1 accepted when the mean is d0) and beta (H0 accepted at d1);
``tests/test_sprt.py`` checks that on thousands of simulated tests.

A fixed-size one-sided z-test with the same error rates needs
``((z_{1-alpha} + z_{1-beta}) sd / (d1 - d0))^2`` deals (``fixed_deals``); the SPRT's average is
typically about half of that.

Pure functions over arrays: ``llr`` is vectorised, ``Sprt`` feeds scores in deal order and says
at which deal it stopped, ``simulate`` runs many tests at once on synthetic scores.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from statistics import NormalDist

import numpy as np

MIN_DEALS = 20  # no verdict before this many deals: the variance estimate needs them
VERDICTS = ("H1", "H0", "undecided")


@dataclass(frozen=True)
class Hypotheses:
    """What a sequential test decides between, in chips per hand."""

    d0: float
    """H0: the mean is at most d0"""
    d1: float
    """H1: the mean is at least d1 (> d0)"""
    alpha: float = 0.05
    """the chance of accepting H1 when the mean is d0"""
    beta: float = 0.05
    """the chance of accepting H0 when the mean is d1"""

    def __post_init__(self) -> None:
        for name in ("d0", "d1", "alpha", "beta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"sprt: {name} must be a finite number, got {value!r}")
        if not self.d0 < self.d1:
            raise ValueError(
                f"sprt: D0 must be below D1 (H0: mean <= D0, H1: mean >= D1), got D0={self.d0}, D1={self.d1}"
            )
        for name in ("alpha", "beta"):
            if not 0 < getattr(self, name) < 0.5:
                raise ValueError(f"sprt: {name} is an error rate above 0 and below 0.5, got {getattr(self, name)}")

    @property
    def bounds(self) -> tuple[float, float]:
        """Wald's (lower, upper) bounds on the LLR: below the lower H0 is accepted, above the upper H1."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)


def parse_hypotheses(text: str, alpha: float = 0.05, beta: float = 0.05) -> Hypotheses:
    """``D0,D1`` (as ``--sprt 0,1`` gives them) with the error rates: ValueError saying what was expected."""
    parts = text.split(",") if isinstance(text, str) else []
    try:
        d0, d1 = (float(p) for p in parts) if len(parts) == 2 else (None, None)
    except ValueError:
        d0 = d1 = None
    if d0 is None:
        raise ValueError(
            f"--sprt takes D0,D1, two numbers of chips per hand such as 0,0.5 (H0: mean <= D0, "
            f"H1: mean >= D1), got {str(text)[:40]!r}"
        )
    return Hypotheses(d0, d1, alpha, beta)


def llr(
    deals: np.ndarray | int, total: np.ndarray | float, total_sq: np.ndarray | float, hypotheses: Hypotheses
) -> np.ndarray:
    """The GSPRT log-likelihood ratio (module doc) from the number of deals and the sum and sum
    of squares of their scores (arrays broadcast). A zero variance gives +-inf (or 0 exactly
    between the hypotheses): the evidence is as strong as it gets."""
    deals = np.asarray(deals, dtype=np.float64)
    mean = np.asarray(total, dtype=np.float64) / deals
    variance = np.maximum(np.asarray(total_sq, dtype=np.float64) / deals - mean**2, 0.0)
    d0, d1 = hypotheses.d0, hypotheses.d1
    numerator = deals * (d1 - d0) * (2 * mean - d0 - d1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = numerator / (2 * variance)
        certain = np.where(numerator == 0, 0.0, np.sign(numerator) * np.inf)  # sign(0) * inf is nan
    return np.where(variance > 1e-12 * np.maximum(mean**2, 1.0), ratio, certain)


def fixed_deals(sd: float, hypotheses: Hypotheses) -> int:
    """Deals a fixed-size one-sided z-test needs for the same error rates (module doc)."""
    z = NormalDist().inv_cdf
    return math.ceil(((z(1 - hypotheses.alpha) + z(1 - hypotheses.beta)) * sd / (hypotheses.d1 - hypotheses.d0)) ** 2)


@dataclass
class SprtResult:
    """Where a sequential test stands: its verdict, the deals it used, the LLR and its bounds."""

    d0: float
    d1: float
    alpha: float
    beta: float
    verdict: str
    """H1, H0, or undecided (no bound crossed by the last deal)"""
    deals: int
    llr: float
    bounds: list[float]
    fixed_deals: int | None = None
    """deals a fixed-size test of the same power would need, at the standard deviation measured"""

    def to_dict(self) -> dict:
        return asdict(self)


class Sprt:
    """A sequential test fed per-deal scores in deal order (``feed``); it stops at the first
    deal, from ``MIN_DEALS`` on, whose LLR crosses a bound, and ignores any deal after that."""

    def __init__(self, hypotheses: Hypotheses, max_deals: int):
        if type(max_deals) is not int or max_deals < 1:
            raise ValueError(f"sprt: the most deals must be a positive integer, got {max_deals!r}")
        self.hypotheses, self.max_deals = hypotheses, max_deals
        self.deals, self.total, self.total_sq = 0, 0.0, 0.0
        self.verdict = "undecided"
        self.llr = 0.0

    @property
    def done(self) -> bool:
        return self.verdict != "undecided" or self.deals >= self.max_deals

    def feed(self, scores: np.ndarray) -> bool:
        """Take the next deals' scores (in deal order); True once the test has stopped."""
        for score in np.asarray(scores, dtype=np.float64):
            if self.done:
                break
            self.deals += 1
            self.total += float(score)
            self.total_sq += float(score) ** 2
            if self.deals < 2:
                continue
            self.llr = float(llr(self.deals, self.total, self.total_sq, self.hypotheses))
            lower, upper = self.hypotheses.bounds
            if self.deals >= MIN_DEALS and self.llr >= upper:
                self.verdict = "H1"
            elif self.deals >= MIN_DEALS and self.llr <= lower:
                self.verdict = "H0"
        return self.done

    def result(self) -> SprtResult:
        n = self.deals
        variance = (self.total_sq - self.total**2 / n) / (n - 1) if n > 1 else float("nan")
        sd = math.sqrt(max(variance, 0.0))
        h = self.hypotheses
        return SprtResult(
            d0=float(h.d0),
            d1=float(h.d1),
            alpha=float(h.alpha),
            beta=float(h.beta),
            verdict=self.verdict,
            deals=n,
            llr=self.llr,
            bounds=list(h.bounds),
            fixed_deals=fixed_deals(sd, h) if math.isfinite(sd) else None,
        )


def simulate(
    draw: Callable[[np.random.Generator, tuple[int, int]], np.ndarray],
    hypotheses: Hypotheses,
    trials: int,
    max_deals: int,
    seed: int = 0,
    block: int = 256,
) -> tuple[np.ndarray, np.ndarray]:
    """``trials`` sequential tests at once on scores ``draw(rng, (trials, block))`` (per deal,
    in blocks of deals), looking after every deal as ``Sprt`` does: (verdict per trial, 0 for
    H0, 1 for H1, -1 undecided; deals each used)."""
    rng = np.random.default_rng(seed)
    lower, upper = hypotheses.bounds
    verdict = np.full(trials, -1)
    used = np.full(trials, max_deals)
    total = np.zeros(trials)
    total_sq = np.zeros(trials)
    for first in range(0, max_deals, block):
        scores = draw(rng, (trials, min(block, max_deals - first)))
        sums = total[:, None] + np.cumsum(scores, axis=1)
        squares = total_sq[:, None] + np.cumsum(scores**2, axis=1)
        total, total_sq = sums[:, -1], squares[:, -1]
        deals = np.arange(first + 1, first + scores.shape[1] + 1)
        ratio = llr(deals[None, :], sums, squares, hypotheses)
        crossed = ((ratio >= upper) | (ratio <= lower)) & (deals >= MIN_DEALS)[None, :]
        open_ = verdict == -1
        hit = crossed.any(axis=1) & open_
        at = crossed.argmax(axis=1)
        verdict[hit] = (ratio[hit, at[hit]] >= upper).astype(int)
        used[hit] = deals[at[hit]]
        if (verdict != -1).all():
            break
    return verdict, used
