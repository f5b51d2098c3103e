"""The ToolSearch query grammar.

* ``select:A,B`` — load tools by exact name (comma-separated, case-insensitive); names may be
  quoted or backticked, spaced after commas, or given as a JSON array (``select:["A","B"]``).
* ``discover:<task>`` — ranked search for a task description.
* anything else — keywords, ranked; ``+term`` marks a word the tool *name* must contain.

The prefixes are case-insensitive and may be followed by spaces. Parsing never raises.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from ..models import ToolSpec
from ..names import written_name
from .results import SearchMode
from .tokenize import analyze, clean, query_terms

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


def why_nothing(parsed: ParsedQuery, tools: Iterable[ToolSpec], pending: bool) -> list[str]:
    """What about a ranked query itself left it without hits, for the notes (``[]``: nothing to
    say but "no good match"): ``+word`` terms that no
    name of ``tools`` has (they must be in a tool's *name*; not said while servers are still
    connecting, whose tools may have them), or a query of common words only (nothing to rank by)."""
    if parsed.required:
        wanted = {t.term for w in parsed.required for t in analyze(w)}
        if pending or not wanted or any(wanted <= {t.term for t in analyze(tool.name)} for tool in tools):
            return []  # some name has them: the other words found nothing (the usual answer)
        words = ", ".join(f"+{w}" for w in parsed.required)
        return [
            f"{words}: a +word must be in the tool's name and no tool name here has it; "
            "drop the + to match descriptions too"
        ]
    if parsed.text.strip() and not query_terms(parsed.text):
        return [
            f"{parsed.text.strip()[:80]!r} has only common words (the, a, of, …): say what the tool "
            'should do, e.g. "send a slack message"'
        ]
    return []
