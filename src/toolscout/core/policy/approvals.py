"""What each MCP tool was approved as, so a tool whose definition changed asks again.

A server may change a tool's description and ``inputSchema`` after the person allowed it (a
"rug pull": the tool is allowed by an "always allow" answer or a rule, then the server sends
``notifications/tools/list_changed`` and the re-listed tool says something else). The rule names
the tool, not what it said, so without this the changed tool would run unasked.

A :class:`Fingerprint` is one SHA-256 digest of the tool's description and one of its
``inputSchema`` as the server sent it (JSON with sorted keys, so a reordering is no change); the
canonical name is the key. :class:`Approvals` keeps the *baseline* of each tool, the definition
last approved:

- saved: ``permissions.approvedTools`` of the settings (name → ``{"description": sha256,
  "inputSchema": sha256}``), written beside the rule by an "always allow" answer
  (:mod:`.local_rules`), so the next run still knows what was approved;
- this session: an "always allow" answer (the gateway's "for the session" too), the first run of
  a tool (whatever permitted it: "was run before"), and the first listing of a tool that an
  allow rule covers (the rule approved the tool as it was first seen). A session baseline
  replaces a saved one.

A tool whose fingerprint differs from its baseline is *changed* (:meth:`Approvals.change`):
the engine warns when it is listed so, and the executor asks before it runs even when a rule
allows it; with nobody to ask the call is refused (:func:`changed_message`). Only an "always
allow" answer moves the baseline to the new definition; "allow once" runs it once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..models import ToolSpec

#: The settings key of the saved baselines.
SETTINGS_KEY = "permissions.approvedTools"


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Fingerprint:
    """What a tool said when it was approved: SHA-256 hex digests of its description and of its
    ``inputSchema`` (the server's, before projection; JSON with sorted keys)."""

    description: str
    input_schema: str

    @classmethod
    def of(cls, tool: ToolSpec) -> Fingerprint:
        """The fingerprint of ``tool`` as the catalog has it now."""
        schema = tool.source_schema if tool.source_schema is not None else tool.input_schema
        text = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        return cls(_sha256(tool.description or ""), _sha256(text))

    @classmethod
    def from_json(cls, value: Any) -> Fingerprint | None:
        """The fingerprint saved as ``{"description": hex, "inputSchema": hex}``, or None when
        ``value`` is not one."""
        if not isinstance(value, Mapping):
            return None
        desc, schema = value.get("description"), value.get("inputSchema")
        if not (isinstance(desc, str) and isinstance(schema, str) and _is_hex(desc) and _is_hex(schema)):
            return None
        return cls(desc.lower(), schema.lower())

    def to_json(self) -> dict[str, str]:
        """The saved form (see :meth:`from_json`)."""
        return {"description": self.description, "inputSchema": self.input_schema}

    def changed_parts(self, now: Fingerprint) -> tuple[str, ...]:
        """What differs in ``now``: ``"description"`` and/or ``"input schema"``."""
        return tuple(
            part
            for part, same in (
                ("description", self.description == now.description),
                ("input schema", self.input_schema == now.input_schema),
            )
            if not same
        )


def _is_hex(text: str) -> bool:
    return len(text) == 64 and all(ch in "0123456789abcdefABCDEF" for ch in text)


@dataclass(frozen=True)
class ToolChange:
    """A tool whose definition differs from the one approved.

    Attributes:
        tool: its canonical name.
        parts: what changed: ``("description",)``, ``("input schema",)`` or both.
        old_description: the description that was approved, when this session saw it (a baseline
            loaded from the settings file has only its digest); None otherwise.
        new_description: the description now.
        saved: the baseline came from the settings file (approved in an earlier run).
    """

    tool: str
    parts: tuple[str, ...]
    old_description: str | None
    new_description: str
    saved: bool = False

    @property
    def what(self) -> str:
        """``its description and input schema changed`` (the parts, in words)."""
        return "its " + " and ".join(self.parts) + " changed"

    def warning(self) -> str:
        """The warning shown when the changed tool is listed."""
        return (
            f"{self.tool} changed since it was approved: {self.what}. It asks again before it runs "
            "(a run with nobody to ask refuses it until it is approved again)."
        )


class Approvals:
    """The baselines of MCP tools (see the module docstring). Built-ins are never tracked.

    Args:
        saved: ``permissions.approvedTools`` from the settings (malformed entries are skipped).
    """

    def __init__(self, saved: Mapping[str, Any] | None = None) -> None:
        self._saved: dict[str, Fingerprint] = {}
        self._session: dict[str, tuple[Fingerprint, str]] = {}
        self.set_saved(saved or {})

    def set_saved(self, saved: Mapping[str, Any]) -> None:
        """Replace the saved baselines (settings were reloaded)."""
        self._saved = {name: fp for name, value in saved.items() if (fp := Fingerprint.from_json(value)) is not None}

    def known(self, tool: ToolSpec) -> bool:
        """True when ``tool`` has a baseline."""
        return tool.name in self._session or tool.name in self._saved

    def change(self, tool: ToolSpec) -> ToolChange | None:
        """How ``tool`` differs from its baseline, or None (unchanged, no baseline, a built-in)."""
        if tool.server is None or not self.known(tool):
            return None
        now = Fingerprint.of(tool)
        if tool.name in self._session:
            base, description = self._session[tool.name]
            parts = base.changed_parts(now)
            return ToolChange(tool.name, parts, description, tool.description) if parts else None
        saved = self._saved.get(tool.name)
        if saved is None:
            return None
        parts = saved.changed_parts(now)
        return ToolChange(tool.name, parts, None, tool.description, saved=True) if parts else None

    def approve(self, tool: ToolSpec) -> Fingerprint:
        """Make ``tool`` as it is now its baseline (an "always allow" answer); returns its fingerprint."""
        fp = Fingerprint.of(tool)
        if tool.server is not None:
            self._session[tool.name] = (fp, tool.description)
        return fp

    def first_seen(self, tool: ToolSpec) -> None:
        """Record ``tool`` as it is now when it has no baseline yet (its first run, or its first
        listing under an allow rule)."""
        if tool.server is not None and not self.known(tool):
            self.approve(tool)


def changed_message(change: ToolChange) -> str:
    """The refusal of a changed tool when nobody can be asked: what changed and how to approve
    it again."""
    where = (
        " (the digest saved in permissions.approvedTools of .toolscout/settings.local.json)"
        if change.saved
        else " (earlier in this session)"
    )
    return (
        f"{change.tool} changed since it was approved{where}: {change.what}, so the call was not sent "
        "and nobody can be asked in this mode. Read its new definition (toolscout search "
        f'"select:{change.tool}") and, if it is what you want, approve it again: run it in the app '
        'and answer "Always allow", or remove its entry from permissions.approvedTools in '
        ".toolscout/settings.local.json (its allow rule then covers the new definition)."
    )
