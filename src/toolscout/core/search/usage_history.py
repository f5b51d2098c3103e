"""Which tools the person ran in this project: successful calls counted from the session
transcripts, with recency decay (the input of :mod:`.usage_prior`).

A transcript (``<data dir>/sessions/<id>.jsonl``, written by
:mod:`toolscout.core.session.transcript`) starts with ``{"type": "meta", "cwd": ...}``; its
``message`` records hold the assistant's ``tool_use`` blocks (a call through ``ExecuteTool``
names its target in ``input.tool_name``) and the user's ``tool_result`` blocks, ``is_error``
set when the call failed. A call counts when its result came back without ``is_error``.

The read is bounded and cheap: the first line of at most :data:`SCAN_FILES` newest transcripts
is read to find the project's (``meta.cwd`` equal to the project folder), of those the newest
:data:`MAX_FILES` are read, each at most its last :data:`MAX_FILE_BYTES`. Per-file counts are
kept in memory by (path, size, mtime), so a second read of an unchanged folder parses nothing.
A session's calls weigh ``0.5 ** (age / HALF_LIFE_DAYS)`` by the age of its file's last write.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from ..dirs import data_dir

#: Days after which a session's calls count half.
HALF_LIFE_DAYS = 14.0
#: Newest transcripts whose first line is read to find this project's.
SCAN_FILES = 400
#: Newest transcripts of the project whose calls are counted.
MAX_FILES = 40
#: Bytes read of one transcript at most (its end: the newest calls).
MAX_FILE_BYTES = 4 * 2**20
#: Names that are the deferral machinery, not tools the person uses.
NOT_TOOLS = frozenset({"ToolSearch", "ExecuteTool"})
#: Per-file counts kept at most.
_CACHE_FILES = 2_000

_cache: dict[tuple[str, int, int], tuple[str, Counter[str] | None]] = {}
_cache_lock = threading.Lock()


def sessions_folder() -> Path:
    """Where the transcripts are (the same folder as :func:`toolscout.core.session.transcript.sessions_dir`)."""
    return data_dir() / "sessions"


def successful_calls(lines: Iterable[str]) -> Counter[str]:
    """Tool name → calls whose ``tool_result`` came back without ``is_error``, in transcript
    lines (bad lines are skipped)."""
    names: dict[str, str] = {}
    out: Counter[str] = Counter()
    for line in lines:
        if '"message"' not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        message = record.get("message") if isinstance(record, dict) and record.get("type") == "message" else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                name, args = block.get("name"), block.get("input")
                if name == "ExecuteTool" and isinstance(args, dict):
                    name = args.get("tool_name")
                if isinstance(name, str) and name and name not in NOT_TOOLS:
                    names[block["id"]] = name
            elif block.get("type") == "tool_result" and not block.get("is_error"):
                target = names.pop(str(block.get("tool_use_id")), None)
                if target is not None:
                    out[target] += 1
    return out


def project_usage(project_dir: str | Path, folder: Path | None = None, now: float | None = None) -> dict[str, float]:
    """Tool name → decayed count of successful calls in the project's transcripts.

    Args:
        project_dir: the project folder (compared with each transcript's ``meta.cwd``).
        folder: the transcripts' folder (default :func:`sessions_folder`).
        now: the time the ages are measured from (seconds since the epoch; default now).

    Returns:
        Counts > 0 (floats: each call weighs ``0.5 ** (age_days / HALF_LIFE_DAYS)``); empty when
        the folder is missing or unreadable. Never raises.
    """
    folder = folder or sessions_folder()
    now = time.time() if now is None else now
    project = str(project_dir)
    try:
        resolved = str(Path(project_dir).resolve())
        entries = [e for e in os.scandir(folder) if e.name.endswith(".jsonl") and e.is_file(follow_symlinks=False)]
    except OSError:
        return {}
    stats = []
    for entry in entries:
        try:
            stats.append((entry.stat(follow_symlinks=False), entry.path))
        except OSError:
            continue
    stats.sort(key=lambda item: item[0].st_mtime, reverse=True)
    totals: dict[str, float] = {}
    taken = 0
    for st, path in stats[:SCAN_FILES]:
        counts = _file_counts(path, st.st_size, st.st_mtime_ns, {project, resolved})
        if counts is None:
            continue
        weight = 0.5 ** (max(0.0, now - st.st_mtime) / 86_400.0 / HALF_LIFE_DAYS)
        for name, n in counts.items():
            totals[name] = totals.get(name, 0.0) + n * weight
        taken += 1
        if taken >= MAX_FILES:
            break
    return totals


def _file_counts(path: str, size: int, mtime_ns: int, projects: set[str]) -> Counter[str] | None:
    """Successful calls of one transcript when its ``meta.cwd`` is one of ``projects`` (only
    then is its body read), from the cache when the file is unchanged; None otherwise (another
    project's, unreadable, no meta line)."""
    key = (path, size, mtime_ns)
    with _cache_lock:
        hit = _cache.get(key)
    if hit is not None and (hit[0] not in projects or hit[1] is not None):
        return hit[1] if hit[0] in projects else None
    try:
        with open(path, "rb") as fh:
            first = fh.readline(64 * 1024).decode("utf-8", "replace")
            try:
                meta = json.loads(first)
            except ValueError:
                return None
            if not isinstance(meta, dict) or meta.get("type") != "meta":
                return None
            cwd = str(meta.get("cwd") or "")
            if cwd not in projects:
                _remember(key, (cwd, None))
                return None
            if size > MAX_FILE_BYTES:
                fh.seek(size - MAX_FILE_BYTES)
                fh.readline()  # a partial line
            body = fh.read(MAX_FILE_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    counts = successful_calls(body.splitlines())
    _remember(key, (cwd, counts))
    return counts


def _remember(key: tuple[str, int, int], value: tuple[str, Counter[str] | None]) -> None:
    with _cache_lock:
        if len(_cache) >= _CACHE_FILES:
            _cache.clear()
        _cache[key] = value
