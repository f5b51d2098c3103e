"""The tool registry: built-in and MCP tools, the core/deferred split, and cache-stable order.

Order rule (so the prompt cache keeps hitting): built-ins sorted by name, then MCP tools sorted by
name. Until :meth:`ToolCatalog.freeze` is called (the session does it when it sends its first
request) the order is a pure function of the set of tools, whatever order servers were added in.
After the freeze, a server that connects later only *appends* its tools (sorted among themselves),
and removing a server never reorders what remains.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Literal

from ..models import ToolSpec
from ..names import dedupe, from_announcement, lookup_key, loose_key, mcp_tool_name, written_name
from ..rules.match import matches as rule_matches
from ..schemas import project

#: Tools that are never deferred, whatever the settings say.
ALWAYS_CORE = frozenset({"ToolSearch", "ExecuteTool"})
#: What a tool is to the model (:meth:`ToolCatalog.state`).
ToolState = Literal["core", "always-load", "loaded", "deferred", "inline"]


@dataclass(frozen=True)
class CatalogDelta:
    """What one change did to the catalog: canonical names added and removed, in catalog order,
    and ``changed``: names kept whose description or ``inputSchema`` the server changed (a
    re-listing after ``list_changed``; the search index must reindex them)."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    server: str | None = None
    changed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)


@dataclass
class _State:
    """One published state of a :class:`ToolCatalog` (never mutated once published, but for
    the name index it caches): canonical name → tool, the cache-stable order, server → its
    tools' names, and :meth:`ToolCatalog.resolve`'s lookup dicts, built on first use."""

    tools: dict[str, ToolSpec]
    order: tuple[str, ...]
    by_server: dict[str, list[str]]
    names: tuple[dict[str, list[str]], ...] | None = None


def matches_pattern(tool: ToolSpec, pattern: str) -> bool:
    """True when ``pattern`` names this tool: its server, its full name, or a glob whose server
    part matches the server exactly (see :func:`toolscout.core.rules.match.matches`).

    Matching is whole-string (``slack`` matches the server ``slack``, never ``slack2``);
    ``mcp__time__*`` never matches the tools of ``time_evil``. Case-sensitive, like Claude
    Code's permission rules.
    """
    return rule_matches(tool, pattern)


def projected(tool: ToolSpec) -> ToolSpec:
    """``tool`` with its ``input_schema`` projected into the provider-valid form (see
    :mod:`toolscout.core.schemas`); the original goes to ``source_schema``. Already projected
    tools are returned unchanged."""
    if tool.source_schema is not None:
        return tool
    result = project(tool.input_schema)
    return replace(
        tool,
        input_schema=result.schema,
        source_schema=tool.input_schema,
        wrapped_arguments=result.wrapped,
        schema_warnings=result.warnings,
    )


def _redefined(old: ToolSpec, new: ToolSpec) -> bool:
    """True when the server changed what ``new`` says against ``old`` (its description, its
    schema as sent, its search hint)."""
    return (old.description, old.source_schema, old.search_hint) != (
        new.description,
        new.source_schema,
        new.search_hint,
    )


class ToolCatalog:
    """Registry of every known tool, in cache-stable order.

    Args:
        core_names: names of built-ins sent with their full schema every turn; all other tools
            are deferred. ``ToolSearch`` and ``ExecuteTool`` are always core.
        always_load: patterns (see :func:`matches_pattern`) of tools that are never deferred.
    """

    def __init__(self, core_names: Iterable[str] = (), always_load: Iterable[str] = ()) -> None:
        self._state = _State({}, (), {})
        self._frozen = False
        self._core_names = set(core_names) | ALWAYS_CORE
        self._always_load = list(always_load)
        self._visible: Callable[[ToolSpec], bool] = lambda _tool: True
        self.instructions: dict[str, str] = {}
        self.server_descriptions: dict[str, str] = {}

    # -- policy ---------------------------------------------------------------------------
    def set_always_load(self, patterns: Iterable[str]) -> None:
        """Replace the ``alwaysLoad`` patterns."""
        self._always_load = list(patterns)

    def set_visibility(self, predicate: Callable[[ToolSpec], bool]) -> None:
        """Set the filter that hides tools (deny rules, allow-lists) from search and listings."""
        self._visible = predicate

    def is_visible(self, tool: ToolSpec) -> bool:
        """False for tools removed by deny rules or allow-lists."""
        return self._visible(tool)

    def is_always_load(self, tool: ToolSpec) -> bool:
        """True if the tool's own flag or an ``alwaysLoad`` pattern keeps it loaded."""
        return tool.always_load or any(matches_pattern(tool, p) for p in self._always_load)

    def is_core(self, tool: ToolSpec) -> bool:
        """True for built-ins in the core set (always sent with full schema)."""
        return tool.server is None and tool.name in self._core_names

    def is_deferred(self, tool: ToolSpec) -> bool:
        """Deferral decision, in order: always-load → no; core set → no; anything else → yes."""
        if tool.name in ALWAYS_CORE:
            return False
        if self.is_always_load(tool):
            return False
        return not self.is_core(tool)

    def state(self, tool: ToolSpec, loaded_names: set[str], *, defer: bool = True) -> ToolState:
        """What ``tool`` is to the model: ``core``, ``always-load``, ``loaded`` (its schema sent
        after a search), ``deferred`` or ``inline``.

        Args:
            loaded_names: the session's loaded tools.
            defer: the session's mode decision (tool search on, or auto above its threshold);
                False sends every tool inline, so a tool the catalog would defer is ``inline``.
        """
        if self.is_core(tool) or tool.name in ALWAYS_CORE:
            return "core"
        if self.is_always_load(tool):
            return "always-load"
        if tool.name in loaded_names:
            return "loaded"
        if self.is_deferred(tool):
            return "deferred" if defer else "inline"
        return "core"

    # -- mutation -------------------------------------------------------------------------
    @property
    def frozen(self) -> bool:
        """True once the order is fixed and later tools only append."""
        return self._frozen

    def freeze(self) -> None:
        """Fix the current order; from now on additions append (prompt-cache stability)."""
        self._frozen = True

    def add_builtin(self, tool: ToolSpec) -> CatalogDelta:
        """Register a built-in tool (``server`` must be None). Replaces one of the same name."""
        if tool.server is not None:
            raise ValueError(f"built-in tool {tool.name!r} must not have a server")
        tool = projected(replace(tool, original_name=tool.original_name or tool.name))
        state = self._state
        existed = tool.name in state.tools
        tools = {**state.tools, tool.name: tool}
        added = [] if existed else [tool.name]
        self._publish(tools, self._sorted_in(list(state.order), added, tools), state.by_server)
        return CatalogDelta(added=tuple(added))

    def set_server_tools(
        self,
        server: str,
        tools: Iterable[ToolSpec],
        instructions: str | None = None,
        description: str | None = None,
    ) -> CatalogDelta:
        """Replace all tools of ``server`` with ``tools`` and return what changed.

        Each tool's ``inputSchema`` is projected here (:func:`projected`), once. Each tool's
        canonical name is computed here (``mcp__<server>__<tool>``, normalised,
        collisions resolved by :func:`toolscout.core.names.dedupe`). Tools whose canonical name
        and definition are unchanged keep their place.
        """
        if instructions is not None:
            self.instructions[server] = instructions
        if description is not None:
            self.server_descriptions[server] = description
        state = self._state
        old = state.by_server.get(server, [])
        old_by_original = {state.tools[n].bare_name: n for n in old}
        taken = set(state.tools) - set(old)
        new_specs: list[ToolSpec] = []
        for tool in tools:
            original = tool.original_name or tool.name
            canonical = old_by_original.get(original) or mcp_tool_name(server, original)
            canonical = dedupe(canonical, taken)
            taken.add(canonical)
            new_specs.append(projected(replace(tool, name=canonical, server=server, original_name=original)))
        new_names = {t.name for t in new_specs}
        removed = [n for n in old if n not in new_names]
        gone = set(removed)  # once: a set per kept name made removing a server quadratic
        kept = {n: t for n, t in state.tools.items() if n not in gone}
        order = [n for n in state.order if n not in gone]
        added = [t.name for t in new_specs if t.name not in kept]
        changed = [t.name for t in new_specs if t.name in kept and _redefined(kept[t.name], t)]
        for spec in new_specs:
            kept[spec.name] = spec
        by_server = dict(state.by_server)
        by_server[server] = [t.name for t in new_specs]
        if not new_specs:
            by_server.pop(server, None)
        self._publish(kept, self._sorted_in(order, added, kept), by_server)
        order_index = {n: i for i, n in enumerate(self._order)}
        return CatalogDelta(
            added=tuple(sorted(added, key=order_index.__getitem__)),
            removed=tuple(removed),
            server=server,
            changed=tuple(changed),
        )

    def remove_server(self, server: str) -> CatalogDelta:
        """Remove every tool of ``server``; what remains keeps its order."""
        delta = self.set_server_tools(server, [])
        self.instructions.pop(server, None)
        return delta

    def _sorted_in(self, order: list[str], names: list[str], tools: dict[str, ToolSpec]) -> list[str]:
        """``order`` (a fresh list) with ``names`` placed by the order rule of the module doc."""

        def key(name: str) -> tuple[int, str]:
            return (0 if tools[name].server is None else 1, name)

        if not names:
            return order
        if self._frozen:
            return [*order, *sorted(names, key=key)]
        return sorted([*order, *names], key=key)

    def _publish(self, tools: dict[str, ToolSpec], order: list[str], by_server: dict[str, list[str]]) -> None:
        """Make a new state current. Every change builds new containers and swaps them in with
        one assignment, never mutating the published ones: a reader on another thread (the
        gateway searches in a worker thread while the loop applies a re-list) takes
        :attr:`_state` once and sees one consistent catalog, never a name whose tool is gone."""
        self._state = _State(tools, tuple(order), by_server)

    # -- queries --------------------------------------------------------------------------
    @property
    def _tools(self) -> dict[str, ToolSpec]:
        return self._state.tools

    @property
    def _order(self) -> tuple[str, ...]:
        return self._state.order

    @property
    def _by_server(self) -> dict[str, list[str]]:
        return self._state.by_server

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[ToolSpec]:
        state = self._state  # one snapshot for the whole walk
        return (state.tools[n] for n in state.order)

    def tools(self, *, include_hidden: bool = False) -> list[ToolSpec]:
        """All tools in cache-stable order (hidden ones only if ``include_hidden``)."""
        return [t for t in self if include_hidden or self._visible(t)]

    def get(self, name: str) -> ToolSpec | None:
        """The tool with exactly this canonical name, or None."""
        return self._tools.get(name)

    def servers(self) -> list[str]:
        """Server names that currently have tools, in first-tool order."""
        seen: dict[str, None] = {}
        for tool in self:
            if tool.server is not None:
                seen.setdefault(tool.server, None)
        return list(seen)

    def server_tools(self, server: str) -> list[ToolSpec]:
        """Tools of one server in catalog order."""
        state = self._state
        names = set(state.by_server.get(server, []))
        return [state.tools[n] for n in state.order if n in names]

    def deferred_tools(self) -> list[ToolSpec]:
        """Visible deferred tools in catalog order: what ToolSearch searches."""
        return [t for t in self.tools() if self.is_deferred(t)]

    def loaded_tools(self) -> list[ToolSpec]:
        """Visible tools sent with full schema every turn (core and always-load)."""
        return [t for t in self.tools() if not self.is_deferred(t)]

    def resolve(self, name: str) -> list[ToolSpec]:
        """Every visible tool ``name`` could mean, most exact first.

        ``name`` is taken as a model writes it: surrounding quotes, backticks and brackets are
        ignored (:func:`~toolscout.core.names.written_name`), and a name copied from the compact
        announcement with its group prefix (``mcp__github__: create_issue``) stands for the full
        name (:func:`~toolscout.core.names.from_announcement`). Tries, in order: the canonical
        name as given; case-insensitively; loosely (:func:`~toolscout.core.names.loose_key`: the
        configured server spelling ``mcp__obsidian-graph__x`` for ``mcp__obsidian_graph__x``);
        the bare tool name (``create_issue``) across servers, exactly then loosely. More than
        one result means the name is ambiguous.
        """
        name = written_name(name) if isinstance(name, str) else ""
        if not name:
            return []
        name = from_announcement(name)
        state = self._state  # the tools and the name index of one moment
        exact = state.tools.get(name)
        if exact is not None and self._visible(exact):
            return [exact]
        index = self._name_index(state)
        for stage, key in enumerate((lookup_key(name), loose_key(name), lookup_key(name), loose_key(name))):
            found = [t for t in (state.tools[n] for n in index[stage].get(key, ())) if self._visible(t)]
            if found:
                return found
        return []

    @staticmethod
    def _name_index(state: _State) -> tuple[dict[str, list[str]], ...]:
        """Lookup keys → canonical names in catalog order, one dict per :meth:`resolve` stage
        (name lower-cased, name loose, bare name, bare name loose); cached on ``state`` (a
        change publishes a new state, so the cache never outlives its tools)."""
        if state.names is None:
            stages: tuple[dict[str, list[str]], ...] = ({}, {}, {}, {})
            for name in state.order:
                tool = state.tools[name]
                keys = (tool.name.lower(), loose_key(tool.name), lookup_key(tool.bare_name), loose_key(tool.bare_name))
                for stage, key in zip(stages, keys, strict=True):
                    stage.setdefault(key, []).append(tool.name)
            state.names = stages
        return state.names
