"""The recommendation bar above the prompt: the session's top recommended deferred tools.

Tab (from the prompt) enters the bar; Tab/Shift+Tab and Up/Down move between items, Enter picks
one (:class:`RecommendationBar.Picked`); Esc (the main screen's one binding) goes back to the
prompt, or interrupts a running turn first. The bar is hidden while it has nothing to show or
recommendations are switched off (:class:`RecommendationBar.Left` when focus had to leave it);
new tools replacing the ones shown keep the focus in the bar, on the first new item. Tools that
leave the catalog leave the bar (:meth:`RecommendationBar.drop_missing`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from toolscout.core.session.events import Recommendation

from ..text import clean, first_line


class RecommendationItem(Static, can_focus=True):
    """One recommended tool: name, score and one-line description."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "recommendation--name",
        "recommendation--score",
        "recommendation--description",
    }

    def __init__(self, hit: Recommendation, index: int) -> None:
        super().__init__(classes="recommendation")
        self.hit = hit
        self.index = index

    def render(self) -> Text:
        width = max(self.size.width, 40)
        name = clean(self.hit.name, single_line=True)
        style = self.get_component_rich_style
        out = Text()
        out.append(f"{self.index + 1} ", style="dim")
        out.append(name, style=style("recommendation--name"))
        out.append(f"  {self.hit.score:.2f}", style=style("recommendation--score"))
        room = width - len(name) - 10
        if room > 8:
            out.append("  " + first_line(self.hit.description, room), style=style("recommendation--description"))
        out.no_wrap = True
        out.overflow = "ellipsis"
        return out


class RecommendationBar(Vertical, can_focus=False):
    """Up to ``recommendations.max`` recommended tools, best first."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab,down", "move(1)", "Next", show=False, id="recommendations.next"),
        Binding("shift+tab,up", "move(-1)", "Previous", show=False, id="recommendations.previous"),
        Binding("enter", "pick", "Use tool", id="recommendations.pick"),
    ]

    enabled: reactive[bool] = reactive(True)
    """False when recommendations are switched off in the settings."""

    min_score: reactive[float] = reactive(0.15)
    """Hits below this score are not shown."""

    max_items: reactive[int] = reactive(3)
    """At most this many items."""

    @dataclass
    class Picked(Message):
        """The person chose a recommended tool."""

        hit: Recommendation

    @dataclass
    class Left(Message):
        """The bar emptied while it had focus."""

    def __init__(self, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        self._hits: list[Recommendation] = []
        self.border_title = "recommended tools"
        self.border_subtitle = "Tab choose · Enter use · Esc back"

    @property
    def hits(self) -> list[Recommendation]:
        """Every recommendation received, before the score floor and the count limit."""
        return list(self._hits)

    @property
    def visible_hits(self) -> list[Recommendation]:
        """The hits that pass the score floor, at most ``max_items``."""
        if not self.enabled:
            return []
        return [h for h in self._hits if h.score >= self.min_score][: self.max_items]

    @property
    def has_items(self) -> bool:
        """True when the bar is showing at least one tool."""
        return bool(self.visible_hits)

    def show_hits(self, hits: list[Recommendation]) -> None:
        """Replace the recommendations (best first)."""
        self._hits = list(hits)
        self._rebuild()

    def drop_missing(self, present: Callable[[str], bool]) -> None:
        """Drop the tools for which ``present(name)`` is false (they left the catalog: their
        server went away); the bar is rebuilt only when one was dropped."""
        kept = [h for h in self._hits if present(h.name)]
        if len(kept) != len(self._hits):
            self.show_hits(kept)

    def watch_enabled(self) -> None:
        self._rebuild()

    def watch_min_score(self) -> None:
        self._rebuild()

    def watch_max_items(self) -> None:
        self._rebuild()

    def _rebuild(self) -> None:
        """Show ``visible_hits``; focus held by an old item stays in the bar (its first new item)
        or, with nothing to show, is handed back (:class:`Left`)."""
        if not self.is_mounted:
            return
        had_focus = self.has_focus_within
        self.remove_children()  # Textual moves the focus off a removed item (to nothing, or out of the bar)
        items = [RecommendationItem(hit, i) for i, hit in enumerate(self.visible_hits)]
        self.mount_all(items)
        self.display = bool(items)
        if had_focus and items:
            self.screen.set_focus(items[0])  # now: a key typed right after reaches it
        elif had_focus:
            self.post_message(self.Left())

    def on_mount(self) -> None:
        self._rebuild()

    def focus_first(self) -> bool:
        """Focus the first item; False when there is none.

        Focus moves now, not after the next refresh (``Widget.focus`` defers it): a key typed
        right after Tab (Enter, Down) must reach the item, not the prompt.
        """
        items = list(self.query(RecommendationItem))
        if not items:
            return False
        self.screen.set_focus(items[0])
        return True

    def _focused_index(self) -> int:
        items = list(self.query(RecommendationItem))
        focused = self.screen.focused
        return items.index(focused) if focused in items else -1

    def action_move(self, step: int) -> None:
        """Move focus ``step`` items (wrapping), at once: Down then Enter typed together picks
        the item Down reached."""
        items = list(self.query(RecommendationItem))
        if items:
            self.screen.set_focus(items[(self._focused_index() + step) % len(items)])

    def action_pick(self) -> None:
        """Choose the focused item."""
        focused = self.screen.focused
        if isinstance(focused, RecommendationItem):
            self.post_message(self.Picked(focused.hit))
