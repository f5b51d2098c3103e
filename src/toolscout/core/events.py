"""Plain events the engine emits. The TUI turns them into Textual messages; the CLI prints them.

Events are past-tense facts (a server *connected*, the catalog *changed*), delivered synchronously
to every subscriber on the engine's event loop. Subscribers must not block.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .catalog import CatalogDelta
from .models import ServerStatus


@dataclass(frozen=True)
class Event:
    """Base class of every engine and session event."""


@dataclass(frozen=True)
class ServerStateChanged(Event):
    """A server's connection state changed (connecting → connected/failed, or disconnected)."""

    status: ServerStatus


@dataclass(frozen=True)
class CatalogChanged(Event):
    """Tools were added or removed (a server connected, re-listed or went away)."""

    delta: CatalogDelta


@dataclass(frozen=True)
class EngineWarning(Event):
    """Something the user should know that did not stop anything (bad config entry, pagination loop)."""

    message: str
    source: str = ""


@dataclass(frozen=True)
class SettingsChanged(Event):
    """Settings were changed at run time (e.g. from the settings screen)."""

    changed: dict[str, Any] = field(default_factory=dict)
