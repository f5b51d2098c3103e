"""``toolscout serve --log-format json``: one JSON object per line on stderr.

Each answered MCP request is one line (``"message": "request"``)::

    {"time": "2026-12-02T04:00:00.123+00:00", "level": "INFO", "message": "request",
     "method": "tools/call", "outcome": "ok", "duration_ms": 3.2, "tool": "search",
     "client": "5d41402abc4b2a76", "session": null, "id": 7}

- ``client``: the first 16 hex digits of the SHA-256 of the client's bearer token (or of its
  principal, :mod:`.clients`: ``uid:1000``, ``anyone``): the same client gets the same id on
  every replica and across restarts, and the token cannot be read back from it;
- ``session``: the ``Mcp-Session-Id`` (null when stateless);
- ``tool``, ``method``: untrusted text sent by the client, written as JSON strings (the ``json``
  module escapes quotes, control characters and line breaks: one request is one line).

The gateway's other stderr lines (warnings, ``listening``, ``drained``, and what uvicorn and the
gateway's modules log) are JSON objects of the same shape in this mode (:meth:`JsonLog.event`,
:meth:`JsonLog.adopt`). Formatting is python-json-logger's.
"""

from __future__ import annotations

import hashlib
import logging
import sys
from collections.abc import Sequence
from typing import IO, Any

from pythonjsonlogger.json import JsonFormatter

from .metrics import RequestRecord

LOG_FORMATS = ("text", "json")
#: Attribute names of a ``LogRecord`` (``extra`` may not set them) and the formatter's own.
_RECORD_KEYS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


def client_id(principal: str | None, tokens: Sequence[str]) -> str | None:
    """The logged id of ``principal`` (see the module docstring); None over stdio."""
    if principal is None:
        return None
    secret = principal
    if principal.startswith("token:"):
        index = int(principal.split(":", 1)[1]) - 1
        if 0 <= index < len(tokens):
            secret = tokens[index]
    return hashlib.sha256(secret.encode()).hexdigest()[:16]


class JsonLog:
    """Writes JSON lines to ``stream`` (default: stderr).

    Args:
        tokens: the gateway's bearer tokens, in ``--token`` order (for :func:`client_id`).
    """

    def __init__(self, tokens: Sequence[str] = (), stream: IO[str] | None = None) -> None:
        self.tokens = list(tokens)
        # a logger of its own, not registered by name: several gateways may run in one process
        self.logger = logging.Logger("toolscout.serve")
        self.handler = logging.StreamHandler(stream or sys.stderr)
        self.handler.setFormatter(
            JsonFormatter("{levelname}{message}", style="{", rename_fields={"levelname": "level"}, timestamp="time")
        )
        self.logger.addHandler(self.handler)

    def adopt(self, *names: str) -> None:
        """Write what the loggers ``names`` log (warnings and errors: uvicorn's, the MCP SDK's,
        the gateway's own) as JSON lines too, so that every stderr line is one JSON object. Changes those
        process-wide loggers: for the gateway's own process."""
        for name in names:
            logger = logging.getLogger(name)
            logger.addHandler(self.handler)
            logger.propagate = False

    def record(self, record: RequestRecord) -> None:
        """Log one answered request (a :class:`~.metrics.RequestObserver` sink)."""
        self.event(
            "request",
            method=record.method,
            outcome=record.outcome,
            duration_ms=round(record.seconds * 1000, 3),
            tool=record.tool,
            client=client_id(record.principal, self.tokens),
            session=record.session,
            id=record.request_id if isinstance(record.request_id, int | str) else None,
        )

    def event(self, message: str, *, level: int = logging.INFO, **fields: Any) -> None:
        """Log one line: ``message`` and ``fields`` (JSON-serializable values; a field named as
        a ``LogRecord`` attribute, such as ``created``, is written with a ``_`` after its name)."""
        safe = {f"{k}_" if k in _RECORD_KEYS else k: v for k, v in fields.items()}
        self.logger.log(level, message, extra=safe)
