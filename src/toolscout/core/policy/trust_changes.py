"""Which ``.mcp.json`` servers changed since the folder was approved (:mod:`toolscout.core.policy.trust`);
the same for the project's ``--mcp-config`` files (:mod:`toolscout.core.policy.trust_files`).

An approval stores, next to the hash of every server's launch fields (``mcpHash``), a digest of
each field of each server (``servers``): ``{name: {"command": d, "args": d, "cwd": d, ...,
"env": {VAR: d}}}``. Digests, not values: an ``env`` entry often holds a token, and the trust
store should not become a second copy of it. When the file changed, the prompt and the CLI's
notice can then say which servers were added, removed or changed, and in what (``cwd``, ``env
PYTHONPATH added``), while showing what would run now as the file writes it. Both the hash and
the digests are of the file's text, ``${VAR}`` unexpanded (what the person approved is the file's
content, and the prompt shows that text): an edit to the file asks again, a change to the
person's own environment does not. An approval stored before these digests existed has none:
what changed is then unknown (``None``), and only that the file changed is said.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..sanitize import escape_all

#: The fields of an ``mcpServers`` entry that decide what starting it does (``mcpHash`` covers them).
LAUNCH_FIELDS = ("type", "transport", "command", "args", "env", "cwd", "url")
#: Covered by ``mcpHash`` only where an entry has them (non-empty), so that approvals stored before
#: they were covered keep their hash for every entry without them: an http/sse server's
#: ``headers`` (``${VAR}`` expands in them: an added ``Authorization: Bearer ${GITHUB_TOKEN}``
#: sends that token to the approved URL).
LATER_FIELDS = ("headers",)
#: Fields that are maps: their digests are kept per key (``env NAME added``).
_MAPS = ("env", "headers")


def launch_fields(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of one ``mcpServers`` entry that ``mcpHash`` covers (see :data:`LATER_FIELDS`)."""
    return {**{f: entry.get(f) for f in LAUNCH_FIELDS}, **{f: entry[f] for f in LATER_FIELDS if entry.get(f)}}


@dataclass(frozen=True)
class ServerChange:
    """One project server that differs from the approved file.

    Attributes:
        name: its key in ``mcpServers``, as written.
        kind: ``added``, ``removed`` or ``changed``.
        fields: for ``changed``, what, each ending in ``added``, ``changed`` or ``removed``:
            ``command``, ``args``, ``cwd``, ``url``, ``type``, ``transport``, ``env NAME``,
            ``headers NAME`` (the name escaped as :func:`~toolscout.core.sanitize.escape_all` does).
        file: ``""`` for ``.mcp.json``; else the key of the project's ``--mcp-config`` file it is
            in (:func:`toolscout.core.policy.trust_files.project_key`: ``.toolscout/servers.json``).
    """

    name: str
    kind: str
    fields: tuple[str, ...] = ()
    file: str = ""

    def describe(self) -> str:
        """``kind`` with what changed, for one line: ``changed: cwd added, env PYTHONPATH added``."""
        return f"{self.kind}: {', '.join(self.fields)}" if self.fields else self.kind

    def summary(self) -> str:
        """The server's name (escaped: it comes from the file) and :meth:`describe`, after the
        file it is in unless that is ``.mcp.json``: ``.toolscout/servers.json: db added``."""
        where = f"{escape_all(self.file)}: " if self.file else ""
        return f"{where}{escape_all(self.name)} {self.describe()}"


def _digest(value: Any) -> str:
    data = json.dumps(value, sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(data.encode()).hexdigest()[:32]


def server_digests(servers: Mapping[str, Any]) -> dict[str, Any]:
    """Per server and launch field, a digest of the value (``env`` per variable): what an
    approval stores so the next prompt can say what changed (see the module docstring).

    Args:
        servers: ``mcpServers`` of ``.mcp.json`` as parsed.
    """
    out: dict[str, Any] = {}
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            out[str(name)] = {"entry": _digest(entry)}
            continue
        fields: dict[str, Any] = {}
        for f, value in sorted(launch_fields(entry).items(), key=lambda item: item[0] in _MAPS):  # maps last
            if value is None:
                continue
            if f in _MAPS:
                fields[f] = (
                    {str(k): _digest(v) for k, v in value.items()} if isinstance(value, dict) else {"": _digest(value)}
                )
            else:
                fields[f] = _digest(value)
        out[str(name)] = fields
    return out


def _diff(before: Mapping[str, Any], now: Mapping[str, Any], label: str = "") -> list[str]:
    """What differs between two digest maps of one server (or of its ``env``)."""
    changed: list[str] = []
    for key in dict.fromkeys([*now, *before]):
        old, new = before.get(key), now.get(key)
        if old == new:
            continue
        if isinstance(old, dict) or isinstance(new, dict):
            changed += _diff(old if isinstance(old, dict) else {}, new if isinstance(new, dict) else {}, f"{key} ")
            continue
        what = "added" if old is None else "removed" if new is None else "changed"
        changed.append(f"{label}{escape_all(key)} {what}" if key else f"{label}{what}")
    return changed


def mcp_changes(approved: Any, servers: Mapping[str, Any], file: str = "") -> tuple[ServerChange, ...] | None:
    """The servers of ``servers`` (``.mcp.json``'s ``mcpServers`` now) that differ from the
    approval's digests (``approved``, as stored), in file order, removed ones last; None when
    ``approved`` is not a digest map (an approval stored before digests existed). ``file`` is
    set on each change (:attr:`ServerChange.file`); ``approved={}`` makes every server added.
    """
    if not isinstance(approved, dict):
        return None
    now = server_digests(servers)
    out: list[ServerChange] = []
    for name, digests in now.items():
        before = approved.get(name)
        if not isinstance(before, dict):
            out.append(ServerChange(name, "added", file=file))
        elif before != digests:
            out.append(ServerChange(name, "changed", tuple(_diff(before, digests)), file=file))
    out += [ServerChange(str(name), "removed", file=file) for name in approved if name not in now]
    return tuple(out)
