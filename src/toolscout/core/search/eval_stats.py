"""Per-query metrics and the latency/encoding records of :mod:`.evaluation` (definitions in
its module docstring; kept apart so the evaluation module stays one responsibility: running)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class LatencyReference:
    """The lexical profile timed on the same queries in the same run (interleaved).

    Attributes:
        profile: its name (``bm25f``). p50_ms / p99_ms: its per-query latency (ms).
        ratio: the evaluated profile's p50 divided by this p50.
    """

    profile: str
    p50_ms: float
    p99_ms: float
    ratio: float


@dataclass(frozen=True)
class EncodingStats:
    """Tool texts encoded while the index was built.

    Attributes:
        encoded: texts the encoder encoded. cached: tools whose vector came from the vector
        cache. seconds: the dense build time minus the lexical build time on the same tools
        (encoding dominates it); texts_per_s: ``encoded / seconds`` (0 when nothing was encoded).
    """

    encoded: int
    cached: int
    seconds: float

    @property
    def texts_per_s(self) -> float:
        """Encoding throughput (texts per second)."""
        return self.encoded / self.seconds if self.encoded and self.seconds > 0 else 0.0


def query_metrics(
    ranked: Sequence[str], relevant: Iterable[str], ks: Sequence[int]
) -> tuple[dict[int, float], float, float]:
    """``(recall by k, nDCG@10, reciprocal rank)`` of one ranking (definitions: module docstring)."""
    rel = set(relevant)
    if not rel:
        return {k: 0.0 for k in ks}, 0.0, 0.0
    recall = {k: len(rel & set(ranked[:k])) / len(rel) for k in ks}
    dcg = sum(1.0 / math.log2(r + 2) for r, name in enumerate(ranked[:10]) if name in rel)
    idcg = sum(1.0 / math.log2(r + 2) for r in range(min(len(rel), 10)))
    rr = next((1.0 / (r + 1) for r, name in enumerate(ranked) if name in rel), 0.0)
    return recall, dcg / idcg, rr


def percentile(values: Sequence[float], pct: float) -> float:
    """Linear-interpolated percentile (numpy's default method); 0.0 for no values."""
    if not values:
        return 0.0
    xs = sorted(values)
    pos = (len(xs) - 1) * pct / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
