"""``$ref`` handling for the projection: every reference made a root-relative JSON pointer.

A schema may reach a subschema through ``$id`` base URIs (nested resources), ``$anchor`` names,
``$dynamicRef`` or plain JSON pointers (RFC 6901, in URI fragments per JSON Schema 2020-12
§8.2). Providers and validators only need the last kind, and the projection moves subtrees
(wrapping a non-object root under ``properties.value``), so :func:`localize_refs` rewrites every
reference into ``#/a/b`` form relative to the document root and removes the ``$id`` /
``$anchor`` / ``$dynamicAnchor`` markers that would otherwise change how such a pointer
resolves. References are rewritten, never inlined, so recursive schemas stay finite and
nothing loops. A reference that does not resolve inside the document (a remote URL, a missing
``$defs`` entry) is removed, with a warning: nothing is ever fetched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from .keywords import ARRAY_KEYWORDS, MAP_KEYWORDS, SINGLE_KEYWORDS, path_text

_ROOT_URI = "urn:toolscout:schema"
_MARKERS = ("$id", "$anchor", "$dynamicAnchor")

Path = tuple[str, ...]


def pointer(path: Path) -> str:
    """``#/a/b`` for a path of keys (RFC 6901 escaping of ``~`` and ``/``)."""
    return "#" + "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in path)


def parse_pointer(text: str) -> Path | None:
    """The keys of a root-relative ``#/a/b`` pointer, or None for other references."""
    if text == "#":
        return ()
    if not text.startswith("#/"):
        return None
    return tuple(unquote(p).replace("~1", "/").replace("~0", "~") for p in text[2:].split("/"))


def node_at(schema: Any, path: Path) -> Any:
    """The value at ``path`` inside ``schema`` (lists indexed by decimal keys), or None."""
    node = schema
    for key in path:
        if isinstance(node, dict):
            node = node.get(key)
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node


def schema_nodes(schema: dict[str, Any], path: Path = ()) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every subschema (a dict in a schema position) with its path, parents first.

    Descends only through applicator keywords (``properties``, ``items``, ``anyOf`` ...), so data
    such as ``const``/``default`` values and unknown keywords are never mistaken for schemas.
    Iterative: no recursion limit.
    """
    todo: list[tuple[Path, dict[str, Any]]] = [(path, schema)]
    while todo:
        here, node = todo.pop()
        yield here, node
        children: list[tuple[Path, dict[str, Any]]] = []
        for key, value in node.items():
            if key in SINGLE_KEYWORDS and isinstance(value, dict):
                children.append(((*here, key), value))
            elif key in ARRAY_KEYWORDS and isinstance(value, list):
                children.extend(((*here, key, str(i)), v) for i, v in enumerate(value) if isinstance(v, dict))
            elif key in MAP_KEYWORDS and isinstance(value, dict):
                children.extend(((*here, key, k), v) for k, v in value.items() if isinstance(v, dict))
        todo.extend(reversed(children))


def localize_refs(schema: dict[str, Any], warn: Callable[[str, str], None]) -> dict[str, Any]:
    """Rewrite every ``$ref``/``$dynamicRef`` of ``schema`` (mutated in place, and returned) to a
    root-relative pointer, drop unresolvable ones, and remove ``$id``/``$anchor`` markers.

    Args:
        schema: a schema produced by :func:`~.keywords.repair_keywords` (a fresh tree).
        warn: ``warn(path, message)`` for each reference removed.
    """
    bases: dict[Path, str] = {}
    resources: dict[str, Path] = {}
    anchors: dict[tuple[str, str], Path] = {}
    for path, node in schema_nodes(schema):
        parent = next((bases[path[:i]] for i in range(len(path), -1, -1) if path[:i] in bases), _ROOT_URI)
        base = parent
        ident = node.get("$id")
        if isinstance(ident, str):
            base = urldefrag(urljoin(parent, ident))[0] or parent
            resources.setdefault(base, path)
        bases[path] = base
        for marker in ("$anchor", "$dynamicAnchor"):
            if isinstance(node.get(marker), str):
                anchors.setdefault((base, node[marker]), path)
    resources.setdefault(_ROOT_URI, ())
    root_base = bases.get((), _ROOT_URI)
    resources.setdefault(root_base, ())
    for path, node in list(schema_nodes(schema)):
        for key in ("$ref", "$dynamicRef"):
            ref = node.get(key)
            if not isinstance(ref, str):
                continue
            del node[key]
            target = _resolve(ref, bases.get(path, _ROOT_URI), resources, anchors)
            if target is None or node_at(schema, target) is None:
                warn(
                    path_text((*path, key)),
                    f"reference {ref[:80]!r} does not resolve inside the schema: removed (nothing is fetched)",
                )
                continue
            node["$ref"] = pointer(target)
    for _path, node in schema_nodes(schema):
        for marker in _MARKERS:
            node.pop(marker, None)
    return schema


def _resolve(ref: str, base: str, resources: dict[str, Path], anchors: dict[tuple[str, str], Path]) -> Path | None:
    uri, fragment = urldefrag(urljoin(base, ref))
    resource = resources.get(uri or base)
    if resource is None:
        return None
    if not fragment:
        return resource
    keys = parse_pointer("#" + fragment)
    if keys is not None:
        return (*resource, *keys)
    return anchors.get((uri or base, unquote(fragment)))
