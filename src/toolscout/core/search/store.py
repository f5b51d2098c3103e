"""Incremental term store: each tool is tokenized once; sparse matrices are rebuilt lazily.

:class:`TermStore` keeps, per tool and per field, the term ids and counts produced by the
tokenizer. Adding or removing tools touches only those tools; the scipy sparse matrices the
scorers need (documents × vocabulary, one per field) are concatenated from the stored arrays on
the next query, which costs a few milliseconds at 10,000 tools and no re-tokenisation.

The vocabulary only grows (ids of terms whose tools were removed stay allocated; their
document frequency drops to 0), so stored arrays never need renumbering.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..models import ToolSpec
from .fields import FIELDS, tool_fields
from .tokenize import analyze, is_cjk_term, words


@dataclass
class DocEntry:
    """One tokenized tool.

    Attributes:
        tool: the tool. server_description: the description it was indexed with.
        fields: field → ``(term ids int32[n], counts float32[n])``, unique ids.
        name_words: ids (in :attr:`TermStore.surface_vocab`) of the name's lower-cased words.
        lengths: field → number of terms (for BM25 length normalisation).
    """

    tool: ToolSpec
    server_description: str | None
    fields: dict[str, tuple[np.ndarray, np.ndarray]]
    name_words: np.ndarray
    lengths: dict[str, float] = field(default_factory=dict)
    #: All fields packed for fast matrix builds: ids int32[n], counts float32[n], field int8[n],
    #: and float64[len(FIELDS)] lengths.
    packed: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None


@dataclass
class Matrices:
    """Sparse views of the live documents, in :attr:`names` order.

    Attributes:
        names: tool names, row order of every matrix.
        tf: field → CSR float32 (N × V) term counts.
        lengths: field → float64[N] field lengths.
        binary: CSR (N × V) 1 where the term occurs in any field.
        name_words: CSR (N × S) 1 where the surface word occurs in the tool name.
        df: float64[V] document frequency over all fields.
        name_rank: int64[N] position of each name in sorted order (tie-break).
    """

    names: list[str]
    tf: dict[str, sp.csr_matrix]
    lengths: dict[str, np.ndarray]
    binary: sp.csr_matrix
    name_words: sp.csr_matrix
    df: np.ndarray
    name_rank: np.ndarray

    @property
    def n_docs(self) -> int:
        """Number of live documents."""
        return len(self.names)


class TermStore:
    """Tokenized tools keyed by ``tool.name``, with a grow-only vocabulary.

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
        self._matrices: Matrices | None = None
        #: How many tools were tokenized over the store's life (tests check incrementality).
        self.tokenized = 0

    def __len__(self) -> int:
        return len(self.docs)

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

    def add(self, tools: Iterable[ToolSpec]) -> list[str]:
        """Tokenize and store ``tools``; a tool whose name is present is replaced.

        Returns:
            Names added or replaced, in the given order.
        """
        done: list[str] = []
        for tool in tools:
            desc = self.server_descriptions.get(tool.server or "")
            old = self.docs.get(tool.name)
            if old is not None and old.tool == tool and old.server_description == desc:
                continue  # unchanged: nothing to do
            self.docs.pop(tool.name, None)
            self.docs[tool.name] = self._entry(tool, desc)
            self.tokenized += 1
            done.append(tool.name)
        if done:
            self._matrices = None
        return done

    def remove(self, names: Iterable[str]) -> list[str]:
        """Drop tools by exact name; unknown names are ignored. Returns the names removed."""
        gone = [n for n in names if self.docs.pop(n, None) is not None]
        if gone:
            self._matrices = None
        return gone

    def _entry(self, tool: ToolSpec, server_description: str | None) -> DocEntry:
        texts = tool_fields(tool, server_description)
        fields: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        lengths: dict[str, float] = {}
        for name in FIELDS:
            counts = Counter(self._term_id(t) for t in _field_terms(texts[name]))
            ids = np.fromiter(counts.keys(), dtype=np.int32, count=len(counts))
            tfs = np.fromiter(counts.values(), dtype=np.float32, count=len(counts))
            fields[name] = (ids, tfs)
            lengths[name] = float(tfs.sum())
        name_ids = sorted({self._surface_id(w) for w in words(tool.name)})
        packed = (
            np.concatenate([fields[f][0] for f in FIELDS]),
            np.concatenate([fields[f][1] for f in FIELDS]),
            np.concatenate([np.full(len(fields[f][0]), k, dtype=np.int8) for k, f in enumerate(FIELDS)]),
            np.asarray([lengths[f] for f in FIELDS], dtype=np.float64),
        )
        return DocEntry(tool, server_description, fields, np.asarray(name_ids, dtype=np.int32), lengths, packed)

    def surface_ids(self, surfaces: Iterable[str]) -> list[int]:
        """Ids of known name words among ``surfaces`` (-1 for unknown)."""
        return [self.surface_vocab.get(s, -1) for s in surfaces]

    def matrices(self) -> Matrices:
        """The sparse matrices of the live documents (rebuilt after any change)."""
        if self._matrices is None:
            self._matrices = self._build()
        return self._matrices

    def _build(self) -> Matrices:
        entries = list(self.docs.values())
        n, v = len(entries), len(self.terms)
        packs = [e.packed for e in entries]
        sizes = np.fromiter((len(p[0]) for p in packs), dtype=np.int64, count=n)  # type: ignore[index]
        if n:
            ids = np.concatenate([p[0] for p in packs])  # type: ignore[index]
            tfs = np.concatenate([p[1] for p in packs])  # type: ignore[index]
            which = np.concatenate([p[2] for p in packs])  # type: ignore[index]
            all_lengths = np.vstack([p[3] for p in packs])  # type: ignore[index]
        else:
            ids, tfs = np.zeros(0, np.int32), np.zeros(0, np.float32)
            which, all_lengths = np.zeros(0, np.int8), np.zeros((0, len(FIELDS)))
        rows = np.repeat(np.arange(n, dtype=np.int64), sizes)
        tf: dict[str, sp.csr_matrix] = {}
        lengths: dict[str, np.ndarray] = {}
        for k, name in enumerate(FIELDS):
            sel = which == k
            tf[name] = sp.csr_matrix((tfs[sel], (rows[sel], ids[sel])), shape=(n, v))
            lengths[name] = all_lengths[:, k].copy()
        binary = sp.csr_matrix((np.ones(len(ids), dtype=np.float32), (rows, ids)), shape=(n, v))
        binary.sum_duplicates()
        binary.data = np.ones_like(binary.data)
        df = np.asarray(binary.sum(axis=0)).ravel().astype(np.float64)
        name_words = _csr(
            [e.name_words for e in entries],
            [np.ones(len(e.name_words), dtype=np.float32) for e in entries],
            len(self.surface_vocab),
        )
        names = [e.tool.name for e in entries]
        order = sorted(range(n), key=names.__getitem__)
        name_rank = np.empty(n, dtype=np.int64)
        name_rank[order] = np.arange(n)
        return Matrices(names, tf, lengths, binary, name_words, df, name_rank)


def _csr(ids: list[np.ndarray], vals: list[np.ndarray], width: int) -> sp.csr_matrix:
    n = len(ids)
    indptr = np.zeros(n + 1, dtype=np.int64)
    if n:
        np.cumsum([len(a) for a in ids], out=indptr[1:])
    indices = np.concatenate(ids) if n else np.zeros(0, dtype=np.int32)
    data = np.concatenate(vals) if n else np.zeros(0, dtype=np.float32)
    return sp.csr_matrix((data, indices, indptr), shape=(n, width))


@functools.lru_cache(maxsize=65_536)
def _field_terms(text: str) -> tuple[str, ...]:
    """Index terms of one field text, memoised: server descriptions repeat for every tool of a
    server and parameter descriptions ("The repository owner") across tools and servers."""
    return tuple(t.term for t in analyze(text))
