"""The README pictures (issue 14, "the README shows the real product"): each one is in
``screenshots/``, shown in the README with its one-line caption, on the default ranker, with no
test-only data (the hostile fixture server, ``evil.example`` links)."""

from __future__ import annotations

from pathlib import Path

import tui_readme_scenarios as readme

ROOT = Path(__file__).resolve().parents[2]


def test_every_picture_is_in_the_readme_with_its_caption() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for picture in readme.PICTURES:
        assert f"](screenshots/{picture.name}.svg)" in text, picture.name
        assert picture.doc in text and "\n" not in picture.doc, picture.name
    shown = {p.stem for p in (ROOT / "screenshots").glob("*.svg")}
    assert shown == {p.name for p in readme.PICTURES}  # no stale picture left behind


def test_pictures_show_no_test_data_and_the_default_ranker() -> None:
    for picture in readme.PICTURES:
        svg = (ROOT / "screenshots" / f"{picture.name}.svg").read_text(encoding="utf-8")
        assert "evil.example" not in svg and "hostile" not in svg, picture.name
    scoring = (ROOT / "screenshots" / "scoring.svg").read_text(encoding="utf-8")
    assert "hybrid" not in scoring and "dense" in scoring  # the default ranker's fused parts
