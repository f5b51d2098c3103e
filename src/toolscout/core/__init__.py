"""The UI-free core of toolscout: catalog, settings, tokens, search, MCP layer and session.

Nothing under ``toolscout.core`` may import Textual or Rich; ``tests/core/test_import_hygiene.py``
checks that in a fresh interpreter.
"""
