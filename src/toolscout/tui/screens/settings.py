"""The settings screen: recommendations, tool search mode and threshold, strategy, provider, model.

Every change is validated and saved to the *user* settings file at once
(:func:`toolscout.core.settings.save_user_setting`) and applied to the running app through the
``apply`` callback. Each field says where its value comes from; a value saved to the user file
but overridden by a higher layer (project, local, env) says so, and the higher value stays in
effect (as it will after a restart). Keys fixed by managed settings are shown read-only. Warnings from invalid
settings files are listed at the bottom.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, Label, Select, Static, Switch

from ...core.settings import KEYS_BY_NAME, Settings, managed_keys
from ..text import clean, tildify

#: (key, label, kind, choices) in display order. kind: switch | number | text | select.
FIELDS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("recommendations.enabled", "Recommendations", "switch", ()),
    ("recommendations.minScore", "Minimum score", "number", ()),
    ("toolSearch.enabled", "Tool search", "select", ("auto", "true", "false")),
    ("toolSearch.thresholdRatio", "Auto threshold (share of window)", "number", ()),
    ("session.strategy", "Strategy", "select", ("execute-proxy", "stub")),
    ("provider.name", "Provider", "select", ("auto", "anthropic", "openai", "offline")),
    ("provider.model", "Model", "text", ()),
)

Apply = Callable[[str, Any], Settings]


def overriding_layer(settings: Settings, source: str) -> bool:
    """True when ``source`` (a ``Settings.sources`` value) is a layer above the user file: the
    project or local file, the environment or managed settings (order from
    :func:`toolscout.core.settings.load_settings`), so a value saved to the user file loses to it."""
    paths = settings.paths
    files = {str(p) for p in (paths.project, paths.project_local) if p is not None} if paths else set()
    return source in files or source.startswith(("env:", "managed:"))


def widget_id(key: str) -> str:
    """The DOM id of the editor of ``key`` (``toolSearch.enabled`` → ``set-toolSearch-enabled``)."""
    return "set-" + key.replace(".", "-")


class SettingsScreen(Screen[None]):
    """Edit settings live.

    Args:
        settings: the current settings.
        apply: ``apply(key, value) -> Settings`` validates, persists and applies one change;
            raises ``ValueError``/``OSError`` with a message to show.
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Back", id="settings.close")]

    def __init__(self, settings: Settings, apply: Apply) -> None:
        super().__init__()
        self.settings = settings
        self._apply = apply
        self._loading = True

    def compose(self) -> ComposeResult:
        managed = managed_keys(self.settings)
        with VerticalScroll(id="settings-body"):
            yield Label(Text("Settings", style="bold"), id="settings-title")
            path = self.settings.paths.user if self.settings.paths else None
            yield Static(Text(f"changes apply at once and are saved to {tildify(str(path))}" if path
                              else "changes apply at once but are not saved (no user file)",
                              style="dim"), id="settings-path")
            if self.settings.warnings:
                yield Label(Text("Warnings (invalid values were ignored)", style="bold yellow"),
                            id="settings-warnings-title")
                yield Static(self._warnings(), id="settings-warnings")
            for key, label, kind, choices in FIELDS:
                with Horizontal(classes="setting-row"):
                    with Vertical(classes="setting-label"):
                        yield Label(Text(label, style="bold"))
                        yield Static(Text(KEYS_BY_NAME[key].doc, style="dim"), classes="setting-doc")
                    with Vertical(classes="setting-editor"):
                        editor = self._editor(key, kind, choices)
                        editor.disabled = key in managed
                        yield editor
                        yield Static(self._source(key, managed), id=f"{widget_id(key)}-note", classes="setting-note")
        yield Footer()

    def _editor(self, key: str, kind: str, choices: tuple[str, ...]) -> Widget:
        value = self.settings[key]
        wid = widget_id(key)
        if kind == "switch":
            return Switch(value=bool(value), id=wid)
        if kind == "select":
            return Select([(c, c) for c in choices], value=value, allow_blank=False, id=wid, compact=True)
        if kind == "number":
            return Input(value=f"{value:g}", type="number", id=wid, compact=True)
        return Input(value=value or "", placeholder="(provider default)", id=wid, compact=True)

    def _source(self, key: str, managed: set[str]) -> Text:
        source = self.settings.sources.get(key, "default")
        if key in managed:
            return Text("set by managed settings (read-only)", style="yellow")
        return Text(f"from {tildify(clean(source, single_line=True))}", style="dim")

    def _warnings(self) -> Text:
        if not self.settings.warnings:
            return Text("none", style="dim")
        out = Text()
        for i, warning in enumerate(self.settings.warnings):
            if i:
                out.append("\n")
            out.append("! ", style="bold yellow")
            out.append(tildify(clean(str(warning), single_line=True)))
        return out

    def on_mount(self) -> None:
        self.query_one(f"#{widget_id(FIELDS[0][0])}").focus()
        self.call_after_refresh(self._loaded)

    def _loaded(self) -> None:
        self._loading = False

    # -- changes ---------------------------------------------------------------------------
    def _key_of(self, widget: Widget) -> str | None:
        for key, *_ in FIELDS:
            if widget.id == widget_id(key):
                return key
        return None

    def change(self, key: str, value: Any) -> bool:
        """Validate, save and apply one change; shows the outcome next to the field."""
        note = self.query_one(f"#{widget_id(key)}-note", Static)
        try:
            self.settings = self._apply(key, value)
        except (ValueError, OSError) as exc:
            note.update(Text(f"✗ {clean(str(exc), single_line=True)}", style="bold red"))
            return False
        source = self.settings.sources.get(key, "default")
        if overriding_layer(self.settings, source):
            note.update(Text(f"saved to the user file, but overridden by {tildify(clean(source, single_line=True))}"
                             f" (in effect: {self.settings[key]})", style="bold yellow"))
            return True
        note.update(Text("✓ saved", style="green"))
        return True

    def on_switch_changed(self, event: Switch.Changed) -> None:
        key = self._key_of(event.switch)
        if key and not self._loading:
            event.stop()
            self.change(key, event.value)

    def on_select_changed(self, event: Select.Changed) -> None:
        key = self._key_of(event.select)
        if key and not self._loading and event.value is not Select.NULL and event.value != self.settings[key]:
            event.stop()
            self.change(key, event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._commit_input(event.input)

    def on_descendant_blur(self, event: Any) -> None:
        widget = event.widget if hasattr(event, "widget") else None
        if isinstance(widget, Input):
            self._commit_input(widget)

    def _commit_input(self, widget: Input) -> None:
        key = self._key_of(widget)
        if key is None:
            return
        text = widget.value.strip()
        current = self.settings[key]
        if KEYS_BY_NAME[key].default is None and not text:
            value: Any = None
        elif isinstance(KEYS_BY_NAME[key].default, float):
            try:
                value = float(text)
            except ValueError:
                self.query_one(f"#{widget_id(key)}-note", Static).update(
                    Text("✗ expected a number", style="bold red"))
                return
        else:
            value = text
        if value != current:
            self.change(key, value)

    def action_close(self) -> None:
        """Back to the main screen (inputs being edited are saved first)."""
        focused = self.focused
        if isinstance(focused, Input):
            self._commit_input(focused)
        self.dismiss(None)
