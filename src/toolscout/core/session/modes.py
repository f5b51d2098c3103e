"""The tool-search mode of a session: the auto decision, and the one switch to deferral.

``toolSearch.enabled = auto`` compares the deferrable schemas' tokens with ``thresholdRatio`` of
the model's context window (:func:`toolscout.core.tokens.decide_mode`). Servers still connecting
count with their last known size (:mod:`toolscout.core.engine.server_sizes`). A session that started
inline re-checks before every request; when late servers push the inline schemas over the
threshold it re-projects with deferral on, once (:func:`switched_projection`): that is the one
announced prompt-cache break, and no request is ever sent with inline tools over the threshold.
An inline session never carries ToolSearch or ExecuteTool, except ExecuteTool appended the first
time the model invents a tool name (:func:`admit_invented`), so that call can be recorded.

The provider's tool limit (:mod:`.providers.limits`) decides too: auto mode defers when the
inline array would carry more tools than one request may, and with tool search off the session
keeps as many tools inline as fit and defers the rest (:func:`fitted_projection`), with a
warning (:func:`limit_warning`): what Cursor does with a catalog too large for it (the first
tools are sent), except that here the rest stay reachable through ToolSearch and ExecuteTool.
Late servers that push an inline session past the limit switch it the same way as the auto
threshold does, once and announced.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..catalog.registry import ALWAYS_CORE
from ..engine.context import build_context_report, inline_fit
from ..tokens import ModeDecision, ToolLimit
from .projection import INLINE, Projection
from .providers.limits import tool_limit

if TYPE_CHECKING:
    from ..catalog.registry import ToolCatalog
    from ..engine.facade import Engine
    from ..settings.layers import Settings
    from .providers.base import Provider


def decide(engine: Engine, settings: Settings, provider: Provider, strategy: str) -> ModeDecision:
    """The mode decision for ``engine``'s catalog now (servers still connecting counted with
    their last known size, :meth:`~toolscout.core.engine.facade.Engine.pending_sizes`)."""
    model = provider.model or settings.get("provider.model")
    report = build_context_report(
        engine.catalog,
        settings,
        model=model or None,
        strategy=strategy,
        pending=engine.pending_sizes(),
        tool_limit=session_limit(provider, settings),
    )
    return report.decision


def session_limit(provider: Provider, settings: Settings) -> ToolLimit:
    """The most tools one request to ``provider`` may carry under ``settings``."""
    return tool_limit(provider.name, settings)


def may_switch(projection: Projection, settings: Settings, limit: ToolLimit | None = None) -> bool:
    """True while a switch to deferral is possible: still inline, and auto mode (late servers
    may cross the threshold), tool search switched on since the projection was fixed, or a
    tool limit that late servers may pass."""
    return projection.strategy == INLINE and (
        settings.mode in ("tst-auto", "tst") or (limit is not None and limit.max_tools is not None)
    )


def fitted_projection(
    catalog: ToolCatalog,
    strategy: str,
    decision: ModeDecision,
    keep: Iterable[dict[str, Any]] = (),
    *,
    native: bool = False,
) -> Projection:
    """The projection for ``decision``, never past its tool limit: inline; deferred; or, tool
    search off with more tools than the limit, deferred with as many tools inline as fit
    (:func:`~toolscout.core.engine.context.inline_fit`, the first in catalog order). ``keep``:
    definitions the history references (they stay, with their full schema). ``native``:
    provider-native deferral when deferring (:data:`~.projection.NATIVE`)."""
    max_tools = decision.limit.max_tools if decision.limit is not None else None
    if not decision.defer:
        return Projection.build(catalog, strategy, defer=False, max_tools=max_tools)
    fill = inline_fit(catalog, None) if decision.mode == "standard" else []
    return Projection.build(catalog, strategy, defer=True, native=native, keep=keep, fill=fill, max_tools=max_tools)


def switched_projection(
    projection: Projection,
    messages: Iterable[dict[str, Any]],
    catalog: ToolCatalog,
    strategy: str,
    decision: ModeDecision,
    *,
    native: bool = False,
) -> Projection:
    """The projection after switching to deferral (or to a lower tool limit): tools the history
    already called keep their full definitions (so every ``tool_use`` in history stays
    defined), the rest is deferred, or with tool search off kept inline as far as room allows."""
    used = {
        b.get("name")
        for m in messages
        if m.get("role") == "assistant"
        for b in m.get("content") or ()
        if isinstance(b, dict) and b.get("type") == "tool_use"
    }
    keep = [d for d in projection.tools if d["name"] in used]
    return fitted_projection(catalog, strategy, decision, keep, native=native)


def switch_notice(decision: ModeDecision) -> str:
    """The text people see (chat notice, transcript event) when a session switches: because
    late servers crossed the auto threshold or the tool limit, or because tool search was
    switched on."""
    if decision.mode == "standard":
        return (
            f"Not every tool fits in one request any more: {decision.reason}. The tools array changed "
            "once (one prompt-cache miss); the deferred tools are announced to the model from now on."
        )
    passed = "the provider's tool limit" if decision.limited else "the threshold"
    why = (
        "you switched it on (toolSearch.enabled = true)"
        if decision.mode == "tst"
        else f"the tools of servers that connected after the first message would exceed {passed} ({decision.reason})"
    )
    return (
        f"Tool search switched on: {why}. The tools array changed once (one prompt-cache miss); "
        "deferred tools are announced to the model from now on."
    )


def rebuilt_notice(count: int, limit: ToolLimit, decision: ModeDecision) -> str:
    """The text people see when a fixed tools array of ``count`` tools no longer fits ``limit``
    (the provider or ``provider.maxTools`` changed, or a resumed session) and is rebuilt."""
    return (
        f"The tools array held {count:,} tools, more than {limit.words}, so it was rebuilt (one prompt-cache "
        f"miss): {decision.reason}."
    )


def limit_warning(decision: ModeDecision, projection: Projection, catalog: ToolCatalog) -> str | None:
    """The warning when ``toolSearch.enabled`` is off but not every tool fits in one request:
    how many went inline and how many are deferred, and the two ways out. None otherwise."""
    if decision.mode != "standard" or not decision.limited or decision.limit is None:
        return None
    inline = len(projection.full_names - ALWAYS_CORE)
    deferred = len(projection.deferred(catalog))
    return (
        f"toolSearch.enabled is false, but {decision.tool_count:,} tools > {decision.limit.words}: the first "
        f"{inline:,} are sent inline and the other {deferred:,} are deferred (announced by name; the model "
        "finds them with ToolSearch and calls them with ExecuteTool). Set provider.maxTools if the endpoint "
        "accepts more tools, or defer them all with toolSearch.enabled = true."
    )


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
