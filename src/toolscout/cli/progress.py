"""Progress on the terminal: a ``tqdm`` bar on stderr (one line, redrawn in place), only on a TTY.

The engine reports :class:`~toolscout.core.engine.events.VectorsProgress` while tool texts are encoded
for the dense ranker; :func:`encoding_progress` shows it while its block runs. An MCP server reports
progress on a long tool call (:class:`~toolscout.core.engine.events.ToolCallProgress`);
:func:`call_progress` shows it for ``toolscout call``: a bar when the server says the total, a
counter otherwise, with the server's message (control characters and escapes removed, cut to fit).
When stderr is not a terminal (pipes, CI, log files) nothing is drawn (and a call asks the server
for no progress).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from toolscout.core.engine.events import Event, ToolCallProgress, VectorsProgress
from toolscout.core.sanitize import cut, strip_controls

from .output import own_lines

if TYPE_CHECKING:
    from toolscout.core.engine.facade import Engine


@contextmanager
def encoding_progress(engine: Engine, *, stream: Any = None) -> Iterator[None]:
    """Draw a progress bar for the engine's encoding while the block runs (TTY only).

    Args:
        engine: the engine whose events are subscribed to.
        stream: where to draw (default ``sys.stderr``); nothing is drawn unless it is a TTY.
    """
    out = _terminal(stream)
    if out is None:
        yield
        return
    bar: list[Any] = []

    def on_event(event: Event) -> None:
        if not isinstance(event, VectorsProgress):
            return
        if not bar:
            bar.append(_bar(out, total=event.total, desc="encoding tools", unit="tool"))
        current = bar[0]
        current.total = max(event.total, event.done)
        current.n = event.done
        current.refresh()

    unsubscribe = engine.subscribe(on_event)
    try:
        yield
    finally:
        unsubscribe()
        if bar:
            bar[0].close()


#: The id ``toolscout call`` gives its one call (its progress events carry it).
CALL_ID = "cli"
#: The line of a call with a known total, and without one (``{postfix}`` is ", message").
CALL_FORMATS = ("{desc}: {n_fmt}/{total_fmt} {bar} {elapsed}{postfix}", "{desc}: {n_fmt} {elapsed}{postfix}")
#: Most characters of a server's progress message shown on the line.
MESSAGE_CHARS = 60


@contextmanager
def call_progress(engine: Engine, tool: str, *, stream: Any = None) -> Iterator[str | None]:
    """Show the progress an MCP server reports on the call made in the block (TTY only).

    Yields:
        The ``call_id`` to pass to :meth:`Engine.call_tool
        <toolscout.core.engine.facade.Engine.call_tool>` (:data:`CALL_ID`), or None when
        ``stream`` (default ``sys.stderr``) is not a terminal: then no progress is asked for.
    """
    out = _terminal(stream)
    if out is None:
        yield None
        return
    bar: list[Any] = []

    def on_event(event: Event) -> None:
        if not isinstance(event, ToolCallProgress) or event.call_id != CALL_ID:
            return
        total = _number(event.total) if event.fraction is not None else None
        if not bar:
            bar.append(_bar(out, total=total, desc=strip_controls(tool, keep=""), bar_format=CALL_FORMATS[0]))
        current = bar[0]
        current.total = total
        current.bar_format = CALL_FORMATS[total is None]
        current.n = _number(event.progress)
        text = strip_controls(event.message or "", keep="").strip()
        current.set_postfix_str(cut(text, MESSAGE_CHARS), refresh=False)
        current.refresh()

    unsubscribe = engine.subscribe(on_event)
    try:
        yield CALL_ID
    finally:
        unsubscribe()
        if bar:
            bar[0].close()


def _terminal(stream: Any) -> Any:
    """The stream to draw on (``stream`` or ``sys.stderr``, under the output sanitiser: tqdm
    redraws with ``\\r``), or None when it is not a terminal."""
    out = own_lines(stream if stream is not None else sys.stderr)
    return out if getattr(out, "isatty", lambda: False)() else None


def _bar(out: Any, **options: Any) -> Any:
    """A ``tqdm`` bar on ``out`` that is erased when closed."""
    # tqdm ships no type information (no py.typed; stubs are the separate types-tqdm)
    from tqdm import tqdm  # type: ignore[import-untyped]

    size = shutil.get_terminal_size((80, 24))  # a fresh pty may say 0x0: it would get no bar
    return tqdm(file=out, leave=False, ncols=size.columns or 80, nrows=size.lines or 24, **options)


def _number(value: float | None) -> float | int | None:
    """``value`` as an int when it is whole (``3/10``, not ``3.0/10.0``)."""
    return int(value) if value is not None and float(value).is_integer() else value
