"""A read-only view of the term store's live tools at one moment (:class:`Matrices`), which the
lexical scorers (:mod:`.lexical`) read: collection statistics, field lengths, and the postings of
a query's terms over every segment.
"""

from __future__ import annotations

import numpy as np

from .segments import FIELD_INDEX, N_FIELDS, Postings, gather
from .store_view import StoreView

#: Fields whose BM25F average length is taken over the tools that have the field: the search
#: hint, which few tools have (the built-ins, the default servers' tools), so that 9 hinted
#: tools among 1,000 are not each judged 100 times too long and their hints drowned (over the
#: built-ins and 19 real servers' 230 tools, 7 of 20 built-in queries then missed, 2 with it).
#: The other fields keep the all-tools average the research's weights were measured with:
#: Lucene's average for every field cost livemcpbench (default ranker) 0.6 nDCG@10 and 5 R@5.
OWN_AVERAGE_FIELDS: tuple[str, ...] = ("hint",)
_OWN = np.zeros(N_FIELDS, dtype=bool)
_OWN[[FIELD_INDEX[f] for f in OWN_AVERAGE_FIELDS]] = True


class Matrices:
    """A read-only view of the live tools at one moment (a new view after any change).

    Score vectors are computed over the row space (:attr:`n_rows`) and turned into live order
    (:attr:`names` order, length :attr:`n_docs`) with :meth:`live`.

    Attributes:
        names: live tool names in row order. df: float64[V] document frequency (any field).
        lengths: float64[n_rows, len(FIELDS)] field lengths per row (dead rows included).
        avg_lengths: float64[len(FIELDS)] average field length over the live rows; for the
            fields of :data:`OWN_AVERAGE_FIELDS` over the live rows that have the field (Lucene's
            ``sumTotalTermFreq / docCount``, 0 when no tool has it).
        live_rows: int64[n_docs] rows of the live tools, or None when every row is live.
        version: store version this view was taken at (for caches).
    """

    def __init__(self, store: StoreView) -> None:
        self.store = store
        self.version = store.version
        self.segments = tuple(store.segments)
        self.n_rows = store.n_rows
        alive = store.alive[: self.n_rows]
        self.live_rows: np.ndarray | None = None if alive.all() else np.flatnonzero(alive)
        row_names = store.row_names
        if self.live_rows is None:
            self.names: list[str] = list(row_names[: self.n_rows])  # type: ignore[arg-type]
        else:
            self.names = [row_names[r] for r in self.live_rows.tolist()]  # type: ignore[misc]
        self.df = store.df[: len(store.terms)]
        self.lengths = store.lengths[: self.n_rows]
        n = len(self.names)
        docs = np.where(_OWN, store.field_docs, float(n))
        self.avg_lengths = np.where(docs > 0, store.length_sums / np.maximum(docs, 1), 0.0)
        self._name_rank: np.ndarray | None = None
        self._positions: dict[str, int] | None = None

    @property
    def n_docs(self) -> int:
        """Number of live documents."""
        return len(self.names)

    def live(self, row_scores: np.ndarray) -> np.ndarray:
        """A row-space vector (or row-major matrix) in live order."""
        return row_scores if self.live_rows is None else row_scores[self.live_rows]

    @property
    def name_rank(self) -> np.ndarray:
        """int64[n_docs] position of each live name in sorted order (tie-break)."""
        if self._name_rank is None:
            order = sorted(range(self.n_docs), key=self.names.__getitem__)
            rank = np.empty(self.n_docs, dtype=np.int64)
            rank[order] = np.arange(self.n_docs)
            self._name_rank = rank
        return self._name_rank

    def position(self, name: str) -> int | None:
        """Live index of tool ``name`` (None when not live)."""
        if self._positions is None:
            self._positions = {n: i for i, n in enumerate(self.names)}
        return self._positions.get(name)

    def postings(self, ids: np.ndarray) -> Postings:
        """Postings of vocabulary ids ``ids`` (int array; query position = index in ``ids``)."""
        parts = []
        for seg in self.segments:
            pos, qpos = gather(seg.indptr, ids)
            if len(pos):
                parts.append((seg.rows[pos], seg.field[pos], seg.tf[pos], qpos))
        if not parts:
            e = np.zeros(0, np.int64)
            return Postings(e, np.zeros(0, np.int8), np.zeros(0, np.float32), e)
        if len(parts) == 1:
            return Postings(*parts[0])
        return Postings(*(np.concatenate(col) for col in zip(*parts, strict=True)))

    def name_word_rows(self, surface_id: int) -> np.ndarray:
        """Rows whose tool name has the surface word ``surface_id`` (int64)."""
        out = []
        for seg in self.segments:
            if 0 <= surface_id < len(seg.name_ptr) - 1:
                out.append(seg.name_rows[seg.name_ptr[surface_id] : seg.name_ptr[surface_id + 1]])
        return np.concatenate(out) if out else np.zeros(0, np.int64)

    def field_pairs(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every (row, term) of the live rows with its field-weighted count ``Σ_f w_f · tf``.

        Args:
            weights: float64[len(FIELDS)] per-field weights.

        Returns:
            ``(rows int64, terms int64, counts float64)``; pairs with weighted count 0 are left out.
            Per-segment parts are cached on the store, so only new segments cost anything.
        """
        parts = [self.store.segment_pairs(seg, weights) for seg in self.segments]
        rows = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
        terms = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
        counts = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0, np.float64)
        if self.live_rows is not None and len(rows):
            keep = self.store.alive[rows]
            rows, terms, counts = rows[keep], terms[keep], counts[keep]
        return rows, terms, counts
