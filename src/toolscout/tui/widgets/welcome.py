"""The welcome notice: what to do first, matching the settings, and the tool-search verdict in
one line with the way to switch it on (``/toolsearch on``) when every tool is inline.

The verdict is known once the first token report is ready (servers may still be connecting at
first paint), so the entry starts without it and :meth:`WelcomeEntry.show` redraws it whenever
the settings or the decision change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from ..text import clean
from .chat import NoticeEntry

if TYPE_CHECKING:
    from toolscout.core.engine.native_choice import NativeChoice
    from toolscout.core.tokens import ModeDecision

#: What to do first, by kind of session (``model``, ``offline``, ``none``) and whether the
#: recommendation bar is on.
WELCOME = {
    ("model", True): "Ask anything; the model calls the tools it needs. Recommended tools appear above "
    "the prompt (Tab to pick one).",
    ("model", False): "Ask anything; the model calls the tools it needs. Ctrl+P → Run tool… runs one yourself.",
    ("offline", True): "No model is configured, so you drive: describe what you want and your words become a "
    "ToolSearch. Tab into the recommended tools; Enter fills in a tool's arguments and runs it.",
    ("offline", False): "No model is configured, so you drive: describe what you want and your words become a "
    "ToolSearch. Tab into its hits in the chat (or Enter on a tool in the catalog, F2, or "
    "Ctrl+P → Run tool…); Enter fills in a tool's arguments and runs it.",
    ("none", True): "Catalog only: browse tools (F2), rank them live (F3) and see token usage (F4).",
}
WELCOME[("none", False)] = WELCOME[("none", True)]

#: How to see deferral when every tool is inline (the slash command of :mod:`..screens.main`).
SWITCH_HINT = "/toolsearch on defers them for this session"


def mode_line(decision: ModeDecision | None, source: str = "") -> Text:
    """The tool-search verdict (:attr:`~toolscout.core.tokens.ModeDecision.summary`), where an
    always-on mode comes from (``source``: ``Settings.sources["toolSearch.enabled"]``) and, when
    every tool is inline, how to switch deferral on."""
    if decision is None:
        return Text("tool search: deciding once the catalog is loaded…", style="dim")
    out = Text(clean(decision.summary, single_line=True), style="" if decision.defer else "bold yellow")
    if decision.mode == "tst":
        why = source if source.startswith(("offline session", "this session")) else "toolSearch.enabled = true"
        out.append(f" ({why})", style="dim")
    if not decision.defer and not decision.deciding:
        out.append(f" · {SWITCH_HINT}", style="cyan")
    return out


class WelcomeEntry(NoticeEntry):
    """The first chat entry. Args: ``kind``: ``model``, ``offline`` or ``none``."""

    def __init__(self, kind: str, recommendations: bool) -> None:
        super().__init__("", title="welcome")
        self.kind = kind
        self.recommendations = recommendations
        self.decision: ModeDecision | None = None
        self.source = ""
        #: the provider's deferral path (native or portable) once a report says it
        self.native: NativeChoice | None = None
        self.update(self.body())

    def body(self) -> Text:
        """First steps, the verdict line, and where the help is."""
        out = Text(WELCOME[(self.kind, self.recommendations)])
        if self.kind != "none" or self.decision is not None:
            out.append("\n")
            out.append_text(mode_line(self.decision, self.source))
            if self.native is not None and self.decision is not None and self.decision.defer:
                out.append("\n" + clean(self.native.reason, single_line=True), style="dim")
        out.append("\n/help lists the commands and keys.")
        return out

    def show(
        self,
        *,
        kind: str | None = None,
        recommendations: bool | None = None,
        decision: ModeDecision | None = None,
        source: str | None = None,
        native: NativeChoice | None = None,
    ) -> None:
        """Redraw with what changed (settings, the mode's source, session kind, the decision or
        the deferral path)."""
        self.native = native if native is not None else self.native
        self.kind = kind if kind is not None else self.kind
        self.source = source if source is not None else self.source
        self.recommendations = recommendations if recommendations is not None else self.recommendations
        self.decision = decision if decision is not None else self.decision
        self.update(self.body())
