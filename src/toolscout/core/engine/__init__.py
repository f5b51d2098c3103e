"""The engine: the facade the CLI, the TUI, the session and the gateway drive.

Rooms: :mod:`.facade` (:class:`Engine`: catalog + search + MCP pool + executor + built-ins),
:mod:`.queries` (its read side), :mod:`.events` (what it reports), :mod:`.context` (the
``/context`` token report), :mod:`.catalog_files` (``--catalog`` files), :mod:`.prepare` and
:mod:`.progress` (work off the event loop), :mod:`.server_sizes` (last known server sizes).
"""

from .events import EngineWarning, Event, EventSource, VectorsProgress
from .facade import Engine

__all__ = ["Engine", "EngineWarning", "Event", "EventSource", "VectorsProgress"]
