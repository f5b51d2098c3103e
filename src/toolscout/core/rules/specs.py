"""Rule specifiers: the ``(...)`` part of a permission rule, and where file tools may reach.

A permission rule is ``Tool`` or ``Tool(specifier)``, in Claude Code's form:

- ``WebFetch(domain:example.com)``: a fetch whose URL host is exactly ``example.com``;
  ``domain:*.example.com`` matches its subdomains (not ``example.com`` itself).
- ``Read(/abs/path/**)``, ``Write(~/scratch/**)``, ``Edit(src/**)``: a file tool whose path
  argument, resolved (``~`` expanded, relative to the project, symlinks followed), matches the
  glob. ``**`` matches across ``/``, ``*`` and ``?`` within one path segment. ``//abs/path`` is
  accepted as an absolute path too (Claude Code's spelling). Path tools: Read, Write, Edit,
  NotebookEdit, Glob, Grep.

- ``Bash(git status)``: exactly that command; ``Bash(npm run test:*)``: a command that is the
  prefix or starts with it and a space (Claude Code's form). An allow rule with a prefix never
  covers a command with shell operators, redirections or substitutions (``safe && other``, ``>``,
  ``$(...)``); a deny or ask rule covers any part of a compound command, and every command with a
  substitution it cannot see into. Prefix rules are no sandbox: ``FOO=1 rm``, ``/bin/rm`` or
  ``sh -c`` get past a ``Bash(rm:*)`` deny rule; deny ``Bash`` itself to be sure.

A specifier on any other tool never matches (the rule is inert rather than a wider grant).

Where a path tool may go without a path-scoped rule (the *workspace*, :class:`Workspace`):
reads (Read, Glob, Grep) stay inside the project folder plus the folders the person adds
(``permissions.additionalDirectories``, ``--add-dir``); writes (Write, Edit, NotebookEdit) stay
inside the project folder, even with a bare ``Write`` allow rule. Outside, the call asks.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..models import ToolSpec
from .match import matches as rule_matches

#: Path tools and the argument that holds their path (None: the argument is optional, default cwd).
PATH_ARGS: dict[str, str] = {
    "Read": "file_path",
    "Write": "file_path",
    "Edit": "file_path",
    "NotebookEdit": "notebook_path",
    "Glob": "path",
    "Grep": "path",
}
#: Path tools that only read; the others write.
READ_TOOLS = frozenset({"Read", "Glob", "Grep"})
#: Built-ins that send data off the machine; their specifier is ``domain:HOST``.
NETWORK_TOOLS = frozenset({"WebFetch", "WebSearch"})

_RULE = re.compile(r"^\s*([^()\s]+)\s*\((.*)\)\s*$", re.DOTALL)


@dataclass(frozen=True)
class Rule:
    """One parsed rule: ``name`` (a pattern as :func:`~toolscout.core.catalog.registry.matches_pattern`
    takes it) and the optional ``specifier`` inside the parentheses."""

    name: str
    specifier: str | None = None


@functools.lru_cache(maxsize=1024)
def parse_rule(rule: str) -> Rule:
    """``"WebFetch(domain:x.com)"`` → ``Rule("WebFetch", "domain:x.com")``; ``"Bash"`` → ``Rule("Bash")``.

    A rule with unbalanced parentheses is kept whole as a name (it then matches no tool).
    """
    m = _RULE.match(rule)
    if m is None:
        return Rule(rule.strip())
    return Rule(m.group(1), m.group(2).strip())


@dataclass(frozen=True)
class Workspace:
    """Where path tools may go without a path-scoped rule.

    Attributes:
        project: the project folder (real path).
        extra: folders added for reading (``permissions.additionalDirectories``, ``--add-dir``).
    """

    project: Path
    extra: tuple[Path, ...] = ()

    @classmethod
    def of(cls, project: str | Path, extra: Iterable[str | Path] = ()) -> Workspace:
        """A workspace of real paths (``~`` expanded; relative extras resolve against ``project``)."""
        root = _real(Path(project))
        return cls(root, tuple(_real(root / Path(p).expanduser()) for p in extra))

    def contains(self, tool: str, path: Path) -> bool:
        """True when ``tool`` may touch the real path ``path`` without a path-scoped rule."""
        roots = (self.project, *self.extra) if tool in READ_TOOLS else (self.project,)
        return any(path == root or path.is_relative_to(root) for root in roots)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path.expanduser()))


def target_path(tool: str, args: Mapping[str, Any], cwd: Path) -> Path | None:
    """The real path a path tool would touch, or None for other tools.

    Relative paths resolve against ``cwd``; an absent optional ``path`` means ``cwd``.
    """
    key = PATH_ARGS.get(tool)
    if key is None:
        return None
    raw = args.get(key)
    raw = raw if isinstance(raw, str) and raw.strip() else "."
    p = Path(raw).expanduser()
    return _real(p if p.is_absolute() else cwd / p)


def url_host(url: object) -> str | None:
    """The lower-case host of an http(s) URL, or None when there is none.

    Parsed by httpx, the parser WebFetch fetches with, so a rule is matched against the host
    that is really contacted (``http://a.com\\@b.com`` is one host to every part of toolscout).
    """
    if not isinstance(url, str):
        return None
    import httpx

    try:
        parts = httpx.URL(url.strip())
    except (httpx.InvalidURL, ValueError, TypeError):
        return None
    if parts.scheme not in ("http", "https"):
        return None
    return parts.host.rstrip(".").lower() or None


def specifier_matches(
    tool: str,
    specifier: str,
    args: Mapping[str, Any] | None,
    workspace: Workspace,
    *,
    granting: bool = False,
    target: Path | None = None,
) -> bool:
    """True when ``specifier`` covers this call of the built-in ``tool`` with ``args``.

    Without ``args`` (visibility checks) a specifier never matches: a scoped rule never hides
    or grants a whole tool. ``granting``: the rule is an allow rule (Bash: every part of the
    command must be covered, not just one). ``target``: the call's real path, already resolved
    (:func:`target_path`) by a caller that then opens exactly that path; None resolves it here.
    """
    if args is None:
        return False
    if tool == "Bash":
        return bash_matches(specifier, args.get("command"), granting=granting)
    if tool in NETWORK_TOOLS:
        domain = (
            specifier.removeprefix("domain:").strip().rstrip(".").lower() if specifier.startswith("domain:") else ""
        )
        host = url_host(args.get("url"))
        if not domain or host is None:
            return False
        if domain.startswith("*."):
            return host.endswith(domain[1:])
        return host == domain
    path = target if target is not None else target_path(tool, args, workspace.project)
    if path is None:
        return False
    return _glob_regex(_anchor(specifier, workspace.project)).fullmatch(str(path)) is not None


#: Shell control operators that chain commands (``a && b``, ``a; b``, ``a | b``, ``a & b``, newlines).
_SHELL_CHAIN = re.compile(r"\|\||&&|[;|&\n]")
#: What an allow rule's prefix cannot vouch for: chains, redirections, substitutions.
_NOT_PLAIN = re.compile(r"\|\||&&|[;|&\n<>`]|\$\(")
#: Substitutions whose command a deny or ask rule cannot see.
_SUBSTITUTION = re.compile(r"`|\$\(|[<>]\(")


def bash_matches(specifier: str, command: object, *, granting: bool) -> bool:
    """True when the Bash rule specifier ``specifier`` covers ``command`` (rules in the module doc).

    Args:
        specifier: ``"git status"`` (exactly that command) or ``"npm run test:*"`` (a prefix).
        command: the call's ``command`` argument (anything else never matches).
        granting: an allow rule (all of the command must be covered) rather than a deny or ask
            rule (any part of it is enough).
    """
    if not isinstance(command, str):
        return False
    whole, spec = command.strip(), specifier.strip()
    prefix = spec[:-2].rstrip() if spec.endswith(":*") else None
    if prefix == "":
        return not granting or _NOT_PLAIN.search(whole) is None
    if granting:
        if prefix is None:
            return whole == spec  # the very command the person approved
        return _NOT_PLAIN.search(whole) is None and _starts_with(whole, prefix)
    if _SUBSTITUTION.search(whole):
        return True
    parts = [part.strip() for part in _SHELL_CHAIN.split(whole) if part.strip()]
    if prefix is None:
        return whole == spec or spec in parts
    return any(_starts_with(part, prefix) for part in parts)


def _starts_with(command: str, prefix: str) -> bool:
    return command == prefix or (command.startswith(prefix) and command[len(prefix)].isspace())


def _anchor(pattern: str, project: Path) -> str:
    """The pattern as an absolute glob: ``//x`` and ``/x`` absolute, ``~/x`` home, else project-relative.

    The literal folder before the first glob character resolves symlinks, like the path it is
    compared with.
    """
    if pattern.startswith("//"):
        pattern = pattern[1:]
    if pattern.startswith("~"):
        pattern = os.path.expanduser(pattern)
    if not pattern.startswith("/"):
        pattern = f"{project}/{pattern.removeprefix('./')}"
    m = re.search(r"[*?]", pattern)
    if m is None:
        return os.path.realpath(pattern)
    cut = pattern.rfind("/", 0, m.start())
    return os.path.realpath(pattern[:cut] or "/").rstrip("/") + pattern[cut:]


@functools.lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("/**/", i):
            out.append("(?:/.*)?/")
            i += 4
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("(?:/.*)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))


def private_grant_host(rule: str) -> str | None:
    """The host for which allow rule ``rule`` lifts network built-ins' private-address guard, or
    None: a rule naming a host exactly (``WebFetch(domain:localhost)``, what "Always allow" saves
    for a fetch) lets the tool reach it even at a loopback, link-local or private address
    (:meth:`~toolscout.core.policy.permissions.PermissionPolicy.names_host`); a wildcard never does."""
    parsed = parse_rule(rule)
    spec = parsed.specifier or ""
    host = spec.removeprefix("domain:").strip().rstrip(".").lower()
    if parsed.name in NETWORK_TOOLS and spec.startswith("domain:") and host and not host.startswith("*"):
        return host
    return None


def session_rule(tool: str, args: Mapping[str, Any], cwd: Path, target: Path | None = None) -> str:
    """The rule an "always allow" answer adds for this call: scoped for network and path tools
    (``WebFetch(domain:host)``, ``Write(/dir/**)``) and for Bash (``Bash(<this exact command>)``:
    one approved command never allows every other), the bare tool name otherwise. ``target``:
    the call's real path when the caller resolved it already (:func:`target_path`)."""
    if tool == "Bash":
        command = args.get("command")
        return f"Bash({command.strip()})" if isinstance(command, str) and command.strip() else tool
    if tool in NETWORK_TOOLS:
        host = url_host(args.get("url"))
        return f"{tool}(domain:{host})" if host else tool
    path = target if target is not None else target_path(tool, args, cwd)
    if path is None:
        return tool
    folder = path if path.is_dir() else path.parent
    return f"{tool}({folder}/**)" if str(folder) != "/" else f"{tool}(/**)"


def rule_covers(
    tool: ToolSpec,
    rule: str,
    args: Mapping[str, Any] | None,
    workspace: Workspace,
    *,
    confine: bool = False,
    spellings: Mapping[str, str] | None = None,
    target: Path | None = None,
) -> bool:
    """True when ``rule`` (``Tool`` or ``Tool(specifier)``) applies to this call.

    Args:
        tool: the tool called.
        rule: one permission rule.
        args: the call's arguments, or None for checks about the whole tool (visibility).
        workspace: where path tools may go without a path-scoped rule.
        confine: True for allow rules: a bare rule on a path tool then covers only targets
            inside the workspace (a bare ``Write`` never reaches outside the project).
        spellings: configured server spelling → canonical name (:mod:`.rule_match`).
        target: a built-in path tool's real path, resolved once by the caller (:func:`target_path`),
            so the path decided on is the one the tool then opens; None resolves it here.
    """
    parsed = parse_rule(rule)
    if not rule_matches(tool, parsed.name, spellings):
        return False
    if parsed.specifier is not None:
        return tool.server is None and specifier_matches(
            tool.name, parsed.specifier, args, workspace, granting=confine, target=target
        )
    if confine and args is not None and tool.server is None:
        path = target if target is not None else target_path(tool.name, args, workspace.project)
        return path is None or workspace.contains(tool.name, path)
    return True


def outside_workspace(
    tool: ToolSpec, args: Mapping[str, Any] | None, workspace: Workspace, target: Path | None = None
) -> Path | None:
    """The real target path of a built-in path tool when it lies outside the workspace, else None
    (``target``: that path already resolved by the caller, :func:`target_path`)."""
    if args is None or tool.server is not None:
        return None
    path = target if target is not None else target_path(tool.name, args, workspace.project)
    return path if path is not None and not workspace.contains(tool.name, path) else None
