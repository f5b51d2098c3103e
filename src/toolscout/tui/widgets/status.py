"""The one-line status bar at the top: provider and model, tool-search mode, servers, turn state."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ...core.models import ServerState, ServerStatus
from ..text import clean


class StatusBar(Widget):
    """Shows what the session runs on and what it is doing. No clock: snapshots stay stable.

    Its reactives are bound to the main screen's (``data_bind``), which sets them from the
    controller's messages.
    """

    provider: reactive[str] = reactive("offline")
    model: reactive[str] = reactive("")
    mode: reactive[str] = reactive("")
    busy: reactive[bool] = reactive(False)
    starting: reactive[bool] = reactive(False)
    servers: reactive[dict[str, ServerStatus]] = reactive(dict, always_update=True)
    #: First-time encoding for the dense ranker: (done, total, eta seconds or None), or None.
    encoding: reactive[tuple[int, int, float | None] | None] = reactive(None)

    def render(self) -> Text:
        out = Text(no_wrap=True, overflow="ellipsis")
        out.append(" toolscout ", style="bold reverse")
        out.append(f"  {clean(self.provider, single_line=True)}", style="bold")
        if self.model:
            out.append(f" · {clean(self.model, single_line=True)}")
        if self.mode:
            out.append(f"  {self.mode}", style="dim")
        states = [s.state for s in self.servers.values()]
        if states:
            connected = sum(s is ServerState.CONNECTED for s in states)
            out.append(f"  servers {connected}/{len(states)}", style="dim")
            connecting = sum(s is ServerState.CONNECTING for s in states)
            failed = sum(s is ServerState.FAILED for s in states)
            if connecting:
                out.append(f" · {connecting} connecting", style="yellow")
            if failed:
                out.append(f" · {failed} failed", style="red")
        if self.encoding is not None:
            done, total, eta = self.encoding
            out.append(f"  encoding tools {done:,}/{total:,}", style="yellow")
            out.append(f" · ETA {format_eta(eta)}" if eta is not None else "", style="yellow")
        out.append("  ")
        if self.starting:
            out.append("◌ loading tools…", style="yellow")
        elif self.busy:
            out.append("● working — Esc to interrupt", style="bold yellow")
        else:
            out.append("○ ready", style="green")
        return out


def format_eta(seconds: float) -> str:
    """``42 s``, ``3 min 05 s`` or ``1 h 02 min``: an ETA for a status line."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"
