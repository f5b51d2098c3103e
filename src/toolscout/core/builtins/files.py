"""File built-ins: Read, Write and Edit (semantics follow Claude Code's tools of the same names).

Paths may be absolute or relative to the session's working directory. Every failure is an
``is_error`` result whose text says what to do next; nothing here raises to the caller.

Each tool works on the real path its permission check approved (``ToolContext.target``), opened
with no symlink followed and only when it is a regular file (:mod:`.safe_open`). File work runs
in a worker thread, so a slow disk never stalls the app. Read is bounded: it reads up to the end
of the lines it returns (plus one byte to tell whether the file goes on), never the whole file,
keeps at most :data:`MAX_LINE_CHARS` of any line, and stops when cancelled.
"""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..models import ToolErrorKind, ToolResult
from ._common import Stopped, fail, in_thread, is_binary, spec
from .base import ToolContext
from .safe_open import Refused, checked_target, open_file, read_capped, rewrite, write_all

#: Lines returned by Read when no ``limit`` is given, and the cut for very long lines (characters).
DEFAULT_READ_LINES = 2000
MAX_LINE_CHARS = 2000
#: Most characters one Read returns; past it the page ends early, naming the offset to go on from.
MAX_READ_CHARS = 200_000
#: Largest file Edit (and NotebookEdit) loads (bytes): they rewrite the whole file.
MAX_EDIT_BYTES = 64 * 1024 * 1024


def _mark_read(ctx: ToolContext, path: str) -> None:
    ctx.state.setdefault("read_files", set()).add(path)


class _Lines:
    """Lines of a file read in 1 MiB chunks (``BufferedReader.readline`` is several times slower
    on long lines), checking ``stop`` before each chunk. At most one chunk is held."""

    def __init__(self, raw: io.FileIO, stop: threading.Event) -> None:
        self.raw, self.stop, self.buf, self.pos = raw, stop, b"", 0

    def _fill(self) -> bool:
        if self.stop.is_set():
            raise Stopped
        self.buf, self.pos = self.raw.read(1 << 20) or b"", 0
        return bool(self.buf)

    def skip(self, n: int) -> int:
        """Pass over ``n`` lines; the number passed (fewer at the end of the file)."""
        done, partial = 0, False
        while done < n:
            if self.pos >= len(self.buf) and not self._fill():
                return done + int(partial)
            found = self.buf.count(b"\n", self.pos)
            if done + found < n:
                done, partial = done + found, not self.buf.endswith(b"\n")
                self.pos = len(self.buf)
                continue
            for _ in range(n - done):
                self.pos = self.buf.index(b"\n", self.pos) + 1
            return n
        return done

    def line(self) -> tuple[bytes, bool] | None:
        """The next line without its line ending, cut to ``4 * MAX_LINE_CHARS`` bytes (the rest is
        read and dropped), and True when it was cut; None at the end of the file."""
        keep = 4 * MAX_LINE_CHARS + 4
        out, cut = bytearray(), False
        while True:
            if self.pos >= len(self.buf) and not self._fill():
                return (bytes(out), cut) if out or cut else None
            nl = self.buf.find(b"\n", self.pos)
            end = len(self.buf) if nl < 0 else nl
            room = keep - len(out)
            cut = cut or end - self.pos > room
            out += self.buf[self.pos : self.pos + max(0, min(room, end - self.pos))]
            if nl >= 0:
                self.pos = nl + 1
                return bytes(out).removesuffix(b"\r"), cut
            self.pos = len(self.buf)

    def more(self) -> bool:
        """True when anything follows (reads at most one more chunk)."""
        return self.pos < len(self.buf) or self._fill()


def _numbered(n: int, raw: bytes, cut: bool) -> str:
    line = raw.decode("utf-8", errors="replace")
    if cut or len(line) > MAX_LINE_CHARS:
        line = line[:MAX_LINE_CHARS] + "… [line truncated]"
    return f"{n:>6}\t{line}"


def _read_page(path: Path, start: int, count: int, stop: threading.Event) -> ToolResult:
    """Lines ``start`` .. ``start + count - 1`` of the regular file at ``path`` (Read's result)."""
    with open_file(path, "read") as (raw, _):
        head = os.pread(raw.fileno(), 8192, 0)
        if not head:
            return ToolResult.ok("Read", f"<system-reminder>{path} exists but is empty.</system-reminder>")
        if is_binary(head):
            size = os.fstat(raw.fileno()).st_size
            return fail("Read", f"{path} is a binary file ({size:,} bytes); Read shows text files only.")
        lines = _Lines(raw, stop)
        seen = lines.skip(start - 1)
        out: list[str] = []
        size, n = 0, start
        while seen == start - 1 and (got := lines.line()) is not None:
            out.append(_numbered(n, *got))
            size, n = size + len(out[-1]) + 1, n + 1
            if n - start >= count or size >= MAX_READ_CHARS:
                break
        if not out:
            return fail(
                "Read", f"offset {start} is past the end of {path} ({seen} lines).", ToolErrorKind.INVALID_PARAMS
            )
        if lines.more():
            why = "" if n - start >= count else f" (this page stops at {MAX_READ_CHARS:,} characters)"
            out.append(f"… [the file goes on{why}; continue with offset={n}]")
        return ToolResult.ok("Read", "\n".join(out))


def file_error(tool: str, path: Path, exc: Exception, missing: str) -> ToolResult:
    """The result for a failure to open ``path``: ``missing`` when it does not exist."""
    if isinstance(exc, Refused):
        return fail(tool, str(exc))
    if isinstance(exc, FileNotFoundError):
        return fail(tool, missing)
    if isinstance(exc, OSError):
        return fail(tool, f"Cannot open {path}: {exc.strerror or exc}")
    return fail(tool, f"Cannot use {path}: {exc}")


class ReadTool:
    """Read a text file with ``cat -n`` style line numbers."""

    read_only = True
    spec = spec(
        "Read",
        "Reads a text file from the local filesystem and shows its contents: lines prefixed with "
        f"their 1-based line number (cat -n format). By default up to {DEFAULT_READ_LINES} lines from the start; "
        "use offset and limit for long files. Lines longer than 2000 characters are cut. "
        "file_path may be absolute or relative to the working directory.",
        {
            "file_path": {"type": "string", "description": "Path of the file to read"},
            "offset": {"type": "integer", "minimum": 1, "description": "1-based line to start at"},
            "limit": {"type": "integer", "minimum": 1, "description": "Number of lines to read"},
        },
        ["file_path"],
        hint="open a file and show its contents",
    )

    async def run(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Read ``params["file_path"]`` from ``offset`` (1-based) for ``limit`` lines.

        Raises:
            asyncio.CancelledError: re-raised; the reading thread stops at its next chunk.
        """
        path = checked_target("Read", params, ctx.cwd, ctx.target)
        start = int(params.get("offset") or 1)
        count = int(params.get("limit") or DEFAULT_READ_LINES)
        try:
            result = await in_thread(lambda stop: _read_page(path, start, count, stop))
        except IsADirectoryError:
            return fail("Read", f"{path} is a directory; use Glob or Bash `ls` to list it.")
        except (Refused, OSError) as exc:
            return file_error("Read", path, exc, f"File does not exist: {path}. Use Glob to find the right path.")
        if not result.is_error:
            _mark_read(ctx, str(path))
        return result


class WriteTool:
    """Create or overwrite a file."""

    read_only = False
    spec = spec(
        "Write",
        "Writes a file to the local filesystem: creates a new file, or overwrites an existing one "
        "completely, creating parent directories as needed. Prefer Edit to change part of an "
        "existing file. file_path may be absolute or relative to the working directory.",
        {
            "file_path": {"type": "string", "description": "Path of the file to write"},
            "content": {"type": "string", "description": "The complete new content of the file"},
        },
        ["file_path", "content"],
        hint="create a new file or overwrite one",
    )

    async def run(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Write ``content`` to ``file_path`` (UTF-8)."""
        path = checked_target("Write", params, ctx.cwd, ctx.target)
        data = params["content"].encode("utf-8")

        def write(stop: threading.Event) -> bool:
            with open_file(path, "write", create_parents=True) as (file, existed):
                write_all(file, data)
            return existed

        try:
            existed = await in_thread(write)
        except IsADirectoryError:
            return fail("Write", f"{path} is a directory; give a file path.")
        except (Refused, OSError) as exc:
            return file_error("Write", path, exc, f"Cannot write {path}: its folder does not exist.")
        _mark_read(ctx, str(path))
        verb = "Updated" if existed else "Created"
        return ToolResult.ok("Write", f"{verb} {path} ({len(data):,} bytes).")


class EditTool:
    """Exact string replacement in a file."""

    read_only = False
    spec = spec(
        "Edit",
        "Edits a file by exact string replacement: replaces old_string with new_string. "
        "old_string must occur exactly once unless replace_all is true (include surrounding lines "
        "to make it unique). Whitespace and indentation must match "
        "the file exactly; line-number prefixes from Read are not part of the file.",
        {
            "file_path": {"type": "string", "description": "Path of the file to modify"},
            "old_string": {"type": "string", "description": "The exact text to replace"},
            "new_string": {"type": "string", "description": "The replacement (must differ from old_string)"},
            "replace_all": {
                "type": "boolean",
                "default": False,
                "description": "Replace every occurrence instead of exactly one",
            },
        },
        ["file_path", "old_string", "new_string"],
        hint="modify a file by replacing text in it",
    )

    async def run(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Replace ``old_string`` with ``new_string`` once (or everywhere with ``replace_all``)."""
        path = checked_target("Edit", params, ctx.cwd, ctx.target)
        old, new = params["old_string"], params["new_string"]
        if old == new:
            return fail(
                "Edit", "old_string and new_string are identical; nothing to change.", ToolErrorKind.INVALID_PARAMS
            )
        if old == "":
            return fail("Edit", "old_string is empty; use Write to create a file.", ToolErrorKind.INVALID_PARAMS)
        every = bool(params.get("replace_all"))

        def change(text: str) -> str | ToolResult:
            count = text.count(old)
            if count == 0:
                return fail("Edit", f"old_string was not found in {path}. Read the file and copy the text exactly.")
            if count > 1 and not every:
                return fail(
                    "Edit",
                    f"old_string occurs {count} times in {path}; add surrounding context to make "
                    "it unique, or set replace_all to true.",
                )
            n = count if every else 1
            done.append(f"Edited {path}: {n} replacement{'s' if n != 1 else ''}.")
            return text.replace(old, new) if every else text.replace(old, new, 1)

        done: list[str] = []
        failed = await update_text("Edit", path, change, f"File does not exist: {path}. Use Write to create it.")
        return failed or ToolResult.ok("Edit", done[0])


async def update_text(
    tool: str, path: Path, change: Callable[[str], str | ToolResult], missing: str
) -> ToolResult | None:
    """Load the UTF-8 file at ``path`` (at most :data:`MAX_EDIT_BYTES`), pass its text to
    ``change`` and write back what it returns, in a worker thread, through one descriptor opened
    as :func:`~.safe_open.open_file` does. None on success, else the error result (``change``'s
    own, or why the file could not be used; ``missing`` when it does not exist)."""

    def work(stop: threading.Event) -> ToolResult | None:
        with open_file(path, "update") as (file, _):
            data = read_capped(file, MAX_EDIT_BYTES)
            if data is None:
                return fail(
                    tool,
                    f"{path} is larger than {MAX_EDIT_BYTES // 2**20} MiB; {tool} rewrites whole "
                    "files, so it does not take one this large. Use Bash (sed, patch) instead.",
                )
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                return fail(tool, f"Cannot read {path} as UTF-8 text: {exc}")
            updated = change(text)
            if isinstance(updated, ToolResult):
                return updated
            try:
                rewrite(file, updated.encode("utf-8"))
            except OSError as exc:
                return fail(tool, f"Cannot write {path}: {exc.strerror or exc}")
        return None

    try:
        return await in_thread(work)
    except IsADirectoryError:
        return fail(tool, f"{path} is a directory; give a file path.")
    except (Refused, OSError) as exc:
        return file_error(tool, path, exc, missing)
