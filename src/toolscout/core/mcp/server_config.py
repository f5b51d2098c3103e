"""One configured MCP server (:class:`ServerConfig`): what :mod:`.config` reads from files,
:mod:`.server_names` names, and the pool connects; and its launch fields as written in the file
(:class:`WrittenLaunch`), which is what the trust prompt shows."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..sanitize import escape_all

#: A command line or working dir longer than this (escaped) is shown cut, ending with an ellipsis.
COMMAND_LIMIT = 2000
#: An environment value or header value longer than this (escaped) is shown cut (names are not).
VALUE_LIMIT = 48
#: ``${VAR}`` or ``${VAR:-default}`` (Claude Code's syntax): group 1 the name, group 2 the default.
VAR_PATTERN = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
#: How a server that reads environment variables says so, before their names.
READS_ENV = "reads your environment"
#: The scope of a server from an ``--mcp-config`` file that lies inside the project folder
#: (:mod:`toolscout.core.policy.trust_files`): project config, like ``.mcp.json``.
PROJECT_CONFIG = "project-config"
#: Scopes whose servers wait for the folder's approval (:mod:`toolscout.core.policy.trust`).
PROJECT_SCOPES = ("project", PROJECT_CONFIG)


@dataclass(frozen=True)
class WrittenLaunch:
    """A server's launch fields as written in its config file, before ``${VAR}`` expansion:
    what a trust prompt shows (a repository's ``"${GITHUB_TOKEN}"`` stays visible as that, and the
    person's own secret never reaches the screen). Numbers in ``args`` or in maps are written
    as their JSON text, as :mod:`.config` reads them.

    Attributes:
        command, args, env, cwd, url, headers: as :class:`ServerConfig`'s, unexpanded (names
            in ``env`` and ``headers`` never expand: only values do).
    """

    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)

    def variables(self) -> tuple[str, ...]:
        """The names of the environment variables that expanding these fields reads (``${VAR}``
        and ``${VAR:-default}`` alike), sorted, each once; ``()`` when none."""
        texts = [self.command, *self.args, *self.env.values(), self.cwd or "", self.url, *self.headers.values()]
        return tuple(sorted({m.group(1) for text in texts for m in VAR_PATTERN.finditer(text)}))


@dataclass(frozen=True)
class OAuthOptions:
    """An http/sse server's ``"oauth"`` object (Claude Code's field, extended): how toolscout logs
    in to it (:mod:`.oauth`). Every field is optional; without them the client registers itself
    (dynamic client registration) and asks for the scopes the server names
    (``WWW-Authenticate``, else its metadata).

    Attributes:
        client_id, client_secret: a client registered beforehand with the authorization server
            (``clientId``, ``clientSecret``); the secret may be ``${VAR}``.
        client_metadata_url: an HTTPS URL of a client ID metadata document (``clientMetadataUrl``),
            used as the client id where the authorization server supports those.
        callback_port: the loopback port of the login redirect (``callbackPort``; default: the
            one of the last login, else a free one).
        grant: ``authorization_code`` (None, the default: a person logs in in the browser) or
            ``client_credentials`` (``grant``: machine to machine, with ``client_id`` and
            ``client_secret``, or a signed JWT from ``private_key_file``).
        private_key_file, signing_algorithm: the PEM key that signs the client's JWT assertion
            (``privateKeyFile``) and its algorithm (``signingAlgorithm``, default ``RS256``).
        issuer: the authorization server the client credentials belong to (``issuer``): they are
            only ever sent to it.
    """

    client_id: str | None = None
    client_secret: str | None = None
    client_metadata_url: str | None = None
    callback_port: int | None = None
    grant: str | None = None
    private_key_file: str | None = None
    signing_algorithm: str | None = None
    issuer: str | None = None


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
            (``--mcp-config``), ``project-config`` (an ``--mcp-config`` file inside the project
            folder: :data:`PROJECT_CONFIG`), ``default`` or empty (built in code).
        not_approved: a project server of a folder the person has not approved
            (:mod:`toolscout.core.policy.trust`): listed with its command, never started.
        written: the launch fields as written in the file (``${VAR}`` unexpanded), for
            :meth:`launch_details`; None for servers built in code (their fields are the text).
            Set on invalid entries too, as far as the entry could be read.
        oauth: the ``"oauth"`` object of an http/sse entry (:class:`OAuthOptions`), or None.
        search_hints: tool name → search hint for the tools of this server that list none
            (``ToolSpec.search_hint``); the embedded default servers get toolscout's
            (:mod:`.default_hints`), configured servers none.
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
    written: WrittenLaunch | None = None
    oauth: OAuthOptions | None = None
    search_hints: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def command_line(self, *, as_written: bool = False) -> str:
        """What starting this server runs: the shell-quoted command line, or the URL.

        Args:
            as_written: the text of the config file (``${VAR}`` unexpanded, see :attr:`written`)
                instead of the expanded values that run.
        """
        import shlex

        src = self._text(as_written)
        if self.transport == "stdio":
            return shlex.join([src.command, *src.args])
        return src.url or self.transport

    def _text(self, as_written: bool) -> WrittenLaunch | ServerConfig:
        return self.written if as_written and self.written is not None else self

    def launch_details(self, *, value_limit: int = VALUE_LIMIT) -> list[tuple[str, str]]:
        """What starting this server does, as written in its config file (``${VAR}`` unexpanded:
        :attr:`written`; what runs is expanded), each text escaped for a terminal
        (:func:`~toolscout.core.sanitize.escape_all`: a newline shows as ``\\n``): ``("would run",
        command line)`` or ``("would connect to", URL)``, then ``("cwd", dir)``, one ``("env",
        "NAME=value")`` per variable and one ``("header", "Name: value")`` per header. A value
        longer than ``value_limit`` is cut with an ellipsis; names are kept whole. Which
        environment variables these read: :meth:`reads_env`."""
        src = self._text(True)
        shown = escape_all(self.command_line(as_written=True), limit=COMMAND_LIMIT)
        details = [("would connect to" if self.transport != "stdio" else "would run", shown)]
        if src.cwd:
            details.append(("cwd", escape_all(src.cwd, limit=COMMAND_LIMIT)))
        details += [("env", f"{escape_all(k)}={escape_all(v, limit=value_limit)}") for k, v in src.env.items()]
        details += [("header", f"{escape_all(k)}: {escape_all(v, limit=value_limit)}") for k, v in src.headers.items()]
        return details

    def reads_env(self) -> str:
        """One line naming the person's environment variables that starting this server reads
        (``${VAR}`` in its config file, with or without a default): ``"reads your environment:
        AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN"`` (names only, sorted, each once; never a value);
        ``""`` when it reads none or was built in code."""
        names = self.written.variables() if self.written is not None else ()
        return f"{READS_ENV}: {', '.join(names)}" if names else ""

    def __hash__(self) -> int:
        return hash((self.name, self.source))

    @classmethod
    def memory(cls, name: str, server: Any) -> ServerConfig:
        """An in-process server (an ``MCPServer`` or lowlevel ``Server``), connected in memory."""
        return cls(name, transport="memory", source="memory", inproc=server)
