"""The deferred-tool catalog: every tool grouped by server, with state and token cost.

A tool's state is ``core`` (a built-in sent every turn), ``always-load`` (never deferred),
``loaded`` (deferred, but a search or a pick loaded it this session), ``deferred``, or ``inline``
when the session's mode decision is not to defer (tool search off, or auto below its threshold). Servers
show their connection state, and the reason when they failed. Typing in the filter narrows the
tree, each server then counting the tools that match (``3 of 12 tools``); Enter on a tool posts
:class:`CatalogPanel.ToolChosen` (the screen opens its argument form when the person drives,
else its details; ``d`` always shows the details), and Enter on a failed server or its reason
line posts :class:`CatalogPanel.ServerChosen` (a tree line cannot wrap, so the screen shows the
full reason in a dialog).

Updates touch only what changed: each server's subtree is compared with what it shows (its
status, its tool objects, their states and token counts, the filter) and rebuilt only when it
differs, so a server connecting among 47 rebuilds one subtree, not all 1,700 tool nodes. While
servers connect, refreshes are throttled to one per :data:`CONNECTING_REFRESH_S` (each reads the
whole catalog and may relayout the screen); the summary line is redrawn only when its text changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Static, Tree
from textual.widgets.tree import TreeNode

from toolscout.core.models import ServerState, ServerStatus, ToolSpec

from ..text import clean
from ..throttle import Throttle
from .query_input import QueryInput

if TYPE_CHECKING:
    from toolscout.core.engine.facade import Engine

BUILTIN_GROUP = "built-in"
#: Shortest interval between two tree refreshes while any server is connecting (s): 47 servers
#: report in bursts for tens of seconds, and each refresh reads every tool of the catalog.
CONNECTING_REFRESH_S = 2.0

STATE_STYLE = {
    ServerState.CONNECTING: ("◌", "yellow"),
    ServerState.CONNECTED: ("●", "green"),
    ServerState.FAILED: ("✗", "red"),
    ServerState.DISCONNECTED: ("○", "dim"),
    ServerState.NOT_APPROVED: ("⊘", "yellow"),
}
#: States whose reason is shown under the server: failed, and not approved (with its command).
UNSTARTED = (ServerState.FAILED, ServerState.NOT_APPROVED)
TOOL_STATE_STYLE = {"core": "cyan", "always-load": "magenta", "loaded": "green", "deferred": "dim", "inline": "yellow"}


def server_label(
    name: str, status: ServerStatus | None, tools: int, tokens: int | None, matching: int | None = None
) -> Text:
    """The tree label of one server: state glyph, name, state, tool count and tokens.

    Args:
        tools: the server's tool count.
        tokens: the server's tokens (all its tools), None while not known.
        matching: under a filter, how many of its tools match (``3 of 12 tools``).
    """
    state = status.state if status else ServerState.CONNECTED
    glyph, colour = STATE_STYLE.get(state, ("?", ""))
    out = Text()
    out.append(f"{glyph} ", style=colour)
    out.append(clean(name, single_line=True), style="bold")
    if state is ServerState.FAILED:
        out.append("  failed", style="bold red")
        return out
    if state is ServerState.CONNECTING:
        out.append("  connecting…", style="yellow")
        return out
    if state is ServerState.NOT_APPROVED:  # a project server of an unapproved folder
        out.append("  not approved", style="bold yellow")
        return out
    shown = f"{matching} of {tools}" if matching is not None else f"{tools}"
    out.append(f"  {shown} tool{'s' if tools != 1 else ''}", style="dim")
    if tokens is not None:
        out.append(f" · {tokens:,} tok", style="dim")
    if state is ServerState.DISCONNECTED:
        out.append("  disconnected", style="dim")
    return out


def tool_label(tool: ToolSpec, state: str, tokens: int | None, query: str = "") -> Text:
    """The tree label of one tool: bare name (filter match highlighted), state, tokens."""
    name = clean(tool.bare_name, single_line=True)
    out = Text(name)
    if query:
        lower = name.lower()
        at = lower.find(query)
        if at >= 0:
            out.stylize("bold reverse", at, at + len(query))
    out.append(f"  {state}", style=TOOL_STATE_STYLE.get(state, ""))
    if tokens is not None:
        out.append(f"  {tokens:,}", style="dim")
    return out


class CatalogTree(Tree[ToolSpec | str]):
    """The tree itself (a separate class so CSS and bindings can target it)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right", "expand_node", "Expand", show=False, id="catalog.expand"),
        Binding("left", "collapse_node", "Collapse", show=False, id="catalog.collapse"),
        Binding("d", "details", "Details", id="catalog.details"),
    ]

    def action_details(self) -> None:
        """Show the details of the tool under the cursor (Enter runs it when you drive)."""
        node = self.cursor_node
        if node is not None and isinstance(node.data, ToolSpec):
            self.post_message(CatalogPanel.ToolChosen(node.data, details=True))

    def action_expand_node(self) -> None:
        """Expand the node under the cursor."""
        node = self.cursor_node
        if node is not None and node.allow_expand:
            node.expand()

    def action_collapse_node(self) -> None:
        """Collapse the node under the cursor (or its parent)."""
        node = self.cursor_node
        if node is None:
            return
        if node.allow_expand and node.is_expanded:
            node.collapse()
        elif node.parent is not None and node.parent is not self.root:
            node.parent.collapse()
            self.move_cursor(node.parent)


class CatalogPanel(Vertical):
    """Filter input, tool tree and a summary line.

    Args:
        engine: read for the catalog and server statuses (never for MCP calls).
    """

    BINDINGS: ClassVar[list[BindingType]] = [  # the filter's Down; the tree's own Down wins inside it
        Binding("down", "focus_tree", "Tools", show=False, id="catalog.into_tree"),
    ]

    @dataclass
    class ToolChosen(Message):
        """Enter (run it, or details with a model) or ``d`` (``details``) was pressed on a tool."""

        tool: ToolSpec
        details: bool = False

    @dataclass
    class ServerChosen(Message):
        """Enter was pressed on a failed server or its reason line (the screen shows the reason)."""

        status: ServerStatus

    def __init__(self, engine: Engine, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._engine = engine
        self.statuses: dict[str, ServerStatus] = {s.name: s for s in engine.server_statuses()}
        self.tokens: dict[str, int] = {}
        self.loaded_names: set[str] = set()
        #: The mode decision: False when tool search is off and every tool is sent inline.
        self.defer = True
        self._filter = ""
        self._shown = 0
        self._refresh = Throttle(self, lambda: self.refresh_tree(), CONNECTING_REFRESH_S, self._connecting)
        self._summary: Text | None = None
        #: What each server's subtree shows now (see :meth:`_signature`), by group.
        self._drawn: dict[str, tuple[Any, ...]] = {}
        #: Subtrees rebuilt by the last refresh (group names; a test and benchmark hook).
        self.last_rebuilt: list[str] = []

    def compose(self) -> ComposeResult:
        yield QueryInput(placeholder="filter tools…", id="catalog-filter")
        tree: CatalogTree = CatalogTree("tools", id="catalog-tree")
        tree.show_root = False
        tree.guide_depth = 2
        yield tree
        yield Static(id="catalog-summary")

    def on_mount(self) -> None:
        self.refresh_tree()

    # -- inputs from the screen --------------------------------------------------------------
    def set_status(self, status: ServerStatus) -> None:
        """Record a server's new state and redraw (summary and tree with the next refresh)."""
        self.statuses[status.name] = status
        self.schedule_refresh()

    def set_tokens(self, per_tool: dict[str, int]) -> None:
        """Per-tool token costs (full definition), from a context report."""
        self.tokens = dict(per_tool)
        self.schedule_refresh()

    def set_loaded(self, names: set[str]) -> None:
        """Deferred tools the session has loaded."""
        self.loaded_names = set(names)
        self.schedule_refresh()

    def set_defer(self, defer: bool) -> None:
        """The session's mode decision (``ModeDecision.defer``): False labels deferrable tools inline."""
        if defer != self.defer:
            self.defer = defer
            self.schedule_refresh()

    def schedule_refresh(self) -> None:
        """Rebuild the tree once after the current burst of updates (servers connect in bursts);
        while any server is connecting, at most once per :data:`CONNECTING_REFRESH_S`."""
        self._refresh.request()

    def _connecting(self) -> bool:
        return any(s.state is ServerState.CONNECTING for s in self.statuses.values())

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "catalog-filter":
            event.stop()
            self._filter = event.value.strip().lower()
            self.refresh_tree()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "catalog-filter":
            event.stop()
            self.query_one(CatalogTree).focus()

    def action_focus_tree(self) -> None:
        """Down in the filter: into the tree."""
        self.query_one(CatalogTree).focus()

    def on_tree_node_selected(self, event: Tree.NodeSelected[ToolSpec | str]) -> None:
        event.stop()
        data = event.node.data
        if isinstance(data, ToolSpec):
            self.post_message(self.ToolChosen(data))
        elif isinstance(data, str):
            status = self.statuses.get(data.removesuffix(":error"))
            if status is not None and status.state in UNSTARTED:
                self.post_message(self.ServerChosen(status))

    # -- drawing -----------------------------------------------------------------------------
    def _matches(self, tool: ToolSpec) -> bool:
        q = self._filter
        return not q or q in tool.name.lower() or q in (tool.description or "").lower()

    def groups(self) -> list[tuple[str, list[ToolSpec]]]:
        """(group, tools): built-ins first, then every server (failed and connecting ones too)
        sorted by configured name, case-insensitively (``atlassian`` before ``atlassian-jira``);
        tools in catalog order within a group."""
        groups: dict[str, list[ToolSpec]] = {}
        for tool in self._engine.tools():
            groups.setdefault(tool.server or BUILTIN_GROUP, []).append(tool)
        for name in self.statuses:
            groups.setdefault(name, [])
        return sorted(groups.items(), key=lambda g: (g[0] != BUILTIN_GROUP, g[0].casefold(), g[0]))

    def group_tokens(self, tools: list[ToolSpec]) -> int | None:
        """Tokens of a group from the latest report, or None while the report does not cover
        every tool of it yet (a server that just connected): never a partial or zero total."""
        if not tools or any(t.name not in self.tokens for t in tools):
            return None
        return sum(self.tokens[t.name] for t in tools)

    def summary(self) -> Text:
        """The line under the tree: tools, then what is still being decided, failed servers."""
        total = len(self._engine.tools())
        text = f"{self._shown} of {total} tools" if self._filter else f"{total} tools"
        summary = Text(text, style="dim")
        connecting = [s for s in self.statuses.values() if s.state is ServerState.CONNECTING]
        failed = [s for s in self.statuses.values() if s.state is ServerState.FAILED]
        auto = self._engine.settings.mode == "tst-auto"
        if connecting:
            noun = "server" if len(connecting) == 1 else "servers"
            what = "deciding: " if auto else ""
            summary.append(f" · {what}{len(connecting)} {noun} connecting", style="yellow")
        elif not self.defer:
            summary.append(" · deferral off", style="yellow")
        if failed:
            summary.append(f" · {len(failed)} failed (Enter: why)", style="red")
        return summary

    def _signature(self, group: str, tools: list[ToolSpec], matching: list[ToolSpec]) -> tuple[Any, ...]:
        """Everything one server's subtree shows: equal signatures draw equal subtrees (tools
        compare by identity first, so an unchanged listing costs no schema comparison)."""
        rows = tuple(
            (t, self._engine.tool_state(t, self.loaded_names, defer=self.defer), self.tokens.get(t.name))
            for t in matching
        )
        return (
            self.statuses.get(group),
            len(tools),
            self.group_tokens(tools),
            self._filter,
            rows,
            len(self._warnings(group)),
        )

    def _warnings(self, group: str) -> list[str]:
        """The server's distinct warnings (dropped tools, schema repairs, stray output)."""
        return [] if group == BUILTIN_GROUP else self._engine.server_warnings(group)

    def refresh_tree(self) -> None:
        """Bring the tree up to date with the catalog, rebuilding only the subtrees of servers
        whose rows changed; keeps expansion and the cursor where possible."""
        if not self.is_mounted:
            return
        tree = self.query_one(CatalogTree)
        nodes: dict[str, TreeNode[Any]] = {n.data: n for n in tree.root.children if isinstance(n.data, str)}
        first_build = not nodes
        cursor = tree.cursor_node.data if tree.cursor_node is not None else None
        shown = 0
        groups = self.groups()
        expand_all = bool(self._filter) or sum(len(t) for _, t in groups) <= 40
        visible: list[tuple[str, list[ToolSpec], list[ToolSpec]]] = []
        for group, tools in groups:
            matching = [t for t in tools if self._matches(t)]
            if not self._filter or matching or self._filter in group.lower():
                visible.append((group, tools, matching))
        wanted = {group for group, _, _ in visible}
        for group in set(nodes) - wanted:  # first, so the others keep their positions
            nodes.pop(group).remove()
            self._drawn.pop(group, None)
        rebuilt: list[str] = []
        for position, (group, tools, matching) in enumerate(visible):
            shown += len(matching)
            signature = self._signature(group, tools, matching)
            node = nodes.get(group)
            if node is not None and self._drawn.get(group) == signature:
                continue
            rebuilt.append(group)
            self._drawn[group] = signature
            expanded = node.is_expanded if node is not None else False
            node = self._draw_group(tree, node, group, tools, matching, position)
            nodes[group] = node
            if matching and (expand_all or expanded or (first_build and group == BUILTIN_GROUP)):
                node.expand()
        self.last_rebuilt = rebuilt
        if rebuilt and cursor is not None and (tree.cursor_node is None or tree.cursor_node.data != cursor):
            self._restore_cursor(tree, cursor)
        self._shown = shown
        self._refresh.ran()
        summary = self.summary()
        if summary != self._summary:  # a Static update lays out the screen again
            self._summary = summary
            self.query_one("#catalog-summary", Static).update(summary)

    def _draw_group(
        self,
        tree: CatalogTree,
        node: TreeNode[Any] | None,
        group: str,
        tools: list[ToolSpec],
        matching: list[ToolSpec],
        position: int,
    ) -> TreeNode[Any]:
        """(Re)draw one server's subtree at ``position`` among the root's children."""
        status = self.statuses.get(group)
        label = server_label(
            group, status, len(tools), self.group_tokens(tools), len(matching) if self._filter else None
        )
        failed = status is not None and status.state in UNSTARTED  # reason (or command) shown below
        warnings = self._warnings(group)
        expandable = bool(matching) or failed or bool(warnings)
        children = tree.root.children
        if node is not None and (position >= len(children) or children[position] is not node):
            node.remove()  # moved: re-add at its place
            node = None
        if node is None:
            before = position if position < len(children) else None
            node = tree.root.add(label, data=group, allow_expand=expandable, before=before)
        else:
            node.set_label(label)
            node.allow_expand = expandable
            node.remove_children()
        if failed:
            reason = Text(clean(status.error or "no reason given", single_line=True), style="red")  # type: ignore[union-attr]
            node.add_leaf(reason, data=f"{group}:error")
            node.expand()
        for warning in warnings:  # one line each, under the server they are about
            node.add_leaf(Text("⚠ " + clean(warning, single_line=True), style="yellow"), data=f"{group}:warning")
        for tool in matching:
            state = self._engine.tool_state(tool, self.loaded_names, defer=self.defer)
            node.add_leaf(tool_label(tool, state, self.tokens.get(tool.name), self._filter), data=tool)
        if not matching and not failed:
            node.collapse()
        return node

    @staticmethod
    def _restore_cursor(tree: CatalogTree, cursor: Any) -> None:
        for n in _walk(tree.root):
            if n.data == cursor or (
                isinstance(n.data, ToolSpec) and isinstance(cursor, ToolSpec) and n.data.name == cursor.name
            ):
                tree.move_cursor(n)
                return


def _walk(node: TreeNode[Any]) -> list[TreeNode[Any]]:
    out: list[TreeNode[Any]] = []
    stack = list(reversed(node.children))
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(reversed(current.children))
    return out
