"""Projection of an MCP ``inputSchema`` into a schema every provider accepts as tool parameters.

One step, run at catalog time (:meth:`toolscout.core.catalog.registry.ToolCatalog.set_server_tools`), so
the schema the model reads in a ToolSearch answer, the one the stub strategy's gate delivers,
the one sent in a tools array and the one arguments are validated against are the same object.

Rules (sources: the Anthropic Messages API, which checks ``input_schema`` against JSON Schema
2020-12 and rejects a root that is not ``type: object`` or that has ``oneOf``/``allOf``/``anyOf``
at the top level; the OpenAI API, which rejects non-object ``parameters``, "object schema
missing properties" and "array schema missing items"):

1. every keyword value is made 2020-12-valid (:mod:`.keywords`);
2. every reference becomes a root-relative pointer that resolves; unresolvable ones are removed
   (:mod:`.refs`);
3. a root ``$ref`` to an object schema is inlined (once, following chains without looping);
4. a root that is an object schema (or says nothing of its type) becomes ``type: object`` with
   ``properties``; top-level ``allOf``/``anyOf``/``oneOf`` are kept *exactly* as a double
   negation (``not: {not: {anyOf: [...]}}``, not being allowed at the top level) and the
   properties their branches declare are listed at the root so the model sees them;
5. any other root (``{"type": "number"}``, a union with non-object branches, an ``enum``) is
   wrapped: ``{"type": "object", "properties": {"value": <schema>}, "required": ["value"]}``,
   with root ``$defs`` hoisted and references rebased; :func:`unwrap_arguments` undoes it
   before the call.

Every repair adds a warning ``"<json path>: <what was done>"``. Projection is idempotent: a
projected schema projects to itself with no warnings.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .keywords import repair_keywords, type_list
from .refs import Path, localize_refs, node_at, parse_pointer, pointer, schema_nodes

#: Name of the single property a wrapped (non-object) root lives under.
WRAP_KEY = "value"
_COMBINATORS = ("allOf", "anyOf", "oneOf")
_OBJECT_WORDS = (
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "dependentRequired",
)


@dataclass(frozen=True)
class ProjectedSchema:
    """The result of :func:`project`.

    Attributes:
        schema: the provider-valid parameters schema (a fresh dict, never the input).
        warnings: one line per repair, ``"<json path>: <what was done>"``.
        wrapped: True when arguments travel as ``{"value": X}`` and X is what the tool gets.
    """

    schema: dict[str, Any]
    warnings: tuple[str, ...] = ()
    wrapped: bool = False


def project(schema: Any) -> ProjectedSchema:
    """Project any ``inputSchema`` value (see the module docstring for the rules). Never raises."""
    warnings: list[str] = []

    def warn(path: str, message: str) -> None:
        warnings.append(f"{path}: {message}")

    try:
        out = localize_refs(repair_keywords(schema, warn), warn)
        out = _inline_root_ref(out, warn)
        wrapped = not _objectify_root(out, warn)
        if wrapped:
            kind = _describe(out)
            out = _wrap(out)
            warn(
                "(root)",
                f'{kind} is not an object: arguments are wrapped as {{"{WRAP_KEY}": ...}} '
                "for the model and unwrapped before the call",
            )
    except RecursionError:  # cannot happen with MAX_DEPTH, but a schema must never stop a catalog
        warnings.append("(root): schema too deeply nested: replaced by an empty object schema")
        out, wrapped = {"type": "object", "properties": {}}, False
    return ProjectedSchema(out, tuple(warnings), wrapped)


def project_input_schema(
    schema: Any, provider: str = "anthropic", *, strict: bool = False
) -> tuple[dict[str, Any], list[str]]:
    """The parameters schema ``provider`` accepts for an MCP ``inputSchema``, with one warning per
    repair. The public entry point for callers outside the catalog (e.g. a gateway).

    Args:
        schema: any JSON value a server sent as ``inputSchema``.
        provider: ``anthropic`` (``input_schema``) or ``openai`` (``parameters``); both accept
            the same base projection.
        strict: OpenAI strict mode (``"strict": true`` function tools): also apply
            :func:`~.strict.strict_schema`; when the schema cannot be made strict without
            changing what it accepts, the base projection is returned and a warning says the
            tool must be sent without ``strict``.

    Returns:
        ``(schema, warnings)``; if the result is wrapped, arguments must go through
        :func:`unwrap_arguments` (use :func:`project` to learn whether it is).
    """
    projected = project(schema)
    warnings = list(projected.warnings)
    if provider == "openai" and strict:
        from .strict import strict_schema

        strict_view = strict_schema(projected.schema)
        warnings.extend(strict_view.warnings)
        if strict_view.schema is not None:
            return strict_view.schema, warnings
    return projected.schema, warnings


def unwrap_arguments(arguments: Any, wrapped: bool) -> Any:
    """The arguments the tool itself receives: ``arguments["value"]`` for a wrapped schema."""
    if wrapped and isinstance(arguments, dict):
        return arguments.get(WRAP_KEY)
    return arguments


def provider_problems(schema: Any, provider: str = "anthropic") -> list[str]:
    """What ``provider`` would reject in a parameters schema (empty when it is acceptable).

    Checks the documented/observed rules on top of the 2020-12 meta-schema: an object root,
    no top-level ``allOf``/``anyOf``/``oneOf`` (Anthropic), every object with ``properties`` and
    every array with ``items`` (OpenAI), every local reference resolvable.
    """
    problems: list[str] = []
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return ['root is not {"type": "object"}']
    if provider == "anthropic":
        problems += [f"top-level {k}" for k in _COMBINATORS if k in schema]
    for path, node in schema_nodes(schema):
        where = pointer(path)
        types = type_list(node)
        if provider == "openai" and "object" in types and not isinstance(node.get("properties"), dict):
            problems.append(f"{where}: object schema missing properties")
        if provider == "openai" and "array" in types and "items" not in node and "prefixItems" not in node:
            problems.append(f"{where}: array schema missing items")
        ref = node.get("$ref")
        if ref is not None:
            keys = parse_pointer(ref) if isinstance(ref, str) else None
            if keys is None or node_at(schema, keys) is None:
                problems.append(f"{where}: $ref {ref!r} does not resolve")
    return problems


# -- root shaping ---------------------------------------------------------------------------
def _is_objectish(node: Any) -> bool:
    if not isinstance(node, dict):
        return False
    types = node.get("type")
    if types is not None:
        return types == "object" or (isinstance(types, list) and "object" in types)
    return any(k in node for k in _OBJECT_WORDS)


def _inline_root_ref(schema: dict[str, Any], warn: Callable[[str, str], None]) -> dict[str, Any]:
    seen: set[str] = set()
    while isinstance(schema.get("$ref"), str) and schema["$ref"] not in seen:
        ref = schema["$ref"]
        seen.add(ref)
        keys = parse_pointer(ref)
        target = node_at(schema, keys) if keys else None
        if not isinstance(target, dict) or not (_is_objectish(target) or "$ref" in target):
            break
        merged = {k: v for k, v in schema.items() if k != "$ref"}
        for key, value in target.items():
            merged.setdefault(key, copy.deepcopy(value))
        if "$ref" in target:
            merged["$ref"] = target["$ref"]
        schema = merged
        warn("(root)", f"root $ref {ref!r} inlined (a root reference hides the object from providers)")
    return schema


def _objectify_root(schema: dict[str, Any], warn: Callable[[str, str], None]) -> bool:
    """Make ``schema`` a provider-valid object root in place; False when it must be wrapped."""
    types = schema.get("type")
    branches = [b for k in _COMBINATORS for b in schema.get(k, [])]
    if types is None:
        if "$ref" in schema or "enum" in schema or "const" in schema:
            return False
        if branches and not all(_is_objectish(b) for b in branches) and not _is_objectish(schema):
            return False
        if any(k in schema for k in _OBJECT_WORDS) or branches:
            warn("(root).type", 'missing: "object" assumed')
        else:
            warn("(root)", 'accepts any value; MCP arguments are an object: type "object" assumed')
        schema["type"] = "object"
        schema.setdefault("properties", {})
    elif isinstance(types, list):
        if "object" not in types:
            return False
        if types != ["object"]:
            warn("(root).type", f'{types!r}: MCP arguments are an object, so "object" kept')
        schema["type"] = "object"
    elif types != "object":
        return False
    if "$ref" in schema:  # a root ref that could not be inlined, beside object keywords
        return False
    if "properties" not in schema:
        warn("(root)", 'object schema without properties: "properties": {} added')
        schema["properties"] = {}
    _lift_combinators(schema, warn)
    return True


def _lift_combinators(schema: dict[str, Any], warn: Callable[[str, str], None]) -> None:
    """Top-level allOf/anyOf/oneOf → an equivalent root ``not`` (in place).

    ``C`` holds iff ``not(not C)``; with an existing root ``not: A`` and constraints C1, C2 the
    root becomes ``not: {anyOf: [A, {not: C1}, {not: C2}]}`` (not(A or ¬C1 or ¬C2)). References
    into the moved subtrees are rebased.
    """
    keys = [k for k in _COMBINATORS if k in schema]
    if not keys:
        return
    closed = schema.get("additionalProperties") is False
    parts: list[dict[str, Any]] = []
    moves: dict[str, Path] = {}
    if "not" in schema:
        parts.append(schema.pop("not"))
        moves["not"] = ("not", "anyOf", "0")
    for key in keys:
        branches = schema.pop(key)
        for branch in branches:
            for name, sub in (branch.get("properties") or {}).items() if not closed else ():
                schema["properties"].setdefault(name, copy.deepcopy(sub))
            if key == "allOf" and branch.get("required"):
                schema["required"] = list(dict.fromkeys([*schema.get("required", []), *branch["required"]]))
        moves[key] = ("not", "anyOf", str(len(parts)), "not", key)
        parts.append({"not": {key: branches}})
        warn(
            f"(root).{key}",
            "top-level combinators are rejected by Anthropic: kept as an equivalent root "
            '"not" (not-not); the properties its branches declare are listed at the root',
        )
    if len(parts) == 1:
        schema["not"] = parts[0]
        moves = {k: ("not", "not", k) for k in moves}
    else:
        schema["not"] = {"anyOf": parts}
    for _path, node in schema_nodes(schema):
        ref = parse_pointer(node["$ref"]) if isinstance(node.get("$ref"), str) else None
        if ref and ref[0] in moves:
            node["$ref"] = pointer((*moves[ref[0]], *ref[1:]))


def _describe(schema: dict[str, Any]) -> str:
    if "type" in schema:
        return f"root type {schema['type']!r}"
    for key in ("$ref", "enum", "const", *_COMBINATORS):
        if key in schema:
            return f"root {key}"
    return "root"


def _wrap(inner: dict[str, Any]) -> dict[str, Any]:
    defs: dict[str, Any] = {k: inner.pop(k) for k in ("$defs", "definitions") if k in inner}
    wrapper: dict[str, Any] = {"type": "object", "properties": {WRAP_KEY: inner}, "required": [WRAP_KEY], **defs}
    for _path, node in schema_nodes(wrapper):
        keys = parse_pointer(node["$ref"]) if isinstance(node.get("$ref"), str) else None
        if keys is not None and keys[:1] not in (("$defs",), ("definitions",)):
            node["$ref"] = pointer(("properties", WRAP_KEY, *keys))
    return wrapper
