"""``toolscout`` with no subcommand: build the engine and the session from the command line and
run the Textual app (:mod:`toolscout.tui`), which is imported only here."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from . import fail
from .common import make_engine

if TYPE_CHECKING:
    from toolscout.core.engine.facade import Engine
    from toolscout.core.policy.permissions import Asker
    from toolscout.core.session.session import Session
    from toolscout.core.settings.layers import Settings


def make_session(
    settings: Settings, engine: Engine, args: argparse.Namespace | None = None, asker: Asker | None = None
) -> Session:
    """The session the app drives (a new one, or ``--resume``'d), asking the person through
    ``asker`` (the app's permission prompt) about tools that need permission.

    Raises:
        ProviderConfigError: an explicitly chosen provider lacks its key.
        SessionNotFound: ``--resume ID`` matched no transcript.
    """
    from toolscout.core.session.session import Session

    resume = args.resume if args is not None else None
    strategy = args.strategy if args is not None else None
    if resume is not None:
        return Session.resume(engine, resume or None, settings=settings, asker=asker)
    return Session(engine, settings=settings, strategy=strategy, asker=asker)


def session_or_offline(
    engine: Engine, args: argparse.Namespace, asker: Asker | None = None
) -> tuple[Session, Settings]:
    """The app's session, and the settings in effect: a provider chosen in a settings file or the
    environment that cannot be created (a missing key) becomes an offline session, with a warning
    and ``provider.name = offline`` applied to the engine (source ``fallback``), so a provider
    picked in the settings screen without its key can be changed back. ``asker``: as for
    :func:`make_session`.

    Raises:
        ProviderError: ``--provider`` named a provider that cannot be created.
        SessionNotFound: ``--resume ID`` matched no transcript.
    """
    from toolscout.core.session.providers import ProviderError
    from toolscout.core.settings.provider_registry import OFFLINE

    settings = engine.settings
    try:
        return make_session(settings, engine, args, asker), settings
    except ProviderError as exc:
        if args.provider:
            raise  # asked for on the command line: say so and stop
        engine.warn(f"{str(exc).rstrip('.')}: starting an offline session instead", "provider")
        settings = settings.with_overrides({"provider.name": OFFLINE}, source="fallback")
        engine.apply_settings(settings)
        return make_session(settings, engine, args, asker), settings


def offline_tool_search(session: Session, settings: Settings) -> Settings:
    """An offline session, new or ``--resume``'d, defaults to tool search on
    (:func:`~toolscout.core.session.modes.offline_default`): applied to ``session`` (and its
    engine) before the app runs it. A resumed session whose saved tools array was inline switches
    to deferral at once (:meth:`Session.apply_settings`). Model sessions keep their settings.

    Returns:
        The settings in effect (give them to the app).
    """
    from toolscout.core.session.modes import offline_default

    if not session.offline:
        return settings
    demo = offline_default(settings)
    if demo is not settings:
        session.apply_settings(demo)
    return demo


def app_session(engine: Engine, args: argparse.Namespace, asker: Asker) -> Session:
    """The app's session, built by its controller with the app's permission prompt as ``asker``
    (:func:`session_or_offline`, then :func:`offline_tool_search`); the app runs with the
    session's settings.

    Raises:
        ProviderError: ``--provider`` named a provider that cannot be created.
        SessionNotFound: ``--resume ID`` matched no transcript.
    """
    session, settings = session_or_offline(engine, args, asker)
    offline_tool_search(session, settings)
    return session


def run_app(args: argparse.Namespace) -> int:
    """``toolscout`` with no subcommand: build everything from ``args`` and run the app.

    Returns:
        The process exit code (1 when the session cannot be created, e.g. a missing API key).
    """
    from toolscout.core.session.providers import ProviderError
    from toolscout.core.session.session import SessionNotFound
    from toolscout.tui.factory import make_app  # Textual is imported only when the app runs

    engine = make_engine(args)
    try:
        app = make_app(engine.settings, engine, new_session=lambda asker: app_session(engine, args, asker))
    except (SessionNotFound, ProviderError) as exc:
        return fail(str(exc))
    code = app.run()
    return int(code or 0)
