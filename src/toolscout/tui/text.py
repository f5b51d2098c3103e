"""Untrusted text made safe to show: literal, single-line when asked, no control characters
(stripped by the core's one sanitiser, :func:`toolscout.core.sanitize.strip_controls`).

Everything a server, a tool or a model sends is shown *literally*: ``[bold]`` and ``[/`` must
not style the UI (or raise a markup error), and ANSI escapes and control characters must not
move the cursor or change colours. Widgets therefore never pass such text as a ``str`` to a
markup-parsing API; they build :class:`rich.text.Text` or :class:`textual.content.Content`
from :func:`clean` output.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rich.text import Text

from toolscout.core.sanitize import strip_controls
from toolscout.core.search.tokenize import stem, word_spans  # the index's own split and stemmer

_SPACES = re.compile(r"\s+")


def clean(text: object, *, single_line: bool = False, limit: int | None = None) -> str:
    """Strip ANSI escapes and control characters from ``text``.

    Args:
        text: anything; non-strings are converted with ``str``.
        single_line: collapse all whitespace (newlines included) into single spaces.
        limit: cut to at most this many characters, ending with an ellipsis.

    Returns:
        Text that is safe to render literally (tabs become spaces).
    """
    value = strip_controls(text).replace("\t", "    ")
    if single_line:
        value = _SPACES.sub(" ", value).strip()
    if limit is not None and len(value) > limit:
        value = value[: max(limit - 1, 0)].rstrip() + "…"
    return value


def tildify(text: str) -> str:
    """``text`` with the home directory written as ``~`` (shorter paths, no user name)."""
    from pathlib import Path

    try:
        home = str(Path.home())
    except RuntimeError:  # no home directory
        return text
    return text.replace(home, "~") if len(home) > 1 else text


def first_line(text: object, limit: int = 100) -> str:
    """The first non-empty line of ``text``, cleaned and cut to ``limit`` characters."""
    value = clean(text)
    for line in value.splitlines():
        if line.strip():
            return clean(line, single_line=True, limit=limit)
    return ""


def plain(text: object, style: str = "", **kwargs: bool | int | None) -> Text:
    """A literal :class:`Text` of cleaned ``text`` (never parsed as markup)."""
    return Text(clean(text, **kwargs), style=style)  # type: ignore[arg-type]


def highlight_terms(text: object, terms: Iterable[str], style: str = "bold underline") -> Text:
    """``text`` as a literal :class:`Text` with the words that match any of ``terms`` styled.

    ``terms`` are query words as the search reports them (``ScoredTool.matched``). A word of
    ``text`` matches when it, or its Snowball stem, equals a term or the term's stem. Words are
    split by the search tokenizer itself (:func:`~toolscout.core.search.tokenize.word_spans`):
    snake_case, kebab-case and camelCase parts.
    """
    value = clean(text)
    out = Text(value)
    wanted: set[str] = set()
    for term in terms:
        if term:
            wanted.update((term.lower(), stem(term.lower())))
    if not wanted:
        return out
    for start, end in word_spans(value):
        lower = value[start:end].lower()
        if lower in wanted or stem(lower) in wanted:
            out.stylize(style, start, end)
    return out
