"""Screens: the main layout, settings, and the modals (permission, argument form, tool details)."""
