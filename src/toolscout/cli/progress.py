"""Encoding progress on the terminal: a ``tqdm`` bar with rate and ETA on stderr, only on a TTY.

The engine reports :class:`~toolscout.core.engine.events.VectorsProgress` while tool texts are encoded
for the dense ranker; :func:`encoding_progress` shows it while its block runs. When stderr is not
a terminal (pipes, CI, log files) nothing is drawn: the commands print one plain line instead.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from toolscout.core.engine.events import Event, VectorsProgress

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
    out = own_lines(stream if stream is not None else sys.stderr)  # tqdm redraws with "\r"
    if not getattr(out, "isatty", lambda: False)():
        yield
        return
    # tqdm ships no type information (no py.typed; stubs are the separate types-tqdm)
    from tqdm import tqdm  # type: ignore[import-untyped]

    bar: list[Any] = []

    def on_event(event: Event) -> None:
        if not isinstance(event, VectorsProgress):
            return
        if not bar:
            # a terminal that reports a 0x0 size (a fresh pty) would get no bar at all
            size = shutil.get_terminal_size((80, 24))
            bar.append(
                tqdm(
                    total=event.total,
                    desc="encoding tools",
                    unit="tool",
                    file=out,
                    leave=False,
                    ncols=size.columns or 80,
                    nrows=size.lines or 24,
                )
            )
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
