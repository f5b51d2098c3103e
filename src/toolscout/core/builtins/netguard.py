"""Egress guard for network built-ins: no loopback, link-local or private addresses by default.

A URL's host is resolved and *every* address it resolves to must be public (globally routable,
not multicast); otherwise the connection is refused, unless the person's settings name that host
explicitly (``WebFetch(domain:localhost)``). The check runs inside the HTTP client's network
backend, on the very addresses it then connects to, so it also holds after each redirect and
against DNS answers that change between a check and the connection (DNS rebinding).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Callable, Iterable
from typing import Any

import httpcore


def is_public(address: str) -> bool:
    """True for a globally routable unicast address (``8.8.8.8``); False for loopback, private,
    link-local, CGNAT, unspecified, reserved, multicast and IPv4-mapped forms of them."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


async def resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (an IP literal resolves to itself).

    Raises:
        OSError: the name does not resolve.
    """
    literal = host.strip("[]")
    try:
        return [str(ipaddress.ip_address(literal))]
    except ValueError:
        pass
    infos = await asyncio.get_running_loop().getaddrinfo(literal, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def private_addresses(host: str, timeout: float) -> list[str]:
    """The addresses of ``host`` that are not public (loopback, private, link-local ...), resolved
    within ``timeout`` seconds; ``[]`` for a public host, one that does not resolve, or when the
    resolution takes longer. What a permission prompt uses to say that a rule naming ``host``
    lifts this guard for it."""
    try:
        addresses = await asyncio.wait_for(resolve(host, 443), timeout)
    except (OSError, TimeoutError, UnicodeError):
        return []
    return [a for a in addresses if not is_public(a)]


class EgressRefused(Exception):
    """A connection to a non-public address that no rule allows."""


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """An httpcore network backend that connects only to public addresses.

    Args:
        allowed: ``allowed(host) -> bool``: hosts the person named explicitly (they may be private).

    Attributes:
        refusals: one message per refused connection (the client raises a generic ConnectError).
    """

    def __init__(self, allowed: Callable[[str], bool]) -> None:
        self._inner = httpcore.AnyIOBackend()
        self._allowed = allowed
        self.refusals: list[str] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Resolve ``host``, refuse it if any address is not public, then connect to that address."""
        addresses = await resolve(host, port)
        if not addresses:
            raise httpcore.ConnectError(f"{host} does not resolve")
        private = [a for a in addresses if not is_public(a)]
        name = host.lower().strip("[]")
        if private and not self._allowed(name):
            rule = f"WebFetch(domain:{name})"
            message = (
                f"{host} resolves to {', '.join(private)}, a loopback, link-local or private address. "
                "Network tools never connect to such an address, even when the call itself is allowed, "
                f'unless an allow rule in settings names the host: add "{rule}" to permissions.allow '
                f'(user settings, or .toolscout/settings.local.json in a trusted folder), or pass --allowed-tools "{rule}".'
            )
            self.refusals.append(message)
            raise httpcore.ConnectError(message)
        # Connect to the address just checked, not to a second lookup of the name.
        return await self._inner.connect_tcp(
            addresses[0], port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        """Never: unix sockets are local."""
        raise httpcore.ConnectError("unix sockets are not reachable from network tools")

    async def sleep(self, seconds: float) -> None:
        """Delegate to the real backend."""
        await self._inner.sleep(seconds)


def guarded_client(allowed: Callable[[str], bool], timeout: float) -> tuple[Any, GuardedBackend]:
    """An ``httpx.AsyncClient`` whose every connection goes through a :class:`GuardedBackend`.

    Redirects are not followed (the caller checks each hop), and proxy environment variables are
    ignored: a proxy would connect on our behalf, out of reach of the address check.
    """
    import httpx

    backend = GuardedBackend(allowed)
    transport = httpx.AsyncHTTPTransport(trust_env=False)
    transport._pool._network_backend = backend  # httpx has no public hook for the backend
    client = httpx.AsyncClient(transport=transport, timeout=timeout, follow_redirects=False, trust_env=False)
    return client, backend
