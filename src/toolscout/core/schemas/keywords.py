"""Keyword-level repair of a JSON Schema: every keyword value made valid for Draft 2020-12.

:func:`repair_keywords` walks a schema tree and returns a copy in which every keyword the
Draft 2020-12 meta-schema constrains has a value the meta-schema accepts, so a provider that
checks ``input_schema`` against it (Anthropic, OpenAI) never rejects the request for it. Rules
are those of the 2020-12 meta-schema (``json-schema.org/draft/2020-12/schema`` and its
vocabularies); older-draft spellings are translated to their 2020-12 meaning:

* ``type``: aliases become the JSON type they mean (``float`` → ``number``, ``int`` → ``integer``,
  ``str`` → ``string``, ``dict`` → ``object`` ...); an unknown type name is dropped (any value).
* a subschema that is not an object: ``true`` → ``{}``, ``false`` → ``{"not": {}}``, a bare type
  name inside ``properties`` → ``{"type": NAME}``, other text → ``{"description": TEXT}``,
  anything else → ``{}``.
* numbers given as text are parsed; counts must be non-negative integers; ``multipleOf`` > 0;
  a pattern that is not a valid regular expression is dropped; ``required`` keeps unique strings.
* Draft 4-7: ``items: [..]`` → ``prefixItems`` (+ ``additionalItems`` → ``items``); boolean
  ``exclusiveMinimum``/``exclusiveMaximum`` → the number form; ``dependencies`` →
  ``dependentRequired`` / ``dependentSchemas``; ``$schema`` is dropped (the result is 2020-12).
* objects get ``properties: {}`` and arrays ``items: {}`` when they lack them (OpenAI rejects
  "object schema missing properties" and "array schema missing items"; both are no-ops).
* subschemas deeper than :data:`MAX_DEPTH` are replaced by ``{}``.

Each change that alters what the schema says (not a pure re-spelling) adds one warning naming
the JSON path. Input is never mutated; nothing raises; the input tree may be shared or cyclic
(a cycle is cut like an over-deep node).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

#: Deepest subschema nesting kept (levels of schema objects below the root).
MAX_DEPTH = 64

JSON_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
TYPE_ALIASES = {
    **{t: t for t in JSON_TYPES},
    "float": "number",
    "double": "number",
    "decimal": "number",
    "real": "number",
    "numeric": "number",
    "int": "integer",
    "long": "integer",
    "int32": "integer",
    "int64": "integer",
    "uint": "integer",
    "bool": "boolean",
    "str": "string",
    "text": "string",
    "date": "string",
    "datetime": "string",
    "list": "array",
    "tuple": "array",
    "dict": "object",
    "map": "object",
    "obj": "object",
    "record": "object",
    "none": "null",
    "nil": "null",
}

SINGLE_KEYWORDS = (
    "additionalProperties",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
    "items",
)
ARRAY_KEYWORDS = ("allOf", "anyOf", "oneOf", "prefixItems")
MAP_KEYWORDS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_NUMBERS = ("maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum")
_COUNTS = (
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "maxProperties",
    "minProperties",
    "maxContains",
    "minContains",
)
_BOOLS = ("uniqueItems", "deprecated", "readOnly", "writeOnly")
_STRINGS = ("title", "description", "format", "contentEncoding", "contentMediaType", "$comment")
_URIS = ("$ref", "$dynamicRef", "$id", "$anchor", "$dynamicAnchor")
#: Keywords whose value the meta-schema constrains (others, like ``default``, take any JSON).
_CONSTRAINED = frozenset(
    (
        *_NUMBERS,
        *_COUNTS,
        *_BOOLS,
        *_STRINGS,
        *_URIS,
        "multipleOf",
        "pattern",
        "required",
        "dependentRequired",
        "enum",
        "examples",
        "$vocabulary",
    )
)
_ANCHOR = re.compile(r"^[A-Za-z_][-A-Za-z0-9._]*$")

Warn = Callable[[str, str], None]


def json_type(value: Any) -> str | None:
    """The JSON type ``value`` names (``"float"`` → ``"number"``), or None when it names none."""
    if not isinstance(value, str):
        return None
    return TYPE_ALIASES.get(value.strip().lower())


def type_list(node: dict[str, Any]) -> list[Any]:
    """The node's ``type`` as a list (``"object"`` → ``["object"]``, absent → ``[None]``)."""
    types = node.get("type")
    return list(types) if isinstance(types, list) else [types]


def path_text(path: tuple[str, ...]) -> str:
    """A JSON path for warnings: ``properties.query.type``, or ``(root)``."""
    return ".".join(path) or "(root)"


def repair_keywords(schema: Any, warn: Warn) -> dict[str, Any]:
    """A 2020-12-valid copy of ``schema`` (an object schema node at any position).

    Args:
        schema: any JSON value (the root or a subschema).
        warn: ``warn(path, message)`` called once per repair that changes meaning.

    Returns:
        A new dict; nested values are copies (the input is never mutated).
    """
    return _Walker(warn).schema(schema, (), 0, frozenset(), in_properties=False)


class _Walker:
    def __init__(self, warn: Warn) -> None:
        self.warn = warn

    def schema(
        self, node: Any, path: tuple[str, ...], depth: int, stack: frozenset[int], *, in_properties: bool
    ) -> dict[str, Any]:
        if node is True:
            return {}
        if node is False:
            return {"not": {}}
        if not isinstance(node, dict):
            return self._non_schema(node, path, in_properties)
        if depth > MAX_DEPTH or id(node) in stack:
            if not node:
                return {}  # already empty: nothing is lost (keeps projection idempotent)
            why = "cycle" if id(node) in stack else f"nesting deeper than {MAX_DEPTH} levels"
            self.warn(path_text(path), f"{why}: subschema replaced by {{}} (any value)")
            return {}
        stack = stack | {id(node)}
        out: dict[str, Any] = {}
        items = node.get("items")
        for key, value in node.items():
            if not isinstance(key, str):
                self.warn(path_text(path), f"non-string key {key!r} dropped")
                continue
            here = (*path, key)
            if key == "$schema":
                continue  # the result is Draft 2020-12 whatever it said
            if key == "type":
                fixed = self._type(value, here)
                if fixed is not None:
                    out[key] = fixed
            elif key == "items" and isinstance(value, list):
                out["prefixItems"] = [
                    self.schema(v, (*here, str(i)), depth + 1, stack, in_properties=False) for i, v in enumerate(value)
                ]
                extra = node.get("additionalItems")
                if extra is not None:
                    out["items"] = self.schema(extra, (*path, "additionalItems"), depth + 1, stack, in_properties=False)
            elif key == "additionalItems":
                if not isinstance(items, list):
                    continue  # without tuple items it never applied (2020-12 ignores it)
            elif key in SINGLE_KEYWORDS:
                fixed_single = self._single(key, value, here, depth, stack)
                if fixed_single is not None:
                    out[key] = fixed_single
            elif key in ARRAY_KEYWORDS:
                self._array(out, key, value, here, depth, stack)
            elif key in MAP_KEYWORDS:
                self._map(out, key, value, here, depth, stack)
            elif key == "dependencies":
                self._dependencies(out, value, here, depth, stack)
            else:
                self._scalar(out, node, key, value, here)
        self._fill_container(out)
        return out

    # -- subschemas -------------------------------------------------------------------------
    def _non_schema(self, node: Any, path: tuple[str, ...], in_properties: bool) -> dict[str, Any]:
        if isinstance(node, str):
            named = json_type(node)
            if named is not None:
                self.warn(path_text(path), f'bare string {node!r} read as {{"type": "{named}"}}')
                return self._filled({"type": named})
            if in_properties:
                self.warn(path_text(path), f"bare string {node[:40]!r} read as a description (any value)")
                return {"description": node}
        self.warn(path_text(path), f"{type(node).__name__} is not a schema: replaced by {{}} (any value)")
        return {}

    def _filled(self, schema: dict[str, Any]) -> dict[str, Any]:
        self._fill_container(schema)
        return schema

    @staticmethod
    def _fill_container(out: dict[str, Any]) -> None:
        names = type_list(out)
        if "object" in names and "properties" not in out:
            out["properties"] = {}
        if "array" in names and "items" not in out and "prefixItems" not in out:
            out["items"] = {}

    def _single(
        self, key: str, value: Any, path: tuple[str, ...], depth: int, stack: frozenset[int]
    ) -> dict[str, Any] | bool | None:
        if key == "additionalProperties":
            flag = _as_bool(value)
            if flag is not None:
                return flag  # booleans are the common spelling here; providers accept them
        if isinstance(value, dict | bool):
            return self.schema(value, path, depth + 1, stack, in_properties=False)
        self.warn(path_text(path), f"{_short(value)} is not a schema: keyword dropped")
        return None

    def _array(
        self, out: dict[str, Any], key: str, value: Any, path: tuple[str, ...], depth: int, stack: frozenset[int]
    ) -> None:
        if isinstance(value, dict):
            value = [value]
        if not isinstance(value, list) or not value:
            self.warn(path_text(path), f"{_short(value)} is not a non-empty list of schemas: keyword dropped")
            return
        out[key] = [self.schema(v, (*path, str(i)), depth + 1, stack, in_properties=False) for i, v in enumerate(value)]

    def _map(
        self, out: dict[str, Any], key: str, value: Any, path: tuple[str, ...], depth: int, stack: frozenset[int]
    ) -> None:
        if not isinstance(value, dict):
            self.warn(path_text(path), f"{_short(value)} is not an object of schemas: keyword dropped")
            return
        fixed: dict[str, Any] = {}
        for name, sub in value.items():
            if not isinstance(name, str):
                self.warn(path_text(path), f"non-string key {name!r} dropped")
                continue
            if key == "patternProperties" and not _is_regex(name):
                self.warn(path_text((*path, name)), "not a valid regular expression: pattern dropped")
                continue
            fixed[name] = self.schema(sub, (*path, name), depth + 1, stack, in_properties=key == "properties")
        out[key] = fixed

    def _dependencies(
        self, out: dict[str, Any], value: Any, path: tuple[str, ...], depth: int, stack: frozenset[int]
    ) -> None:
        if not isinstance(value, dict):
            self.warn(path_text(path), f"{_short(value)} is not an object: keyword dropped")
            return
        for name, dep in value.items():
            if isinstance(dep, list):
                names = _strings(dep)
                out.setdefault("dependentRequired", {})[str(name)] = names
            else:
                sub = self.schema(dep, (*path, str(name)), depth + 1, stack, in_properties=False)
                out.setdefault("dependentSchemas", {})[str(name)] = sub

    # -- scalar keywords --------------------------------------------------------------------
    def _type(self, value: Any, path: tuple[str, ...]) -> str | list[str] | None:
        values = value if isinstance(value, list) else [value]
        fixed: list[str] = []
        for v in values:
            named = json_type(v)
            if named is None:
                if not (isinstance(v, str) and v.strip().lower() == "any"):
                    self.warn(path_text(path), f"{_short(v)} is not a JSON type: dropped")
                continue
            if named != v:
                self.warn(path_text(path), f"{v!r} read as {named!r}")
            if named not in fixed:
                fixed.append(named)
        if not fixed:
            return None
        return fixed[0] if len(fixed) == 1 and not isinstance(value, list) else fixed

    def _scalar(self, out: dict[str, Any], node: dict[str, Any], key: str, value: Any, path: tuple[str, ...]) -> None:
        fixed: Any = value
        if key in ("exclusiveMinimum", "exclusiveMaximum") and isinstance(value, bool):
            bound = node.get("minimum" if key == "exclusiveMinimum" else "maximum")
            if value and _as_number(bound) is not None:
                out[key] = _as_number(bound)  # Draft 4: the bound itself is exclusive
                out.pop("minimum" if key == "exclusiveMinimum" else "maximum", None)
            return
        if key in ("minimum", "maximum") and node.get(f"exclusive{key.capitalize()}") is True:
            return  # moved into exclusive* above
        if key in _NUMBERS or key == "multipleOf":
            fixed = _as_number(value)
            if key == "multipleOf" and fixed is not None and fixed <= 0:
                fixed = None
        elif key in _COUNTS:
            number = _as_number(value)
            fixed = int(number) if number is not None and number >= 0 and number == int(number) else None
        elif key in _BOOLS:
            fixed = _as_bool(value)
        elif key in _STRINGS:
            fixed = value if isinstance(value, str) else None
        elif key == "pattern":
            fixed = value if isinstance(value, str) and _is_regex(value) else None
        elif key == "required":
            fixed = _strings(value if isinstance(value, list) else [value])
        elif key == "dependentRequired":
            fixed = (
                {str(k): _strings(v if isinstance(v, list) else [v]) for k, v in value.items()}
                if isinstance(value, dict)
                else None
            )
        elif key == "enum" or key == "examples":
            fixed = value if isinstance(value, list) else [value]
        elif key in _URIS:
            fixed = value if isinstance(value, str) else None
            if key in ("$anchor", "$dynamicAnchor") and fixed is not None and not _ANCHOR.match(fixed):
                fixed = None
        elif key == "$vocabulary":
            fixed = value if isinstance(value, dict) else None
        if fixed is None and key in _CONSTRAINED:
            self.warn(path_text(path), f"invalid value {_short(value)}: keyword dropped")
            return
        if fixed != value and key not in ("enum", "examples", "required"):
            self.warn(path_text(path), f"{_short(value)} read as {_short(fixed)}")
        elif fixed != value:
            self.warn(path_text(path), f"{_short(value)} repaired to {_short(fixed)}")
        out[key] = fixed


def _as_number(value: Any) -> float | int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value if value == value and abs(value) != float("inf") else None
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        if number != number or abs(number) == float("inf"):
            return None
        return int(number) if number.is_integer() and "." not in value and "e" not in value.lower() else number
    return None


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def _strings(values: list[Any]) -> list[str]:
    return list(dict.fromkeys(v for v in values if isinstance(v, str)))


def _is_regex(text: str) -> bool:
    try:
        re.compile(text)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
