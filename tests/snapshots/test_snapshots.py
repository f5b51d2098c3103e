"""Snapshot tests of the main views (pytest-textual-snapshot, fixed sizes, fixture data).

One test per view; each docstring says what the picture must show (the scenarios themselves are
in :mod:`tui_snapshot_scenarios`, shared with ``pytest -m screenshots``). Update after an intended
change with ``pytest tests/snapshots --snapshot-update`` and look at ``snapshot_report.html``
before committing.
"""

from __future__ import annotations

from typing import Any

import tui_snapshot_scenarios as scenarios

SCENARIOS = {s.name: s for s in scenarios.SCENARIOS}


def matches(snap_compare: Any, name: str) -> bool:
    """The scenario ``name`` rendered at its size equals its stored picture."""
    scenario = SCENARIOS[name]
    return bool(snap_compare(scenario.build(), terminal_size=scenario.size, run_before=scenario.run_before))


def test_main(snap_compare: Any) -> None:
    """Chat after an offline turn: search results, the tool call expanded with its result, the bar."""
    assert matches(snap_compare, "main")


def test_recommendations(snap_compare: Any) -> None:
    """The recommendation bar with focus on its second item; hostile text literal."""
    assert matches(snap_compare, "recommendations")


def test_catalog(snap_compare: Any) -> None:
    """The catalog filtered by 'e', with the failed jira server and its reason."""
    assert matches(snap_compare, "catalog")


def test_scoring(snap_compare: Any) -> None:
    """Live scoring for 'create issue': ranked table, components, explanation of row 2."""
    assert matches(snap_compare, "scoring")


def test_usage(snap_compare: Any) -> None:
    """Token usage per server with bars, totals, the mode decision and cache line."""
    assert matches(snap_compare, "usage")


def test_settings(snap_compare: Any) -> None:
    """The settings screen, with the warning of an invalid user settings file."""
    assert matches(snap_compare, "settings")


def test_permission(snap_compare: Any) -> None:
    """The permission prompt naming the real tool and its (hostile) arguments."""
    assert matches(snap_compare, "permission")


def test_argument_form(snap_compare: Any) -> None:
    """The argument form of post_alert: boxed fields, the focused one in the accent colour, the
    invalid ones in red, the errors listed above the buttons."""
    assert matches(snap_compare, "argument_form")


def test_narrow(snap_compare: Any) -> None:
    """80×24: the side panel is hidden and the chat takes the width."""
    assert matches(snap_compare, "narrow")


def test_tool_progress(snap_compare: Any) -> None:
    """A running tool call with its server's progress: a bar at 3 of 8 (38%) under the title,
    the server's message beside it with its markup literal and its escape removed."""
    assert matches(snap_compare, "tool_progress")
