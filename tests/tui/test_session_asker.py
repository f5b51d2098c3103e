"""The app's session is built with its permission asker (issue 13 item 1): the controller builds
it through the CLI's factory and passes the app's permission prompt in; nothing sets it later.

No app runs: both tests only build it (:func:`~toolscout.tui.factory.make_app`, as the CLI does)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from toolscout.cli.app_cmd import app_session
from toolscout.core.engine.facade import Engine
from toolscout.core.session.providers import ProviderError
from toolscout.core.settings.layers import Settings
from toolscout.tui.factory import make_app


def _engine(tmp_path: Path) -> Engine:
    return Engine(
        Settings().with_overrides({"provider.name": "anthropic"}, source="env:TOOLSCOUT_PROVIDER"), project_dir=tmp_path
    )


def _args(provider: str | None = None) -> argparse.Namespace:
    return argparse.Namespace(provider=provider, resume=None, strategy=None)


def test_the_cli_app_session_is_built_with_the_permission_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    engine = _engine(tmp_path)
    app = make_app(engine.settings, engine, new_session=lambda asker: app_session(engine, _args(), asker))
    session = app.session
    assert session is not None and session.asker == app.controller.ask_permission
    # the app runs with the settings the session was built with: the offline fallback, as before
    assert app.settings is session.settings
    assert app.settings["provider.name"] == "offline" and app.settings.sources["provider.name"] == "fallback"
    with pytest.raises(AttributeError):
        session.asker = None  # type: ignore[misc]  # given when built, never replaced


def test_a_session_that_cannot_be_built_fails_before_the_app_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    engine = _engine(tmp_path)
    with pytest.raises(ProviderError, match="ANTHROPIC_API_KEY"):
        make_app(engine.settings, engine, new_session=lambda asker: app_session(engine, _args("anthropic"), asker))
