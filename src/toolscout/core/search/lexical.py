"""Lexical scorers over a :class:`~toolscout.core.search.store.Matrices`: BM25F, field TF-IDF,
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
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .store import Matrices, TermStore
from .tokenize import analyze

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
        unknown: terms absent from the vocabulary.
    """

    text: str
    terms: list[str]
    surfaces: dict[str, str]
    counts: dict[str, int]
    ids: np.ndarray
    qtf: np.ndarray
    cjk: np.ndarray
    unknown: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str, store: TermStore) -> Query:
        """Analyze ``text`` with the search tokenizer and look its terms up in ``store``."""
        surfaces: dict[str, str] = {}
        counts: dict[str, int] = {}
        for term in analyze(text):
            surfaces.setdefault(term.term, term.surface)
            counts[term.term] = counts.get(term.term, 0) + 1
        terms = list(counts)
        known = [t for t in terms if t in store.vocab]
        ids = np.asarray([store.vocab[t] for t in known], dtype=np.int64)
        qtf = np.asarray([counts[t] for t in known], dtype=np.float64)
        cjk = np.asarray([store.cjk[store.vocab[t]] for t in known], dtype=bool)
        unknown = [t for t in terms if t not in store.vocab]
        return cls(text, terms, surfaces, counts, ids, qtf, cjk, unknown)

    @property
    def empty(self) -> bool:
        """True when the query has no terms at all."""
        return not self.terms


def _columns(matrix: sp.csc_matrix, ids: np.ndarray) -> sp.csc_matrix:
    return matrix[:, ids]


def cjk_gate(m: Matrices, q: Query, min_cjk: int = 2) -> np.ndarray:
    """1.0 per document unless it matches the query only through fewer than ``min_cjk`` CJK terms."""
    if not len(q.ids) or not q.cjk.any():
        return np.ones(m.n_docs)
    cols = m.binary[:, q.ids]
    latin = np.asarray(cols[:, ~q.cjk].sum(axis=1)).ravel() if (~q.cjk).any() else np.zeros(m.n_docs)
    han = np.asarray(cols[:, q.cjk].sum(axis=1)).ravel()
    return ((latin > 0) | (han >= min_cjk)).astype(np.float64)


class _Cached:
    """Holds one derived matrix per :class:`Matrices` object."""

    def __init__(self) -> None:
        self._source: Matrices | None = None
        self._value: object = None

    def get(self, m: Matrices, build) -> object:  # type: ignore[no-untyped-def]
        if self._source is not m:
            self._value = build(m)
            self._source = m
        return self._value


class BM25F:
    """BM25F with per-field length normalisation (see the module docstring for constants).

    ``score(d, q) = Σ_t qtf_t · idf_t · tf̃ (k1 + 1) / (tf̃ + k1)`` where
    ``tf̃ = Σ_f w_f · tf_{f,d,t} / (1 − b + b · len_{f,d} / avglen_f)``.
    """

    def __init__(self, weights: dict[str, float] | None = None, k1: float = 1.5, b: float = 0.3) -> None:
        self.weights = dict(BM25F_WEIGHTS if weights is None else weights)
        self.k1, self.b = k1, b
        self._cache = _Cached()

    def _build(self, m: Matrices) -> tuple[sp.csc_matrix, np.ndarray]:
        n, v = m.n_docs, len(m.df)
        acc = sp.csr_matrix((n, v), dtype=np.float64)
        for name, w in self.weights.items():
            if not w or name not in m.tf:
                continue
            lens = m.lengths[name]
            avg = float(lens.mean()) if n else 0.0
            norm = 1.0 - self.b + self.b * (lens / avg) if avg > 0 else np.ones(n)
            acc = acc + sp.diags(w / norm) @ m.tf[name].astype(np.float64)
        acc = sp.csr_matrix(acc)
        acc.data = acc.data * (self.k1 + 1.0) / (acc.data + self.k1)
        idf = np.log1p((n - m.df + 0.5) / (m.df + 0.5))
        return sp.csc_matrix(acc @ sp.diags(idf)), idf

    def idf(self, m: Matrices) -> np.ndarray:
        """Lucene idf per vocabulary id (float64[V])."""
        return self._cache.get(m, self._build)[1]  # type: ignore[index]

    def score(self, m: Matrices, q: Query) -> np.ndarray:
        """float64[N] BM25F scores (0 for documents matching no term)."""
        if not len(q.ids) or not m.n_docs:
            return np.zeros(m.n_docs)
        matrix, _ = self._cache.get(m, self._build)  # type: ignore[misc]
        return np.asarray(_columns(matrix, q.ids) @ q.qtf).ravel()

    def coverage(self, m: Matrices, q: Query, doc: int) -> float:
        """Share of the query's idf mass whose terms occur in document ``doc`` (0..1).

        Unknown terms count with the largest possible idf, so gibberish lowers coverage.
        """
        if q.empty or not m.n_docs:
            return 0.0
        idf = self.idf(m)
        top = math.log1p((m.n_docs + 0.5) / 0.5)
        total = top * len(q.unknown)
        hit = 0.0
        if len(q.ids):
            present = np.asarray(m.binary[doc, q.ids].todense()).ravel() > 0
            weights = idf[q.ids]
            total += float(weights.sum())
            hit = float(weights[present].sum())
        return hit / total if total > 0 else 0.0


class FieldTfidf:
    """Cosine over field-weighted, sublinear, idf-weighted term vectors (research: "TF-IDF, same
    fields, sublinear, stemmed"; 43.8 mean nDCG@10 alone, +0.8 fused with BM25F).

    Sublinear tf is ``1 + ln(x)`` for weighted counts ``x ≥ 1`` and ``x`` below 1 (a fractional
    field weight must not produce a negative weight); idf is scikit-learn's smooth idf.
    """

    def __init__(self, weights: dict[str, float] | None = None) -> None:
        self.weights = dict(BM25F_WEIGHTS if weights is None else weights)
        self._cache = _Cached()

    @staticmethod
    def _sublinear(x: np.ndarray) -> np.ndarray:
        return np.where(x >= 1.0, 1.0 + np.log(np.maximum(x, 1.0)), x)

    def _build(self, m: Matrices) -> tuple[sp.csc_matrix, np.ndarray]:
        n, v = m.n_docs, len(m.df)
        acc = sp.csr_matrix((n, v), dtype=np.float64)
        for name, w in self.weights.items():
            if w and name in m.tf:
                acc = acc + m.tf[name].astype(np.float64) * w
        acc = sp.csr_matrix(acc)
        acc.data = self._sublinear(acc.data)
        idf = np.log((1.0 + n) / (1.0 + m.df)) + 1.0
        acc = sp.csr_matrix(acc @ sp.diags(idf))
        norms = np.sqrt(np.asarray(acc.multiply(acc).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sp.csc_matrix(sp.diags(1.0 / norms) @ acc), idf

    def score(self, m: Matrices, q: Query) -> np.ndarray:
        """float64[N] cosine similarities in [0, 1]."""
        if not len(q.ids) or not m.n_docs:
            return np.zeros(m.n_docs)
        matrix, idf = self._cache.get(m, self._build)  # type: ignore[misc]
        qv = self._sublinear(q.qtf) * idf[q.ids]
        norm = float(np.sqrt((qv**2).sum()))
        if norm == 0:
            return np.zeros(m.n_docs)
        return np.asarray(_columns(matrix, q.ids) @ (qv / norm)).ravel()


class SklearnTfidf:
    """The hybrid profile's TF-IDF: scikit-learn ``TfidfTransformer`` (smooth idf, L2 rows) over
    field-weighted counts (name 3.0, search hint 2.5, description 1.0); cosine in [0, 1]."""

    def __init__(self, weights: dict[str, float] | None = None) -> None:
        self.weights = dict(HYBRID_TFIDF_WEIGHTS if weights is None else weights)
        self._cache = _Cached()

    def _build(self, m: Matrices) -> tuple[object, sp.csc_matrix]:
        from sklearn.feature_extraction.text import TfidfTransformer

        acc = sp.csr_matrix((m.n_docs, len(m.df)), dtype=np.float64)
        for name, w in self.weights.items():
            if w and name in m.tf:
                acc = acc + m.tf[name].astype(np.float64) * w
        transformer = TfidfTransformer(norm="l2", smooth_idf=True)
        matrix = transformer.fit_transform(sp.csr_matrix(acc))
        return transformer, sp.csc_matrix(matrix)

    def score(self, m: Matrices, q: Query) -> np.ndarray:
        """float64[N] cosine similarities in [0, 1]."""
        if not len(q.ids) or not m.n_docs:
            return np.zeros(m.n_docs)
        transformer, matrix = self._cache.get(m, self._build)  # type: ignore[misc]
        # the same transform as transformer.transform(counts) (raw tf × idf, L2), without the
        # per-call overhead of building a sparse row
        qv = q.qtf * transformer.idf_[q.ids]  # type: ignore[attr-defined]
        norm = float(np.sqrt((qv**2).sum()))
        if norm == 0:
            return np.zeros(m.n_docs)
        return np.asarray(_columns(matrix, q.ids) @ (qv / norm)).ravel()


class KeywordScorer:
    """Claude-Code-style keyword points per document (not normalised).

    Per query term: +12 when a word of the tool name equals the query word, else +6 when a
    name word has the same stem; +4 when the search hint has the term; +2 when the description
    has it (see the module docstring for the source).
    """

    def __init__(self, points: dict[str, float] | None = None) -> None:
        self.points = dict(KEYWORD_POINTS if points is None else points)
        self._cache = _Cached()

    @staticmethod
    def _build(m: Matrices) -> tuple[sp.csc_matrix, ...]:
        return tuple(sp.csc_matrix(x) for x in (m.tf["name"], m.tf["hint"], m.tf["description"], m.name_words))

    def score(self, m: Matrices, q: Query, store: TermStore) -> np.ndarray:
        """float64[N] keyword points."""
        out = np.zeros(m.n_docs)
        if not m.n_docs or not len(q.ids):
            return out
        name_tf, hint_tf, desc_tf, name_words = self._cache.get(m, self._build)  # type: ignore[misc]
        pts = self.points

        def present(matrix: sp.csc_matrix, cols: np.ndarray) -> np.ndarray:
            return np.asarray((matrix[:, cols] > 0).todense(), dtype=bool)

        stem = present(name_tf, q.ids)
        surf = np.asarray([store.surface_vocab.get(q.surfaces[store.terms[int(i)]], -1) for i in q.ids])
        exact = np.zeros_like(stem)
        ok = (surf >= 0) & (surf < name_words.shape[1])
        if ok.any():
            exact[:, ok] = present(name_words, surf[ok])
        out += (pts["name_exact"] * exact + pts["name_partial"] * (stem & ~exact)).sum(axis=1)
        out += pts["hint"] * present(hint_tf, q.ids).sum(axis=1)
        out += pts["description"] * present(desc_tf, q.ids).sum(axis=1)
        return out


def matched_terms(store: TermStore, name: str, q: Query, fields: Iterable[str]) -> dict[str, list[str]]:
    """Field → query words (as written) whose terms occur in that field of tool ``name``."""
    entry = store.docs.get(name)
    if entry is None or not len(q.ids):
        return {}
    wanted = {int(i): q.surfaces[store.terms[int(i)]] for i in q.ids}
    out: dict[str, list[str]] = {}
    for f in fields:
        ids = entry.fields[f][0]
        hits = [wanted[int(i)] for i in ids if int(i) in wanted]
        if hits:
            order = {s: k for k, s in enumerate(wanted.values())}
            out[f] = sorted(set(hits), key=order.__getitem__)
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
        return np.clip(x, 0.0, 1.0)
    return (x - lo) / (hi - lo)
