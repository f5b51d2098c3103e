"""Who may run which tool: allow / ask / deny rules on canonical tool names.

Rules follow Claude Code's ``permissions`` block of settings.json: ``permissions.allow``,
``permissions.ask`` and ``permissions.deny`` are lists of patterns (a server name such as
``github``, a full name ``mcp__github__create_issue``, a built-in ``Bash``, or a glob
``mcp__github__*``; matched by :func:`toolscout.core.rules.match.matches`: exact on the server
part, by the server's configured or canonical spelling, and the same for a collision alias as
for the real tool), concatenated over all settings layers (project ``allow`` rules only once the
folder is approved, :mod:`toolscout.core.policy.trust`). Precedence: deny > ask > allow. With no matching rule, read-only built-ins
(``BuiltinTool.read_only``: Read, Glob, Grep, ToolSearch, TodoWrite ...) are allowed and every
other tool asks, MCP tools included: a server's ``readOnlyHint`` is untrusted text and never
grants anything. Denied tools are hidden from search and listings (:meth:`PermissionPolicy.is_visible`); a
server denied as a whole (:meth:`PermissionPolicy.server_deny_rule`) also has its resources refused.

Rules may carry a specifier (``WebFetch(domain:example.com)``, ``Write(~/scratch/**)``; see
:mod:`.rule_specs`). Network built-ins (WebFetch) are not read-only: they ask unless allowed. Path
tools reach outside the workspace (project folder; plus ``permissions.additionalDirectories`` for
reads) only through a path-scoped allow rule: a bare ``Read`` or ``Write`` rule, or the read-only
default, stops at the workspace and the call asks instead.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..models import ToolSpec
from ..rules.match import covers_server, server_rule
from ..rules.specs import Workspace, outside_workspace, parse_rule, rule_covers
from ..settings.layers import Settings, SettingsPaths

AskAnswer = Literal["allow_once", "always", "deny"]
#: ``async asker(tool, params) -> "allow_once" | "always" | "deny"``: asks the user.
Asker = Callable[[ToolSpec, dict[str, Any]], Awaitable[AskAnswer]]


class Decision(enum.StrEnum):
    """What a rule (or the default) says about one call."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass(frozen=True)
class Verdict:
    """A decision and where it came from.

    Attributes:
        decision: allow, ask or deny.
        rule: the matching pattern, or None when the default applied.
        source: ``permissions.deny`` / ``permissions.ask`` / ``permissions.allow`` / ``session``
            / ``default`` / ``workspace`` (a path tool reaching outside the workspace).
        outside: for ``workspace``: the real path outside it.
    """

    decision: Decision
    rule: str | None = None
    source: str = "default"
    outside: Path | None = None


@dataclass
class PermissionPolicy:
    """The merged rules plus allow rules added during this session ("always" answers).

    Attributes:
        allow, ask, deny: patterns from settings (``permissions.*``).
        session_allow: patterns allowed for the rest of this session.
        workspace: where path tools may go without a path-scoped rule.
        spellings: configured server spelling → canonical name (``{"my.srv": "my_srv"}``), so a
            rule may name a server either way.
    """

    allow: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    session_allow: list[str] = field(default_factory=list)
    workspace: Workspace = field(default_factory=lambda: Workspace.of(Path.cwd()))
    spellings: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings: Settings) -> PermissionPolicy:
        """Rules from ``permissions.allow|ask|deny`` (already merged across layers)."""
        return cls(
            list(settings.get("permissions.allow") or []),
            list(settings.get("permissions.ask") or []),
            list(settings.get("permissions.deny") or []),
        )

    def decide(
        self, tool: ToolSpec, *, read_only: bool = False, args: dict[str, Any] | None = None, target: Path | None = None
    ) -> Verdict:
        """The verdict for calling ``tool`` with ``args``: deny > ask > allow (settings, then
        session), then the default (``read_only`` built-ins allow, everything else asks). Allow
        rules without a path specifier, and the default, stop at the workspace (see module doc).

        ``target``: for a built-in path tool, its real path resolved once by the caller
        (:func:`~toolscout.core.rules.specs.target_path`), who then opens exactly that path, so
        nothing can change between the check and the open; None resolves it here."""
        for source, rules, decision in (
            ("permissions.deny", self.deny, Decision.DENY),
            ("permissions.ask", self.ask, Decision.ASK),
            ("permissions.allow", self.allow, Decision.ALLOW),
            ("session", self.session_allow, Decision.ALLOW),
        ):
            rule = _first_match(
                tool,
                rules,
                args,
                self.workspace,
                confine=decision is Decision.ALLOW,
                spellings=self.spellings,
                target=target,
            )
            if rule is not None:
                return Verdict(decision, rule, source)
        outside = outside_workspace(tool, args, self.workspace, target)
        if outside is not None:
            return Verdict(Decision.ASK, source="workspace", outside=outside)
        if read_only and tool.server is None:
            return Verdict(Decision.ALLOW)
        return Verdict(Decision.ASK)

    def names_host(self, tool_name: str, host: str) -> bool:
        """True when a settings allow rule names ``host`` literally (``WebFetch(domain:localhost)``):
        the only way to let a network built-in reach a loopback, link-local or private address."""
        wanted = f"domain:{host.lower()}"
        return any(parse_rule(r) == parse_rule(f"{tool_name}({wanted})") for r in self.allow)

    def deny_rule(self, tool: ToolSpec) -> str | None:
        """The deny pattern that matches ``tool``, or None."""
        return _first_match(tool, self.deny, None, self.workspace, spellings=self.spellings)

    def server_deny_rule(self, server: str) -> str | None:
        """The deny pattern that covers all of ``server`` (canonical name), or None."""
        return next((r for r in self.deny if covers_server(r, server, self.spellings)), None)

    def is_visible(self, tool: ToolSpec) -> bool:
        """False for denied tools: they are hidden from search, listings and announcements."""
        return self.deny_rule(tool) is None

    def allow_for_session(self, pattern: str) -> None:
        """Allow ``pattern`` for the rest of this session (an "always" answer)."""
        if pattern not in self.session_allow:
            self.session_allow.append(pattern)


def _first_match(
    tool: ToolSpec,
    rules: Iterable[str],
    args: dict[str, Any] | None,
    workspace: Workspace,
    *,
    confine: bool = False,
    spellings: Mapping[str, str] | None = None,
    target: Path | None = None,
) -> str | None:
    return next(
        (
            r
            for r in rules
            if rule_covers(tool, r, args, workspace, confine=confine, spellings=spellings, target=target)
        ),
        None,
    )


def denied_message(tool: ToolSpec, verdict: Verdict, *, asked: bool) -> str:
    """An actionable refusal: which rule denied the call, or which rule to add to allow it."""
    name = tool.name
    if verdict.decision is Decision.DENY:
        return f"{name} is denied by the rule {verdict.rule!r} in {verdict.source}; remove that rule to allow it."
    if asked:
        return f"The user denied permission to run {name}."
    if verdict.source == "workspace" and verdict.outside is not None:
        folder = verdict.outside if verdict.outside.is_dir() else verdict.outside.parent
        return (
            f"{name} would reach {verdict.outside}, outside the project folder, and nobody can be asked "
            f'in this mode. To allow it, add a path rule such as "{name}({folder}/**)" to '
            "permissions.allow" + (", or add the folder with --add-dir." if name in ("Read", "Glob", "Grep") else ".")
        )
    why = f"the rule {verdict.rule!r} in permissions.ask" if verdict.rule else "it is not allowed by default"
    server_hint = f" (or {server_rule(tool.server)!r} for every tool of that server)" if tool.server else ""
    user = SettingsPaths.discover().user
    home = str(Path.home())
    shown = "~" + str(user)[len(home) :] if str(user).startswith(home + "/") else str(user)
    # not .toolscout/settings.json: in a folder that is not trusted its allow rules are ignored
    return (
        f"{name} needs permission ({why}) and nobody can be asked in this mode. To allow it, add "
        f'"{name}"{server_hint} to permissions.allow in your user settings ({shown}) or, in a '
        f"trusted folder, .toolscout/settings.local.json; or pass --allowed-tools {name}."
    )
