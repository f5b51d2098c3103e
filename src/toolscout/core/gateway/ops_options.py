"""The options of ``toolscout serve --http``'s operator surface (a light module: the CLI reads
its defaults without importing the server)."""

from __future__ import annotations

from dataclasses import dataclass

#: Environment variable read when ``--metrics-token`` is not given.
METRICS_TOKEN_ENV = "TOOLSCOUT_METRICS_TOKEN"
#: Default seconds in-flight requests get to finish after SIGTERM closed the listener.
DEFAULT_DRAIN_TIMEOUT_S = 20.0
#: Default seconds ``/readyz`` answers 503 before the listener closes (HAProxy's default check
#: interval is 2 s; set it above your balancer's interval times its failure count).
DEFAULT_DRAIN_DELAY_S = 2.0


@dataclass
class OpsOptions:
    """How the operator's surface behaves (``serve`` flags).

    Attributes:
        log_format: ``text`` (warnings only) or ``json`` (a line per request, :mod:`.access_log`).
        metrics_token: the token ``/metrics`` needs instead of the MCP authentication.
        drain_timeout: seconds in-flight requests get after the listener closed (SIGTERM).
        drain_delay: seconds ``/readyz`` answers 503 before the listener closes, while requests
            are still served: longer than the balancer's health-check interval.
    """

    log_format: str = "text"
    metrics_token: str | None = None
    drain_timeout: float = DEFAULT_DRAIN_TIMEOUT_S
    drain_delay: float = DEFAULT_DRAIN_DELAY_S
