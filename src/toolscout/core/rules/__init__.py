"""The permission-rule language (Claude Code's form): ``Tool``, ``Tool(specifier)``,
``mcp__server``, ``mcp__server__*``.

Rooms: :mod:`.specs` (parsing a rule and what its specifier covers: paths, commands, domains),
:mod:`.match` (does a rule name this tool). Deciding a call is :mod:`toolscout.core.policy`.
"""

from .match import covers_server, matches
from .specs import parse_rule, rule_covers, session_rule

__all__ = ["covers_server", "matches", "parse_rule", "rule_covers", "session_rule"]
