"""The ToolSearch query grammar.

* ``select:A,B`` — load tools by exact name (comma-separated, case-insensitive); names may be
  quoted or backticked, spaced after commas, or given as a JSON array (``select:["A","B"]``).
* ``discover:<task>`` — ranked search for a task description.
* anything else — keywords, ranked; ``+term`` marks a word the tool *name* must contain.

The prefixes are case-insensitive and may be followed by spaces. Parsing never raises.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..names import written_name
from .results import SearchMode
from .tokenize import clean

#: At most this many names are taken from one ``select:`` (more are reported as an error).
MAX_SELECT = 50


@dataclass(frozen=True)
class ParsedQuery:
    """A parsed ToolSearch query.

    Attributes:
        mode: ``select`` | ``discover`` | ``keyword``.
        text: the text to rank (``+terms`` removed); empty for ``select``.
        names: ``select:`` names in order, duplicates removed (case-insensitively).
        required: ``+term`` words, without the ``+``.
        truncated: True when ``select:`` listed more than :data:`MAX_SELECT` names.
    """

    mode: SearchMode
    text: str = ""
    names: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    truncated: bool = False


def parse_query(query: object) -> ParsedQuery:
    """Parse a ToolSearch query string (any value is accepted; non-strings are stringified)."""
    text = clean(query).strip()
    lowered = text[:10].lower()
    if lowered.startswith("select:"):
        seen: dict[str, str] = {}
        for part in _select_parts(text[len("select:") :]):
            name = written_name(part)
            if name and name.lower() not in seen:
                seen[name.lower()] = name
        names = tuple(seen.values())
        return ParsedQuery("select", names=names[:MAX_SELECT], truncated=len(names) > MAX_SELECT)
    mode: SearchMode = "keyword"
    if lowered.startswith("discover:"):
        mode = "discover"
        text = text[len("discover:") :].strip()
    words: list[str] = []
    required: list[str] = []
    for token in text.split():
        if token.startswith("+") and len(token) > 1:
            required.append(token.lstrip("+"))
        else:
            words.append(token)
    return ParsedQuery(mode, text=" ".join(words), required=tuple(r for r in required if r))


def _select_parts(body: str) -> list[str]:
    """The names of a ``select:`` body: a JSON array of strings, else comma-separated parts."""
    body = body.strip()
    if body.startswith("["):
        try:
            value = json.loads(body)
        except ValueError:
            value = None
        if isinstance(value, list):
            return [v for v in value if isinstance(v, str)]
    return body.split(",")
