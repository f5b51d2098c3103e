"""Folder trust: a cloned repository's own config takes effect only once the person approves it.

What a folder can bring (Claude Code's trust dialog, applied to toolscout):

- project MCP servers (``.mcp.json``, and ``--mcp-config`` files that lie inside the folder:
  :mod:`.trust_files`): until approved they are listed as *not approved* with the command they
  would run, and never started (not by ``toolscout context``, not by ``-p``, not by ``serve``);
- project permission grants (``permissions.allow`` and ``permissions.additionalDirectories`` in
  ``.toolscout/settings.json`` and ``settings.local.json``, and ``provider.baseUrl``, which would
  send the API key elsewhere; :data:`toolscout.core.settings.layers.PROJECT_GATED_KEYS`):
  ignored with a warning until approved. ``deny`` and ``ask`` rules from every layer always
  apply (under deny > ask > allow they only ever tighten).

Approval is stored in the user config dir (``TOOLSCOUT_CONFIG_DIR`` replaces it), in
``trusted-folders.json``, keyed by the folder's real path, together with a hash of the command
lines of ``.mcp.json`` (``mcpHash``: with env, cwd, URL and headers, as written: ``${VAR}``
unexpanded, so a change to the person's own environment does not ask again), a digest of each
field of each of its servers (``servers``, so that the next prompt can say which server changed and in
what: :mod:`.trust_changes`; a record without it still holds), the same two for each project
``--mcp-config`` file approved (``configs``: ``{key: {"hash", "servers"}}``, keyed as
:func:`.trust_files.project_key` says; a folder approved without such a file keeps its record and
hash as they were, and using one for the first time asks once) and a hash of the project's grants
(``grantsHash``: :data:`PROJECT_GATED_KEYS` and ``permissions.ask`` of both project settings
files, see :func:`grants_fingerprint`): editing a command, its arguments, environment, working
dir, URL or headers (or adding a server), or changing a grant (a ``git pull`` that adds ``"allow": ["*"]``, an ask
rule removed) asks again. ``settings.local.json`` is covered too, although it is personal and
git-ignored: a repository can still commit one, and excluding it would let such a file loosen
an approved folder silently. The person's own "Always allow" answers
(:mod:`toolscout.core.policy.local_rules`) re-record the approval after writing, so they never make
the folder ask again; editing the file by hand does. A record written before ``grantsHash``
existed counts as approved grants only when the project has none.

Approval is given by the app's trust prompt (:func:`approve_folder`), for
one run by ``--trust-project``, or for every folder (CI) by the user/managed setting
``projectTrust.autoApprove`` or ``TOOLSCOUT_TRUST_PROJECT=1``; a project's own settings cannot
approve it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from ..safe_read import read_bytes, read_json
from ..sanitize import escape_all
from ..settings.layers import APP_NAME, PROJECT_GATED_KEYS, Settings, load_settings, read_layer
from .trust_changes import ServerChange, mcp_changes, server_digests
from .trust_files import PROJECT_FILE, fingerprint, key_path, project_files, read_servers

TRUST_FILE = "trusted-folders.json"
_PROJECT_SETTINGS = (".toolscout/settings.json", ".toolscout/settings.local.json")
#: What the approval fingerprint covers in the project settings files: the grants, and the ask
#: rules (removing one loosens the folder).
_GRANT_KEYS = frozenset((*PROJECT_GATED_KEYS, "permissions.ask"))


@dataclass(frozen=True)
class FolderTrust:
    """Whether a folder's own configuration may take effect.

    Attributes:
        folder: the folder's real path.
        approved: True when project servers may start and project grants apply.
        how: ``approved`` (stored approval), ``--trust-project``, ``projectTrust.autoApprove``,
            ``no project config``, ``not approved``, ``changed`` (approved before, but the
            command lines of ``.mcp.json`` or of a project ``--mcp-config`` file changed since,
            or that file was not part of the approval) or ``grants changed`` (approved
            before, but the project's permission grants changed since).
        mcp_hash: hash of the command lines of ``.mcp.json`` (``""`` without one).
        grants_hash: hash of the project's grants (:func:`grants_fingerprint`; ``""`` without any).
        changes: when ``how`` is ``changed``, the servers added, removed or changed since the
            approval (:mod:`.trust_changes`); None when that is unknown (an approval stored
            before toolscout recorded each server) or the folder did not change.
        configs: ``(key, hash)`` of each ``--mcp-config`` file of this run that is the
            project's (:func:`.trust_files.project_files`), what approving covers besides
            ``.mcp.json``; ``()`` without any.
        config_args: those files as this run was given them (relative to the current
            directory), in the order of ``configs``: what :meth:`how_to_approve` tells to pass.
        changed_files: when ``how`` is ``changed``, which files differ from the approval:
            ``.mcp.json`` and/or keys of ``configs``.
    """

    folder: str
    approved: bool
    how: str
    mcp_hash: str = ""
    grants_hash: str = ""
    changes: tuple[ServerChange, ...] | None = None
    configs: tuple[tuple[str, str], ...] = ()
    changed_files: tuple[str, ...] = ()
    config_args: tuple[str, ...] = ()

    def change_of(self, name: str) -> ServerChange | None:
        """How the server configured as ``name`` changed since the approval, or None (unchanged,
        or unknown)."""
        return next((c for c in self.changes or () if c.name == name), None)

    @property
    def what_changed(self) -> str:
        """Why an approved folder asks again (one sentence), or ``""``."""
        if self.how == "changed":
            files = [escape_all(f) for f in self.changed_files if f != PROJECT_FILE]
            if not files:
                return "its .mcp.json commands changed since you approved it"
            mcp = "its .mcp.json commands and " if PROJECT_FILE in self.changed_files else ""
            return (
                f"{mcp}the commands in {', '.join(files)} (--mcp-config) changed since you approved it, or "
                "were not part of that approval"
            )
        if self.how == "grants changed":
            return (
                "its project permission grants (permissions.allow/ask, additionalDirectories or "
                "provider.baseUrl in .toolscout/settings*.json) changed since you approved it"
            )
        return ""

    @property
    def needs_prompt(self) -> bool:
        """True when the folder has config that waits for the person's approval."""
        return not self.approved

    def how_to_approve(self) -> str:
        """How the person approves the folder, for a message: run the app in the folder once (with
        this run's project ``--mcp-config`` files, so that its trust prompt covers them) and
        answer its prompt, or pass ``--trust-project`` for one run."""
        flags = "".join(f" --mcp-config {shlex.quote(path)}" for path in self.config_args)
        command = escape_all("toolscout" + flags)
        return f"run `{command}` in this folder once and answer its trust prompt, or pass --trust-project"

    def notice(self) -> str:
        """One line for stderr or the warnings list; empty when approved."""
        if self.approved:
            return ""
        why = self.what_changed or "it has not been approved"
        if self.changes:
            why += f" ({'; '.join(c.summary() for c in self.changes)})"
        elif self.how == "changed" and self.changes is None:
            why += " (which servers changed is not known: the approval predates per-server records)"
        files = ", ".join(
            [
                *([PROJECT_FILE] if self.mcp_hash or not self.configs else []),
                *(escape_all(key) for key, _ in self.configs),
            ]
        )
        return (
            f"this folder ({self.folder}) is not trusted: {why}. Its project servers ({files}) are "
            f"not started and its permissions.allow rules are ignored; to approve it, {self.how_to_approve()} "
            "(CI: projectTrust.autoApprove in user settings or TOOLSCOUT_TRUST_PROJECT=1)."
        )


def trust_store_path(env: Mapping[str, str] | None = None) -> Path:
    """``trusted-folders.json`` in the user config dir (``TOOLSCOUT_CONFIG_DIR`` overrides it)."""
    env = os.environ if env is None else env
    return Path(env.get("TOOLSCOUT_CONFIG_DIR") or platformdirs.user_config_dir(APP_NAME)) / TRUST_FILE


def _mcp_servers(project_dir: str | Path) -> tuple[bytes | str | None, dict[str, Any] | None]:
    """One reading of ``.mcp.json`` (:func:`.trust_files.read_servers`)."""
    return read_servers(Path(project_dir) / PROJECT_FILE)


def mcp_fingerprint(project_dir: str | Path) -> str:
    """SHA-256 of what ``.mcp.json`` would run (per server: type, command, args, env, cwd, url,
    and headers where a server has them),
    independent of key order and formatting; ``""`` when there is no file. An unreadable or
    malformed file hashes its raw bytes (any edit then asks again)."""
    return fingerprint(*_mcp_servers(project_dir))


def grants_fingerprint(project_dir: str | Path) -> str:
    """SHA-256 of the project's grants: every non-empty :data:`PROJECT_GATED_KEYS` and
    ``permissions.ask`` value of ``.toolscout/settings.json`` and ``settings.local.json``
    (flattened keys, so nesting and formatting do not matter); ``""`` when neither file has
    any. A malformed file hashes its raw bytes (any edit then asks again)."""
    reduced: dict[str, Any] = {}
    for rel in _PROJECT_SETTINGS:
        path = Path(project_dir) / rel
        scratch: list[Any] = []
        layer = read_layer(path, scratch)
        if scratch:  # malformed, not an object, unreadable: hash what is there
            try:
                reduced[rel] = hashlib.sha256(read_bytes(path)).hexdigest()
            except (OSError, ValueError) as exc:
                reduced[rel] = str(exc)
            continue
        keys = {k: v for k, v in layer.items() if k in _GRANT_KEYS and v not in (None, [], "")}
        if keys:
            reduced[rel] = keys
    if not reduced:
        return ""
    return hashlib.sha256(json.dumps(reduced, sort_keys=True, ensure_ascii=True, default=str).encode()).hexdigest()


def has_project_config(project_dir: str | Path) -> bool:
    """True when the folder has a ``.mcp.json`` or its own settings files (something to approve)."""
    root = Path(project_dir)
    return any((root / rel).is_file() for rel in (".mcp.json", *_PROJECT_SETTINGS))


def _real(project_dir: str | Path) -> str:
    return os.path.realpath(project_dir)


class TrustStoreError(OSError):
    """``trusted-folders.json`` exists but cannot be parsed: it is never overwritten (it holds
    the approvals of every other folder)."""


def _read_store(path: Path, *, strict: bool = False) -> dict[str, Any]:
    """The ``folders`` map of the store; ``{}`` when missing or unreadable, or with ``strict``
    :class:`TrustStoreError` when the file exists but cannot be parsed."""
    try:
        data = read_json(path)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:  # SafeReadError is a ValueError
        if strict:
            raise TrustStoreError(f"{path} could not be read ({exc}), so it was not changed: fix or remove it") from exc
        return {}
    folders = data.get("folders") if isinstance(data, dict) else None
    if strict and not isinstance(folders, dict):
        raise TrustStoreError(f'{path} has no "folders" object, so it was not changed: fix or remove it')
    return folders if isinstance(folders, dict) else {}


def _read_configs(folder: str, keys: Iterable[str]) -> dict[str, tuple[bytes | str | None, dict[str, Any] | None]]:
    """One reading of each project ``--mcp-config`` file (:func:`.trust_files.read_servers`)."""
    return {key: read_servers(key_path(folder, key)) for key in keys}


def _changed_configs(
    entry: Mapping[str, Any], readings: Mapping[str, tuple[bytes | str | None, dict[str, Any] | None]]
) -> tuple[list[str], list[ServerChange] | None]:
    """The project ``--mcp-config`` files whose hash is not the one the approval ``entry``
    recorded (a file it has no record of included: all its servers are then added), and how
    their servers changed (None when that cannot be told: a file that is not valid JSON)."""
    stored = entry.get("configs")
    stored = stored if isinstance(stored, dict) else {}
    files: list[str] = []
    changes: list[ServerChange] | None = []
    for key, (raw, servers) in readings.items():
        record = stored.get(key)
        record = record if isinstance(record, dict) else {}
        if record and record.get("hash") == fingerprint(raw, servers):
            continue
        files.append(key)
        found = mcp_changes(record.get("servers", {}), servers, file=key) if servers is not None else None
        changes = None if changes is None or found is None else [*changes, *found]
    return files, changes


def check_folder(
    project_dir: str | Path,
    *,
    flag: bool = False,
    auto: bool = False,
    env: Mapping[str, str] | None = None,
    config_files: Iterable[str | Path] = (),
) -> FolderTrust:
    """Is the folder approved? Never raises (an unreadable store means "not approved").

    Args:
        project_dir: the project folder (where ``.mcp.json`` and ``.toolscout/`` are read).
        flag: ``--trust-project`` was given (approved for this run only).
        auto: ``projectTrust.autoApprove`` from user/managed settings or the environment.
        env: for ``TOOLSCOUT_CONFIG_DIR`` and ``TOOLSCOUT_TRUST_PROJECT`` (default ``os.environ``).
        config_files: this run's ``--mcp-config`` files (as given, relative to the current
            directory); those inside the folder (:func:`.trust_files.project_files`) are project
            config: the approval must cover what they would run, as it covers ``.mcp.json``.
    """
    env = os.environ if env is None else env
    folder = _real(project_dir)
    raw, servers = _mcp_servers(folder)  # read once: the hash and the changes are of one version
    given = project_files(folder, config_files)
    readings = _read_configs(folder, given)
    digest, grants = fingerprint(raw, servers), grants_fingerprint(folder)
    configs = tuple((key, fingerprint(*reading)) for key, reading in readings.items())

    def trust(
        approved: bool, how: str, changes: tuple[ServerChange, ...] | None = None, changed: tuple[str, ...] = ()
    ) -> FolderTrust:
        return FolderTrust(folder, approved, how, digest, grants, changes, configs, changed, tuple(given.values()))

    if not has_project_config(folder) and not configs:
        return trust(True, "no project config")
    if flag:
        return trust(True, "--trust-project")
    if auto or env.get("TOOLSCOUT_TRUST_PROJECT", "").strip().lower() in ("1", "true", "yes", "on"):
        return trust(True, "projectTrust.autoApprove")
    entry = _read_store(trust_store_path(env)).get(folder)
    if not isinstance(entry, dict):
        return trust(False, "not approved")
    files, changes = _changed_configs(entry, readings)
    if entry.get("mcpHash", "") != digest:
        files.insert(0, PROJECT_FILE)
        found = mcp_changes(entry.get("servers"), servers) if servers is not None else None
        changes = None if changes is None or found is None else [*found, *changes]
    if files:
        return trust(False, "changed", tuple(changes) if changes is not None else None, tuple(files))
    if entry.get("grantsHash", "") != grants:  # an old record (no grantsHash) passes without grants
        return trust(False, "grants changed")
    return trust(True, "approved")


class TrustChangedError(OSError):
    """The folder's ``.mcp.json``, a project ``--mcp-config`` file or the grants are no longer
    what the person approved (they changed after the prompt read them): nothing is stored."""


def approve_folder(
    project_dir: str | Path,
    env: Mapping[str, str] | None = None,
    *,
    mcp_hash: str | None = None,
    grants_hash: str | None = None,
    configs: Iterable[tuple[str, str]] | None = None,
) -> FolderTrust:
    """Store the person's approval of the folder (with the current ``.mcp.json`` and grants
    hashes, and those of the project ``--mcp-config`` files in ``configs``).

    Args:
        project_dir: the folder.
        env: for ``TOOLSCOUT_CONFIG_DIR`` (default ``os.environ``).
        mcp_hash, grants_hash: the fingerprints of what the person approved (those of the
            :class:`FolderTrust` the prompt showed); when the folder's differ now, nothing is
            stored: an approval is for what was shown, never for a file changed meanwhile.
        configs: ``(key, hash)`` of the project ``--mcp-config`` files shown
            (:attr:`FolderTrust.configs`): each file is read again and recorded, and nothing is
            stored when one's hash differs now. Records of the folder's other such files (from
            an earlier approval) are kept: each holds only while its file is unchanged. None
            keeps every such record as it is.

    Returns:
        The folder's new state (``approved``, with the hashes and ``configs`` recorded).

    Raises:
        TrustChangedError: the folder changed since ``mcp_hash`` / ``grants_hash`` / ``configs``
            were taken.
        TrustStoreError: the store exists but cannot be parsed (it is left as is).
        OSError: the trust store cannot be written.
    """
    path = trust_store_path(env)
    folder = _real(project_dir)
    raw, servers = _mcp_servers(folder)  # read once: the digests stored are of the version checked
    digest, grants = fingerprint(raw, servers), grants_fingerprint(folder)
    shown = dict(configs or ())
    readings = _read_configs(folder, shown)
    if mcp_hash is not None and digest != mcp_hash:
        raise TrustChangedError(f"{folder}/.mcp.json changed after it was shown, so it was not approved")
    if grants_hash is not None and grants != grants_hash:
        raise TrustChangedError(
            f"the permission grants in {folder}/.toolscout changed after they were shown, "
            "so the folder was not approved"
        )
    for key, reading in readings.items():
        if fingerprint(*reading) != shown[key]:
            raise TrustChangedError(
                f"{escape_all(key)} (--mcp-config) changed after it was shown, so the folder was not approved"
            )
    folders = _read_store(path, strict=True)
    before = folders.get(folder)
    records = before.get("configs") if isinstance(before, dict) else None
    records = dict(records) if isinstance(records, dict) else {}
    for key, (_, file_servers) in readings.items():  # digests, never the values (as for .mcp.json)
        records[key] = {"hash": shown[key]}
        if file_servers is not None:
            records[key]["servers"] = server_digests(file_servers)
    folders[folder] = {
        "mcpHash": digest,
        "grantsHash": grants,
        "approvedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if servers is not None:  # what the next prompt compares with (digests, never the values)
        folders[folder]["servers"] = server_digests(servers)
    if records:
        folders[folder]["configs"] = records
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"folders": folders}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return FolderTrust(folder, True, "approved", digest, grants, configs=tuple(shown.items()))


def trusted_settings(current: Settings) -> Settings:
    """``current`` re-read with the project's grants applied (the folder was just approved),
    keeping every value this run set on top of the files and the environment: command-line
    overrides (``cli``), fallbacks, the offline session's default and ``/toolsearch on`` (each
    with its source, so the screens still say where a value comes from)."""
    fresh = load_settings(current.paths, project_trusted=True)
    paths = current.paths
    layers = {str(p) for p in (paths.user, paths.project, paths.project_local) if p is not None} if paths else set()
    by_source: dict[str, dict[str, Any]] = {}
    for key, value in current.values.items():
        source = current.sources.get(key, "default")
        if source != "default" and source not in layers and not source.startswith(("env:", "managed:")):
            by_source.setdefault(source, {})[key] = value
    for source, kept in by_source.items():
        fresh = fresh.with_overrides(kept, source=source)
    return fresh


def ignored_grants(settings: Settings) -> list[str]:
    """The project grants ignored in an unapproved folder, one ``file: key = value`` line each."""
    return [
        f"{w.source}: {w.key} = {w.value}"
        for w in settings.warnings
        if w.key in PROJECT_GATED_KEYS and "not approved" in w.reason
    ]
