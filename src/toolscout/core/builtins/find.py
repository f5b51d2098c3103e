"""Search built-ins: Glob (file names, in Python) and Grep (file contents, with ripgrep:
:mod:`.ripgrep`).

Both start from the real path the permission check approved (``ToolContext.target``), opened
with no symlink followed (:mod:`.safe_open`), and follow no symbolic link below it: a link in the
project that points at ``~/.ssh/id_rsa`` is neither listed nor searched (Read of it asks, as for
any path outside the workspace). Both skip version-control and environment directories
(``.git``, ``.venv``, ``node_modules`` ...) and bound their output; Grep also skips what
``.gitignore`` lists (in a git work tree), ``.ignore`` and ``.rgignore``, and binary files.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path
from typing import Any

from ..models import ToolErrorKind, ToolResult
from ._common import Stopped, clip, fail, in_thread, is_binary, spec
from .base import ToolContext
from .ripgrep import run_rg
from .safe_open import NotADirectory, Refused, checked_target, open_dir, open_file

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
#: Result caps: Glob paths, Grep lines (content mode).
MAX_GLOB_RESULTS = 100
MAX_GREP_LINES = 250
#: Time limit of one Grep (s): the search process is killed after it.
GREP_TIMEOUT_S = 60.0


def _glob_match(rel: Path, pattern: str) -> bool:
    # Path.match is anchored at the right; "**/" prefixes mean "at any depth", so also try the
    # pattern without it (so "**/*.py" matches a top-level "a.py" as in shells with globstar).
    if rel.match(pattern) or (pattern.startswith("**/") and rel.match(pattern[3:])):
        return True
    return "/" not in pattern and rel.name == pattern


def _glob(root: Path, pattern: str, stop: threading.Event) -> list[tuple[float, str]]:
    """``(mtime, relative path)`` of the regular files under ``root`` matching ``pattern``.

    The walk is ``os.fwalk`` from a descriptor of ``root``: directories are opened relative to
    their parent and checked to be the directory listed, symlinks are neither followed nor listed.

    Raises:
        Refused, OSError: ``root`` cannot be opened as a directory (:func:`~.safe_open.open_dir`).
    """
    top = open_dir(root, listing=True)
    found: list[tuple[float, str]] = []
    try:
        for here, dirs, files, here_fd in os.fwalk(".", dir_fd=top):
            if stop.is_set():
                raise Stopped
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            for name in files:
                rel = Path(here, name)
                if not _glob_match(rel, pattern):
                    continue
                try:
                    st = os.stat(name, dir_fd=here_fd, follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    found.append((st.st_mtime, str(rel)))
    finally:
        os.close(top)
    return found


class GlobTool:
    """Find files by glob pattern, newest first."""

    read_only = True
    spec = spec(
        "Glob",
        'Finds files by name with a glob pattern such as "**/*.py" or "src/**/*.ts". Returns '
        f"matching paths relative to the search directory, most recently modified first (at most "
        f"{MAX_GLOB_RESULTS}). Skips .git, .venv, node_modules and caches.",
        {
            "pattern": {"type": "string", "description": "Glob pattern to match file paths against"},
            "path": {"type": "string", "description": "Directory to search in (default: working directory)"},
        },
        ["pattern"],
        hint="find files by name or path pattern (wildcards)",
    )

    async def run(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """List files under ``path`` whose relative path matches ``pattern``."""
        root = checked_target("Glob", params, ctx.cwd, ctx.target)
        pattern = params["pattern"].strip()
        if not pattern:
            return fail("Glob", 'pattern is empty; try "**/*".', ToolErrorKind.INVALID_PARAMS)
        try:
            found = await in_thread(lambda stop: _glob(root, pattern, stop))
        except NotADirectory:
            return fail("Glob", f"Not a directory: {root}")
        except FileNotFoundError:
            return fail("Glob", f"No such directory: {root}")
        except (Refused, OSError) as exc:
            return fail("Glob", str(exc) if isinstance(exc, Refused) else f"Cannot list {root}: {exc.strerror or exc}")
        if not found:
            return ToolResult.ok("Glob", f"No files match {pattern!r} under {root}.")
        found.sort(key=lambda hit: (-hit[0], hit[1]))
        lines = [rel for _, rel in found[:MAX_GLOB_RESULTS]]
        if len(found) > MAX_GLOB_RESULTS:
            lines.append(f"… [{len(found) - MAX_GLOB_RESULTS} more; narrow the pattern]")
        return ToolResult.ok("Glob", "\n".join(lines))


class GrepTool:
    """Regular-expression search over file contents, run by ripgrep (:mod:`.ripgrep`)."""

    read_only = True
    spec = spec(
        "Grep",
        "Searches file contents for text matching a regular expression (ripgrep syntax: no "
        'look-around or backreferences). output_mode: "files_with_matches" (default, paths only), '
        '"content" (matching lines with line numbers) or "count" (matches per file). Filter files '
        'with glob (e.g. "*.py"). Skips binary files, .gitignored files, .git, .venv and node_modules.',
        {
            "pattern": {"type": "string", "description": "Regular expression to search for"},
            "path": {"type": "string", "description": "File or directory to search (default: working directory)"},
            "glob": {"type": "string", "description": "Only search files whose path matches this glob"},
            "output_mode": {
                "type": "string",
                "enum": ["files_with_matches", "content", "count"],
                "default": "files_with_matches",
            },
            "-i": {"type": "boolean", "description": "Case-insensitive search"},
            "head_limit": {"type": "integer", "minimum": 1, "description": "Return at most this many lines"},
        },
        ["pattern"],
        hint="search inside files for text or a regex",
    )

    async def run(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Search ``path`` for ``pattern`` with ripgrep, bounded by :data:`GREP_TIMEOUT_S`; see
        the spec's description for the modes.

        Raises:
            asyncio.CancelledError: re-raised after the search process is killed.
        """
        root = checked_target("Grep", params, ctx.cwd, ctx.target)
        mode = params.get("output_mode") or "files_with_matches"
        limit = int(params.get("head_limit") or MAX_GREP_LINES)
        args = ["--regexp", params["pattern"], *(["--ignore-case"] if params.get("-i") else [])]
        try:
            top = open_dir(root)
        except NotADirectory:  # named in the output as the call named it (``key``, not its target)
            return await _grep_file(root, Path(str(params.get("path"))).name or root.name, args, mode, limit)
        except FileNotFoundError:
            return fail("Grep", f"No such file or directory: {root}")
        except (Refused, OSError) as exc:
            return fail(
                "Grep", str(exc) if isinstance(exc, Refused) else f"Cannot search {root}: {exc.strerror or exc}"
            )
        flags = {
            "content": ["--line-number", "--with-filename", "--no-heading"],
            "count": ["--count-matches", "--with-filename"],
        }.get(mode, ["--files-with-matches"])
        globs = [
            *(["--glob", params["glob"]] if params.get("glob") else []),
            *(arg for d in sorted(SKIP_DIRS) for arg in ("--glob", f"!{d}/")),
        ]
        try:
            found = await _search(
                ["--hidden", "--sort=path", *flags, *globs, *args, "."], params["pattern"], limit, cwd_fd=top
            )
        finally:
            os.close(top)
        if isinstance(found, ToolResult):
            return found
        return _result([line.removeprefix("./") for line in found[0]], found[1], params["pattern"], mode, limit)


async def _grep_file(path: Path, label: str, args: list[str], mode: str, limit: int) -> ToolResult:
    """Grep of one file: opened as Read opens it, searched on rg's standard input."""
    try:
        with open_file(path, "read") as (file, _):
            if is_binary(os.pread(file.fileno(), 8192, 0)):
                return fail("Grep", f"{path} is a binary file; Grep searches text files only.")
            flags = {"content": ["--line-number", "--no-filename"], "count": ["--count-matches", "--no-filename"]}.get(
                mode, ["--files-with-matches"]
            )
            found = await _search([*flags, *args, "-"], args[1], limit, stdin_fd=file.fileno())
    except FileNotFoundError:
        return fail("Grep", f"No such file or directory: {path}")
    except (Refused, OSError) as exc:
        return fail("Grep", str(exc) if isinstance(exc, Refused) else f"Cannot search {path}: {exc.strerror or exc}")
    if isinstance(found, ToolResult):
        return found
    lines = [label if mode == "files_with_matches" else f"{label}:{line}" for line in found[0]]
    return _result(lines, found[1], args[1], mode, limit)


async def _search(
    args: list[str], pattern: str, limit: int, *, cwd_fd: int | None = None, stdin_fd: int | None = None
) -> tuple[list[str], bool] | ToolResult:
    """rg's output lines and whether they reached ``limit``, or the error result (time limit,
    bad pattern, no rg)."""
    try:
        out = await run_rg(args, cwd_fd=cwd_fd, stdin_fd=stdin_fd, limit=limit, timeout=GREP_TIMEOUT_S)
    except FileNotFoundError:
        return fail(
            "Grep",
            "ripgrep (rg) was not found: it comes with toolscout's `ripgrep` dependency; "
            "reinstall toolscout (pip install --force-reinstall toolscout) or put rg on PATH.",
        )
    except OSError as exc:
        return fail("Grep", f"Cannot start the search process (rg): {exc.strerror or exc}")
    if out.timed_out:
        return fail(
            "Grep",
            f"The search was stopped after {GREP_TIMEOUT_S:g} s; search a narrower path or "
            "use glob to pick fewer files.",
            ToolErrorKind.TIMEOUT,
        )
    if out.returncode == 2 and not out.lines:
        why = out.stderr.strip().removeprefix("rg: ")
        if "regex" in why or "not allowed in a regex" in why:
            return fail(
                "Grep",
                f"Invalid regular expression {pattern!r} (ripgrep's syntax): {why}",
                ToolErrorKind.INVALID_PARAMS,
            )
        return fail("Grep", f"The search failed: {why[-500:] or 'rg exited with status 2'}")
    return out.lines, out.full


def _result(found: list[str], full: bool, pattern: str, mode: str, limit: int) -> ToolResult:
    if full and mode == "content":
        found.append(f"… [stopped at {limit} lines; use head_limit or a narrower path]")
    if not found:
        return ToolResult.ok("Grep", f"No matches for {pattern!r}.")
    return ToolResult.ok("Grep", clip("\n".join(found)))
