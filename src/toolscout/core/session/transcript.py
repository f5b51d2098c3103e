"""Session transcripts: one JSONL file per session in the user data dir, appended as it happens.

Location: ``$TOOLSCOUT_DATA_DIR/sessions/<id>.jsonl`` when the variable is set, else
``platformdirs.user_data_dir("toolscout")/sessions``. Each line is one record:

* ``{"type": "meta", "id", "created", "cwd", "strategy", "provider", "model"}`` (first line)
* ``{"type": "projection", ...}`` the system prompt and tools array of the first request, and
  ``{"type": "tools_appended", "tools": [...]}`` for each later append (stub strategy)
* ``{"type": "message", "message": {"role", "content"}}`` every message, in order
* ``{"type": "usage", ...}`` per request; ``{"type": "event", ...}`` turn boundaries
* ``{"type": "search", "call_id", "result"}`` each ToolSearch's ranked result
  (:meth:`~toolscout.core.search.results.SearchResult.to_record`), written before its
  ``tool_result`` message: a resumed session shows the search as it was shown live

A line is written and flushed as soon as the thing happened, so a crash loses at most the
record being written; :func:`repair_torn_tail` cuts a torn last line off before a resume appends.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..dirs import data_dir, open_private, private_dir
from ..safe_read import MAX_LARGE_BYTES, SafeReadError, parse_json, read_bytes, read_text
from ..serialize import dumps
from .projection import Projection


def sessions_dir() -> Path:
    """Where transcripts live."""
    return data_dir() / "sessions"


def new_session_id() -> str:
    """A sortable, unique id: UTC timestamp plus 8 random hex digits."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + uuid.uuid4().hex[:8]


class TranscriptBusy(Exception):
    """Another toolscout process (or session) holds the transcript's writer lock.

    Attributes:
        pid: the holder's process id when the OS says (Linux ``/proc/locks``), else None.
    """

    def __init__(self, path: Path, pid: int | None) -> None:
        self.path, self.pid = path, pid
        super().__init__(f"{path} is open in another toolscout" + (f" (pid {pid})" if pid else ""))


class TranscriptStore:
    """Append-only JSONL writer for one session: the only writer of its file.

    The file is created owner-only (``0600``, its folders ``0700``) and held with an advisory
    lock (``flock``, non-blocking) while open, so two toolscouts resuming one session never
    interleave their records (:meth:`claim`). A write that fails (a read-only or full data
    dir, a file where the folder should be) is reported once to ``on_error`` and the store
    stops writing: the session goes on unsaved.

    Args:
        path: the file; its parent is created. Existing content is kept (resume appends).
        on_error: ``on_error(message)`` for the first write failure (default: ignore).
    """

    def __init__(self, path: Path, on_error: Callable[[str], None] | None = None) -> None:
        self.path = path
        self.on_error = on_error
        #: Why writing stopped (the first failure), or None while it works.
        self.failed: str | None = None
        self._file: IO[str] | None = None

    @property
    def held(self) -> bool:
        """True while the file is open and locked by this store."""
        return self._file is not None

    def claim(self) -> None:
        """Open the file and take its writer lock (a no-op when held).

        Raises:
            TranscriptBusy: another process or session holds the lock; nothing is written.
            OSError: the file cannot be opened (:meth:`append` turns this into a warning).
        """
        if self._file is not None:
            return
        fd = open_private(private_dir(self.path.parent) / self.path.name, append=True)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = lock_holder(fd)
            os.close(fd)
            raise TranscriptBusy(self.path, pid) from None
        except OSError:
            os.close(fd)
            raise
        self._file = os.fdopen(fd, "a", encoding="utf-8")

    def append(self, record: dict[str, Any]) -> None:
        """Write one record as a line and flush it to the OS; never raises."""
        if self.failed is not None:
            return
        try:
            self.claim()
            assert self._file is not None
            self._file.write(dumps(record) + "\n")
            self._file.flush()
        except (OSError, TranscriptBusy) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.failed = f"the transcript {self.path} cannot be written ({reason}); this session is not saved"
            self.close()
            if self.on_error is not None:
                self.on_error(self.failed)

    def close(self) -> None:
        """Close the file and release its lock (safe to call twice)."""
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None


def lock_holder(fd: int) -> int | None:
    """The pid holding a ``flock`` on ``fd``'s file, read from ``/proc/locks`` (Linux), or None."""
    try:
        st = os.fstat(fd)
        text = read_text("/proc/locks")
    except (OSError, SafeReadError):
        return None
    device = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5] == device and parts[4].isdigit():
            return int(parts[4]) or None
    return None


@dataclass
class LoadedTranscript:
    """A transcript read back from disk.

    Attributes:
        meta: the ``meta`` record. messages: every message in order.
        projection: the session's projection with later appends applied, or None if no request
            was ever built. usage: the usage records. warnings: skipped lines.
        searches: ToolSearch call id → its recorded result (``search`` records).
    """

    path: Path
    meta: dict[str, Any] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)
    projection: Projection | None = None
    usage: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    searches: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def session_id(self) -> str:
        """The session id (from meta, else the file name)."""
        return str(self.meta.get("id") or self.path.stem)


def load_transcript(path: Path) -> LoadedTranscript:
    """Read a transcript; unreadable lines (a torn last write) become warnings.

    Raises:
        FileNotFoundError: no such transcript.
    """
    out = LoadedTranscript(path)
    try:
        text = read_text(path, max_bytes=MAX_LARGE_BYTES)
    except SafeReadError as exc:
        out.warnings.append(f"{exc}; the session starts empty")
        return out
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = parse_json(line)
        except ValueError:
            out.warnings.append(f"{path}:{lineno}: unreadable line skipped")
            continue
        kind = record.get("type") if isinstance(record, dict) else None
        if kind == "meta":
            out.meta = out.meta or record  # a second meta: a second writer's (before the lock)
        elif kind == "message":
            message = record.get("message")
            if not _is_message(message):
                out.warnings.append(f"{path}:{lineno}: malformed message skipped")
                continue
            out.messages.append(message)
        elif kind == "projection":
            out.projection = Projection.from_json(record)
        elif kind == "tools_appended" and out.projection is not None:
            out.projection.tools.extend(record.get("tools", []))
        elif kind == "usage":
            out.usage.append(record)
        elif kind == "search" and isinstance(record.get("result"), dict):
            out.searches[str(record.get("call_id"))] = record["result"]
    return out


def _is_message(message: Any) -> bool:
    """A message a request can carry: a role of ``user``/``assistant`` and a string content or
    a list of block objects with a string ``type``."""
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        return False
    content = message.get("content")
    return isinstance(content, str) or (
        isinstance(content, list) and all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in content)
    )


def repair_torn_tail(path: Path) -> str | None:
    """Make ``path`` end with a complete line, so that appending after a crash starts a new record.

    A crash mid-write leaves a last line without its newline. A complete JSON record there gets
    its newline; a torn fragment is cut off (it was never a record). Returns a warning naming
    the file and what was done, or None when the file was already whole (so a second resume
    changes nothing).
    """
    try:
        data = read_bytes(path, max_bytes=MAX_LARGE_BYTES)
    except (OSError, SafeReadError):
        return None
    if not data or data.endswith(b"\n"):
        return None
    cut = data.rfind(b"\n") + 1
    tail = data[cut:]
    try:
        parse_json(tail.decode("utf-8"))
    except ValueError:
        os.truncate(path, cut)
        return f"{path}: torn last line ({len(tail)} bytes, a crash mid-write) removed"
    with path.open("ab") as fh:
        fh.write(b"\n")
    return None


def load_for_resume(path: Path) -> LoadedTranscript:
    """:func:`repair_torn_tail`, then :func:`load_transcript`; the repair's warning comes first."""
    torn = repair_torn_tail(path)
    saved = load_transcript(path)
    if torn:
        saved.warnings.insert(0, torn)
    return saved


def find_transcript(session_id: str | None) -> Path | None:
    """The transcript for ``session_id`` (an id or unique id prefix), or the most recent one
    when ``session_id`` is empty/None. None when nothing matches."""
    root = sessions_dir()
    if not root.is_dir():
        return None
    files = sorted(root.glob("*.jsonl"), key=lambda p: (p.stat().st_mtime, p.name))
    if not session_id:
        return files[-1] if files else None
    exact = root / f"{session_id}.jsonl"
    if exact.exists():
        return exact
    matches = [p for p in files if p.stem.startswith(session_id)]
    return matches[-1] if len(matches) == 1 else None


def list_sessions() -> list[dict[str, Any]]:
    """``{"id", "path", "modified"}`` for every transcript, newest first."""
    root = sessions_dir()
    if not root.is_dir():
        return []
    files = sorted(root.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    return [{"id": p.stem, "path": str(p), "modified": p.stat().st_mtime} for p in files]


def interrupted_results(messages: list[dict[str, Any]], reason: str) -> list[dict[str, Any]]:
    """``tool_result`` error blocks for the ``tool_use`` blocks of the last assistant message
    that have no result (a crash or cancellation mid-turn); empty when nothing is missing."""
    if not messages or messages[-1].get("role") != "assistant":
        return []
    content = messages[-1].get("content")
    if not isinstance(content, list):
        return []
    return [
        {"type": "tool_result", "tool_use_id": b["id"], "content": reason, "is_error": True}
        for b in content
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]


# -- reading the messages of a transcript ----------------------------------------------------
def message_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The content blocks of one message (a plain-string content is one ``text`` block)."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def result_text(content: Any) -> str | None:
    """The text of a ``tool_result`` block's ``content``: the string itself, or the ``text`` of
    its blocks joined by newlines (blocks that are not objects are skipped); None for anything
    else (a transcript written by another tool)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return None


def tool_uses(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every ``tool_use`` block of the assistant's messages, in order."""
    return [
        b for m in messages if m.get("role") == "assistant" for b in message_blocks(m) if b.get("type") == "tool_use"
    ]


def tool_results(messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``tool_use`` id → its ``tool_result`` block, over every message."""
    return {str(b.get("tool_use_id")): b for m in messages for b in message_blocks(m) if b.get("type") == "tool_result"}


@dataclass(frozen=True)
class HistoryEntry:
    """One thing a person saw in a conversation, read back from its messages.

    Attributes:
        kind: ``user`` | ``assistant`` (``text``) or ``tool`` (a call: ``call_id``, ``tool`` and
            ``params`` of the real tool, ExecuteTool unwrapped; ``result``, the ``tool_result``
            block or None when it was never answered).
        key: ``{message index}.{block index}``, stable for one transcript.
    """

    kind: str
    key: str
    text: str = ""
    call_id: str = ""
    tool: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] | None = None


def history(messages: list[dict[str, Any]]) -> list[HistoryEntry]:
    """The user and assistant texts and the tool calls of ``messages``, in order; the system
    reminders the session added to user messages are left out."""
    results = tool_results(messages)
    out: list[HistoryEntry] = []
    for i, message in enumerate(messages):
        for j, block in enumerate(message_blocks(message)):
            kind, key = block.get("type"), f"{i}.{j}"
            if kind == "text" and str(block.get("text", "")).strip():
                text = str(block["text"])
                if message.get("role") == "user":
                    if not text.startswith("<system-reminder>"):
                        out.append(HistoryEntry("user", key, text))
                else:
                    out.append(HistoryEntry("assistant", key, text))
            elif kind == "tool_use":
                name, args = str(block.get("name", "?")), block.get("input") or {}
                if name == "ExecuteTool" and isinstance(args, dict) and args.get("tool_name"):
                    name, args = str(args["tool_name"]), args.get("params") or {}
                call_id = str(block.get("id", ""))
                out.append(
                    HistoryEntry(
                        "tool",
                        key,
                        call_id=call_id,
                        tool=name,
                        params=args if isinstance(args, dict) else {},
                        result=results.get(str(block.get("id"))),
                    )
                )
    return out
