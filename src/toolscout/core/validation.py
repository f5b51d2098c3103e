"""Validate tool arguments against the tool's real ``inputSchema`` with ``jsonschema``.

The draft comes from the schema's ``$schema`` (default 2020-12, the draft MCP names for tool
schemas). ``$ref`` resolves inside the schema document only (``#/$defs/...``,
``#/definitions/...``); nothing is fetched. Recursive schemas are fine: references are resolved
lazily, per instance node. A schema that is itself invalid (or has a reference that cannot be
resolved) is reported as :class:`SchemaProblem` instead of raising, so one broken server cannot
stop a call: the server, which owns the schema, stays the judge of such arguments.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # jsonschema takes ~0.3 s to import: loaded at the first validation, not at start-up
    from jsonschema.protocols import Validator

#: Most validation errors listed in one message.
MAX_ERRORS = 5
#: Longest schema text embedded in an error message (characters).
MAX_SCHEMA_CHARS = 6000


@dataclass(frozen=True)
class SchemaProblem:
    """The schema could not be used for validation; ``message`` says why."""

    message: str


@dataclass(frozen=True)
class Invalid:
    """The arguments do not match; ``message`` lists the errors (path: message)."""

    message: str


_cache: dict[int, tuple[dict[str, Any], Validator | SchemaProblem]] = {}


def _compile(schema: Any) -> Validator | SchemaProblem:
    cached = _cache.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    from jsonschema import Draft202012Validator, SchemaError
    from jsonschema.validators import validator_for
    from referencing import Registry

    result: Validator | SchemaProblem
    if not isinstance(schema, dict):
        result = SchemaProblem(f"inputSchema is a {type(schema).__name__}, not an object")
    else:
        cls = validator_for(schema, default=Draft202012Validator)
        try:
            cls.check_schema(schema)
            result = cls(schema, registry=Registry())
        except SchemaError as exc:
            where = "/".join(str(p) for p in exc.path) or "(root)"
            result = SchemaProblem(f"inputSchema is not a valid JSON Schema at {where}: {exc.message}")
        except Exception as exc:  # e.g. non-string keys, exotic metaschemas
            result = SchemaProblem(f"inputSchema cannot be compiled: {exc}")
    if len(_cache) > 4096:
        _cache.clear()
    _cache[id(schema)] = (schema, result)
    return result


def validate_params(schema: Any, params: Any) -> Invalid | SchemaProblem | None:
    """Check ``params`` against ``schema``; None when they are valid.

    Never raises: a broken schema (invalid, or with a ``$ref`` that does not resolve inside the
    document) returns :class:`SchemaProblem`.
    """
    from jsonschema.exceptions import best_match
    from referencing.exceptions import Unresolvable

    validator = _compile(schema)
    if isinstance(validator, SchemaProblem):
        return validator
    try:
        errors = list(validator.iter_errors(params))
        if not errors:
            return None
        first = best_match(errors)
    except Unresolvable as exc:
        return SchemaProblem(f"inputSchema has a $ref that does not resolve inside the schema: {exc}")
    except RecursionError:
        return SchemaProblem("inputSchema recurses without consuming input (a $ref cycle)")
    ordered = [first, *[e for e in errors if e is not first]][:MAX_ERRORS]
    lines = [f"- {_path(e)}: {e.message}" for e in ordered]
    if len(errors) > MAX_ERRORS:
        lines.append(f"- ... and {len(errors) - MAX_ERRORS} more")
    return Invalid("\n".join(lines))


def field_problems(schema: Any, arguments: dict[str, Any]) -> list[tuple[str, str]]:
    """The argument form's reading of :func:`validate_params`: the same compiled validator as
    ``ExecuteTool``, so the form never accepts what the executor refuses (or the reverse).

    Returns:
        ``[(top-level property or "", message)]`` sorted by path, empty when valid; a problem
        below the property ends ``(at obj.x[0])``. A schema the
        executor cannot use (it then sends the arguments unchecked) gives one entry ``("",
        "the tool's input schema ...; arguments not checked")``, which need not stop a run.
    """
    from referencing.exceptions import Unresolvable

    validator = _compile(schema)
    if isinstance(validator, SchemaProblem):
        return [("", f"the tool's input schema is invalid ({validator.message}); arguments not checked")]
    try:
        errors = sorted(validator.iter_errors(arguments), key=lambda e: [str(p) for p in e.path])
    except (Unresolvable, RecursionError) as exc:
        return [("", f"the tool's input schema cannot be used ({type(exc).__name__}); arguments not checked")]
    problems: list[tuple[str, str]] = []
    for error in errors:
        path = [str(p) for p in error.path]
        name = path[0] if path else ""
        if not name and error.validator == "required" and isinstance(error.validator_value, list):
            # one error per missing property; its message names it ("'tags' is a required property")
            named = [r for r in error.validator_value if isinstance(r, str) and error.message.startswith(repr(r))]
            name = named[0] if named else ""
        below = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in list(error.path)[1:])
        problems.append((name, f"{error.message} (at {name}{below})" if below else error.message))
    return problems


def _path(error: Any) -> str:
    parts = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"params{parts}" if parts else "params"


def schema_text(schema: Any) -> str:
    """The schema as indented JSON, cut at :data:`MAX_SCHEMA_CHARS` characters."""
    text = json.dumps(schema, indent=2, ensure_ascii=False, default=str)
    if len(text) > MAX_SCHEMA_CHARS:
        text = text[:MAX_SCHEMA_CHARS] + f"\n... ({len(text) - MAX_SCHEMA_CHARS} more characters)"
    return text
