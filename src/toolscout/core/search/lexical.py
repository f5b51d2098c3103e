"""Lexical scorers over a :class:`~toolscout.core.search.matrices.Matrices`: BM25F, field TF-IDF,
the Claude-Code-style keyword score and the hybrid profile's scikit-learn TF-IDF.

Every scorer returns one float64 score per live document (row order of the matrices) for a
:class:`Query`. Per-corpus matrices are cached on the scorer and rebuilt when the store hands
out a new :class:`Matrices` object (after any add or remove).

Sources of the constants:

* BM25F (per-field length normalisation, Lucene idf ``log(1 + (N − df + 0.5)/(df + 0.5))``),
  k1 1.5, b 0.3, field weights name 2, server 3, server description 0.25, description 1,
  parameter names 2, parameter descriptions 2: ``shared/research/retrieval-ceiling.md``
  (a flat optimum over 1,620 grid points). The search-hint weight 2 is ours (no data has hints).
* Keyword score: name-part exact 12 / partial 6, search-hint word 4, description word 2, after
  Claude Code's ``ToolSearchTool.ts`` and claude-code-best's ``SearchExtraToolsTool.ts``.
  "Partial" here means the same stem but a different word (whole-token matching only).
* Hybrid TF-IDF field weights name 3.0, search hint 2.5, description 1.0: the ToolSearch design.

Stuffing bounds (issue 28 item 6): BM25F counts a term at most twice per field and lets the
description and parameter text add at most one name mention per term; the field TF-IDF caps
counts the same way (:mod:`.stuffing`, with the measurements).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np
import scipy.sparse as sp

from .matrices import Matrices
from .segments import FIELD_INDEX, Postings, Segment, field_weights
from .store import TermStore
from .stuffing import BODY, MAX_BODY_TF, MAX_FIELD_TF
from .tokenize import query_terms

V = TypeVar("V")

BM25F_WEIGHTS: dict[str, float] = {
    "name": 2.0,
    "hint": 2.0,
    "server": 3.0,
    "server_description": 0.25,
    "description": 1.0,
    "param_names": 2.0,
    "param_descriptions": 2.0,
}
HYBRID_TFIDF_WEIGHTS: dict[str, float] = {"name": 3.0, "hint": 2.5, "description": 1.0}
KEYWORD_POINTS = {"name_exact": 12.0, "name_partial": 6.0, "hint": 4.0, "description": 2.0}


@dataclass
class Query:
    """An analyzed query against one store.

    Attributes:
        text: the text as given.
        terms: unique index terms in first-seen order. surfaces: term → the word as written.
        counts: term → occurrences in the query.
        ids: int64[k] vocabulary ids of the known terms. qtf: float64[k] their counts.
        cjk: bool[k] which known terms are CJK bigrams.
        unknown: terms absent from the vocabulary (or left only by removed tools).
        compounds: terms that are whole camelCase runs kept besides their parts.
    """

    text: str
    terms: list[str]
    surfaces: dict[str, str]
    counts: dict[str, int]
    ids: np.ndarray
    qtf: np.ndarray
    cjk: np.ndarray
    unknown: list[str] = field(default_factory=list)
    compounds: set[str] = field(default_factory=set)
    _postings: tuple[Matrices, Postings] | None = field(default=None, repr=False, compare=False)
    _wanted: dict[int, str] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def parse(cls, text: str, store: TermStore) -> Query:
        """Analyze ``text`` with the search tokenizer and look its terms up in ``store``."""
        surfaces: dict[str, str] = {}
        counts: dict[str, int] = {}
        compounds: set[str] = set()
        for term in query_terms(text):
            surfaces.setdefault(term.term, term.surface)
            counts[term.term] = counts.get(term.term, 0) + 1
            if term.compound:
                compounds.add(term.term)
        terms = list(counts)
        df = store.matrices().df  # terms left only by removed tools count as unknown, as in a fresh index
        vocab = store.vocab
        known = [t for t in terms if t in vocab and df[vocab[t]] > 0]
        ids = np.asarray([store.vocab[t] for t in known], dtype=np.int64)
        qtf = np.asarray([counts[t] for t in known], dtype=np.float64)
        cjk = np.asarray([store.cjk[store.vocab[t]] for t in known], dtype=bool)
        known_set = set(known)
        unknown = [t for t in terms if t not in known_set]
        return cls(text, terms, surfaces, counts, ids, qtf, cjk, unknown, compounds)

    @property
    def empty(self) -> bool:
        """True when the query has no terms at all."""
        return not self.terms


def _postings(m: Matrices, q: Query) -> Postings:
    """The postings of ``q``'s known terms in view ``m`` (fetched once per query and view)."""
    if q._postings is None or q._postings[0] is not m:
        q._postings = (m, m.postings(q.ids))
    return q._postings[1]


def cjk_gate(m: Matrices, q: Query, min_cjk: int = 2) -> np.ndarray:
    """1.0 per document unless it matches the query only through fewer than ``min_cjk`` CJK terms."""
    if not len(q.ids) or not q.cjk.any():
        return np.ones(m.n_docs)
    p = _postings(m, q)
    starts = p.pairs()
    rows, cjk = p.rows[starts], q.cjk[p.qpos[starts]]
    latin = np.bincount(rows[~cjk], minlength=m.n_rows)
    han = np.bincount(rows[cjk], minlength=m.n_rows)
    return m.live(((latin > 0) | (han >= min_cjk)).astype(np.float64))


class _PerView(Generic[V]):
    """Holds one derived value per :class:`Matrices` view."""

    def __init__(self) -> None:
        self._source: Matrices | None = None
        self._value: V | None = None

    def get(self, m: Matrices, build: Callable[[Matrices], V]) -> V:
        if self._source is not m or self._value is None:
            self._value = build(m)
            self._source = m
        return self._value


def _pair_sums(
    p: Postings, weights: np.ndarray, max_tf: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, query positions, Σ_f weight_f · min(tf, max_tf))`` per (query term, row) pair of ``p``."""
    starts = p.pairs()
    if not len(starts):
        e = np.zeros(0, np.int64)
        return e, e, np.zeros(0)
    sums = np.add.reduceat(weights * (p.tf if max_tf is None else np.minimum(p.tf, max_tf)), starts)
    return p.rows[starts], p.qpos[starts], sums


class BM25F:
    """BM25F with per-field length normalisation (see the module docstring for constants).

    ``score(d, q) = Σ_t qtf_t · idf_t · tf̃ (k1 + 1) / (tf̃ + k1)`` where
    ``tf̃ = head + min(body, max_body)``, ``head`` and ``body`` being
    ``Σ_f w_f · min(tf_{f,d,t}, max_tf) / (1 − b + b · len_{f,d} / avglen_f)`` over the name,
    hint and server fields and over :data:`BODY_FIELDS` (the stuffing bounds of the module
    docstring; ``max_tf``/``max_body`` None: unbounded, plain BM25F), and ``avglen_f`` the
    field's average length over all tools, or for the search hint over the tools that have one
    (:data:`~.matrices.OWN_AVERAGE_FIELDS`).

    Computed at query time from the postings of the query's terms and the running collection
    statistics, so adding tools never rebuilds anything.
    """

    def __init__(
        self,
        weights: dict[str, float] | None = None,
        k1: float = 1.5,
        b: float = 0.3,
        *,
        max_tf: float | None = MAX_FIELD_TF,
        max_body: float | None = MAX_BODY_TF,
    ) -> None:
        self.weights = dict(BM25F_WEIGHTS if weights is None else weights)
        self.k1, self.b = k1, b
        self.max_tf, self.max_body = max_tf, max_body
        self._w = field_weights(self.weights)
        self._cache: _PerView[np.ndarray] = _PerView()

    def _row_weights(self, m: Matrices) -> np.ndarray:
        """float64[n_rows, len(FIELDS)]: ``w_f / (1 − b + b · len_{f,d} / avglen_f)``."""
        avg = m.avg_lengths
        safe = np.where(avg > 0, avg, 1.0)
        norm = np.where(avg > 0, 1.0 - self.b + self.b * (m.lengths / safe), 1.0)
        return self._w / norm

    def idf(self, m: Matrices, ids: np.ndarray) -> np.ndarray:
        """Lucene idf of vocabulary ids ``ids`` (float64)."""
        df = m.df[ids]
        return np.asarray(np.log1p((m.n_docs - df + 0.5) / (df + 0.5)))

    def score(self, m: Matrices, q: Query) -> np.ndarray:
        """float64[N] BM25F scores (0 for documents matching no term)."""
        if not len(q.ids) or not m.n_docs:
            return np.zeros(m.n_docs)
        p = _postings(m, q)
        if not len(p.rows):
            return np.zeros(m.n_docs)
        row_w = self._cache.get(m, self._row_weights)
        starts = p.pairs()
        tf = p.tf if self.max_tf is None else np.minimum(p.tf, self.max_tf)
        weighted = row_w[p.rows, p.field] * tf
        if self.max_body is None:
            tft = np.add.reduceat(weighted, starts)
        else:
            body = BODY[p.field]
            tft = np.add.reduceat(np.where(body, 0.0, weighted), starts) + np.minimum(
                np.add.reduceat(np.where(body, weighted, 0.0), starts), self.max_body
            )
        qp = p.qpos[starts]
        contrib = tft * (self.k1 + 1.0) / (tft + self.k1) * (self.idf(m, q.ids) * q.qtf)[qp]
        return m.live(np.bincount(p.rows[starts], weights=contrib, minlength=m.n_rows))

    def capped(self, m: Matrices, q: Query) -> np.ndarray:
        """bool[N]: the documents whose score for ``q`` a stuffing bound lowered (a term repeated
        past ``max_tf`` in a field, or body text past ``max_body``): those whose explanation
        :func:`stuffing_notes` has something to say about."""
        if not len(q.ids) or not m.n_docs:
            return np.zeros(m.n_docs, dtype=bool)
        p = _postings(m, q)
        out = np.zeros(m.n_rows, dtype=bool)
        if not len(p.rows):
            return m.live(out)
        if self.max_tf is not None:
            out[p.rows[p.tf > self.max_tf]] = True
        if self.max_body is not None:
            starts = p.pairs()
            row_w = self._cache.get(m, self._row_weights)
            tf = p.tf if self.max_tf is None else np.minimum(p.tf, self.max_tf)
            body = np.add.reduceat(np.where(BODY[p.field], row_w[p.rows, p.field] * tf, 0.0), starts)
            out[p.rows[starts][body > self.max_body]] = True
        return m.live(out)

    def coverage(self, m: Matrices, q: Query, doc: int) -> float:
        """Share of the query's idf mass whose terms occur in document ``doc`` (0..1).

        Unknown terms count with the largest possible idf, so gibberish lowers coverage.
        """
        if q.empty or not m.n_docs:
            return 0.0
        top = math.log1p((m.n_docs + 0.5) / 0.5)
        total = top * len(q.unknown)
        hit = 0.0
        if len(q.ids):
            entry = m.store.docs.get(m.names[doc])
            present = np.isin(q.ids, entry.term_ids()) if entry is not None else np.zeros(len(q.ids), bool)
            weights = self.idf(m, q.ids)
            total += float(weights.sum())
            hit = float(weights[present].sum())
        return hit / total if total > 0 else 0.0


def _sublinear(x: np.ndarray) -> np.ndarray:
    return np.where(x >= 1.0, 1.0 + np.log(np.maximum(x, 1.0)), x)


class FieldTfidf:
    """Cosine over field-weighted, sublinear, idf-weighted term vectors (research: "TF-IDF, same
    fields, sublinear, stemmed"; 43.8 mean nDCG@10 alone, +0.8 fused with BM25F).

    Counts are capped at ``max_tf`` per field first (the stuffing bound of the module docstring).
    Sublinear tf is ``1 + ln(x)`` for weighted counts ``x ≥ 1`` and ``x`` below 1 (a fractional
    field weight must not produce a negative weight); idf is scikit-learn's smooth idf
    ``ln((1 + n) / (1 + df)) + 1``. Document norms depend on every idf, so they are recomputed
    (vectorised over the cached per-segment (row, term) pairs) once per view.
    """

    def __init__(self, weights: dict[str, float] | None = None, *, max_tf: float | None = MAX_FIELD_TF) -> None:
        self.weights = dict(BM25F_WEIGHTS if weights is None else weights)
        self._w = field_weights(self.weights)
        self.max_tf = max_tf
        self._cache: _PerView[tuple[np.ndarray, np.ndarray]] = _PerView()
        self._segments: dict[int, tuple[Segment, tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}

    def _segment_pairs(self, m: Matrices, seg: Segment) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(rows, terms, sublinear weighted counts)`` of one segment, cached while it lives."""
        hit = self._segments.get(id(seg))
        if hit is None or hit[0] is not seg:
            rows, terms, counts = m.store.segment_pairs(seg, self._w, self.max_tf)
            live = {id(s) for s in m.segments}
            self._segments = {k: v for k, v in self._segments.items() if k in live}
            hit = self._segments[id(seg)] = (seg, (rows, terms, _sublinear(counts)))
        return hit[1]

    @staticmethod
    def _idf(m: Matrices) -> np.ndarray:
        return np.log((1.0 + m.n_docs) / (1.0 + m.df)) + 1.0

    def _row_norms(self, m: Matrices) -> tuple[np.ndarray, np.ndarray]:
        idf = self._idf(m)
        sq = np.zeros(m.n_rows)
        for seg in m.segments:  # dead rows get norms too; they are dropped from every score
            rows, terms, sub = self._segment_pairs(m, seg)
            sq += np.bincount(rows, weights=(sub * idf[terms]) ** 2, minlength=m.n_rows)
        norms = np.sqrt(sq)
        norms[norms == 0] = 1.0
        return norms, idf

    def score(self, m: Matrices, q: Query) -> np.ndarray:
        """float64[N] cosine similarities in [0, 1]."""
        if not len(q.ids) or not m.n_docs:
            return np.zeros(m.n_docs)
        norms, idf = self._cache.get(m, self._row_norms)
        qv = _sublinear(q.qtf) * idf[q.ids]
        qnorm = float(np.sqrt((qv**2).sum()))
        if qnorm == 0:
            return np.zeros(m.n_docs)
        p = _postings(m, q)
        rows, qp, x = _pair_sums(p, self._w[p.field], self.max_tf)
        contrib = _sublinear(x) * (idf[q.ids] * qv / qnorm)[qp]
        return m.live(np.bincount(rows, weights=contrib, minlength=m.n_rows) / norms)


class SklearnTfidf:
    """The hybrid profile's TF-IDF: scikit-learn ``TfidfTransformer`` (smooth idf, L2 rows) over
    field-weighted counts (name 3.0, search hint 2.5, description 1.0); cosine in [0, 1].

    The transformer is refitted once per view (the seed design; it is the comparison profile,
    not the default).
    """

    def __init__(self, weights: dict[str, float] | None = None) -> None:
        self.weights = dict(HYBRID_TFIDF_WEIGHTS if weights is None else weights)
        self._w = field_weights(self.weights)
        self._cache: _PerView[tuple[Any, sp.csc_matrix]] = _PerView()

    def _build(self, m: Matrices) -> tuple[Any, sp.csc_matrix]:
        from sklearn.feature_extraction.text import TfidfTransformer

        rows, terms, counts = m.field_pairs(self._w)
        if m.live_rows is not None:
            to_live = np.full(m.n_rows, -1, dtype=np.int64)
            to_live[m.live_rows] = np.arange(m.n_docs)
            rows = to_live[rows]
        acc = sp.csr_matrix((counts, (rows, terms)), shape=(m.n_docs, len(m.df)))
        transformer = TfidfTransformer(norm="l2", smooth_idf=True)
        matrix = transformer.fit_transform(acc)
        return transformer, sp.csc_matrix(matrix)

    def score(self, m: Matrices, q: Query) -> np.ndarray:
        """float64[N] cosine similarities in [0, 1]."""
        if not len(q.ids) or not m.n_docs:
            return np.zeros(m.n_docs)
        transformer, matrix = self._cache.get(m, self._build)
        # the same transform as transformer.transform(counts) (raw tf × idf, L2), without the
        # per-call overhead of building a sparse row
        qv = q.qtf * transformer.idf_[q.ids]
        norm = float(np.sqrt((qv**2).sum()))
        if norm == 0:
            return np.zeros(m.n_docs)
        return np.asarray(matrix[:, q.ids] @ (qv / norm)).ravel()


class KeywordScorer:
    """Claude-Code-style keyword points per document (not normalised).

    Per query term: +12 when a word of the tool name equals the query word, else +6 when a
    name word has the same stem; +4 when the search hint has the term; +2 when the description
    has it (see the module docstring for the source).
    """

    def __init__(self, points: dict[str, float] | None = None) -> None:
        self.points = dict(KEYWORD_POINTS if points is None else points)

    def score(self, m: Matrices, q: Query, store: TermStore) -> np.ndarray:
        """float64[N] keyword points."""
        if not m.n_docs or not len(q.ids):
            return np.zeros(m.n_docs)
        pts = self.points
        p = _postings(m, q)
        k = len(q.ids)
        out = np.zeros(m.n_rows)
        stem = p.field == FIELD_INDEX["name"]
        stem_keys = p.rows[stem] * k + p.qpos[stem]
        exact_keys = []
        for i, tid in enumerate(q.ids.tolist()):
            sid = store.surface_vocab.get(q.surfaces[store.terms[tid]], -1)
            if sid >= 0:
                exact_keys.append(m.name_word_rows(sid) * k + i)
        exact = np.concatenate(exact_keys) if exact_keys else np.zeros(0, np.int64)
        out += pts["name_exact"] * np.bincount(exact // k, minlength=m.n_rows)
        partial = stem_keys[~np.isin(stem_keys, exact)]
        out += pts["name_partial"] * np.bincount(partial // k, minlength=m.n_rows)
        for field_name, key in (("hint", "hint"), ("description", "description")):
            sel = p.field == FIELD_INDEX[field_name]
            out += pts[key] * np.bincount(p.rows[sel], minlength=m.n_rows)
        return m.live(out)


def matched_terms(store: TermStore, name: str, q: Query, fields: Iterable[str]) -> dict[str, list[str]]:
    """Field → query words (as written) whose terms occur in that field of tool ``name``."""
    entry = store.docs.get(name)
    if entry is None or not len(q.ids):
        return {}
    if q._wanted is None:
        q._wanted = {i: q.surfaces[store.terms[i]] for i in q.ids.tolist()}
    wanted = q._wanted
    out: dict[str, list[str]] = {}
    for f in fields:
        ids = entry.fields[f][0]
        common = wanted.keys() & set(ids.tolist()) if len(ids) else None
        if common:
            out[f] = [s for i, s in wanted.items() if i in common]
    return out


def minmax(x: np.ndarray) -> np.ndarray:
    """Per-query min-max normalisation to [0, 1].

    A constant vector (one tool, or every tool equally similar) becomes ``clip(x, 0, 1)``
    rather than all zeros, so a lone match is not erased.
    """
    if not len(x):
        return x
    lo, hi = float(x.min()), float(x.max())
    if hi - lo <= 1e-12:
        return np.asarray(np.clip(x, 0.0, 1.0))
    return (x - lo) / (hi - lo)
