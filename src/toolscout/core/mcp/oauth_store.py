"""Where an OAuth login to a remote MCP server is kept: one JSON file per server in the user
config dir (:func:`toolscout.core.dirs.config_dir`), ``oauth/<server>.json``, never in a
project folder.

The folder is created owner-only (``0700``) and each file is written owner-only (``0600``) through
:func:`toolscout.core.dirs.open_private` (a symlink planted at the path is refused), to a temporary
name first and then renamed, so a crash never leaves half a file. A file holds the server's URL,
the tokens the authorization server issued (access and refresh token, scope), when the access
token expires (absolute, seconds since the epoch), and the client registration (dynamic client
registration or a client ID metadata document). Tokens are only handed out for the URL they were
issued for: a server whose URL changed in the config needs a new login.

:class:`FileTokenStorage` is the ``mcp`` SDK's ``TokenStorage`` over that file.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import ValidationError

from ..dirs import config_dir, open_private, private_dir

#: The folder of the login files, under the user config dir.
OAUTH_DIR = "oauth"


def login_file(server: str) -> Path:
    """The login file of server ``server`` (its name; characters other than letters, digits,
    ``-`` and ``_`` become ``_``): ``<config dir>/oauth/<server>.json``."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", server) or "_"
    return config_dir() / OAUTH_DIR / f"{safe}.json"


def forget(server: str) -> Path | None:
    """Remove server ``server``'s login (tokens and client registration). Returns the file that
    was removed, or None when there was none.

    Raises:
        OSError: the file exists and cannot be removed.
    """
    path = login_file(server)
    try:
        path.unlink()
    except FileNotFoundError:
        return None
    return path


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class FileTokenStorage:
    """The SDK's ``TokenStorage`` for one server, kept in :func:`login_file`.

    Args:
        server: the server's name. url: its URL (the file's tokens count only for this URL).
        preset: a client registered beforehand (the config's ``oauth.clientId``): returned by
            :meth:`get_client_info` whatever the file says.

    Reading never raises (an unreadable or foreign file reads as no login); writing raises
    ``OSError`` when the file cannot be written.
    """

    def __init__(self, server: str, url: str, preset: OAuthClientInformationFull | None = None) -> None:
        self.server = server
        self.url = url
        self.preset = preset
        self.path = login_file(server)

    def _mine(self) -> dict[str, Any]:
        data = _read(self.path)
        return data if data.get("url") == self.url else {}

    def _write(self, **changes: Any) -> None:
        self._rewrite({**self._mine(), **changes})

    def _rewrite(self, data: dict[str, Any]) -> None:
        private_dir(self.path.parent)
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with os.fdopen(open_private(temp), "w", encoding="utf-8") as handle:
            json.dump({**data, "server": self.server, "url": self.url}, handle, indent=2)
        os.replace(temp, self.path)

    @property
    def expires_at(self) -> float | None:
        """When the stored access token expires (s since the epoch), or None when unknown."""
        value = self._mine().get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    @property
    def wanted_scope(self) -> str | None:
        """The scopes a server asked for beyond the login's (a ``403 insufficient_scope``, together
        with those granted before), which the next login asks for too; None when none."""
        value = self._mine().get("wanted_scope")
        return value if isinstance(value, str) and value else None

    def want_scope(self, scope: str) -> None:
        """Remember ``scope`` for the next login (:attr:`wanted_scope`)."""
        self._write(wanted_scope=scope)

    def has_login(self) -> bool:
        """True when tokens for this server's URL are stored."""
        return bool(self._mine().get("tokens"))

    async def get_tokens(self) -> OAuthToken | None:
        """The stored tokens for this URL, or None."""
        raw = self._mine().get("tokens")
        try:
            return OAuthToken.model_validate(raw) if isinstance(raw, dict) else None
        except ValidationError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Store ``tokens``, with their absolute expiry (from ``expires_in``)."""
        expires = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        self._write(tokens=tokens.model_dump(mode="json", exclude_none=True), expires_at=expires)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The preset client, else the stored registration for this URL, else None."""
        if self.preset is not None:
            return self.preset
        raw = self._mine().get("client")
        try:
            return OAuthClientInformationFull.model_validate(raw) if isinstance(raw, dict) else None
        except ValidationError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Store the client registration (a preset one is not written: it lives in the config)."""
        if self.preset is None:
            self._write(client=client_info.model_dump(mode="json", exclude_none=True))

    def drop_tokens(self) -> None:
        """Forget the stored tokens (a new login replaces them); the registration stays."""
        data = self._mine()
        if data.pop("tokens", None) is not None:
            data.pop("expires_at", None)
            self._rewrite(data)

    def drop_client_info(self) -> None:
        """Forget the stored registration (its redirect port can no longer be used)."""
        data = self._mine()
        if data.pop("client", None) is not None:
            self._rewrite(data)
