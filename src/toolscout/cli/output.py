"""Every byte the CLI writes goes through the core's one sanitiser.

:func:`sanitised_output` swaps ``sys.stdout`` and ``sys.stderr`` for :class:`SafeStream` wrappers
for the length of a command, so no path can forget it: tables, tool results, server stderr in
``mcp list``, warnings, headless answers, and anything a library logs. Carriage returns are kept
(progress lines redraw with them); escape sequences and other controls are removed. JSON output
is written with :func:`toolscout.core.sanitize.dumps_json`, which escapes controls as JSON does, so
the wrapper finds nothing to remove in it.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from ..core.sanitize import strip_controls


class SafeStream:
    """A text stream that strips terminal control sequences from everything written to it.

    Args:
        raw: the stream written to (its other attributes are passed through).
    """

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        """Write ``text`` without escape sequences or controls (tab, newline, CR kept)."""
        self.raw.write(strip_controls(text, keep="\n\t\r"))
        return len(text)

    def writelines(self, lines: Any) -> None:
        """Write each line through :meth:`write`."""
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


@contextlib.contextmanager
def sanitised_output() -> Iterator[None]:
    """Wrap ``sys.stdout`` and ``sys.stderr`` in :class:`SafeStream` until the block ends."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(sys.stdout), SafeStream(sys.stderr)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
