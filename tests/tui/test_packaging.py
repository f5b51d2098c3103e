"""The stylesheets are found from a source checkout and from an installed wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from toolscout.tui.resources import STYLESHEETS, styles_dir, stylesheet_paths

REPO = Path(__file__).resolve().parents[2]


def test_checkout_finds_the_repo_styles() -> None:
    assert styles_dir() == REPO / "styles"
    assert all(p.is_file() for p in stylesheet_paths())


def test_every_stylesheet_in_the_repo_is_loaded() -> None:
    assert sorted(p.name for p in (REPO / "styles").glob("*.tcss")) == sorted(STYLESHEETS)


def test_an_installed_wheel_finds_its_packaged_styles(tmp_path: Path) -> None:
    builders = pytest.importorskip("hatchling.builders.wheel", reason="hatchling builds the wheel")
    builder = builders.WheelBuilder(str(REPO))
    wheel = Path(next(iter(builder.build(directory=str(tmp_path / "dist"), versions=["standard"]))))
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for sheet in STYLESHEETS:
            assert f"toolscout/styles/{sheet}" in names
        site = tmp_path / "site"
        archive.extractall(site)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from toolscout.tui.resources import styles_dir; print(styles_dir())"
    )
    out = subprocess.run([sys.executable, "-I", "-c", code, str(site)], capture_output=True, text=True, check=True)
    assert Path(out.stdout.strip()) == site / "toolscout" / "styles"
