"""Keep ``toolscout serve`` from starting itself.

People add the gateway to the same ``.mcp.json`` their servers live in (Claude Code's project
file is also one of the files the gateway reads), so a configured entry may be the gateway
itself; starting it would start another gateway, which would start another ... Such entries are
left out, with a warning naming them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath

from ..mcp.server_config import ServerConfig


def runs_gateway(cfg: ServerConfig) -> bool:
    """True for a stdio entry whose command line is ``toolscout serve ...`` (also as
    ``python -m toolscout serve``, ``uvx toolscout serve``, ``pipx run toolscout serve``)."""
    if cfg.transport != "stdio":
        return False
    words = [PurePath(cfg.command).name, *cfg.args]
    for i, word in enumerate(words[:-1]):
        if PurePath(word).name in ("toolscout", "toolscout.exe") and words[i + 1] == "serve":
            return True
    return False


def without_gateway(warn: Callable[[str], None]) -> Callable[[list[ServerConfig]], list[ServerConfig]]:
    """A server filter (:func:`toolscout.core.factory.create_engine`'s ``server_filter``) that
    drops gateway entries, calling ``warn`` once per dropped entry."""

    def keep(servers: list[ServerConfig]) -> list[ServerConfig]:
        kept = []
        for cfg in servers:
            if runs_gateway(cfg):
                warn(f"{cfg.name}: not started: it runs toolscout serve itself (configured in {cfg.source or '?'})")
            else:
                kept.append(cfg)
        return kept

    return keep
