"""Last known schema-token size of each MCP server, kept between runs in the user cache dir.

The auto tool-search decision (``toolSearch.enabled = auto``) may have to be made while servers
are still connecting. Their size is then unknown; the size each one had the last time it
connected is the best estimate, so it is recorded here whenever a server lists its tools and
read back by the next run (:meth:`toolscout.core.engine.facade.Engine.pending_sizes`).

The file is ``<user cache dir>/toolscout/server-sizes.json`` (``TOOLSCOUT_CACHE_DIR`` overrides
the directory; ``off``, ``0`` or empty keeps sizes in memory only, as for the vector cache:
:func:`toolscout.core.dirs.cache_dir`): ``{"version": 1,
"servers": {KEY: TOKENS}}`` where KEY is the server's configured name plus a hash of how it is
started (command, args, url), so a renamed or re-pointed entry does not inherit a stale size. A
missing, oversized, non-regular or malformed file reads as empty; writes are atomic (temp
file + replace) and a failed write is ignored (the cache is only an estimate).

The engine records from its event loop (the UI's), where a file write per connecting server cost
up to 50 ms each on a busy disk (issue 12), so it uses :meth:`ServerSizes.record_later`: sizes
are counted and written by one writer thread, coalescing a burst into one write, and
:meth:`ServerSizes.flush` (on engine stop) waits for what is pending.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..dirs import cache_dir
from ..safe_read import read_json

if TYPE_CHECKING:
    from ..mcp.server_config import ServerConfig

#: The file is ignored when larger than this (bytes); a few KiB is normal.
MAX_FILE_BYTES = 1 << 20
FILE_NAME = "server-sizes.json"


def default_path() -> Path | None:
    """Where sizes are kept, or None when the disk caches are off (:func:`~toolscout.core.dirs.cache_dir`)."""
    folder = cache_dir()
    return None if folder is None else folder / FILE_NAME


def server_key(config: ServerConfig) -> str:
    """Cache key of a configured server: ``NAME#<12 hex of sha256(transport, command, args, url)>``."""
    spec = json.dumps([config.transport, config.command, list(config.args or ()), config.url])
    return f"{config.name}#{hashlib.sha256(spec.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"


class ServerSizes:
    """Read-through, write-through map of server key → schema tokens (deferrable tools only).

    Args:
        path: the JSON file; None keeps everything in memory.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._sizes: dict[str, int] = self._read()
        self._cond = threading.Condition()
        #: key → how to count its size, waiting for the writer thread
        self._later: dict[str, Callable[[], int]] = {}
        self._busy = False  # the writer is counting or writing what it took from ``_later``
        self._writer: threading.Thread | None = None

    def get(self, key: str) -> int | None:
        """The last recorded size of ``key`` in tokens, or None if never seen."""
        return self._sizes.get(key)

    def record(self, key: str, tokens: int) -> None:
        """Remember ``tokens`` for ``key`` and write the file when the value changed."""
        if self._sizes.get(key) == tokens:
            return
        self._sizes[key] = int(tokens)
        self._write()

    def record_later(self, key: str, count: Callable[[], int]) -> None:
        """Like :meth:`record`, but ``count()`` runs and the file is written on the writer
        thread (started once, then woken: starting a thread per call cost the event loop ~40 ms
        each under load); returns at once. A newer ``count`` for the same key replaces a
        pending one."""
        with self._cond:
            self._later[key] = count
            self._cond.notify_all()
            if self._writer is None:
                self._writer = threading.Thread(target=self._drain, name="toolscout-sizes", daemon=True)
                self._writer.start()

    def flush(self, timeout: float | None = None) -> None:
        """Wait (up to ``timeout`` s) until every :meth:`record_later` is counted and written."""
        with self._cond:
            self._cond.wait_for(lambda: not self._later and not self._busy, timeout)

    def _drain(self) -> None:
        while True:
            with self._cond:
                self._busy = False
                self._cond.notify_all()
                self._cond.wait_for(lambda: bool(self._later))
                pending, self._later, self._busy = self._later, {}, True
            changed = False
            for key, count in pending.items():
                try:
                    tokens = int(count())
                except Exception:  # a size is only an estimate: skip it
                    continue
                changed |= self._sizes.get(key) != tokens
                self._sizes[key] = tokens
            if changed:
                self._write()

    def _read(self) -> dict[str, int]:
        if self.path is None:
            return {}
        try:
            data = read_json(self.path, max_bytes=MAX_FILE_BYTES)
        except (OSError, ValueError):  # SafeReadError (FIFO, too large, malformed) is a ValueError
            return {}
        servers = data.get("servers") if isinstance(data, dict) else None
        if not isinstance(servers, dict):
            return {}
        return {
            str(k): v for k, v in servers.items() if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 1 << 40
        }

    def _write(self) -> None:
        if self.path is None:
            return
        text = json.dumps({"version": 1, "servers": dict(self._sizes)}, indent=0, sort_keys=True)
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".sizes-", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(text)
                os.replace(tmp, self.path)
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
