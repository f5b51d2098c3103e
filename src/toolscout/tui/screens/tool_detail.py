"""Details dialogs: a tool (description, server instructions, input schema) and a failed server
(the full reason it failed, which the catalog tree cannot wrap)."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, Static

from toolscout.core.models import ServerStatus, ToolSpec

from ..mouse import SafeMouseScreen
from ..text import clean


class ToolDetailScreen(SafeMouseScreen, ModalScreen[None]):
    """Everything about one tool. Esc or q closes it.

    Args:
        tool: the tool. state: its catalog state (``deferred``...). tokens: its full-definition
        cost. instructions: its server's ``instructions``, if any.
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "dismiss", "Close", id="detail.close")]

    def __init__(
        self, tool: ToolSpec, *, state: str = "", tokens: int | None = None, instructions: str | None = None
    ) -> None:
        super().__init__()
        self.tool = tool
        self.state = state
        self.tokens = tokens
        self.instructions = instructions

    def compose(self) -> ComposeResult:
        tool = self.tool
        yield Footer()  # this dialog's keys, not the main screen's under it
        with Vertical(id="detail-dialog", classes="dialog"):
            title = Text(clean(tool.name, single_line=True), style="bold cyan")
            yield Label(title, id="detail-title")
            meta = Text(style="dim")
            meta.append(f"server {clean(tool.server, single_line=True)}" if tool.server else "built-in")
            if self.state:
                meta.append(f" · {self.state}")
            if self.tokens is not None:
                meta.append(f" · {self.tokens:,} tokens inline")
            if tool.read_only:
                meta.append(" · read-only")
            yield Static(meta, id="detail-meta")
            with VerticalScroll(id="detail-body"):
                yield Label(Text("Description", style="bold"), classes="section")
                yield Static(Text(clean(tool.description) or "(none)"), classes="section-body")
                if self.instructions:
                    yield Label(Text("Server instructions", style="bold"), classes="section")
                    yield Static(Text(clean(self.instructions)), classes="section-body")
                yield Label(Text("Input schema", style="bold"), classes="section")
                yield Static(self._schema(tool.input_schema), classes="section-body")

    @staticmethod
    def _schema(schema: Any) -> Syntax:
        code = clean(json.dumps(schema, indent=2, ensure_ascii=False, default=str))
        return Syntax(code, "json", theme="ansi_dark", word_wrap=True, background_color="default")


class ServerDetailScreen(SafeMouseScreen, ModalScreen[None]):
    """One server's state, transport and the full reason it failed, wrapped. Esc or q closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "dismiss", "Close", id="detail.close")]

    def __init__(self, status: ServerStatus) -> None:
        super().__init__()
        self.status = status

    def compose(self) -> ComposeResult:
        status = self.status
        yield Footer()  # this dialog's keys, not the main screen's under it
        with Vertical(id="detail-dialog", classes="dialog"):
            yield Label(Text(clean(status.name, single_line=True), style="bold cyan"), id="detail-title")
            meta = Text(f"{status.state.value} · {status.transport} · {status.tool_count} tools", style="dim")
            yield Static(meta, id="detail-meta")
            with VerticalScroll(id="detail-body"):
                yield Label(Text("Reason", style="bold"), classes="section")
                yield Static(
                    Text(clean(status.error or "no reason given"), style="red"),
                    id="server-reason",
                    classes="section-body",
                )
