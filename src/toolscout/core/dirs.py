"""Where toolscout keeps its data: one answer for the session transcripts
(:mod:`toolscout.core.session.transcript`) and the saved full tool results
(:mod:`toolscout.core.calls.result_cap`), kept below both so the engine's side never imports the
session's; and one for its caches (the tool vectors, :mod:`toolscout.core.search.vector_cache`,
and the last known server sizes, :mod:`toolscout.core.engine.server_sizes`)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def data_dir() -> Path:
    """The user data directory (``TOOLSCOUT_DATA_DIR`` overrides the platform default)."""
    override = os.environ.get("TOOLSCOUT_DATA_DIR")
    return Path(override) if override else Path(platformdirs.user_data_dir("toolscout"))


def config_dir() -> Path:
    """The user config directory (``TOOLSCOUT_CONFIG_DIR`` overrides the platform default): where
    settings, the user ``mcp.json``, folder approvals and OAuth logins (:mod:`toolscout.core.mcp.oauth_store`) live."""
    override = os.environ.get("TOOLSCOUT_CONFIG_DIR")
    return Path(override) if override else Path(platformdirs.user_config_dir("toolscout"))


#: ``TOOLSCOUT_CACHE_DIR`` values (stripped, any case) that switch the disk caches off.
CACHE_OFF = ("", "0", "off", "none", "false", "no")


def cache_dir() -> Path | None:
    """The folder of toolscout's disk caches, or None when they are off (memory only).

    ``TOOLSCOUT_CACHE_DIR`` unset: the platform's user cache folder. Set to one of
    :data:`CACHE_OFF` (``""``, ``0``, ``off`` …): None. Set to a folder: that folder (``~``
    expanded). A relative path is refused (None): a cache written relative to the current
    folder would scatter ``server-sizes.json`` over every project the app is started in.
    """
    override = os.environ.get("TOOLSCOUT_CACHE_DIR")
    if override is None:
        return Path(platformdirs.user_cache_dir("toolscout"))
    if override.strip().lower() in CACHE_OFF:
        return None
    path = Path(override).expanduser()
    return path if path.is_absolute() else None


def private_dir(path: Path) -> Path:
    """Create ``path`` and any missing parents owner-only (``0700``), each made with that mode
    (never loosened afterwards: no window in which another user can list it). A folder that
    already exists is left as it is. Returns ``path``.

    Raises:
        OSError: a component cannot be created (read-only, a file in the way).
    """
    missing: list[Path] = []
    for folder in (path, *path.parents):
        if folder.is_dir():
            break
        missing.append(folder)
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            if not folder.is_dir():
                raise
    return path


def open_private(path: Path, *, append: bool = False) -> int:
    """Open ``path`` for writing, created owner-only (``0600``) when new, as a descriptor.

    A symlink at ``path`` is refused (``O_NOFOLLOW``), so a planted link cannot redirect the
    write. ``append`` keeps the content and appends; otherwise the file is truncated.

    Raises:
        OSError: the file cannot be opened.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
    flags |= os.O_APPEND if append else os.O_TRUNC
    return os.open(path, flags, 0o600)
