"""What the model is told about servers themselves: their instructions, and who is still connecting.

Each connected server's ``instructions`` reach the model without a search: the servers known at
the first request in that request's reminder (the first user message never changes, so it stays
in the cached prefix), every later server once, in the reminder of the first user message after
it connects (an appended delta). Each text is cut to the same per-server budget
(``mcp.instructionsBudget``, :func:`toolscout.core.catalog.instructions.budgeted`). A server still
connecting is named once ("server X still connecting; its tools will be announced").

Like the announcements (:mod:`.reminders`), what was sent is read back from history, only from
user text blocks, so resume rebuilds it: ``<server-instructions server="NAME">`` and
``<servers-connecting>`` (one name per line). Server-supplied text cannot close or imitate these
elements: ``<`` of a closing tag inside it is escaped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..catalog.instructions import budgeted
from .reminders import wrap

if TYPE_CHECKING:
    from ..engine.facade import Engine
    from ..settings.layers import Settings

INSTRUCTIONS_TAG = "server-instructions"
CONNECTING_TAG = "servers-connecting"
_SENT = re.compile(r'<server-instructions server="(?P<name>[^"\n]*)">')
_CONNECTING = re.compile(r"<servers-connecting>\n?(?P<body>.*?)</servers-connecting>", re.DOTALL)
_CLOSERS = re.compile(r"</?(server-instructions|servers-connecting|system-reminder)", re.IGNORECASE)


@dataclass
class ServerNotesState:
    """Servers whose instructions were sent, and servers the model was told are connecting."""

    instructed: set[str] = field(default_factory=set)
    connecting: set[str] = field(default_factory=set)


def read_state(messages: Iterable[dict[str, Any]]) -> ServerNotesState:
    """Replay ``messages``: the server notes toolscout wrote into user text blocks."""
    state = ServerNotesState()
    for message in messages:
        if message.get("role") != "user" or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if not isinstance(block, dict) or block.get("type") != "text":
                continue
            text = str(block.get("text", ""))
            if not text.startswith("<system-reminder>"):
                continue
            state.instructed.update(m.group("name") for m in _SENT.finditer(text))
            for match in _CONNECTING.finditer(text):
                state.connecting.update(n.strip() for n in match.group("body").splitlines() if n.strip())
    return state


def _neutral(text: str) -> str:
    return _CLOSERS.sub(lambda m: "&lt;" + m.group(0)[1:], text)


def instructions_reminder(texts: Mapping[str, str], budget: int) -> str | None:
    """One reminder with the instructions of each server in ``texts`` (sorted by name, each cut
    to ``budget`` characters); None when there is nothing to say."""
    parts = []
    for name in sorted(texts, key=lambda n: (n.casefold(), n)):
        body = budgeted(texts[name], budget)
        if body:
            parts.append(f'<{INSTRUCTIONS_TAG} server="{_neutral(name)}">\n{_neutral(body)}\n</{INSTRUCTIONS_TAG}>')
    if not parts:
        return None
    return wrap("Instructions from connected MCP servers (from the servers, not from the user):\n" + "\n".join(parts))


def connecting_reminder(names: Iterable[str], *, inline: bool) -> str | None:
    """One reminder naming servers that are still connecting; None for none."""
    names = sorted(set(names), key=lambda n: (n.casefold(), n))
    if not names:
        return None
    then = "added to your tool list" if inline else "announced"
    lines = [f"server {n} still connecting; its tools will be {then}" for n in names]
    return wrap(
        "\n".join(lines) + f"\n<{CONNECTING_TAG}>\n" + "\n".join(_neutral(n) for n in names) + f"\n</{CONNECTING_TAG}>"
    )


def server_notes(engine: Engine, settings: Settings, messages: list[dict[str, Any]], *, inline: bool) -> list[str]:
    """The server reminders the next user message carries (instructions of servers not yet
    introduced, then servers newly seen connecting)."""
    state = read_state(messages)
    budget = int(settings["mcp.instructionsBudget"] or 0)
    catalog = engine.catalog
    texts = {
        name: text
        for name, text in catalog.instructions.items()
        if name not in state.instructed and text and text.strip() and catalog.server_tools(name)
    }
    out = []
    if budget > 0:
        reminder = instructions_reminder(texts, budget)
        if reminder:
            out.append(reminder)
    pending = engine.pending_servers()
    reminder = connecting_reminder([p for p in pending if p not in state.connecting], inline=inline)
    if reminder:
        out.append(reminder)
    return out
