"""The one place the app is built: the CLI, the tests and the screenshots all call :func:`make_app`."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from toolscout.core.settings.layers import Settings

if TYPE_CHECKING:
    from toolscout.core.engine.facade import Engine
    from toolscout.core.session.session import Session

    from .app import ToolscoutApp
    from .controller import SessionFactory

log = logging.getLogger(__name__)


def make_app(
    settings: Settings,
    engine: Engine,
    session: Session | None = None,
    *,
    new_session: SessionFactory | None = None,
    start_engine: bool = True,
) -> ToolscoutApp:
    """Build the Textual app over ``engine`` (and ``session`` when there is one).

    Args:
        settings: resolved settings.
        engine: a :class:`~toolscout.core.engine.facade.Engine`; the app starts it on mount and stops it
            on exit unless ``start_engine`` is False.
        session: a session built with its own asker, or None for a catalog-only app (slash
            commands work) unless ``new_session`` is given.
        new_session: ``new_session(asker) -> Session``, called while the app is built with the
            app's permission prompt as ``asker``; the app runs with that session's settings.

    Returns:
        A :class:`~toolscout.tui.app.ToolscoutApp`, ready for ``run()`` or ``run_test()``.
    """
    from .app import ToolscoutApp

    return ToolscoutApp(settings, engine, session, new_session=new_session, start_engine=start_engine)
