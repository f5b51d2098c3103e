"""``toolscout`` (the app) builds its session through the core's settings entry point: a provider
from the settings or the environment that cannot be created becomes an offline session, applied
to the engine with ``Engine.apply_settings`` (``SettingsChanged``), never assigned around it."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from toolscout.cli.app_cmd import session_or_offline
from toolscout.core.engine.events import SettingsChanged
from toolscout.core.engine.facade import Engine
from toolscout.core.session.providers import ProviderError
from toolscout.core.settings.layers import Settings


def _engine(tmp_path: Path) -> Engine:
    return Engine(
        Settings().with_overrides({"provider.name": "anthropic"}, source="env:TOOLSCOUT_PROVIDER"), project_dir=tmp_path
    )


def test_a_provider_without_its_key_falls_back_offline_through_apply_settings(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    seen: list[SettingsChanged] = []
    engine.subscribe(lambda e: seen.append(e) if isinstance(e, SettingsChanged) else None)
    session, settings = session_or_offline(engine, argparse.Namespace(provider=None, resume=None, strategy=None))
    assert session.offline and settings["provider.name"] == "offline"
    assert engine.settings is settings and settings.sources["provider.name"] == "fallback"
    assert [e.changed for e in seen] == [{"provider.name": "offline"}]
    assert any("starting an offline session instead" in w for w in engine.warnings)


def test_a_provider_asked_for_on_the_command_line_is_not_replaced(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    with pytest.raises(ProviderError, match="ANTHROPIC_API_KEY"):
        session_or_offline(engine, argparse.Namespace(provider="anthropic", resume=None, strategy=None))
    assert engine.settings["provider.name"] == "anthropic"
