"""Tool search switched on during a session (issue 14): through ``Session.apply_settings``, as
the one announced prompt-cache break; and the offline session's default (tool search on)."""

from __future__ import annotations

from session_helpers import Recorder, make_engine, make_settings

from toolscout.core.session.events import ToolSearchSwitched
from toolscout.core.session.modes import OFFLINE_SOURCE, offline_default
from toolscout.core.session.projection import INLINE
from toolscout.core.session.providers import OfflineProvider
from toolscout.core.session.session import Session
from toolscout.core.settings.layers import Settings


async def test_switching_on_after_an_inline_request_defers_at_once_and_says_so(tmp_path) -> None:
    engine = make_engine(tmp_path, **{"toolSearch.enabled": "auto"})
    session = Session(engine, provider=OfflineProvider(), persist=False)
    rec = Recorder()
    session.subscribe(rec)
    first = session.build_request()
    assert session.projection.strategy == INLINE and not session.mode_decision.defer
    assert "every tool is inline" in session.mode_decision.summary
    assert "ToolSearch" not in [t["name"] for t in first.tools] and "get_forecast" in [t["name"] for t in first.tools]

    session.apply_settings(make_settings(**{"toolSearch.enabled": "true"}))

    (switch,) = rec.of(ToolSearchSwitched)  # at once, not at the next request
    assert "you switched it on" in switch.notice and "one prompt-cache miss" in switch.notice
    assert session.mode_decision.defer and session.projection.strategy != INLINE
    names = [t["name"] for t in session.build_request().tools]
    assert "ToolSearch" in names and "get_forecast" not in names  # the deferred tool is no longer inline
    session.apply_settings(make_settings(**{"toolSearch.enabled": "true", "recommendations.minScore": 0.5}))
    assert len(rec.of(ToolSearchSwitched)) == 1  # once


async def test_switching_on_before_the_first_request_is_no_cache_break(tmp_path) -> None:
    engine = make_engine(tmp_path, **{"toolSearch.enabled": "auto"})
    session = Session(engine, provider=OfflineProvider(), persist=False)
    rec = Recorder()
    session.subscribe(rec)
    session.apply_settings(make_settings(**{"toolSearch.enabled": "true"}))
    session.build_request()
    assert rec.of(ToolSearchSwitched) == [] and session.mode_decision.defer


def test_offline_default_turns_tool_search_on_only_when_nothing_chose_a_mode() -> None:
    on = offline_default(Settings())
    assert on["toolSearch.enabled"] == "true" and on.sources["toolSearch.enabled"] == OFFLINE_SOURCE
    chosen = Settings().with_overrides({"toolSearch.enabled": "auto"}, source="env:TOOLSCOUT_TOOL_SEARCH")
    assert offline_default(chosen) is chosen  # a file, env or flag that says auto keeps auto


def test_summary_says_why_in_one_line() -> None:
    from toolscout.core.tokens import decide_mode

    off = decide_mode("tst-auto", 1_955, 200_000, 0.10)
    assert off.summary == (
        "tool search auto: 1,955 tokens of schemas < 10% of the 200k window, so every tool is inline"
    )
    on = decide_mode("tst-auto", 45_000, 200_000, 0.10)
    assert on.summary.endswith("> 10% of the 200k window, so deferred tools are found with ToolSearch")
    assert decide_mode("standard", 5, 200_000, 0.1).summary.startswith("tool search off (toolSearch.enabled = false)")
    assert decide_mode("tst", 5, 200_000, 0.1).summary == "tool search on: deferred tools are found with ToolSearch"
    assert "\n" not in decide_mode("tst-auto", 5, 200_000, 0.1, pending={"late": None}).summary


def test_a_new_offline_app_session_starts_with_tool_search_on(tmp_path) -> None:
    from toolscout.cli.app_cmd import offline_tool_search

    engine = make_engine(tmp_path, **{"toolSearch.enabled": "auto"})
    settings = Settings()  # nothing chose a mode
    offline = Session(engine, settings=settings, provider=OfflineProvider(), persist=False)
    applied = offline_tool_search(offline, settings)
    assert applied.mode == "tst" and offline.settings is applied and engine.settings is applied
    offline.build_request()
    assert offline.mode_decision.defer and "ToolSearch" in offline.projection.names

    class Model(OfflineProvider):
        name = "anthropic"

    model = Session(engine, settings=settings, provider=Model(), persist=False)
    assert offline_tool_search(model, settings) is settings  # model sessions keep auto
