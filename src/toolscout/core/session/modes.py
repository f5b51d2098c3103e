"""The tool-search mode of a session: the auto decision, and the one switch to deferral.

``toolSearch.enabled = auto`` compares the deferrable schemas' tokens with ``thresholdRatio`` of
the model's context window (:func:`toolscout.core.tokens.decide_mode`). Servers still connecting
count with their last known size (:mod:`toolscout.core.engine.server_sizes`). A session that started
inline re-checks before every request; when late servers push the inline schemas over the
threshold it re-projects with deferral on, once (:func:`switched_projection`): that is the one
announced prompt-cache break, and no request is ever sent with inline tools over the threshold.
An inline session never carries ToolSearch or ExecuteTool, except ExecuteTool appended the first
time the model invents a tool name (:func:`admit_invented`), so that call can be recorded.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..engine.context import build_context_report
from ..tokens import ModeDecision
from .projection import INLINE, Projection

if TYPE_CHECKING:
    from ..catalog.registry import ToolCatalog
    from ..engine.facade import Engine
    from ..settings.layers import Settings
    from .providers.base import Provider


def decide(engine: Engine, settings: Settings, provider: Provider, strategy: str) -> ModeDecision:
    """The mode decision for ``engine``'s catalog now (servers still connecting counted with
    their last known size, :meth:`~toolscout.core.engine.facade.Engine.pending_sizes`)."""
    model = provider.model or settings.get("provider.model")
    report = build_context_report(engine.catalog, settings, model=model or None, strategy=strategy,
                                  pending=engine.pending_sizes())
    return report.decision


def may_switch(projection: Projection, settings: Settings) -> bool:
    """True while a switch to deferral is possible: still inline, and auto mode (late servers
    may cross the threshold) or tool search switched on since the projection was fixed."""
    return projection.strategy == INLINE and settings.mode in ("tst-auto", "tst")


def switched_projection(projection: Projection, messages: Iterable[dict[str, Any]], catalog: ToolCatalog,
                        strategy: str, *, native: bool = False) -> Projection:
    """The projection after switching to deferral: tools the history already called keep their
    full definitions (so every ``tool_use`` in history stays defined), the rest is deferred."""
    used = {b.get("name") for m in messages if m.get("role") == "assistant"
            for b in m.get("content") or () if isinstance(b, dict) and b.get("type") == "tool_use"}
    keep = [d for d in projection.tools if d["name"] in used]
    return Projection.build(catalog, strategy, defer=True, native=native, keep=keep)


def switch_notice(decision: ModeDecision) -> str:
    """The text people see (chat notice, transcript event) when a session switches: because
    late servers crossed the auto threshold, or because tool search was switched on."""
    why = ("you switched it on (toolSearch.enabled = true)" if decision.mode == "tst" else
           f"the tools of servers that connected after the first message would exceed the threshold "
           f"({decision.reason})")
    return (f"Tool search switched on: {why}. The tools array changed once (one prompt-cache miss); "
            "deferred tools are announced to the model from now on.")


#: ``Settings.sources`` value of the offline session's tool-search default (:func:`offline_default`).
OFFLINE_SOURCE = "offline session default"


def offline_default(settings: Settings) -> Settings:
    """The settings of an offline session (no model): tool search on unless a settings file,
    the environment or a flag chose a mode. An offline session has no context window to
    protect, and its point is to show deferred tools being searched; model sessions keep
    ``auto``. Documented in the README (*Settings*).

    Returns:
        ``settings`` itself when ``toolSearch.enabled`` was set anywhere, else a copy with
        ``true`` whose source is :data:`OFFLINE_SOURCE`.
    """
    if settings.sources.get("toolSearch.enabled", "default") != "default":
        return settings
    return settings.with_overrides({"toolSearch.enabled": "true"}, source=OFFLINE_SOURCE)


def admit_invented(projection: Projection, blocks: Iterable[dict[str, Any]], catalog: ToolCatalog) -> bool:
    """Inline projection and a ``tool_use`` naming a tool the array lacks: append ExecuteTool
    (:meth:`Projection.admit_proxy`). True if the array changed."""
    names = set(projection.names)
    invented = any(b.get("type") == "tool_use" and b.get("name") not in names for b in blocks)
    return invented and projection.admit_proxy(catalog)
