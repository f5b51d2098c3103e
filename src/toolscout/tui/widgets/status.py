"""The one-line status bar at the top: provider and model, tool-search mode, servers, turn state."""

from __future__ import annotations

from typing import NamedTuple

from rich.cells import cell_len
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from toolscout.core.models import ServerState, ServerStatus

from ..text import clean


class StatusBar(Widget):
    """Shows what the session runs on and what it is doing. No clock: snapshots stay stable.
    Too narrow for all of it, it drops its least useful parts first (:meth:`parts`), never the
    turn state: "Esc to interrupt" stays in view at 80 columns.

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
        parts, state = self.parts()
        width = self.size.width

        def fits() -> bool:
            return not width or sum(cell_len(part.text) for part in parts + state) <= width

        # Narrow: drop the least useful parts first (rank 1 first), never the rank-0 ones.
        while not fits() and any(part.rank for part in parts + state):
            drop = min(part.rank for part in parts + state if part.rank)
            parts = [part for part in parts if part.rank != drop]
            state = [part for part in state if part.rank != drop]
        out, hint = _joined(parts), _joined(state)
        if width and out.cell_len + hint.cell_len > width:  # the provider's name alone is too long
            out.truncate(max(width - hint.cell_len, 0), overflow="ellipsis")
        out.append_text(hint)
        return out

    def parts(self) -> tuple[list[Part], list[Part]]:
        """The bar's parts left to right, then the turn state's, each with the rank in which a
        narrow bar drops it (1 first; 0 never): the tool-search strategy, the encoding's ETA, the
        connecting count, the mode, the encoding, the word "working", the model, the failed
        count, then the server count all go before the turn state ("● Esc to interrupt" while a
        turn runs) or the provider is cut."""
        parts = [Part(0, " toolscout ", "bold reverse"), Part(0, f"  {clean(self.provider, single_line=True)}", "bold")]
        if self.model:
            parts.append(Part(7, f" · {clean(self.model, single_line=True)}"))
        if self.mode:
            mode, dot, strategy = self.mode.partition(" · ")
            parts.append(Part(4, f"  {mode}", "dim"))
            if dot:
                parts.append(Part(1, f" · {strategy}", "dim", joined=True))
        states = [s.state for s in self.servers.values()]
        if states:
            connected = sum(s is ServerState.CONNECTED for s in states)
            parts.append(Part(9, f"  servers {connected}/{len(states)}", "dim"))
            connecting = sum(s is ServerState.CONNECTING for s in states)
            failed = sum(s is ServerState.FAILED for s in states)
            if connecting:
                parts.append(Part(3, f" · {connecting} connecting", "yellow"))
            if failed:
                parts.append(Part(8, f" · {failed} failed", "red"))
        if self.encoding is not None:
            done, total, eta = self.encoding
            parts.append(Part(5, f"  encoding tools {done:,}/{total:,}", "yellow"))
            if eta is not None:
                parts.append(Part(2, f" · ETA {format_eta(eta)}", "yellow"))
        state = [Part(0, "  ")]
        if self.starting:
            state.append(Part(0, "◌ loading tools…", "yellow"))
        elif self.busy:
            state += [
                Part(0, "● ", "bold yellow"),
                Part(6, "working — ", "bold yellow", joined=True),
                Part(0, "Esc to interrupt", "bold yellow", joined=True),
            ]
        else:
            state.append(Part(0, "○ ready", "green"))
        return parts, state


class Part(NamedTuple):
    """One part of the status bar."""

    #: When a narrow bar drops it: rank 1 first, then 2, ...; 0 never.
    rank: int
    text: str
    style: str = ""
    #: Drawn in one run with the part before (of the same style), as one piece of text.
    joined: bool = False


def _joined(parts: list[Part]) -> Text:
    """``parts`` as one line: each part a run of its style, a ``joined`` one added to the run
    before it (the segments the bar drew before it had parts to drop)."""
    out = Text(no_wrap=True, overflow="ellipsis")
    runs: list[list[str]] = []
    for part in parts:
        if part.joined and runs:
            runs[-1][0] += part.text
        else:
            runs.append([part.text, part.style])
    for text, style in runs:
        out.append(text, style=style)
    return out


def format_eta(seconds: float) -> str:
    """``42 s``, ``3 min 05 s`` or ``1 h 02 min``: an ETA for a status line."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"
