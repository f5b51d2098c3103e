"""Agent sessions with deferred tool loading.

:class:`~toolscout.core.session.session.Session` runs the conversation; ``projection`` decides the
exact request bytes (execute-proxy or stub strategy); ``reminders`` announces deferred tools and
recommendations inside user turns; ``prefetch`` recommends tools; ``providers`` talk to models;
``transcript`` persists every session as JSONL so it can be resumed.
"""
