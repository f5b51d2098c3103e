"""Streamable HTTP for the gateway: where it binds, who may connect, and serving with uvicorn.

Rules (docs/gateway.md, docs/security.md):

- ``--http PORT`` binds 127.0.0.1; ``--http HOST:PORT`` (``[::1]:PORT`` for IPv6) binds HOST.
- A bind to anything but a loopback address needs a bearer token (``--token`` or the
  ``TOOLSCOUT_SERVE_TOKEN`` environment variable); :func:`parse_bind` / :func:`check_exposure`
  refuse otherwise, and such a token needs :data:`MIN_WIDE_TOKEN_CHARS` characters. A token is
  printable characters without spaces (a blank one would refuse every request). With a token, every request must carry ``Authorization: Bearer <token>``
  (compared in constant time); others get 401 before reaching the MCP layer.
- The SDK's DNS-rebinding protection (Host and Origin checks) stays on for every bind: loopback
  names for a loopback bind; for another bind, that host, this machine's names and the
  ``--allowed-host`` values.
- ``--stateless``: no MCP sessions, so any replica behind a load balancer can answer any request.
- Who a request comes from (a token, or the local user of its peer), the sessions bound to it
  and the limits per client: :mod:`.clients`; timeouts and connection caps: :mod:`.guard`; their
  values: :mod:`.limits` (the ``serve.*`` settings). :func:`exposure_notice` says at start who can
  use the gateway.
"""

from __future__ import annotations

import contextlib
import ipaddress
import math
import os
import socket
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .limits import ServeLimits
from .ops_options import OpsOptions

if TYPE_CHECKING:
    from .clients import ASGIApp
    from .server import Gateway

#: Environment variable read when ``--token`` is not given.
TOKEN_ENV = "TOOLSCOUT_SERVE_TOKEN"
#: Shortest token accepted for a bind beyond loopback (16 characters; ``secrets.token_urlsafe(32)``
#: gives 43): a short one protects a network-exposed gateway in name only.
MIN_WIDE_TOKEN_CHARS = 16
MCP_PATH = "/mcp"
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")

#: Most bytes of a request head (line and headers); uvicorn's h11 answers 400 beyond.
MAX_HEAD_BYTES = 16 * 1024
#: Connections waiting to be accepted (also how many one accept callback takes; uvicorn's 2048
#: would take more than the open-file limit in one burst).
ACCEPT_BACKLOG = 128


class BindError(ValueError):
    """An ``--http`` value that cannot be used; the message says which part and why."""


@dataclass(frozen=True)
class Bind:
    """Where to listen. ``port`` 0 picks a free port (printed once listening)."""

    host: str
    port: int

    @property
    def loopback(self) -> bool:
        """True for 127.0.0.0/8, ::1 and ``localhost``."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def check_allowed_host(name: str) -> str:
    """An ``--allowed-host`` value as :func:`security_settings` matches it: a host name or IP
    address alone (any port passes), lowercase; an IPv6 address with or without brackets.

    Raises:
        BindError: a URL, a path, a port, spaces or nothing: such a value never matches a ``Host``
            header, so every request would get 421.
    """
    bare = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    is_ip6 = ":" in bare and _is_ip(bare)
    if not bare or "/" in bare or (":" in bare and not is_ip6) or any(c.isspace() or not c.isprintable() for c in bare):
        raise BindError(
            f"--allowed-host {name}: give the host name alone, as in the Host header without its port "
            "(e.g. --allowed-host mcp.example.com; any port is allowed)"
        )
    return bare.lower()


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def parse_bind(text: str) -> Bind:
    """``PORT``, ``HOST:PORT`` or ``[IPV6]:PORT`` → :class:`Bind` (host defaults to 127.0.0.1).

    Raises:
        BindError: empty host, port not an integer in 0-65535.
    """
    host, port_text = "127.0.0.1", text.strip()
    if port_text.startswith("["):
        end = port_text.find("]:")
        if end < 0:
            raise BindError(f"--http {text!r}: write an IPv6 address as [ADDRESS]:PORT")
        host, port_text = port_text[1:end], port_text[end + 2 :]
    elif ":" in port_text:
        host, _, port_text = port_text.rpartition(":")
    if not host:
        raise BindError(f"--http {text!r}: the host before ':' is empty")
    try:
        port = int(port_text)
    except ValueError:
        raise BindError(f"--http {text!r}: the port must be a number, got {port_text!r}") from None
    if not 0 <= port <= 65535:
        raise BindError(f"--http {text!r}: the port must be between 0 and 65535")
    return Bind(host, port)


def check_exposure(bind: Bind, token: str | Sequence[str] | None, named: str = f"--token or {TOKEN_ENV}") -> None:
    """Refuse a non-loopback bind without a long enough bearer token, and any token a client
    could not send. ``token`` may be several tokens (each is checked); ``named`` is where the
    operator gave it, for the messages (``--metrics-token or TOOLSCOUT_METRICS_TOKEN``).

    Raises:
        BindError: ``token`` is given but blank or has spaces or control characters; or ``bind``
            is not loopback and ``token`` is missing or shorter than :data:`MIN_WIDE_TOKEN_CHARS`.
    """
    if token is not None and not isinstance(token, str):
        for one in token:
            check_exposure(bind, one, named)
        if not token:
            check_exposure(bind, None, named)
        return
    make = "make one with: python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"
    if token is not None and (not token or any(c.isspace() or not c.isprintable() for c in token)):
        raise BindError(f"the bearer token ({named}) must be printable characters without spaces; {make}")
    if not bind.loopback and not token:
        raise BindError(
            f"--http {bind.host}:{bind.port} listens beyond this machine: give a bearer token with "
            f"{named} (clients send 'Authorization: Bearer <token>'), or bind 127.0.0.1"
        )
    if not bind.loopback and token is not None and len(token) < MIN_WIDE_TOKEN_CHARS:
        raise BindError(
            f"--http {bind.host}:{bind.port} listens beyond this machine: its bearer token ({named}) needs at "
            f"least {MIN_WIDE_TOKEN_CHARS} characters (this one has {len(token)}); {make}"
        )


def security_settings(bind: Bind, extra_hosts: Iterable[str] = ()) -> Any:
    """DNS-rebinding protection for ``bind``: the Host and Origin values a request may carry."""
    from mcp.server.transport_security import TransportSecuritySettings

    names = list(_LOOPBACK_NAMES)
    if not bind.loopback:
        names.append(bind.host)
        if bind.host in ("0.0.0.0", "::"):
            names.extend(_machine_names())
    names.extend(extra_hosts)
    hosts, origins = [], []
    for name in dict.fromkeys(n.lower() for n in names):  # host names are case-insensitive; clients send lowercase
        shown = f"[{name}]" if ":" in name else name
        hosts += [shown, f"{shown}:*"]
        origins += [f"{scheme}://{shown}{port}" for scheme in ("http", "https") for port in ("", ":*")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def _machine_names() -> list[str]:
    names = [socket.gethostname(), socket.getfqdn()]
    with contextlib.suppress(OSError):
        names += [str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None)]
    return [n for n in names if n]


def exposure_notice(bind: Bind, tokens: Sequence[str], *, on_command_line: bool = False) -> list[str]:
    """What the person must know of who can use the gateway (printed as warnings at start).

    Without a token on loopback, every process of this user can use it, its sessions and the
    questions meant for the person (other users' are refused where :mod:`.guard` can see the
    peer's user); where it cannot, any local process can. A token on the command line is in the
    process list, readable by every local user.
    """
    from . import guard

    lines = []
    if not tokens:
        me = _user_name()
        if guard.peer_credentials_available():
            lines.append(
                f"no bearer token: every program of user {me} on this machine can use this gateway, its "
                "tools and the permission questions of its calls (other users' programs are refused). "
                f"Give --token (or {TOKEN_ENV}) so that only the clients you configure can."
            )
        else:
            lines.append(
                "no bearer token, and this system does not show who is at the other end of a loopback "
                f"connection: any local process, of any user, can use this gateway. Give --token (or {TOKEN_ENV})."
            )
    if on_command_line:
        lines.append(
            f"a --token value is visible to every local user in the process list (ps, /proc/PID/cmdline): "
            f"pass it in {TOKEN_ENV} instead."
        )
    return lines


def _user_name() -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(os.geteuid()).pw_name} (uid {os.geteuid()})"
    except (ImportError, KeyError, AttributeError):
        return "you"


async def serve_http(
    gateway: Gateway,
    bind: Bind,
    *,
    token: str | Sequence[str] | None = None,
    stateless: bool = False,
    allowed_hosts: Iterable[str] = (),
    announce: Callable[[str], None] | None = None,
    limits: ServeLimits | None = None,
    ops: OpsOptions | None = None,
) -> None:
    """Serve ``gateway`` over streamable HTTP
    at ``http://HOST:PORT/mcp`` until cancelled, within ``limits`` (default: the engine's
    ``serve.*`` settings): connections through :mod:`.guard`, clients and sessions through
    :mod:`.clients`.

    Args:
        token: the bearer token(s) clients must send (each is a client of its own).
        announce: called once with the URL when the socket listens (default: print to stderr).
        ops: health, metrics, request log and drain (:mod:`.ops_http`, :mod:`.drain`).

    Raises:
        BindError: a non-loopback bind without token.
        OSError: the address cannot be bound (in use, not local).
    """
    import uvicorn

    from . import clients, guard
    from .drain import DrainingServer
    from .ops_http import Operations

    tokens = _tokens(token)
    check_exposure(bind, tokens)
    limits = limits or ServeLimits.from_settings(gateway.engine.settings)
    operations = Operations(gateway, ops or OpsOptions(), tokens)
    gateway.server.middleware.insert(0, operations.observer)  # outermost: sees every refusal too
    principals = max(1, len(tokens))
    gateway.max_clients = max(gateway.max_clients, limits.max_sessions_per_client * principals + 64)
    gateway.server.middleware.append(clients.InFlight(limits))
    security = security_settings(bind, allowed_hosts)
    app: ASGIApp = gateway.server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=stateless,
        host=bind.host,
        transport_security=security,
        # every client's own cap is below this: one client's sessions never refuse another's
        max_sessions=limits.max_sessions_per_client * principals + 16,
    )
    if not stateless:
        app = clients.SessionBook(app, limits, gateway.forget)
    local_only = bind.loopback and guard.peer_credentials_available()
    app = clients.authenticate(app, tokens, local_users_only=local_only)
    app = operations.wrap(
        app,
        lambda inner, own: clients.authenticate(inner, own or tokens, local_users_only=local_only and not own),
        security,
    )
    family = socket.AF_INET6 if ":" in bind.host else socket.AF_INET
    sock = socket.create_server((bind.host, bind.port), family=family)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    pool = guard.ConnectionPool(limits)
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        access_log=False,
        http=guard.protocol_class(pool),
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        backlog=ACCEPT_BACKLOG,
        timeout_graceful_shutdown=math.ceil(operations.options.drain_timeout),  # uvicorn types it int
        log_config=None if operations.log is not None else uvicorn.config.LOGGING_CONFIG,  # JSON: see Operations
    )
    server = DrainingServer(
        config,
        delay=operations.options.drain_delay,
        on_drain=operations.start_drain,
        in_flight=lambda: operations.http_in_flight,
    )
    url = f"http://{shown}:{port}{MCP_PATH}"
    if announce is not None:
        announce(url)
    elif not operations.say("listening", url=url):
        print(f"toolscout serve: listening on {url}", file=sys.stderr, flush=True)
    await server.serve(sockets=[sock])
    operations.drained(server)


def _tokens(token: str | Sequence[str] | None) -> list[str]:
    if token is None:
        return []
    return [token] if isinstance(token, str) else list(token)
