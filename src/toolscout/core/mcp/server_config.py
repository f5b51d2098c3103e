"""One configured MCP server (:class:`ServerConfig`): what :mod:`.config` reads from files,
:mod:`.server_names` names, and the pool connects."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..sanitize import escape_all

#: A command line or working dir longer than this (escaped) is shown cut, ending with an ellipsis.
COMMAND_LIMIT = 2000
#: An environment value or header value longer than this (escaped) is shown cut (names are not).
VALUE_LIMIT = 48


@dataclass(frozen=True)
class ServerConfig:
    """One configured MCP server.

    Attributes:
        name: the key of ``mcpServers`` (used in canonical tool names, sanitised there).
        transport: ``stdio``, ``http``, ``sse`` or ``memory`` (an in-process server, for tests
            and embedding: ``inproc`` holds the ``MCPServer``/lowlevel ``Server``).
        command, args, env, cwd: how to start a stdio server (``env`` is merged over the SDK's
            safe default environment: HOME, LOGNAME, PATH, SHELL, TERM, USER).
        url, headers: the endpoint of an http/sse server.
        source: the file the entry came from, or ``default`` for the embedded default.
        error: why the entry is unusable (the server is reported failed and never started).
        inproc: the in-process server object for ``memory``.
        configured_name: the key as written in the file (``name`` is its canonical form, see
            :mod:`.server_names`); empty for servers built in code.
        scope: ``user``, ``project`` (the folder's ``.mcp.json``), ``explicit``
            (``--mcp-config``), ``default`` or empty (built in code).
        not_approved: a project server of a folder the person has not approved
            (:mod:`toolscout.core.trust`): listed with its command, never started.
    """

    name: str
    transport: str = "stdio"
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    source: str = ""
    error: str | None = None
    inproc: Any = field(default=None, compare=False, repr=False)
    configured_name: str = ""
    scope: str = ""
    not_approved: bool = False

    def command_line(self) -> str:
        """What starting this server runs: the shell-quoted command line, or the URL."""
        import shlex

        if self.transport == "stdio":
            return shlex.join([self.command, *self.args])
        return self.url or self.transport

    def launch_details(self, *, value_limit: int = VALUE_LIMIT) -> list[tuple[str, str]]:
        """What starting this server does, each text escaped for a terminal
        (:func:`~toolscout.core.sanitize.escape_all`: a newline shows as ``\\n``): ``("would run",
        command line)`` or ``("would connect to", URL)``, then ``("cwd", dir)``, one ``("env",
        "NAME=value")`` per variable and one ``("header", "Name: value")`` per header. A value
        longer than ``value_limit`` is cut with an ellipsis; names are kept whole."""
        if self.transport != "stdio":
            details = [("would connect to", escape_all(self.command_line(), limit=COMMAND_LIMIT))]
        else:
            details = [("would run", escape_all(self.command_line(), limit=COMMAND_LIMIT))]
        if self.cwd:
            details.append(("cwd", escape_all(self.cwd, limit=COMMAND_LIMIT)))
        details += [("env", f"{escape_all(k)}={escape_all(v, limit=value_limit)}") for k, v in self.env.items()]
        details += [("header", f"{escape_all(k)}: {escape_all(v, limit=value_limit)}") for k, v in self.headers.items()]
        return details

    def __hash__(self) -> int:
        return hash((self.name, self.source))

    @classmethod
    def memory(cls, name: str, server: Any) -> ServerConfig:
        """An in-process server (an ``MCPServer`` or lowlevel ``Server``), connected in memory."""
        return cls(name, transport="memory", source="memory", inproc=server)
