"""Validators of setting values: each takes a raw value (from JSON, an environment variable or
the settings screen) and returns the checked value or raises ``ValueError`` with a reason that
:class:`SettingsWarning` shows next to the file and key. List settings keep their valid entries
(:class:`EntryList` raises :class:`PartlyValid`, one warning per bad entry).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..rules.specs import parse_rule
from ..safe_read import NumberText


@dataclass(frozen=True)
class SettingsWarning:
    """One rejected value: where it came from, which key (``permissions.deny[1]`` for one entry of
    a list), what it was, why, and what was done instead (``outcome``)."""

    source: str
    key: str
    value: Any
    reason: str
    outcome: str = "using the default"

    def __str__(self) -> str:
        if self.key == "(file)":
            return f"{self.source}: {self.reason}; its settings are ignored"
        shown = (
            str(self.value)
            if isinstance(self.value, NumberText)
            else json.dumps(self.value, ensure_ascii=False, default=str)
        )
        if len(shown) > 80:
            shown = shown[:77] + "..."
        if self.reason == "unknown key":
            return f"{self.source}: unknown setting {self.key!r} (= {shown}) is ignored"
        return f"{self.source}: {self.key} = {shown}: {self.reason}; {self.outcome}"


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
            try:
                v = float(v.strip())
            except ValueError:
                raise ValueError("expected a number") from None
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
    """Validator of a setting with a set of values; :attr:`options` are those values, in the
    order the CLI and the settings screen list them.

    Args:
        options: the fixed values.
        more: values registered elsewhere, read at each check (after ``options``): the provider
            names of :mod:`.provider_registry`, so a provider registered later is accepted too.

    Raises:
        ValueError: (when called) the value is not one of :attr:`options` (case-insensitive).
    """

    def __init__(self, *options: str, more: Callable[[], tuple[str, ...]] | None = None) -> None:
        self._fixed = options
        self._more = more

    @property
    def options(self) -> tuple[str, ...]:
        """Every allowed value, the fixed ones first."""
        return self._fixed + self._more() if self._more is not None else self._fixed

    def __call__(self, v: Any) -> str:
        options = self.options
        if isinstance(v, bool) and "true" in options:
            return "true" if v else "false"
        if not isinstance(v, str) or v.strip().lower() not in options:
            raise ValueError(f"expected one of {', '.join(options)}")
        return v.strip().lower()

    def to_json(self, value: str) -> str | bool:
        """``value`` (a checked option) as a settings file writes it: ``"true"``/``"false"`` of
        a choice that has both (``toolSearch.enabled``: auto, true, false) as the JSON booleans
        ``true``/``false``, as a person writes them and this validator reads them; the others as
        they are."""
        if {"true", "false"} <= set(self.options) and value in ("true", "false"):
            return value == "true"
        return value


@dataclass(frozen=True)
class EntryProblem:
    """One entry of a list setting that does not apply as written.

    Attributes:
        label: where it is in the list (``"[1]"``), or ``""`` for the value as a whole.
        value: the entry as written.
        reason: what is wrong with it.
        outcome: what was done instead (``"this entry is ignored; the other entries apply"``).
    """

    label: str
    value: Any
    reason: str
    outcome: str


class PartlyValid(ValueError):
    """Raised by :class:`EntryList` for a list with bad entries: :attr:`kept` (the valid ones)
    applies and each of :attr:`problems` becomes its own warning. A plain ``ValueError`` to every
    caller that does not look for it (saving a setting refuses the whole value)."""

    def __init__(self, kept: Any, problems: list[EntryProblem]) -> None:
        super().__init__("; ".join(f"entry {p.label or '(whole value)'} = {p.value!r}: {p.reason}" for p in problems))
        self.kept = kept
        self.problems = problems


class EntryList:
    """Validator of a list of strings (permission rules, patterns, folders) that keeps its valid
    entries: one bad entry never drops the others.

    Args:
        fail_closed: the list restricts (``permissions.deny``/``ask``): a single string is read as
            a one-item list, and a rule with unbalanced parentheses is kept as written. Otherwise
            (a list that grants) a single string is refused and such a rule is dropped: a
            malformed grant never grants anything.
        rules: entries are permission rules (``Tool`` or ``Tool(specifier)``), checked for
            balanced parentheses.

    Raises:
        ValueError: (when called) the value is neither a list nor, with ``fail_closed``, a string.
        PartlyValid: (when called) some entries are not strings, are blank or are malformed rules.
    """

    def __init__(self, *, fail_closed: bool = False, rules: bool = False) -> None:
        self.fail_closed = fail_closed
        self.rules = rules

    def __call__(self, v: Any) -> list[str]:
        problems: list[EntryProblem] = []
        if isinstance(v, str) and self.fail_closed:
            problems.append(
                EntryProblem(
                    "",
                    v,
                    "expected a list of strings, not one string",
                    f"read as the one-entry list [{json.dumps(v, ensure_ascii=False)}]",
                )
            )
            v = [v]
        if not isinstance(v, list):
            raise ValueError('expected a list of strings (a single entry is written ["..."])')
        kept: list[str] = []
        ignored = "this entry is ignored; the other entries apply"
        for i, entry in enumerate(v):
            label = f"[{i}]"
            if not isinstance(entry, str):
                problems.append(EntryProblem(label, entry, "not a string", ignored))
            elif not entry.strip():
                problems.append(EntryProblem(label, entry, "an empty entry", ignored))
            elif self.rules and not _balanced(entry):
                if self.fail_closed:
                    problems.append(
                        EntryProblem(
                            label,
                            entry,
                            "unbalanced parentheses in the rule",
                            "kept as written (it may match no tool): fix it",
                        )
                    )
                    kept.append(entry)
                else:
                    problems.append(
                        EntryProblem(
                            label,
                            entry,
                            "unbalanced parentheses in the rule",
                            "this rule is ignored (it grants nothing); the others apply",
                        )
                    )
            else:
                kept.append(entry)
        if problems:
            raise PartlyValid(kept, problems)
        return kept


def approved_tools(v: Any) -> dict[str, dict[str, str]]:
    """Validator of ``permissions.approvedTools``: an object of tool name → ``{"description":
    sha256 hex, "inputSchema": sha256 hex}`` (:mod:`toolscout.core.policy.approvals`). Bad
    entries are dropped, each with its own warning (:class:`PartlyValid`); a dropped entry only
    means that tool is not known as approved.

    Raises:
        ValueError: the value is not an object.
        PartlyValid: some entries are not of that shape.
    """
    if not isinstance(v, dict):
        raise ValueError('expected an object of tool name → {"description": sha256, "inputSchema": sha256}')
    kept: dict[str, dict[str, str]] = {}
    problems: list[EntryProblem] = []
    for name, entry in v.items():
        parts = [entry.get(k) for k in ("description", "inputSchema")] if isinstance(entry, dict) else []
        digests = [p.lower() for p in parts if isinstance(p, str) and _HEX.fullmatch(p)]
        if len(digests) == 2:
            kept[name] = {"description": digests[0], "inputSchema": digests[1]}
        else:
            problems.append(
                EntryProblem(
                    f"[{json.dumps(name)}]",
                    entry,
                    'expected {"description": sha256 hex, "inputSchema": sha256 hex}',
                    "this entry is ignored (that tool is not known as approved)",
                )
            )
    if problems:
        raise PartlyValid(kept, problems)
    return kept


_HEX = re.compile(r"[0-9a-fA-F]{64}")


def _balanced(rule: str) -> bool:
    """True unless ``rule`` has parentheses that :func:`~toolscout.core.rules.specs.parse_rule`
    does not read as ``Tool(specifier)`` (``Bash(`` unclosed, ``Bash(x) y``)."""
    return parse_rule(rule).specifier is not None or not any(ch in rule for ch in "()")


def _opt_str(v: Any) -> str | None:
    if v is None or isinstance(v, str):
        return v or None
    raise ValueError("expected a string")
