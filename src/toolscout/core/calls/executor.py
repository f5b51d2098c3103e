"""The tool executor behind ``ExecuteTool`` and direct calls: look up, gate, validate, permit, run.

One call goes through these steps, and every refusal is a :class:`ToolResult` error with a
specific, actionable message (the executor never raises for a bad call):

1. look the canonical name up in the full registry (built-ins + MCP) with ``catalog.resolve``;
   a tool hidden by a deny rule is *disabled*; a name of a server that is still connecting or
   has failed says so instead of "unknown"; an unknown name lists the closest names;
2. for direct calls, the self-healing gate: a tool that was *deferred in the request the model
   answered* (a stub, its schema never sent) and that no search loaded is not sent; the error
   carries its full definition and marks it loaded (NOT_LOADED). A tool that request carried with
   its full schema (tool search off, ``auto`` below its threshold, ``toolSearch.alwaysLoad``, a
   core built-in) runs: the model had everything it needs to call it;
3. validate the arguments against the tool's projected ``inputSchema`` (:mod:`.validation`), the
   same schema the model was shown;
4. decide permission (:mod:`.permissions`), asking through ``asker`` when there is one; an MCP
   tool whose description or schema changed since it was approved asks even when a rule allows
   it, and is refused with nobody to ask (:mod:`toolscout.core.policy.approvals`);
5. run the built-in (``await tool.run(params, ctx)``, which bounds itself) or ``tools/call`` on
   the server (arguments unwrapped for a wrapped non-object schema), bounded by
   ``mcp.callTimeout``, and map the ``CallToolResult`` into a :class:`ToolResult`. A server found
   gone at that moment (the call was not sent) goes through the ``revive`` hook when one is set
   (the gateway's), and the call is then sent once.
"""

from __future__ import annotations

import difflib
import json
import time
from collections.abc import Awaitable, Callable
from collections.abc import Set as AbstractSet
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..builtins.base import BuiltinTool, ToolContext
from ..catalog.registry import ToolCatalog
from ..mcp.pool import ServerPool
from ..models import TASK_REQUIRED_REASON, ContentBlock, ServerState, ServerStatus, ToolErrorKind, ToolResult, ToolSpec
from ..names import lookup_key, split_mcp_name
from ..policy.approvals import Approvals, Fingerprint, changed_message
from ..policy.permissions import AskAnswer, Asker, Decision, PermissionPolicy, denied_message
from ..rules.specs import session_rule, target_path
from ..schemas import unwrap_arguments
from .validation import Invalid, SchemaProblem, invalid_text, schema_text, validate_params

if TYPE_CHECKING:  # the MCP SDK takes ~1 s to import: only when an MCP tool runs (catalog-only runs never)
    import mcp_types as types

    from ..mcp.elicitation import Elicitor
    from ..mcp.progress import ProgressRoute


def map_call_result(tool_name: str, raw: types.CallToolResult) -> ToolResult:
    """Map MCP content (text, image, audio, embedded resource, resource_link), ``structuredContent``
    and ``isError`` into a :class:`ToolResult`; each block keeps its MCP JSON as sent
    (:attr:`ContentBlock.wire`) and the result its ``_meta``, for exact pass-through."""
    import mcp_types as types

    blocks: list[ContentBlock] = []
    for item in raw.content:
        wire = item.model_dump(mode="json", by_alias=True, exclude_none=True)
        if isinstance(item, types.TextContent):
            block = ContentBlock("text", item.text)
        elif isinstance(item, types.ImageContent | types.AudioContent):
            block = ContentBlock(item.type, data=item.data, mime_type=item.mime_type)
        elif isinstance(item, types.EmbeddedResource):
            res = item.resource
            if isinstance(res, types.TextResourceContents):
                block = ContentBlock("resource", text=res.text, uri=str(res.uri), mime_type=res.mime_type)
            else:
                block = ContentBlock("resource", data=res.blob, uri=str(res.uri), mime_type=res.mime_type)
        elif isinstance(item, types.ResourceLink):
            block = ContentBlock("resource_link", text=item.name or "", uri=str(item.uri), mime_type=item.mime_type)
        else:  # a content type newer than this mapping: keep it readable
            block = ContentBlock("text", json.dumps(wire))
        blocks.append(replace(block, wire=wire))
    structured = raw.structured_content if isinstance(raw.structured_content, dict) else None
    is_error = bool(raw.is_error)
    return ToolResult(
        tool_name,
        tuple(blocks),
        structured,
        is_error=is_error,
        error_kind=ToolErrorKind.TOOL_ERROR if is_error else None,
        meta=dict(raw.meta) if raw.meta else None,
    )


class ToolExecutor:
    """Runs tools for the engine.

    Args:
        catalog: the full registry (built-ins and MCP tools).
        builtins: canonical name → built-in object (shared with the engine, may grow).
        pool: the MCP server pool, or None when no server is configured.
        policy: permission rules (its ``session_allow`` grows with "always" answers).
        context: what built-ins may use (cwd, per-session state).
        call_timeout: bound on one call (s), setting ``mcp.callTimeout``.
        warn: ``warn(message, source)`` for problems that do not stop a call.
        file_servers: servers that come from catalog files (searchable, not executable).
        clock: seconds on a monotonic clock (``time.perf_counter`` by default) for a call's
            ``duration_ms``; tests pass a fake one so a duration never depends on machine load.
        approvals: what each MCP tool was approved as (the engine's, which also reads the saved
            ones); None starts an empty one.

    Attributes:
        loaded: canonical names loaded by a search (or by the self-healing gate) when the caller
            keeps no set of its own; see :meth:`execute`.
    """

    def __init__(
        self,
        catalog: ToolCatalog,
        builtins: dict[str, BuiltinTool],
        pool: ServerPool | None,
        policy: PermissionPolicy,
        context: ToolContext,
        *,
        call_timeout: float,
        warn: Callable[[str, str], None],
        file_servers: Callable[[], set[str]],
        clock: Callable[[], float] = time.perf_counter,
        approvals: Approvals | None = None,
    ) -> None:
        self.catalog = catalog
        self.clock = clock
        self.builtins = builtins
        self.pool = pool
        self.policy = policy
        self.context = context
        self.call_timeout = call_timeout
        self.loaded: set[str] = set()
        self._warn = warn
        self._file_servers = file_servers
        self._schema_warned: set[str] = set()
        #: called with the rule of each "always allow" answer and, for an MCP tool, ``(name,
        #: fingerprint)`` of the definition approved, to keep them past this run (the engine saves
        #: them: :mod:`toolscout.core.policy.local_rules`); None keeps them for the session only
        self.remember_allow: Callable[[str, tuple[str, Fingerprint] | None], object] | None = None
        #: what each MCP tool was approved as: a changed one asks again (:mod:`toolscout.core.policy.approvals`)
        self.approvals = approvals if approvals is not None else Approvals()
        #: how a failed or disconnected server's error says it comes back: ``reconnect it`` (the
        #: app's ``/mcp reconnect``); the gateway, whose clients cannot reconnect a server, says
        #: what the person can do instead
        self.reconnect_advice = "reconnect it"
        #: how an unknown tool's error says to find tools: the model's ToolSearch by default; the
        #: CLI, whose person cannot run ToolSearch, names ``toolscout search``
        self.search_advice = "Use ToolSearch to find tools by what they do."
        #: called with a tool's name when its server turned out to be unavailable at the moment
        #: of sending (it went away after the call was looked up and permitted; the call was not
        #: sent): brings the server back and returns None (the call is then sent once more), or
        #: returns the error to answer. The gateway sets it (:mod:`toolscout.core.gateway.revive`);
        #: None answers with the server's state at once.
        self.revive: Callable[[str], Awaitable[ToolResult | None]] | None = None

    async def execute(
        self,
        name: str,
        params: Any,
        *,
        asker: Asker | None = None,
        direct: bool = False,
        loaded: set[str] | None = None,
        elicitor: Elicitor | None = None,
        sent_full: AbstractSet[str] | None = None,
        progress: ProgressRoute | None = None,
    ) -> ToolResult:
        """Run one tool call through every gate; never raises (except cancellation).

        Args:
            name: canonical name (``mcp__server__tool`` or a built-in); case-insensitive and bare
                names are accepted when they resolve to exactly one tool.
            params: the arguments: a dict, a JSON string of one, or None for ``{}``.
            asker: asks the user for "ask" tools; None (headless) turns "ask" into a refusal.
            direct: True when the model called the tool directly rather than through
                ExecuteTool; enables the self-healing gate.
            loaded: the caller's set of loaded names for the gate (mutated: the refused tool is
                added). None uses :attr:`loaded`.
            elicitor: answers the MCP server's questions during the call, when the pool forwards
                them (:mod:`toolscout.core.mcp.elicitation`); None: nobody is asked.
            sent_full: canonical names the request the model answered carried with their full
                schema (a session's :attr:`Projection.full_names
                <toolscout.core.session.projection.Projection.full_names>` when it sent that
                request); the gate holds back only tools outside it. None (no request known):
                the catalog's own deferral (:meth:`ToolCatalog.is_deferred`) stands in.
            progress: where an MCP server's progress notifications for the call go
                (:mod:`toolscout.core.mcp.progress`); None: no progress is asked for.

        The result's ``duration_ms`` is the call's own time: the wait for a permission answer
        is left out.
        """
        asked_s = 0.0
        timed_asker: Asker | None = None
        if asker is not None:
            ask = asker

            async def timed_asker(tool: ToolSpec, args: dict[str, Any]) -> AskAnswer:
                nonlocal asked_s
                t = self.clock()
                try:
                    return await ask(tool, args)
                finally:
                    asked_s += self.clock() - t

        started = self.clock()
        try:
            result = await self._execute(
                name,
                params,
                timed_asker,
                direct,
                self.loaded if loaded is None else loaded,
                elicitor,
                sent_full,
                progress,
            )
        except Exception as exc:  # no error may crash the engine
            result = ToolResult.error(
                name, ToolErrorKind.TOOL_ERROR, f"{name} failed inside toolscout: {type(exc).__name__}: {exc}"
            )
        # The call's own time: a person reading the permission prompt is not the tool being slow.
        return replace(result, duration_ms=(self.clock() - started - asked_s) * 1000.0)

    async def _execute(
        self,
        name: str,
        params: Any,
        asker: Asker | None,
        direct: bool,
        loaded: set[str],
        elicitor: Elicitor | None = None,
        sent_full: AbstractSet[str] | None = None,
        progress: ProgressRoute | None = None,
    ) -> ToolResult:
        found = self.lookup(name)
        if isinstance(found, ToolResult):
            return found
        tool = found
        if direct and tool.name not in loaded and self._was_deferred(tool, sent_full):
            loaded.add(tool.name)
            return ToolResult.error(tool.name, ToolErrorKind.NOT_LOADED, self._not_loaded_message(tool))
        args = _normalise_params(params)
        if isinstance(args, str):
            return ToolResult.error(
                tool.name, ToolErrorKind.INVALID_PARAMS, invalid_text(tool.name, tool.input_schema, args)
            )
        problem = validate_params(tool.input_schema, args)
        if isinstance(problem, Invalid):  # bounded text: a 5,000-value enum is not a context bomb
            return ToolResult.error(
                tool.name, ToolErrorKind.INVALID_PARAMS, invalid_text(tool.name, tool.input_schema, problem.message)
            )
        if isinstance(problem, SchemaProblem) and tool.name not in self._schema_warned:
            self._schema_warned.add(tool.name)
            self._warn(f"{tool.name}: {problem.message}; its arguments are sent unchecked", tool.server or "builtin")
        unrunnable = self._from_catalog_file(tool)
        if unrunnable is not None:  # before the permission question: there is nothing to allow
            return unrunnable
        if tool.needs_task:  # the server would refuse every plain tools/call
            return ToolResult.error(
                tool.name, ToolErrorKind.TOOL_ERROR, f"{tool.name} was not run: {TASK_REQUIRED_REASON}."
            )
        # A built-in path tool's real path is resolved once: the permission check decides on it
        # and the tool opens exactly it, following no symlink (builtins/safe_open.py).
        target = target_path(tool.name, args, self.context.cwd) if tool.server is None else None
        refusal = await self._permit(tool, args, asker, target)
        if refusal is not None:
            return refusal
        if tool.server is None:
            return await self._run_builtin(tool, args, target)
        return await self._run_mcp(tool, args, elicitor, progress)

    # -- lookup -----------------------------------------------------------------------------
    def lookup(self, name: str) -> ToolSpec | ToolResult:
        """The tool ``name`` means, or the error result explaining why there is none."""
        exact = self.catalog.get(name)
        if exact is not None and not self.catalog.is_visible(exact):
            rule = self.policy.deny_rule(exact)
            why = f"the deny rule {rule!r} (permissions.deny)" if rule else "the current settings"
            return ToolResult.error(
                name, ToolErrorKind.DISABLED, f"{name} is disabled by {why}; remove the rule to use it."
            )
        matches = self.catalog.resolve(name)
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            names = ", ".join(t.name for t in matches[:8])
            return ToolResult.error(
                name,
                ToolErrorKind.UNKNOWN_TOOL,
                f"{name!r} is ambiguous: it could be {names}. Call it by its full name.",
            )
        pending = self._server_problem(name)
        if pending is not None:
            return pending
        return ToolResult.error(name, ToolErrorKind.UNKNOWN_TOOL, self._unknown_message(name))

    def _server_problem(self, name: str) -> ToolResult | None:
        split = split_mcp_name(name)
        if split is None or self.pool is None:
            return None
        server = self.pool.find(split[0])
        status = self.pool.status(server) if server else None
        if status is None or status.state is ServerState.CONNECTED:
            return None
        return self._unavailable(name, status)

    def _unavailable(self, name: str, status: ServerStatus) -> ToolResult:
        if status.state is ServerState.CONNECTED:  # its session is closing and has not said so yet
            return ToolResult.error(
                name,
                ToolErrorKind.SERVER_FAILED,
                f"Server {status.name} has just closed its connection, so {name} was not sent. Try again in a moment.",
            )
        if status.state is ServerState.CONNECTING:
            return ToolResult.error(
                name,
                ToolErrorKind.SERVER_CONNECTING,
                f"Server {status.name} is still connecting, so {name} is not available yet. Try again in a moment.",
            )
        cfg = self.pool.configs.get(status.name) if self.pool else None
        where = f" (configured in {cfg.source})" if cfg and cfg.source else ""
        if status.state is ServerState.FAILED:
            return ToolResult.error(
                name,
                ToolErrorKind.SERVER_FAILED,
                f"Server {status.name} failed to start{where}: {status.error}. Fix the server "
                f"or its configuration, then {self.reconnect_advice}.",
            )
        if status.state is ServerState.NOT_APPROVED:
            return ToolResult.error(name, ToolErrorKind.SERVER_FAILED, f"Server {status.name} is {status.error}.")
        reason = f": {status.error}" if status.error else ""
        advice = self.reconnect_advice[:1].upper() + self.reconnect_advice[1:]
        return ToolResult.error(
            name, ToolErrorKind.SERVER_FAILED, f"Server {status.name} is disconnected{reason}. {advice} to use {name}."
        )

    def _unknown_message(self, name: str) -> str:
        tools = self.catalog.tools()
        by_key = {lookup_key(t.name): t.name for t in tools}
        by_key.update({lookup_key(t.bare_name): t.name for t in tools if lookup_key(t.bare_name) not in by_key})
        close = difflib.get_close_matches(lookup_key(name), list(by_key), n=3, cutoff=0.5)
        names = list(dict.fromkeys(by_key[k] for k in close))
        hint = f" Did you mean: {', '.join(names)}?" if names else ""
        return f"Unknown tool {name!r}.{hint} {self.search_advice}"

    def _was_deferred(self, tool: ToolSpec, sent_full: AbstractSet[str] | None) -> bool:
        """True if the model had ``tool`` without its schema: outside ``sent_full`` (the request
        it answered), or, with no request known, a tool the catalog defers."""
        if sent_full is not None:
            return tool.name not in sent_full
        return self.catalog.is_deferred(tool)

    def _not_loaded_message(self, tool: ToolSpec) -> str:
        return (
            f"{tool.name} was called before it was loaded, so the call was not sent. It is loaded now; "
            f"call it again with arguments that match this definition.\n\nDescription:\n{tool.description}"
            f"\n\nInput schema:\n{schema_text(tool.input_schema)}"
        )

    # -- permission -------------------------------------------------------------------------
    async def _permit(
        self, tool: ToolSpec, args: dict[str, Any], asker: Asker | None, target: Path | None = None
    ) -> ToolResult | None:
        builtin = self.builtins.get(tool.name) if tool.server is None else None
        verdict = self.policy.decide(
            tool, read_only=builtin is not None and builtin.read_only, args=args, target=target
        )
        # a tool whose definition changed since it was approved asks again, whatever allows it
        change = self.approvals.change(tool) if verdict.decision is not Decision.DENY else None
        if verdict.decision is Decision.ALLOW and change is None:
            self.approvals.first_seen(tool)
            return None
        if verdict.decision is not Decision.DENY and asker is not None:
            try:
                answer = await asker(tool, args)
            except Exception:  # a broken prompt must not allow anything
                answer = "deny"
            if answer == "always":
                scoped = session_rule(tool.name, args, self.context.cwd, target) if tool.server is None else tool.name
                self.policy.allow_for_session(scoped)
                approved = self.approvals.approve(tool) if tool.server is not None else None
                if self.remember_allow is not None:
                    self.remember_allow(scoped, (tool.name, approved) if approved is not None else None)
                return None
            if answer == "allow_once":
                self.approvals.first_seen(tool)  # once: a changed tool keeps its old baseline
                return None
            return ToolResult.error(
                tool.name, ToolErrorKind.PERMISSION_DENIED, denied_message(tool, verdict, asked=True)
            )
        if change is not None:
            return ToolResult.error(tool.name, ToolErrorKind.PERMISSION_DENIED, changed_message(change))
        return ToolResult.error(tool.name, ToolErrorKind.PERMISSION_DENIED, denied_message(tool, verdict, asked=False))

    def _from_catalog_file(self, tool: ToolSpec) -> ToolResult | None:
        """The error for a tool that came from a catalog file (searchable, never runnable), or None."""
        if tool.server is None:
            if self.builtins.get(tool.name) is not None:
                return None
            return ToolResult.error(
                tool.name,
                ToolErrorKind.SERVER_FAILED,
                f"{tool.name} comes from a catalog file: it can be searched but not run.",
            )
        if (self.pool is None or self.pool.connection(tool.server) is None) and tool.server in self._file_servers():
            return ToolResult.error(
                tool.name,
                ToolErrorKind.SERVER_FAILED,
                f"{tool.name} comes from a catalog file: it can be searched but not run. "
                f"Configure the real {tool.server} server (.mcp.json or --mcp-config) to run it.",
            )
        return None

    # -- running ----------------------------------------------------------------------------
    async def _run_builtin(self, tool: ToolSpec, args: dict[str, Any], target: Path | None = None) -> ToolResult:
        builtin = self.builtins.get(tool.name)
        if builtin is None:  # refused before the permission question (_from_catalog_file)
            return ToolResult.error(tool.name, ToolErrorKind.SERVER_FAILED, f"{tool.name} cannot be run here.")
        # Built-ins bound themselves (Bash takes its own ``timeout`` of up to 10 min), so
        # mcp.callTimeout is not imposed here; the MCP resource built-ins apply it per request.
        context = self.context if target is None else replace(self.context, target=target)
        result = await builtin.run(args, context)
        return replace(result, tool_name=tool.name)

    async def _run_mcp(
        self,
        tool: ToolSpec,
        args: dict[str, Any],
        elicitor: Elicitor | None = None,
        progress: ProgressRoute | None = None,
    ) -> ToolResult:
        assert tool.server is not None
        conn = self.pool.connection(tool.server) if self.pool else None
        if conn is None:
            return ToolResult.error(tool.name, ToolErrorKind.SERVER_FAILED, f"Server {tool.server} is not configured.")
        arguments = unwrap_arguments(args, tool.wrapped_arguments)
        if not isinstance(arguments, dict):
            return ToolResult.error(
                tool.name,
                ToolErrorKind.INVALID_PARAMS,
                f"{tool.name}'s inputSchema asks for {_json_kind(arguments)} rather than an "
                "object, but MCP tools/call can only carry an object of arguments, so the call "
                f"was not sent. Ask the maintainers of server {tool.server} to fix the schema.",
            )
        import mcp_types as types  # cheap here: the connection has imported the SDK already
        from mcp.shared.exceptions import MCPError

        from ..mcp.connection import ServerUnavailable

        try:
            # A wrapped schema (non-object root) was {"value": X} for the model; the tool gets X.
            # The server's own name, even "" (shown under a placeholder, called by its real name).
            try:
                raw = await conn.call_tool(tool.original_name, arguments, self.call_timeout, elicitor, progress)
            except ServerUnavailable as exc:  # not sent: the server went away since the lookup
                if self.revive is None:
                    return self._unavailable(tool.name, exc.status)
                down = await self.revive(tool.name)
                if down is not None:
                    return down
                conn = self.pool.connection(tool.server) if self.pool else None
                if conn is None:
                    return self._unavailable(tool.name, exc.status)
                raw = await conn.call_tool(
                    tool.original_name, arguments, self.call_timeout, elicitor, progress
                )  # once more
        except ServerUnavailable as exc:
            return self._unavailable(tool.name, exc.status)
        except TimeoutError:
            return ToolResult.error(
                tool.name,
                ToolErrorKind.TIMEOUT,
                f"Server {tool.server} did not answer {tool.name} within {self.call_timeout:g} s "
                "(mcp.callTimeout). The call may still be running on the server.",
            )
        except MCPError as exc:
            if exc.error.code == types.CONNECTION_CLOSED:
                return ToolResult.error(
                    tool.name,
                    ToolErrorKind.SERVER_FAILED,
                    f"Server {tool.server} closed the connection during {tool.name}.",
                )
            return ToolResult.error(
                tool.name,
                ToolErrorKind.TOOL_ERROR,
                f"Server {tool.server} refused {tool.name}: {exc.error.message} (JSON-RPC error {exc.error.code}).",
            )
        except RuntimeError as exc:  # e.g. structured content that breaks the tool's outputSchema
            return ToolResult.error(tool.name, ToolErrorKind.TOOL_ERROR, f"Server {tool.server}: {exc}")
        return map_call_result(tool.name, raw)


def _normalise_params(params: Any) -> dict[str, Any] | str:
    """A dict of arguments, or the reason ``params`` is not one."""
    if params is None:
        return {}
    if isinstance(params, str):
        if not params.strip():
            return {}
        try:
            params = json.loads(params)
        except json.JSONDecodeError as exc:
            return f"params is not valid JSON ({exc})"
    if not isinstance(params, dict):
        return f"params must be a JSON object, got {type(params).__name__}"
    return params


def _json_kind(value: Any) -> str:
    """``value``'s JSON type with its article (``an integer``, ``a string``, ``an array``)."""
    kinds = {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        type(None): "null",
    }
    return kinds.get(type(value), f"a {type(value).__name__}")
