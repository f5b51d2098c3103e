"""Layered settings with env overrides and fail-to-defaults validation.

Layers, lowest to highest precedence (closest wins, as in Claude Code's settings.json):
user (platform config dir) → project (``.toolscout/settings.json``) → project-local
(``.toolscout/settings.local.json``) → environment variables → managed (system-wide; its keys
cannot be overridden). Permission lists (``permissions.allow|ask|deny``) are concatenated over
all layers instead of replaced.

Every invalid value (wrong type, out of range, unknown mode, unreadable or malformed file) is
ignored: the default (or the next lower layer's value) is used and a :class:`SettingsWarning`
naming the file, key and bad value is collected. A list of rules, patterns or folders keeps its
valid entries and warns about each bad one (:class:`~.setting_checks.EntryList`): a deny list
with one malformed entry still denies the rest. Loading settings never raises.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from ..safe_read import SafeReadError, read_json
from ..safe_write import write_json_atomic
from .checks import (
    Choice,
    EntryList,
    PartlyValid,
    SettingsWarning,
    _bool,
    _number,
    _opt_str,
    approved_tools,
)
from .provider_registry import AUTO, provider_names
from .serve_keys import SERVE_KEYS

APP_NAME = "toolscout"


@dataclass(frozen=True)
class Key:
    """One setting: dotted name, default, validator (raises ValueError), one-line doc.

    This table is the one schema of the settings: defaults, validation, the CLI's ``choices=``
    (:func:`choices`) and the settings screen's editors all derive from it. To add a setting,
    add one ``Key(...)`` line to :data:`KEYS` (a fixed set of values: ``Choice("a", "b")``).
    """

    name: str
    default: Any
    check: Callable[[Any], Any]
    doc: str

    @property
    def choices(self) -> tuple[str, ...]:
        """The allowed values of a :class:`Choice` setting, else ``()``."""
        return self.check.options if isinstance(self.check, Choice) else ()


KEYS: tuple[Key, ...] = (
    Key(
        "toolSearch.enabled",
        "auto",
        Choice("auto", "true", "false"),
        "auto: defer when deferred schemas exceed thresholdRatio of the context window; true: always; false: never",
    ),
    Key(
        "toolSearch.thresholdRatio",
        0.10,
        _number(0.0, 1.0, lo_open=True),
        "share of the context window (0 < r ≤ 1) above which auto mode defers",
    ),
    Key("toolSearch.maxResults", 5, _number(1, 50, integer=True), "results per ToolSearch query (1–50)"),
    Key(
        "toolSearch.announceBudget",
        1500,
        _number(0, 1_000_000, integer=True),
        "tokens the deferred-tool announcement may take; over it, the largest servers are one line each "
        "(prefix, tool count, what it works on) and their tools are found by search",
    ),
    Key("toolSearch.alwaysLoad", [], EntryList(), "servers, tool names or globs never deferred"),
    Key(
        "toolSearch.ranker",
        "default",
        Choice("default", "bm25f", "hybrid"),
        "ranking profile: default (best measured), bm25f (lexical only), hybrid (keyword×w + TF-IDF×w)",
    ),
    Key("toolSearch.weights.keyword", 0.4, _number(0.0, 1.0), "hybrid profile: keyword weight"),
    Key("toolSearch.weights.tfidf", 0.6, _number(0.0, 1.0), "hybrid profile: TF-IDF weight"),
    Key("toolSearch.displayFloor", 0.10, _number(0.0, 1.0), "scores below this are not shown"),
    Key(
        "toolSearch.usagePrior",
        0.1,
        _number(0.0, 0.5),
        "weight (0–0.5) of the usage prior: tools run successfully in this project's sessions rank a little "
        "higher in searches and recommendations, never above an exact name; 0 turns it off",
    ),
    Key(
        "toolSearch.vectorCacheMB",
        64.0,
        _number(0.1, 100_000),
        "cap of the on-disk tool-vector cache (MiB); least recently used vectors are evicted past it",
    ),
    Key("recommendations.enabled", True, _bool, "recommend deferred tools after each turn (UI bar and model reminder)"),
    Key("recommendations.minScore", 0.15, _number(0.0, 1.0), "score floor for recommendations"),
    Key("recommendations.onFirstMessage", False, _bool, "also prefetch on the user's first message"),
    Key("recommendations.max", 3, _number(1, 10, integer=True), "recommendations shown per turn"),
    Key(
        "toolSearch.native",
        "auto",
        Choice("auto", "on", "off"),
        "provider-native deferral (Anthropic defer_loading + tool_reference): auto when the model is known "
        "to support it; an endpoint that refuses it falls back to ToolSearch + ExecuteTool, remembered per base URL",
    ),
    Key(
        "session.strategy",
        "execute-proxy",
        Choice("execute-proxy", "stub"),
        "request projection: execute-proxy (tools array fixed) or stub (deferred stubs in the array)",
    ),
    Key(
        "provider.name",
        AUTO,
        Choice(AUTO, more=provider_names),  # the registered providers
        "model provider; auto picks from the keys and endpoints that are set, else offline",
    ),
    Key("provider.model", None, _opt_str, "model name"),
    Key("provider.baseUrl", None, _opt_str, "API base URL (OpenAI-compatible gateways, proxies)"),
    Key(
        "provider.contextWindow",
        None,
        lambda v: None if v is None else _number(1000, 10_000_000, integer=True)(v),
        "context window in tokens, overriding the built-in table",
    ),
    Key(
        "provider.maxTools",
        None,
        lambda v: None if v is None else _number(2, 100_000, integer=True)(v),
        "most tools one request may carry (2–100000), overriding the provider's limit (openai 128)",
    ),
    Key(
        "provider.openaiStrict",
        False,
        _bool,
        "OpenAI: send function tools with strict: true (schemas reduced to what strict mode allows)",
    ),
    Key("mcp.timeout", 30.0, _number(0.1, 3600, lo_open=True), "per-server connect timeout (s)"),
    Key("mcp.callTimeout", 120.0, _number(0.1, 86400, lo_open=True), "per-call timeout (s)"),
    Key(
        "mcp.serverPriority",
        "normal",
        Choice("normal", "low"),
        "low: stdio servers get less CPU than the app (keys echo at once while many start; Linux)",
    ),
    Key(
        "mcp.serverSessions",
        "auto",
        Choice("auto", "shared", "separate"),
        "shared: stdio servers run in one session started by a launcher, so together they get the CPU "
        "share of one program and the app stays responsive while many start (Linux); separate: each in "
        "its own session, as the MCP SDK starts them; auto: shared unless the machine is already busy "
        "(1-minute load average above its CPU count) when the servers start",
    ),
    Key(
        "mcp.instructionsBudget",
        1000,
        _number(0, 100_000, integer=True),
        "characters of each server's instructions given to the model up front (same for every server; 0: none)",
    ),
    # rule lists keep their valid entries (setting_checks.EntryList); a bad deny never drops the rest
    Key("permissions.allow", [], EntryList(rules=True), "tool patterns that run without asking"),
    Key("permissions.ask", [], EntryList(rules=True, fail_closed=True), "tool patterns that ask first"),
    Key(
        "permissions.deny",
        [],
        EntryList(rules=True, fail_closed=True),
        "tool patterns that never run and are hidden from search",
    ),
    Key(
        "permissions.approvedTools",
        {},
        approved_tools,  # written by "always allow": core.policy.approvals
        "MCP tool → digests of the description and inputSchema approved; a tool that changed asks again",
    ),
    # egress (issue 10 item 2): where Read/Glob/Grep may go without asking.
    Key(
        "permissions.additionalDirectories",
        [],
        EntryList(),
        "folders besides the project that Read, Glob and Grep may read without asking (also --add-dir)",
    ),
    # folder trust (toolscout.core.policy.trust): never read from a project's own settings files
    Key(
        "projectTrust.autoApprove",
        False,
        _bool,
        "approve every project folder's .mcp.json and allow rules without asking (CI); user/managed settings only",
    ),
    Key(
        "tools.maxResultTokens",
        25_000,
        _number(1000, 10_000_000, integer=True),
        "tool results longer than this (tokens) reach the model cut, with the full text saved on disk",
    ),
    *(Key(*fields) for fields in SERVE_KEYS),  # toolscout serve --http limits (serve_keys.py)
)
KEYS_BY_NAME = {k.name: k for k in KEYS}
MERGED_LISTS = ("permissions.allow", "permissions.ask", "permissions.deny", "permissions.additionalDirectories")


def choices(key: str) -> tuple[str, ...]:
    """The allowed values of setting ``key`` (for ``argparse`` ``choices=`` and select boxes).

    Raises:
        KeyError: ``key`` is not a setting.
    """
    return KEYS_BY_NAME[key].choices


def default(key: str) -> Any:
    """The declared default of setting ``key`` (a list is a fresh copy): code that needs a
    setting's default takes it from here rather than restating it.

    Raises:
        KeyError: ``key`` is not a setting.
    """
    return copy.copy(KEYS_BY_NAME[key].default)


#: Environment variables that override settings, with their value parsers.
ENV_KEYS: dict[str, str] = {
    "TOOLSCOUT_TOOL_SEARCH": "toolSearch.enabled",
    "TOOLSCOUT_RANKER": "toolSearch.ranker",
    "TOOLSCOUT_WEIGHT_KEYWORD": "toolSearch.weights.keyword",
    "TOOLSCOUT_WEIGHT_TFIDF": "toolSearch.weights.tfidf",
    "TOOLSCOUT_RECOMMENDATIONS": "recommendations.enabled",
    "TOOLSCOUT_STRATEGY": "session.strategy",
    "TOOLSCOUT_NATIVE": "toolSearch.native",
    "TOOLSCOUT_MCP_TIMEOUT": "mcp.timeout",
    "TOOLSCOUT_PROVIDER": "provider.name",
    "TOOLSCOUT_MODEL": "provider.model",
    "TOOLSCOUT_MAX_TOOLS": "provider.maxTools",
    "TOOLSCOUT_TRUST_PROJECT": "projectTrust.autoApprove",
}
#: Keys a project's own settings files may never set (they would approve the project itself).
USER_ONLY_KEYS = frozenset({"projectTrust.autoApprove"})
#: Keys a project's settings files set only once the folder is approved (toolscout.core.policy.trust).
PROJECT_GATED_KEYS = ("permissions.allow", "permissions.additionalDirectories", "provider.baseUrl")


@dataclass(frozen=True)
class SettingsPaths:
    """Where each layer lives. ``None`` skips a layer (tests use this to stay hermetic)."""

    user: Path | None
    project: Path | None
    project_local: Path | None
    managed: Path | None

    @classmethod
    def discover(cls, project_dir: str | Path | None = None) -> SettingsPaths:
        """Standard locations; ``TOOLSCOUT_CONFIG_DIR`` replaces the user config dir."""
        project = Path(project_dir or os.getcwd())
        user_dir = os.environ.get("TOOLSCOUT_CONFIG_DIR") or platformdirs.user_config_dir(APP_NAME)
        managed = os.environ.get("TOOLSCOUT_MANAGED_SETTINGS") or "/etc/toolscout/managed-settings.json"
        return cls(
            user=Path(user_dir) / "settings.json",
            project=project / ".toolscout" / "settings.json",
            project_local=project / ".toolscout" / "settings.local.json",
            managed=Path(managed),
        )


@dataclass
class Settings:
    """Resolved settings: ``values`` maps every dotted key to its effective value.

    Attributes:
        values: dotted key → value, one entry per :data:`KEYS`.
        sources: dotted key → where the value came from (``default``, a file path, ``env:NAME``).
        warnings: every rejected value, in load order.
        tool_search_threshold: for ``auto:N`` the N% given in the environment, else None.
        paths: the layer files used (for persisting changes).
    """

    values: dict[str, Any] = field(default_factory=lambda: {k.name: copy.copy(k.default) for k in KEYS})
    sources: dict[str, str] = field(default_factory=lambda: {k.name: "default" for k in KEYS})
    warnings: list[SettingsWarning] = field(default_factory=list)
    paths: SettingsPaths | None = None

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def get(self, key: str, default: Any = None) -> Any:
        """Value of ``key`` or ``default`` for unknown keys."""
        return self.values.get(key, default)

    def with_overrides(self, overrides: Mapping[str, Any], source: str = "cli") -> Settings:
        """A copy with validated overrides applied (invalid ones become warnings)."""
        new = Settings(dict(self.values), dict(self.sources), list(self.warnings), self.paths)
        for key, value in overrides.items():
            new._apply(key, value, source)
        return new

    def _apply(self, key: str, value: Any, source: str) -> bool:
        spec = KEYS_BY_NAME.get(key)
        if spec is None:
            group = [k for k in KEYS_BY_NAME if k.startswith(key + ".")]
            if group:  # "permissions": null, "toolSearch": []: a known group, not an object
                shown = ", ".join(group[:3]) + (", …" if len(group) > 3 else "")
                self.warnings.append(
                    SettingsWarning(source, key, value, f"expected an object of settings ({shown})", "ignored")
                )
            else:
                self.warnings.append(SettingsWarning(source, key, value, "unknown key"))
            return False
        if key == "toolSearch.enabled" and isinstance(value, str) and value.strip().lower().startswith("auto:"):
            try:
                pct = _number(0, 100)(value.strip()[5:])
            except ValueError as exc:
                self.warnings.append(SettingsWarning(source, key, value, f"auto:N needs N in 0–100 ({exc})"))
                return False
            self.values[key] = "auto"
            self.values["toolSearch.thresholdRatio"] = max(pct / 100.0, 1e-9)
            self.sources[key] = self.sources["toolSearch.thresholdRatio"] = source
            return True
        try:
            checked = spec.check(value)
        except PartlyValid as part:  # a list with bad entries: each warns, the valid ones apply
            self.warnings.extend(
                SettingsWarning(source, key + p.label, p.value, p.reason, p.outcome) for p in part.problems
            )
            if not part.kept:
                return False
            checked = part.kept
        except (ValueError, TypeError, OverflowError) as exc:
            self.warnings.append(SettingsWarning(source, key, value, str(exc)))
            return False
        if key in MERGED_LISTS and self.sources.get(key) != "default":
            checked = [*self.values[key], *[x for x in checked if x not in self.values[key]]]
        self.values[key] = checked
        self.sources[key] = source
        return True

    @property
    def mode(self) -> str:
        """``tst`` (always defer), ``tst-auto`` (defer above the threshold) or ``standard`` (off)."""
        return {"true": "tst", "auto": "tst-auto", "false": "standard"}[self.values["toolSearch.enabled"]]


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` → ``{"a.b": 1}``; a dotted key in the file is accepted as is.

    Known keys whose value is a dict are not descended into past the known name.
    """
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and name not in KEYS_BY_NAME:
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def read_layer(path: Path, warnings: list[SettingsWarning]) -> dict[str, Any]:
    """Read one settings file into flat keys; a missing file is empty, a bad one warns."""
    try:
        data = read_json(path)
    except FileNotFoundError:
        return {}
    except SafeReadError as exc:
        warnings.append(SettingsWarning(str(path), "(file)", None, str(exc).removeprefix(f"{path}: ")))
        return {}
    if not isinstance(data, dict):
        warnings.append(SettingsWarning(str(path), "(file)", data, "expected a JSON object"))
        return {}
    try:
        return flatten(data)
    except RecursionError:
        warnings.append(SettingsWarning(str(path), "(file)", None, "objects nested too deep"))
        return {}


def load_settings(
    paths: SettingsPaths | None = None,
    env: Mapping[str, str] | None = None,
    *,
    project_trusted: bool = True,
) -> Settings:
    """Resolve settings from every layer and the environment. Never raises.

    Args:
        paths: layer files; defaults to :meth:`SettingsPaths.discover` for the current directory.
        env: environment mapping; defaults to ``os.environ``.
        project_trusted: False for a folder the person has not approved
            (:mod:`toolscout.core.policy.trust`): :data:`PROJECT_GATED_KEYS` from the project layers are
            ignored, each with a warning. :data:`USER_ONLY_KEYS` are never read from them.
    """
    paths = paths or SettingsPaths.discover()
    env = os.environ if env is None else env
    settings = Settings(paths=paths)
    for path in (paths.user, paths.project, paths.project_local):
        if path is not None:
            for key, value in read_layer(path, settings.warnings).items():
                if path != paths.user and _project_refused(settings, path, key, value, project_trusted):
                    continue
                settings._apply(key, value, str(path))
    for var, key in ENV_KEYS.items():
        if var in env:
            settings._apply(key, env[var], f"env:{var}")
    if paths.managed is not None:
        for key, value in read_layer(paths.managed, settings.warnings).items():
            if key in MERGED_LISTS:
                settings._apply(key, value, f"managed:{paths.managed}")
                continue
            before = settings.values.get(key)
            if settings._apply(key, value, f"managed:{paths.managed}"):
                settings.sources[key] = f"managed:{paths.managed}"
            elif key in KEYS_BY_NAME:
                settings.values[key] = before
    return settings


def _project_refused(settings: Settings, path: Path, key: str, value: Any, trusted: bool) -> bool:
    if key in USER_ONLY_KEYS:
        reason = "a project cannot approve itself (set it in user settings); ignored"
    elif not trusted and key in PROJECT_GATED_KEYS and value not in (None, [], ""):
        reason = f"this folder is not approved yet (trust prompt or --trust-project); the project's {key} is ignored"
    else:
        return False
    settings.warnings.append(SettingsWarning(str(path), key, value, reason))
    return True


def managed_keys(settings: Settings) -> set[str]:
    """Keys fixed by the managed layer (the UI shows them read-only)."""
    return {k for k, s in settings.sources.items() if s.startswith("managed:")}


def overrides_user_file(settings: Settings, source: str) -> bool:
    """True when ``source`` (a ``Settings.sources`` value) is a layer above the user file: the
    project or local file, the environment or managed settings (the order of
    :func:`load_settings`), so a value saved to the user file loses to it."""
    paths = settings.paths
    files = {str(p) for p in (paths.project, paths.project_local) if p is not None} if paths else set()
    return source in files or source.startswith(("env:", "managed:"))


def change_user_setting(settings: Settings, key: str, value: Any) -> Settings:
    """Validate ``value``, save it to the user settings file and return the settings now in
    effect: with ``value``, unless a higher layer (project, local, env, managed) sets ``key``, in
    which case that layer's value stays in effect now as it will after a restart.

    Raises:
        ValueError: unknown key, invalid value, managed key, or no user settings path.
        OSError: the file cannot be written.
    """
    before, source = settings[key], settings.sources.get(key, "default")
    saved = save_user_setting(settings, key, value)
    if overrides_user_file(saved, source):
        return saved.with_overrides({key: before}, source=source)
    return saved


def changed_keys(old: Settings, new: Settings) -> dict[str, Any]:
    """Key → new value of every setting whose value differs between ``old`` and ``new``."""
    return {k: new.values.get(k) for k in KEYS_BY_NAME if old.values.get(k) != new.values.get(k)}


class PartialSettingChangeError(ValueError):
    """A change that took only in part: the message (a warning to show) says which part;
    ``settings`` are the settings now in effect."""

    def __init__(self, message: str, settings: Settings) -> None:
        super().__init__(message)
        self.settings = settings


class UnsavedSettingError(PartialSettingChangeError):
    """The user settings file exists but could not be parsed, so it was left untouched;
    ``settings`` have the change for this session only (source ``session``)."""


class SettingNotAppliedError(PartialSettingChangeError):
    """The change was saved, but the running session cannot take it now (a provider that cannot
    be created: the old one stays); ``settings`` have the change, as a restart reads them."""


def save_user_setting(settings: Settings, key: str, value: Any) -> Settings:
    """Validate ``value``, write it to the user settings file, and return updated settings.
    A file that cannot be parsed (malformed JSON, not an object) is never overwritten.

    Raises:
        UnsavedSettingError: the file could not be parsed; nothing was written, and the error
            carries the settings with the change applied for this session only.
        ValueError: unknown key, invalid value, managed key, or no user settings path.
        OSError: the file cannot be written.
    """
    spec = KEYS_BY_NAME.get(key)
    if spec is None:
        raise ValueError(f"unknown setting {key!r}")
    if key in managed_keys(settings):
        raise ValueError(f"{key} is set by managed settings and cannot be changed")
    checked = spec.check(value)
    if settings.paths is None or settings.paths.user is None:
        raise ValueError("no user settings file is configured")
    path = settings.paths.user
    scratch: list[SettingsWarning] = []
    data = read_layer(path, scratch)
    if scratch:
        raise UnsavedSettingError(
            f"{path} could not be read ({scratch[0].reason}), so it was not changed: fix the file; "
            f"{key} = {json.dumps(checked)} applies for this session only",
            settings.with_overrides({key: checked}, source="session"),
        )
    data[key] = spec.check.to_json(checked) if isinstance(spec.check, Choice) else checked
    nested: dict[str, Any] = {}
    for dotted, v in data.items():
        node = nested
        *parents, leaf = dotted.split(".")
        for p in parents:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                break
        else:
            node[leaf] = v
    write_json_atomic(path, nested)
    return settings.with_overrides({key: checked}, source=str(path))
