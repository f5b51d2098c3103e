"""ToolSearch: the query grammar on top of a :class:`ToolIndex` kept in sync with a catalog.

Every visible tool but the two proxies (ToolSearch, ExecuteTool) is searchable
(:func:`searchable`): deferred tools, and loaded ones (core built-ins such as Read and Bash,
always-load tools), which a person asking "run a shell command" must find too. A loaded tool
among the hits is also named in ``SearchResult.already_loaded`` ("call it directly": its
definition is in the model's tool list already). Tools hidden by the catalog's visibility filter
are invisible to every mode (they are never indexed, and hits are re-checked against the catalog
at query time in case the filter changed since the last :meth:`ToolSearch.sync`).

``search`` never raises: an unexpected internal error is reported in ``SearchResult.errors``.

The index is built on first use (:attr:`ToolSearch.index`), not at construction: tokenizing a
1,000-tool catalog and loading the dense model take seconds, and commands that never search
(``toolscout context``, ``call``, ``mcp list``) should not pay for them. :meth:`ToolSearch.warm`
builds it ahead of time.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import re
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..catalog.registry import ALWAYS_CORE, CatalogDelta, ToolCatalog
from ..models import ToolSpec
from ..names import written_name
from ..settings.layers import Settings
from .grammar import ParsedQuery, parse_query, why_nothing
from .results import ScoredTool, SearchResult
from .select import select_tools
from .usage_prior import UsagePrior

if TYPE_CHECKING:  # numpy, scipy and scikit-learn: imported when the index is first built
    from . import dense as dense_mod
    from .index import ToolIndex

log = logging.getLogger(__name__)

MAX_LIMIT = 50


class ToolSearch:
    """Catalog-aware ToolSearch.

    Args:
        catalog: the tool registry; its visible tools but the proxies are searched (:func:`searchable`).
        settings: ``toolSearch.ranker``, ``toolSearch.weights.*``, ``toolSearch.maxResults``,
            ``toolSearch.displayFloor`` are read (defaults when None).
        dense_cache: SQLite file for tool vectors; ``"auto"`` = the user cache dir (see
            :func:`~.dense.default_cache_path`), None = memory only.
        encoder: passed to :class:`ToolIndex` (False disables the dense signal).
        background_dense: encode tool texts in a worker thread (see :class:`ToolIndex`); the
            engine uses this so a large catalog never blocks the event loop.
    """

    def __init__(
        self,
        catalog: ToolCatalog,
        settings: Settings | None = None,
        *,
        dense_cache: Path | str | None = "auto",
        encoder: dense_mod.DenseEncoder | bool | None = None,
        background_dense: bool = False,
        background_sync: bool = False,
    ) -> None:
        self.catalog = catalog
        self.settings = settings or Settings()
        profile = str(self.settings["toolSearch.ranker"])
        weights = None
        if profile == "hybrid":
            weights = {
                "keyword": float(self.settings["toolSearch.weights.keyword"]),
                "tfidf": float(self.settings["toolSearch.weights.tfidf"]),
            }
        self._index_args = (profile, weights, dense_cache, encoder)
        self._background_dense = background_dense
        #: ``on_progress(done, total)`` while tool texts are encoded for the dense signal (called
        #: from the encoding thread); set it before the index is built.
        self.on_progress: Callable[[int, int], None] | None = None
        #: ``on_ranker_ready()`` (from the encoding thread) when the ranking settles: the fused
        #: ranking took over once tool vectors were encoded, or the index fell back to lexical.
        self.on_ranker_ready: Callable[[], None] | None = None
        self._index: ToolIndex | None = None
        #: tools run in this project rank a little higher (``toolSearch.usagePrior``, :mod:`.usage_prior`)
        self.usage = UsagePrior(lambda: float(self.settings["toolSearch.usagePrior"]))
        self._dense_held = False
        self._lock = threading.RLock()  # first build and sync may race with a search in a thread
        #: What the last :meth:`sync` before the first build saw: (searchable tools, server descriptions).
        self._snapshot: tuple[list[ToolSpec], dict[str, str]] = ([], {})
        #: Catalog changes captured by :meth:`sync`, not yet applied to the index (background sync).
        self._queue: list[_Change] = []
        self._queue_lock = threading.Lock()
        self._syncer = ThreadPoolExecutor(1, thread_name_prefix="toolscout-index") if background_sync else None
        self.sync()

    @property
    def index(self) -> ToolIndex:
        """The ranked index, built (tokenized, dense model loaded, vectors encoded) on first use,
        with every catalog change captured so far applied."""
        with self._lock:
            index = self._build_index()
            self._drain_locked()
            return index

    def _build_index(self) -> ToolIndex:
        if self._index is None:
            profile, weights, dense_cache, encoder = self._index_args
            from .index import ToolIndex
            from .vector_cache import default_cache_path

            cache = default_cache_path() if dense_cache == "auto" else dense_cache
            tools, descriptions = self._snapshot
            self._index = ToolIndex(
                tools,
                profile,
                weights=weights,
                server_descriptions=descriptions,
                dense_cache=Path(cache) if isinstance(cache, str) else cache,
                encoder=encoder,
                background_dense=self._background_dense,
                dense_cache_bytes=int(float(self.settings["toolSearch.vectorCacheMB"]) * 2**20),
                on_progress=self._progress,
                hold_dense=self._dense_held,
            )
            self._index.on_ranker_ready = self._ranker_ready
            self._index.usage_prior = self.usage
            self._snapshot = ([], {})
        return self._index

    def hold_dense(self, held: bool) -> None:
        """Pause (True) or resume (False) background encoding of tool texts
        (:meth:`~.dense_jobs.BackgroundDense.hold_dense`); applies to an index built later too."""
        with self._lock:
            self._dense_held = held
            index = self._index
        if index is not None:
            index.hold_dense(held)

    def _ranker_ready(self) -> None:
        if self.on_ranker_ready is not None:
            self.on_ranker_ready()

    def _progress(self, done: int, total: int) -> None:
        if self.on_progress is not None:
            self.on_progress(done, total)

    def warm(self) -> None:
        """Build the index now (e.g. in the background before the first query). The heavy
        modules are imported before the lock is taken, so a ``sync`` from the event loop meanwhile
        waits only for the build itself."""
        importlib.import_module(".index", __package__)
        _ = self.index

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Build the index and wait for background dense encoding (True when it is in use).

        Args:
            timeout: seconds to wait at most for the encoder (None: no limit).
        """
        return self.index.wait_dense(timeout)

    @property
    def status(self) -> str:
        """One line for the UI: the active profile and, while it differs, why."""
        if self._index is None:
            return "index not built yet"
        index = self._index
        active = index.active_profile
        if active == index.requested_profile:
            return active
        if index.dense_pending:
            return f"{active} (encoding {index.dense_pending} tools for {index.requested_profile})"
        return f"{active} ({index.fallback_reason or 'fallback'})"

    def close(self) -> None:
        """Stop background work (safe to call twice)."""
        if self._syncer is not None:
            self._syncer.shutdown(wait=False, cancel_futures=True)
        if self._index is not None:
            self._index.close()

    @property
    def components(self) -> tuple[str, ...]:
        """The component names the next hits carry (``("bm25f", "dense")``); the configured
        profile's until the index is built (never builds it)."""
        if self._index is not None:
            return self._index.components
        from .profiles import component_names, make_profile

        profile, weights, _, _ = self._index_args
        return component_names(make_profile(profile, weights))

    @property
    def active_profile(self) -> str:
        """The ranking profile in use (``bm25f`` when ``default`` lacks the dense extra)."""
        return self.index.active_profile

    @property
    def limit(self) -> int:
        """Default number of results (``toolSearch.maxResults``, capped at 50)."""
        return _clamp(self.settings["toolSearch.maxResults"], 5)

    @property
    def floor(self) -> float:
        """Scores below this are not shown (``toolSearch.displayFloor``)."""
        try:
            return float(self.settings["toolSearch.displayFloor"])
        except (TypeError, ValueError):
            return 0.10

    # -- sync ---------------------------------------------------------------------------
    def sync(self, delta: CatalogDelta | None = None) -> None:
        """Bring the index up to date with the catalog.

        Args:
            delta: what one catalog change did (only those tools, and the tools of
                ``delta.server``, are looked at); None compares the whole catalog. Either way,
                indexed tools that are no longer visible are dropped. Before the
                index is first built this only notes what a sync would index now; the first
                use indexes exactly that (the same contents as syncing eagerly).
        """
        if self._syncer is not None and self._index is not None and delta is not None:
            # background sync: read the catalog here (it changes on this thread only), index it
            # in the worker; any use of :attr:`index` first applies what is still queued
            change = self._capture(delta)
            with self._queue_lock:
                self._queue.append(change)
            with contextlib.suppress(RuntimeError):  # closed: the next use of the index applies it
                self._syncer.submit(self._drain)
            return
        with self._lock:
            if self._index is None:
                self._snapshot = (searchable(self.catalog), dict(self.catalog.server_descriptions))
            else:
                self._drain_locked()
                self._apply(self._capture(delta))

    def _capture(self, delta: CatalogDelta | None) -> _Change:
        """What applying ``delta`` to the index needs, read from the catalog now. For a delta
        only its own tools are read (not the whole catalog: 47 servers connecting make ~100
        deltas on the event loop); the sweep for tools no longer visible then
        looks each indexed tool up when the change is applied (:meth:`_apply`)."""
        if delta is None:
            found = {t.name: t for t in searchable(self.catalog)}
            return _Change(dict(self.catalog.server_descriptions), (), list(found.values()), frozenset(found))
        names = list(delta.added)
        if delta.server is not None:
            names += [t.name for t in self.catalog.server_tools(delta.server)]
        add = [t for t in (self.catalog.get(n) for n in dict.fromkeys(names)) if t is not None and self._searchable(t)]
        return _Change(dict(self.catalog.server_descriptions), tuple(delta.removed), add, None)

    def _searchable(self, tool: ToolSpec) -> bool:
        return tool.name not in ALWAYS_CORE and self.catalog.is_visible(tool)

    def _still_searchable(self, name: str) -> bool:
        """Whether the catalog still has ``name`` as a visible searchable tool (a dict lookup and
        pure predicates: safe from the index worker while the loop changes the catalog)."""
        tool = self.catalog.get(name)
        return tool is not None and self._searchable(tool)

    def _apply(self, change: _Change) -> None:
        index = self._index
        assert index is not None
        index.set_server_descriptions(change.descriptions)
        index.remove(change.removed)
        index.add(change.add)
        keep = change.searchable.__contains__ if change.searchable is not None else self._still_searchable
        index.remove([n for n in list(index.store.docs) if not keep(n)])  # no longer visible

    def _drain(self) -> None:
        with self._lock:
            self._drain_locked()

    def _drain_locked(self) -> None:
        """Apply every queued change, a run of delta changes merged into one (a re-list storm of
        thousands of renamed tools is one removal, one add and one sweep, not one per delta)."""
        while True:
            with self._queue_lock:
                if not self._queue:
                    return
                batch, self._queue = self._queue, []
            for change in _merged(batch):
                self._apply(change)

    # -- search -------------------------------------------------------------------------
    def rank(self, text: str, limit: int = 5) -> list[ScoredTool]:
        """Ranked deferred tools for free text (prefetch/recommendations: loaded tools need no
        loading, so they are left out); no floor applied."""
        try:
            with self._lock:
                want = _clamp(limit, 5)
                ranked = self.index.rank(text, want * 2 + 10)
                hits = [h for h in self._visible(ranked) if self.catalog.is_deferred(h.tool)]
                if len(hits) < want and len(ranked) == want * 2 + 10:  # loaded tools took the places
                    ranked = self.index.rank(text, len(self.index))
                    hits = [h for h in self._visible(ranked) if self.catalog.is_deferred(h.tool)]
                return hits[:want]
        except Exception:
            log.exception("ToolSearch.rank failed")
            return []

    def search(self, query: str, limit: int | None = None, *, pending_servers: Iterable[str] = ()) -> SearchResult:
        """Run one ToolSearch query (grammar in :mod:`.grammar`). Never raises.

        Args:
            query: the model's query string.
            limit: maximum hits (default ``toolSearch.maxResults``; capped at 50).
            pending_servers: servers still connecting (named in errors for ``select:``).
        """
        pending = sorted({str(s) for s in pending_servers})
        try:
            parsed = parse_query(query)
        except Exception as exc:
            return SearchResult(str(query)[:200], "keyword", errors=[f"could not parse query: {exc}"])
        result = SearchResult(query if isinstance(query, str) else str(query), parsed.mode, pending_servers=pending)
        try:
            with self._lock:
                if parsed.mode == "select":
                    select_tools(self.catalog, parsed, result, set(pending))
                else:
                    self._ranked(parsed, result, _clamp(limit, self.limit))
        except Exception as exc:
            log.exception("ToolSearch.search failed")
            result.errors.append(f"internal search error: {type(exc).__name__}: {exc}")
        for hit in result.hits:
            server = hit.tool.server
            text = self.catalog.instructions.get(server) if server else None
            if server and text and server not in result.instructions:
                result.instructions[server] = text
        return result

    def _visible(self, hits: list[ScoredTool]) -> list[ScoredTool]:
        out = []
        for hit in hits:
            current = self.catalog.get(hit.tool.name)
            if current is not None and self._searchable(current):
                out.append(hit)
        return out

    def _ranked(self, parsed: ParsedQuery, result: SearchResult, limit: int) -> None:
        if not parsed.text and not parsed.required:
            result.no_good_match = True
            result.errors.append("empty query: give keywords, discover:<task> or select:<names>")
            return
        named = [] if parsed.required else self._named(parsed.text)
        limit = max(limit, min(len(named), MAX_LIMIT))
        result.ranker, ranked = self.index.ranked(parsed.text, limit * 2 + 10, required=parsed.required)
        hits = self._visible(ranked)
        by_name = {h.tool.name: h for h in hits}
        exact = [_exact_hit(by_name.get(t.name), t) for t in named]
        rest = [h for h in hits if h.score >= self.floor and h.tool.name not in {t.name for t in named}]
        result.hits = [*exact, *rest][:limit]
        result.already_loaded = [h.tool.name for h in result.hits if not self.catalog.is_deferred(h.tool)]
        result.unmatched_terms = self._unmatched(" ".join([parsed.text, *parsed.required]))
        if not result.hits:
            result.no_good_match = True
            result.errors.extend(why_nothing(parsed, searchable(self.catalog), bool(result.pending_servers)))

    def _named(self, text: str) -> list[ToolSpec]:
        """Searchable tools the query names exactly, in query order: every token that is a tool
        name (any form :meth:`ToolCatalog.resolve` accepts). In a query of several words only
        name-shaped tokens count (``_``, ``-``, ``.`` or camelCase), so a plain word that is also
        some tool's bare name does not jump ahead of better matches."""
        tokens = [t for t in (written_name(p) for p in _TOKEN_SPLIT.split(text[:2000])) if t]
        named: dict[str, ToolSpec] = {}
        for token in tokens[:MAX_LIMIT]:
            if len(tokens) > 1 and not _NAME_SHAPED.search(token):
                continue
            for tool in self.catalog.resolve(token):
                if self._searchable(tool):
                    named.setdefault(tool.name, tool)
        return list(named.values())

    def _unmatched(self, text: str) -> list[str]:
        store = self.index.store
        from .lexical import Query

        q = Query.parse(text, store)
        out = [q.surfaces[t] for t in q.unknown if t not in q.compounds]  # not createIssue → createissue
        return list(dict.fromkeys(out))


_TOKEN_SPLIT = re.compile(r"[\s,;]+")
_NAME_SHAPED = re.compile(r"[_\-.]|[a-z][A-Z]")


def _exact_hit(ranked: ScoredTool | None, tool: ToolSpec) -> ScoredTool:
    """A named tool as a hit with score 1.0 (its ranked explanation kept when it has one)."""
    if ranked is None:
        return ScoredTool(tool=tool, score=1.0, components={"exact_name": 1.0}, raw={}, exact_name=True)
    return replace(
        ranked, score=1.0, exact_name=True, components={**ranked.components, "exact_name": max(0.0, 1.0 - ranked.score)}
    )


@dataclass(frozen=True)
class _Change:
    """One catalog change as the index needs it (see :meth:`ToolSearch.sync`)."""

    descriptions: dict[str, str]
    removed: tuple[str, ...]
    add: list[ToolSpec]
    #: every searchable tool's name (a full compare), or None: look each indexed tool up instead
    searchable: frozenset[str] | None


def _merged(changes: list[_Change]) -> list[_Change]:
    """``changes`` with each run of delta changes (``searchable`` None) merged into one that has
    the same effect: removed names united, the latest definition of each added tool, minus
    those a later change removed; the last change's server descriptions."""
    out: list[_Change] = []
    for change in changes:
        prev = out[-1] if out else None
        if prev is None or prev.searchable is not None or change.searchable is not None:
            out.append(change)
            continue
        gone = set(change.removed)
        add = {t.name: t for t in prev.add if t.name not in gone}
        add.update((t.name, t) for t in change.add)
        removed = tuple(dict.fromkeys([*prev.removed, *change.removed]))
        out[-1] = _Change(change.descriptions, removed, list(add.values()), None)
    return out


def _clamp(value: object, default: int) -> int:
    try:
        n: int = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return default
    return max(1, min(MAX_LIMIT, n))


def searchable(catalog: ToolCatalog) -> list[ToolSpec]:
    """The tools ToolSearch searches, in catalog order: every visible tool but the proxies
    ToolSearch and ExecuteTool (deferred tools, and loaded ones: core built-ins, always-load)."""
    return [t for t in catalog.tools() if t.name not in ALWAYS_CORE]
