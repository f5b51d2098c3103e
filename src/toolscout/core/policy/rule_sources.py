"""Which permission rules are in force, and where each comes from (the app's ``/permissions``).

The rules in force are the engine's :class:`~.permissions.PermissionPolicy` (settings at start,
"always allow" answers added since, a removed answer gone). The settings hold each list merged over every layer (:mod:`toolscout.core.settings.layers`:
user → project → project-local → managed, plus ``--allowed-tools``), without saying which
file gave which rule. This reads the layer files again and names, for each rule in force, every
file that lists it: the user settings, the project's ``.toolscout/settings.json``, its
``.toolscout/settings.local.json`` (where "always allow" answers are saved,
:mod:`.local_rules`), managed settings; ``--allowed-tools`` for the command line's; "this
session" for an "always allow" answer kept in memory only (a folder that is not approved).
A project's ``permissions.allow`` in a folder that is not approved is not in force, so not listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..settings.checks import SettingsWarning
from ..settings.layers import PROJECT_GATED_KEYS, Settings, read_layer
from .permissions import PermissionPolicy

#: The rule lists, in the order they decide (deny > ask > allow).
KINDS = ("deny", "ask", "allow")
#: The source of an "always allow" answer that is not saved.
THIS_SESSION = "this session"
#: The source of ``--allowed-tools`` rules.
COMMAND_LINE = "--allowed-tools"


@dataclass(frozen=True)
class RuleInForce:
    """One permission rule in force and one place it comes from.

    Attributes:
        kind: ``deny``, ``ask`` or ``allow``.
        rule: the rule as written (``Bash(git status)``, ``mcp__github__*``).
        source: a settings file's path (``managed:PATH`` for managed settings), ``--allowed-tools``
            or ``this session``.
        saved_answer: the source is the file "always allow" answers are saved to: the person can
            remove it (:func:`.local_rules.forget_allow_rule`).
    """

    kind: str
    rule: str
    source: str
    saved_answer: bool = False


def _layers(settings: Settings, project_trusted: bool) -> list[tuple[str, dict[str, list[str]]]]:
    """(source, kind → rules) of each layer file, in load order; unreadable files give nothing."""
    paths = settings.paths
    if paths is None:
        return []
    out: list[tuple[str, dict[str, list[str]]]] = []
    scratch: list[SettingsWarning] = []  # the warnings were given when the settings loaded
    for path, project in (
        (paths.user, False),
        (paths.project, True),
        (paths.project_local, True),
        (paths.managed, False),
    ):
        if path is None:
            continue
        flat = read_layer(path, scratch)
        lists: dict[str, list[str]] = {}
        for kind in KINDS:
            key = f"permissions.{kind}"
            value = flat.get(key)
            if project and not project_trusted and key in PROJECT_GATED_KEYS:
                continue
            if isinstance(value, str) and kind != "allow":  # a lone deny/ask string is a one-rule list
                value = [value]
            if isinstance(value, list):
                lists[kind] = [r for r in value if isinstance(r, str)]
        source = f"managed:{path}" if path == paths.managed else str(path)
        out.append((source, lists))
    return out


def rules_in_force(
    policy: PermissionPolicy, settings: Settings, *, project_trusted: bool = True, answers_file: Path | None = None
) -> list[RuleInForce]:
    """Every rule of ``policy`` (what decides now) with each place it comes from, deny first,
    then ask, then allow, each in the policy's order (this session's answers last).

    Args:
        policy: the rules in force, this session's "always allow" answers included.
        settings: the settings in effect (their ``paths`` are read again; ``sources`` say
            whether ``--allowed-tools`` added rules).
        project_trusted: the project folder is approved (:mod:`.trust`).
        answers_file: where "always allow" answers are saved (:func:`.local_rules.allow_rules_file`).
    """
    layers = _layers(settings, project_trusted)
    answers = str(answers_file) if answers_file is not None else None
    cli = settings.sources.get("permissions.allow") == "cli"
    out: list[RuleInForce] = []
    for kind, rules in (
        ("deny", policy.deny),
        ("ask", policy.ask),
        ("allow", [*policy.allow, *(r for r in policy.session_allow if r not in policy.allow)]),
    ):
        for rule in dict.fromkeys(rules):
            sources = [source for source, lists in layers if rule in lists.get(kind, ())]
            if not sources:
                in_settings = rule in (settings.get(f"permissions.{kind}") or [])
                sources = [COMMAND_LINE if cli and in_settings else THIS_SESSION]
            out += [RuleInForce(kind, rule, s, saved_answer=kind == "allow" and s == answers) for s in sources]
    return out
