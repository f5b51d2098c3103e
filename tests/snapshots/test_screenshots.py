"""Regenerate ``screenshots/*.svg`` from the snapshot scenarios: ``pytest -m screenshots``.

Skipped in normal runs (the pictures are for the README, the snapshots are the test).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import tui_snapshot_scenarios as scenarios
from textual._doc import take_svg_screenshot

SCREENSHOTS = Path(__file__).resolve().parents[2] / "screenshots"


@pytest.mark.screenshots
@pytest.mark.parametrize("scenario", scenarios.SCENARIOS, ids=lambda s: s.name)
def test_screenshot(scenario: scenarios.Scenario, request: pytest.FixtureRequest) -> None:
    if "screenshots" not in (request.config.getoption("-m") or ""):
        pytest.skip("run with -m screenshots to regenerate screenshots/*.svg")
    svg = take_svg_screenshot(app=scenario.build(), terminal_size=scenario.size,
                              run_before=scenario.run_before, title=f"toolscout · {scenario.name}")
    SCREENSHOTS.mkdir(exist_ok=True)
    (SCREENSHOTS / f"{scenario.name}.svg").write_text(svg, encoding="utf-8")
