"""Adding and removing servers in the user MCP config (``toolscout mcp add`` / ``mcp remove``).

The file is :func:`~.config.user_config_path` (``~/.config/toolscout/mcp.json`` on Linux;
``TOOLSCOUT_CONFIG_DIR`` replaces the folder), in Claude Code's ``{"mcpServers": {NAME: ENTRY}}``
shape, so an entry written here can be copied to a ``.mcp.json`` as is. Entries are the ones
:func:`~.config.parse_entry` reads: ``{"command", "args", "env"}`` for stdio,
``{"type": "http" | "sse", "url", "headers"}`` otherwise.

Environment values and headers often hold secrets: they are written to this file only (created
readable by its owner alone, rewritten atomically by :func:`~toolscout.core.safe_write.write_json_atomic`),
and nothing here returns or logs their values. Every other key and server of the file is kept; a
file that cannot be parsed is never overwritten.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..names import normalise_server_name
from ..safe_read import SafeReadError, read_json
from ..safe_write import write_json_atomic


class UserConfigError(ValueError):
    """The change cannot be made (the message says why and what to do); nothing was written."""


def server_entry(
    transport: str,
    target: str,
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The ``mcpServers`` entry of one server, as Claude Code writes it.

    Args:
        transport: ``stdio``, ``http`` or ``sse``.
        target: the command (stdio) or the URL (http, sse).
        args: the command's arguments (stdio only).
        env: environment variables of a stdio server. headers: HTTP headers of an http/sse server.

    Raises:
        UserConfigError: an option that does not apply to ``transport`` (arguments or ``env``
            for a URL, headers for a command), or a URL that is not http(s).
    """
    if transport == "stdio":
        if headers:
            raise UserConfigError("--header is for http and sse servers; a stdio server takes -e KEY=VALUE")
        entry: dict[str, Any] = {"command": target, "args": list(args)}
        if env:
            entry["env"] = dict(env)
        return entry
    if args:
        raise UserConfigError(
            f"an {transport} server takes one URL and no arguments (got {' '.join(args)!r}); "
            "a command goes after --: toolscout mcp add NAME -- COMMAND ARGS..."
        )
    if env:
        raise UserConfigError(f"-e/--env is for stdio servers; an {transport} server takes --header 'Name: value'")
    if not target.lower().startswith(("http://", "https://")):
        raise UserConfigError(f"{target!r} is not an http(s) URL")
    entry = {"type": transport, "url": target}
    if headers:
        entry["headers"] = dict(headers)
    return entry


def _read(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The file's whole object and its ``mcpServers`` object, which is part of it (both new and
    empty for a missing file).

    Raises:
        UserConfigError: the file cannot be read or parsed, or is not an MCP config.
    """
    try:
        data = read_json(path)
    except FileNotFoundError:
        data = {}
    except SafeReadError as exc:
        raise UserConfigError(f"{exc}; fix the file first (it was left as is)") from None
    if not isinstance(data, dict):
        raise UserConfigError(
            f'{path}: expected a JSON object with "mcpServers"; fix the file first (it was left as is)'
        )
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise UserConfigError(f"{path}: 'mcpServers' is not an object; fix the file first (it was left as is)")
    return data, servers


def add_server(path: Path, name: str, entry: dict[str, Any]) -> None:
    """Add server ``name`` with ``entry`` to the config file at ``path`` (created when missing).

    Raises:
        UserConfigError: ``name`` is not a valid server name, a server of that name is already
            in the file (it is never overwritten), or the file cannot be parsed.
        OSError: the file cannot be written.
    """
    canonical = normalise_server_name(name)
    if canonical != name:
        better = f" (for example {canonical!r})" if canonical else ""
        raise UserConfigError(
            f"invalid server name {name!r}: use letters, digits, - and _ only, without a double underscore{better}"
        )
    data, servers = _read(path)
    if name in servers:
        raise UserConfigError(
            f"a server named {name!r} is already in {path}; nothing was changed. "
            f"Remove it first with: toolscout mcp remove {name}"
        )
    servers[name] = entry
    write_json_atomic(path, data, private=True)


def remove_server(path: Path, name: str) -> dict[str, Any]:
    """Remove server ``name`` from the config file at ``path``; returns its entry.

    Raises:
        UserConfigError: no server of that name is in the file, or the file cannot be parsed.
        OSError: the file cannot be written.
    """
    data, servers = _read(path)
    if name not in servers:
        known = ", ".join(sorted(servers)) or "none"
        raise UserConfigError(f"no server named {name!r} in {path} (servers there: {known})")
    entry = servers.pop(name)
    write_json_atomic(path, data, private=True)
    return entry if isinstance(entry, dict) else {}
