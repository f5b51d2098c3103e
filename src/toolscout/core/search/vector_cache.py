"""The tool-vector cache: a process-wide dict plus an SQLite file capped in size (LRU).

Keys are :func:`~.dense.text_key` hashes of (model id, embedded text), so a text is encoded once
per machine, whatever server or catalog it came from, and a changed text is simply a new key.
The file keeps a last-use stamp per vector; when a write takes it over its cap (setting
``toolSearch.vectorCacheMB``), the least recently used vectors are deleted down to 90% of the cap
and the freed pages are returned to the file system (incremental auto-vacuum). A server that
churns through thousands of fresh tool texts (a ``list_changed`` storm) therefore cannot grow the
file without bound. The in-memory dict is bounded by :attr:`VectorCache.MAX_MEMORY` entries.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np

from ..dirs import cache_dir

log = logging.getLogger(__name__)

#: Floats per vector (all-MiniLM-L6-v2).
VECTOR_DIM = 384
#: Bytes one cached vector costs in the file, estimated: the float32 blob, the 64-char hex key
#: (stored twice: table and primary-key index), the stamp and SQLite's per-row overhead.
ROW_BYTES = VECTOR_DIM * 4 + 2 * 64 + 8 + 40
#: Default cap of the file (MiB): ~38,000 tool vectors.
DEFAULT_MAX_MB = 64.0


class VectorCache:
    """Tool vectors by key: a process-wide dict plus an optional, size-capped SQLite file.

    Args:
        path: SQLite file (created on demand), or None for memory only. Disk errors are logged
            and the cache keeps working in memory.
        max_bytes: cap of the file's vectors (bytes, estimated as rows × :data:`ROW_BYTES`);
            least recently used vectors are evicted past it. None: :data:`DEFAULT_MAX_MB`.
    """

    _memory: ClassVar[dict[str, np.ndarray]] = {}
    _memory_lock = threading.Lock()
    MAX_MEMORY = 200_000

    def __init__(self, path: Path | None = None, max_bytes: int | None = None) -> None:
        self.path = path
        self.max_rows = max(1, int(max_bytes if max_bytes is not None else DEFAULT_MAX_MB * 2**20) // ROW_BYTES)
        self._db: sqlite3.Connection | None = None
        self._db_lock = threading.Lock()
        #: Vectors evicted from the file by this object (for tests and benchmarks).
        self.evicted = 0

    def _conn(self) -> sqlite3.Connection | None:
        if self.path is None:
            return None
        if self._db is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(str(self.path), timeout=2.0, check_same_thread=False)
                if not db.execute("SELECT name FROM sqlite_master WHERE name = 'vec'").fetchone():
                    db.execute("PRAGMA auto_vacuum = INCREMENTAL")  # only takes effect before the first table
                db.execute("CREATE TABLE IF NOT EXISTS vec (key TEXT PRIMARY KEY, v BLOB, used REAL DEFAULT 0)")
                columns = {row[1] for row in db.execute("PRAGMA table_info(vec)")}
                if "used" not in columns:  # a file from before the cap: add the stamp column
                    db.execute("ALTER TABLE vec ADD COLUMN used REAL DEFAULT 0")
                db.commit()
                self._db = db
            except (OSError, sqlite3.Error) as exc:
                log.warning("embedding cache %s unusable: %s", self.path, exc)
                self.path = None
                return None
        return self._db

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors for those ``keys`` that are cached (disk first when configured; found
        ones are stamped as used now; vectors only in memory are then written to disk, so a later
        process finds them)."""
        found: dict[str, np.ndarray] = {}
        db = self._conn()
        if db is not None:
            with self._db_lock:
                try:
                    now = time.time()
                    for start in range(0, len(keys), 500):
                        chunk = list(keys[start : start + 500])
                        marks = ",".join("?" * len(chunk))
                        hits = []
                        for key, blob in db.execute(f"SELECT key, v FROM vec WHERE key IN ({marks})", chunk):
                            vec = np.frombuffer(blob, dtype=np.float32)
                            if vec.shape == (VECTOR_DIM,):
                                found[key] = vec
                                hits.append(key)
                        if hits:
                            db.execute(
                                f"UPDATE vec SET used = ? WHERE key IN ({','.join('?' * len(hits))})", [now, *hits]
                            )
                    db.commit()
                except sqlite3.Error as exc:
                    log.warning("embedding cache read failed: %s", exc)
        with self._memory_lock:
            from_memory = {k: self._memory[k] for k in keys if k not in found and k in self._memory}
            self._remember({k: v for k, v in found.items() if k not in self._memory})
        if db is not None and from_memory:
            self._write(db, from_memory)
        found.update(from_memory)
        return found

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        """Store vectors (memory always, disk when configured; evicts past the cap)."""
        with self._memory_lock:
            self._remember(items)
        db = self._conn()
        if db is not None and items:
            self._write(db, items)

    def rows(self) -> int:
        """Vectors in the file (0 without one)."""
        db = self._conn()
        if db is None:
            return 0
        with self._db_lock:
            try:
                return int(db.execute("SELECT COUNT(*) FROM vec").fetchone()[0])
            except sqlite3.Error:
                return 0

    def _write(self, db: sqlite3.Connection, items: dict[str, np.ndarray]) -> None:
        now = time.time()
        with self._db_lock:
            try:
                with db:
                    db.executemany(
                        "INSERT OR REPLACE INTO vec (key, v, used) VALUES (?, ?, ?)",
                        [(k, np.asarray(v, dtype=np.float32).tobytes(), now) for k, v in items.items()],
                    )
                self._evict(db)
            except sqlite3.Error as exc:
                log.warning("embedding cache write failed: %s", exc)

    def _evict(self, db: sqlite3.Connection) -> None:
        """Delete the least recently used vectors down to 90% of the cap when over it."""
        count = int(db.execute("SELECT COUNT(*) FROM vec").fetchone()[0])
        if count <= self.max_rows:
            return
        drop = count - max(1, int(self.max_rows * 0.9))
        with db:
            db.execute("DELETE FROM vec WHERE key IN (SELECT key FROM vec ORDER BY used, rowid LIMIT ?)", (drop,))
        db.execute("PRAGMA incremental_vacuum")
        self.evicted += drop
        log.info("embedding cache: evicted %d least recently used vectors (cap %d)", drop, self.max_rows)

    def _remember(self, items: dict[str, np.ndarray]) -> None:
        if len(self._memory) + len(items) > self.MAX_MEMORY:
            self._memory.clear()
        self._memory.update(items)


def default_cache_path() -> Path | None:
    """``<user cache dir>/toolscout/embeddings.sqlite``, or None when the disk caches are off:
    ``TOOLSCOUT_CACHE_DIR`` overrides the directory, ``off``, ``0`` or empty disables it
    (:func:`~toolscout.core.dirs.cache_dir`, which ``server-sizes.json`` follows too)."""
    folder = cache_dir()
    return None if folder is None else folder / "embeddings.sqlite"
