"""Who a request of ``toolscout serve --http`` comes from, and what each client may hold.

**Clients.** A *client* (a principal) is what the gateway can tell apart without trusting what a
request says about itself:

- with bearer tokens (``--token``, repeatable, or ``TOOLSCOUT_SERVE_TOKEN``, several separated by
  spaces): the token the request carries; each token is a client of its own. Give each program
  its own token to keep them apart;
- on a loopback bind without a token, on Linux: the *user* of the process at the other end of the
  TCP connection (:func:`~.guard.peer_uid`), and only this gateway's own user is served: other
  users' processes get 403. Processes of one user cannot be told apart (and can read each other's
  memory and files: the token in a client's configuration, say), so they are one client; the
  gateway says so when it starts;
- elsewhere (no ``/proc/net/tcp``): one client, anyone who can connect; said at start too.

**What binds to a client.** An MCP session belongs to the client that opened it: a request
naming another client's ``Mcp-Session-Id`` is answered 404, exactly as an unknown session (the
SDK's own check, through ``scope["user"]``, and :class:`SessionBook`'s). So another client can
neither use its tools, read its state, nor answer the permission questions sent on it (an
elicitation answer is a POST on the session that was asked). A 2026-07-28 permission answer
(``requestState``) is sealed and bound to the client by the SDK's request-state boundary
(:func:`request_state_boundary`).

**Limits per client** (:class:`~.limits.ServeLimits`): sessions (:class:`SessionBook`: a new one
over the cap ends that client's least recently used idle session, never another client's) and
requests in flight per session and per client (:class:`InFlight`).
"""

from __future__ import annotations

import hmac
import json
import os
import sys
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from .guard import SCOPE_KEY, ConnectionInfo
from .limits import ServeLimits

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The ASGI scope key carrying the request's principal (a short string; see the module docstring).
PRINCIPAL_KEY = "toolscout.principal"
SESSION_HEADER = b"mcp-session-id"
#: JSON-RPC error code of a request refused for too many in flight (implementation-defined range).
TOO_MANY_IN_FLIGHT = -32001


async def _answer(send: Send, status: int, body: dict[str, Any], headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    await send(
        {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json"), *headers]}
    )
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers") or ():
        if key == name:
            return bytes(value)
    return None


def principal_of(request: Any) -> str | None:
    """The principal of a request context's ``request`` (a Starlette request over HTTP, None
    over stdio); None when it has none."""
    scope = getattr(request, "scope", None)
    if isinstance(scope, MutableMapping):
        value = scope.get(PRINCIPAL_KEY)
        return value if isinstance(value, str) else None
    return None


def authenticate(app: ASGIApp, tokens: Sequence[str], *, local_users_only: bool) -> ASGIApp:
    """Wrap ``app``: every HTTP request is given its principal, or refused.

    Args:
        tokens: accepted bearer tokens; with any, a request without ``Authorization: Bearer
            <one of them>`` gets 401 (compared in constant time, against every token).
        local_users_only: without tokens, serve only peers whose uid is this process's
            (:func:`~.guard.peer_uid`); others, and peers whose user cannot be found, get 403.
    """
    expected = [f"Bearer {t}".encode() for t in tokens]
    me = os.geteuid() if sys.platform != "win32" else None

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        info = scope.get(SCOPE_KEY)
        if expected:
            given = _header(scope, b"authorization") or b""
            if given[:7].lower() == b"bearer ":  # the scheme is case-insensitive (RFC 9110 11.1)
                given = b"Bearer " + given[7:]
            matches = [hmac.compare_digest(given, e) for e in expected]  # all compared: no timing hint
            if not any(matches):
                await _answer(
                    send,
                    401,
                    {"error": "invalid_token", "error_description": "missing or wrong bearer token"},
                    [(b"www-authenticate", b'Bearer realm="toolscout"')],
                )
                return
            principal = f"token:{matches.index(True) + 1}"
        elif local_users_only:
            uid = info.uid() if isinstance(info, ConnectionInfo) else None
            if uid is None or uid != me:
                who = "an unknown user" if uid is None else f"uid {uid}"
                await _answer(
                    send,
                    403,
                    {
                        "error": "forbidden",
                        "error_description": (
                            f"this toolscout gateway serves the programs of its own user (uid {me}) only; this connection "
                            f"comes from {who}. Start it with --token to serve other users' programs."
                        ),
                    },
                )
                return
            principal = f"uid:{uid}"
        else:
            principal = "anyone"
        if isinstance(info, ConnectionInfo):
            info.authenticated = True
        scope[PRINCIPAL_KEY] = principal
        # the SDK binds each session to the credential that opened it (404 for any other)
        scope["user"] = AuthenticatedUser(AccessToken(token="", client_id=principal, scopes=[]))
        await app(scope, receive, send)

    return guarded


@dataclass
class _Session:
    principal: str
    last_used: float
    in_flight: int = 0


class SessionBook:
    """ASGI middleware: which client opened each MCP session, and a cap per client.

    Args:
        app: the streamable-HTTP app (session manager inside).
        limits: :attr:`~.limits.ServeLimits.max_sessions_per_client`.
        on_end: called with a session id the book ended or found gone (the gateway forgets the
            client state kept for it).
    """

    def __init__(self, app: ASGIApp, limits: ServeLimits, on_end: Callable[[str], None]) -> None:
        self.app = app
        self.cap = limits.max_sessions_per_client
        self.on_end = on_end
        self.sessions: dict[str, _Session] = {}
        self._opening: dict[str, int] = {}

    def count(self, principal: str) -> int:
        """Sessions ``principal`` holds, and opens right now."""
        return sum(1 for s in self.sessions.values() if s.principal == principal) + self._opening.get(principal, 0)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = scope.get(PRINCIPAL_KEY)
        if scope["type"] != "http" or not isinstance(principal, str):
            await self.app(scope, receive, send)
            return
        raw = _header(scope, SESSION_HEADER)
        if raw is None:
            await self._open(principal, scope, receive, send)
            return
        sid = raw.decode("latin-1")
        session = self.sessions.get(sid)
        if session is not None and session.principal != principal:
            await _answer(
                send, 404, {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}}
            )
            return
        counted = session is not None and scope.get("method") != "GET"  # a GET is the session's one event stream
        if session is not None:
            session.last_used = anyio.current_time()
            session.in_flight += counted
        try:
            status = await _status_of(self.app, scope, receive, send)
        finally:
            if session is not None:
                session.in_flight -= counted
        if session is not None and (status == 404 or scope.get("method") == "DELETE"):
            self._forget(sid)

    async def _open(self, principal: str, scope: Scope, receive: Receive, send: Send) -> None:
        """A request without a session id: an ``initialize`` that opens one (room is made first).
        A 2026-07-28 request (sessionless, its version in the header) opens none."""
        version = _header(scope, b"mcp-protocol-version")
        if scope.get("method") != "POST" or (
            version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS
        ):
            await self.app(scope, receive, send)
            return
        while self.count(principal) >= self.cap and await self._end_one(principal):
            pass
        self._opening[principal] = self._opening.get(principal, 0) + 1
        opened: list[str] = []

        async def watch(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start" and message.get("status", 500) < 400:
                sid = dict(message.get("headers") or []).get(SESSION_HEADER)
                if sid:
                    opened.append(bytes(sid).decode("latin-1"))
                    self.sessions[opened[0]] = _Session(principal, anyio.current_time())
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            self._opening[principal] -= 1
            if not self._opening[principal]:
                del self._opening[principal]

    async def _end_one(self, principal: str) -> bool:
        """End ``principal``'s least recently used idle session (else its least recently used);
        False when it has none (its sessions are all still opening)."""
        mine = [(s.in_flight > 0, s.last_used, sid) for sid, s in self.sessions.items() if s.principal == principal]
        if not mine:
            return False
        sid = min(mine)[2]
        self._forget(sid)
        await self._delete(sid, principal)
        return True

    def _forget(self, sid: str) -> None:
        if self.sessions.pop(sid, None) is not None:
            self.on_end(sid)

    async def _delete(self, sid: str, principal: str) -> None:
        """End session ``sid`` in the SDK as its client would: a DELETE on it."""
        scope: Scope = {
            "type": "http",
            "method": "DELETE",
            "path": "/mcp",
            "raw_path": b"/mcp",
            "root_path": "",
            "query_string": b"",
            "scheme": "http",
            "http_version": "1.1",
            "client": None,
            "server": None,
            "headers": [(b"host", b"127.0.0.1"), (SESSION_HEADER, sid.encode())],
            PRINCIPAL_KEY: principal,
            "user": AuthenticatedUser(AccessToken(token="", client_id=principal, scopes=[])),
        }

        async def receive() -> MutableMapping[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(message: MutableMapping[str, Any]) -> None:
            return None

        await self.app(scope, receive, discard)


async def _status_of(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> int | None:
    status: list[int] = []

    async def watch(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status.append(int(message.get("status", 0)))
        await send(message)

    await app(scope, receive, watch)
    return status[0] if status else None


def session_id_of(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The ``Mcp-Session-Id`` of a request context's HTTP request, if any."""
    request = ctx.request
    headers = getattr(request, "headers", None)
    value = headers.get("mcp-session-id") if headers is not None else None
    return value if isinstance(value, str) else None


class InFlight:
    """Server middleware: a request over the in-flight caps of its session or client is refused
    (JSON-RPC error :data:`TOO_MANY_IN_FLIGHT`) instead of queued. Stdio has neither and is not
    limited."""

    def __init__(self, limits: ServeLimits) -> None:
        self.per_session = limits.max_in_flight_per_session
        self.per_client = limits.max_in_flight_per_client
        self.counts: dict[str, int] = {}

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        principal = principal_of(ctx.request)
        if ctx.request_id is None or principal is None:
            return await call_next(ctx)
        sid = session_id_of(ctx)
        keys = [(f"client {principal}", self.per_client, "serve.maxInFlightPerClient")]
        if sid is not None:
            keys.append((f"session {sid}", self.per_session, "serve.maxInFlightPerSession"))
        for key, cap, setting in keys:
            if self.counts.get(key, 0) >= cap:
                raise MCPError(
                    TOO_MANY_IN_FLIGHT,
                    f"toolscout serve: {cap} requests of this "
                    f"{key.split()[0]} are being served already ({setting}); send this one once "
                    "one of them has been answered",
                )
        for key, _, _ in keys:
            self.counts[key] = self.counts.get(key, 0) + 1
        try:
            return await call_next(ctx)
        finally:
            for key, _, _ in keys:
                self.counts[key] -= 1
                if not self.counts[key]:
                    del self.counts[key]


def request_state_boundary() -> RequestStateBoundary:
    """The SDK's sealing of 2026-07-28 ``requestState`` under a key made at start, bound to the
    request's principal: a permission answer only counts with the state this gateway gave that
    client for that very call (a state written by the client, or another client's, is refused)."""

    def principal(ctx: ServerRequestContext[Any, Any]) -> str | None:
        return principal_of(ctx.request)

    return RequestStateBoundary(
        RequestStateSecurity(keys=[os.urandom(32)], bind_principal=principal), default_audience="toolscout serve"
    )
