""" "Always allow" answers that outlast the run: saved to the project-local settings file.

Claude Code's "Yes, and don't ask again" writes the rule to ``.claude/settings.local.json``; ours
is the project-local layer of :mod:`toolscout.core.settings.layers`, ``.toolscout/settings.local.json``
(a personal file, not meant for version control). The rule is the one the executor adds for the
session (:func:`toolscout.core.rules.specs.session_rule`: ``WebFetch(domain:host)``, ``Write(/dir/**)``
or a tool name); beside it, for an MCP tool, ``permissions.approvedTools`` keeps the fingerprint of
the definition approved (:mod:`.approvals`), so a tool that changes later asks again.

Folder trust (:mod:`toolscout.core.policy.trust`): a project's ``permissions.allow`` applies only in an
approved folder. So a rule is saved only where it will apply again: in an approved folder, one run
with ``--trust-project`` or ``projectTrust.autoApprove``, or a folder with no project config yet.
In the last case the folder is recorded as approved when the file is created: the only thing in
it is the person's own grant, and without the record the new file would make the folder ask for
approval (and ignore the rule) next time; not when other project config appeared during the run
(it was never shown to anyone). In a folder that is not approved the answer lasts for
this session, and the dialog says so. The approval's grants hash covers this file, so after a
write in a folder approved in the trust store the approval is re-recorded (unless the folder
stopped being approved since the run started: someone else's change still asks).

A file created inside a git work tree is listed in that repository's ``.git/info/exclude``
(:func:`git_exclude`), so it is not committed by accident. Writing keeps every other key of the
file and is atomic; a file that is not a JSON object is never overwritten (:class:`LocalRuleError`),
and the rule still applies for the session. A saved answer is removed again with
:func:`forget_allow_rule` (the app's ``/permissions``).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from ..safe_read import SafeReadError, read_json
from ..safe_write import write_json_atomic
from ..settings.layers import Settings
from .approvals import Fingerprint
from .trust import FolderTrust, TrustChangedError, approve_folder, check_folder, has_project_config


class LocalRuleError(ValueError):
    """The project-local settings file cannot take the rule (malformed, or not an object)."""


def allow_rules_file(settings: Settings, trust: FolderTrust | None) -> Path | None:
    """Where an "always allow" answer is saved, or None when it lasts for this session only
    (no project-local layer, or a folder that is not approved)."""
    paths = settings.paths
    if paths is None or paths.project_local is None:
        return None
    if trust is not None and not trust.approved:
        return None
    return paths.project_local


def _allow_list(path: Path) -> tuple[dict[str, Any], list[Any]]:
    """The settings file's whole object and its ``permissions.allow`` list, which is part of it
    (created empty, in place, when missing; a dotted ``"permissions.allow"`` key is used where it is).

    Raises:
        LocalRuleError: the file is malformed JSON, not an object, or its allow list is not a list.
        OSError: the file cannot be read.
    """
    try:
        raw = read_json(path)
    except FileNotFoundError:
        raw = {}
    except SafeReadError as exc:
        raise LocalRuleError(str(exc).removeprefix(f"{path}: ")) from exc
    if not isinstance(raw, dict):
        raise LocalRuleError("expected a JSON object")
    data: dict[str, Any] = raw
    if "permissions.allow" in data:
        holder, key = data, "permissions.allow"
    else:
        perms = data.setdefault("permissions", {})
        if not isinstance(perms, dict):
            raise LocalRuleError("permissions is not an object")
        holder, key = perms, "allow"
    rules = holder.setdefault(key, [])
    if not isinstance(rules, list):
        raise LocalRuleError(f"{'permissions.allow' if key == 'allow' else key} is not a list")
    return data, rules


def _approved_tools(data: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Where ``permissions.approvedTools`` goes in a file whose allow list :func:`_allow_list`
    found: beside it (the dotted key beside a dotted ``"permissions.allow"``)."""
    return (
        (data, "permissions.approvedTools") if "permissions.allow" in data else (data["permissions"], "approvedTools")
    )


def save_allow_rule(path: Path, rule: str, approved: tuple[str, Fingerprint] | None = None) -> bool:
    """Add ``rule`` to ``permissions.allow`` in the settings file at ``path``, keeping every
    other key (a dotted ``"permissions.allow"`` key is extended where it is). Creates the file
    and its folder when missing; writes atomically.

    Args:
        path: the settings file.
        rule: the allow rule.
        approved: ``(tool name, fingerprint)`` of the MCP tool the answer approved: saved beside
            the rule in ``permissions.approvedTools`` (:mod:`.approvals`; replacing an older one),
            so a later change of the tool asks again.

    Returns:
        True when the file changed, False when it already had the rule (and the fingerprint).

    Raises:
        LocalRuleError: the file is malformed JSON, not an object, or its allow list (or
            ``permissions.approvedTools``) is not a list (an object).
        OSError: the file cannot be read or written.
    """
    data, rules = _allow_list(path)
    holder, key = _approved_tools(data)
    digests = holder.get(key, {}) if approved is not None else {}
    if not isinstance(digests, dict):
        raise LocalRuleError("permissions.approvedTools is not an object")
    saved = approved is None or digests.get(approved[0]) == approved[1].to_json()
    if rule in rules and saved:
        return False
    if rule not in rules:
        rules.append(rule)
    if approved is not None:
        holder[key] = {**digests, approved[0]: approved[1].to_json()}
    created = not path.exists()
    write_json_atomic(path, data)
    if created:
        git_exclude(path)
    return True


def remove_allow_rule(path: Path, rule: str) -> None:
    """Remove ``rule`` (every copy of it) from ``permissions.allow`` in the settings file at
    ``path``, keeping every other key; writes atomically (a reader sees the old file or the new).

    Raises:
        LocalRuleError: the file does not list ``rule``, is malformed JSON, not an object, or
            its allow list is not a list (nothing is written).
        OSError: the file cannot be read or written.
    """
    if not path.exists():
        raise LocalRuleError(f"{path} does not exist")
    data, rules = _allow_list(path)
    if rule not in rules:
        raise LocalRuleError(f"{path} does not list {rule!r} in permissions.allow")
    rules[:] = [r for r in rules if r != rule]
    holder, key = _approved_tools(data)
    digests = holder.get(key)
    if isinstance(digests, dict) and rule in digests:  # what the removed answer approved goes with it
        holder[key] = {name: fp for name, fp in digests.items() if name != rule}
        if not holder[key]:
            del holder[key]
    write_json_atomic(path, data)


def _git_dir(work_tree: Path) -> Path | None:
    """The git dir of the work tree at ``work_tree`` (``.git`` itself, or where a ``.git`` file
    of a linked worktree or submodule points; a linked worktree's ``commondir`` holds ``info/``)."""
    dot = work_tree / ".git"
    if dot.is_dir():
        return dot
    try:
        line = dot.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not line.startswith("gitdir:"):
        return None
    gitdir = (work_tree / line.removeprefix("gitdir:").strip()).resolve()
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return gitdir
    return (gitdir / common).resolve()


def git_exclude(path: Path) -> Path | None:
    """Keep a newly created personal file out of commits: add it to ``.git/info/exclude`` of the
    git work tree holding it (never ``.gitignore``, a tracked file), as Claude Code keeps its
    ``settings.local.json`` out of git. Never raises.

    Returns:
        The exclude file written, or None (not in a git work tree, already listed, or unwritable).
    """
    path = path.resolve()
    for root in path.parents:
        if (root / ".git").exists():
            break
    else:
        return None
    gitdir = _git_dir(root)
    if gitdir is None:
        return None
    exclude = gitdir / "info" / "exclude"
    entry = "/" + path.relative_to(root).as_posix()
    try:
        text = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        if entry in text.splitlines():
            return None
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with exclude.open("a", encoding="utf-8") as out:
            out.write(("" if not text or text.endswith("\n") else "\n") + entry + "\n")
    except (OSError, UnicodeDecodeError):
        return None
    return exclude


def _still_approved(trust: FolderTrust | None) -> bool:
    """The folder was approved in the trust store and still is with the files as they are now
    (checked before a write of the person's own: someone else's change since must still ask)."""
    return (
        trust is not None
        and trust.how == "approved"
        and check_folder(trust.folder, config_files=trust.config_args).approved
    )


def _keep_approval(trust: FolderTrust | None, keep: bool) -> None:
    """Record the folder as approved again after the person's own write to the local file (the
    approval's grants hash covers it), when ``keep``."""
    if trust is not None and keep:
        with contextlib.suppress(TrustChangedError):  # .mcp.json changed in between: it asks next run
            approve_folder(trust.folder, mcp_hash=trust.mcp_hash, configs=trust.configs)


def persist_allow_rule(
    settings: Settings, trust: FolderTrust | None, rule: str, approved: tuple[str, Fingerprint] | None = None
) -> Path | None:
    """Save an "always allow" ``rule`` (with the ``approved`` tool's fingerprint, as
    :func:`save_allow_rule`) where :func:`allow_rules_file` says; record the folder as approved
    when the file made it a folder with project config (see the module docstring).

    Returns:
        The file written, or None when the rule lasts for this session only.

    Raises:
        LocalRuleError, OSError: as :func:`save_allow_rule` (the trust store too).
    """
    path = allow_rules_file(settings, trust)
    if path is None:
        return None
    # the person's own answer must not make an approved folder ask again (the grants hash covers
    # this file), but a change made by someone else since the approval (or, in a folder that had
    # no project config, since the run started: a `git pull` bringing a .mcp.json) must still ask
    still = _still_approved(trust)
    fresh = trust is not None and trust.how == "no project config" and not has_project_config(trust.folder)
    save_allow_rule(path, rule, approved)
    _keep_approval(trust, fresh or still)
    return path


def forget_allow_rule(settings: Settings, trust: FolderTrust | None, rule: str) -> Path:
    """Remove a saved "always allow" ``rule`` from :func:`allow_rules_file` (the ``/permissions``
    view); an approved folder stays approved, as after :func:`persist_allow_rule`.

    Returns:
        The file rewritten.

    Raises:
        LocalRuleError: there is no such file here (a folder that is not approved saves
            nothing), or it does not list ``rule``; as :func:`remove_allow_rule` otherwise.
        OSError: the file (or the trust store) cannot be written.
    """
    path = allow_rules_file(settings, trust)
    if path is None:
        raise LocalRuleError("answers are not saved in this folder (it is not approved), so none can be removed")
    still = _still_approved(trust)
    remove_allow_rule(path, rule)
    _keep_approval(trust, still)
    return path
