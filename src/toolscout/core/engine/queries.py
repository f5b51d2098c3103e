"""What callers read from the engine: servers, tools, rankings, the context report.

A mixin of :class:`~toolscout.core.engine.facade.Engine` (kept apart so the facade stays readable): the
CLI, the session and the TUI ask these questions here instead of reaching into the engine's
catalog, search index or server pool. It uses the engine's ``catalog``, ``search``, ``pool``,
``sizes``, ``settings`` and warnings.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..catalog.registry import ToolCatalog, ToolState
from ..mcp.server_config import ServerConfig
from ..models import ServerState, ServerStatus, ToolSpec
from ..search.results import ScoredTool, SearchResult
from ..settings.layers import Settings
from ..tokens import ToolLimit, tool_tokens
from .context import ContextReport, build_context_report
from .server_sizes import ServerSizes, server_key

if TYPE_CHECKING:
    from ..mcp.pool import ServerPool
    from ..search.tool_search import ToolSearch


@dataclass(frozen=True)
class IndexReport:
    """The search index after a build (``toolscout index``).

    Attributes:
        tools: tools indexed. encoded: tool texts encoded by this run (the rest came from the
        vector cache). servers: servers whose tools are indexed, sorted. vector_cache: the
        on-disk vector cache, or None (memory only). profile: the ranking profile in use.
        fallback_reason: why the configured profile is not in use, or None.
    """

    tools: int
    encoded: int
    servers: list[str]
    vector_cache: Path | None
    profile: str
    fallback_reason: str | None


class EngineQueries:
    """The engine's read side (see the module docstring)."""

    settings: Settings
    catalog: ToolCatalog
    search: ToolSearch
    pool: ServerPool
    sizes: ServerSizes
    warnings: list[str]
    source_warnings: dict[str, list[str]]
    _file_servers: dict[str, ServerStatus]
    indexed_servers: frozenset[str]

    # -- servers ----------------------------------------------------------------------------
    def server_statuses(self) -> list[ServerStatus]:
        """Every known server (configured MCP servers, then file catalogs), in a stable order."""
        return [*self.pool.statuses(), *self._file_servers.values()]

    def mcp_statuses(self) -> list[ServerStatus]:
        """The configured MCP servers only (not file catalogs), in configuration order."""
        return self.pool.statuses()

    def server_config(self, name: str) -> ServerConfig | None:
        """The configuration of MCP server ``name`` (None: a file catalog or unknown)."""
        return self.pool.configs.get(name)

    def can_reconnect(self, name: str) -> bool:
        """True when MCP server ``name`` can be started again (``Engine.reconnect``): configured,
        a valid entry, and not waiting for the folder's approval."""
        cfg = self.pool.configs.get(name)
        return cfg is not None and cfg.error is None and not cfg.not_approved

    @property
    def server_names(self) -> list[str]:
        """Names of the configured MCP servers (empty: a catalog-only or built-ins-only run)."""
        return list(self.pool.configs)

    def unapproved_servers(self) -> list[ServerConfig]:
        """Project servers that wait for the folder's approval (:mod:`toolscout.core.policy.trust`)."""
        return [cfg for cfg in self.pool.configs.values() if cfg.not_approved]

    def pending_servers(self) -> list[str]:
        """Names of servers that are still connecting."""
        return [s.name for s in self.server_statuses() if s.state is ServerState.CONNECTING]

    def unindexed_pending(self) -> list[str]:
        """Servers still connecting whose tools are not known from a prebuilt index either: the
        ones a search cannot find yet (:mod:`~toolscout.core.engine.index_snapshot`)."""
        return [name for name in self.pending_servers() if name not in self.indexed_servers]

    def pending_sizes(self) -> dict[str, int | None]:
        """Servers still connecting → their schema tokens the last time they connected (None:
        never seen). Used by the auto tool-search decision."""
        out: dict[str, int | None] = {}
        for name in self.pending_servers():
            cfg = self.pool.configs.get(name)
            out[name] = self.sizes.get(server_key(cfg)) if cfg is not None else None
        return out

    def server_schema_tokens(self, name: str) -> int:
        """Tokens of the full definitions of server ``name``'s deferrable tools now."""
        return sum(tool_tokens(t) for t in self.catalog.server_tools(name) if self.catalog.is_deferred(t))

    def server_warnings(self, name: str) -> list[str]:
        """Server ``name``'s distinct warnings (dropped tools, schema repairs, stray output), in
        order; its failure reason is its status's ``error``, not repeated here."""
        return [w for w in self.source_warnings.get(name, ()) if not w.startswith("failed: ")]

    def server_instructions(self, name: str) -> str | None:
        """The ``instructions`` server ``name`` gave when it connected, or None."""
        return self.catalog.instructions.get(name)

    # -- tools ------------------------------------------------------------------------------
    def tool(self, name: str) -> ToolSpec | None:
        """The tool with this canonical name, or None."""
        return self.catalog.get(name)

    def tools(self) -> list[ToolSpec]:
        """Every visible tool of the catalog, in catalog order (deny rules hide tools)."""
        return self.catalog.tools()

    def tool_state(self, tool: ToolSpec, loaded_names: set[str], *, defer: bool = True) -> ToolState:
        """What ``tool`` is to the model (:meth:`ToolCatalog.state
        <toolscout.core.catalog.registry.ToolCatalog.state>`): ``core``, ``always-load``, ``loaded``,
        ``deferred`` or ``inline`` (``defer`` False: the session sends every tool inline)."""
        return self.catalog.state(tool, loaded_names, defer=defer)

    # -- ranking ----------------------------------------------------------------------------
    def search_tools(self, query: str, limit: int | None = None) -> SearchResult:
        """Run a ToolSearch query (grammar of :mod:`toolscout.core.search`). Never raises."""
        return self.search.search(query, limit, pending_servers=self.unindexed_pending())

    def rank(self, text: str, limit: int = 5) -> list[ScoredTool]:
        """Deferred tools ranked for free text (recommendations), best first, with no display
        floor; each hit carries its score components (:meth:`explain`). Never raises."""
        return self.search.rank(text, limit)

    def explain(self, hit: ScoredTool) -> str:
        """Why ``hit`` (from :meth:`search_tools`) scored what it did: its signals, weights and
        matched words, in lines of text (:func:`toolscout.core.search.render.explain`)."""
        from ..search.render import explain

        return explain(hit)

    @property
    def ranker_status(self) -> str:
        """The ranking profile in use and, while it differs from the configured one, why
        (``bm25f (encoding 120 tools for default)``); ``RankerReady`` says when it changes."""
        return self.search.status

    @property
    def ranker_components(self) -> tuple[str, ...]:
        """The score components the ranking in use reports (``("bm25f", "dense")``), for table columns."""
        return self.search.components

    @property
    def active_ranker(self) -> str:
        """The ranking profile in use (``bm25f`` while the ``default`` profile's vectors are
        being encoded or the dense extra is missing). Builds the index if needed."""
        return self.search.active_profile

    def warm_search(self) -> None:
        """Build the search index now (blocking: call it in a worker thread from a loop)."""
        self.search.warm()

    def wait_ranker_ready(self, timeout: float | None = None) -> bool:
        """Build the index and wait (blocking) for background dense encoding; True when the
        dense signal is ready (False: still encoding at ``timeout``, unavailable, or a profile
        without it). ``timeout`` in seconds (None: no limit)."""
        return self.search.wait_ready(timeout)

    @property
    def vectors_pending(self) -> int:
        """Tool texts still to be encoded for the dense ranker (0: none or no dense signal)."""
        return self.search.index.dense_pending

    def index_report(self) -> IndexReport:
        """The search index now (builds it if needed)."""
        index = self.search.index
        return IndexReport(
            tools=len(index),
            encoded=index.encoded_texts,
            servers=sorted({t.server for t in index.tools() if t.server}),
            vector_cache=index.vector_cache_path,
            profile=index.active_profile,
            fallback_reason=index.fallback_reason,
        )

    # -- context ----------------------------------------------------------------------------
    def context_report(
        self,
        *,
        model: str | None = None,
        strategy: str | None = None,
        loaded_names: set[str] | None = None,
        usage_counts: dict[str, int] | None = None,
        tool_limit: ToolLimit | None = None,
        provider: str | None = None,
        base_url: str | None = None,
    ) -> ContextReport:
        """Per-server token usage and the mode decision for the current catalog; ``tool_limit``:
        the most tools one request to the provider may carry (None: no limit known); with
        ``provider`` (and its ``base_url``), also the deferral path (native or portable) and why."""
        report = build_context_report(
            self.catalog,
            self.settings,
            model=model,
            strategy=strategy,
            loaded_names=loaded_names,
            usage_counts=usage_counts,
            pending=self.pending_sizes(),
            tool_limit=tool_limit,
            provider=provider,
            base_url=base_url,
        )
        report.states = {
            s.name: (s.state.value, s.error if s.state is ServerState.FAILED else None) for s in self.server_statuses()
        }
        report.warnings = list(dict.fromkeys([*report.warnings, *self.warnings]))
        return report
