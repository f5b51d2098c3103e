"""The permission prompt: may this tool run with these arguments?

It always names the real tool (``mcp__github__create_issue``), never the ExecuteTool proxy that
carried the call, and shows the arguments exactly as they will be sent, whole (a box that
scrolls, which says how long they are when they do not fit). It says what each answer grants:

- a tool whose description or schema changed since it was approved says so first, with what
  changed and its new description (:mod:`toolscout.core.policy.approvals`);
- "Always allow" of WebFetch to a host that is a loopback, link-local or private address saves
  a rule that, from the next run on (when the settings file is read), also lets WebFetch reach
  that address (network tools never connect to one otherwise:
  :mod:`toolscout.core.builtins.netguard`); the dialog says so, and "Allow once" keeps the focus.
"""

from __future__ import annotations

import asyncio
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Label, Static

from toolscout.core.models import ToolSpec
from toolscout.core.policy.approvals import ToolChange

from ..mouse import SafeMouseScreen
from ..text import clean, first_line, tildify
from ..widgets.chat import pretty_json

if TYPE_CHECKING:
    from toolscout.core.engine.facade import Engine
    from toolscout.core.policy.permissions import AskAnswer


class PermissionDecision(StrEnum):
    """What the person answered."""

    ALLOW_ONCE = "allow_once"
    ALWAYS_ALLOW = "always"
    DENY = "deny"


class PermissionScreen(SafeMouseScreen, ModalScreen[PermissionDecision]):
    """Ask before a tool runs. Dismisses with a :class:`PermissionDecision`.

    Args:
        tool_name: canonical name of the tool that will run.
        arguments: the arguments it will receive.
        tool: the tool's spec when known (for the server and description lines).
        saves_to: the file "Always allow" writes its rule to (shown as given), or None when the
            answer lasts for this session only (:mod:`toolscout.core.policy.local_rules`).
        session_only_reason: why it lasts for this session only (shown in brackets), or "".
        change: how the tool changed since it was approved, or None.
        private_grant: for WebFetch to a private host: ``(rule, host, addresses)`` that "Always
            allow" would save, or None.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "decide('allow_once')", "Allow once", id="permission.allow_once"),
        Binding("a", "decide('always')", "Always allow", id="permission.always_allow"),
        Binding("n,escape", "decide('deny')", "Deny", id="permission.deny"),
    ]

    def __init__(
        self,
        tool_name: str,
        arguments: dict[str, Any],
        tool: ToolSpec | None = None,
        *,
        saves_to: str | None = None,
        session_only_reason: str = "",
        change: ToolChange | None = None,
        private_grant: tuple[str, str, tuple[str, ...]] | None = None,
    ) -> None:
        super().__init__()
        self.tool_name = tool_name
        self.arguments = arguments
        self.tool = tool
        self.saves_to = saves_to
        self.session_only_reason = session_only_reason
        self.change = change
        self.private_grant = private_grant

    def compose(self) -> ComposeResult:
        yield Footer()  # this dialog's keys, not the main screen's under it
        with Vertical(id="permission-dialog", classes="dialog"):
            title = Text("Allow ", style="bold")
            title.append(clean(self.tool_name, single_line=True), style="bold yellow")
            title.append(" to run?", style="bold")
            yield Label(title, id="permission-title")
            if self.tool is not None:
                where = Text(
                    f"server {clean(self.tool.server, single_line=True)}" if self.tool.server else "built-in tool",
                    style="dim",
                )
                desc = first_line(self.tool.description, 200)
                if desc:
                    where.append(" · " + desc, style="dim")
                yield Static(where, id="permission-tool")
            if self.change is not None:
                with VerticalScroll(id="permission-change"):
                    yield Static(change_text(self.change))
            shown = clean(pretty_json(self.arguments))
            if shown.count("\n") + 1 > ARGS_LINES or len(shown) > ARGS_LINES * 60:
                yield Static(
                    Text(
                        f"Arguments: {len(shown):,} characters, {shown.count(chr(10)) + 1:,} lines, shown "
                        "whole: scroll the box (Shift+Tab, then ↑↓ PgUp PgDn End) to read them all.",
                        style="dim",
                    ),
                    id="permission-args-size",
                )
            with VerticalScroll(id="permission-args"):
                yield Static(Text(shown))
            always = Text("Always allow: ", style="dim")
            if self.tool is not None and self.tool.server is None and self.tool_name == "Bash":
                always.append("this exact command; ", style="dim")
            if self.saves_to is not None:
                always.append("don't ask again in this project (saved to ", style="dim")
                always.append(clean(self.saves_to, single_line=True), style="bold")
                always.append(")", style="dim")
            else:
                reason = f" ({self.session_only_reason})" if self.session_only_reason else ""
                always.append(f"for this session only{reason}", style="dim")
            if self.private_grant is not None:
                rule, host, addresses = self.private_grant
                always.append("\nThis also lets WebFetch reach the private address ", style="bold yellow")
                always.append(clean(host, single_line=True), style="bold")
                if addresses and addresses != (host,):
                    always.append(f" ({clean(', '.join(addresses), single_line=True)})", style="bold")
                always.append(
                    f" from the next run on: it saves {clean(rule, single_line=True)}, and network "
                    "tools otherwise never connect to a loopback, link-local or private address.",
                    style="yellow",
                )
            yield Static(always, id="permission-always")
            with Horizontal(classes="buttons"):
                yield Button("Allow once (y)", id="allow_once", variant="primary", compact=True)
                yield Button(
                    "Always allow (a)" if self.saves_to is not None else "Allow for this session (a)",
                    id="always",
                    variant="success",
                    compact=True,
                )
                yield Button("Deny (n)", id="deny", variant="error", compact=True)

    def on_mount(self) -> None:
        self.query_one("#allow_once", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_decide(event.button.id or "deny")

    def action_decide(self, decision: str) -> None:
        """Close with ``decision`` (a :class:`PermissionDecision` value)."""
        self.dismiss(PermissionDecision(decision))


#: Lines of arguments the box shows before it scrolls (``#permission-args`` in styles/modals.tcss).
ARGS_LINES = 12


def change_text(change: ToolChange) -> Text:
    """What changed in a tool since it was approved, and its new description (shown literally)."""
    text = Text("This tool changed since it was approved", style="bold red")
    text.append(" (in an earlier run)" if change.saved else "", style="red")
    text.append(f": {change.what}. Read it before allowing it again.", style="bold red")
    if "description" in change.parts:
        text.append("\nNow: ", style="bold")
        text.append(clean(change.new_description))
        if change.old_description is not None:
            text.append("\nWas: ", style="bold")
            text.append(clean(change.old_description), style="dim")
    return text


def rules_file_shown(engine: Engine) -> str | None:
    """The file "Always allow" saves to, relative to the project when inside it."""
    path = engine.allow_rules_file
    if path is None:
        return None
    try:
        return str(path.relative_to(engine.project_dir))
    except ValueError:
        return tildify(str(path))


async def ask(app: App[Any], engine: Engine, tool: ToolSpec, params: dict[str, Any]) -> AskAnswer:
    """Show the permission prompt for ``tool`` with ``params`` over ``app`` and wait for the answer.

    Args:
        app: shows the prompt.
        engine: looks up a bare tool name; says where "Always allow" saves and whether the
            folder is approved.
        tool: the real tool, never the ExecuteTool proxy (a bare name is looked up).
        params: the arguments it will be called with.

    Returns:
        ``"allow_once"``, ``"always"`` or ``"deny"`` (closing the prompt otherwise denies).
    """
    spec = tool if isinstance(tool, ToolSpec) else engine.tool(str(tool))
    name = spec.name if spec is not None else str(tool)
    shown = params if isinstance(params, dict) else {"_raw": params}
    future: asyncio.Future[PermissionDecision] = asyncio.get_running_loop().create_future()

    def done(decision: PermissionDecision | None) -> None:
        if not future.done():
            future.set_result(decision or PermissionDecision.DENY)

    trust = engine.folder_trust
    why = "" if trust is None or trust.approved else "this folder is not approved, so its settings are not read"
    change = engine.tool_change(spec) if spec is not None else None
    saves_to = rules_file_shown(engine)
    grant = await private_grant(spec, shown, engine) if spec is not None and saves_to is not None else None
    app.push_screen(
        PermissionScreen(
            name, shown, spec, saves_to=saves_to, session_only_reason=why, change=change, private_grant=grant
        ),
        done,
    )
    answers: dict[PermissionDecision, AskAnswer] = {
        PermissionDecision.ALLOW_ONCE: "allow_once",
        PermissionDecision.ALWAYS_ALLOW: "always",
        PermissionDecision.DENY: "deny",
    }
    return answers[await future]


async def private_grant(
    tool: ToolSpec, params: dict[str, Any], engine: Engine
) -> tuple[str, str, tuple[str, ...]] | None:
    """For a network built-in whose URL's host is a loopback, link-local or private address
    (resolved, bounded by :data:`RESOLVE_TIMEOUT_S`): ``(the rule "Always allow" saves, host,
    its private addresses)``, which lifts the private-address guard for that host; else None."""
    from toolscout.core.builtins.netguard import private_addresses
    from toolscout.core.rules.specs import NETWORK_TOOLS, session_rule, url_host

    if tool.server is not None or tool.name not in NETWORK_TOOLS:
        return None
    host = url_host(params.get("url"))
    if host is None:
        return None
    addresses = await private_addresses(host, RESOLVE_TIMEOUT_S)
    if not addresses:
        return None
    return session_rule(tool.name, params, engine.project_dir), host, tuple(addresses)


#: Bound on resolving a URL's host for the private-address note (s); unresolved: no note.
RESOLVE_TIMEOUT_S = 2.0
