"""OAuth 2.1 for remote (http/sse) MCP servers, with the ``mcp`` SDK's client
(``mcp.client.auth.OAuthClientProvider``): protected-resource and authorization-server metadata
discovery, dynamic client registration or a client ID metadata document, PKCE, the scopes of
``WWW-Authenticate``, step-up on ``403 insufficient_scope`` and refresh are the SDK's; toolscout adds
where the login is kept (:mod:`.oauth_store`), the loopback redirect listener
(:class:`LoopbackRedirect`), the browser, and the rule of when a login may happen.

That rule: a login is only ever started by the person (``toolscout mcp login NAME``, the app's
``/mcp login NAME``), never by connecting. A connection is *passive* (:class:`ServerAuth` with
``interactive=False``): it presents the stored token, refreshes it when it has expired, and on a
``401`` (or a ``403 insufficient_scope``) stops there: nothing is registered, no browser opens, and
the server is reported as needing a login, with what it asked for (:class:`AuthChallenge`). A
server with an ``Authorization`` header in its config uses that header and no OAuth.
"""

from __future__ import annotations

import asyncio
import contextlib
import webbrowser
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.utils import extract_field_from_www_auth
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata
from pydantic import AnyUrl

from ..sanitize import escape_all
from .oauth_store import FileTokenStorage
from .server_config import ServerConfig

#: How long a login waits for the browser to come back to the loopback redirect (s).
LOGIN_WAIT_S = 300.0
#: The loopback redirect's path.
CALLBACK_PATH = "/callback"
#: Bound on reading one request of the loopback listener (s).
_READ_S = 10.0


def login_command(server: str) -> str:
    """The command that logs in to ``server``."""
    return f"toolscout mcp login {server}"


def uses_oauth(config: ServerConfig) -> bool:
    """True for an http/sse server whose config sets no ``Authorization`` header (a static token)."""
    return config.transport in ("http", "sse") and not any(k.lower() == "authorization" for k in config.headers)


@dataclass(frozen=True)
class AuthChallenge:
    """A protected server's refusal: HTTP status and what its ``WWW-Authenticate`` header asked for.

    Attributes:
        status: 401 (no or a rejected token) or 403 (``insufficient_scope``: more scope needed).
        url: the URL that answered. scope: the scopes it named, or None.
        resource_metadata: its protected-resource metadata URL (RFC 9728), or None.
        error, error_description: the RFC 6750 error code and text, or None.
    """

    status: int
    url: str
    scope: str | None = None
    resource_metadata: str | None = None
    error: str | None = None
    error_description: str | None = None

    def describe(self, server: str) -> str:
        """One line for the person: status, what was asked, and the command to log in (every text
        from the server escaped, cut at 200 characters)."""
        what = "the login lacks the scope this needs" if self.status == 403 else "the server needs a login (OAuth)"
        parts = [f"HTTP {self.status} from {escape_all(self.url, limit=200)}: {what}"]
        if self.scope:
            parts.append(f"it asks for scope {escape_all(self.scope, limit=200)!r}")
        if self.resource_metadata:
            parts.append(f"resource metadata: {escape_all(self.resource_metadata, limit=200)}")
        if self.error:
            detail = f" ({escape_all(self.error_description, limit=200)})" if self.error_description else ""
            parts.append(f"error: {escape_all(self.error, limit=60)}{detail}")
        return "; ".join(parts) + f". Log in with: {login_command(server)}"


def challenge_of(response: httpx2.Response) -> AuthChallenge | None:
    """The :class:`AuthChallenge` of a ``401``, or of a ``403`` whose error is ``insufficient_scope``;
    None for any other response."""
    error = extract_field_from_www_auth(response, "error")
    if response.status_code != 401 and not (response.status_code == 403 and error == "insufficient_scope"):
        return None
    return AuthChallenge(
        status=response.status_code,
        url=str(response.request.url),
        scope=extract_field_from_www_auth(response, "scope"),
        resource_metadata=extract_field_from_www_auth(response, "resource_metadata"),
        error=error,
        error_description=extract_field_from_www_auth(response, "error_description"),
    )


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


class ServerAuth:
    """One connection's OAuth: passive (present, refresh; report a 401) or interactive (a login).

    Args:
        config: an http/sse server for which :func:`uses_oauth` holds.
        interactive: run the SDK's whole flow on a 401 (register, open the browser, wait for the
            redirect): only when the person asked to log in.
        notify: gets each line to show the person during a login (the URL opened ...).
        on_failure: called once when the login fails (the connection stops waiting then).

    Attributes:
        challenge: the last refusal of the MCP endpoint (None: none, or it was answered by a login).
        failure: why the login failed, or None.
    """

    def __init__(
        self,
        config: ServerConfig,
        *,
        interactive: bool = False,
        notify: Callable[[str], None] | None = None,
        on_failure: Callable[[], None] | None = None,
    ) -> None:
        self.config = config
        self.interactive = interactive
        self.notify = notify or (lambda _line: None)
        self.on_failure = on_failure
        self.challenge: AuthChallenge | None = None
        self.challenges = 0
        self.failure: str | None = None
        self.listener: LoopbackRedirect | None = None
        options = config.oauth
        self._preset_id = options.client_id if options else None
        self.storage = FileTokenStorage(config.name, config.url)

    @property
    def needs_login(self) -> bool:
        """True when the server refused and no login answered it (or the login failed)."""
        return self.challenge is not None or self.failure is not None

    def describe(self) -> str | None:
        """The refusal or the login's failure as one line for the person, or None."""
        if self.failure is not None:
            return f"{self.failure}. Try again with: {login_command(self.config.name)}"
        return self.challenge.describe(self.config.name) if self.challenge is not None else None

    def unfinished(self, timeout: float) -> str | None:
        """Why a connect that ran out of time did not connect, when OAuth is the reason: the
        refusal or the failure (:meth:`describe`), or for a login, that it did not finish."""
        if self.interactive and self.failure is None and self.challenge is not None:
            return (
                f"the login to {self.config.name} did not finish within {timeout:g} s (nothing came back "
                f"to the loopback redirect). Try again with: {login_command(self.config.name)}"
            )
        return self.describe()

    def record(self, challenge: AuthChallenge | None) -> None:
        """Note the MCP endpoint's answer: a refusal, or (None) one that let the request through."""
        if challenge is not None:
            self.challenges += 1
        self.challenge = challenge

    def fail(self, exc: BaseException) -> None:
        """Note that the login failed with ``exc`` and tell :attr:`on_failure`."""
        text = str(exc) or type(exc).__name__
        self.failure = f"login to {self.config.name} failed: {escape_all(text, limit=400)}"
        if self.on_failure is not None:
            self.on_failure()

    @contextlib.asynccontextmanager
    async def opened(self) -> AsyncIterator[httpx2.Auth]:
        """The ``httpx2.Auth`` for the transport (an interactive one listens for the redirect
        meanwhile). Raises ``OSError`` when the configured ``oauth.callbackPort`` cannot be bound."""
        if not self.interactive:
            yield self._provider("http://127.0.0.1/callback")
            return
        async with await self._listen() as listener:
            self.listener = listener
            yield self._provider(listener.redirect_uri)

    async def _listen(self) -> LoopbackRedirect:
        options = self.config.oauth
        if options is not None and options.callback_port:
            return LoopbackRedirect(options.callback_port)
        stored = await self.storage.get_client_info()
        port = urlparse(str(stored.redirect_uris[0])).port if stored and stored.redirect_uris else None
        if port:  # the registration's redirect URI names this port: keep it when it is free
            try:
                probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", port)
            except OSError:
                self.storage.drop_client_info()  # register again, with the new port
            else:
                probe.close()
                await probe.wait_closed()
                return LoopbackRedirect(port)
        return LoopbackRedirect(0)

    def _provider(self, redirect_uri: str) -> ToolscoutOAuth:
        options = self.config.oauth
        if self._preset_id is not None and options is not None:
            self.storage.preset = OAuthClientInformationFull(
                client_id=self._preset_id,
                client_secret=options.client_secret,
                redirect_uris=[AnyUrl(redirect_uri)],
                token_endpoint_auth_method="client_secret_basic" if options.client_secret else "none",
            )
        metadata = OAuthClientMetadata(
            client_name="toolscout",
            redirect_uris=[AnyUrl(redirect_uri)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        )
        return ToolscoutOAuth(
            self,
            server_url=self.config.url,
            client_metadata=metadata,
            storage=self.storage,
            redirect_handler=self._open_browser,
            callback_handler=self._wait_for_redirect,
            client_metadata_url=options.client_metadata_url if options else None,
        )

    async def _open_browser(self, url: str) -> None:
        if self.listener is None:
            raise RuntimeError("a login was not asked for")
        self.listener.expect(parse_qs(urlparse(url).query).get("state", [""])[0])
        host = urlparse(url).netloc
        self.notify(f"Opening {escape_all(host)} in your browser to log in to {self.config.name}.")
        self.notify(f"If it does not open, visit: {url}")
        opened = await asyncio.to_thread(webbrowser.open, url)
        if not opened:
            self.notify("No browser could be started: open the URL above yourself.")

    async def _wait_for_redirect(self) -> AuthorizationCodeResult:
        if self.listener is None:
            raise RuntimeError("a login was not asked for")
        return await self.listener.wait()


class ToolscoutOAuth(OAuthClientProvider):
    """The SDK's provider with toolscout's two changes: the stored expiry is restored (so an
    expired token is refreshed before it is sent, after a restart too), and a passive connection
    stops at the MCP endpoint's first refusal instead of starting a login (:class:`ServerAuth`)."""

    def __init__(self, owner: ServerAuth, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.owner = owner

    async def _initialize(self) -> None:
        await super()._initialize()
        self.context.token_expiry_time = self.owner.storage.expires_at

    async def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = super()._auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                if outgoing is request:
                    self.owner.record(challenge := challenge_of(response))
                    if challenge is not None and not self.owner.interactive:
                        return  # passive: the refusal goes back to the transport as it is
                try:
                    outgoing = await flow.asend(response)
                except StopAsyncIteration:
                    return
        except Exception as exc:  # the login failed: say why, and end the request with its 401
            self.owner.fail(exc)
            request.headers.pop("Authorization", None)
            yield request
        finally:
            await flow.aclose()
