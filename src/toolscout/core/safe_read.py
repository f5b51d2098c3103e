"""Safe reading of the files toolscout loads: settings, MCP configs, catalogs, transcripts.

Every loader reads through this module so that no file can crash or hang the app:

- only regular files are opened (a FIFO would block the read forever, a symlink to
  ``/dev/zero`` would fill memory); the type is checked on the opened descriptor, which is
  opened non-blocking so that even a FIFO swapped in after the check cannot block;
- reads are size-capped (:data:`MAX_BYTES` unless the caller says otherwise);
- text is UTF-8, a leading byte-order mark is dropped (Windows editors write one);
- JSON parsing never raises anything but :class:`ValueError`: nesting too deep for the parser
  (``RecursionError``) and integers too long for Python (over 4,300 digits) become errors or
  :class:`NumberText` values instead of tracebacks.
"""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path
from typing import Any

#: Default cap on one file read (bytes): settings, configs and catalogs are far smaller.
MAX_BYTES = 16 * 1024 * 1024
#: Cap for transcripts and catalog directories' files (bytes).
MAX_LARGE_BYTES = 256 * 1024 * 1024
#: Longest integer literal kept as an int (Python refuses longer int/str conversions).
MAX_INT_DIGITS = 4000


class SafeReadError(ValueError):
    """A file that cannot be read safely; the message names the file and the reason."""


class NumberText(float):
    """A JSON number that Python cannot hold exactly (``1e400``, a 5,000-digit integer).

    It is a float (``inf`` or the nearest value) so numeric code keeps working, and it remembers
    the text as written (:attr:`text`) so a warning can show the value the user typed.
    """

    text: str

    def __new__(cls, text: str) -> NumberText:
        try:
            value = float(text)
        except (OverflowError, ValueError):
            value = math.inf
        obj = super().__new__(cls, value)
        obj.text = text if len(text) <= 40 else f"{text[:20]}…({len(text)} digits)"
        return obj

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


def _parse_int(text: str) -> int | float:
    digits = len(text.lstrip("-"))
    return int(text) if digits <= MAX_INT_DIGITS else NumberText(text)


def _parse_float(text: str) -> float:
    value = float(text)
    return value if math.isfinite(value) else NumberText(text)


def parse_json(text: str) -> Any:
    """``json.loads`` that fails only with :class:`ValueError`.

    Non-finite floats (``1e400``) and over-long integers come back as :class:`NumberText`.

    Raises:
        ValueError: malformed JSON (``json.JSONDecodeError``), or nesting too deep for the
            parser (``"JSON nested too deep"``).
    """
    try:
        return json.loads(text, parse_int=_parse_int, parse_float=_parse_float)
    except RecursionError:
        raise ValueError("JSON nested too deep to read") from None


def read_bytes(path: str | Path, *, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file, at most ``max_bytes`` of them.

    Raises:
        FileNotFoundError: the file does not exist (callers usually treat it as empty).
        SafeReadError: not a regular file (directory, FIFO, device, socket), larger than
            ``max_bytes``, or unreadable (the message names the path).
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise SafeReadError(f"{path}: cannot open: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SafeReadError(f"{path}: not a regular file ({_kind(info.st_mode)}); not read")
        if info.st_size > max_bytes:
            raise SafeReadError(f"{path}: {info.st_size:,} bytes is over the {max_bytes:,}-byte limit; not read")
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 1 << 20):
            total += len(chunk)
            if total > max_bytes:  # grew while being read
                raise SafeReadError(f"{path}: over the {max_bytes:,}-byte limit; not read")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise SafeReadError(f"{path}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read_text(path: str | Path, *, max_bytes: int = MAX_BYTES) -> str:
    """The UTF-8 text of a regular file, without a leading byte-order mark.

    Raises:
        FileNotFoundError: the file does not exist.
        SafeReadError: as :func:`read_bytes`, or the bytes are not UTF-8 (names the offset).
    """
    data = read_bytes(path, max_bytes=max_bytes)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SafeReadError(f"{path}: not UTF-8 text (byte {exc.start}); not read") from None


def read_json(path: str | Path, *, max_bytes: int = MAX_BYTES) -> Any:
    """The JSON value of a file (an empty or blank file reads as ``{}``).

    Raises:
        FileNotFoundError: the file does not exist.
        SafeReadError: unreadable as in :func:`read_text`, or not valid JSON (names the file).
    """
    text = read_text(path, max_bytes=max_bytes)
    if not text.strip():
        return {}
    try:
        return parse_json(text)
    except ValueError as exc:
        raise SafeReadError(f"{path}: malformed JSON: {exc}") from None


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"
