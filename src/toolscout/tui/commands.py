"""Ctrl+P → "Run tool…": a command palette of every tool in the catalog; picking one opens its
argument form (:meth:`ToolscoutApp.run_by_hand <toolscout.tui.app.ToolscoutApp.run_by_hand>`),
the same form the recommendation bar opens. Works with recommendations off and with no session.

Tool descriptions come from servers: they are shown literally (markup escaped, control
characters stripped).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, cast

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from toolscout.core.catalog.registry import ALWAYS_CORE

from .text import first_line

if TYPE_CHECKING:
    from toolscout.core.engine.facade import Engine
    from toolscout.core.models import ToolSpec

#: Tools listed before anything is typed (the rest are found by typing part of a name).
DISCOVER_LIMIT = 100
#: The palette's placeholder.
PLACEHOLDER = "Run which tool? Type part of its name…"


class ToolHost(Protocol):
    """What the palette needs of the app (:class:`~toolscout.tui.app.ToolscoutApp`); a protocol,
    so that the app (which opens this palette) and this module do not import each other."""

    @property
    def engine(self) -> Engine: ...

    def run_by_hand(self, tool: ToolSpec) -> None: ...


class RunToolProvider(Provider):
    """Every runnable tool of the app's engine, matched on its name."""

    @property
    def _app(self) -> ToolHost:
        return cast("ToolHost", self.app)  # the palette is the app's (ToolPicks.action_run_tool)

    def _tools(self) -> list[ToolSpec]:
        # the session's meta tools are not run by hand: a search is typed in the prompt
        return [t for t in self._app.engine.tools() if t.name not in ALWAYS_CORE]

    def _run(self, tool: ToolSpec) -> Callable[[], None]:
        return partial(self._app.run_by_hand, tool)

    @staticmethod
    def _help(tool: ToolSpec) -> Any:
        # Content, not a str: the palette parses a str help as markup (a description holding
        # "[link=…" would raise, "[b]" would style); Content.from_markup returns Content as is.
        return Content(first_line(tool.description, 90))

    async def discover(self) -> Hits:
        for tool in self._tools()[:DISCOVER_LIMIT]:
            yield DiscoveryHit(Text(tool.name), self._run(tool), text=tool.name, help=self._help(tool))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for tool in self._tools():
            score = matcher.match(tool.name)
            if score > 0:
                yield Hit(score, matcher.highlight(tool.name), self._run(tool), text=tool.name, help=self._help(tool))
