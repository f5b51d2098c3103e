"""The postings layout of the term store (:mod:`.store`): tokenized tools written into immutable
**segments**, postings sorted by term, then row, then field, and the gathered postings of a
query's terms.

Rows are positions in the store's grow-only row space; term ids index its grow-only vocabulary.
A segment is never changed once written: adding tools writes a new one, removing a tool marks its
row dead in the store (see :class:`~.store.TermStore`).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np

from ..models import ToolSpec
from .fields import FIELDS

#: Field index of each field name (the ``field`` column of the postings).
FIELD_INDEX: dict[str, int] = {name: k for k, name in enumerate(FIELDS)}
N_FIELDS = len(FIELDS)


@dataclass
class DocEntry:
    """One tokenized tool.

    Attributes:
        tool: the tool. server_description: the description it was indexed with.
        row: its row in the store's row space.
        fields: field → ``(term ids int32[n], counts float32[n], length)``, unique ids per field
            (shared between tools with the same field text: never modify them).
        name_words: ids (in :attr:`TermStore.surface_vocab`) of the name's lower-cased words.
        lengths: float64[len(FIELDS)] number of terms per field (BM25 length normalisation).
    """

    tool: ToolSpec
    server_description: str | None
    row: int
    fields: dict[str, tuple[np.ndarray, np.ndarray, float]]
    name_words: tuple[int, ...]
    lengths: np.ndarray

    def term_ids(self) -> np.ndarray:
        """Unique term ids over all fields (int64, sorted)."""
        return np.unique(np.concatenate([f[0] for f in self.fields.values()])).astype(np.int64)


@dataclass(frozen=True)
class Segment:
    """Immutable postings of some rows, sorted by (term, row, field).

    Attributes:
        indptr: int64[V_s + 1]: postings of term ``t`` are ``[indptr[t], indptr[t+1])`` (terms
            ≥ V_s, added to the vocabulary after the segment was written, have none).
        rows: int64[nnz] rows. field: int8[nnz] field index. tf: float32[nnz] counts.
        name_ptr / name_rows: the same layout for tool-name surface words (no field, no count).
        row_ids: int64[n] rows written into this segment.
        df: float64[V_s] in how many of this segment's rows each term occurs (any field).
    """

    indptr: np.ndarray
    rows: np.ndarray
    field: np.ndarray
    tf: np.ndarray
    name_ptr: np.ndarray
    name_rows: np.ndarray
    row_ids: np.ndarray
    df: np.ndarray

    @classmethod
    def build(cls, entries: list[DocEntry], n_terms: int, n_surfaces: int) -> Segment:
        """Write ``entries`` (any order) into one segment over a vocabulary of ``n_terms``."""
        n = len(entries)
        row_ids = np.fromiter((e.row for e in entries), dtype=np.int64, count=n)
        per_field = [e.fields[name] for e in entries for name in FIELDS]  # doc-major, field-minor
        sizes = np.fromiter((len(f[0]) for f in per_field), dtype=np.int64, count=len(per_field))
        ids = np.concatenate([f[0] for f in per_field]) if n else np.zeros(0, np.int32)
        tfs = np.concatenate([f[1] for f in per_field]) if n else np.zeros(0, np.float32)
        which = np.repeat(np.tile(np.arange(N_FIELDS, dtype=np.int8), n), sizes)
        rows = np.repeat(row_ids, sizes.reshape(n, N_FIELDS).sum(axis=1)) if n else np.zeros(0, np.int64)
        # stable: keeps (row, field) order within a term; uint16 keys get numpy's O(n) radix sort
        keys = ids.astype(np.uint16) if n_terms <= 65_536 else ids
        order = np.argsort(keys, kind="stable")
        indptr = _indptr(ids, n_terms)
        name_sizes = np.fromiter((len(e.name_words) for e in entries), dtype=np.int64, count=n)
        name_ids = np.fromiter(
            chain.from_iterable(e.name_words for e in entries), dtype=np.int64, count=int(name_sizes.sum())
        )
        name_rows = np.repeat(row_ids, name_sizes)
        name_order = np.argsort(name_ids, kind="stable")
        rows, sorted_ids = rows[order], ids[order]
        first = np.ones(len(rows), dtype=bool)  # first posting of each (term, row)
        first[1:] = (rows[1:] != rows[:-1]) | (sorted_ids[1:] != sorted_ids[:-1])
        df = np.bincount(sorted_ids[first], minlength=n_terms).astype(np.float64)
        return cls(
            indptr,
            rows,
            which[order],
            tfs[order],
            _indptr(name_ids, n_surfaces),
            name_rows[name_order],
            row_ids,
            df,
        )


def _indptr(ids: np.ndarray, width: int) -> np.ndarray:
    indptr = np.zeros(width + 1, dtype=np.int64)
    if len(ids):
        np.cumsum(np.bincount(ids, minlength=width), out=indptr[1:])
    return indptr


def gather(indptr: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the postings of ``ids`` in one segment, and which query term each is.

    Returns:
        ``(positions int64[m], query_pos int64[m])``, grouped by query term in ``ids`` order.
    """
    ids = np.asarray(ids, dtype=np.int64)
    qpos = np.flatnonzero(ids < len(indptr) - 1)
    if not len(qpos):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = indptr[ids[qpos]]
    lens = indptr[ids[qpos] + 1] - starts
    total = int(lens.sum())
    if not total:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    offsets = np.repeat(starts - (np.cumsum(lens) - lens), lens)
    return np.arange(total, dtype=np.int64) + offsets, np.repeat(qpos, lens)


@dataclass
class Postings:
    """Postings of some query terms over all segments (row space).

    Entries of one (query term, row) pair are adjacent, one per field the term occurs in.

    Attributes:
        rows: int64[m]. field: int8[m]. tf: float32[m]. qpos: int64[m] index into the query ids.
    """

    rows: np.ndarray
    field: np.ndarray
    tf: np.ndarray
    qpos: np.ndarray

    def pairs(self) -> np.ndarray:
        """Start index of each (query term, row) group (int64)."""
        if not len(self.rows):
            return np.zeros(0, np.int64)
        change = np.empty(len(self.rows), dtype=bool)
        change[0] = True
        change[1:] = (self.rows[1:] != self.rows[:-1]) | (self.qpos[1:] != self.qpos[:-1])
        return np.flatnonzero(change)


def field_weights(weights: dict[str, float]) -> np.ndarray:
    """float64[len(FIELDS)] from a field-name → weight dict (missing fields weigh 0)."""
    return np.asarray([float(weights.get(name, 0.0)) for name in FIELDS])
