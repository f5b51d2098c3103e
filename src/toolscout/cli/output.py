"""Every byte the CLI writes goes through the core's one sanitiser.

:func:`sanitised_output` swaps ``sys.stdout`` and ``sys.stderr`` for :class:`SafeStream` wrappers
for the length of a command, so no path can forget it: tables, tool results, server stderr in
``mcp list``, warnings, headless answers, and anything a library logs. Escape sequences, carriage
returns (a lone one would overwrite its line; ``\\r\\n`` stays a newline) and other controls are
removed, bidi controls shown as ``\\u202e`` escapes, as the TUI shows them. The progress bar, the
app's own text, redraws with carriage returns on the terminal underneath (:func:`own_lines`).
JSON output is written with :func:`toolscout.core.sanitize.dumps_json`, which escapes controls as
JSON does, so the wrapper finds nothing to change in it.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from toolscout.core.sanitize import strip_controls


class SafeStream:
    """A text stream that strips terminal control sequences from everything written to it.

    Args:
        raw: the stream written to (its other attributes are passed through).
    """

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        """Write ``text`` as :func:`~toolscout.core.sanitize.strip_controls` leaves it (tab and
        newline kept; carriage returns dropped; bidi controls as ``\\u202e``)."""
        self.raw.write(strip_controls(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        """Write each line through :meth:`write`."""
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def own_lines(stream: Any) -> Any:
    """The stream under ``stream`` when it is a :class:`SafeStream`, else ``stream`` itself: only
    for the app's own redrawn lines (the progress bar needs carriage returns), never for text
    that came from a server, a tool or a model."""
    return stream.raw if isinstance(stream, SafeStream) else stream


@contextlib.contextmanager
def sanitised_output() -> Iterator[None]:
    """Wrap ``sys.stdout`` and ``sys.stderr`` in :class:`SafeStream` until the block ends."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(sys.stdout), SafeStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
