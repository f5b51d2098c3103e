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
import ipaddress
import logging
import warnings
import webbrowser
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.utils import extract_field_from_www_auth, union_scopes
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata
from mcp.shared.exceptions import MCPDeprecationWarning
from pydantic import AnyUrl

from ..sanitize import escape_all
from .oauth_redirect import LoopbackRedirect
from .oauth_store import FileTokenStorage
from .server_config import OAuthOptions, ServerConfig


def refuse_cleartext(url: str, what: str) -> None:
    """Raise ``ValueError`` when ``url`` is not ``https`` and its host is not loopback.

    OAuth 2.1 (§1.5) and the MCP authorization spec ask TLS of every authorization-server endpoint
    but a loopback one: over plain http on another host the code, the PKCE verifier, the tokens and
    the client secret could be read and changed on the way. ``what`` names the endpoint in the error.
    """
    parsed = urlparse(url)
    host = (parsed.hostname or "").rstrip(".").lower()
    if parsed.scheme == "https" or host == "localhost":
        return
    with contextlib.suppress(ValueError):
        if ipaddress.ip_address(host).is_loopback:
            return
    raise ValueError(
        f"the {what} {escape_all(url, limit=200)} is not https (plain http is allowed on loopback only): "
        "nothing was sent to it"
    )


class _DropFlowTraceback(logging.Filter):
    """The SDK logs a login's failure with its traceback ("OAuth flow error"); toolscout reports it
    as the server's error instead (:meth:`ServerAuth.fail`), once, without the traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "OAuth flow error"


logging.getLogger("mcp.client.auth.oauth2").addFilter(_DropFlowTraceback())


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
            parts.append(f"it asks for scope '{escape_all(self.scope, limit=200)}'")  # escaped once, not repr'd
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

    def record(self, challenge: AuthChallenge | None, granted: str | None = None) -> None:
        """Note the MCP endpoint's answer: a refusal, or (None) one that let the request through.
        A ``403 insufficient_scope`` naming scopes is remembered for the next login, together with
        ``granted`` (the login's scopes: SEP-2350's union), so ``mcp login`` asks for all of them."""
        if challenge is not None:
            self.challenges += 1
            if challenge.status == 403 and challenge.scope and not self.interactive:
                with contextlib.suppress(OSError):
                    self.storage.want_scope(union_scopes(granted, challenge.scope) or challenge.scope)
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

    def _provider(self, redirect_uri: str) -> _Toolscout:
        options = self.config.oauth
        if options is not None and options.grant == "client_credentials":
            return self._client_credentials(options)
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

    def _client_credentials(self, options: OAuthOptions) -> _Toolscout:
        common: dict[str, Any] = {
            "server_url": self.config.url,
            "storage": self.storage,
            "client_id": options.client_id,
            "issuer": options.issuer,
        }
        if options.private_key_file is None:
            return ToolscoutClientSecret(self, client_secret=options.client_secret, **common)
        key = Path(options.private_key_file).expanduser().read_text(encoding="utf-8")
        signed = SignedJWTParameters(
            issuer=options.client_id or "",
            subject=options.client_id or "",
            signing_key=key,
            signing_algorithm=options.signing_algorithm or "RS256",
        )
        return ToolscoutPrivateKeyJWT(self, assertion_provider=signed.create_assertion_provider(), **common)

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


class _Toolscout(OAuthClientProvider):
    """toolscout's two changes to an SDK provider: the stored expiry is restored (so an expired
    token is refreshed before it is sent, after a restart too), and a passive connection stops at
    the MCP endpoint's first refusal instead of starting a login (:class:`ServerAuth`) when the
    grant needs the person (the authorization code flow; client credentials need nobody)."""

    owner: ServerAuth
    needs_person = True

    async def _initialize(self) -> None:
        await super()._initialize()
        self.context.token_expiry_time = self.owner.storage.expires_at

    async def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if self._initialized and self.context.is_token_valid() and self.context.current_tokens is not None:
            # A valid token: send it without the SDK flow, whose lock is held until the answer's
            # headers (a server answering with one JSON body at the end would get one call at a
            # time). Only a refusal goes on to the SDK flow (which sends the request once more).
            granted = self.context.current_tokens.scope
            request.headers["Authorization"] = f"Bearer {self.context.current_tokens.access_token}"
            response = yield request
            self.owner.record(challenge := challenge_of(response), granted)
            if challenge is None or (self.needs_person and not self.owner.interactive):
                return
        flow = super()._auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                if outgoing is not request:  # discovery, registration, token, refresh
                    refuse_cleartext(str(outgoing.url), "OAuth endpoint")
                response = yield outgoing
                if outgoing is request:
                    granted = self.context.current_tokens.scope if self.context.current_tokens else None
                    self.owner.record(challenge := challenge_of(response), granted)
                    if challenge is not None and self.needs_person and not self.owner.interactive:
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


class ToolscoutOAuth(_Toolscout):
    """The authorization code flow (PKCE, a browser): the SDK's ``OAuthClientProvider``; a login
    also asks for the scopes a passive connection was refused for (:meth:`ServerAuth.record`)."""

    def __init__(self, owner: ServerAuth, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.owner = owner

    async def _perform_authorization(self) -> httpx2.Request:
        wanted = self.owner.storage.wanted_scope
        if wanted:
            self.context.client_metadata.scope = union_scopes(self.context.client_metadata.scope, wanted)
        metadata = self.context.oauth_metadata
        if metadata is not None:  # before the browser opens: the code would go on to the token endpoint
            refuse_cleartext(str(metadata.authorization_endpoint), "authorization endpoint")
            refuse_cleartext(str(metadata.token_endpoint), "token endpoint")
        return await super()._perform_authorization()


class ToolscoutClientSecret(_Toolscout, ClientCredentialsOAuthProvider):
    """Client credentials with a client secret (the SDK's ``ClientCredentialsOAuthProvider``)."""

    needs_person = False

    def __init__(self, owner: ServerAuth, **kwargs: Any) -> None:
        with warnings.catch_warnings():  # no issuer configured: the SDK warns that one will be required
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            super().__init__(**kwargs)
        self.owner = owner


class ToolscoutPrivateKeyJWT(_Toolscout, PrivateKeyJWTOAuthProvider):
    """Client credentials with a signed JWT (``private_key_jwt``: the SDK's ``PrivateKeyJWTOAuthProvider``)."""

    needs_person = False

    def __init__(self, owner: ServerAuth, **kwargs: Any) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            super().__init__(**kwargs)
        self.owner = owner
