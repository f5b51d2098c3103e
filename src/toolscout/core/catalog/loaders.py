"""Load tool catalogs from files: JSONL, ``tools/list`` dumps, and directories of either.

Formats (see README):

1. JSONL, one tool per line: ``{"name", "description", "input_schema" | "inputSchema",
   "server"?, "search_hint"?}``. ``name`` may be ``server::tool`` (livemcpbench); the tool's
   identity for evaluation is ``name`` exactly as written.
2. A JSON ``tools/list`` dump: ``{"server": NAME, "instructions"?: ..., "tools": [...]}``.
3. A directory: every ``*.json`` / ``*.jsonl`` file in it (sorted), non-catalog JSON skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..models import ToolSpec
from ..safe_read import MAX_LARGE_BYTES, SafeReadError, parse_json, read_text


class CatalogFileError(ValueError):
    """A catalog file that cannot be read; the message names the file and line."""


class NotACatalog(CatalogFileError):
    """Valid JSON that is not a ``tools/list`` dump (skipped silently inside a directory)."""


@dataclass
class LoadedServer:
    """The tools of one server (or of the built-in group when ``name`` is None) from a file."""

    name: str | None
    tools: list[ToolSpec] = field(default_factory=list)
    instructions: str | None = None
    description: str | None = None


@dataclass
class LoadedCatalog:
    """Everything read from one path: servers in file order, plus per-file warnings."""

    servers: list[LoadedServer] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def tool_count(self) -> int:
        """Total tools over all servers."""
        return sum(len(s.tools) for s in self.servers)


def _schema_of(raw: dict[str, Any]) -> dict[str, Any]:
    schema = raw.get("inputSchema", raw.get("input_schema"))
    return schema if isinstance(schema, dict) else {"type": "object", "properties": {}}


def tool_from_dict(raw: dict[str, Any], server: str | None = None) -> ToolSpec:
    """Build a :class:`ToolSpec` from a ``tools/list`` entry or a JSONL line.

    The canonical MCP name is assigned later by the catalog; here ``name`` is the original name.

    An empty name is kept (the catalog shows it as ``unnamed_<hex>``, as for a server's listing).

    Raises:
        CatalogFileError: when ``name`` is missing or not a string.
    """
    name = raw.get("name")
    if not isinstance(name, str):
        raise CatalogFileError("tool entry has no string 'name'")
    description = raw.get("description")
    hint = raw.get("search_hint", raw.get("searchHint"))
    annotations = raw.get("annotations")
    return ToolSpec(
        name=name,
        original_name=tool_name if isinstance(tool_name := raw.get("tool_name"), str) else name,
        description=description if isinstance(description, str) else "",
        input_schema=_schema_of(raw),
        server=server,
        search_hint=hint if isinstance(hint, str) else None,
        always_load=bool(raw.get("always_load", raw.get("alwaysLoad", False))),
        annotations=annotations if isinstance(annotations, dict) else None,
    )


def _load_jsonl(path: Path, out: LoadedCatalog) -> None:
    groups: dict[str | None, LoadedServer] = {}
    try:
        text = read_text(path, max_bytes=MAX_LARGE_BYTES)
    except (OSError, SafeReadError) as exc:
        raise CatalogFileError(str(exc)) from None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = parse_json(line)
            if not isinstance(raw, dict):
                raise CatalogFileError("line is not a JSON object")
            server = raw.get("server") if isinstance(raw.get("server"), str) else None
            tool = tool_from_dict(raw)
        except (ValueError, CatalogFileError) as exc:
            out.warnings.append(f"{path}:{lineno}: skipped: {exc}")
            continue
        group = groups.get(server)
        if group is None:
            group = groups[server] = LoadedServer(server)
            desc = raw.get("server_description")
            group.description = desc if isinstance(desc, str) else None
            out.servers.append(group)
        group.tools.append(tool)


def _load_dump(path: Path, data: dict[str, Any], out: LoadedCatalog) -> None:
    server = data.get("server")
    if not isinstance(server, str) or not server:
        server = path.stem
    tools = data.get("tools")
    if not isinstance(tools, list):
        raise CatalogFileError(f"{path}: no 'tools' list")
    group = LoadedServer(server)
    instructions = data.get("instructions")
    group.instructions = instructions if isinstance(instructions, str) else None
    listed: set[str] = set()
    for i, raw in enumerate(tools):
        if not isinstance(raw, dict):
            out.warnings.append(f"{path}: tools[{i}] skipped: not an object")
            continue
        try:
            tool = tool_from_dict(raw)
        except CatalogFileError as exc:
            out.warnings.append(f"{path}: tools[{i}] skipped: {exc}")
            continue
        if tool.name in listed:  # as for a server's tools/list: the first listing is the tool
            out.warnings.append(f"{path}: tools[{i}] skipped: {json.dumps(tool.name)} is listed again")
            continue
        listed.add(tool.name)
        group.tools.append(tool)
    out.servers.append(group)


def load_catalog(path: str | Path) -> LoadedCatalog:
    """Read a catalog file or directory.

    Raises:
        CatalogFileError: the path does not exist, or a single file is not a catalog at all.
            Bad lines and bad tool entries are skipped with a warning instead.
    """
    path = Path(path)
    out = LoadedCatalog()
    if path.is_dir():
        # Regular files only: a FIFO or device named *.json would block the read forever.
        files = sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl") and p.is_file())
        for file in files:
            try:
                _load_file(file, out)
            except NotACatalog:
                continue  # other JSON beside the catalogs (an index, a manifest) is not an error
            except CatalogFileError as exc:
                out.warnings.append(f"skipped: {exc}")
        return out
    if not path.exists():
        raise CatalogFileError(f"{path}: no such file or directory")
    _load_file(path, out)
    return out


def _load_file(path: Path, out: LoadedCatalog) -> None:
    if path.suffix == ".jsonl":
        _load_jsonl(path, out)
        return
    try:
        text = read_text(path, max_bytes=MAX_LARGE_BYTES)
    except (OSError, SafeReadError) as exc:
        raise CatalogFileError(str(exc)) from None
    try:
        data = parse_json(text)
    except ValueError as exc:
        raise CatalogFileError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict) or "tools" not in data:
        raise NotACatalog(f"{path}: not a tools/list dump (no 'tools' key)")
    _load_dump(path, data, out)
