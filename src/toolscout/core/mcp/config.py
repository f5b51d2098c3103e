"""MCP server configuration: discovery, parsing, ``${VAR}`` expansion and the embedded default.

Formats read (all share the ``{"mcpServers": {NAME: ENTRY}}`` shape):

- Claude Code's project file ``.mcp.json`` in the project directory;
- the user file ``mcp.json`` in toolscout's config directory (``platformdirs`` user config dir,
  replaced by ``TOOLSCOUT_CONFIG_DIR`` as for settings);
- any file given with ``--mcp-config`` (Claude Desktop's ``claude_desktop_config.json`` works);
  one that lies inside the project folder is project config, approved with the folder like
  ``.mcp.json`` (:mod:`toolscout.core.policy.trust_files`).

An ENTRY is ``{"command", "args"?, "env"?, "cwd"?}`` for stdio (``"type": "stdio"`` optional) or
``{"type": "http" | "sse", "url", "headers"?, "oauth"?}`` (``oauth``: how to log in to it,
:class:`~.server_config.OAuthOptions`; docs/remote-servers.md). Precedence, lowest first: user → project →
``--mcp-config`` files in the order given; a later entry with the same name replaces an earlier
one (as Claude Code's local > project > user scopes).

``${VAR}`` and ``${VAR:-default}`` expand in command, args, env values, url and headers (Claude
Code's syntax). A variable that is unset and has no default makes that one server invalid, as in
Claude Code, with a reason naming the variable. Each server also keeps its launch fields as
written (:attr:`ServerConfig.written`): the trust prompt shows that text, never the expanded
values (a repository's ``${GITHUB_TOKEN}`` stays visible, the token stays off the screen). Every
invalid entry becomes a :class:`ServerConfig` with ``error`` set, so the engine can show it as
failed while the other servers start; a file that cannot be read or parsed becomes a warning.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import platformdirs

from ..safe_read import SafeReadError, read_json
from ..settings.layers import APP_NAME

# ServerConfig re-exported: the configuration's entries (callers import them from here or from .server_config)
from .server_config import PROJECT_CONFIG, VAR_PATTERN, OAuthOptions, WrittenLaunch
from .server_config import ServerConfig as ServerConfig
from .server_names import assign_server_names

PROJECT_FILE = ".mcp.json"
USER_FILE = "mcp.json"
TRANSPORTS = ("stdio", "http", "sse")


@dataclass
class McpConfig:
    """Everything read from MCP configuration files.

    Attributes:
        servers: name → config in precedence order (invalid entries included, with ``error``).
        warnings: file-level problems (unreadable file, bad JSON, no ``mcpServers``).
        files: configuration files that exist and were read.
        broken: path → why, for each file that exists but cannot be used (each is a warning
            too): such a file is never silently replaced by the embedded default servers.
    """

    servers: dict[str, ServerConfig] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    broken: dict[str, str] = field(default_factory=dict)


class _MissingVar(ValueError):
    pass


def expand_vars(text: str, env: Mapping[str, str]) -> str:
    """Expand ``${VAR}`` and ``${VAR:-default}`` in ``text``.

    ``${VAR:-default}`` uses the default when VAR is unset or empty (shell semantics).

    Raises:
        ValueError: a ``${VAR}`` without default whose variable is unset (names the variable).
    """

    def repl(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if default is not None:
            return value if value else default
        if value is None:
            raise _MissingVar(f"environment variable {name} is not set (and has no ${{{name}:-default}})")
        return value

    return VAR_PATTERN.sub(repl, text)


def _str_map(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ValueError(f"'{what}' must be an object of strings")
    out: dict[str, str] = {}
    for k, v in value.items():
        if isinstance(v, bool) or not isinstance(v, str | int | float):
            raise ValueError(f"'{what}.{k}' must be a string")
        out[k] = str(v)
    return out


def parse_entry(name: str, raw: Any, source: str, env: Mapping[str, str]) -> ServerConfig:
    """Turn one ``mcpServers`` entry into a :class:`ServerConfig`; never raises.

    ``${VAR}`` expands from ``env`` in the fields that run; :attr:`ServerConfig.written` keeps
    them as written. Invalid entries come back with ``error`` set to a reason that names the
    field (and ``written`` set when the fields could be read: a variable that is not set).
    """
    written: WrittenLaunch | None = None
    shape = "stdio"  # an invalid entry's transport: that of what it shows as written
    try:
        if not isinstance(raw, dict):
            raise ValueError("entry must be a JSON object")
        kind = raw.get("type", raw.get("transport"))
        if kind is None:
            kind = "stdio" if "command" in raw or "url" not in raw else "http"
        if kind == "streamable-http":
            kind = "http"
        if kind not in TRANSPORTS:
            raise ValueError(f"unknown type {kind!r} (expected stdio, http or sse)")
        if kind == "stdio":
            command = raw.get("command")
            if not isinstance(command, str) or not command.strip():
                raise ValueError("stdio server has no 'command'")
            args = raw.get("args", [])
            if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
                raise ValueError("'args' must be a list of strings")
            cwd = raw.get("cwd")
            if cwd is not None and not isinstance(cwd, str):
                raise ValueError("'cwd' must be a string")
            written = WrittenLaunch(
                command=command, args=tuple(str(a) for a in args), env=_str_map(raw.get("env"), "env"), cwd=cwd or None
            )
            return ServerConfig(
                name,
                "stdio",
                command=expand_vars(written.command, env),
                args=tuple(expand_vars(a, env) for a in written.args),
                env={k: expand_vars(v, env) for k, v in written.env.items()},
                cwd=expand_vars(cwd, env) if cwd else None,
                source=source,
                written=written,
            )
        url = raw.get("url")
        if not isinstance(url, str) or not url.strip():
            raise ValueError(f"{kind} server has no 'url'")
        written, shape = WrittenLaunch(url=url, headers=_str_map(raw.get("headers"), "headers")), kind
        return ServerConfig(
            name,
            kind,
            url=expand_vars(url, env),
            headers={k: expand_vars(v, env) for k, v in written.headers.items()},
            source=source,
            written=written,
            oauth=_oauth_options(raw.get("oauth"), env),
        )
    except ValueError as exc:
        return ServerConfig(name, shape, source=source, error=f"invalid entry in {source}: {exc}", written=written)


#: The ``"oauth"`` fields read (camelCase in the file) and their :class:`OAuthOptions` names.
_OAUTH_FIELDS = {
    "clientId": "client_id",
    "clientSecret": "client_secret",
    "clientMetadataUrl": "client_metadata_url",
    "grant": "grant",
    "privateKeyFile": "private_key_file",
    "signingAlgorithm": "signing_algorithm",
    "issuer": "issuer",
}
#: The grants an ``"oauth"`` object may name.
_GRANTS = ("authorization_code", "client_credentials")


def _oauth_options(raw: Any, env: Mapping[str, str]) -> OAuthOptions | None:
    """An http/sse entry's ``"oauth"`` object (``${VAR}`` expanded in its strings), or None.

    Raises:
        ValueError: not an object, an unknown key, a value of the wrong type.
    """
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ValueError("'oauth' must be an object")
    unknown = sorted(set(raw) - {*_OAUTH_FIELDS, "callbackPort"})
    if unknown:
        raise ValueError(
            f"'oauth' has unknown key {unknown[0]!r} (known: {', '.join([*_OAUTH_FIELDS, 'callbackPort'])})"
        )
    values: dict[str, Any] = {}
    for key, attr in _OAUTH_FIELDS.items():
        if key in raw:
            if not isinstance(raw[key], str) or not raw[key].strip():
                raise ValueError(f"'oauth.{key}' must be a non-empty string")
            values[attr] = expand_vars(raw[key], env)
    port = raw.get("callbackPort")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536):
        raise ValueError("'oauth.callbackPort' must be a port number (1-65535)")
    if values.get("grant", "authorization_code") not in _GRANTS:
        raise ValueError(f"'oauth.grant' must be one of {', '.join(_GRANTS)}")
    if values.get("grant") == "client_credentials" and (
        "client_id" not in values or ("client_secret" not in values and "private_key_file" not in values)
    ):
        raise ValueError("'oauth.grant' client_credentials needs clientId and clientSecret or privateKeyFile")
    return OAuthOptions(callback_port=port, **values)


class McpConfigFileError(ValueError):
    """An MCP config file that exists but cannot be used; the message says why, without the path
    (unreadable, malformed JSON, not ``{"mcpServers": {...}}``)."""


def _servers_of(path: Path) -> dict[str, Any]:
    """The ``mcpServers`` object of the file at ``path`` (``{}`` for an empty object ``{}``).

    Raises:
        FileNotFoundError: no such file.
        McpConfigFileError: the file cannot be read or parsed, or is not an MCP config.
    """
    try:
        data = read_json(path)
    except SafeReadError as exc:
        raise McpConfigFileError(str(exc).removeprefix(f"{path}: ")) from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if servers is None:
        if isinstance(data, dict) and not data:
            return {}
        raise McpConfigFileError("no 'mcpServers' object")
    if not isinstance(servers, dict):
        raise McpConfigFileError("'mcpServers' must be an object")
    return servers


def config_file_problem(path: str | Path) -> str | None:
    """Why the MCP config file at ``path`` cannot be used (``no such file or directory``,
    ``malformed JSON: ...``, ``no 'mcpServers' object`` ...), or None when it can: what the
    command line checks of each ``--mcp-config`` file before anything starts."""
    try:
        _servers_of(Path(path))
    except FileNotFoundError:
        return "no such file or directory"
    except McpConfigFileError as exc:
        return str(exc)
    return None


def read_config_file(path: str | Path, env: Mapping[str, str] | None = None) -> McpConfig:
    """Read one config file; a missing file is empty, a broken one becomes a warning (and an
    entry of :attr:`McpConfig.broken`)."""
    env = os.environ if env is None else env
    path = Path(path)
    out = McpConfig()
    try:
        servers = _servers_of(path)
    except FileNotFoundError:
        return out
    except McpConfigFileError as exc:
        out.broken[str(path)] = str(exc)
        out.warnings.append(f"MCP config {path}: {exc}; no servers read from it")
        return out
    out.files.append(str(path))
    for name, raw in servers.items():
        out.servers[name] = parse_entry(name, raw, str(path), env)
    return out


def user_config_path(env: Mapping[str, str] | None = None) -> Path:
    """``mcp.json`` in toolscout's user config dir (``TOOLSCOUT_CONFIG_DIR`` overrides the dir)."""
    env = os.environ if env is None else env
    base = env.get("TOOLSCOUT_CONFIG_DIR") or platformdirs.user_config_dir(APP_NAME)
    return Path(base) / USER_FILE


def load_mcp_config(
    project_dir: str | Path,
    extra_paths: Iterable[str | Path] = (),
    *,
    env: Mapping[str, str] | None = None,
    discover: bool = True,
    project_files: Collection[str | Path] = (),
) -> McpConfig:
    """Merge the user file, the project ``.mcp.json`` and ``extra_paths`` (in that order), then
    normalise every server name once (:func:`.server_names.assign_server_names`; each rename is a
    warning). Each server's ``scope`` says which of the three it came from.

    Args:
        project_dir: where ``.mcp.json`` is looked for.
        extra_paths: ``--mcp-config`` files; a missing one is a warning (it was asked for).
        env: variables for ``${VAR}`` expansion (default ``os.environ``).
        discover: False to read only ``extra_paths``.
        project_files: those of ``extra_paths`` that lie inside the project folder
            (:func:`toolscout.core.policy.trust_files.project_key`): their servers get the scope
            ``project-config`` instead of ``explicit`` (they wait for the folder's approval).
    """
    env = os.environ if env is None else env
    merged = McpConfig()
    paths: list[tuple[Path, str]] = []
    if discover:
        paths += [(user_config_path(env), "user"), (Path(project_dir) / PROJECT_FILE, "project")]
    owned = {str(Path(p)) for p in project_files}
    paths += [(Path(p), PROJECT_CONFIG if str(Path(p)) in owned else "explicit") for p in extra_paths]
    for path, scope in paths:
        explicit = scope in ("explicit", PROJECT_CONFIG)
        if explicit and not path.exists():
            merged.warnings.append(f"{path}: MCP config file not found")
            continue
        part = read_config_file(path, env)
        merged.files += part.files
        merged.warnings += part.warnings
        merged.broken.update(part.broken)
        for name, server in part.servers.items():
            merged.servers.pop(name, None)  # a later file wins and moves to its position
            merged.servers[name] = replace(server, scope=scope)
    named, warnings = assign_server_names(merged.servers.values())
    merged.servers = {cfg.name: cfg for cfg in named}
    merged.warnings += warnings
    return merged


def _is_git_repo(path: Path) -> bool:
    try:
        out = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--is-inside-work-tree"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and out.stdout.strip() == "true"


def default_servers(project_dir: str | Path) -> list[ServerConfig]:
    """The embedded default: reference servers installed with toolscout, run with this Python.

    ``time`` (``python -m mcp_server_time``), ``git`` (``python -m mcp_server_git``, given
    ``--repository`` when the project dir is a git work tree) and ``fetch``
    (``python -m mcp_server_fetch``; it starts and lists its one tool offline, fetching needs
    the network). Modules that are not installed are skipped.
    """
    import importlib.util

    from .default_hints import DEFAULT_SEARCH_HINTS as hints

    project = Path(project_dir).resolve()
    out: list[ServerConfig] = []
    if importlib.util.find_spec("mcp_server_time"):
        out.append(
            ServerConfig(
                "time",
                command=sys.executable,
                args=("-m", "mcp_server_time"),
                source="default",
                search_hints=dict(hints["time"]),
            )
        )
    if importlib.util.find_spec("mcp_server_git"):
        args: tuple[str, ...] = ("-m", "mcp_server_git")
        if _is_git_repo(project):
            args += ("--repository", str(project))
        out.append(
            ServerConfig("git", command=sys.executable, args=args, source="default", search_hints=dict(hints["git"]))
        )
    if importlib.util.find_spec("mcp_server_fetch"):
        out.append(
            ServerConfig(
                "fetch",
                command=sys.executable,
                args=("-m", "mcp_server_fetch"),
                source="default",
                search_hints=dict(hints["fetch"]),
            )
        )
    return out
