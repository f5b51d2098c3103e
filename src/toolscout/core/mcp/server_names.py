"""Server names, validated and normalised once, when the configuration is loaded.

A server's name is the middle part of every canonical tool name (``mcp__<server>__<tool>``) and
the subject of permission rules, so it must be unambiguous. Rules (after Claude Code's naming,
made strict):

- surrounding whitespace is dropped; every character outside ``[A-Za-z0-9_-]`` (inner spaces,
  dots, control characters, non-ASCII) becomes ``_``;
- runs of ``_`` collapse to one and trailing ``_`` are dropped, so a name never contains ``__``
  and the server part of ``mcp__<server>__<tool>`` always ends at the first ``__``
  (``time__evil`` becomes ``time_evil``, never a tool of ``time``);
- a name with nothing left (``"  "``, ``"..."``) is rejected: that one server is invalid;
- two servers that normalise to the same name: a server configured with exactly the canonical
  spelling keeps it; the others, in *configured* order (never connect order), take the first
  free of ``name``, ``name_2``, ``name_3`` ... that no other server is configured as.

Each server keeps the spelling it was configured with (``ServerConfig.configured_name``), so a
permission rule may name it either way (see :mod:`toolscout.core.rules.match`), except by a
built-in's name: a bare ``Bash`` rule means the built-in, so a server called ``Bash`` is named
``mcp__Bash`` in rules, and :func:`builtin_name_warnings` says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ..names import BUILTIN_TOOL_NAMES, MCP_PREFIX, dedupe, normalise_server_name
from .server_config import ServerConfig


def assign_server_names(configs: Iterable[ServerConfig]) -> tuple[list[ServerConfig], list[str]]:
    """Normalise every server name and resolve collisions by configured order.

    Idempotent: configs whose names are already canonical and unique come back unchanged.

    Args:
        configs: servers in configured order (user → project → ``--mcp-config`` files).

    Returns:
        ``(configs, warnings)``: the configs with ``name`` canonical and unique and
        ``configured_name`` set to the spelling from the file; one warning per renamed server,
        naming the file, the configured spelling and the name used. A rejected server (no ASCII
        letter or digit) carries its reason as ``error`` only, so it is reported once.
    """
    configs = list(configs)
    exact = {c.name for c in configs if normalise_server_name(c.name) == c.name}
    out: list[ServerConfig] = []
    warnings: list[str] = []
    taken: set[str] = set()
    for cfg in configs:
        configured = cfg.configured_name or cfg.name
        base = normalise_server_name(cfg.name)
        where = f" in {cfg.source}" if cfg.source else ""
        if not base:
            # reported once, as this failed server's error (not also in ``warnings``)
            message = (
                f"server name {configured!r}{where} has no ASCII letters or digits (a server name may use "
                "only A-Z, a-z, 0-9, '_' and '-'); the server is not started"
            )
            out.append(
                replace(cfg, name=f"invalid_{len(out) + 1}", configured_name=configured, error=cfg.error or message)
            )
            taken.add(out[-1].name)
            continue
        name = base if base == cfg.name and base not in taken else dedupe(base, taken | exact)
        taken.add(name)
        if name != cfg.name:
            why = (
                f"another server already uses {base!r}"
                if name != base
                else "server names may use only ASCII letters, digits, '_' and '-', never '__'"
            )
            warnings.append(
                f"server {configured!r}{where} is named {name!r} ({why}); rules and tool names use {name!r}"
            )
        out.append(replace(cfg, name=name, configured_name=configured))
    return out, warnings


def builtin_name_warnings(configs: Iterable[ServerConfig]) -> list[str]:
    """One warning per server whose name (canonical, or as configured) is a built-in tool's
    (:data:`~toolscout.core.names.BUILTIN_TOOL_NAMES`): a bare rule with that name means the
    built-in only, so the warning names the server, its config file and the rules that reach
    its tools (``mcp__<server>``, ``mcp__<server>__<tool>``).

    Args:
        configs: servers with canonical names (after :func:`assign_server_names`).
    """
    out: list[str] = []
    for cfg in configs:
        configured = cfg.configured_name or cfg.name
        builtin = next((n for n in (cfg.name, configured.strip()) if n in BUILTIN_TOOL_NAMES), None)
        if builtin is None:
            continue
        where = f" in {cfg.source}" if cfg.source else ""
        rule = f"{MCP_PREFIX}{cfg.name}"
        out.append(
            f"server {configured!r}{where} has the name of the built-in tool {builtin}: a permission rule "
            f"{builtin!r} means the built-in only; to allow, ask or deny this server's tools write "
            f"{rule!r} (every tool), {rule + '__*'!r} or {rule + '__<tool>'!r}"
        )
    return out
