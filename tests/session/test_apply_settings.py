"""The core applies its own settings: one schema, one entry point, one ``SettingsChanged``."""

from __future__ import annotations

import argparse

from session_helpers import Recorder, make_settings

from toolscout.core.engine.events import SettingsChanged
from toolscout.core.search.profiles import PROFILES
from toolscout.core.session.projection import STRATEGIES
from toolscout.core.session.providers import OfflineProvider
from toolscout.core.session.session import Session
from toolscout.core.settings.layers import (
    KEYS,
    SettingsPaths,
    change_user_setting,
    choices,
    load_settings,
)


def test_choices_come_from_the_one_schema() -> None:
    assert choices("session.strategy") == STRATEGIES == ("execute-proxy", "stub")
    assert choices("toolSearch.ranker") == PROFILES == ("default", "bm25f", "hybrid")
    assert choices("mcp.timeout") == ()
    for key in KEYS:  # every declared default passes its own validator
        assert key.check(key.default) == key.default or key.default is None, key.name


def test_cli_choices_are_the_schemas() -> None:
    from toolscout.cli import build_parser

    parser = build_parser()
    actions = {a.dest: a for a in parser._actions}
    assert tuple(actions["strategy"].choices) == choices("session.strategy")
    assert set(actions["provider"].choices) == set(choices("provider.name")) - {"auto"}
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    search = {a.dest: a for a in sub.choices["search"]._actions}
    assert tuple(search["ranker"].choices) == choices("toolSearch.ranker")


def test_settings_screen_editors_follow_the_schema() -> None:
    from toolscout.tui.screens.settings import FIELDS, editor_kind

    kinds = {key: editor_kind(key) for key, _label in FIELDS}
    assert kinds == {
        "recommendations.enabled": "switch",
        "recommendations.minScore": "number",
        "toolSearch.enabled": "select",
        "toolSearch.thresholdRatio": "number",
        "session.strategy": "select",
        "provider.name": "select",
        "provider.model": "text",
    }


async def test_session_apply_settings_reaches_prefetch_strategy_engine_and_emits(engine) -> None:
    session = Session(engine, provider=OfflineProvider(), persist=False)
    rec = Recorder()
    engine.subscribe(rec)
    new = make_settings(
        **{
            "recommendations.minScore": "0.5",
            "recommendations.enabled": "false",
            "session.strategy": "stub",
            "toolSearch.alwaysLoad": ["get_forecast"],
        }
    )
    assert session.apply_settings(new) == []
    assert (session.prefetch.min_score, session.prefetch.enabled) == (0.5, False)
    assert session.strategy == "stub"  # no request built yet: the strategy may still change
    assert engine.settings is new and engine.search.settings is new
    assert not engine.catalog.is_deferred(engine.tool("get_forecast"))  # alwaysLoad took effect
    (event,) = rec.of(SettingsChanged)
    assert event.changed == {
        "recommendations.minScore": 0.5,
        "recommendations.enabled": False,
        "session.strategy": "stub",
        "toolSearch.alwaysLoad": ["get_forecast"],
    }
    assert session.apply_settings(new) == [] and len(rec.of(SettingsChanged)) == 1  # no change, no event


async def test_a_provider_that_cannot_be_built_is_reported_and_the_old_one_kept(engine) -> None:
    session = Session(engine, provider=OfflineProvider(), persist=False)
    problems = session.apply_settings(make_settings(**{"provider.name": "anthropic"}))  # no API key
    assert len(problems) == 1 and "ANTHROPIC_API_KEY" in problems[0]
    assert session.provider.name == "offline"


def test_a_higher_layer_keeps_its_value_after_a_change(tmp_path) -> None:
    project = tmp_path / "p" / "settings.json"
    project.parent.mkdir()
    project.write_text('{"session": {"strategy": "stub"}}')
    settings = load_settings(SettingsPaths(tmp_path / "user.json", project, None, None), env={})
    changed = change_user_setting(settings, "session.strategy", "execute-proxy")
    assert changed["session.strategy"] == "stub" and changed.sources["session.strategy"] == str(project)
    assert '"execute-proxy"' in (tmp_path / "user.json").read_text()  # saved for when the project lets go
    assert change_user_setting(settings, "recommendations.max", 5)["recommendations.max"] == 5
