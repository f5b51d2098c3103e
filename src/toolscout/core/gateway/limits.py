"""What ``toolscout serve --http`` sheds rather than holds: the limits, from the ``serve.*``
settings (docs/configuration.md lists them with their defaults).

Each limit exists because a client that was never served could otherwise lock out the ones that
are (issue 28 item 3): sockets that send nothing or one header byte a second
(:attr:`ServeLimits.header_timeout`), a body that never ends (:attr:`~ServeLimits.body_timeout`),
a reader that stops reading an answer (:attr:`~ServeLimits.write_timeout`), a flood of sockets
(:attr:`~ServeLimits.max_connections`, :attr:`~ServeLimits.max_unauthenticated`), of sessions
(:attr:`~ServeLimits.max_sessions_per_client`) or of requests
(:attr:`~ServeLimits.max_in_flight_per_session`, :attr:`~ServeLimits.max_in_flight_per_client`).
The transport enforces the first five (:mod:`.guard`), the session book the sessions
(:mod:`.clients`), a server middleware the requests in flight (:mod:`.clients`).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..settings.layers import Settings

#: Open files kept free of connections for everything else the gateway opens (upstream
#: servers' pipes, settings and catalog files, the search index), and the share of the
#: open-file limit that stays free when that limit is small.
FD_RESERVE = 64
FD_RESERVE_SHARE = 4


@dataclass(frozen=True)
class ServeLimits:
    """The gateway's HTTP limits; the defaults are those of the ``serve.*`` settings.

    Attributes:
        header_timeout: seconds from a connection's opening (or the end of its last answer)
            to a complete request head; then the connection is closed. Sending bytes does not
            extend it (a slowloris sending one byte a second is cut).
        body_timeout: seconds from a request's head to the end of its body.
        write_timeout: seconds an answer may stay unsendable (the client's receive window is
            full: it stopped reading) before the connection is dropped and the answer freed.
        max_connections: open connections; a new one over it closes the oldest idle one (no
            request being served), or is itself closed when every one is busy. Kept below the
            process's open-file limit (:meth:`connection_cap`).
        max_unauthenticated: connections that have not yet made an accepted request (right
            token, or a peer of this user); a new one over it closes the oldest such one.
        max_sessions_per_client: MCP sessions one client (see :mod:`.clients`) may hold; a new
            one over it ends that client's least recently used idle session (else its oldest),
            never another client's.
        max_in_flight_per_session: requests of one session being served at once.
        max_in_flight_per_client: requests of one client being served at once.
    """

    header_timeout: float = 10.0
    body_timeout: float = 30.0
    write_timeout: float = 30.0
    max_connections: int = 512
    max_unauthenticated: int = 64
    max_sessions_per_client: int = 32
    max_in_flight_per_session: int = 16
    max_in_flight_per_client: int = 64

    @classmethod
    def from_settings(cls, settings: Settings) -> ServeLimits:
        """The limits set in ``settings`` (invalid values were already replaced by defaults, with
        a warning, when they loaded)."""
        values: dict[str, Any] = {}
        for f in fields(cls):
            head, *rest = f.name.split("_")
            key = "serve." + head + "".join(word.capitalize() for word in rest)
            value = settings.get(key)
            if value is not None:
                values[f.name] = value
        return cls(**values)

    def connection_cap(self) -> int:
        """:attr:`max_connections`, lowered to fit the open-file limit (``RLIMIT_NOFILE``):
        a gateway that runs out of file descriptors accepts nothing, not even the connection
        that would be served. At least 8."""
        soft = _open_file_limit()
        if soft is None:
            return self.max_connections
        reserve = max(FD_RESERVE, soft // FD_RESERVE_SHARE)
        return max(8, min(self.max_connections, soft - reserve))

    def hard_connection_cap(self) -> int:
        """Open connections past which the oldest idle ones are closed at once, however young:
        twice :meth:`connection_cap`, but half the reserve of open files short of the limit."""
        cap, soft = self.connection_cap(), _open_file_limit()
        if soft is None:
            return 2 * cap
        reserve = max(FD_RESERVE, soft // FD_RESERVE_SHARE)
        return max(cap, min(2 * cap, soft - reserve // 2))


def _open_file_limit() -> int | None:
    """The soft ``RLIMIT_NOFILE`` (None where unknown or unlimited)."""
    with contextlib.suppress(ImportError, OSError, ValueError):
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and soft > 0:
            return int(soft)
    return None
