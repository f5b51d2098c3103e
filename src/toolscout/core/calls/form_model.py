"""JSON Schema → argument-form fields, and typed-in text → argument values. No widgets here
(the form itself is :mod:`toolscout.tui.screens.argument_form`); the arguments are then checked
by :func:`toolscout.core.calls.validation.field_problems`, the executor's own validator.

A tool's ``inputSchema`` comes from an untrusted server: anything that is not the expected shape
becomes a JSON field, and a schema that is itself invalid is reported instead of raising.

A field that asks for the folder to work in starts filled in with the session's project folder,
shown as ``.`` (:data:`PROJECT_FOLDER`) and sent as the folder's absolute path
(:func:`project_folder_value`), where the server says that is what the field is
(:func:`asks_for_folder`): a string field without a default named ``repo_path`` or ``cwd``
(git's ``repo_path``: "the path to the Git repository"), or named ``path``, ``directory``,
``dir``, ``folder``, ``root``, ``repo``, ``repository`` or ``working_directory`` with a
description that speaks of a repository, folder, directory or project. Any other field starts empty.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Field kinds and the widget that edits them.
KINDS = ("string", "integer", "number", "boolean", "enum", "json")


@dataclass
class FieldSpec:
    """One top-level property of an input schema, as the form shows it.

    Attributes:
        name: property name. kind: one of :data:`KINDS`. required: listed in ``required``.
        description: the property's description (untrusted). type_label: for display.
        choices: enum values (kind ``enum``). default: the schema default, if any.
        nullable: ``null`` is among the allowed types.
        multiline: a string the schema does not keep to one line (no ``format``, ``pattern`` or
            ``maxLength`` up to :data:`SINGLE_LINE_MAX`): the form takes several lines for it.
        project_folder: the field asks for the folder to work in (:func:`asks_for_folder`): it
            starts as :data:`PROJECT_FOLDER`.
    """

    name: str
    kind: str
    required: bool = False
    description: str = ""
    type_label: str = ""
    choices: list[Any] = field(default_factory=list)
    default: Any = None
    has_default: bool = False
    nullable: bool = False
    multiline: bool = False
    project_folder: bool = False


def _types(schema: dict[str, Any]) -> list[str]:
    t = schema.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            found: list[str] = []
            for option in options:
                if isinstance(option, dict):
                    found += [x for x in _types(option) if x not in found]
            return found
    return []


def fields_of(schema: Any) -> list[FieldSpec]:
    """The form fields of ``schema`` (top-level ``properties``, in the server's order)."""
    if not isinstance(schema, dict):
        return []
    props = schema.get("properties")
    if not isinstance(props, dict):
        return []
    required = schema.get("required")
    required_set = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    out: list[FieldSpec] = []
    for name, prop in props.items():
        if not isinstance(name, str):
            continue
        prop = prop if isinstance(prop, dict) else {}
        types = _types(prop)
        nullable = "null" in types
        concrete = [t for t in types if t != "null"]
        description = prop.get("description") if isinstance(prop.get("description"), str) else ""
        spec = FieldSpec(
            name, "json", name in required_set, description or "", "/".join(types) or "any", nullable=nullable
        )
        if "default" in prop:
            spec.default, spec.has_default = prop["default"], True
        enum = [prop["const"]] if "const" in prop else prop.get("enum")  # const: the one value allowed
        if "const" in prop and not spec.has_default:
            spec.default, spec.has_default = prop["const"], True
        if isinstance(enum, list) and enum:
            spec.kind, spec.choices = "enum", list(enum)
            spec.type_label = spec.type_label if types else "enum"
        elif len(concrete) == 1 and concrete[0] in ("string", "integer", "number", "boolean"):
            spec.kind = concrete[0]
            spec.multiline = spec.kind == "string" and not _single_line(prop)
        spec.project_folder = asks_for_folder(spec)
        spec.multiline = spec.multiline and not spec.project_folder
        out.append(spec)
    return out


#: What a folder field starts as: the project folder (sent as its absolute path).
PROJECT_FOLDER = "."
#: Field names that ask for the folder to work in whatever their description says.
FOLDER_NAMES = frozenset({"repo_path", "cwd"})
#: Field names that ask for it when their description speaks of one (:data:`_FOLDER_WORDS`).
MAYBE_FOLDER_NAMES = frozenset(
    {"path", "directory", "dir", "folder", "root", "repo", "repository", "working_directory"}
)
_FOLDER_WORDS = re.compile(r"\b(repo|repository|folder|directory|project)\b", re.IGNORECASE)


def asks_for_folder(spec: FieldSpec) -> bool:
    """True when the server says field ``spec`` is the folder to work in (see the module
    docstring): a string without a default, named so (and described so, for the general names)."""
    if spec.kind != "string" or spec.has_default:
        return False
    name = spec.name.lower()
    return name in FOLDER_NAMES or (name in MAYBE_FOLDER_NAMES and bool(_FOLDER_WORDS.search(spec.description)))


def project_folder_value(spec: FieldSpec, value: Any, project_dir: Path | None) -> Any:
    """``value`` as sent: :data:`PROJECT_FOLDER` in a folder field is ``project_dir``'s absolute
    path (the server may run in another folder); anything else as typed."""
    if spec.project_folder and project_dir is not None and isinstance(value, str) and value.strip() == PROJECT_FOLDER:
        return str(project_dir.resolve())
    return value


#: A string whose ``maxLength`` is at most this many characters is a one-line field.
SINGLE_LINE_MAX = 120


def _single_line(prop: dict[str, Any]) -> bool:
    """True when the schema keeps a string to one line: a ``format`` (date, uri, email …), a
    ``pattern`` or a short ``maxLength``."""
    limit = prop.get("maxLength")
    short = isinstance(limit, int) and not isinstance(limit, bool) and limit <= SINGLE_LINE_MAX
    return bool(prop.get("format")) or bool(prop.get("pattern")) or short


class FormError(ValueError):
    """A field's text could not be turned into a value. ``field`` names it."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


def parse_value(spec: FieldSpec, raw: Any) -> tuple[bool, Any]:
    """Turn one widget value into an argument value.

    Args:
        spec: the field. raw: the widget's value (``str`` for text fields, ``bool`` for
            booleans, the chosen value or ``None`` for enums).

    Returns:
        ``(present, value)``; ``present`` is False when the field was left empty.

    Raises:
        FormError: the text is not a valid number or JSON, or is a number JSON cannot carry
            (``inf``, ``nan``, ``1e400``; in a JSON field also ``NaN``, ``Infinity``): sent, it
            would reach the server as ``null``.
    """
    if spec.kind == "boolean":
        return (raw is not None, bool(raw)) if raw is not None else (False, None)
    if spec.kind == "enum":
        return (raw is not None, raw)
    text = raw if isinstance(raw, str) else ("" if raw is None else str(raw))
    if not text.strip():
        return False, None
    if spec.kind == "string":
        return True, text
    if spec.kind == "integer":
        try:
            return True, int(text.strip())
        except ValueError:
            raise FormError(spec.name, "expected an integer (a whole number)") from None
    if spec.kind == "number":
        try:
            value = float(text.strip())
        except ValueError:
            raise FormError(spec.name, "expected a number") from None
        if not math.isfinite(value):
            raise FormError(spec.name, NOT_FINITE.format(text.strip()))
        return True, int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value
    try:
        return True, json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise FormError(spec.name, f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    except ValueError as exc:  # a non-finite number inside the JSON
        raise FormError(spec.name, str(exc)) from None


#: Why a number that JSON cannot carry is refused (``{}``: the number as typed).
NOT_FINITE = "{} is not a number JSON can carry (no inf or NaN, none past ±1.8e308): the server would get null"


def _refuse_constant(name: str) -> float:
    """``json.loads``' ``parse_constant``: ``NaN``, ``Infinity`` and ``-Infinity`` (which the
    standard library reads, though JSON has no such values) are refused."""
    raise ValueError(NOT_FINITE.format(name))


def _finite_float(text: str) -> float:
    """``json.loads``' ``parse_float``: a number past the float range (``1e400``) is refused
    instead of read as infinity."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(NOT_FINITE.format(text))
    return value
