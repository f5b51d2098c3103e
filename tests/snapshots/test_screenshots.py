"""Regenerate ``screenshots/*.svg``, the README pictures: ``pytest -m screenshots``.

The pictures are :mod:`tui_readme_scenarios` (the real default servers and 19 real catalogs,
default ranker); skipped in normal runs (the snapshot tests are the test). Convert one to look at
it with ``rsvg-convert -b white screenshots/main.svg -o /tmp/main.png``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import tui_readme_scenarios as readme
from textual._doc import take_svg_screenshot

SCREENSHOTS = Path(__file__).resolve().parents[2] / "screenshots"


@pytest.mark.screenshots
@pytest.mark.parametrize("picture", readme.PICTURES, ids=lambda p: p.name)
def test_screenshot(picture: readme.Scenario, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if "screenshots" not in (request.config.getoption("-m") or ""):
        pytest.skip("run with -m screenshots to regenerate screenshots/*.svg")
    monkeypatch.delenv("TOOLSCOUT_DENSE", raising=False)  # the default ranker, as a person runs it
    svg = take_svg_screenshot(
        app=picture.build(),
        terminal_size=picture.size,
        run_before=picture.run_before,
        title=f"toolscout · {picture.name}",
    )
    SCREENSHOTS.mkdir(exist_ok=True)
    (SCREENSHOTS / f"{picture.name}.svg").write_text(svg, encoding="utf-8")
