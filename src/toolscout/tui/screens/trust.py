"""The folder trust prompt: may this folder's own ``.mcp.json`` and allow rules take effect?

Shown once per folder (and again when the commands of its ``.mcp.json`` change), over the main
screen, when the app starts in a folder that is not approved (:mod:`toolscout.core.trust`). It
lists what approval would start (every project server with its command line) and which project
grants are ignored until then. Everything it shows comes from the folder and is untrusted: it is
rendered literally; names and command lines are escaped as ``toolscout mcp list`` escapes them
(:func:`toolscout.core.sanitize.escape_all`: a newline shows as ``\\n``, a bidi override as
``\\u202e``), so the prompt shows exactly what would run; the rest has control sequences stripped.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Label, Static

from ...core.sanitize import escape_all
from ...core.trust import FolderTrust, approve_folder, ignored_grants, trusted_settings
from ..text import clean

if TYPE_CHECKING:
    from collections.abc import Callable

    from ...core.engine import Engine
    from ...core.settings import Settings

log = logging.getLogger(__name__)

#: A command line longer than this (escaped) is cut, ending with an ellipsis (never from the file).
COMMAND_LIMIT = 2000


class TrustScreen(ModalScreen[bool]):
    """Ask whether to trust a project folder. Dismisses with True (approve) or False (not now).

    Args:
        trust: the folder's current (unapproved) state.
        servers: ``(name, command line)`` of every project server that approval would start.
        grants: the ignored project grants, one ``file: key = value`` line each.
    """

    DEFAULT_CSS = """
    TrustScreen { align: center middle; background: $background 60%; }
    #trust-dialog { width: 84; max-width: 95%; height: auto; border: thick $error 80%;
                    background: $surface; padding: 1 2; }
    #trust-title { margin-bottom: 1; }
    #trust-details { height: auto; max-height: 14; background: $boost; padding: 0 1; }
    #trust-dialog .buttons { height: auto; margin-top: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "decide(True)", "Trust this folder", id="trust.approve"),
        Binding("n,escape", "decide(False)", "Not now", id="trust.reject"),
    ]

    def __init__(self, trust: FolderTrust, servers: list[tuple[str, str]], grants: list[str]) -> None:
        super().__init__()
        self.trust = trust
        self.servers = servers
        self.grants = grants

    def compose(self) -> ComposeResult:
        yield Footer()
        with Vertical(id="trust-dialog"):
            title = Text("Do you trust the files in this folder?\n", style="bold")
            title.append(clean(self.trust.folder, single_line=True), style="bold yellow")
            yield Label(title, id="trust-title")
            changed = self.trust.what_changed
            why = f"{changed[0].upper()}{changed[1:]}. " if changed else ""
            yield Static(Text(why + "Approving starts the project's MCP servers below and applies its "
                              "permissions.allow rules. Deny rules always apply.", style="dim"))
            details = Text()
            for name, command in self.servers:  # escaped: a newline or bidi override is shown, not obeyed
                details.append(escape_all(name), style="bold")
                details.append(f"  would run  {escape_all(command, limit=COMMAND_LIMIT)}\n")
            for line in self.grants:
                details.append(f"ignored until approved: {clean(line, single_line=True, limit=300)}\n", style="yellow")
            with VerticalScroll(id="trust-details"):
                yield Static(details or Text("(project settings files only)"), id="trust-items")
            with Horizontal(classes="buttons"):
                yield Button("Trust this folder (y)", id="approve", variant="warning", compact=True)
                yield Button("Not now (n)", id="reject", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.query_one("#reject", Button).focus()  # the safe answer is the default

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_decide(event.button.id == "approve")

    def action_decide(self, approve: bool) -> None:
        """Close with the answer."""
        self.dismiss(bool(approve))


def ask_folder_trust(app: App[Any], engine: Engine, current: Callable[[], Settings],
                     use: Callable[[Settings], None]) -> bool:
    """Push the trust prompt when ``engine``'s folder is not approved; on approval store it
    (user config dir), apply the project's grants and start its servers. Returns True when the
    prompt was shown.

    Args:
        app: shows the prompt and the notices.
        engine: whose folder, policy and servers the approval concerns.
        current: the app's settings now in effect (with this run's own overrides).
        use: the app's one entry point for new settings (session, engine and widgets agree).
    """
    trust = engine.folder_trust
    if trust is None or trust.approved:
        return False
    servers = [(cfg.configured_name or cfg.name, cfg.command_line()) for cfg in engine.unapproved_servers()]

    async def approve() -> None:
        try:
            engine.folder_trust = approve_folder(trust.folder)
        except OSError as exc:  # TrustStoreError too: a store it cannot parse is left as is
            app.notify(f"could not store the approval: {exc}. The folder is trusted for this session only.",
                       severity="warning", markup=False)
            engine.folder_trust = replace(trust, approved=True, how="this session")
        settings = trusted_settings(current())
        use(settings)
        await engine.approve_project(settings)
        app.notify("Folder trusted: its project servers are starting.")

    def answered(yes: bool | None) -> None:
        if yes:
            app.run_worker(approve(), group="trust", exit_on_error=False)

    app.push_screen(TrustScreen(trust, servers, ignored_grants(engine.settings)), answered)
    return True
