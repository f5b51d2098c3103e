"""The conversation: user and assistant messages, tool calls, ToolSearch results and notices.

Every entry renders untrusted text literally (see :mod:`toolscout.tui.text`). Assistant text is
Markdown (models write Markdown), so Rich markup such as ``[bold]`` in it stays literal.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Collapsible, Markdown, OptionList, Static
from textual.widgets.option_list import Option

from toolscout.core.models import ToolResult
from toolscout.core.search.results import ScoredTool, SearchResult

from ..text import clean, first_line, plain
from .tool_progress import ToolProgress

#: Longest tool result shown in full; longer ones are cut with a note (the model saw all of it).
MAX_RESULT_CHARS = 8_000


def pretty_json(value: Any) -> str:
    """Indented JSON of ``value`` (anything that is not JSON is shown with ``str``)."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


class UserEntry(Static):
    """What the person typed."""

    def __init__(self, text: str) -> None:
        super().__init__(plain(text), classes="entry")
        self.border_title = "you"


class AssistantEntry(Markdown):
    """Assistant text, updated in place while it streams."""

    def __init__(self, key: str, text: str = "") -> None:
        super().__init__(clean(text), classes="entry")
        self.key = key
        self.border_title = "assistant"

    def set_text(self, text: str) -> None:
        """Replace the shown text with ``text`` (the whole message so far)."""
        self.update(clean(text))


class NoticeEntry(Static):
    """A system line: slash-command output, status, help."""

    def __init__(self, renderable: RenderableType | str, *, title: str = "", variant: str = "info") -> None:
        body = plain(renderable) if isinstance(renderable, str) else renderable
        super().__init__(body, classes=f"entry notice -{variant}")
        if title:
            self.border_title = title


class WarningsEntry(NoticeEntry):
    """Warnings from one source in a row (a server's dropped or repaired tools): one entry that
    grows, showing the first :attr:`SHOWN` lines and a count of the rest (the catalog lists them
    all under the server)."""

    SHOWN: ClassVar[int] = 5

    def __init__(self, source: str, line: str) -> None:
        self.source = source
        self.lines = [line]
        super().__init__(line, title="warning", variant="warning")

    def append(self, line: str) -> None:
        """Add one more warning line from the same source."""
        self.lines.append(line)
        self.border_title = f"{len(self.lines)} warnings · {self.source}"
        rest = len(self.lines) - self.SHOWN
        more = [f"… and {rest} more (F2: the catalog lists them under {self.source})"] if rest > 0 else []
        self.update(plain("\n".join(self.lines[: self.SHOWN] + more)))


class ErrorEntry(NoticeEntry):
    """An error the person should see."""

    def __init__(self, text: str) -> None:
        super().__init__(text, title="error", variant="error")


def format_duration(ms: float) -> str:
    """`` · 1,227 ms`` (empty for 0). Snapshot tests replace this: durations are clock time."""
    return f" · {ms:,.0f} ms" if ms else ""


def _tool_title(symbol: str, name: str, suffix: str = "", preview: str = "") -> Content:
    parts: list[Any] = [(symbol + " ", "$accent"), (clean(name, single_line=True), "bold"), suffix]
    if preview:
        parts.append((f"  {preview}", "dim"))
    return Content.assemble(*parts)


class ToolCallEntry(Collapsible):
    """One tool call: the real tool's name, its arguments and (when done) its result.

    The chat shows the newest call expanded and folds the older ones
    (:meth:`ChatView.add_tool_call`); Enter or a click on a title toggles it.
    """

    def __init__(self, call_id: str, tool_name: str, arguments: dict[str, Any], *, collapsed: bool = True) -> None:
        self.call_id = call_id
        self.tool_name = tool_name
        #: the progress the server reports while the call runs (shown folded or not), or None
        self.progress: ToolProgress | None = None
        self._early: tuple[float, float | None, str | None] | None = None
        self.finished = False
        self._args = Static(plain(pretty_json(arguments)), classes="tool-args")
        self._result = Static(Text("running…", style="italic"), classes="tool-result")
        super().__init__(
            self._args,
            self._result,
            title=_tool_title("⚙", tool_name, "  running…"),  # type: ignore[arg-type]
            collapsed=collapsed,
            classes="entry tool-call",
        )

    def show_progress(self, progress: float, total: float | None, message: str | None) -> None:
        """Show the progress the call's server reported (a bar under the title, determinate when
        ``total`` is known); ignored once the call has finished."""
        if self.finished:
            return
        if self._title.parent is None:  # not composed yet: shown once mounted (:meth:`on_mount`)
            self._early = (progress, total, message)
            return
        if self.progress is None:
            self.progress = ToolProgress()
            self.mount(self.progress, after=self._title)
        self.progress.show(progress, total, message)

    def on_mount(self) -> None:
        """Show progress that arrived before the entry was composed."""
        if self._early is not None:
            self.show_progress(*self._early)
            self._early = None

    def _end_progress(self) -> None:
        self.finished = True
        if self.progress is not None:
            self.progress.remove()
            self.progress = None

    def finish(self, result: ToolResult) -> None:
        """Show ``result`` and mark the call done (or failed); its progress bar goes."""
        self._end_progress()
        text = clean(result.text())
        if len(text) > MAX_RESULT_CHARS:
            text = text[:MAX_RESULT_CHARS] + f"\n… ({len(text) - MAX_RESULT_CHARS:,} more characters)"
        self._result.update(Text(text or "(empty result)", style="red" if result.is_error else ""))
        status = (
            f"failed ({result.error_kind.value})" if result.error_kind else ("error" if result.is_error else "done")
        )
        took = format_duration(result.duration_ms)
        preview = clean(text, single_line=True, limit=60)  # JSON results start with a lone "{"
        self.title = _tool_title("⚙", self.tool_name, f"  {status}{took}", preview)  # type: ignore[assignment]
        self.set_class(result.is_error, "-error")

    def finish_saved(self, text: str, *, is_error: bool) -> None:
        """Show a result read back from a saved transcript (no timing, no error kind)."""
        self._end_progress()
        text = clean(text)
        if len(text) > MAX_RESULT_CHARS:
            text = text[:MAX_RESULT_CHARS] + f"\n… ({len(text) - MAX_RESULT_CHARS:,} more characters)"
        self._result.update(Text(text or "(empty result)", style="red" if is_error else ""))
        preview = clean(text, single_line=True, limit=60)
        self.title = _tool_title("⚙", self.tool_name, "  error" if is_error else "  done", preview)  # type: ignore[assignment]
        self.set_class(is_error, "-error")


def saved_result_text(content: Any) -> str:
    """The text of a saved ``tool_result`` block's content
    (:func:`~toolscout.core.session.transcript.result_text`; anything else as JSON)."""
    from toolscout.core.session.transcript import result_text

    text = result_text(content)
    return pretty_json(content) if text is None else text


def hit_line(rank: int, hit: ScoredTool) -> Text:
    """One ToolSearch hit: rank, score, tool, one-line description."""
    out = Text()
    out.append(f"{rank:>2}. ", style="dim")
    out.append(f"{hit.score:.3f} ", style="bold")
    out.append(clean(hit.tool.name, single_line=True), style="bold")
    desc = first_line(hit.tool.description, 70)
    if desc:
        out.append(f"  {desc}", style="dim")
    return out


def search_result_renderable(result: SearchResult, limit: int = 10, *, hits: bool = True) -> Text:
    """A ToolSearch result as lines: rank, score, tool, one-line description (unless ``hits``
    is False: :class:`SearchHits` shows them); then the notes."""
    out = Text()
    if result.errors:
        for error in result.errors:
            out.append(f"! {clean(error, single_line=True)}\n", style="red")
    for rank, hit in enumerate(result.hits[:limit] if hits else (), 1):
        out.append_text(hit_line(rank, hit))
        out.append("\n")
    if result.no_good_match:
        out.append("no good match\n", style="yellow")
    if result.unmatched_terms:
        out.append(
            "unmatched: " + ", ".join(clean(t, single_line=True) for t in result.unmatched_terms) + "\n", style="yellow"
        )
    if result.missing:
        out.append("not found: " + ", ".join(clean(n, single_line=True) for n in result.missing) + "\n", style="yellow")
    if result.already_loaded:
        out.append("already loaded: " + ", ".join(result.already_loaded) + "\n", style="dim")
    if result.pending_servers:
        out.append("still connecting: " + ", ".join(result.pending_servers) + "\n", style="dim")
    if not result.hits and not result.no_good_match and not result.errors:
        out.append("no results\n", style="dim")
    out.rstrip()
    return out


def search_label(result: SearchResult) -> list[str]:
    """What a search entry's title says about how ``result`` was found: the query form when it
    is not plain keywords (``select``, ``discover``), and the ranker that ranked the hits, from
    the result itself (``ranker default``; none for ``select:``, which ranks nothing)."""
    words: list[str] = [result.mode] if result.mode != "keyword" else []
    if result.ranker:
        words.append(f"ranker {clean(result.ranker, single_line=True)}")
    return words


class SearchHits(OptionList):
    """A ToolSearch result's hits, one option per tool (the option id is the tool's name):
    focus it (Tab from the prompt reaches the newest) and press Enter, or click, to use a tool
    (the screen opens its argument form offline, or loads it for the model)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "select", "Use tool", id="hits.use")]

    def __init__(self, result: SearchResult, limit: int = 10) -> None:
        options = [Option(hit_line(rank, hit), id=hit.tool.name) for rank, hit in enumerate(result.hits[:limit], 1)]
        super().__init__(*options, compact=True, classes="search-hits")

    def on_blur(self) -> None:
        self.highlighted = None  # the cursor shows only while the list has focus

    def on_focus(self) -> None:
        if self.highlighted is None and self.option_count:
            self.highlighted = 0


class SearchEntry(Collapsible):
    """A ToolSearch query and its ranked results (expanded by default: they are short); the
    hits are a :class:`SearchHits` list, so any of them can be used."""

    def __init__(self, result: SearchResult, *, collapsed: bool = False) -> None:
        title = Content.assemble(
            ("⌕ ", "$accent"),
            ("ToolSearch ", "bold"),
            clean(result.query, single_line=True, limit=60),
            ("  " + " · ".join([f"{len(result.hits)} hit(s)", *search_label(result)]), "dim"),
        )
        body: list[Widget] = [SearchHits(result)] if result.hits else []
        notes = search_result_renderable(result, hits=False)
        if notes.plain:
            body.append(Static(notes))
        super().__init__(*body, title=title, collapsed=collapsed, classes="entry search")  # type: ignore[arg-type]

    @property
    def hits(self) -> SearchHits | None:
        """The hit list (None when the search found nothing)."""
        found = self.query(SearchHits)
        return found.first() if found else None


class ChatView(VerticalScroll, can_focus=True):
    """The scrolling conversation. Follows new entries unless the person scrolled up.

    Sending a message or a slash command calls :meth:`stick`: whatever the scroll position was
    (an expanded tool call or a resize can leave the view above the end without the person
    scrolling), what follows is shown, until the person scrolls up again.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stick = False

    @property
    def following(self) -> bool:
        """True when new entries should be scrolled into view."""
        return self._stick or self.is_vertical_scroll_end or self.max_scroll_y == 0

    def stick(self) -> None:
        """Follow new entries from now on, and scroll to the end now."""
        self._stick = True
        self.call_after_refresh(self.scroll_end, animate=False)

    def unstick(self) -> None:
        """The person scrolled up: stop following until they send something or scroll back down."""
        self._stick = False

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        # A new size (terminal resize, the bar above the prompt appearing) re-wraps every entry
        # and leaves scroll_y where it was: a view that followed the end keeps showing it.
        follow = size != self._size and self._size.area > 0 and self.following
        changed = super()._size_updated(size, virtual_size, container_size, layout)
        if follow:
            self.call_after_refresh(self.scroll_end, animate=False)
        return changed

    def on_mouse_scroll_up(self) -> None:
        self.unstick()

    def action_scroll_up(self) -> None:
        self.unstick()
        super().action_scroll_up()

    def action_page_up(self) -> None:
        self.unstick()
        super().action_page_up()

    def action_scroll_home(self) -> None:
        self.unstick()
        super().action_scroll_home()

    def add(self, entry: Widget) -> Widget:
        """Append ``entry`` and keep the newest entry in view (nothing once the chat is gone: a
        turn cancelled by quitting still reports that it ended)."""
        if not self.is_attached or self._closing:
            return entry
        follow = self.following
        self.mount(entry)
        if follow:
            self.call_after_refresh(self.scroll_end, animate=False)
        return entry

    def add_warning(self, line: str, source: str = "") -> Widget:
        """Append a warning line; one that follows a warning from the same ``source`` (a server
        name) joins its entry, so a server that repairs dozens of schemas takes one entry."""
        last = self.children[-1] if self.children else None
        if source and isinstance(last, WarningsEntry) and last.source == source and self.is_attached:
            follow = self.following
            last.append(line)
            if follow:
                self.call_after_refresh(self.scroll_end, animate=False)
            return last
        return self.add(
            WarningsEntry(source, line) if source else NoticeEntry(line, title="warning", variant="warning")
        )

    def add_tool_call(self, entry: ToolCallEntry) -> ToolCallEntry:
        """Append ``entry`` expanded and fold every earlier tool call, so the newest result is in
        view without a key press and the history stays short."""
        for older in self.tool_call_entries():
            older.collapsed = True
        entry.collapsed = False
        self.add(entry)
        return entry

    def reveal(self, entry: Widget, *, follow: bool) -> None:
        """After ``entry`` grew (a tool result arrived), bring it into view when ``follow`` (the
        person had not scrolled up): its top when it is taller than the view, else the end."""
        if follow:
            self.call_after_refresh(self._reveal, entry)

    def _reveal(self, entry: Widget) -> None:
        if entry.outer_size.height > self.scrollable_content_region.height:
            self.scroll_to_widget(entry, top=True, animate=False)
        else:
            self.scroll_end(animate=False)

    def assistant(self, key: str) -> AssistantEntry | None:
        """The assistant entry for stream ``key``, if one is shown."""
        for child in reversed(self.children):
            if isinstance(child, AssistantEntry) and child.key == key:
                return child
        return None

    def tool_call(self, call_id: str) -> ToolCallEntry | None:
        """The entry of tool call ``call_id``, if one is shown."""
        for child in reversed(self.children):
            if isinstance(child, ToolCallEntry) and child.call_id == call_id:
                return child
        return None

    def tool_call_entries(self) -> list[ToolCallEntry]:
        """Every tool-call entry, oldest first."""
        return [c for c in self.children if isinstance(c, ToolCallEntry)]

    def clear(self) -> None:
        """Remove every entry."""
        self.remove_children()

    def show_history(
        self, messages: list[dict[str, Any]], session_id: str, searches: dict[str, dict[str, Any]] | None = None
    ) -> None:
        """Render a resumed session's transcript: user and assistant text and tool calls (folded,
        with their saved results); system reminders the session added are left out. A ToolSearch
        whose ranked result the transcript kept (``searches``: call id → record) shows as the live
        search entry did; one without (an older transcript) as a tool call."""
        from toolscout.core.session.projection import TOOL_SEARCH
        from toolscout.core.session.transcript import history

        count = 0
        for item in history(messages):
            found = SearchResult.from_record((searches or {}).get(item.call_id)) if item.tool == TOOL_SEARCH else None
            if item.kind == "user":
                self.add(UserEntry(item.text))
            elif item.kind == "assistant":
                self.add(AssistantEntry(f"resumed.{item.key}", item.text))
            elif found is not None:
                self.add(SearchEntry(found))
            else:
                entry = ToolCallEntry(item.call_id, item.tool, item.params)
                self.add(entry)
                if item.result is not None:
                    entry.finish_saved(
                        saved_result_text(item.result.get("content")), is_error=bool(item.result.get("is_error"))
                    )
            count += 1
        self.add(
            NoticeEntry(
                f"Resumed session {session_id}: {count} earlier entries above. The conversation continues from here.",
                title="resumed",
            )
        )
