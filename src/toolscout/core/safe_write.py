"""Writing the person's JSON files atomically: a reader (another toolscout, Claude Code, an
editor) sees the old file or the new one, never half of one, and a crash or a full disk leaves
the old file in place.

The text goes to a temporary file in the same folder (same file system, so the rename is
atomic), is flushed to disk, and replaces the file with :func:`os.replace`. The file keeps its
permission bits; a new one gets ``0o600`` when ``private`` (it holds secrets: environment
values, headers) and ``0o644`` otherwise.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any


def write_json_atomic(path: Path, data: Any, *, private: bool = False) -> None:
    """Write ``data`` as indented JSON (UTF-8, a trailing newline) to ``path`` atomically,
    creating its folder when missing.

    Args:
        private: a new file is readable by its owner only.

    Raises:
        OSError: the folder or file cannot be written (the old file, if any, is untouched).
        TypeError, ValueError: ``data`` is not JSON (nothing is written).
    """
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = 0o600 if private else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
