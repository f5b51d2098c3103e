"""Settings: the layers (managed, user, project, local, environment, flags) and their checks.

Rooms: :mod:`.layers` (:class:`Settings`, the schema of known keys, reading and saving layers),
:mod:`.checks` (a bad value falls back to the default with a warning that says why).
"""

from .layers import Settings, SettingsPaths, load_settings

__all__ = ["Settings", "SettingsPaths", "load_settings"]
