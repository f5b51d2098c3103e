"""The Textual app: chat, recommendation bar, catalog, live scoring, token usage and settings.

Built by :func:`toolscout.tui.factory.make_app`; everything it knows comes from the core
:class:`~toolscout.core.engine.Engine` and session through :mod:`toolscout.tui.bridge`.
"""
