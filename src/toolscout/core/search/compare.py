"""Paired comparison of two ranking profiles on the same queries (``toolscout eval --compare``).

A change of ranker is adopted only when it beats the current one on every query set with an
interval that says so; on 67 queries one query moves a mean by 1.5 points, so a difference of
means alone says little. The interval is the paired bootstrap over queries (Efron & Tibshirani,
*An Introduction to the Bootstrap*, 1993, ch. 16; as used for IR significance by Sakai, SIGIR
2006): resample the queries with replacement, take the mean of the per-query differences
(profile − baseline) in each resample, report the 2.5th and 97.5th percentiles. The seed is
fixed, so the same rankings always print the same interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np


class _Outcome(Protocol):
    @property
    def query(self) -> object: ...
    @property
    def recall(self) -> dict[int, float]: ...
    @property
    def ndcg(self) -> float: ...
    @property
    def rr(self) -> float: ...


class Report(Protocol):
    """What :func:`compare_reports` reads of an :class:`~.evaluation.EvalReport` (a protocol, so
    this module does not import the evaluation module that calls it)."""

    @property
    def ks(self) -> tuple[int, ...]: ...
    @property
    def outcomes(self) -> Sequence[_Outcome]: ...


#: Bootstrap resamples (2,000 as in ``shared/research/retrieval-ceiling.md``).
RESAMPLES = 2_000
SEED = 0


@dataclass(frozen=True)
class Gain:
    """Mean per-query difference of one metric (points, i.e. ×100) with its 95% interval."""

    metric: str
    mean: float
    low: float
    high: float

    @property
    def verdict(self) -> str:
        """``better`` / ``worse`` when the interval excludes 0, else ``tie``."""
        if self.low > 0:
            return "better"
        if self.high < 0:
            return "worse"
        return "tie"

    def to_json(self) -> dict[str, Any]:
        """``{"mean", "low", "high", "verdict"}`` (points, 3 decimals)."""
        return {
            "mean": round(self.mean, 3),
            "low": round(self.low, 3),
            "high": round(self.high, 3),
            "verdict": self.verdict,
        }


def paired_bootstrap(
    a: Sequence[float], b: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED
) -> tuple[float, float, float]:
    """``(mean, low, high)`` of ``a - b`` over paired items with a 95% percentile interval.

    Args:
        a, b: per-query values of the same queries in the same order (equal lengths).

    Raises:
        ValueError: the lengths differ.
    """
    if len(a) != len(b):
        raise ValueError(f"paired bootstrap needs equal lengths (got {len(a)} and {len(b)})")
    x = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if not len(x):
        return 0.0, 0.0, 0.0
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    for i in range(resamples):
        means[i] = x[rng.integers(0, len(x), len(x))].mean()
    return float(x.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def compare_reports(new: Report, old: Report) -> list[Gain]:
    """Gains of ``new`` over ``old`` (same queries, same order) for every R@k, nDCG@10 and MRR.

    Raises:
        ValueError: the reports are over different queries.
    """
    if [o.query for o in new.outcomes] != [o.query for o in old.outcomes]:
        raise ValueError("the two reports rank different queries")
    gains = []
    for k in new.ks:
        if k in old.ks:
            m, lo, hi = paired_bootstrap([o.recall[k] for o in new.outcomes], [o.recall[k] for o in old.outcomes])
            gains.append(Gain(f"R@{k}", 100 * m, 100 * lo, 100 * hi))
    m, lo, hi = paired_bootstrap([o.ndcg for o in new.outcomes], [o.ndcg for o in old.outcomes])
    gains.append(Gain("nDCG@10", 100 * m, 100 * lo, 100 * hi))
    m, lo, hi = paired_bootstrap([o.rr for o in new.outcomes], [o.rr for o in old.outcomes])
    gains.append(Gain("MRR", 100 * m, 100 * lo, 100 * hi))
    return gains


def gains_text(gains: Sequence[Gain], new: str, old: str) -> str:
    """One line per metric: ``R@5  +1.2 [-0.4, +2.9]  tie`` under a header naming both profiles."""
    lines = [f"{new} − {old} (points, paired bootstrap 95% interval over queries):"]
    lines += [f"  {g.metric:<8} {g.mean:+.1f} [{g.low:+.1f}, {g.high:+.1f}]  {g.verdict}" for g in gains]
    return "\n".join(lines)
