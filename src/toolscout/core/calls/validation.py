"""Validate tool arguments against the tool's real ``inputSchema`` with ``jsonschema``.

The draft comes from the schema's ``$schema`` (default 2020-12, the draft MCP names for tool
schemas). ``$ref`` resolves inside the schema document only (``#/$defs/...``,
``#/definitions/...``); nothing is fetched. Recursive schemas are fine: references are resolved
lazily, per instance node. A schema that is itself invalid (or has a reference that cannot be
resolved) is reported as :class:`SchemaProblem` instead of raising, so one broken server cannot
stop a call: the server, which owns the schema, stays the judge of such arguments.

Error text is bounded, whatever the schema or the arguments: a value or list in a message shows
its first :data:`MAX_ITEMS` items and ``… and 4,995 more``, each error line is at most
:data:`MAX_LINE_CHARS`, and :func:`invalid_text` (the whole refusal, with a schema excerpt whose
long lists and texts are cut the same way) at most :data:`MAX_MESSAGE_CHARS`: one bad argument
to a tool with a 5,000-value enum is a short answer, not a context bomb.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..sanitize import cut

if TYPE_CHECKING:  # jsonschema takes ~0.3 s to import: loaded at the first validation, not at start-up
    from jsonschema.protocols import Validator

#: Most validation errors listed in one message.
MAX_ERRORS = 5
#: Longest schema text embedded in a message that gives a tool's definition (characters).
MAX_SCHEMA_CHARS = 6000
#: Items of a list (enum values, unexpected keys) or object shown in an error before "… and N more".
MAX_ITEMS = 5
#: Longest single value shown in an error, and longest item of a list shown (characters).
MAX_VALUE_CHARS = 60
MAX_ITEM_CHARS = 40
#: Longest error line (path and reason) and longest path in it (characters).
MAX_LINE_CHARS = 500
MAX_PATH_CHARS = 120
#: Longest schema excerpt in an invalid-parameters refusal, and longest refusal (characters).
MAX_EXCERPT_CHARS = 1200
MAX_MESSAGE_CHARS = 2000


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
    lines = [cut(f"- {cut(_path(e), MAX_PATH_CHARS, middle=True)}: {_message(e)}", MAX_LINE_CHARS) for e in ordered]
    if len(errors) > MAX_ERRORS:
        lines.append(f"- … and {len(errors) - MAX_ERRORS:,} more")
    return Invalid("\n".join(lines))


def invalid_text(tool: str, schema: Any, detail: str) -> str:
    """The whole invalid-parameters refusal for ``tool``: ``detail`` (an :class:`Invalid`
    message, or why the arguments are not an object) and an excerpt of ``schema`` (long lists
    and texts cut), at most :data:`MAX_MESSAGE_CHARS` characters."""
    sep = "\n" if detail.startswith("- ") else " "  # a list of errors, or one reason
    head = cut(f"Invalid parameters for {tool}:{sep}{detail}", MAX_MESSAGE_CHARS - 200)
    label = f"\n\nInput schema of {tool} (excerpt):\n"
    room = min(MAX_EXCERPT_CHARS, MAX_MESSAGE_CHARS - len(head) - len(label))
    excerpt = json.dumps(_shrink(schema), indent=2, ensure_ascii=False, default=str)
    return cut(head + label + cut(excerpt, max(room, 0)), MAX_MESSAGE_CHARS)


def _message(error: Any) -> str:
    """jsonschema's message with the long reprs in it (the value checked, the enum) shortened."""
    message = str(error.message)
    for value in (error.instance, error.validator_value):
        full = repr(value)
        if len(full) > MAX_VALUE_CHARS:
            message = message.replace(full, _short(value), 1)
    return message


def _short(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """A repr of ``value`` of at most about ``limit`` characters; a list or object shows its
    first :data:`MAX_ITEMS` items (each at most :data:`MAX_ITEM_CHARS`) and ``… and N more``."""
    if isinstance(value, list | tuple | dict):
        if isinstance(value, dict):
            items = [
                f"{_short(k, MAX_ITEM_CHARS)}: {_short(v, MAX_ITEM_CHARS)}" for k, v in list(value.items())[:MAX_ITEMS]
            ]
        else:
            items = [_short(v, MAX_ITEM_CHARS) for v in value[:MAX_ITEMS]]
        more = len(value) - MAX_ITEMS
        shown = [*items, *([f"… and {more:,} more"] if more > 0 else [])]
        return ("{%s}" if isinstance(value, dict) else "[%s]") % ", ".join(shown)
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}… ({len(value):,} characters)"
    return cut(repr(value), limit)


def _shrink(value: Any, depth: int = 0) -> Any:
    """``value`` (a schema) with lists and objects cut to :data:`MAX_ITEMS` entries plus an
    ``"… and N more"`` marker (objects to 4× as many keys), texts to 200 characters, and
    nesting to 12 levels."""
    if depth > 12:
        return "…"
    if isinstance(value, dict):
        keep = MAX_ITEMS * 4
        out = {str(k): _shrink(v, depth + 1) for k, v in list(value.items())[:keep]}
        if len(value) > keep:
            out["…"] = f"and {len(value) - keep:,} more keys"
        return out
    if isinstance(value, list):
        more = [f"… and {len(value) - MAX_ITEMS:,} more"] if len(value) > MAX_ITEMS else []
        return [_shrink(v, depth + 1) for v in value[:MAX_ITEMS]] + more
    if isinstance(value, str) and len(value) > 200:
        return value[:200] + "…"
    return value


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
        message = cut(_message(error), MAX_LINE_CHARS)
        problems.append(
            (name, f"{message} (at {cut(name + below, MAX_PATH_CHARS, middle=True)})" if below else message)
        )
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
