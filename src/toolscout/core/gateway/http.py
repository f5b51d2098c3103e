"""Streamable HTTP for the gateway: where it binds, who may connect, and serving with uvicorn.

Rules (README "toolscout serve"):

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
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import socket
import sys
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import Gateway

#: Environment variable read when ``--token`` is not given.
TOKEN_ENV = "TOOLSCOUT_SERVE_TOKEN"
#: Shortest token accepted for a bind beyond loopback (16 characters; ``secrets.token_urlsafe(32)``
#: gives 43): a short one protects a network-exposed gateway in name only.
MIN_WIDE_TOKEN_CHARS = 16
MCP_PATH = "/mcp"
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


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
        host, port_text = port_text[1:end], port_text[end + 2:]
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


def check_exposure(bind: Bind, token: str | None) -> None:
    """Refuse a non-loopback bind without a long enough bearer token, and any token a client
    could not send.

    Raises:
        BindError: ``token`` is given but blank or has spaces or control characters; or ``bind``
            is not loopback and ``token`` is missing or shorter than :data:`MIN_WIDE_TOKEN_CHARS`.
    """
    make = "make one with: python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"
    if token is not None and (not token or any(c.isspace() or not c.isprintable() for c in token)):
        raise BindError(f"the bearer token (--token or {TOKEN_ENV}) must be printable characters without "
                        f"spaces; {make}")
    if not bind.loopback and not token:
        raise BindError(f"--http {bind.host}:{bind.port} listens beyond this machine: give a bearer token with "
                        f"--token or {TOKEN_ENV} (clients send 'Authorization: Bearer <token>'), or bind 127.0.0.1")
    if not bind.loopback and token is not None and len(token) < MIN_WIDE_TOKEN_CHARS:
        raise BindError(f"--http {bind.host}:{bind.port} listens beyond this machine: its bearer token needs at "
                        f"least {MIN_WIDE_TOKEN_CHARS} characters (this one has {len(token)}); {make}")


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
    for name in dict.fromkeys(names):
        shown = f"[{name}]" if ":" in name else name
        hosts += [shown, f"{shown}:*"]
        origins += [f"{scheme}://{shown}{port}" for scheme in ("http", "https") for port in ("", ":*")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=origins)


def _machine_names() -> list[str]:
    names = [socket.gethostname(), socket.getfqdn()]
    with contextlib.suppress(OSError):
        names += [str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None)]
    return [n for n in names if n]


def require_token(app: ASGIApp, token: str) -> ASGIApp:
    """Wrap ``app``: HTTP requests without ``Authorization: Bearer <token>`` get 401."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="toolscout"')]})
                await send({"type": "http.response.body",
                            "body": b'{"error":"invalid_token","error_description":"missing or wrong bearer token"}'})
                return
        await app(scope, receive, send)

    return guarded


async def serve_http(gateway: Gateway, bind: Bind, *, token: str | None = None, stateless: bool = False,
                     allowed_hosts: Iterable[str] = (), announce: Callable[[str], None] | None = None) -> None:
    """Serve ``gateway`` over streamable HTTP
    at ``http://HOST:PORT/mcp`` until cancelled.

    Args:
        announce: called once with the URL when the socket listens (default: print to stderr).

    Raises:
        BindError: a non-loopback bind without token.
        OSError: the address cannot be bound (in use, not local).
    """
    import uvicorn

    check_exposure(bind, token)
    app: ASGIApp = gateway.server.streamable_http_app(
        streamable_http_path=MCP_PATH, stateless_http=stateless, host=bind.host,
        transport_security=security_settings(bind, allowed_hosts))
    if token:
        app = require_token(app, token)
    family = socket.AF_INET6 if ":" in bind.host else socket.AF_INET
    sock = socket.create_server((bind.host, bind.port), family=family)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    server = uvicorn.Server(config)
    (announce or (lambda url: print(f"toolscout serve: listening on {url}", file=sys.stderr, flush=True)))(
        f"http://{shown}:{port}{MCP_PATH}")
    await server.serve(sockets=[sock])
