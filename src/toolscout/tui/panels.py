"""The side panels of the main screen, in one registry: each panel's tab, its key, its command
palette entry and its line in ``/help`` follow from one :class:`SidePanel`.

Adding a panel is one widget module (in :mod:`toolscout.tui.widgets`) and one line in
:data:`_PANELS` below (or :func:`register_panel` from outside the package): the main screen
composes a tab for it (:meth:`~toolscout.tui.screens.main.MainScreen.compose`), the app binds its
key and lists it in the command palette (:mod:`toolscout.tui.app`), ``show_panel`` shows and
focuses it (:mod:`toolscout.tui.screens.layout`), and ``/help`` lists its key
(:mod:`toolscout.tui.screens.slash`). A panel that shows what the engine knows gets the engine
when it is built; facts the main screen receives as messages reach a panel through a line in
the screen's handler for that message (as ``CatalogChanged`` reaches the catalog).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.widget import Widget

from .widgets.catalog import CatalogPanel
from .widgets.scoring import ScoringPanel
from .widgets.usage import UsagePanel

if TYPE_CHECKING:
    from toolscout.core.engine.facade import Engine


@dataclass(frozen=True)
class SidePanel:
    """One side panel.

    Attributes:
        name: the panel's DOM id; its tab is ``tab-<name>`` and its action ``show_panel('<name>')``.
        title: the tab's label, and the key's label in the footer (``Catalog``).
        key: the key that shows and focuses it (``f2``).
        make: builds the panel widget, given the engine and the DOM id to give it.
        focus: selector of the widget the key focuses, inside the panel (``#catalog-filter``);
            ``""`` focuses the panel itself.
        command: its entry in the command palette (``Live scoring``).
        summary: that entry's help; `` (F3)`` (the key) is added.
        help: what ``/help`` says next to the key.
    """

    name: str
    title: str
    key: str
    make: Callable[[Engine, str], Widget]
    focus: str
    command: str
    summary: str
    help: str

    @property
    def tab_id(self) -> str:
        """The DOM id of the panel's tab (``tab-catalog``)."""
        return f"tab-{self.name}"

    @property
    def key_label(self) -> str:
        """The key as the palette and ``/help`` name it (``F2``)."""
        return self.key.upper() if self.key.startswith("f") else self.key


#: The panels, in tab order (the first is the tab shown at start).
_PANELS: list[SidePanel] = [
    SidePanel(
        "catalog",
        "Catalog",
        "f2",
        lambda engine, dom_id: CatalogPanel(engine, id=dom_id),
        "#catalog-filter",
        "Catalog",
        "Show the deferred-tool catalog",
        "tool catalog: Enter runs a tool, d shows its details",
    ),
    SidePanel(
        "scoring",
        "Scoring",
        "f3",
        lambda engine, dom_id: ScoringPanel(engine, id=dom_id),
        "#scoring-query",
        "Live scoring",
        "Rank tools as you type a query",
        "live search scoring",
    ),
    SidePanel(
        "usage",
        "Usage",
        "f4",
        lambda engine, dom_id: UsagePanel(id=dom_id),
        "",
        "Token usage",
        "Tokens per server, mode decision, cache hits",
        "token usage",
    ),
]


def side_panels() -> tuple[SidePanel, ...]:
    """The registered panels, in tab order."""
    return tuple(_PANELS)


def side_panel(name: str) -> SidePanel:
    """The registered panel ``name``.

    Raises:
        KeyError: no panel has that name.
    """
    for panel in _PANELS:
        if panel.name == name:
            return panel
    raise KeyError(name)


def register_panel(panel: SidePanel) -> None:
    """Add ``panel`` after the registered ones (a plugin's, a test's; the app's own are the
    lines of ``_PANELS``). An app built afterwards has it.

    Raises:
        ValueError: its name or key is already taken by a registered panel.
    """
    for other in _PANELS:
        if panel.name == other.name or panel.key == other.key:
            raise ValueError(f"side panel {panel.name!r} ({panel.key}): {other.name!r} has that name or key")
    _PANELS.append(panel)


def unregister_panel(name: str) -> None:
    """Forget panel ``name`` (unknown names are ignored); apps built afterwards lack it."""
    _PANELS[:] = [p for p in _PANELS if p.name != name]
