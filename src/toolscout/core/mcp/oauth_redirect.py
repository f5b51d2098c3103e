"""The loopback redirect listener of a login (:mod:`.oauth`): where the browser comes back with
the authorization code (RFC 8252 §7.3: a loopback IP address, any port; here ``127.0.0.1`` and a
free port unless the config names one)."""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import parse_qs, urlparse

from mcp.shared.auth import AuthorizationCodeResult

from ..sanitize import escape_all

#: How long a login waits for the browser to come back to the loopback redirect (s).
LOGIN_WAIT_S = 300.0
#: The loopback redirect's path.
CALLBACK_PATH = "/callback"
#: Bound on reading one request of the loopback listener (s).
_READ_S = 10.0


class LoginRefused(Exception):
    """The authorization server sent the browser back with an error (the person said no ...)."""


class LoopbackRedirect:
    """The login's redirect listener: HTTP on ``127.0.0.1`` (a free port unless one is given),
    accepting one redirect per authorization request: the one that carries that request's
    ``state`` (any other request is answered 400 and ignored). Used as ``async with``.

    Args:
        port: the port to listen on (0: a free one).
    """

    def __init__(self, port: int = 0) -> None:
        self.port = port
        self._server: asyncio.Server | None = None
        self._state: str | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None

    async def __aenter__(self) -> LoopbackRedirect:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    @property
    def redirect_uri(self) -> str:
        """``http://127.0.0.1:PORT/callback``."""
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    def expect(self, state: str) -> None:
        """Wait for the redirect that carries ``state`` (the authorization request's)."""
        self._state = state
        self._result = asyncio.get_running_loop().create_future()

    async def wait(self, timeout: float = LOGIN_WAIT_S) -> AuthorizationCodeResult:
        """The expected redirect's code, state and issuer.

        Raises:
            TimeoutError: none came within ``timeout`` s. LoginRefused: it carried an error.
        """
        if self._result is None:
            raise RuntimeError("no authorization request is waiting for its redirect")
        try:
            return await asyncio.wait_for(asyncio.shield(self._result), timeout)
        except TimeoutError:
            raise TimeoutError(f"the browser did not come back to {self.redirect_uri} within {timeout:g} s") from None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), _READ_S)
            while (await asyncio.wait_for(reader.readline(), _READ_S)).strip():
                pass  # the headers say nothing this listener needs
            status, text = self._take(line.decode("latin-1"))
        except (TimeoutError, OSError, UnicodeError):
            status, text = 400, "bad request"
        body = f"<!doctype html><title>toolscout</title><p>{text}</p>".encode()
        head = f"HTTP/1.1 {status} {'OK' if status == 200 else 'Bad Request'}\r\n"
        head += f"Content-Type: text/html; charset=utf-8\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        with contextlib.suppress(OSError):
            writer.write(head.encode() + body)
            await writer.drain()
            writer.close()

    def _take(self, request_line: str) -> tuple[int, str]:
        method, _, rest = request_line.partition(" ")
        target = urlparse(rest.rpartition(" ")[0] or rest)
        if method != "GET" or target.path != CALLBACK_PATH:
            return 400, "not a login redirect"
        query = {k: v[0] for k, v in parse_qs(target.query).items()}
        result = self._result
        if result is None or result.done() or query.get("state") != self._state:
            return 400, "this redirect does not belong to the login toolscout is waiting for; ignored"
        if "error" in query:
            reason = query["error"] + (f": {query['error_description']}" if "error_description" in query else "")
            result.set_exception(LoginRefused(f"the authorization server refused the login ({escape_all(reason)})"))
            return 200, "The login was refused. You can close this tab."
        if not query.get("code"):
            return 400, "the redirect carries no authorization code"
        result.set_result(AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss")))
        return 200, "Logged in: you can close this tab and go back to toolscout."
