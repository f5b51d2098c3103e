"""Where the app's stylesheets live, installed or editable.

All app CSS is in ``styles/*.tcss`` at the repository root. The wheel force-includes that
directory as ``toolscout/styles`` (see ``pyproject.toml``), so an installed package finds it next
to the package; an editable install or a source checkout finds it at the repository root.
"""

from __future__ import annotations

from pathlib import Path

#: Stylesheets in load order (later files may refine earlier ones).
STYLESHEETS: tuple[str, ...] = (
    "app.tcss",
    "chat.tcss",
    "recommendations.tcss",
    "panels.tcss",
    "modals.tcss",
    "settings.tcss",
    "focus.tcss",
)


def styles_dir() -> Path:
    """The directory holding the ``.tcss`` files.

    Returns:
        ``<package>/styles`` when it exists (installed wheel), else ``<repo>/styles``.

    Raises:
        FileNotFoundError: neither location has the stylesheets (a broken install).
    """
    package = Path(__file__).resolve().parent.parent  # .../toolscout
    for candidate in (package / "styles", package.parent.parent / "styles"):
        if (candidate / STYLESHEETS[0]).is_file():
            return candidate
    raise FileNotFoundError(f"toolscout stylesheets not found next to {package}")


def stylesheet_paths() -> list[Path]:
    """Absolute paths of every stylesheet, in load order."""
    root = styles_dir()
    return [root / name for name in STYLESHEETS]
