"""The ``serve.*`` settings: the limits of ``toolscout serve --http`` (issue 28 item 3), read by
:class:`toolscout.core.gateway.limits.ServeLimits`. Each entry is a
:class:`~toolscout.core.settings.layers.Key`'s fields (name, default, check, doc); kept apart from
:mod:`.layers` so that module stays one screenful per concern.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .checks import _number

SERVE_KEYS: tuple[tuple[str, Any, Callable[[Any], Any], str], ...] = (
    (
        "serve.headerTimeout",
        10.0,
        _number(0.1, 3600, lo_open=True),
        "serve --http: seconds a connection has to send a complete request head (slowloris, idle sockets)",
    ),
    (
        "serve.bodyTimeout",
        30.0,
        _number(0.1, 3600, lo_open=True),
        "serve --http: seconds a request has, from its head, to send its whole body",
    ),
    (
        "serve.writeTimeout",
        30.0,
        _number(0.1, 3600, lo_open=True),
        "serve --http: seconds an answer may wait for a client that stopped reading before the connection is dropped",
    ),
    (
        "serve.maxConnections",
        512,
        _number(8, 1_000_000, integer=True),
        "serve --http: open connections (kept below the open-file limit); over it the oldest idle one is closed",
    ),
    (
        "serve.maxUnauthenticated",
        64,
        _number(1, 1_000_000, integer=True),
        "serve --http: connections that have not yet made an accepted request; over it the oldest is closed",
    ),
    (
        "serve.maxSessionsPerClient",
        32,
        _number(1, 100_000, integer=True),
        "serve --http: MCP sessions per client (token, or local user); its own idle or oldest one makes room",
    ),
    (
        "serve.maxInFlightPerSession",
        16,
        _number(1, 100_000, integer=True),
        "serve --http: requests of one MCP session being served at once; more are refused until one ends",
    ),
    (
        "serve.maxInFlightPerClient",
        64,
        _number(1, 1_000_000, integer=True),
        "serve --http: requests of one client (token, or local user) being served at once",
    ),
)
