"""The usage prior: a small lift for the tools the person actually ran in this project.

Counts come from the project's transcripts (:func:`~.usage_history.project_usage`, decayed by
age) plus the calls of the running session (:meth:`UsagePrior.record`). A tool's *share* is
``log1p(count) / log1p(max count)`` in [0, 1], so the most used tool has 1 and a tool run once
next to one run 100 times has ~0.15. With ``λ = weight × gate`` the score becomes a mixture

``score = (1 − λ) × fused + λ × share``  (the ``λ × share`` part only for tools with fused > 0)

``gate`` is the query's confidence (:mod:`.profiles`), so a query that matches nothing well
lifts nothing and no tool the query does not match is surfaced; the total stays in [0, 1]. With
weight 0.1 a used tool overtakes an unused one when its fused score is within ~10% of it. The component is reported as ``usage`` in
``ScoredTool.components`` (``--explain``, the live-scoring panel) and ``raw["usage"]`` is the
share. It never lifts a tool past an exact-name match: those rank first regardless of score
(:meth:`~.index.ToolIndex.ranked`). ``toolSearch.usagePrior`` is the weight (0 turns it off);
the replay measurement is in ``docs/performance.md`` ("Usage prior").
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable

import numpy as np

from .matrices import Matrices
from .store import TermStore

log = logging.getLogger(__name__)

#: Default weight (setting ``toolSearch.usagePrior``).
DEFAULT_WEIGHT = 0.1


class UsagePrior:
    """Decayed successful-call counts per tool, loaded lazily, and the ranking component.

    Args:
        weight_of: returns the weight now (read at every query, so a settings change applies
            to the next search); default :data:`DEFAULT_WEIGHT`.
        loader: returns tool name → count (called once, on the first query that needs it, in
            that query's thread); None: only :meth:`record` counts.
    """

    def __init__(
        self,
        weight_of: Callable[[], float] | None = None,
        loader: Callable[[], dict[str, float]] | None = None,
    ) -> None:
        self._weight_of = weight_of or (lambda: DEFAULT_WEIGHT)
        self._loader = loader
        self._counts: dict[str, float] = {}
        self._loaded = loader is None
        self._lock = threading.Lock()

    @property
    def weight(self) -> float:
        """The weight in force (0 when the setting turns the prior off or is not a number)."""
        try:
            return max(0.0, float(self._weight_of()))
        except (TypeError, ValueError):
            return 0.0

    @property
    def active(self) -> bool:
        """True when the prior is on and has counts (never loads them: cheap for a UI thread)."""
        with self._lock:
            return self._loaded and any(c > 0 for c in self._counts.values()) and self.weight > 0

    def attach(self, loader: Callable[[], dict[str, float]]) -> None:
        """Read counts with ``loader`` (the next query loads them; counts recorded so far stay)."""
        with self._lock:
            self._loader, self._loaded = loader, False

    def record(self, name: str, count: float = 1.0) -> None:
        """One more successful call of ``name`` (the running session's)."""
        with self._lock:
            self._counts[name] = self._counts.get(name, 0.0) + count

    def counts(self) -> dict[str, float]:
        """Tool name → count (loads the transcripts' counts on first use; never raises)."""
        with self._lock:
            if not self._loaded:
                self._loaded = True
                try:
                    loaded = self._loader() if self._loader is not None else {}
                except Exception:  # a broken history must never break a search
                    log.warning("usage prior: reading the transcripts failed", exc_info=True)
                    loaded = {}
                for name, n in loaded.items():
                    self._counts[name] = self._counts.get(name, 0.0) + float(n)
            return dict(self._counts)

    def shares(self, store: TermStore, m: Matrices) -> np.ndarray | None:
        """float64[N] share of each live tool (live order of ``m``), or None when the prior is
        off or no indexed tool was used."""
        if self.weight <= 0:
            return None
        counts = {n: c for n, c in self.counts().items() if c > 0 and n in store.docs}
        if not counts:
            return None
        top = math.log1p(max(counts.values()))
        rows = np.zeros(m.n_rows)
        for name, c in counts.items():
            row = store.docs[name].row
            if row < m.n_rows:
                rows[row] = math.log1p(c) / top
        return np.asarray(m.live(rows), dtype=np.float64)

    def mix(
        self, comps: dict[str, np.ndarray], shares: np.ndarray, total: np.ndarray, gate: float
    ) -> dict[str, np.ndarray]:
        """``comps`` (weighted components, float64[N] each) scaled by ``1 − λ``, plus ``usage`` =
        ``λ × share`` for the tools with ``total > 0``, where ``λ = weight × gate``."""
        lam = self.weight * max(0.0, min(1.0, gate))
        out = {k: v * (1.0 - lam) for k, v in comps.items()}
        out["usage"] = np.asarray(np.where(total > 1e-12, lam * shares, 0.0))
        return out
