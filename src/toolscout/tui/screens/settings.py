"""The settings screen: recommendations, tool search mode and threshold, strategy, provider, model.

Every change is validated and saved to the *user* settings file at once
(:func:`toolscout.core.settings.layers.save_user_setting`) and applied to the running app through the
``apply`` callback; a change the session cannot take now (a provider whose key is missing) is
saved, and the note beside the field says it is not applied and why. Each field says where its
value comes from; a value saved to the user file but overridden by a higher layer (project,
local, env) says so, and the higher value stays in effect (as it will after a restart). Keys fixed by managed settings are shown read-only. Warnings from invalid
settings files are listed at the bottom.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, Label, Select, Static, Switch

from toolscout.core.settings.layers import (
    KEYS_BY_NAME,
    PartialSettingChangeError,
    Settings,
    managed_keys,
    overrides_user_file,
)

from ..mouse import SafeMouseScreen
from ..text import clean, tildify

#: (key, label) in display order; each editor follows from the key's declaration in
#: :data:`toolscout.core.settings.layers.KEYS` (see :func:`editor_kind`).
FIELDS: tuple[tuple[str, str], ...] = (
    ("recommendations.enabled", "Recommendations"),
    ("recommendations.minScore", "Minimum score"),
    ("toolSearch.enabled", "Tool search"),
    ("toolSearch.thresholdRatio", "Auto threshold (share of window)"),
    ("session.strategy", "Strategy"),
    ("provider.name", "Provider"),
    ("provider.model", "Model"),
)

Apply = Callable[[str, Any], Settings]


def editor_kind(key: str) -> str:
    """``switch`` (a boolean), ``select`` (a fixed set of values), ``number`` or ``text``, from the
    setting's declared default and validator."""
    spec = KEYS_BY_NAME[key]
    if spec.choices:
        return "select"
    if isinstance(spec.default, bool):
        return "switch"
    return "number" if isinstance(spec.default, int | float) else "text"


def widget_id(key: str) -> str:
    """The DOM id of the editor of ``key`` (``toolSearch.enabled`` → ``set-toolSearch-enabled``)."""
    return "set-" + key.replace(".", "-")


class SettingsScreen(SafeMouseScreen, Screen[None]):
    """Edit settings live.

    Args:
        settings: the current settings.
        apply: ``apply(key, value) -> Settings`` validates, persists and applies one change;
            raises ``ValueError``/``OSError`` with a message to show, or a
            :class:`~toolscout.core.settings.layers.PartialSettingChangeError` (not saved, or saved
            but not in effect) with the settings now in effect and a warning to show.
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Back", id="settings.close")]

    def __init__(self, settings: Settings, apply: Apply) -> None:
        super().__init__()
        self.settings = settings
        self._apply = apply
        self._loading = True

    def _saved_where(self) -> str:
        """Where changes go: the user file, or why they last for this session only."""
        path = self.settings.paths.user if self.settings.paths else None
        if path is None:
            return "changes apply at once but are not saved (no user file)"
        shown = tildify(str(path))
        if any(w.key == "(file)" and w.source == str(path) for w in self.settings.warnings):
            return f"changes apply for this session only: {shown} could not be read (see below), so it is left as is"
        return f"changes apply at once and are saved to {shown}"

    def compose(self) -> ComposeResult:
        managed = managed_keys(self.settings)
        with VerticalScroll(id="settings-body"):
            yield Label(Text("Settings", style="bold"), id="settings-title")
            yield Static(Text(self._saved_where(), style="dim"), id="settings-path")
            if self.settings.warnings:
                yield Label(
                    Text("Warnings (invalid values were ignored)", style="bold yellow"), id="settings-warnings-title"
                )
                yield Static(self._warnings(), id="settings-warnings")
            for key, label in FIELDS:
                with Horizontal(classes="setting-row"):
                    with Vertical(classes="setting-label"):
                        yield Label(Text(label, style="bold"))
                        yield Static(Text(KEYS_BY_NAME[key].doc, style="dim"), classes="setting-doc")
                    with Vertical(classes="setting-editor"):
                        editor = self._editor(key)
                        editor.disabled = key in managed
                        yield editor
                        yield Static(self._source(key, managed), id=f"{widget_id(key)}-note", classes="setting-note")
        yield Footer()

    def _editor(self, key: str) -> Widget:
        value, kind = self.settings[key], editor_kind(key)
        wid = widget_id(key)
        if kind == "switch":
            return Switch(value=bool(value), id=wid)
        if kind == "select":
            return Select(
                [(c, c) for c in KEYS_BY_NAME[key].choices], value=value, allow_blank=False, id=wid, compact=True
            )
        if kind == "number":
            # plain text: Textual's type="number" drops what does not fit ("1,5" became 15)
            return Input(value=f"{value:g}", id=wid, compact=True)
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
        # not saved (the file is left as is; the change holds for this session), or saved but not
        # in effect (the session keeps its provider): a warning, not "✓ saved"
        except PartialSettingChangeError as exc:
            self.settings = exc.settings
            note.update(Text(f"⚠ {clean(str(exc), single_line=True)}", style="bold yellow"))
            return True
        except (ValueError, OSError) as exc:
            note.update(Text(f"✗ {clean(str(exc), single_line=True)}", style="bold red"))
            return False
        source = self.settings.sources.get(key, "default")
        if overrides_user_file(self.settings, source):
            note.update(
                Text(
                    f"saved to the user file, but overridden by {tildify(clean(source, single_line=True))}"
                    f" (in effect: {self.settings[key]})",
                    style="bold yellow",
                )
            )
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

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        if isinstance(event.widget, Input):
            self._commit_input(event.widget)

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
                self.query_one(f"#{widget_id(key)}-note", Static).update(Text("✗ expected a number", style="bold red"))
                return
        else:
            value = text
        if value != current:
            self.change(key, value)
        else:  # back to the value in effect: an earlier refusal no longer applies
            self.query_one(f"#{widget_id(key)}-note", Static).update(self._source(key, managed_keys(self.settings)))

    def action_close(self) -> None:
        """Back to the main screen (inputs being edited are saved first)."""
        focused = self.focused
        if isinstance(focused, Input):
            self._commit_input(focused)
        self.dismiss(None)
