"""Search built-ins: Glob (file names) and Grep (file contents), in pure Python; Grep runs its
regular expression in a child process that can be killed (:mod:`.grep_worker`).

Both skip version-control and environment directories (``.git``, ``.venv``, ``node_modules`` ...)
and bound their output, so a search over a large tree stays fast and small.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..models import ToolErrorKind, ToolResult
from ._common import clip, fail, is_binary, kill_group, resolve, spec
from .base import ToolContext

SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__",
                       ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox"})
#: Result caps: Glob paths, Grep lines (content mode); larger files are not searched (bytes).
MAX_GLOB_RESULTS = 100
MAX_GREP_LINES = 250
MAX_GREP_FILE_BYTES = 5_000_000
#: Time limit of one Grep (s): the search process is killed after it.
GREP_TIMEOUT_S = 60.0


def _walk(root: Path) -> Iterator[Path]:
    """Every file under ``root`` (sorted per directory), skipping :data:`SKIP_DIRS`."""
    stack = [root]
    while stack:
        here = stack.pop()
        try:
            entries = sorted(here.iterdir(), key=lambda p: p.name)
        except OSError:
            continue
        dirs = []
        for entry in entries:
            if entry.is_dir() and not entry.is_symlink():
                if entry.name not in SKIP_DIRS:
                    dirs.append(entry)
            elif entry.is_file():
                yield entry
        stack.extend(reversed(dirs))


def _glob_match(rel: Path, pattern: str) -> bool:
    # Path.match is anchored at the right; "**/" prefixes mean "at any depth", so also try the
    # pattern without it (so "**/*.py" matches a top-level "a.py" as in shells with globstar).
    if rel.match(pattern) or (pattern.startswith("**/") and rel.match(pattern[3:])):
        return True
    return "/" not in pattern and rel.name == pattern


class GlobTool:
    """Find files by glob pattern, newest first."""

    read_only = True
    spec = spec(
        "Glob",
        "Finds files by name with a glob pattern such as \"**/*.py\" or \"src/**/*.ts\". Returns "
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
        root = resolve(ctx.cwd, params.get("path") or ".")
        if not root.is_dir():
            return fail("Glob", f"Not a directory: {root}")
        pattern = params["pattern"].strip()
        if not pattern:
            return fail("Glob", "pattern is empty; try \"**/*\".", ToolErrorKind.INVALID_PARAMS)
        found = await asyncio.to_thread(
            lambda: [p for p in _walk(root) if _glob_match(p.relative_to(root), pattern)]
        )
        if not found:
            return ToolResult.ok("Glob", f"No files match {pattern!r} under {root}.")

        def mtime(p: Path) -> float:
            try:
                return p.stat().st_mtime
            except OSError:
                return 0.0

        found.sort(key=lambda p: (-mtime(p), str(p)))
        lines = [str(p.relative_to(root)) for p in found[:MAX_GLOB_RESULTS]]
        if len(found) > MAX_GLOB_RESULTS:
            lines.append(f"… [{len(found) - MAX_GLOB_RESULTS} more; narrow the pattern]")
        return ToolResult.ok("Glob", "\n".join(lines))


class GrepTool:
    """Regular-expression search over file contents."""

    read_only = True
    spec = spec(
        "Grep",
        "Searches file contents for text matching a regular expression (Python re syntax). output_mode: "
        "\"files_with_matches\" (default, paths only), \"content\" (matching lines with line "
        "numbers) or \"count\" (matches per file). Filter files with glob (e.g. \"*.py\"). Skips "
        "binary files, .git, .venv and node_modules.",
        {
            "pattern": {"type": "string", "description": "Regular expression to search for"},
            "path": {"type": "string", "description": "File or directory to search (default: working directory)"},
            "glob": {"type": "string", "description": "Only search files whose path matches this glob"},
            "output_mode": {"type": "string", "enum": ["files_with_matches", "content", "count"],
                            "default": "files_with_matches"},
            "-i": {"type": "boolean", "description": "Case-insensitive search"},
            "head_limit": {"type": "integer", "minimum": 1, "description": "Return at most this many lines"},
        },
        ["pattern"],
        hint="search inside files for text or a regex",
    )

    async def run(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Search ``path`` for ``pattern`` in a killable child process (:mod:`.grep_worker`),
        bounded by :data:`GREP_TIMEOUT_S`; see the spec's description for the modes.

        Raises:
            asyncio.CancelledError: re-raised after the search process is killed.
        """
        try:
            re.compile(params["pattern"], re.IGNORECASE if params.get("-i") else 0)
        except re.error as exc:
            return fail("Grep", f"Invalid regular expression {params['pattern']!r}: {exc}",
                        ToolErrorKind.INVALID_PARAMS)
        root = resolve(ctx.cwd, params.get("path") or ".")
        if not root.exists():
            return fail("Grep", f"No such file or directory: {root}")
        request = {"pattern": params["pattern"], "ignore_case": bool(params.get("-i")), "root": str(root),
                   "glob": params.get("glob"), "mode": params.get("output_mode") or "files_with_matches",
                   "limit": int(params.get("head_limit") or MAX_GREP_LINES)}
        found = await _run_worker(request)
        if isinstance(found, ToolResult):
            return found
        if not found:
            return ToolResult.ok("Grep", f"No matches for {params['pattern']!r}.")
        return ToolResult.ok("Grep", clip("\n".join(found)))


async def _run_worker(request: dict[str, Any]) -> list[str] | ToolResult:
    """The worker's output lines, or the error result (time limit, crash)."""
    package_root = str(Path(__file__).resolve().parents[3])  # the folder holding ``toolscout``
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "toolscout.core.builtins.grep_worker", stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True, env=env)
    except OSError as exc:
        return fail("Grep", f"Cannot start the search process: {exc}")
    try:
        out, err = await asyncio.wait_for(proc.communicate(json.dumps(request).encode()), GREP_TIMEOUT_S)
    except TimeoutError:
        await kill_group(proc)
        return fail("Grep", f"The search was stopped after {GREP_TIMEOUT_S:g} s. The pattern "
                    f"{request['pattern']!r} may backtrack catastrophically (nested repetition such as "
                    "(a+)+); simplify it or search a narrower path.", ToolErrorKind.TIMEOUT)
    except asyncio.CancelledError:
        await kill_group(proc)
        raise
    if proc.returncode != 0:
        return fail("Grep", f"The search failed: {err.decode('utf-8', 'replace').strip()[-500:] or proc.returncode}")
    return list(json.loads(out))


def search_files(regex: re.Pattern[str], root: Path, glob: str | None, mode: str, limit: int) -> list[str]:
    """Grep's search, in the calling process (the worker runs it): output lines for ``mode``."""
    files = [root] if root.is_file() else _walk(root)
    base = root.parent if root.is_file() else root
    out: list[str] = []
    for file in files:
        rel = file.relative_to(base)
        if glob and not _glob_match(rel, glob):
            continue
        try:
            if file.stat().st_size > MAX_GREP_FILE_BYTES:
                continue
            data = file.read_bytes()
        except OSError:
            continue
        if is_binary(data):
            continue
        text = data.decode("utf-8", errors="replace")
        if mode == "content":
            for n, line in enumerate(text.splitlines(), 1):
                if regex.search(line):
                    out.append(f"{rel}:{n}:{line[:500]}")
                    if len(out) >= limit:
                        return [*out, f"… [stopped at {limit} lines; use head_limit or a narrower path]"]
        else:
            hits = len(regex.findall(text)) if mode == "count" else int(regex.search(text) is not None)
            if hits:
                out.append(f"{rel}:{hits}" if mode == "count" else str(rel))
                if len(out) >= limit:
                    return out
    return out
