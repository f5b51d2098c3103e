"""Validators of setting values: each takes a raw value (from JSON, an environment variable or
the settings screen) and returns the checked value or raises ``ValueError`` with a reason that
:class:`toolscout.core.settings.SettingsWarning` shows next to the file and key.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any


def _bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("true", "1", "yes", "on", "false", "0", "no", "off"):
        return v.strip().lower() in ("true", "1", "yes", "on")
    raise ValueError("expected true or false")


def _number(lo: float, hi: float, *, lo_open: bool = False, integer: bool = False) -> Callable[[Any], Any]:
    def check(v: Any) -> Any:
        if isinstance(v, bool):
            raise ValueError("expected a number")
        if isinstance(v, str):
            v = float(v.strip())
        if not isinstance(v, int | float) or v != v:
            raise ValueError("expected a number")
        if isinstance(v, float) and not math.isfinite(v):  # 1e400, "1e999", a 5,000-digit number
            raise ValueError("not a finite number")
        if integer:
            if isinstance(v, float) and not v.is_integer():
                raise ValueError("expected a whole number")
            v = int(v)
        if v < lo or v > hi or (lo_open and v == lo):
            left = "(" if lo_open else "["
            raise ValueError(f"out of range {left}{lo}, {hi}]")
        return v

    return check


class Choice:
    """Validator of a setting with a fixed set of values; :attr:`options` are those values, in
    the order the CLI and the settings screen list them.

    Raises:
        ValueError: (when called) the value is not one of :attr:`options` (case-insensitive).
    """

    def __init__(self, *options: str) -> None:
        self.options: tuple[str, ...] = options

    def __call__(self, v: Any) -> str:
        if isinstance(v, bool) and "true" in self.options:
            return "true" if v else "false"
        if not isinstance(v, str) or v.strip().lower() not in self.options:
            raise ValueError(f"expected one of {', '.join(self.options)}")
        return v.strip().lower()




def _str_list(v: Any) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ValueError("expected a list of strings")
    return list(v)


def _opt_str(v: Any) -> str | None:
    if v is None or isinstance(v, str):
        return v or None
    raise ValueError("expected a string")
