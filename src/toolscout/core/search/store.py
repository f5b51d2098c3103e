"""Incremental term store: tokenized tools in immutable postings segments, Lucene style.

Each tool is tokenized once into per-field ``(term id, count)`` pairs and given a *row* (a
position in a grow-only row space). Rows are written into immutable **segments**: postings
sorted by term, then row, then field. Adding tools writes one small new segment on the next
query; removing a tool only marks its row dead. Collection statistics that scores depend on
(document frequency, average field length, live document count) are kept as running totals,
so nothing is rebuilt when a 50-tool server connects to a 10,000-tool index. When dead rows
or segments pile up, everything is rewritten into one segment (amortised, like a merge).

The vocabulary only grows (ids of terms whose tools were removed stay allocated; their
document frequency drops to 0), so stored ids never need renumbering.

Scorers (:mod:`.lexical`) read a :class:`~.matrices.Matrices` view: the live rows at one moment,
plus :meth:`~.matrices.Matrices.postings` to fetch the postings of a query's terms. The segment
layout is in :mod:`.segments`.
"""

from __future__ import annotations

import contextlib
import functools
import gc
from collections import Counter
from collections.abc import Iterable, Iterator

import numpy as np

from ..models import ToolSpec
from .fields import FIELDS, tool_fields
from .matrices import Matrices
from .segments import N_FIELDS, DocEntry, Segment
from .tokenize import analyze, is_cjk_term, words

#: Rewrite everything into one segment beyond this many segments ...
MAX_SEGMENTS = 12
#: ... or when this share of the rows is dead (and there are at least MIN_DEAD_TO_MERGE).
MAX_DEAD_SHARE = 0.5
MIN_DEAD_TO_MERGE = 64
#: Distinct field texts whose term ids are remembered (server and parameter descriptions repeat).
FIELD_MEMO = 65_536


class TermStore:
    """Tokenized tools keyed by ``tool.name``, with a grow-only vocabulary and row space.

    Args:
        server_descriptions: server name → description, indexed in the ``server_description`` field.
    """

    def __init__(self, server_descriptions: dict[str, str] | None = None) -> None:
        self.vocab: dict[str, int] = {}
        self.terms: list[str] = []
        self.cjk: list[bool] = []
        self.surface_vocab: dict[str, int] = {}
        self.docs: dict[str, DocEntry] = {}
        self.server_descriptions = dict(server_descriptions or {})
        #: How many tools were tokenized over the store's life (tests check incrementality).
        self.tokenized = 0
        #: Bumped on every change; views and scorer caches compare it.
        self.version = 0
        self.segments: list[Segment] = []
        self.row_names: list[str | None] = []
        self.alive = np.zeros(0, dtype=bool)
        self.lengths = np.zeros((0, N_FIELDS))
        self.length_sums = np.zeros(N_FIELDS)
        #: live tools with at least one term in each field (the BM25F average length's divisor)
        self.field_docs = np.zeros(N_FIELDS)
        self.df = np.zeros(0)
        #: Bumped on every rewrite: row numbers changed (holders of row-space data rebuild).
        self.generation = 0
        #: row → entry added since the last flush (not in any segment yet)
        self._pending: dict[int, DocEntry] = {}
        self._field_memo: dict[str, tuple[np.ndarray, np.ndarray, float]] = {}
        self._pair_cache: dict[tuple[int, bytes], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._view: Matrices | None = None

    def __len__(self) -> int:
        return len(self.docs)

    @property
    def n_rows(self) -> int:
        """Rows allocated so far (live and dead)."""
        return len(self.row_names)

    # -- vocabulary ---------------------------------------------------------------------------
    def _term_id(self, term: str) -> int:
        tid = self.vocab.get(term)
        if tid is None:
            tid = self.vocab[term] = len(self.terms)
            self.terms.append(term)
            self.cjk.append(is_cjk_term(term))
        return tid

    def _surface_id(self, word: str) -> int:
        sid = self.surface_vocab.get(word)
        if sid is None:
            sid = self.surface_vocab[word] = len(self.surface_vocab)
        return sid

    # -- changes ------------------------------------------------------------------------------
    def add(self, tools: Iterable[ToolSpec]) -> list[str]:
        """Tokenize and store ``tools``; a tool whose name is present is replaced.

        Returns:
            Names added or replaced, in the given order (unchanged tools are skipped).
        """
        done: list[str] = []
        with no_gc():  # a bulk add allocates ~100 acyclic objects per tool: skip the GC passes
            for tool in tools:
                self._add_one(tool, done)
        if done:
            self._changed()
        return list(dict.fromkeys(done))  # a name given twice in one batch: the later tool won

    def _add_one(self, tool: ToolSpec, done: list[str]) -> None:
        desc = self.server_descriptions.get(tool.server or "")
        old = self.docs.get(tool.name)
        if old is not None and old.tool == tool and old.server_description == desc:
            return
        if old is not None:
            self._kill(old)
        entry = self._entry(tool, desc, self.n_rows)
        self.row_names.append(tool.name)
        self._grow_rows()
        self.alive[entry.row] = True
        self.lengths[entry.row] = entry.lengths
        self.length_sums += entry.lengths
        self.field_docs += entry.lengths > 0
        self.docs[tool.name] = entry
        self._pending[entry.row] = entry
        self.tokenized += 1
        done.append(tool.name)

    def remove(self, names: Iterable[str]) -> list[str]:
        """Drop tools by exact name; unknown names are ignored. Returns the names removed."""
        gone = []
        for name in names:
            entry = self.docs.pop(name, None)
            if entry is not None:
                self._kill(entry)
                gone.append(name)
        if gone:
            self._changed()
        return gone

    def _kill(self, entry: DocEntry) -> None:
        self.docs.pop(entry.tool.name, None)
        if self._pending.pop(entry.row, None) is None:  # already in a segment: counted in df
            self.df[entry.term_ids()] -= 1
        self.alive[entry.row] = False
        self.row_names[entry.row] = None
        self.length_sums -= entry.lengths
        self.field_docs -= entry.lengths > 0

    def _changed(self) -> None:
        self.version += 1
        self._view = None

    def _grow_rows(self) -> None:
        n = self.n_rows
        if len(self.alive) < n:
            cap = max(n, 2 * len(self.alive), 64)
            alive = np.zeros(cap, dtype=bool)
            alive[: len(self.alive)] = self.alive
            lengths = np.zeros((cap, N_FIELDS))
            lengths[: len(self.lengths)] = self.lengths
            self.alive, self.lengths = alive, lengths

    def _entry(self, tool: ToolSpec, server_description: str | None, row: int) -> DocEntry:
        texts = tool_fields(tool, server_description)
        fields = {name: self._field_ids(texts[name]) for name in FIELDS}
        lengths = np.asarray([fields[name][2] for name in FIELDS], dtype=np.float64)
        name_ids = tuple(sorted({self._surface_id(w) for w in words(tool.name)}))
        return DocEntry(tool, server_description, row, fields, name_ids, lengths)

    def _field_ids(self, text: str) -> tuple[np.ndarray, np.ndarray, float]:
        hit = self._field_memo.get(text)
        if hit is not None:
            return hit
        terms, counts = _field_terms(text)
        out = (np.fromiter(map(self._term_id, terms), dtype=np.int32, count=len(terms)), counts, float(counts.sum()))
        if len(self._field_memo) >= FIELD_MEMO:
            self._field_memo.clear()
        self._field_memo[text] = out
        return out

    # -- views --------------------------------------------------------------------------------
    def matrices(self) -> Matrices:
        """The view of the live tools, writing pending tools into a new segment first."""
        if self._view is None:
            with no_gc():
                self._flush()
                self._view = Matrices(self)
        return self._view

    def _flush(self) -> None:
        dead = self.n_rows - len(self.docs)
        if len(self.segments) >= MAX_SEGMENTS or (dead >= MIN_DEAD_TO_MERGE and dead > MAX_DEAD_SHARE * self.n_rows):
            self._rewrite()
            return
        self._grow_df()
        if not self._pending:
            return
        pending, self._pending = list(self._pending.values()), {}
        seg = Segment.build(pending, len(self.terms), len(self.surface_vocab))
        self.df[: len(seg.df)] += seg.df
        self.segments.append(seg)

    def _rewrite(self) -> None:
        """Renumber live tools to rows 0..n-1 and write them into one segment."""
        entries = list(self.docs.values())
        for row, entry in enumerate(entries):
            entry.row = row
        self.row_names = [e.tool.name for e in entries]
        self.alive = np.ones(len(entries), dtype=bool)
        self.lengths = np.vstack([e.lengths for e in entries]) if entries else np.zeros((0, N_FIELDS))
        self.length_sums = self.lengths.sum(axis=0) if entries else np.zeros(N_FIELDS)
        self.field_docs = (self.lengths > 0).sum(axis=0).astype(np.float64) if entries else np.zeros(N_FIELDS)
        self._pending = {}
        self._pair_cache.clear()
        self.segments = [Segment.build(entries, len(self.terms), len(self.surface_vocab))]
        self.df = np.zeros(len(self.terms))
        self.df[: len(self.segments[0].df)] += self.segments[0].df
        self.generation += 1

    def _grow_df(self) -> None:
        if len(self.df) < len(self.terms):
            df = np.zeros(max(len(self.terms), 2 * len(self.df)))
            df[: len(self.df)] = self.df
            self.df = df

    def segment_pairs(
        self, seg: Segment, weights: np.ndarray, max_tf: float | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(rows, terms, Σ_f w_f · min(tf, max_tf))`` of every (row, term) in ``seg`` (cached
        per segment; ``max_tf`` None: counts as stored)."""
        key = (id(seg), np.asarray(weights, dtype=np.float64).tobytes() + repr(max_tf).encode())
        hit = self._pair_cache.get(key)
        if hit is not None:
            return hit
        terms = np.repeat(np.arange(len(seg.indptr) - 1, dtype=np.int64), np.diff(seg.indptr))
        vals = weights[seg.field] * (seg.tf if max_tf is None else np.minimum(seg.tf, max_tf))
        if len(vals):
            change = np.empty(len(vals), dtype=bool)
            change[0] = True
            change[1:] = (seg.rows[1:] != seg.rows[:-1]) | (terms[1:] != terms[:-1])
            starts = np.flatnonzero(change)
            sums = np.add.reduceat(vals, starts)
            keep = sums > 0
            out = (seg.rows[starts][keep], terms[starts][keep], sums[keep])
        else:
            out = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))
        live_ids = {id(s) for s in self.segments}
        for k in [k for k in self._pair_cache if k[0] not in live_ids]:
            del self._pair_cache[k]
        self._pair_cache[key] = out
        return out


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """Pause Python's cyclic GC (restoring its previous state): on a 10,000-tool add its passes
    over the freshly allocated, cycle-free term tuples and arrays cost ~35% of the time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def warm_terms(tool: ToolSpec, server_description: str | None = None) -> None:
    """Analyse ``tool``'s field texts into the process-wide memo (thread-safe, any thread), so
    that indexing the tool later, on the event loop, only looks its terms up."""
    for text in tool_fields(tool, server_description).values():
        _field_terms(text)


@functools.lru_cache(maxsize=65_536)
def _field_terms(text: str) -> tuple[tuple[str, ...], np.ndarray]:
    """Unique index terms of one field text and their counts (float32, read-only), memoised:
    server descriptions repeat for every tool of a server and parameter descriptions ("The
    repository owner") across tools and servers."""
    counts = Counter(t.term for t in analyze(text))
    values = np.fromiter(counts.values(), dtype=np.float32, count=len(counts))
    values.flags.writeable = False
    return tuple(counts), values
