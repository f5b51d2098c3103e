"""Tool results are capped before they reach the model; the full text is kept on disk.

A result longer than ``tools.maxResultTokens`` (default 25,000 tokens, Claude Code's default
``MAX_MCP_OUTPUT_TOKENS``) is cut to its head, and the whole text is written to
``<data dir>/tool-results/<session id>/<call id>.txt``, folders owner-only (``0700``) and files
``0600`` from the moment they are made (another local user must not read a session's results). The model sees the head plus a note
that names the file and the Read ``offset``/``limit`` to page through it (that folder is part of
the workspace Read may reach without asking). Transcripts store what the model saw, so a
``--resume`` re-sends the capped form, never the whole result.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..dirs import data_dir, open_private, private_dir
from ..tokens import TokenCounter, default_counter

DEFAULT_MAX_RESULT_TOKENS = 25_000
#: A token is at least one character; above this many characters per allowed token a text is
#: over the limit without counting (real text averages about 4).
SURELY_OVER_CHARS_PER_TOKEN = 8
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def results_root() -> Path:
    """``<data dir>/tool-results``: where full results are kept (``TOOLSCOUT_DATA_DIR`` honoured)."""
    return data_dir() / "tool-results"


def over_limit(text: str, limit: int, counter: TokenCounter) -> int | None:
    """The token count of ``text`` when it is over ``limit`` (0 when not counted because it is
    surely over), or None when it fits."""
    if len(text) <= limit:
        return None
    if len(text) > limit * SURELY_OVER_CHARS_PER_TOKEN:
        return 0
    tokens = counter.count(text)
    return tokens if tokens > limit else None


def cap_result(text: str, *, limit: int, folder: Path, name: str, counter: TokenCounter | None = None) -> str:
    """``text`` itself when it fits in ``limit`` tokens; else its head plus a paging note, with
    the full text written to ``folder/<name>.txt``.

    Args:
        text: the tool result as the model would see it.
        limit: most tokens the model may see (the note adds about 100).
        folder: where to keep the full text (created when needed).
        name: the call's id (made file-name safe).
        counter: token counter (default: tiktoken's cl100k).

    Returns:
        The text for the model. When the full text cannot be written, the note says so and the
        head is still all the model gets.
    """
    counter = counter or default_counter()
    tokens = over_limit(text, limit, counter)
    if tokens is None:
        return text
    head = head_within(text, limit, tokens, counter)
    shown_lines = head.count("\n") + 1
    total_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    path = folder / f"{_SAFE_NAME.sub('_', name) or 'result'}.txt"
    try:
        private_dir(folder)
        with os.fdopen(open_private(path), "w", encoding="utf-8", errors="replace") as fh:
            fh.write(text)
    except OSError as exc:
        return (
            f"{head}\n\n[toolscout: output truncated to about {limit:,} tokens of {len(text):,} characters; "
            f"the full result could not be saved ({exc.strerror or exc}).]"
        )
    per_line = max(1, len(text) // total_lines)
    page = max(1, min(2000, (limit * 3) // per_line))
    intro = (
        f"{head}\n\n[toolscout: output truncated to about {limit:,} tokens (tools.maxResultTokens). The full "
        f"result ({len(text):,} characters, {total_lines:,} lines) is saved at {path}."
    )
    if text[len(head) : len(head) + 1] not in ("\n", ""):  # cut inside a line: Read cuts long lines
        offset = len(head.encode("utf-8", "replace"))  # bytes, as tail counts them
        return (
            f"{intro} The part above stops inside line {shown_lines}, at byte {offset:,}; Read shows at most "
            f'2,000 characters of a line, so read on with Bash: tail -c +{offset + 1} "{path}" | '
            f'head -c {limit * 3}, or search it with Grep path="{path}".]'
        )
    return (
        f'{intro} The part above ends at line {shown_lines}; read on with Read file_path="{path}" '
        f'offset={shown_lines + 1} limit={page}, or search it with Grep path="{path}".]'
    )


def head_within(text: str, limit: int, tokens: int, counter: TokenCounter) -> str:
    """A prefix of ``text`` of 80–100 % of ``limit`` tokens (cut at a line end when one is near).

    ``tokens`` is ``over_limit``'s answer for ``text`` (0 when not counted)."""
    chars = int(len(text) * limit / tokens * 0.95) if tokens else limit * 3
    fits = ""
    for _ in range(8):  # rescale by the measured chars/token; converges in 2–3 rounds
        head = text[:chars]
        count = counter.count(head)
        if count <= limit:
            fits = head
            if count >= limit * 0.8 or chars >= len(text):
                break
        chars = max(1, int(chars * limit / max(count, 1) * 0.95))
    cut = fits.rfind("\n")
    return fits[:cut] if cut > len(fits) * 0.8 else fits
