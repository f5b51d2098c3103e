"""ToolIndex: ranked retrieval over a list of tools, incremental, with selectable profiles.

Used by :class:`~toolscout.core.search.tool_search.ToolSearch` (catalog-aware search), by the
evaluation harness and by prefetch. Identity is ``tool.name`` exactly as given.

Scoring pipeline for a query: the search tokenizer (:mod:`.tokenize`) → raw signals (BM25F,
field TF-IDF, keyword points, scikit-learn TF-IDF, dense cosine; only those the profile uses)
→ the profile's fusion (:mod:`.profiles`) → optional multi-query fusion for long task texts
(:mod:`.multiquery`) → exact-name promotion → top-k with ties broken by name.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar, cast

import numpy as np

from ..models import ToolSpec
from . import dense as dense_mod
from .dense_jobs import BackgroundDense
from .fields import FIELDS, dense_text
from .lexical import (
    BM25F,
    FieldTfidf,
    KeywordScorer,
    Query,
    SklearnTfidf,
    cjk_gate,
    matched_terms,
)
from .matrices import Matrices
from .multiquery import split_subqueries
from .name_keys import NameKeys, required_mask
from .profiles import COMPONENT_NAMES, PROFILES, Profile, component_names, make_profile
from .query_vectors import QueryVectors
from .results import ScoredTool
from .store import TermStore, no_gc
from .stuffing import held_note, hold_stuffed_dense, stuffing_notes
from .tokenize import MIN_CJK_MATCHES, query_terms
from .usage_prior import UsagePrior

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")


def _locked(method: Callable[Concatenate[ToolIndex, P], R]) -> Callable[Concatenate[ToolIndex, P], R]:
    """Run a :class:`ToolIndex` method under the index's re-entrant lock (searches may run in a
    worker thread while the event loop adds a server's tools)."""

    @functools.wraps(method)
    def wrapper(self: ToolIndex, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._lock:
            return method(self, *args, **kwargs)

    return cast("Callable[Concatenate[ToolIndex, P], R]", wrapper)


@dataclass
class Signals:
    """Raw per-document signal vectors of one query text (row order of ``matrices.names``)."""

    query: Query
    raw: dict[str, np.ndarray]


class ToolIndex(BackgroundDense):
    """Incremental ranked index over tools. Thread-safe: public methods take one re-entrant lock.

    Args:
        tools: initial tools (identity = ``tool.name``; a later duplicate replaces an earlier one).
        profile: ``default`` | ``bm25f`` | ``hybrid`` (see :mod:`.profiles`). ``default`` needs
            the ``dense`` extra and otherwise runs as ``bm25f`` (see :attr:`active_profile`).
        weights: fusion weights overriding the profile's (hybrid: ``{"keyword", "tfidf"}``).
        server_descriptions: server name → description, indexed with that server's tools.
        multi_query: force multi-query fusion on/off (None: the profile's measured choice).
        dense_cache: SQLite file for tool vectors (None: memory only).
        encoder: a :class:`~.dense.DenseEncoder`, None for "load the shared one if installed",
            or False to run without the dense signal.
        background_dense: load the model and encode tool texts in one worker thread instead of
            inside :meth:`add` (encoding runs at ~36 MCP tools/s, so a 1,000-tool catalog would
            block an event loop for ~30 s). Until every indexed tool has its vector, queries are
            ranked by the lexical ``bm25f`` profile and :attr:`fallback_reason` says why;
            :meth:`wait_dense` blocks until the dense signal is ready.
        hold_dense: start held (:meth:`~.dense_jobs.BackgroundDense.hold_dense`): the model is
            not even loaded until released.
    """

    def __init__(
        self,
        tools: Iterable[ToolSpec] = (),
        profile: str = "default",
        *,
        weights: dict[str, float] | None = None,
        server_descriptions: dict[str, str] | None = None,
        multi_query: bool | None = None,
        dense_cache: Path | None = None,
        encoder: dense_mod.DenseEncoder | bool | None = None,
        background_dense: bool = False,
        dense_cache_bytes: int | None = None,
        on_progress: Callable[[int, int], None] | None = None,
        hold_dense: bool = False,
    ) -> None:
        self._held = hold_dense
        self.requested_profile = profile if profile in PROFILES else "default"
        self.fallback_reason: str | None = None
        prof = make_profile(self.requested_profile, weights, multi_query=multi_query)
        self._encoder: dense_mod.DenseEncoder | None = None
        self._lexical_profile = make_profile("bm25f", None, multi_query=multi_query)
        self._lock = threading.RLock()
        self._dense_cond = threading.Condition()
        self._pending: dict[str, str] = {}  # name -> text still waiting for its vector
        self._worker: ThreadPoolExecutor | None = None
        self._job_running = False
        self._closed = False
        if (
            "dense" in prof.signals
            and background_dense
            and not isinstance(encoder, dense_mod.DenseEncoder)
            and encoder is not False
        ):
            self._worker = ThreadPoolExecutor(1, thread_name_prefix="toolscout-dense")
            self._job_running = True
            self._worker.submit(self._load_encoder_in_background)
        elif "dense" in prof.signals:
            if encoder is False:
                self._encoder = None
                reason = "dense signal disabled"
            else:
                self._encoder = encoder if isinstance(encoder, dense_mod.DenseEncoder) else dense_mod.load_encoder()
                reason = dense_mod.unavailable_reason or "dense encoder unavailable"
            if self._encoder is None:
                self.fallback_reason = reason
                prof = make_profile("bm25f", None, multi_query=multi_query)
        self.profile: Profile = prof
        self.store = TermStore(server_descriptions)
        self._bm25f = BM25F()
        #: BM25F with and without the stuffing bounds: what the bounds took tells a stuffed text apart
        self._both_bm25f = (self._bm25f, BM25F(max_tf=None, max_body=None))
        self._tfidf = FieldTfidf()
        self._sk = SklearnTfidf()
        self._kw = KeywordScorer()
        self._vec_cache = dense_mod.VectorCache(dense_cache, dense_cache_bytes)
        #: ``on_progress(done, total)`` while tool texts are being encoded (worker thread or caller)
        self.on_progress = on_progress
        self._round_done = 0  # tools given a vector since ``_pending`` was last empty
        #: Texts the encoder really encoded (cache misses), over the index's life.
        self.encoded_texts = 0
        self._vectors: dict[str, np.ndarray] = {}
        #: tool vectors by store row (float32[capacity, DIM]); rebuilt when rows are renumbered
        self._dense_rs: np.ndarray | None = None
        self._dense_gen = -1
        self._dense_dirty: set[str] = set()
        #: full/bare name keys (lower-case) → names of the indexed tools with that key
        self._name_keys = NameKeys()
        #: query vectors by (encoder identity, text): a repeated query costs no encoder pass
        self.query_vectors = QueryVectors()
        #: tools run in this project lift their score a little (:mod:`.usage_prior`); None: off
        self.usage_prior: UsagePrior | None = None
        self.add(tools)

    # -- contents ---------------------------------------------------------------------------
    @property
    def encoder(self) -> dense_mod.DenseEncoder | None:
        """The encoder of the dense signal (None: not loaded yet, unavailable, or no dense signal)."""
        return self._encoder

    @property
    def active_profile(self) -> str:
        """The profile actually ranking (``bm25f`` when ``default`` lacks the dense extra, or
        while background encoding is still running)."""
        return self._ranking_profile().name

    @property
    def components(self) -> tuple[str, ...]:
        """The component names the hits of the profile actually ranking carry."""
        usage = ("usage",) if self.usage_prior is not None and self.usage_prior.active else ()
        return (*component_names(self._ranking_profile()), *usage)

    def _ranking_profile(self) -> Profile:
        if "dense" in self.profile.signals and not self.dense_ready:
            return self._lexical_profile
        return self.profile

    def __len__(self) -> int:
        return len(self.store)

    def __contains__(self, name: object) -> bool:
        return name in self.store.docs

    @_locked
    def tools(self) -> list[ToolSpec]:
        """Indexed tools in insertion order."""
        return [e.tool for e in self.store.docs.values()]

    @_locked
    def add(self, tools: Iterable[ToolSpec]) -> list[str]:
        """Index new tools (or replace changed ones). Unchanged tools are not re-tokenized and,
        with the dense signal, only new texts are encoded. Returns the names (re)indexed."""
        with no_gc():
            return self._add(list(tools))

    def _add(self, tools: list[ToolSpec]) -> list[str]:
        docs = self.store.docs
        previous = [docs[t.name].tool for t in tools if t.name in docs]
        changed = self.store.add(tools)
        replaced = set(changed)
        self._name_keys.forget([t for t in previous if t.name in replaced])
        self._name_keys.add(docs[name].tool for name in changed)
        if changed and self._worker is not None and "dense" in self.profile.signals:
            docs = self.store.docs
            with self._dense_cond:
                for n in changed:
                    self._pending[n] = dense_text(docs[n].tool, docs[n].server_description)
                    self._vectors.pop(n, None)
                self._schedule_locked()
        elif changed and self._encoder is not None:
            docs = self.store.docs
            texts = [dense_text(docs[n].tool, docs[n].server_description) for n in changed]
            encoded = [0]
            vecs = dense_mod.embed_tools(
                self._encoder, texts, self._vec_cache, progress=functools.partial(self._encoded, counter=encoded)
            )
            with self._dense_cond:
                self._round_done = 0
            with self._dense_cond:
                for name, vec in zip(changed, vecs, strict=True):
                    self._vectors[name] = vec
                    self._dense_dirty.add(name)
        return changed

    @_locked
    def remove(self, names: Iterable[str]) -> list[str]:
        """Remove tools by exact name (unknown names ignored). Returns the names removed."""
        tools = [self.store.docs[n].tool for n in dict.fromkeys(names) if n in self.store.docs]
        gone = self.store.remove([t.name for t in tools])
        self._name_keys.forget(tools)
        with self._dense_cond:
            for name in gone:
                self._vectors.pop(name, None)
                self._pending.pop(name, None)
            self._dense_cond.notify_all()
        return gone

    @_locked
    def set_server_descriptions(self, descriptions: dict[str, str]) -> list[str]:
        """Replace the server descriptions; re-indexes only the tools of servers whose changed."""
        old = self.store.server_descriptions
        changed = {s for s in set(old) | set(descriptions) if old.get(s) != descriptions.get(s)}
        self.store.server_descriptions = dict(descriptions)
        if not changed:
            return []
        return self.add([e.tool for e in self.store.docs.values() if (e.tool.server or "") in changed])

    # -- scoring ----------------------------------------------------------------------------
    @_locked
    def signals(self, texts: Sequence[str], which: Iterable[str] | None = None) -> list[Signals]:
        """Raw signals for several texts at once (dense queries are encoded in one batch).

        Args:
            texts: query texts. which: signal names (default: the profile's signals).

        Returns:
            One :class:`Signals` per text; every vector is float64[len(self)].
        """
        m = self.store.matrices()
        wanted = set(self._ranking_profile().signals if which is None else which)
        queries = [Query.parse(t, self.store) for t in texts]
        qvecs = None
        if "dense" in wanted and self._encoder is not None:
            qvecs = self.query_vectors.vectors(self._encoder, list(texts))
        out: list[Signals] = []
        for i, q in enumerate(queries):
            raw: dict[str, np.ndarray] = {}
            gate = cjk_gate(m, q, MIN_CJK_MATCHES)
            if "bm25f" in wanted:
                raw["bm25f"] = self._bm25f.score(m, q) * gate
            if "field_tfidf" in wanted:
                raw["field_tfidf"] = self._tfidf.score(m, q) * gate
            if "sk_tfidf" in wanted:
                raw["sk_tfidf"] = self._sk.score(m, q) * gate
            if "keyword" in wanted:
                raw["keyword"] = self._kw.score(m, q, self.store) * gate
            if "dense" in wanted:
                if qvecs is not None and m.n_docs:
                    raw["dense"] = self._dense_scores(m, qvecs[i])
                else:
                    raw["dense"] = np.zeros(m.n_docs)
            out.append(Signals(q, raw))
        return out

    def _gate(self, m: Matrices, sig: Signals, total: np.ndarray, prof: Profile) -> float:
        if prof.gate == "none" or not m.n_docs:
            return 1.0
        best = int(np.argmax(sig.raw["bm25f"])) if "bm25f" in sig.raw else int(np.argmax(total))
        lexical = np.sqrt(self._bm25f.coverage(m, sig.query, best)) if total.max() > 0 else 0.0
        if prof.gate == "lexical+dense" and "dense" in sig.raw:
            p = prof
            conf = (float(sig.raw["dense"].max()) - p.dense_conf_lo) / (p.dense_conf_hi - p.dense_conf_lo)
            lexical = max(lexical, min(1.0, max(0.0, conf)))
        return float(lexical)

    @_locked
    def score_all(
        self, text: str, profile: Profile | None = None
    ) -> tuple[Matrices, dict[str, np.ndarray], dict[str, np.ndarray], Query]:
        """Weighted components (gated; their sum is the final score) and raw signals per tool.

        Args:
            text: the query. profile: the profile to score with (default: the one ranking now).

        Returns:
            ``(matrices, components, raw, query)``; components and raw map component names
            (``bm25f``, ``dense``, ``tfidf``, ``keyword``) to float64[N]; ``raw`` also has
            ``gate`` (a length-1 array).
        """
        m = self.store.matrices()
        prof = profile or self._ranking_profile()
        subs = split_subqueries(text) if prof.multi_query else []
        sigs = self.signals([text, *subs], prof.signals)
        comps = prof.fuse(sigs[0].raw)
        if subs:
            sub_comps = [prof.fuse(s.raw) for s in sigs[1:]]
            beta = prof.multi_weight
            comps = {k: (1 - beta) * v + beta * np.mean([c[k] for c in sub_comps], axis=0) for k, v in comps.items()}
        taken = None
        if "dense" in comps and "bm25f" in comps:
            q0 = sigs[0].query
            comps["dense"], taken = hold_stuffed_dense(comps["dense"], *(b.score(m, q0) for b in self._both_bm25f))
        total = sum(comps.values(), np.zeros(m.n_docs))
        gate = self._gate(m, sigs[0], total, prof)
        components = {COMPONENT_NAMES[k]: v * gate for k, v in comps.items()}
        raw = {COMPONENT_NAMES[k]: v for k, v in sigs[0].raw.items()}
        raw["gate"] = np.asarray([gate])
        if taken is not None and taken.any():
            raw["dense_held"] = taken * gate  # what the stuffing bound took (the explanation says it)
        return m, components, raw, sigs[0].query

    def rank(self, text: str, limit: int = 10, *, required: Sequence[str] = ()) -> list[ScoredTool]:
        """The hits of :meth:`ranked` (without the profile's name)."""
        return self.ranked(text, limit, required=required)[1]

    @_locked
    def ranked(self, text: str, limit: int = 10, *, required: Sequence[str] = ()) -> tuple[str, list[ScoredTool]]:
        """Top tools for ``text``, best first, and the name of the profile that ranked them (read
        once: background encoding may switch the profile between two searches, never within one);
        tools scoring 0 are left out.

        Args:
            text: free text (any string; never raises).
            limit: maximum number of results (≤ 0 gives none).
            required: words every result's *name* must contain (after tokenization and
                stemming); they filter but add no score, unless ``text`` has no terms of its
                own, in which case they are also what is scored.

        Returns:
            ``(profile, [ScoredTool])``, scores in [0, 1]; ties broken by name; a query that is
            exactly a tool's full or bare name (case-insensitive), or spells it in words ("list
            issues" for ``list_issues``, :mod:`.name_keys`), puts that tool first with score 1.0
            and ``exact_name=True``.
        """
        prof = self._ranking_profile()
        return prof.name, self._rank(prof, text if isinstance(text, str) else str(text), limit, required)

    def _rank(self, prof: Profile, text: str, limit: int, required: Sequence[str]) -> list[ScoredTool]:
        if limit <= 0 or not len(self.store):
            return []
        if required and not query_terms(text):
            text = " ".join([text, *required])
        m, comps, raw, query = self.score_all(text, prof)
        total = sum(comps.values(), np.zeros(m.n_docs))
        shares = self.usage_prior.shares(self.store, m) if self.usage_prior is not None else None
        if shares is not None and self.usage_prior is not None:
            comps = self.usage_prior.mix(comps, shares, total, float(raw["gate"][0]))
            raw["usage"], total = shares, sum(comps.values(), np.zeros(m.n_docs))
        exact_idx = self._name_keys.positions(m, text) if self._name_keys.may_name(text) else []
        mask = required_mask(self.store.vocab, m, required) if required else None
        keep = total > 1e-12
        if exact_idx:
            keep[exact_idx] = True
        if mask is not None:
            keep &= mask
        cand = np.flatnonzero(keep)
        if not len(cand):
            return []
        exact_set = set(exact_idx)
        boosted = total[cand]
        if exact_idx:  # exact names rank first (score 1.0, ties by name)
            boosted = np.where(np.isin(cand, exact_idx), 3.0, boosted)
        if len(cand) > 4 * limit + 16:
            kth = np.partition(-boosted, limit - 1)[limit - 1]
            sel = boosted >= -kth - 1e-12
            cand, boosted = cand[sel], boosted[sel]
        rounded = -np.round(boosted, 12)
        order: np.ndarray | list[int]
        if len(cand) > 1_000:  # mass ties: sort by the view's name ranks
            order = np.lexsort((m.name_rank[cand], rounded))[:limit]
        else:
            names = m.names
            order = sorted(range(len(cand)), key=lambda j: (rounded[j], names[cand[j]]))[:limit]
        out: list[ScoredTool] = []
        capped = self._bm25f.capped(m, query) if "bm25f" in prof.signals else np.zeros(m.n_docs, dtype=bool)
        terms = [(tid, query.surfaces[self.store.terms[tid]]) for tid in query.ids.tolist()]
        for j in order:
            i = int(cand[j])
            name = m.names[i]
            parts = {k: float(v[i]) for k, v in comps.items()}
            score = float(total[i])
            is_exact = i in exact_set
            if is_exact:
                parts["exact_name"] = max(0.0, 1.0 - score)
                score = 1.0
            score = min(1.0, max(0.0, score))
            raws = {k: float(v[i]) if k != "gate" else float(v[0]) for k, v in raw.items()}
            held = (held_note(raws["dense_held"], parts["dense"]),) if raws.get("dense_held", 0.0) > 0 else ()
            out.append(
                ScoredTool(
                    tool=self.store.docs[name].tool,
                    score=score,
                    components=parts,
                    raw=raws,
                    matched=matched_terms(self.store, name, query, FIELDS),
                    exact_name=is_exact,
                    notes=(*(stuffing_notes(m, name, terms, self._bm25f) if capped[i] else ()), *held),
                )
            )
        return out
