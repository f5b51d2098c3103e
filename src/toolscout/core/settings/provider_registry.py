"""The model providers toolscout knows: the values ``provider.name`` takes, in the order the CLI
(``--provider``) and the settings screen list them, each with the module that implements it.

Adding a provider is one module and one line here: the module (beside
:mod:`toolscout.core.session.providers.anthropic_provider`) defines ``PROVIDER``, a
:class:`~toolscout.core.session.providers.base.ProviderSpec` (how ``auto`` detects it, how it is
built from the settings and the environment), and the line below names it. The settings accept
the name at once (a settings file, ``TOOLSCOUT_PROVIDER``, ``--provider``, the settings screen),
and :func:`~toolscout.core.session.providers.create_provider` imports the module only when the
provider is built or ``auto`` asks it.

Why names and module paths, not the providers themselves: the settings sit below the session in
the core's stack, and must check ``provider.name`` wherever they are loaded (``toolscout serve``
never builds a provider; a provider module may import its SDK), so they know each provider by
name and where to find it, and import nothing of it.
"""

from __future__ import annotations

#: ``provider.name``: choose from the keys and endpoints that are set (see ``create_provider``).
AUTO = "auto"
#: The provider with no model, where the person drives; ``auto``'s choice when no other fits.
OFFLINE = "offline"

#: Provider name → dotted path of its module, in listing order. ``auto`` asks them in this
#: order (``offline`` is never asked: it is the fallback).
_PROVIDERS: dict[str, str] = {
    "anthropic": "toolscout.core.session.providers.anthropic_provider",
    "openai": "toolscout.core.session.providers.openai_provider",
    OFFLINE: "toolscout.core.session.providers.offline",
}


def provider_names() -> tuple[str, ...]:
    """The registered provider names, in listing order (``auto`` is not one of them)."""
    return tuple(_PROVIDERS)


def provider_module(name: str) -> str:
    """The dotted path of the module implementing provider ``name``.

    Raises:
        KeyError: ``name`` is not registered.
    """
    return _PROVIDERS[name]


def register_provider(name: str, module: str) -> None:
    """Register provider ``name``, implemented by the module at dotted path ``module`` (which
    defines ``PROVIDER``), after those already registered. For a provider outside this package
    (a plugin, a test); toolscout's own are the lines of ``_PROVIDERS``.

    Raises:
        ValueError: ``name`` is already registered, is ``auto``, or is not a lower-case word
            (letters, digits, ``-``, ``_``: settings compare names in lower case).
    """
    if name in _PROVIDERS or name == AUTO:
        raise ValueError(f"provider {name!r} is already registered")
    word = name.replace("-", "").replace("_", "")
    if not word or name != name.strip().lower() or not (word.isascii() and word.isalnum()):
        raise ValueError(f"provider name {name!r}: use a lower-case word (letters, digits, - or _)")
    _PROVIDERS[name] = module


def unregister_provider(name: str) -> None:
    """Forget provider ``name`` (registered with :func:`register_provider`); unknown names are ignored."""
    _PROVIDERS.pop(name, None)
