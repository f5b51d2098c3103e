"""The operator's endpoints of ``toolscout serve --http``: ``/healthz``, ``/readyz``, ``/metrics``.

- ``GET /healthz`` (liveness): 200 ``{"status": "ok"}`` while the process answers.
- ``GET /readyz`` (readiness): 200 ``{"status": "ready"}`` once the upstream servers have been
  started, none is still connecting and the search index is built (:meth:`Operations.ready`);
  503 ``{"status": "starting"}`` before, and 503 ``{"status": "draining"}`` from SIGTERM on
  (:mod:`.drain`), so a load balancer moves new requests away before the replica stops.
- ``GET /metrics``: the Prometheus text exposition of :class:`~.metrics.GatewayMetrics`.

Both health endpoints need no token and say nothing more than the status word (no tool,
server or client names, no commands), so a balancer can probe them; they are answered under
the same transport deadlines and connection caps as MCP requests (:mod:`.guard`), and such a
connection never counts as an accepted client there. ``/metrics`` carries counts only, yet is
authenticated: with ``--metrics-token`` (or ``TOOLSCOUT_METRICS_TOKEN``) a scraper sends that
token (``Authorization: Bearer``); without one it needs what an MCP request needs (one of the
``--token`` values; on a loopback bind without tokens, a process of this user). Its Host and
Origin are checked as for ``/mcp`` (DNS-rebinding protection). Other methods get 405.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .clients import ASGIApp, Receive, Scope, Send, principal_of, session_id_of
from .metrics import CONTENT_TYPE, GatewayMetrics, RequestObserver
from .ops_options import OpsOptions

if TYPE_CHECKING:
    from .drain import DrainingServer
    from .server import Gateway

HEALTH_PATHS = ("/healthz", "/readyz")
METRICS_PATH = "/metrics"


class Operations:
    """The gateway's readiness, drain state, metrics and request log.

    Args:
        gateway: the :class:`~.server.Gateway` served.
        options: :class:`OpsOptions`.
        tokens: the MCP bearer tokens (for the request log's client ids).
    """

    def __init__(self, gateway: Gateway, options: OpsOptions, tokens: Sequence[str] = ()) -> None:
        from .access_log import JsonLog

        self.gateway = gateway
        self.options = options
        #: set on SIGTERM (:mod:`.drain`): /readyz answers 503 from then on
        self.draining = False
        #: HTTP requests being answered, but ``GET`` (event streams that never end on their own)
        self.http_in_flight = 0
        self.log = JsonLog(tokens) if options.log_format == "json" else None
        if self.log is not None:
            self.log.adopt("uvicorn", "uvicorn.error", "toolscout", "mcp")  # mcp: the SDK (e.g. "Invalid Host header")
        engine = gateway.engine
        self.observer = RequestObserver([], principal_of, session_id_of)
        self.metrics = GatewayMetrics(
            servers=lambda: [s.state for s in engine.pool.statuses()],
            tools=lambda: len(gateway.mcp_tools()),
            index_built_at=self.index_built_at,
            ready=self.ready,
            in_flight=lambda: self.observer.in_flight,
        )
        self.observer.sinks.append(self.metrics.observe)
        if self.log is not None:
            self.observer.sinks.append(self.log.record)

    def ready(self) -> bool:
        """Ready for traffic: not draining, the search index built, and every server started
        and none still connecting (a search answers from the whole catalog at once). With a
        prebuilt index (``--index``) the catalog is whole from the start: servers still
        connecting do not hold readiness back."""
        engine = self.gateway.engine
        return (
            not self.draining
            and self.gateway.starting.indexed_at is not None
            and (engine.prebuilt is not None or not engine.pending_servers())
        )

    def index_built_at(self) -> float | None:
        """When the search index in use was built (``time.time()``): a prebuilt index's
        ``created``, else when this gateway built its own; None before it is in use."""
        built = self.gateway.starting.indexed_at
        prebuilt = self.gateway.engine.prebuilt
        if built is None or prebuilt is None:
            return built
        try:
            return datetime.fromisoformat(str(prebuilt.manifest.get("created"))).timestamp()
        except ValueError:
            return built

    def status(self) -> str:
        """``ready``, ``starting`` or ``draining``."""
        return "draining" if self.draining else "ready" if self.ready() else "starting"

    def start_drain(self) -> None:
        """SIGTERM arrived (called from the signal handler): ``/readyz`` answers 503 from now on."""
        self.draining = True

    def drained(self, server: DrainingServer) -> None:
        """The HTTP server stopped: after a drain, say so with how many requests were answered
        (a JSON ``drained`` line with the count per method, or text on stderr)."""
        if not self.draining:
            return
        started = server.drain_started
        seconds = round(time.monotonic() - started, 3) if started is not None else None
        methods = self.metrics.by_method()
        answered = sum(methods.values())
        if not self.say("drained", requests=answered, methods=methods, seconds=seconds):
            print(f"toolscout serve: drained: {answered} requests answered", file=sys.stderr, flush=True)

    def say(self, message: str, *, level: int = logging.INFO, **fields: Any) -> bool:
        """Write ``message`` as a JSON line with ``fields`` when logging JSON; False otherwise (the
        caller prints its text line)."""
        if self.log is None:
            return False
        self.log.event(message, level=level, **fields)
        return True

    def wrap(self, app: ASGIApp, authenticate: Callable[[ASGIApp, Sequence[str]], ASGIApp], security: Any) -> ASGIApp:
        """``app`` (the authenticated MCP app) with the endpoints of the module docstring in front.

        Args:
            authenticate: wraps an ASGI app in the MCP authentication with the given tokens
                (``[]``: the MCP tokens themselves, or the local-user check).
            security: the ``TransportSecuritySettings`` of ``/mcp`` (Host and Origin checks).
        """
        from mcp.server.transport_security import TransportSecurityMiddleware
        from starlette.requests import Request

        checks = TransportSecurityMiddleware(security)

        async def metrics(scope: Scope, receive: Receive, send: Send) -> None:
            refused = await checks.validate_request(Request(scope, receive), is_post=False)
            if refused is not None:
                await refused(scope, receive, send)
                return
            await _reply(send, 200, self.metrics.render(), CONTENT_TYPE)

        token = self.options.metrics_token
        guarded_metrics = authenticate(metrics, [token] if token else [])

        async def front(scope: Scope, receive: Receive, send: Send) -> None:
            path = scope.get("path") if scope["type"] == "http" else None
            if path not in (*HEALTH_PATHS, METRICS_PATH):
                counted = scope["type"] == "http" and scope.get("method") != "GET"
                self.http_in_flight += counted
                try:
                    await app(scope, receive, send)
                finally:
                    self.http_in_flight -= counted
                return
            if scope.get("method") not in ("GET", "HEAD"):
                await _reply(send, 405, b'{"error": "method not allowed"}', "application/json", [(b"allow", b"GET")])
                return
            if path == METRICS_PATH:
                await guarded_metrics(scope, receive, send)
                return
            word = "ok" if path == "/healthz" else self.status()
            status = 200 if word in ("ok", "ready") else 503
            await _reply(send, status, json.dumps({"status": word}).encode(), "application/json")

        return front


async def _reply(
    send: Send, status: int, body: bytes, content_type: str, headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", content_type.encode()), (b"cache-control", b"no-store"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})
