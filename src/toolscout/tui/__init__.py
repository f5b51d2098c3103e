"""The Textual app: chat, recommendation bar, catalog, live scoring, token usage and settings.

Built by :func:`toolscout.tui.factory.make_app`; the core :class:`~toolscout.core.engine.facade.Engine`
and session belong to :class:`~toolscout.tui.controller.SessionController`, which reports their
events to the screens as messages (:mod:`toolscout.tui.bridge`, :mod:`toolscout.tui.messages`).
"""
