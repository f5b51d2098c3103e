"""The settings screen: live changes that persist to the user settings file, and warnings.

Harness tests: the screen alone over the app's own controller (:func:`settings_app`), every test
but two. Journeys (full app): F5 opens the screen and its changes reach the main screen's
recommendation bar (:func:`test_recommendation_settings_from_f5_reach_the_bar_and_persist`), and a
provider picked there answers the next message (:func:`test_a_provider_chosen_in_f5_answers_the_next_message`)."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import tui_scenarios as sc
from textual.widgets import Select
from tui_harness import ScreenHarness, screen_app

from fixtures.providers import FakeModelServer, Reply
from toolscout.tui.controller import SessionController
from toolscout.tui.screens.settings import SettingsScreen, widget_id
from toolscout.tui.widgets.recommendations import RecommendationBar

SIZE = (120, 36)


def user_file() -> Path:
    return Path(os.environ["TOOLSCOUT_CONFIG_DIR"]) / "settings.json"


class SettingsHarness(ScreenHarness):
    """The settings screen over the app's controller (an offline session over the harness's
    engine, already started): the screen and ``apply`` F5 pushes in the app."""

    def __init__(self, build: Any, engine: Any) -> None:
        super().__init__(build, engine)
        self.controller = SessionController(
            self, engine.settings, engine, start_engine=False, new_session=sc.session_factory(engine, engine.settings)
        )

    @property
    def settings(self) -> Any:
        return self.controller.settings

    @property
    def session(self) -> Any:
        return self.controller.session

    def make_screen(self) -> SettingsScreen:
        return SettingsScreen(self.controller.settings, self.controller.apply_setting)


@asynccontextmanager
async def settings_app(settings: Any = None) -> AsyncIterator[Any]:
    """The settings screen alone (:class:`SettingsHarness`); yields the settled pilot and closes
    the session on the way out."""
    async with screen_app(None, size=SIZE, settings=settings, harness=SettingsHarness) as pilot:
        try:
            yield pilot
        finally:
            await pilot.app.controller.stop()


async def test_recommendation_settings_from_f5_reach_the_bar_and_persist() -> None:
    """Journey (full app): F5 opens the settings on the recommendations switch; switching it off
    hides the main screen's recommendation bar, on shows it again, and a new minimum score
    reaches the bar; every change is saved and applied to the session."""
    app = sc.make_app()
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await sc.type_text(pilot, "weather forecast")
        await pilot.press("enter")
        await sc.settle(pilot)
        bar = app.screen.query_one(RecommendationBar)
        assert bar.display and bar.min_score != 0.5
        await pilot.press("f5")
        await pilot.pause()
        assert isinstance(app.screen, SettingsScreen)
        assert app.focused.id == widget_id("recommendations.enabled")
        await pilot.press("enter")  # toggles the focused switch
        await pilot.pause()
        assert json.loads(user_file().read_text()) == {"recommendations": {"enabled": False}}
        assert app.settings["recommendations.enabled"] is False
        assert app.session.prefetch.enabled is False
        await pilot.press("escape")
        await sc.settle(pilot)
        assert not bar.display
        await pilot.press("f5", "enter")  # and back on
        await sc.settle(pilot)
        assert bar.display
        field = app.screen.query_one(f"#{widget_id('recommendations.minScore')}")
        field.focus()
        field.value = "0.5"
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("escape")
        await sc.settle(pilot)
        assert bar.display
        assert bar.min_score == 0.5
        assert json.loads(user_file().read_text()) == {"recommendations": {"enabled": True, "minScore": 0.5}}


async def test_number_settings_are_validated_before_saving() -> None:
    """Harness: what is typed is kept as typed ("1,5" is not turned into 15) and refused when
    it is not a number; an out-of-range number is refused with a note and not saved; the value
    in effect typed again clears the refusal; a valid one is saved and applied, and the screen
    stays open."""
    async with settings_app() as pilot:
        app = pilot.app
        screen = app.screen
        assert isinstance(screen, SettingsScreen)
        field = screen.query_one(f"#{widget_id('recommendations.minScore')}")
        note = screen.query_one(f"#{widget_id('recommendations.minScore')}-note")
        in_effect = str(note.render())
        field.focus()
        field.value = ""
        await pilot.press("1", ",", "5", "enter")
        await pilot.pause()
        assert field.value == "1,5" and "expected a number" in str(note.render())
        field.value = "7"
        await pilot.press("enter")
        await pilot.pause()
        assert "out of range" in str(note.render())
        field.value = f"{app.settings['recommendations.minScore']:g}"
        await pilot.press("enter")
        await pilot.pause()
        assert str(note.render()) == in_effect
        field.value = "7"
        await pilot.press("enter")
        await pilot.pause()
        assert not user_file().exists()
        assert app.settings["recommendations.minScore"] != 7
        field.value = "0.5"
        await pilot.press("enter")
        await pilot.pause()
        assert json.loads(user_file().read_text()) == {"recommendations": {"minScore": 0.5}}
        assert app.settings["recommendations.minScore"] == 0.5
        assert app.screen is screen  # still on the settings screen
        assert not app.results  # not dismissed


async def test_select_changes_apply_live() -> None:
    async with settings_app() as pilot:
        app = pilot.app
        app.screen.change("toolSearch.enabled", "true")
        assert app.engine.settings["toolSearch.enabled"] == "true"
        assert app.engine.context_report().decision.defer is True
        assert json.loads(user_file().read_text()) == {"toolSearch": {"enabled": True}}


async def test_tool_search_picked_in_f5_is_saved_as_a_json_boolean() -> None:
    """Journey (full app): F5, Tab to Tool search, pick "false" then "true" with the keys: the
    user file says ``true``/``false`` (JSON booleans, as a person writes them), not the strings
    "true"/"false"; read back, each is the setting chosen, and "auto" stays a string."""
    from toolscout.core.settings.layers import SettingsPaths, load_settings

    app = sc.make_app()
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await pilot.press("f5")
        await sc.until_screen(pilot, "SettingsScreen")
        await pilot.press("tab", "tab")
        assert app.focused.id == widget_id("toolSearch.enabled")
        assert app.settings["toolSearch.enabled"] == "true"  # an offline session's default (not saved)
        for keys, value, written in (
            (("enter", "down", "enter"), "false", False),
            (("enter", "up", "enter"), "true", True),
            (("enter", "up", "enter"), "auto", "auto"),
        ):
            await pilot.press(*keys)
            await pilot.pause()
            assert app.settings["toolSearch.enabled"] == value
            assert json.loads(user_file().read_text()) == {"toolSearch": {"enabled": written}}
            paths = SettingsPaths(user=user_file(), project=None, project_local=None, managed=None)
            reread = load_settings(paths, env={})
            assert reread["toolSearch.enabled"] == value and not reread.warnings


async def test_a_provider_that_cannot_start_is_saved_but_reported() -> None:
    """A provider that cannot be created (no ANTHROPIC_API_KEY in tests) is saved, but the note
    beside the field says it is not applied, why, and which provider stays in use (it used to
    say "✓ saved" under "changes apply at once", with the reason in a passing toast)."""
    async with settings_app() as pilot:
        app = pilot.app
        before = app.session.provider
        assert app.screen.change("provider.name", "anthropic")
        await pilot.pause()
        assert app.session.provider is before
        note = str(app.screen.query_one(f"#{widget_id('provider.name')}-note").render()).replace("\n", "")
        assert "✓ saved" not in note and "saved, but not applied" in note
        assert "ANTHROPIC_API_KEY" in note and "still using offline" in note
        assert app.settings["provider.name"] == "anthropic"
        assert json.loads(user_file().read_text()) == {"provider": {"name": "anthropic"}}


async def test_a_provider_chosen_in_f5_answers_the_next_message(monkeypatch) -> None:
    """Journey (full app, offline, an OpenAI key and a loopback OpenAI endpoint in the
    environment): F5 → Provider openai says "✓ saved", and it is in use at once: the status bar
    names it, the welcome no longer says no model is configured (it did until a restart), and
    the next message is answered by that provider."""
    with FakeModelServer([Reply(text="Hello from the new provider.")]) as model:
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", model.url + "/v1")
        app = sc.make_app()
        async with app.run_test(size=SIZE) as pilot:
            await sc.settle(pilot)
            assert "No model is configured" in sc.screen_text(app)
            await pilot.press("f5")
            await sc.until_screen(pilot, "SettingsScreen")
            app.screen.query_one(f"#{widget_id('provider.name')}", Select).value = "openai"
            await pilot.pause()
            assert "✓ saved" in str(app.screen.query_one(f"#{widget_id('provider.name')}-note").render())
            await pilot.press("escape")
            await sc.settle(pilot)
            assert app.session.provider.name == "openai"
            text = sc.screen_text(app)
            assert "openai" in text.splitlines()[0] and "No model is configured" not in text
            await sc.type_text(pilot, "hello")
            await pilot.press("enter")
            await sc.settle(pilot)
            assert len(model.requests) == 1
            assert "Hello from the new provider." in sc.screen_text(app)


async def test_invalid_settings_file_shows_its_warnings() -> None:
    user_file().parent.mkdir(parents=True, exist_ok=True)
    user_file().write_text('{"recommendations": {"minScore": "[bold]lots[/bold]"}, "toolSearch": {"enabled": 3}}')
    async with settings_app(sc.make_settings()) as pilot:
        app = pilot.app
        text = sc.screen_text(app)
        assert "recommendations.minScore" in text
        assert "[bold]lots[/bold]" in text  # shown literally
        assert "toolSearch.enabled" in text


async def test_a_value_overridden_by_the_project_file_says_so_after_saving(tmp_path: Path) -> None:
    from toolscout.core.settings.layers import SettingsPaths, load_settings

    project = tmp_path / ".toolscout" / "settings.json"
    project.parent.mkdir()
    project.write_text(json.dumps({"session": {"strategy": "stub"}}))
    settings = load_settings(SettingsPaths(user_file(), project, None, None), env={})
    settings = settings.with_overrides({"toolSearch.ranker": "hybrid"})
    async with settings_app(settings) as pilot:
        app = pilot.app
        screen = app.screen
        assert isinstance(screen, SettingsScreen)
        note = screen.query_one(f"#{widget_id('session.strategy')}-note")
        assert f"from {project}" in str(note.render()).replace("\n", "")  # every field says its source
        assert screen.change("session.strategy", "execute-proxy")
        await pilot.pause()
        assert json.loads(user_file().read_text()) == {"session": {"strategy": "execute-proxy"}}
        shown = str(note.render()).replace("\n", "")
        assert "overridden by" in shown and str(project) in shown
        assert app.settings["session.strategy"] == "stub"  # what a restart would give
        assert app.settings.sources["session.strategy"] == str(project)


async def test_a_malformed_user_file_is_never_overwritten() -> None:
    broken = '{"model": {"name": "my-model"}, "custom": 1,'  # truncated: a save would lose both keys
    user_file().parent.mkdir(parents=True, exist_ok=True)
    user_file().write_text(broken, encoding="utf-8")
    async with settings_app() as pilot:
        app = pilot.app
        header = str(app.screen.query_one("#settings-path").render()).replace("\n", " ")
        assert header.startswith("changes apply for this session only:") and "could not be read" in header
        assert app.focused.id == widget_id("recommendations.enabled")
        await pilot.press("enter")
        await pilot.pause()
        assert user_file().read_text(encoding="utf-8") == broken
        assert not list(user_file().parent.glob("*.tmp"))
        assert app.settings["recommendations.enabled"] is False  # for this session
        assert app.session.prefetch.enabled is False
        note = str(app.screen.query_one(f"#{widget_id('recommendations.enabled')}-note").render())
        assert str(user_file()) in note.replace("\n", "") or "settings.json" in note
        assert "this session only" in note.replace("\n", " ")
