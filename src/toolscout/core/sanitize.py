"""The one sanitiser for untrusted text on its way to a terminal (TUI and CLI alike).

Text from servers, tools and models may carry terminal control sequences: OSC 52 (set the
clipboard), OSC 0/2 (rename the window), CSI 2J (clear the screen), cursor moves that hide or
overwrite lines; a lone carriage return rewrites its own line; bidi controls (U+202E and kin)
reorder what is shown, so ``txt.exe`` reads as ``exe.txt``. :func:`strip_controls` removes every
ANSI escape sequence *whole* (not just its ESC byte), every other C0/C1 control character and
carriage returns (``\\r\\n`` stays a newline), and shows bidi controls as visible ``\\u202e``
escapes (as ``repr`` shows them in warnings); :func:`dumps_json` writes JSON whose strings carry
such characters only as ``\\uXXXX`` escapes, as JSON does; :func:`escape_all` writes text that
decides what runs (a server's command line) with every character that is not printable ASCII as
its escape, so it is shown exactly. The TUI's
:func:`toolscout.tui.text.clean` and the CLI's output streams (:mod:`toolscout.cli.output`) are
both built on these.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: ANSI CSI / OSC / other ESC sequences, and their 8-bit C1 forms (CSI ``\x9b``, OSC ``\x9d``),
#: removed whole, not just their first byte.
ANSI = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])"
    r"|\x9b[0-?]*[ -/]*[@-~]|\x9d[^\x07\x1b\x9c]*(?:\x07|\x9c)?"
)
#: C0 and C1 control characters other than tab, newline and carriage return, plus DEL.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
#: Bidi embeddings, overrides, isolates and marks: invisible, they reorder the text around them.
_BIDI_CHARS = r"\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
BIDI = re.compile(f"[{_BIDI_CHARS}]")
#: What :func:`dumps_json` escapes beyond what ``json.dumps`` already does (C0 is always escaped).
_JSON_EXTRA = re.compile(rf"[\x7f-\x9f\u2028\u2029{_BIDI_CHARS}]")


def strip_controls(text: object, *, keep: str = "\n\t") -> str:
    """``text`` without ANSI escape sequences or control characters, bidi controls made visible.

    Args:
        text: anything; non-strings are converted with ``str`` (None becomes ``""``).
        keep: the whitespace controls to keep, from tab, newline and carriage return
            (``"\\n\\t"`` by default; a carriage return can overwrite a line, so it goes unless kept:
            ``"a\\r\\nb"`` gives ``"a\\nb"``, ``"RED\\rover"`` gives ``"REDover"``).

    Returns:
        Text that cannot move the cursor, change colours, set the title or the clipboard, or
        reorder itself: each bidi control (:data:`BIDI`) is written as its 6-character escape
        ``\\u202e`` (which is also a valid escape inside a JSON string); lone surrogates are
        replaced (they cannot be encoded for a terminal).
    """
    value = text if isinstance(text, str) else ("" if text is None else str(text))
    value = BIDI.sub(_escape, _CONTROL.sub("", ANSI.sub("", value)))
    for ch in "\t\n\r":
        if ch not in keep:
            value = value.replace(ch, "")
    return value.encode("utf-8", "replace").decode("utf-8")


def _escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def dumps_json(value: Any, **kwargs: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **kwargs)`` with DEL, C1 controls, the JSON-only
    line separators and bidi controls also written as ``\\uXXXX`` escapes, so the text is inert on
    a terminal and ``json.loads`` gives back exactly ``value``."""
    return _JSON_EXTRA.sub(_escape, json.dumps(value, ensure_ascii=False, **kwargs))


def escape_all(text: object, limit: int | None = None) -> str:
    """``text`` as printable ASCII on one line: every other character written as its Python
    escape (newline ``\\n``, carriage return ``\\r``, tab ``\\t``, ESC ``\\x1b``, the bidi
    override ``\\u202e``, ``é`` ``\\xe9``) and a backslash doubled.

    For text that decides what runs (a server's command line, environment and working dir in
    ``toolscout mcp list`` and the app's trust prompt): a newline that would start a second
    shell command, a carriage return, a bidi override that reorders what follows, or a look-alike
    letter is shown, not acted on by the terminal or flattened into a space, and two different
    texts never look the same.

    Args:
        text: anything; non-strings are converted with ``str`` (None becomes ``""``).
        limit: cut the escaped text to this many characters, the last one an ellipsis (``…``
            never comes from ``text``, which has it as ``\\u2026``).
    """
    value = text if isinstance(text, str) else ("" if text is None else str(text))
    shown = value.encode("unicode_escape").decode("ascii")
    return shown if limit is None else cut(shown, limit)


def cut(text: str, limit: int, *, middle: bool = False) -> str:
    """``text`` in at most ``limit`` characters: unchanged when it fits, else cut at the end (or,
    with ``middle``, in the middle, keeping both ends) and marked with one ``…``."""
    if len(text) <= limit:
        return text
    if limit < 1:
        return ""
    if middle and limit >= 3:
        half = (limit - 1) // 2
        return text[:half] + "…" + text[len(text) - (limit - 1 - half) :]
    return text[: max(limit - 1, 0)] + "…"
