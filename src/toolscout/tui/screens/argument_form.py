"""The argument form: fill in a tool's arguments (offline session) and run it.

Fields are built from the tool's ``inputSchema`` (:mod:`toolscout.core.calls.form_model`): text for
strings and numbers (a number is kept as typed and refused on Run when it does not parse), a
switch for booleans, a select for enums and a JSON editor for arrays, objects and anything else.
The arguments are validated by the executor's own validator before the screen dismisses with
them.

Every field is a bordered box (a terminal shows no other cue of where to type), the focused
field's box and label take the accent colour, descriptions wrap in full, and everything between
the title and the buttons scrolls, so a long form still fits an 80×24 terminal.
Enter moves to the next field and runs the tool from the last one; Ctrl+S runs from anywhere. A
string the schema does not keep to one line takes several (Shift+Enter or Ctrl+J, or a paste).
A field that asks for the folder to work in (git's ``repo_path``) starts as ``.``, the project
folder, sent as its absolute path (:func:`toolscout.core.calls.form_model.asks_for_folder`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Footer, Input, Label, Select, Static, Switch, TextArea

from toolscout.core.calls.form_model import (
    PROJECT_FOLDER,
    FieldSpec,
    FormError,
    fields_of,
    parse_value,
    project_folder_value,
)
from toolscout.core.calls.validation import field_problems
from toolscout.core.models import ToolSpec

from ..mouse import SafeMouseScreen
from ..text import clean
from ..widgets.multiline import MultiLineInput
from ..widgets.typeahead import KeysWaitForFocus, advance_on_enter, pass_on

#: Longest tool description shown above the fields (characters; it wraps and scrolls).
DESCRIPTION_LIMIT = 2_000
#: Longest parameter description shown under a field label (characters; it wraps).
FIELD_HELP_LIMIT = 600


class FieldInput(Input):
    """A one-line field: Enter moves on at once, keys typed ahead follow the focus (:mod:`..widgets.typeahead`)."""

    def __init__(self, advance: Callable[[Widget], bool], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.advance = advance

    async def _on_key(self, event: events.Key) -> None:
        # Runs before Input's own _on_key (prevent_default() skips it).
        if not pass_on(self, event):
            advance_on_enter(self, event, self.advance)


class ArgumentFormScreen(SafeMouseScreen, KeysWaitForFocus, ModalScreen[dict[str, Any] | None]):
    """Dismisses with the validated arguments, or None when cancelled.

    Args:
        tool: the tool to run (its ``input_schema`` defines the fields).
        project_dir: the session's project folder (what ``.`` in a folder field stands for);
            None leaves folder fields empty.
        typed: keys typed for the form before it was pushed (after the Enter that picked the
            tool); they, and keys that come while the form is being built, go to its first field.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "run_tool", "Run", id="form.run"),
        Binding("escape", "cancel", "Cancel", id="form.cancel"),
    ]

    def __init__(self, tool: ToolSpec, project_dir: Path | None = None, typed: list[events.Key] | None = None) -> None:
        super().__init__()
        self.keys_waiting = list(typed or [])
        self.tool = tool
        self.project_dir = project_dir
        self.fields = fields_of(tool.input_schema)
        self._ids = {spec.name: f"arg-{i}" for i, spec in enumerate(self.fields)}
        self._touched: set[str] = set()

    def compose(self) -> ComposeResult:
        yield Footer()  # this dialog's keys, not the main screen's under it
        with Vertical(id="form-dialog", classes="dialog"):
            title = Text("Run ", style="bold")
            title.append(clean(self.tool.name, single_line=True), style="bold cyan")
            yield Label(title, id="form-title")
            with VerticalScroll(id="form-fields"):
                desc = clean(self.tool.description, limit=DESCRIPTION_LIMIT).strip()
                if desc:
                    yield Static(Text(desc, style="dim"), id="form-description")
                if not self.fields:
                    yield Static(Text("This tool takes no arguments.", style="dim italic"))
                for spec in self.fields:
                    with Vertical(classes="field-row"):
                        yield from self._field(spec)
            yield Static(id="form-errors")
            with Horizontal(classes="buttons"):
                yield Static(Text("* required · Enter: next field", style="dim"), id="form-hint")
                yield Button("Run (ctrl+s)", id="run", variant="primary", compact=True)
                yield Button("Cancel (esc)", id="cancel", compact=True)

    def _field(self, spec: FieldSpec) -> ComposeResult:
        label = Text(clean(spec.name, single_line=True), style="bold")
        if spec.required:
            label.append(" *", style="bold red")
        label.append(f"  {clean(spec.type_label, single_line=True)}", style="dim")
        yield Label(label, classes="field-label")
        help_text = clean(spec.description, limit=FIELD_HELP_LIMIT).strip()
        if self._prefills(spec):
            help_text = f"{help_text} ({PROJECT_FOLDER} is the project folder)".strip()
        if help_text:
            yield Static(Text(help_text, style="dim"), classes="field-help")
        yield self._editor(spec)

    def _prefills(self, spec: FieldSpec) -> bool:
        return spec.project_folder and self.project_dir is not None

    def _editor(self, spec: FieldSpec) -> Widget:
        wid = self._ids[spec.name]
        default = spec.default if spec.has_default else PROJECT_FOLDER if self._prefills(spec) else None
        if spec.kind == "boolean":
            return Switch(value=bool(default), id=wid, classes="field")
        if spec.kind == "enum":
            # Content, not str: a str option would be parsed as markup ("[/" raises).
            options = [
                (
                    Content(
                        clean(
                            c if isinstance(c, str) else json.dumps(c, ensure_ascii=False), single_line=True, limit=60
                        )
                    ),
                    c,
                )
                for c in spec.choices
            ]
            select: Select[Any] = Select(options, allow_blank=True, id=wid, classes="field", prompt="(not set)")
            if spec.has_default and default in spec.choices:
                select.value = default
            return select
        if spec.kind == "string" and spec.multiline:  # Enter: next field; Shift+Enter / Ctrl+J: newline
            box = MultiLineInput(
                "" if default is None else str(default),
                id=wid,
                classes="field text-field",
                placeholder="required" if spec.required else "(optional)",
            )
            box.advance = self.advance
            box.border_subtitle = "shift+enter / ctrl+j: new line"
            return box
        if spec.kind in ("string", "integer", "number"):
            # Plain text for numbers too: Textual's integer/number types drop what does not fit
            # ("2.5" became 25); the form model refuses a bad number on Run, saying why.
            value = "" if default is None else str(default)
            return FieldInput(
                self.advance,
                value=value,
                id=wid,
                classes="field",
                placeholder="required" if spec.required else "(optional)",
            )
        text = "" if default is None else json.dumps(default, indent=2, ensure_ascii=False)
        area = TextArea(
            text,
            id=wid,
            classes="field json-field",
            language=None,
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
        )
        area.border_subtitle = "JSON"
        return area

    def on_switch_changed(self, event: Switch.Changed) -> None:
        for name, wid in self._ids.items():
            if wid == event.switch.id:
                self._touched.add(name)

    def _raw(self, spec: FieldSpec) -> Any:
        widget = self.query_one(f"#{self._ids[spec.name]}")
        if isinstance(widget, Switch):
            explicit = spec.required or spec.has_default or spec.name in self._touched
            return widget.value if explicit else None
        if isinstance(widget, Select):
            return None if widget.value is Select.NULL else widget.value
        if isinstance(widget, TextArea):
            return widget.text
        if isinstance(widget, Input):
            return widget.value
        return None

    def collect(self) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        """The arguments as typed and every problem with them (parse errors, then schema errors)."""
        arguments: dict[str, Any] = {}
        problems: list[tuple[str, str]] = []
        for spec in self.fields:
            try:
                present, value = parse_value(spec, self._raw(spec))
            except FormError as exc:
                problems.append((spec.name, str(exc).split(": ", 1)[-1]))
                continue
            if present:
                arguments[spec.name] = project_folder_value(spec, value, self.project_dir)
        if not problems:
            problems = field_problems(self.tool.input_schema, arguments)
        return arguments, problems

    def _show_problems(self, problems: list[tuple[str, str]]) -> None:
        names = {name for name, _ in problems}
        for spec in self.fields:
            self.query_one(f"#{self._ids[spec.name]}").set_class(spec.name in names, "-invalid")
        out = Text()
        for name, message in problems:
            if out:
                out.append("\n")
            out.append("✗ ", style="bold red")
            if name:
                out.append(clean(name, single_line=True) + ": ", style="bold")
            out.append(clean(message, single_line=True, limit=300))
        errors = self.query_one("#form-errors", Static)
        errors.update(out)
        errors.set_class(bool(problems), "-shown")  # hidden when empty: rows are scarce at 80×24

    def action_run_tool(self) -> None:
        """Validate; on success dismiss with the arguments, else show what is wrong."""
        arguments, problems = self.collect()
        blocking = [p for p in problems if p[0] or not p[1].startswith(("the tool's input schema", "could not"))]
        self._show_problems(problems)
        if not blocking:
            self.dismiss(arguments)

    def action_cancel(self) -> None:
        """Close without running."""
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "run":
            self.action_run_tool()
        else:
            self.action_cancel()

    def on_input_submitted(self, event: Input.Submitted | MultiLineInput.Submitted) -> None:
        """Enter: on to the next field; from the last one, run."""
        event.stop()
        fields = list(self.query(".field"))
        index = fields.index(event.input) if event.input in fields else len(fields) - 1
        if index + 1 < len(fields):
            fields[index + 1].focus()
        else:
            self.action_run_tool()

    def advance(self, field: Widget) -> bool:
        """Focus the field after ``field`` now (not after a message round trip: keys typed
        ahead must land there). False from the last field."""
        fields = list(self.query(".field"))
        index = fields.index(field) if field in fields else len(fields) - 1
        if index + 1 >= len(fields):
            return False
        self.set_focus(fields[index + 1])
        return True

    def on_multi_line_input_submitted(self, event: MultiLineInput.Submitted) -> None:
        self.on_input_submitted(event)

    def on_mount(self) -> None:
        fields = self.query(".field")
        # now, not deferred: the keys that waited for the form go to this field next
        self.set_focus(fields.first() if fields else self.query_one("#run", Button))
        self.keys_ready()
