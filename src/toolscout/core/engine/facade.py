"""The async facade the CLI, the session and the TUI all use.

An :class:`Engine` owns the catalog, the search index, the MCP server pool and the tool
executor. It reports through plain :mod:`toolscout.core.engine.events`; it never waits for a slow
server: :meth:`Engine.start` returns as soon as file catalogs and built-ins are registered, and
servers fill in as they connect (each in its own lifetime task, see :mod:`toolscout.core.mcp`).

Engine methods must be called on one asyncio event loop (the CLI's ``asyncio.run`` or Textual's).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..builtins.base import BuiltinTool, ToolContext
from ..calls.executor import ToolExecutor
from ..calls.result_cap import results_root
from ..catalog.registry import CatalogDelta, ToolCatalog
from ..mcp.pool import ServerPool
from ..mcp.server_config import ServerConfig
from ..mcp.server_names import assign_server_names, builtin_name_warnings
from ..models import ServerState, ServerStatus, ToolResult, ToolSpec
from ..policy.approvals import Approvals, Fingerprint, ToolChange
from ..policy.local_rules import allow_rules_file, forget_allow_rule, persist_allow_rule
from ..policy.permissions import Asker, Decision, PermissionPolicy
from ..policy.rule_sources import THIS_SESSION, RuleInForce, rules_in_force
from ..policy.trust import FolderTrust
from ..rules.specs import Workspace
from ..schemas import schema_warning_line
from ..settings.layers import Settings, changed_keys
from ..tokens import tool_tokens
from .catalog_files import CatalogFiles
from .events import (
    CatalogChanged,
    EngineWarning,
    EventSource,
    RankerReady,
    ServerStateChanged,
    SettingsChanged,
)
from .index_snapshot import PrebuiltCatalog
from .progress import CallProgressRelay, ProgressRelay
from .queries import EngineQueries
from .server_sizes import ServerSizes, server_key
from .server_sizes import default_path as sizes_path

if TYPE_CHECKING:
    from ..mcp.elicitation import Elicitor
    from ..mcp.progress import Report

log = logging.getLogger(__name__)


class Engine(CatalogFiles, PrebuiltCatalog, EngineQueries, EventSource):
    """Catalog + search + MCP servers + execution behind one async API.

    Args:
        settings: resolved settings (see :func:`toolscout.core.settings.layers.load_settings`).
        catalog_paths: catalog files or directories to load as if they were servers
            (their tools are searchable but not executable).
        builtins: built-in tools to register (objects implementing ``BuiltinTool``).
        core_names: names of built-ins that are core (always loaded); the rest are deferred.
        project_dir: the working directory for built-ins and ``.mcp.json`` discovery.
        mcp_servers: MCP servers to connect on :meth:`start` (see
            :func:`toolscout.core.mcp.config.load_mcp_config`); invalid entries (``error`` set)
            are shown as failed and never started.
        mcp_warnings: problems found while reading MCP configuration files.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        catalog_paths: Iterable[str | Path] = (),
        builtins: Iterable[BuiltinTool] = (),
        core_names: Iterable[str] = (),
        project_dir: str | Path | None = None,
        mcp_servers: Iterable[ServerConfig] = (),
        mcp_warnings: Iterable[str] = (),
    ) -> None:
        from ..search.tool_search import ToolSearch

        self._listeners = []
        self.settings = settings
        self.project_dir = Path(project_dir or Path.cwd())
        self.catalog = ToolCatalog(core_names=core_names, always_load=settings["toolSearch.alwaysLoad"])
        self.policy = PermissionPolicy.from_settings(settings)
        # Saved full tool results are readable like the project (the truncation note pages them with Read).
        self.policy.workspace = Workspace.of(
            self.project_dir, [*settings["permissions.additionalDirectories"], results_root()]
        )
        self.catalog.set_visibility(self.policy.is_visible)  # deny rules hide tools from search
        # tool vectors and catalog changes are indexed in worker threads, never on the event loop
        self.search = ToolSearch(self.catalog, settings, background_dense=True, background_sync=True)
        self.progress = ProgressRelay(self.emit)  # VectorsProgress while tool texts are encoded
        self.search.on_progress = self.progress
        self.search.on_ranker_ready = self._ranker_ready
        self._encoding_held = False
        self.builtins: dict[str, BuiltinTool] = {}
        self._catalog_paths = [Path(p) for p in catalog_paths]
        #: each ``catalog_paths`` entry that gave no tool → why (unreadable, not a catalog, empty)
        self.catalog_failures: dict[Path, str] = {}
        self._file_servers: dict[str, ServerStatus] = {}
        self.warnings: list[str] = [str(w) for w in settings.warnings]
        self._schema_warned: dict[str, tuple[str, ...]] = {}
        #: source (a server name, ``catalog`` ...) → its distinct warnings, in order.
        self.source_warnings: dict[str, list[str]] = {}
        #: whether the project folder's own config applies (set by the factory), see core.trust
        self.folder_trust: FolderTrust | None = None
        for tool in builtins:
            self.builtins[tool.spec.name] = tool
            self.catalog.add_builtin(tool.spec)
        self.search.sync()
        servers, renamed = assign_server_names(mcp_servers)  # no-op for loaded configs
        # a rule may name a server by its configured spelling (my.srv) or its canonical one
        self.policy.spellings = {cfg.configured_name or cfg.name: cfg.name for cfg in servers}
        for message in [*mcp_warnings, *renamed, *builtin_name_warnings(servers)]:
            self.warnings.append(f"mcp: {message}")
        for cfg in servers:
            if cfg.error:
                self.warnings.append(f"{cfg.name}: {cfg.error}")
        self.sizes = ServerSizes(sizes_path())
        self.pool = ServerPool(
            servers,
            connect_timeout=float(settings["mcp.timeout"]),
            call_timeout=float(settings["mcp.callTimeout"]),
            listener=self,
        )
        self.pool.low_priority = settings["mcp.serverPriority"] == "low"
        self.pool.server_sessions = settings["mcp.serverSessions"]
        self.executor = ToolExecutor(
            self.catalog,
            self.builtins,
            self.pool,
            self.policy,
            ToolContext(self.project_dir, private_host_allowed=self.policy.names_host),
            call_timeout=float(settings["mcp.callTimeout"]),
            warn=self.warn,
            file_servers=lambda: set(self._file_servers),
            approvals=Approvals(settings["permissions.approvedTools"]),
        )
        self.executor.remember_allow = self.remember_allow_rule
        self._change_warned: dict[str, tuple[str, ...]] = {}

    def _ranker_ready(self) -> None:
        """From the encoding thread: emit :class:`RankerReady` on the engine's loop."""
        event = RankerReady(self.search.status)
        loop = self.progress.loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(self.emit, event)
                return
        self.emit(event)

    def apply_settings(self, settings: Settings) -> dict[str, Any]:
        """Run with ``settings`` from now on (the next search, catalog view, context report) and
        emit :class:`~toolscout.core.engine.events.SettingsChanged` with what changed.

        ``settings`` are already validated (:func:`~toolscout.core.settings.layers.change_user_setting`
        or :func:`~toolscout.core.settings.layers.load_settings`). A running session takes its part
        through :meth:`Session.apply_settings <toolscout.core.session.session.Session.apply_settings>`,
        which calls this.

        Returns:
            Key → new value of every setting that changed (empty: nothing was emitted).
        """
        changed = changed_keys(self.settings, settings)
        self.settings = settings
        self.executor.approvals.set_saved(settings["permissions.approvedTools"])
        self.search.settings = settings
        self.catalog.set_always_load(settings["toolSearch.alwaysLoad"])
        self.pool.low_priority = settings["mcp.serverPriority"] == "low"  # servers started from now on
        if changed:
            self.emit(SettingsChanged(changed))
        return changed

    def warn(self, message: str, source: str = "") -> None:
        """Record a warning and emit it."""
        self.warnings.append(f"{source}: {message}" if source else message)
        if source and message not in (seen := self.source_warnings.setdefault(source, [])):
            seen.append(message)
        self.emit(EngineWarning(message, source))

    @property
    def allow_rules_file(self) -> Path | None:
        """Where an "always allow" answer is saved, or None when it lasts for this session only
        (a folder that is not approved): :mod:`toolscout.core.policy.local_rules`."""
        return allow_rules_file(self.settings, self.folder_trust)

    def remember_allow_rule(self, rule: str, approved: tuple[str, Fingerprint] | None = None) -> Path | None:
        """Save an "always allow" answer's ``rule`` (and the ``(tool name, fingerprint)`` it
        approved, :mod:`toolscout.core.policy.approvals`) to :attr:`allow_rules_file`. A file that
        cannot take it is a warning naming the file; the rule still applies for this session."""
        try:
            return persist_allow_rule(self.settings, self.folder_trust, rule, approved)
        except (OSError, ValueError) as exc:
            self.warn(
                f"could not save the allow rule {rule} ({exc}); it applies for this session only",
                source=str(self.allow_rules_file),
            )
            return None

    def permission_rules(self) -> list[RuleInForce]:
        """Every permission rule in force with the file (or flag, or session) it comes from
        (:func:`~toolscout.core.policy.rule_sources.rules_in_force`)."""
        trust = self.folder_trust
        return rules_in_force(
            self.policy,
            self.settings,
            project_trusted=trust is None or trust.approved,
            answers_file=self.allow_rules_file,
        )

    def forget_allow_rule(self, rule: str) -> Path:
        """Remove the saved "always allow" answer ``rule`` from its file and stop allowing it
        now, unless another source in force (a settings file, ``--allowed-tools``) still lists it.

        Returns:
            The file rewritten.

        Raises:
            LocalRuleError: no saved answers here, or the file does not list ``rule``.
            OSError: the file cannot be written.
        """
        others = [
            r
            for r in self.permission_rules()
            if r.kind == "allow" and r.rule == rule and not r.saved_answer and r.source != THIS_SESSION
        ]
        path = forget_allow_rule(self.settings, self.folder_trust, rule)
        self.policy.session_allow[:] = [r for r in self.policy.session_allow if r != rule]
        if not others:
            self.policy.allow[:] = [r for r in self.policy.allow if r != rule]
        return path

    # -- lifecycle ------------------------------------------------------------------------
    async def start(self, *, warm_search: bool = True) -> None:
        """Load catalog files, build the search index in a worker thread (when ``warm_search``),
        then start servers in the background. Returns without waiting for servers
        (see :meth:`wait_for_servers`); each server reports ``ServerStateChanged`` as it goes.

        Args:
            warm_search: build the search index (tokenize the catalog, load the dense model)
                now. False leaves it to the first search: commands that never search
                (``context``, ``call``, ``mcp list``) skip seconds of work on a large catalog.
        """
        self.progress.loop = asyncio.get_running_loop()
        self._hold_encoding(bool(self.pending_servers()))
        for path in self._catalog_paths:
            self.load_catalog_file(path)
        if warm_search:  # numpy/scipy/scikit-learn imports and tokenizing: off the caller's loop
            await asyncio.to_thread(self.search.warm)
        for status in self.pool.statuses():
            if status.state in (ServerState.FAILED, ServerState.NOT_APPROVED):
                self.emit(ServerStateChanged(status))
        if self.pool.configs:
            await self.pool.start()  # servers connect on their own loop from now on

    async def approve_project(self, settings: Settings) -> list[str]:
        """The person approved the project folder (:mod:`toolscout.core.policy.trust`): apply the
        project's grants (``settings`` loaded as trusted) and start its servers.

        Returns:
            The names of the project servers that now start.
        """
        self.apply_settings(settings)
        fresh = PermissionPolicy.from_settings(settings)
        self.policy.allow[:], self.policy.ask[:], self.policy.deny[:] = fresh.allow, fresh.ask, fresh.deny
        self.policy.workspace = Workspace.of(self.project_dir, settings["permissions.additionalDirectories"])
        return await self.pool.approve()

    def set_search_advice(self, text: str) -> None:
        """How an unknown tool's error says to find tools (one sentence): the model's ToolSearch
        by default; the CLI names ``toolscout search``, which its person can run."""
        self.executor.search_advice = text

    def forward_questions(self) -> None:
        """Let MCP servers ask questions during a call (``elicitation/create``), answered by the
        call's ``elicitor`` (:meth:`call_tool`): servers connected from now on are told this
        client supports elicitation, so call it before :meth:`start`. ``toolscout serve`` does."""
        self.pool.forward_elicitation = True

    async def stop(self) -> None:
        """Disconnect every server and release resources. Safe to call twice.

        Every server's session is closed by its own lifetime task; stdio child processes are
        ended (stdin closed, then SIGTERM/SIGKILL to the process group after
        :data:`~toolscout.core.mcp.transports.stdio.STOP_GRACE_S` each); pending server sizes are written.
        """
        self.search.close()
        await self.pool.stop()
        await asyncio.to_thread(self.sizes.flush, 5.0)

    async def wait_for_servers(self, timeout: float | None = None) -> bool:
        """Wait until no server is still connecting (each is bounded by ``mcp.timeout``).

        Args:
            timeout: overall bound in seconds; None waits for the per-server timeouts.

        Returns:
            True when every server has settled (connected, failed or disconnected).
        """
        return await self.pool.wait_settled(timeout)

    async def reconnect(self, name: str, *, wait: bool = False) -> ServerStatus:
        """Close server ``name`` (its tools leave the catalog) and connect it again; returns at
        once, the tools come back when it has connected. With ``wait``, returns once it has
        connected (its tools are in the catalog) or failed, bounded by ``mcp.timeout`` plus
        :data:`~toolscout.core.mcp.pool.SETTLE_GRACE_S`.

        Returns:
            The server's status as last reported (``connecting`` without ``wait``, or when the
            bound passed first).

        Raises:
            KeyError: no server of that name is configured.
            RuntimeError: the engine is not started, or the entry is invalid or not approved.
        """
        await self.pool.reconnect(name, settle=wait)
        status = self.pool.status(name)
        assert status is not None  # every configured server has one
        return status

    async def disconnect(self, name: str) -> None:
        """Close server ``name``; its tools leave the catalog (``CatalogChanged``)."""
        await self.pool.disconnect(name)

    async def call_tool(
        self,
        name: str,
        params: Any,
        *,
        asker: Asker | None = None,
        direct: bool = False,
        loaded: set[str] | None = None,
        elicitor: Elicitor | None = None,
        sent_full: AbstractSet[str] | None = None,
        call_id: str | None = None,
        progress: Report | None = None,
    ) -> ToolResult:
        """Run one tool (built-in or MCP) through the executor: lookup, gate, validation,
        permission, call with ``mcp.callTimeout``. Never raises; failures are error results.

        Args:
            name: canonical tool name (as ExecuteTool's ``tool_name``).
            params: arguments (dict, JSON text, or None).
            asker: ``async asker(tool, params) -> "allow_once" | "always" | "deny"``; without one
                (headless) tools that need asking are refused with the rule to add.
            direct: the model called the tool directly: a tool that was deferred in the request
                the model answered (see ``sent_full``) and is not yet loaded is refused with its
                full definition (NOT_LOADED) and becomes loaded.
            loaded: the caller's loaded-name set for that gate (mutated). None uses the engine's
                own set, :attr:`loaded`.
            elicitor: answers the MCP server's questions during the call, when the pool forwards
                them (``toolscout serve``: :mod:`toolscout.core.mcp.elicitation`).
            sent_full: names that request carried with their full schema (a session's
                projection); a direct call of one of them always runs. None: the catalog's
                deferral decides.
            call_id: the caller's id of the call: an MCP server's progress reports become
                :class:`~.events.ToolCallProgress` events with it (throttled:
                :class:`~.progress.CallProgressRelay`). progress: also gets every report, on
                this loop (the gateway forwards them). With neither, no progress is asked for.
        """
        relay = CallProgressRelay(self.emit, call_id, name, progress)
        route = relay.route() if call_id is not None or progress is not None else None
        try:
            return await self.executor.execute(
                name,
                params,
                asker=asker,
                direct=direct,
                loaded=loaded,
                elicitor=elicitor,
                sent_full=sent_full,
                progress=route,
            )
        finally:
            if route is not None:
                route.close()

    @property
    def loaded(self) -> set[str]:
        """The engine's own loaded-name set for the self-healing gate, used when a caller passes
        no ``loaded=`` to :meth:`call_tool`. A session that tracks which schemas it has sent
        should pass its own set instead; otherwise it records searches with :meth:`mark_loaded`."""
        return self.executor.loaded

    def mark_loaded(self, names: Iterable[str]) -> None:
        """Record tools whose full schema the model has seen (e.g. ToolSearch hits)."""
        self.executor.loaded.update(names)

    # -- MCP pool listener (called from server lifetime tasks) -------------------------------
    def server_status_changed(self, status: ServerStatus) -> None:
        """A server changed state: drop its tools when it is no longer connected, add the
        resource built-ins the first time a server offers resources, and emit the event."""
        kept = self.indexed_tools_stay(status)  # a prebuilt index's tools while it connects
        if status.state is not ServerState.CONNECTED and not kept and self.catalog.server_tools(status.name):
            self.apply_delta(self.catalog.remove_server(status.name))
        if status.state is ServerState.CONNECTED and status.has_resources:
            self._add_resource_tools()
        if status.state is ServerState.FAILED and status.error:
            self.warn(f"failed: {status.error}", status.name)
        self._hold_encoding(bool(self.pending_servers()))
        self.emit(ServerStateChanged(status))

    def _hold_encoding(self, connecting: bool) -> None:
        """Tool texts are encoded for the dense ranker only while no server is connecting: the
        encoder would take CPU from the servers starting up and from the UI (the lexical ranker
        answers meanwhile)."""
        connecting = connecting and self.prebuilt is None  # with one, only changed tools are encoded
        if connecting != self._encoding_held:
            self._encoding_held = connecting
            self.search.hold_dense(connecting)

    def server_tools_changed(self, name: str, tools: list[ToolSpec], instructions: str | None) -> None:
        """A server listed its tools (on connect or after ``list_changed``); its schema size is
        remembered for the next run's auto decision (:attr:`sizes`)."""
        self.listed_live(name)  # its own tools replace a prebuilt index's
        self.apply_delta(self.catalog.set_server_tools(name, tools, instructions=instructions))
        cfg = self.pool.configs.get(name)
        if cfg is not None:  # counted and written on the sizes' writer thread, not this loop
            deferred = [t for t in self.catalog.server_tools(name) if self.catalog.is_deferred(t)]
            self.sizes.record_later(server_key(cfg), lambda: sum(tool_tokens(t) for t in deferred))

    def prepare_tools(self, name: str, tools: list[ToolSpec]) -> list[ToolSpec]:
        """Called by the pool on its relay thread before a listing is delivered: the CPU-heavy
        part of adding tools, done off this loop (see :mod:`toolscout.core.engine.prepare`)."""
        from .prepare import prepare_listing

        return prepare_listing(name, tools, self.catalog.server_descriptions.get(name))

    def server_warning(self, message: str, name: str) -> None:
        """A server problem that did not stop it (pagination loop, failed re-list)."""
        self.warn(message, name)

    def tool_change(self, tool: ToolSpec) -> ToolChange | None:
        """How ``tool``'s description or schema differs from what was approved, or None
        (:mod:`toolscout.core.policy.approvals`): what a permission question shows."""
        return self.executor.approvals.change(tool)

    def _check_approval(self, tool: ToolSpec) -> None:
        """A listed MCP tool: warn (once per change) when it differs from what was approved; a
        tool an allow rule covers is recorded as first seen."""
        approvals = self.executor.approvals
        change = approvals.change(tool)
        if change is None:
            self._change_warned.pop(tool.name, None)
            if self.policy.decide(tool).decision is Decision.ALLOW:
                approvals.first_seen(tool)
            return
        if self._change_warned.get(tool.name) != (tool.description, *change.parts):
            self._change_warned[tool.name] = (tool.description, *change.parts)
            self.warn(change.warning(), tool.server or "")

    def _add_resource_tools(self) -> None:
        from ..mcp.resources import ListMcpResources, ReadMcpResource  # imports the MCP SDK

        added: list[str] = []
        denied = self.policy.server_deny_rule
        for tool in (ListMcpResources(self.pool, denied), ReadMcpResource(self.pool, denied)):
            if tool.spec.name not in self.builtins:
                self.builtins[tool.spec.name] = tool
                self.catalog.add_builtin(tool.spec)
                added.append(tool.spec.name)
        if added:
            self.apply_delta(CatalogDelta(added=tuple(added)))

    def apply_delta(self, delta: CatalogDelta) -> None:
        """Update the search index incrementally (tools added, removed or redefined), warn about
        schema repairs of added tools and about tools changed since they were approved, and
        announce the change."""
        changed = [*delta.added, *(t.name for t in self.catalog.server_tools(delta.server or ""))]
        for name in dict.fromkeys(changed):
            tool = self.catalog.get(name)
            if tool is not None and tool.schema_warnings and self._schema_warned.get(name) != tool.schema_warnings:
                self._schema_warned[name] = tool.schema_warnings  # once per tool and set of repairs
                self.warn(schema_warning_line(tool), tool.server or "catalog")
            if tool is not None and tool.server is not None and delta.server in self.pool.configs:
                self._check_approval(tool)  # a live server's tool (catalog files are never run)
        if delta:
            self.search.sync(delta)
            self.emit(CatalogChanged(delta))
