"""The gateway's HTTP connections: timeouts and caps at the transport, and who is on the other
end of a loopback connection.

uvicorn (0.54, h11) closes a connection that stays idle after an answer (``timeout_keep_alive``)
and bounds a request head's size (``h11_max_incomplete_event_size``), but starts no timer when a
connection opens and cancels its keep-alive timer on every byte received: a socket that sends
nothing, or one header byte a second, is held for ever, and about a thousand of them exhaust the
open-file limit so that no client, not even one with the token, is accepted any more. Its
``limit_concurrency`` counts those sockets too and answers everyone 503 beyond it, so it would
make the lock-out easier. :class:`GuardedH11Protocol` adds what is missing
(:class:`~.limits.ServeLimits`):

- a deadline for a complete request head from the connection's opening, and again from the end
  of each answer (after uvicorn's keep-alive timeout: its close is graceful); bytes received do
  not move it;
- a deadline for the body from the head;
- a deadline for an answer the client stopped reading (the transport's write buffer stays over
  its high-water mark, or holds bytes of which none went out between two checks): the
  connection is aborted and the buffered answer freed;
- caps on open connections and on connections that have not yet made an accepted request
  (:class:`ConnectionPool`): going over a cap closes the *oldest* idle ones (no request being
  read or answered), so a flood of idle sockets cannot lock a real client out: its connection
  has a request in progress when the sweep comes.

:func:`peer_uid` finds the user of the process at the other end of a loopback TCP connection
in ``/proc/net/tcp`` (Linux): the line whose local address is the peer's and remote address
ours carries the uid that created the peer's socket. ``SO_PEERCRED`` is for Unix sockets only.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from uvicorn.protocols.http.h11_impl import H11Protocol

from .limits import ServeLimits

#: Where Linux lists TCP sockets (IPv4, IPv6); see proc(5).
PROC_TCP = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
#: The ASGI scope key carrying the :class:`ConnectionInfo` of the request's connection.
SCOPE_KEY = "toolscout.connection"
#: Seconds between going over a connection cap and closing the oldest idle connections, and the
#: age a connection must have to be closed so (a real client's request is read by then).
SWEEP_DELAY_S = 0.1
GRACE_S = 1.0


def peer_credentials_available() -> bool:
    """True where :func:`peer_uid` can answer (``/proc/net/tcp`` is readable)."""
    return PROC_TCP[0].is_file()


def _proc_address(host: str, port: int) -> tuple[str, str]:
    """``host:port`` as /proc/net/tcp{,6} prints it: the address as 32-bit words in host byte
    order (``%08X`` each), then the port (``%04X``). Returns (ipv4 form or "", ipv6 form)."""
    address = ipaddress.ip_address(host.split("%")[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    words = struct.unpack("=4I", address.packed) if address.version == 6 else ()
    v4 = f"{struct.unpack('=I', address.packed)[0]:08X}:{port:04X}" if address.version == 4 else ""
    v6 = "".join(f"{w:08X}" for w in words) + f":{port:04X}" if words else ""
    if address.version == 4:  # an IPv4 peer of a dual-stack socket is listed mapped in tcp6
        mapped = struct.unpack("=4I", ipaddress.IPv6Address(f"::ffff:{address}").packed)
        v6 = "".join(f"{w:08X}" for w in mapped) + f":{port:04X}"
    return v4, v6


def peer_uid(peer: tuple[str, int], local: tuple[str, int]) -> int | None:
    """The uid that owns the socket at the other end of the TCP connection ``peer`` → ``local``
    (both ``(host, port)`` as the server sees them), when that socket is on this machine and in
    this network namespace; None otherwise (closed, not local, or no /proc)."""
    want = list(zip(_proc_address(*peer), _proc_address(*local), strict=True))
    for (mine, theirs), table in zip(want, PROC_TCP, strict=True):
        if not mine:
            continue
        try:
            lines = table.read_text(encoding="ascii", errors="replace").splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) > 9 and parts[1] == mine and parts[2] == theirs:
                return int(parts[7]) if parts[9] != "0" else None  # inode 0: orphaned, no owner
    return None


class ConnectionInfo:
    """What the ASGI layers know of a request's connection (``scope[SCOPE_KEY]``).

    Attributes:
        peer: the client's ``(host, port)``; local: ours.
        authenticated: a request on this connection was accepted (right token, or a local peer
            of this user); set by :mod:`.clients`.
    """

    def __init__(self, peer: tuple[str, int] | None, local: tuple[str, int] | None) -> None:
        self.peer, self.local = peer, local
        self.authenticated = False
        self._uid: int | None = None
        self._looked_up = False

    def uid(self) -> int | None:
        """The peer's uid (:func:`peer_uid`), looked up once per connection: the peer's port
        cannot be reused by another socket while this connection is open."""
        if not self._looked_up and self.peer is not None and self.local is not None:
            self._looked_up = True
            with contextlib.suppress(ValueError, OSError):
                self._uid = peer_uid(self.peer, self.local)
        return self._uid


class ConnectionPool:
    """The open connections, oldest first, and the caps of :class:`~.limits.ServeLimits`.

    Over a cap, the oldest idle connections at least :data:`GRACE_S` old are closed by a sweep
    :data:`SWEEP_DELAY_S` after the connection that went over (and again while younger ones keep
    the count over): a burst of accepts runs every ``connection_made`` before any connection's
    bytes are read, so deciding at once would close a real client's new connection whose request
    is already waiting to be read. By the sweep it has a request in progress and is kept; sockets
    that sent nothing, or half a head, are not. Past
    :meth:`~.limits.ServeLimits.hard_connection_cap` (a burst that would exhaust the open files),
    the sweep runs at once and spares no age.
    """

    def __init__(self, limits: ServeLimits) -> None:
        self.limits = limits
        self.cap = limits.connection_cap()
        self.hard_cap = limits.hard_connection_cap()
        self.open: dict[GuardedH11Protocol, None] = {}
        #: connections closed to make room (for tests and the benchmark's report)
        self.shed = 0
        self._sweep: asyncio.TimerHandle | None = None

    def admit(self, conn: GuardedH11Protocol) -> None:
        """Add ``conn``; sweep soon while a cap is exceeded (now, past the hard cap)."""
        self.open[conn] = None
        waiting = sum(1 for c in self.open if not c.info.authenticated)
        if len(self.open) > self.hard_cap:  # open files run out: no grace
            self.sweep(conn.loop.time(), hard=True)
        elif len(self.open) > self.cap or waiting > self.limits.max_unauthenticated:
            self._schedule(conn.loop, SWEEP_DELAY_S)

    def _schedule(self, loop: asyncio.AbstractEventLoop, delay: float) -> None:
        if self._sweep is None:
            self._sweep = loop.call_later(delay, lambda: self.sweep(loop.time()))

    def sweep(self, now: float, *, hard: bool = False) -> None:
        """Close the oldest idle connections (no request being read or answered) over the caps,
        not-yet-accepted ones first, each at least :data:`GRACE_S` old unless ``hard``."""
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        young = False

        def idle(c: GuardedH11Protocol) -> bool:
            nonlocal young
            if c.busy():
                return False
            if not hard and now - c.opened < GRACE_S:
                young = True
                return False
            return True

        waiting = [c for c in self.open if not c.info.authenticated and idle(c)]
        over = sum(1 for c in self.open if not c.info.authenticated) - self.limits.max_unauthenticated
        for old in waiting[: max(0, over)]:
            self._shed(old)
        if len(self.open) > self.cap:
            quiet = sorted((c for c in self.open if idle(c)), key=lambda c: c.info.authenticated)  # oldest first
            for old in quiet[: len(self.open) - self.cap]:
                self._shed(old)
        if young and (len(self.open) > self.cap or over > 0):
            loop = next(iter(self.open)).loop
            self._schedule(loop, GRACE_S)

    def remove(self, conn: GuardedH11Protocol) -> None:
        """Forget a closed connection."""
        self.open.pop(conn, None)

    def _shed(self, conn: GuardedH11Protocol) -> None:
        self.shed += 1
        self.remove(conn)
        conn.drop()


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the deadlines and caps of the module docstring. Use
    :func:`protocol_class` to bind it to a :class:`ConnectionPool`."""

    pool: ClassVar[ConnectionPool]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.info = ConnectionInfo(None, None)
        self.opened = 0.0
        self._unsent = 0
        self._timers: dict[str, asyncio.TimerHandle] = {}
        inner = self.app

        async def tagged(scope: Any, receive: Any, send: Any) -> None:
            scope[SCOPE_KEY] = self.info
            await inner(scope, receive, send)

        self.app = tagged

    # -- state ---------------------------------------------------------------------------------
    def busy(self) -> bool:
        """A request is being read or answered on this connection."""
        return self.cycle is not None and not self.cycle.response_complete

    def drop(self) -> None:
        """Close at once, discarding what is buffered for the peer (also after uvicorn's own
        ``close()``, which waits for that buffer to drain: for ever, if the peer stopped reading)."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        if self.transport is not None:
            self.transport.abort()

    def _arm(self, name: str, seconds: float, fire: Callable[[], None]) -> None:
        self._disarm(name)
        self._timers[name] = self.loop.call_later(seconds, fire)

    def _disarm(self, name: str) -> None:
        timer = self._timers.pop(name, None)
        if timer is not None:
            timer.cancel()

    # -- asyncio.Protocol ----------------------------------------------------------------------
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.info = ConnectionInfo(self.client, self.server)  # type: ignore[arg-type]
        self.opened = self.loop.time()
        with contextlib.suppress(OSError, AttributeError):  # answers go out as they are written
            transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._arm("head", self.pool.limits.header_timeout, self._head_late)
        self._arm("stall", self.pool.limits.write_timeout, self._check_stall)
        self.pool.admit(self)

    def data_received(self, data: bytes) -> None:
        before = self.cycle
        super().data_received(data)
        self._after_events(before)

    def _after_events(self, before: Any) -> None:
        cycle = self.cycle
        if cycle is not None and cycle is not before and not cycle.response_complete:
            self._disarm("head")
            if cycle.more_body:
                self._arm("body", self.pool.limits.body_timeout, self._body_late)
        if cycle is not None and not cycle.more_body:
            self._disarm("body")

    def on_response_complete(self) -> None:
        before = self.cycle
        super().on_response_complete()
        # also when closing: a close waits for the peer to read what is buffered. After uvicorn's
        # keep-alive close (graceful: a client about to reuse the connection sees it closed)
        self._arm("head", self.pool.limits.header_timeout + self.timeout_keep_alive, self._head_late)
        self._after_events(before)  # a pipelined request may have started

    def pause_writing(self) -> None:
        super().pause_writing()
        self._arm("write", self.pool.limits.write_timeout, self.drop)

    def resume_writing(self) -> None:
        super().resume_writing()
        self._disarm("write")

    def connection_lost(self, exc: Exception | None) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self.pool.remove(self)
        super().connection_lost(exc)

    # -- deadlines -----------------------------------------------------------------------------
    def _head_late(self) -> None:
        self._timers.pop("head", None)
        if not self.busy():
            self.drop()

    def _check_stall(self) -> None:
        """Every :attr:`~.limits.ServeLimits.write_timeout`: drop the connection when bytes wait
        to be sent and none went out since the last check (the peer stopped reading; below the
        transport's high-water mark no ``pause_writing`` says so)."""
        waiting = self.transport.get_write_buffer_size() if self.transport is not None else 0
        if waiting and waiting >= self._unsent:
            self.drop()
            return
        self._unsent = waiting
        self._arm("stall", self.pool.limits.write_timeout, self._check_stall)

    def _body_late(self) -> None:
        self._timers.pop("body", None)
        if self.cycle is not None and self.cycle.more_body:
            self.drop()


def protocol_class(pool: ConnectionPool) -> type[GuardedH11Protocol]:
    """A :class:`GuardedH11Protocol` subclass bound to ``pool`` (uvicorn's ``http=`` value)."""
    return type("GatewayH11Protocol", (GuardedH11Protocol,), {"pool": pool})
