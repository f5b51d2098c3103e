"""What ``toolscout serve --http`` counts, for ``/metrics`` (Prometheus text format) and the
JSON request log.

Every MCP request (not notifications) passes :class:`RequestObserver`, the outermost server
middleware: it times the request, classifies its outcome and hands the record to the
metrics (:class:`GatewayMetrics`) and, with ``--log-format json``, to the request log
(:mod:`.access_log`). Outcomes (label ``outcome``):

- ``ok``: a result; ``tool_error``: a ``tools/call`` result with ``isError`` (a refused or
  failed upstream call: the gateway answers every call); ``input_required``: a 2026-07-28
  ``InputRequiredResult`` (the client must answer a permission question first);
- ``error``: a JSON-RPC error (an unknown method, bad parameters, over the in-flight caps).

Series (one :class:`~prometheus_client.CollectorRegistry` per gateway, never the process-wide
one: tests run many gateways in one process):

==========================================  ========  ==================================================
``toolscout_requests_total``                counter   MCP requests by ``method`` and ``outcome``
``toolscout_search_duration_seconds``       histogram search tool calls
``toolscout_call_duration_seconds``         histogram upstream tool calls (call tool, exposed tools)
``toolscout_in_flight_requests``            gauge     MCP requests being answered now
``toolscout_upstream_servers``              gauge     configured upstream servers by ``state``
``toolscout_tools``                         gauge     upstream tools in the catalog
``toolscout_index_age_seconds``             gauge     age of the search index in use (absent until built)
``toolscout_ready``                         gauge     1 while ``/readyz`` answers 200
==========================================  ========  ==================================================

Labels carry no tool, server or client names: a method name (a fixed set; anything else is
counted as ``other``), a state, an outcome.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from ..models import ServerState
from .served import SEARCH_TOOL

#: The ``Content-Type`` of ``/metrics`` (Prometheus text exposition format 0.0.4).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: Seconds; search is local CPU work, calls wait on upstream servers (up to minutes).
SEARCH_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
CALL_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
#: Method names counted under their own label (MCP 2025-11-25 and 2026-07-28 client requests).
KNOWN_METHODS = frozenset(
    {
        "initialize",
        "ping",
        "server/discover",
        "subscriptions/listen",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
        "tasks/get",
        "tasks/list",
        "tasks/result",
        "tasks/cancel",
    }
)


@dataclass(frozen=True)
class RequestRecord:
    """One answered MCP request.

    Attributes:
        method: the JSON-RPC method as sent (untrusted text; :attr:`label` is the bounded form).
        outcome: see the module docstring.
        seconds: from the request entering the server middleware to its answer.
        tool: for ``tools/call``, the tool called (``search``/``call`` tool or an exposed one) and,
            through the call tool, the upstream tool named (untrusted text); else None.
        principal: the client (:mod:`.clients`), None over stdio.
        session: the ``Mcp-Session-Id``, None when stateless.
        request_id: the JSON-RPC id.
    """

    method: str
    outcome: str
    seconds: float
    tool: str | None
    principal: str | None
    session: str | None
    request_id: Any

    @property
    def label(self) -> str:
        """The method as a metric label: a known method's name, else ``other``."""
        return self.method if self.method in KNOWN_METHODS else "other"


def outcome_of(result: HandlerResult) -> str:
    """``ok``, ``tool_error`` or ``input_required`` for a handler's result (a model or dict)."""
    if isinstance(result, dict):
        if result.get("isError") is True:
            return "tool_error"
        return "input_required" if result.get("resultType") == "input_required" else "ok"
    if isinstance(result, types.CallToolResult) and result.is_error:
        return "tool_error"
    return "input_required" if isinstance(result, types.InputRequiredResult) else "ok"


def _tool_of(ctx: ServerRequestContext[Any, Any]) -> str | None:
    if ctx.method != "tools/call" or not ctx.params:
        return None
    name = ctx.params.get("name")
    if not isinstance(name, str):
        return None
    args = ctx.params.get("arguments")
    target = args.get("name") if isinstance(args, dict) else None
    shown = f"{name} {target}" if isinstance(target, str) else name
    return shown[:300]


class RequestObserver:
    """Server middleware (outermost): times and classifies every MCP request and hands each
    :class:`RequestRecord` to ``sinks``. Over stdio, and for notifications, it only passes through.

    Args:
        sinks: called with each record once answered (the metrics, the request log).
        principal: the client of a request context (:func:`.clients.principal_of`).
        session: its session id (:func:`.clients.session_id_of`).
    """

    def __init__(
        self,
        sinks: list[Callable[[RequestRecord], None]],
        principal: Callable[[Any], str | None],
        session: Callable[[ServerRequestContext[Any, Any]], str | None],
    ) -> None:
        self.sinks = sinks
        self.principal = principal
        self.session = session
        #: MCP requests being answered now
        self.in_flight = 0

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.request_id is None:
            return await call_next(ctx)
        start = time.perf_counter()
        outcome = "error"
        self.in_flight += 1
        try:
            result = await call_next(ctx)
            outcome = outcome_of(result)
            return result
        finally:
            self.in_flight -= 1
            record = RequestRecord(
                ctx.method,
                outcome,
                time.perf_counter() - start,
                _tool_of(ctx),
                self.principal(ctx.request),
                self.session(ctx),
                ctx.request_id,
            )
            for sink in self.sinks:
                sink(record)


class GatewayMetrics:
    """The gateway's Prometheus series (module docstring) in a registry of its own.

    Args:
        servers: the configured upstream servers' states now (one :class:`ServerState` each).
        tools: how many upstream tools the catalog holds now.
        index_built_at: when (``time.time()``) the search index in use was built, None before.
        ready: whether the gateway is ready (``/readyz``).
        in_flight: MCP requests being answered now.
    """

    def __init__(
        self,
        *,
        servers: Callable[[], list[ServerState]],
        tools: Callable[[], int],
        index_built_at: Callable[[], float | None],
        ready: Callable[[], bool],
        in_flight: Callable[[], int],
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "toolscout_requests",
            "MCP requests answered, by method and outcome",
            ["method", "outcome"],
            registry=self.registry,
        )
        self.search_seconds = Histogram(
            "toolscout_search_duration_seconds", "Search tool calls", buckets=SEARCH_BUCKETS, registry=self.registry
        )
        self.call_seconds = Histogram(
            "toolscout_call_duration_seconds", "Upstream tool calls", buckets=CALL_BUCKETS, registry=self.registry
        )
        in_flight_gauge = Gauge("toolscout_in_flight_requests", "MCP requests being answered", registry=self.registry)
        in_flight_gauge.set_function(lambda: float(in_flight()))
        self.registry.register(_StateCollector(servers, tools, index_built_at, ready))

    def observe(self, record: RequestRecord) -> None:
        """Count one answered request (a :class:`RequestObserver` sink)."""
        self.requests.labels(record.label, record.outcome).inc()
        if record.tool is not None:
            histogram = self.search_seconds if record.tool == SEARCH_TOOL else self.call_seconds
            histogram.observe(record.seconds)

    def by_method(self) -> dict[str, int]:
        """MCP requests answered so far per method label (all outcomes)."""
        counts: dict[str, int] = {}
        for family in self.requests.collect():
            for s in family.samples:
                if s.name == "toolscout_requests_total":
                    counts[s.labels["method"]] = counts.get(s.labels["method"], 0) + int(s.value)
        return counts

    def render(self) -> bytes:
        """The text exposition of every series (for ``GET /metrics``)."""
        return generate_latest(self.registry)


class _StateCollector(Collector):
    """Series read at scrape time: upstream states, tools, index age, readiness."""

    def __init__(
        self,
        servers: Callable[[], list[ServerState]],
        tools: Callable[[], int],
        index_built_at: Callable[[], float | None],
        ready: Callable[[], bool],
    ) -> None:
        self.servers, self.tools, self.index_built_at, self.ready = servers, tools, index_built_at, ready

    def collect(self) -> Iterator[GaugeMetricFamily]:
        states = GaugeMetricFamily(
            "toolscout_upstream_servers", "Configured upstream servers by state", labels=["state"]
        )
        now = self.servers()
        for state in ServerState:
            states.add_metric([state.value], float(sum(1 for s in now if s is state)))
        yield states
        yield GaugeMetricFamily("toolscout_tools", "Upstream tools in the catalog", value=float(self.tools()))
        built = self.index_built_at()
        if built is not None:
            yield GaugeMetricFamily(
                "toolscout_index_age_seconds", "Age of the search index in use", value=max(0.0, time.time() - built)
            )
        yield GaugeMetricFamily("toolscout_ready", "1 while /readyz answers 200", value=1.0 if self.ready() else 0.0)
