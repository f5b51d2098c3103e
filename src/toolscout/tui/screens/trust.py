"""The folder trust prompt: may this folder's own ``.mcp.json`` and allow rules take effect?

Shown once per folder (and again when the commands of its ``.mcp.json``, or of an
``--mcp-config`` file inside it, change), over the main screen, when the app starts in a folder
that is not approved (:mod:`toolscout.core.policy.trust`). It lists what approval would start (every
project server, those of the project's ``--mcp-config`` files too, each of those saying its file,
with its command line, working dir, environment and headers as the file writes them, ``${VAR}`` unexpanded, and the names of
the environment variables each reads; when the folder was approved before, which servers were
added, changed, in what, or removed since) and which project grants are ignored until then. Everything it shows
comes from the folder and is untrusted: it is rendered literally; names and launch details are
escaped as ``toolscout mcp list`` escapes them (:func:`toolscout.core.sanitize.escape_all`: a
newline shows as ``\\n``, a bidi override as ``\\u202e``), so the prompt shows exactly what would
run; the rest has control sequences stripped.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Label, Static

from toolscout.core.mcp.server_config import PROJECT_CONFIG, ServerConfig
from toolscout.core.policy.trust import (
    FolderTrust,
    TrustChangedError,
    approve_folder,
    ignored_grants,
    trusted_settings,
)
from toolscout.core.sanitize import escape_all

from ..mouse import SafeMouseScreen
from ..text import clean

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.timer import Timer

    from toolscout.core.engine.facade import Engine
    from toolscout.core.settings.layers import Settings

log = logging.getLogger(__name__)


class TrustScreen(SafeMouseScreen, ModalScreen[bool]):
    """Ask whether to trust a project folder. Dismisses with True (approve) or False (not now).

    Keys typed before the prompt could be read never answer it: the choices stay disabled until
    the prompt has been painted and then received no key for :attr:`ARM_AFTER_S` (every key
    before that starts the wait again), and a key that is not an answer, typed later, disables
    them again. Approving then takes a choice: Tab to "Trust this folder" and Enter (or a click);
    "Not now" has the focus, and ``n`` or Esc also mean "not now". Printable keys typed meanwhile
    are kept (shown in the prompt) and handed to ``keep_typed`` after the answer.

    Args:
        trust: the folder's current (unapproved) state.
        servers: ``(name, launch details, reads env)`` of every project server that approval
            would start: the name as written in its file, ``(label, text)`` pairs, escaped
            and as written (``ServerConfig.launch_details``: command line or URL, cwd, env,
            headers; ``${VAR}`` unexpanded; ``("file", path)`` for a server of a project
            ``--mcp-config`` file), and the line naming the environment variables it
            reads (``ServerConfig.reads_env``; ``""`` for none).
        grants: the ignored project grants, one ``file: key = value`` line each.
        keep_typed: receives the text typed while the prompt was up (the app's chat prompt);
            None drops it.
    """

    DEFAULT_CSS = """
    TrustScreen { align: center middle; background: $background 60%; }
    #trust-dialog { width: 84; max-width: 95%; height: auto; border: thick $error 80%;
                    background: $surface; padding: 1 2; }
    #trust-title { margin-bottom: 1; }
    #trust-details { height: auto; max-height: 14; background: $boost; padding: 0 1; }
    #trust-typed { margin-top: 1; }
    #trust-dialog .buttons { height: auto; margin-top: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n,escape", "decide(False)", "Not now", id="trust.reject"),
        Binding("tab,shift+tab,left,right", "other_choice", "Choose", id="trust.choose"),
        Binding("up", "scroll_details(-1)", show=False),
        Binding("down", "scroll_details(1)", show=False),
        Binding("pageup", "scroll_details(-10)", show=False),
        Binding("pagedown", "scroll_details(10)", show=False),
    ]
    #: Quiet time after the first paint (and after any key that is not an answer) before the
    #: choices can be used (s): the person has had the prompt in front of them, not typing.
    ARM_AFTER_S: ClassVar[float] = 0.6
    #: Keys that answer, or move between the answers and the details, once the prompt is armed.
    ANSWER_KEYS: ClassVar[frozenset[str]] = frozenset(
        {"enter", "n", "escape", "tab", "shift+tab", "left", "right", "up", "down", "pageup", "pagedown"}
    )

    def __init__(
        self,
        trust: FolderTrust,
        servers: list[tuple[str, list[tuple[str, str]], str]],
        grants: list[str],
        keep_typed: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__()
        self.trust = trust
        self.servers = servers
        self.grants = grants
        self.keep_typed = keep_typed
        #: True once the choices can be used (see the class docstring).
        self.armed = False
        #: Printable text typed while the prompt was up (handed to ``keep_typed``).
        self.typed = ""
        self._painted = False
        self._arming: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Footer()
        with Vertical(id="trust-dialog"):
            title = Text("Do you trust the files in this folder?\n", style="bold")
            title.append(clean(self.trust.folder, single_line=True), style="bold yellow")
            yield Label(title, id="trust-title")
            changed = self.trust.what_changed
            why = f"{changed[0].upper()}{changed[1:]}. " if changed else ""
            yield Static(
                Text(
                    why + "Approving starts the project's MCP servers below and applies its "
                    "permissions.allow rules. Deny rules always apply.",
                    style="dim",
                )
            )
            details = self._servers_text()
            for line in self.grants:
                details.append(f"ignored until approved: {clean(line, single_line=True, limit=300)}\n", style="yellow")
            with VerticalScroll(id="trust-details", can_focus=False):  # the choices keep the focus
                yield Static(details or Text("(project settings files only)"), id="trust-items")
            yield Static("", id="trust-typed")
            with Horizontal(classes="buttons"):
                yield Button("Trust this folder", id="approve", variant="warning", compact=True, disabled=True)
                yield Button("Not now (n)", id="reject", variant="primary", compact=True, disabled=True)
            yield Static(Text("Tab or ←/→: choose · Enter: answer · n or Esc: not now · ↑/↓: scroll", style="dim"))

    def _servers_text(self) -> Text:
        """Each server with what starting it would do (as written: ``${VAR}`` shown, never the
        person's value) and which environment variables it reads, and how it changed since the
        approval (when the folder was approved before and the approval says); the servers removed
        since. Everything from the file is escaped: a newline or a bidi override is shown, not obeyed."""
        out = Text()
        for name, details, reads_env in self.servers:
            out.append(escape_all(name), style="bold")
            change = self.trust.change_of(name)
            if change is not None:
                out.append(f"  {change.kind} since you approved it", style="bold yellow")
                out.append(f": {', '.join(change.fields)}" if change.fields else "", style="yellow")
            elif self.trust.changes:
                out.append("  unchanged", style="dim")
            width = max(len(label) for label, _ in details)
            for label, text in details:
                out.append(f"\n  {label.ljust(width)}  ", style="dim")
                out.append(text)
            if reads_env:
                out.append(f"\n  {reads_env}", style="yellow")
            out.append("\n")
        for change in self.trust.changes or ():
            if change.kind == "removed":
                out.append(escape_all(change.name), style="bold")
                out.append("  removed since you approved it\n", style="bold yellow")
        return out

    def on_mount(self) -> None:
        self.query_one("#trust-typed").display = False
        self.call_after_refresh(self._shown)  # this screen's own callback: runs once it is painted

    def _shown(self) -> None:
        self._painted = True
        self._wait_for_quiet()

    def _wait_for_quiet(self) -> None:
        """(Re)start the quiet time after which the choices can be used; until then they cannot."""
        if self.armed:
            self.armed = False
            self._set_choices(enabled=False)
        if self._arming is not None:
            self._arming.stop()
        self._arming = self.set_timer(self.ARM_AFTER_S, self._arm) if self._painted else None

    def _arm(self) -> None:
        self.armed = True
        self._set_choices(enabled=True)
        self.query_one("#reject", Button).focus()  # the safe answer is the default, every time

    def _set_choices(self, *, enabled: bool) -> None:
        for button in self.query(Button):
            button.disabled = not enabled

    def on_key(self, event: events.Key) -> None:
        """Every key before the prompt is armed, and any key that is not an answer, answers
        nothing: it is kept (printable text; Backspace takes back the last character) and starts
        the quiet time again."""
        if self.armed and event.key in self.ANSWER_KEYS:
            return  # the bindings and the focused button take it
        event.stop()
        event.prevent_default()
        if event.key == "backspace":
            self._keep(self.typed[:-1])
        else:
            self._keep(self.typed + (event.character if event.is_printable and event.character else ""))

    def on_paste(self, event: events.Paste) -> None:
        """Pasted text answers nothing either: it is kept as typed text is."""
        event.stop()
        event.prevent_default()
        self._keep(self.typed + event.text)

    def _keep(self, typed: str) -> None:
        """``typed`` is now the text kept for ``keep_typed`` (shown, when kept); the quiet time
        starts again."""
        self.typed = typed
        if self.keep_typed is not None:
            shown = self.query_one("#trust-typed", Static)
            shown.display = bool(typed)
            shown.update(
                Text.assemble(
                    ("Typed here, not an answer (it goes to the prompt after you answer): ", "dim"),
                    clean(typed[-60:], single_line=True),
                )
            )
        self._wait_for_quiet()

    def action_other_choice(self) -> None:
        """Move the focus to the other choice (there are two)."""
        if self.armed:
            other = "#reject" if self.focused is self.query_one("#approve") else "#approve"
            self.query_one(other, Button).focus()

    def action_scroll_details(self, lines: int) -> None:
        """Scroll the list of what approval would run by ``lines``."""
        self.query_one("#trust-details", VerticalScroll).scroll_relative(y=lines, animate=False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_decide(event.button.id == "approve")

    def action_decide(self, approve: bool) -> None:
        """Close with the answer (only once armed); hand on what was typed meanwhile."""
        if not self.armed:
            return
        self.dismiss(bool(approve))
        if self.typed and self.keep_typed is not None:
            self.keep_typed(self.typed)


def _file_of(cfg: ServerConfig) -> list[tuple[str, str]]:
    """``[("file", path)]`` (escaped) for a server of a project ``--mcp-config`` file, else ``[]``
    (a ``.mcp.json`` server: the prompt is about that file)."""
    return [("file", escape_all(cfg.source, limit=300))] if cfg.scope == PROJECT_CONFIG else []


def ask_folder_trust(
    app: App[Any],
    engine: Engine,
    current: Callable[[], Settings],
    use: Callable[[Settings], None],
    keep_typed: Callable[[str], None] | None = None,
) -> bool:
    """Push the trust prompt when ``engine``'s folder is not approved; on approval store it
    (user config dir), apply the project's grants and start its servers. Returns True when the
    prompt was shown.

    Args:
        app: shows the prompt and the notices.
        engine: whose folder, policy and servers the approval concerns.
        current: the app's settings now in effect (with this run's own overrides).
        use: the app's one entry point for new settings (session, engine and widgets agree).
        keep_typed: receives what was typed while the prompt was up (:class:`TrustScreen`).
    """
    trust = engine.folder_trust
    if trust is None or trust.approved:
        return False
    servers = [
        (cfg.configured_name or cfg.name, [*cfg.launch_details(), *_file_of(cfg)], cfg.reads_env())
        for cfg in engine.unapproved_servers()
    ]

    async def approve() -> None:
        try:  # exactly what the prompt showed, or nothing
            approved = approve_folder(
                trust.folder, mcp_hash=trust.mcp_hash, grants_hash=trust.grants_hash, configs=trust.configs
            )
            engine.folder_trust = replace(approved, config_args=trust.config_args)
        except TrustChangedError as exc:
            app.notify(
                f"{exc}: nothing was started or applied. Restart toolscout to review the new version.",
                title="Folder not trusted",
                severity="error",
                markup=False,
                timeout=30,
            )
            return
        except OSError as exc:  # TrustStoreError too: a store it cannot parse is left as is
            app.notify(
                f"could not store the approval: {exc}. The folder is trusted for this session only.",
                severity="warning",
                markup=False,
            )
            engine.folder_trust = replace(trust, approved=True, how="this session")
        settings = trusted_settings(current())
        use(settings)
        await engine.approve_project(settings)
        app.notify("Folder trusted: its project servers are starting.")

    def answered(yes: bool | None) -> None:
        if yes:
            app.run_worker(approve(), group="trust", exit_on_error=False)

    app.push_screen(TrustScreen(trust, servers, ignored_grants(engine.settings), keep_typed), answered)
    return True
