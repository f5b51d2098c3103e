"""``/permissions``: the permission rules in force, each with the file it comes from, and a way
to remove a saved "always allow" answer (as Claude Code's ``/permissions``).

The rules are the engine's (:meth:`Engine.permission_rules
<toolscout.core.engine.facade.Engine.permission_rules>`): deny, then ask, then allow, the order
they decide in. A saved answer (the project's ``.toolscout/settings.local.json``) is removed
with Delete (or ``d``): the file is rewritten atomically and the tool asks again from the next
call on. A rule from any other file is edited in that file; the screen says which. A rule that lets a
network built-in reach a loopback, link-local or private address (``WebFetch(domain:localhost)``,
as "Always allow" of such a fetch saves) says so.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from toolscout.core.policy.rule_sources import RuleInForce
from toolscout.core.rules.specs import parse_rule, private_grant_host

from ..text import clean, tildify

#: Colour of each kind of rule.
KIND_STYLE = {"deny": "bold red", "ask": "bold yellow", "allow": "bold green"}


def rule_line(row: RuleInForce) -> Text:
    """``allow  Bash(git status)  ~/.config/toolscout/settings.json`` (a saved answer says so)."""
    out = Text()
    out.append(f"{row.kind:<6}", style=KIND_STYLE.get(row.kind, "bold"))
    out.append(clean(row.rule, single_line=True, limit=80), style="bold")
    out.append(f"  {tildify(clean(row.source, single_line=True))}", style="dim")
    if row.saved_answer:
        out.append("  saved answer · Delete removes it", style="cyan")
    host = private_grant_host(row.rule) if row.kind == "allow" else None
    if host is not None:  # what "Always allow" of WebFetch to a private host grants (issue 28 item 7)
        out.append(
            f"  lets {clean(parse_rule(row.rule).name, single_line=True)} reach {clean(host, single_line=True)} "
            "even at a loopback, link-local or private address (once read from settings)",
            style="bold yellow",
        )
    return out


class PermissionsScreen(Screen[None]):
    """The rules in force; Delete removes the highlighted saved answer.

    Args:
        rules: returns the rules in force now.
        forget: ``forget(rule) -> file`` removes a saved answer (raises ``ValueError`` or
            ``OSError`` with a message to show).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("delete,d", "forget", "Remove saved answer", id="permissions.forget"),
        Binding("escape", "close", "Back", id="permissions.close"),
    ]

    def __init__(self, rules: Callable[[], list[RuleInForce]], forget: Callable[[str], Path]) -> None:
        super().__init__()
        self._rules = rules
        self._forget = forget
        self.rows: list[RuleInForce] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="permissions-body"):
            yield Label(Text("Permissions", style="bold"), id="permissions-title")
            yield Static(
                Text(
                    "Rules in force, in the order they decide: deny, then ask, then allow. A tool no rule "
                    'names asks (read-only built-ins run). Saved "Always allow" answers can be removed '
                    "here; other rules are edited in the file named beside them.",
                    style="dim",
                ),
                id="permissions-help",
            )
            yield OptionList(id="permissions-list")
            yield Static(id="permissions-note")
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_rules()
        self.query_one(OptionList).focus()

    def refresh_rules(self) -> None:
        """Read the rules in force again and list them (keeping the cursor's place)."""
        listing = self.query_one(OptionList)
        at = listing.highlighted or 0
        self.rows = self._rules()
        listing.clear_options()
        if not self.rows:
            listing.add_option(
                Option(
                    Text("No permission rules: every tool asks, except read-only built-ins.", style="dim"),
                    disabled=True,
                )
            )
            return
        listing.add_options([Option(rule_line(row), id=str(i)) for i, row in enumerate(self.rows)])
        listing.highlighted = min(at, len(self.rows) - 1)

    def _note(self, text: str, style: str) -> None:
        self.query_one("#permissions-note", Static).update(Text(text, style=style))

    def action_forget(self) -> None:
        """Remove the highlighted rule if it is a saved answer; otherwise say where it is set."""
        index = self.query_one(OptionList).highlighted
        if index is None or index >= len(self.rows):
            return
        row = self.rows[index]
        rule = clean(row.rule, single_line=True)
        if not row.saved_answer:
            where = tildify(clean(row.source, single_line=True))
            self._note(f"{rule} is not a saved answer: it comes from {where}; edit it there", "yellow")
            return
        try:
            path = self._forget(row.rule)
        except (ValueError, OSError) as exc:
            self._note(f"✗ {clean(str(exc), single_line=True)}", "bold red")
            return
        self.refresh_rules()
        self._note(f"✓ removed {rule} from {tildify(str(path))}: it asks again from the next call", "green")

    def action_close(self) -> None:
        """Back to the main screen."""
        self.dismiss(None)
