"""The one place the app is built: the CLI, the tests and the screenshots all call :func:`make_app`."""

from __future__ import annotations

import argparse
import logging
from typing import TYPE_CHECKING

from ..core.settings import Settings

if TYPE_CHECKING:
    from ..core.engine import Engine
    from ..core.session.session import Session
    from .app import ToolscoutApp

log = logging.getLogger(__name__)


def make_app(settings: Settings, engine: Engine, session: Session | None = None, *,
             start_engine: bool = True) -> ToolscoutApp:
    """Build the Textual app over ``engine`` (and ``session`` when there is one).

    Args:
        settings: resolved settings.
        engine: a :class:`~toolscout.core.engine.Engine`; the app starts it on mount and stops it
            on exit unless ``start_engine`` is False.
        session: the agent session, or None for a catalog-only app (slash commands work).

    Returns:
        A :class:`~toolscout.tui.app.ToolscoutApp`, ready for ``run()`` or ``run_test()``.
    """
    from .app import ToolscoutApp

    return ToolscoutApp(settings, engine, session, start_engine=start_engine)


def make_session(settings: Settings, engine: Engine, args: argparse.Namespace | None = None) -> Session:
    """The session the app drives (a new one, or ``--resume``'d).

    Raises:
        ProviderConfigError: an explicitly chosen provider lacks its key.
        SessionNotFound: ``--resume ID`` matched no transcript.
    """
    from ..core.session.session import Session

    resume = getattr(args, "resume", None) if args is not None else None
    strategy = getattr(args, "strategy", None) if args is not None else None
    if resume is not None:
        return Session.resume(engine, resume or None, settings=settings)
    return Session(engine, settings=settings, strategy=strategy)


def run_app(args: argparse.Namespace) -> int:
    """``toolscout`` with no subcommand: build everything from ``args`` and run the app.

    Returns:
        The process exit code (1 when the session cannot be created, e.g. a missing API key).
    """
    from ..cli import fail
    from ..cli.common import make_engine
    from ..core.session.providers import ProviderError
    from ..core.session.session import SessionNotFound

    engine = make_engine(args)
    settings = engine.settings
    try:
        session = make_session(settings, engine, args)
    except SessionNotFound as exc:
        return fail(str(exc))
    except ProviderError as exc:
        if getattr(args, "provider", None):
            return fail(str(exc))  # asked for on the command line: say so and stop
        # From a settings file or the environment: start offline instead of refusing to start,
        # so a provider picked in the settings screen without its key can be changed back.
        engine.warn(f"{str(exc).rstrip('.')}: starting an offline session instead", "provider")
        settings = settings.with_overrides({"provider.name": "offline"}, source="fallback")
        engine.settings = settings
        session = make_session(settings, engine, args)
    app = make_app(settings, engine, session)
    code = app.run()
    return int(code or 0)
