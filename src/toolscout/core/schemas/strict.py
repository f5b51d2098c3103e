"""OpenAI strict mode (``"strict": true`` function tools): the subset of JSON Schema it allows.

Rules from OpenAI's Structured Outputs "Supported schemas": the root is an object (not
``anyOf``); every object has ``additionalProperties: false`` and lists *every* property in
``required`` (an optional property is emulated by allowing ``null``); composition is ``anyOf``
only; supported keywords are ``type``, ``properties``, ``required``, ``additionalProperties``,
``items``, ``anyOf``, ``enum``, ``const``, ``$ref``/``$defs``, ``description``, ``title``,
``pattern``, ``format`` (a fixed list), ``multipleOf``/``minimum``/``maximum`` (and exclusive
forms), ``minItems``/``maxItems``; at most :data:`MAX_NESTING` levels and :data:`MAX_PROPERTIES`
properties.

:func:`strict_schema` turns a base projection (:func:`~.project.project`) into that subset. A
keyword strict mode does not know is dropped with a warning (arguments are still validated
against the base schema before the call). A schema that cannot be strict without changing what
it accepts (an open object: free-form keys) gets ``schema=None``: send that tool without
``strict``. :func:`restore_optional` removes the ``null`` values the model sent for properties
that were optional before the call.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from .keywords import path_text, type_list
from .refs import node_at, parse_pointer, schema_nodes

MAX_NESTING = 10
MAX_PROPERTIES = 5000
FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
_ALLOWED = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "enum",
        "const",
        "$ref",
        "$defs",
        "definitions",
        "description",
        "title",
        "pattern",
        "format",
        "multipleOf",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
    }
)


@dataclass(frozen=True)
class StrictView:
    """Result of :func:`strict_schema`: the strict schema (None: send the tool non-strict) and
    one warning per change."""

    schema: dict[str, Any] | None
    warnings: tuple[str, ...] = ()


class _NotStrict(Exception):
    pass


def strict_schema(base: dict[str, Any]) -> StrictView:
    """The OpenAI-strict form of a projected schema (see the module docstring). Never raises."""
    warnings: list[str] = []
    counter = [0]
    try:
        out = _node(copy.deepcopy(base), (), 0, warnings, counter)
        if "anyOf" in out or out.get("type") != "object":
            raise _NotStrict("(root): strict mode needs an object root without anyOf")
    except _NotStrict as exc:
        return StrictView(None, (f"{exc}: sent without strict",))
    return StrictView(out, tuple(warnings))


def _node(
    node: dict[str, Any], path: tuple[str, ...], depth: int, warnings: list[str], counter: list[int]
) -> dict[str, Any]:
    if depth > MAX_NESTING:
        raise _NotStrict(f"{path_text(path)}: nested deeper than {MAX_NESTING} levels")
    if "oneOf" in node:
        node["anyOf"] = [*node.get("anyOf", []), *node.pop("oneOf")]
        warnings.append(f"{path_text(path)}.oneOf: strict mode has no oneOf: read as anyOf (validated as oneOf)")
    for key in [k for k in node if k not in _ALLOWED]:
        del node[key]
        warnings.append(
            f"{path_text((*path, key))}: not supported in strict mode: dropped from the model's view (still validated)"
        )
    if "format" in node and node["format"] not in FORMATS:
        warnings.append(f"{path_text((*path, 'format'))}: format {node.pop('format')!r} not supported in strict mode")
    for key in ("$defs", "definitions"):
        for name, sub in (node.get(key) or {}).items():
            node[key][name] = _node(sub, (*path, key, name), depth, warnings, counter)
    if "items" in node:
        node["items"] = _node(node["items"], (*path, "items"), depth + 1, warnings, counter)
    if "anyOf" in node:
        node["anyOf"] = [
            _node(b, (*path, "anyOf", str(i)), depth, warnings, counter) for i, b in enumerate(node["anyOf"])
        ]
    if not any(k in node for k in ("type", "anyOf", "$ref", "enum", "const")):
        raise _NotStrict(f"{path_text(path)}: a schema that accepts any value cannot be strict")
    types = type_list(node)
    if "object" in types or "properties" in node:
        _object(node, path, depth, warnings, counter)
    return node


def _object(node: dict[str, Any], path: tuple[str, ...], depth: int, warnings: list[str], counter: list[int]) -> None:
    props = node.get("properties") or {}
    extra = node.get("additionalProperties", True)
    if not props and extra is not False:
        raise _NotStrict(f"{path_text(path)}: an object with free-form keys cannot be strict")
    if extra not in (False, None) and extra != {"not": {}}:
        warnings.append(f"{path_text(path)}: additional properties are not allowed in strict mode")
    node["additionalProperties"] = False
    counter[0] += len(props)
    if counter[0] > MAX_PROPERTIES:
        raise _NotStrict(f"{path_text(path)}: more than {MAX_PROPERTIES} properties")
    required = set(node.get("required") or [])
    for name, sub in list(props.items()):
        child = _node(sub, (*path, "properties", name), depth + 1, warnings, counter)
        props[name] = child if name in required else _nullable(child)
    node["properties"] = props
    node["required"] = list(props)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    types = schema.get("type")
    if isinstance(types, str) and "enum" not in schema and "const" not in schema:
        return {**schema, "type": [types, "null"]}
    if isinstance(types, list) and "enum" not in schema and "const" not in schema:
        return schema if "null" in types else {**schema, "type": [*types, "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def strict_problems(schema: Any) -> list[str]:
    """What OpenAI strict mode would reject in ``schema`` (empty when it is acceptable): a root
    that is not an object or is ``anyOf``, unsupported keywords, objects without
    ``additionalProperties: false`` or with optional properties."""
    if not isinstance(schema, dict) or schema.get("type") != "object" or "anyOf" in schema:
        return ["root is not an object without anyOf"]
    problems: list[str] = []
    for path, node in schema_nodes(schema):
        where = path_text(path)
        problems += [f"{where}: {k} not supported" for k in node if k not in _ALLOWED]
        types = type_list(node)
        if "object" in types:
            if node.get("additionalProperties") is not False:
                problems.append(f"{where}: additionalProperties is not false")
            if sorted(node.get("required", [])) != sorted(node.get("properties", {})):
                problems.append(f"{where}: not every property is required")
    return problems


_cache: dict[str, dict[str, Any] | None] = {}


def cached_strict_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """:func:`strict_schema` ``.schema`` memoised by content (tools arrays repeat every turn)."""
    key = json.dumps(schema, sort_keys=True, default=str)
    if key not in _cache:
        if len(_cache) > 4096:
            _cache.clear()
        _cache[key] = strict_schema(schema).schema
    return _cache[key]


def restore_strict_arguments(name: str, arguments: dict[str, Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """For a tool sent strict (one of ``tools``, Anthropic-style definitions): ``arguments``
    through :func:`restore_optional`; otherwise unchanged."""
    for tool in tools:
        schema = tool.get("input_schema")
        if tool.get("name") == name and isinstance(schema, dict) and cached_strict_schema(schema) is not None:
            restored = restore_optional(arguments, schema)
            return restored if isinstance(restored, dict) else arguments
    return arguments


def restore_optional(arguments: Any, base: dict[str, Any]) -> Any:
    """``arguments`` without the ``null`` values strict mode made the model send for properties
    that were optional and do not accept ``null`` in ``base`` (nested objects too)."""
    return _restore(arguments, base, base, 0)


def _restore(value: Any, schema: Any, root: dict[str, Any], depth: int) -> Any:
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and seen < 32:
        keys = parse_pointer(schema["$ref"])
        schema = node_at(root, keys) if keys is not None else None
        seen += 1
    if not isinstance(schema, dict) or depth > 64:
        return value
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        required = set(schema.get("required") or [])
        out = {}
        for key, item in value.items():
            sub = schema["properties"].get(key)
            if item is None and key not in required and not _accepts_null(sub, root):
                continue
            out[key] = _restore(item, sub, root, depth + 1)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_restore(v, schema["items"], root, depth + 1) for v in value]
    return value


def _accepts_null(schema: Any, root: dict[str, Any]) -> bool:
    if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        keys = parse_pointer(schema["$ref"])
        schema = node_at(root, keys) if keys is not None else None
    if not isinstance(schema, dict):
        return True
    types = schema.get("type")
    if types is None:
        return not schema.get("enum") or None in schema["enum"]
    return types == "null" or (isinstance(types, list) and "null" in types)
