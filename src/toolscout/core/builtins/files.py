"""File built-ins: Read, Write and Edit (semantics follow Claude Code's tools of the same names).

Paths may be absolute or relative to the session's working directory. Every failure is an
``is_error`` result whose text says what to do next; nothing here raises to the caller.
"""

from __future__ import annotations

from typing import Any

from ..models import ToolErrorKind, ToolResult
from ._common import clip, fail, is_binary, resolve, spec
from .base import ToolContext

#: Lines returned by Read when no ``limit`` is given, and the cut for very long lines (characters).
DEFAULT_READ_LINES = 2000
MAX_LINE_CHARS = 2000


def _mark_read(ctx: ToolContext, path: str) -> None:
    ctx.state.setdefault("read_files", set()).add(path)


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
        """Read ``params["file_path"]`` from ``offset`` (1-based) for ``limit`` lines."""
        path = resolve(ctx.cwd, params["file_path"])
        if path.is_dir():
            return fail("Read", f"{path} is a directory; use Glob or Bash `ls` to list it.")
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return fail("Read", f"File does not exist: {path}. Use Glob to find the right path.")
        except OSError as exc:
            return fail("Read", f"Cannot read {path}: {exc.strerror or exc}")
        if is_binary(data):
            return fail("Read", f"{path} is a binary file ({len(data):,} bytes); Read shows text files only.")
        text = data.decode("utf-8", errors="replace")
        lines = text.splitlines()
        _mark_read(ctx, str(path))
        if not lines:
            return ToolResult.ok("Read", f"<system-reminder>{path} exists but is empty.</system-reminder>")
        start = int(params.get("offset") or 1)
        count = int(params.get("limit") or DEFAULT_READ_LINES)
        if start > len(lines):
            return fail("Read", f"offset {start} is past the end of {path} ({len(lines)} lines).",
                        ToolErrorKind.INVALID_PARAMS)
        chosen = lines[start - 1 : start - 1 + count]
        out = []
        for n, line in enumerate(chosen, start):
            if len(line) > MAX_LINE_CHARS:
                line = line[:MAX_LINE_CHARS] + "… [line truncated]"
            out.append(f"{n:>6}\t{line}")
        rest = len(lines) - (start - 1 + len(chosen))
        if rest > 0:
            out.append(f"… [{rest} more lines; continue with offset={start + len(chosen)}]")
        return ToolResult.ok("Read", clip("\n".join(out), 200_000))


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
        path = resolve(ctx.cwd, params["file_path"])
        if path.is_dir():
            return fail("Write", f"{path} is a directory; give a file path.")
        existed = path.exists()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(params["content"], encoding="utf-8")
        except OSError as exc:
            return fail("Write", f"Cannot write {path}: {exc.strerror or exc}")
        _mark_read(ctx, str(path))
        verb = "Updated" if existed else "Created"
        return ToolResult.ok("Write", f"{verb} {path} ({len(params['content'].encode('utf-8')):,} bytes).")


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
            "replace_all": {"type": "boolean", "default": False,
                            "description": "Replace every occurrence instead of exactly one"},
        },
        ["file_path", "old_string", "new_string"],
        hint="modify a file by replacing text in it",
    )

    async def run(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Replace ``old_string`` with ``new_string`` once (or everywhere with ``replace_all``)."""
        path = resolve(ctx.cwd, params["file_path"])
        old, new = params["old_string"], params["new_string"]
        if old == new:
            return fail("Edit", "old_string and new_string are identical; nothing to change.",
                        ToolErrorKind.INVALID_PARAMS)
        if old == "":
            return fail("Edit", "old_string is empty; use Write to create a file.", ToolErrorKind.INVALID_PARAMS)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return fail("Edit", f"File does not exist: {path}. Use Write to create it.")
        except (OSError, UnicodeDecodeError) as exc:
            return fail("Edit", f"Cannot read {path} as UTF-8 text: {exc}")
        count = text.count(old)
        if count == 0:
            return fail("Edit", f"old_string was not found in {path}. Read the file and copy the text exactly.")
        if count > 1 and not params.get("replace_all"):
            return fail("Edit", f"old_string occurs {count} times in {path}; add surrounding context to make "
                        "it unique, or set replace_all to true.")
        updated = text.replace(old, new) if params.get("replace_all") else text.replace(old, new, 1)
        try:
            path.write_text(updated, encoding="utf-8")
        except OSError as exc:
            return fail("Edit", f"Cannot write {path}: {exc.strerror or exc}")
        n = count if params.get("replace_all") else 1
        return ToolResult.ok("Edit", f"Edited {path}: {n} replacement{'s' if n != 1 else ''}.")
