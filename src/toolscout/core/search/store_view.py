"""What a :class:`~.matrices.Matrices` view (and the scorers reading it, :mod:`.lexical`) reads of
the term store: a Protocol below both :mod:`.matrices` and :mod:`.store`, which
:class:`~.store.TermStore` satisfies, so the view never imports the store that builds it.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from .segments import DocEntry, Segment


class StoreView(Protocol):
    """The term store as a :class:`~.matrices.Matrices` view reads it (see
    :class:`~.store.TermStore` for what each attribute holds).

    Attributes:
        version: bumped on every change (views and scorer caches compare it).
        segments: the immutable postings segments. row_names: tool name per row (None: dead).
        alive: bool[n_rows] live rows. df: float64[V] document frequency (any field).
        terms: the vocabulary, by term id. lengths: float64[n_rows, N_FIELDS] field lengths.
        length_sums: float64[N_FIELDS] field lengths summed over live rows.
        field_docs: float64[N_FIELDS] live rows with at least one term in each field.
        docs: live tool name → its tokenized entry.
    """

    version: int
    segments: list[Segment]
    row_names: list[str | None]
    alive: np.ndarray
    df: np.ndarray
    terms: list[str]
    lengths: np.ndarray
    length_sums: np.ndarray
    field_docs: np.ndarray
    docs: dict[str, DocEntry]

    @property
    def n_rows(self) -> int:
        """Rows allocated so far (live and dead)."""
        ...

    def segment_pairs(
        self, seg: Segment, weights: np.ndarray, max_tf: float | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every (row, term) of ``seg`` with its field-weighted count, each field's count capped at
        ``max_tf`` (cached per segment)."""
        ...
