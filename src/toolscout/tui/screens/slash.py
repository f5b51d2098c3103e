"""Slash commands of the main screen (``/help``, ``/clear``, ``/context``, ``/toolsearch``,
``/mcp``, ``/search``, ``/settings``, ``/permissions``, ``/exit`` or ``/quit``) and the help text
they and F1 show."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any, Protocol

from rich.console import Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from textual.message import Message

from toolscout.core.models import ServerState, ServerStatus

from .. import messages as m
from ..panels import side_panels
from ..text import clean
from ..widgets.catalog import CatalogPanel
from ..widgets.chat import ErrorEntry, NoticeEntry, SearchEntry
from ..widgets.usage import UsagePanel, context_renderable
from ..widgets.welcome import mode_line

if TYPE_CHECKING:
    from toolscout.core.engine.facade import Engine

    from ..controller import SessionController
    from ..widgets.chat import ChatView


class CommandHost(Protocol):
    """What a slash command needs of the screen it runs on (the main screen); a protocol, so this
    module and the screen that imports it do not import each other."""

    controller: SessionController
    engine: Engine

    @property
    def chat(self) -> ChatView: ...

    def request(self, message: Message) -> None: ...

    def query_one(self, selector: Any, /, *args: Any) -> Any: ...


#: ``/help``'s slash commands: (command, what it does).
HELP_COMMANDS = (
    ("/context", "token usage per server and the tool-search mode decision"),
    ("/mcp", "server connection states"),
    ("/mcp reconnect NAME", "reconnect a server (one that crashed, failed or was disconnected)"),
    ("/mcp login NAME", "log in to a remote server that needs a login (OAuth: opens your browser)"),
    ("/search QUERY", "run ToolSearch (select:a,b · discover:topic · +required term)"),
    ("/toolsearch on", "switch tool search on for this session (deferred tools, found by search)"),
    ("/settings", "open the settings"),
    ("/permissions", "the permission rules in force, where each comes from; remove a saved answer"),
    ("/clear", "start a new conversation (the current one stays saved)"),
    ("/help", "this help (F1)"),
    ("/exit", "quit toolscout (also /quit or ctrl+q); the conversation stays saved for --resume"),
)
#: ``/help``'s keys before the side panels' (:func:`help_keys`): (key, what it does).
HELP_KEYS_FIRST = (
    ("Enter", "send the message; Shift+Enter or ctrl+j: a new line"),
    ("Up/Down", "the prompt's history (on its first or last line)"),
    ("Tab", "into the recommendation bar, or with none the newest search's hits: Enter uses a tool, Esc returns"),
    ("Esc", "interrupt a running turn"),
)
#: ``/help``'s keys after the side panels'.
HELP_KEYS_LAST = (
    ("F5", "settings"),
    ("ctrl+b", "show or hide the side panel"),
    ("ctrl+p", "every action (Run tool… runs any tool)"),
    ("ctrl+q", "quit (or /exit)"),
)


def help_keys() -> tuple[tuple[str, str], ...]:
    """``/help``'s keys: (key, what it does), each registered side panel's key among them."""
    return (*HELP_KEYS_FIRST, *((p.key_label, p.help) for p in side_panels()), *HELP_KEYS_LAST)


def help_renderable() -> Group:
    """The help ``/help`` and F1 show: two headed grids whose descriptions share one column and
    wrap at word boundaries under themselves, at any chat width."""
    keys = help_keys()
    width = max(len(name) for name, _ in HELP_COMMANDS + keys)

    def grid(rows: tuple[tuple[str, str], ...]) -> Padding:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True, min_width=width)
        table.add_column(ratio=1, overflow="fold")
        for name, what in rows:
            table.add_row(Text(name), Text(what))
        return Padding(table, (0, 0, 0, 2))

    return Group(
        Text("Slash commands:", style="bold"), grid(HELP_COMMANDS), Text(""), Text("Keys:", style="bold"), grid(keys)
    )


def run_command(screen: CommandHost, line: str) -> None:
    """Run one slash command (``/name args``) on the main screen; unknown names show an error."""
    name, _, arg = line[1:].partition(" ")
    name = name.lower()
    arg = arg.strip()
    chat = screen.chat
    if name == "help":
        chat.add(NoticeEntry(help_renderable(), title="help"))
    elif name == "clear":
        screen.request(m.NewConversationRequested())
    elif name in ("exit", "quit"):
        screen.request(m.QuitRequested())
    elif name == "permissions":
        screen.request(m.PermissionsRequested())
    elif name == "settings":
        screen.request(m.SettingsRequested())
    elif name == "context":
        controller = screen.controller
        chat.add(
            NoticeEntry(context_renderable(controller.context_report(), controller.cache_stats()), title="/context")
        )
    elif name == "toolsearch":
        tool_search(screen, arg.lower())
    elif name == "mcp":
        mcp(screen, arg)
    elif name == "search":
        if not arg:
            chat.add(ErrorEntry("usage: /search QUERY"))
            return
        chat.add(SearchEntry(screen.engine.search_tools(arg)))
    else:
        chat.add(ErrorEntry(f"unknown command /{name}: try /help"))


def mcp(screen: CommandHost, arg: str) -> None:
    """``/mcp``: every server's state in the chat; ``/mcp reconnect NAME`` asks the controller
    to reconnect server NAME, ``/mcp login NAME`` to log in to it (the chat says how it went)."""
    verb, _, server = arg.partition(" ")
    if verb.lower() == "reconnect" and server.strip():
        screen.request(m.ServerReconnectRequested(server.strip()))
    elif verb.lower() == "login" and server.strip():
        screen.request(m.ServerLoginRequested(server.strip()))
    elif arg:
        screen.chat.add(ErrorEntry("usage: /mcp (server states), /mcp reconnect NAME or /mcp login NAME"))
    else:
        statuses = list(screen.query_one(CatalogPanel).statuses.values())
        again = {s.name for s in statuses if screen.engine.can_reconnect(s.name)}
        screen.chat.add(NoticeEntry(server_table(statuses, again), title="/mcp"))


def tool_search(screen: CommandHost, arg: str) -> None:
    """``/toolsearch``: the tool-search verdict in the chat; ``/toolsearch on`` asks the controller
    to switch it on for this session."""
    if arg == "on":
        screen.request(m.ToolSearchOnRequested())
    elif arg:
        screen.chat.add(ErrorEntry("usage: /toolsearch on (F5 → Tool search sets auto, true or false for good)"))
    else:
        controller = screen.controller
        decision = controller.mode_decision(screen.query_one(UsagePanel).report)
        source = str(controller.settings.sources.get("toolSearch.enabled", ""))
        screen.chat.add(NoticeEntry(mode_line(decision, source), title="/toolsearch"))


def server_table(statuses: list[ServerStatus], reconnectable: Collection[str] = ()) -> Text:
    """Every server with its state, tool count and transport (``/mcp``); under each, the full
    reason it failed or disconnected (or its instructions, cut to a line), so nothing hides behind
    a column edge, and for those of ``reconnectable`` the command that reconnects them (or, for a
    remote server that needs a login, the command that logs in: nothing logs in by itself)."""
    if not statuses:
        return Text("no MCP servers configured", style="dim")
    out = Text()
    for status in statuses:
        colour = {"connected": "green", "failed": "red", "connecting": "yellow"}.get(status.state.value, "dim")
        out.append(clean(status.name, single_line=True), style="bold")
        out.append("  needs login" if status.needs_login else f"  {status.state.value}", style=colour)
        out.append(
            f" · {status.tool_count} tool{'s' if status.tool_count != 1 else ''} · {status.transport}\n", style="dim"
        )
        if status.state in (ServerState.FAILED, ServerState.DISCONNECTED):
            if status.error or status.state is ServerState.FAILED:
                out.append(f"  {clean(status.error or 'no reason given', single_line=True)}\n", style=colour)
            if status.needs_login and status.name in reconnectable:
                name = clean(status.name, single_line=True)
                out.append(f"  /mcp login {name} to log in (opens your browser)\n", style="bold")
            elif status.name in reconnectable:
                out.append(f"  /mcp reconnect {clean(status.name, single_line=True)} to try again\n", style="dim")
        elif status.instructions:
            out.append(f"  {clean(status.instructions, single_line=True, limit=100)}\n", style="dim")
    out.rstrip()
    return out
