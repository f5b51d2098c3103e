"""Snapshot tests of the main views (pytest-textual-snapshot, fixed sizes, fixture data).

Each scenario's docstring (in :mod:`tui_snapshot_scenarios`) says what the picture must show.
Update after an intended change with ``pytest tests/snapshots --snapshot-update`` and look at
``snapshot_report.html`` before committing.
"""

from __future__ import annotations

import pytest
import tui_snapshot_scenarios as scenarios


@pytest.mark.parametrize("scenario", scenarios.SCENARIOS, ids=lambda s: s.name)
def test_snapshot(snap_compare, scenario: scenarios.Scenario) -> None:
    assert snap_compare(scenario.build(), terminal_size=scenario.size, run_before=scenario.run_before)
