"""Widgets of the app. Each takes what it shows through messages or its constructor."""
