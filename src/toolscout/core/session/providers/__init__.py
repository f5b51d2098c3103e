"""Model providers and the one place one is chosen from settings, environment and flags.

Each provider is a module here defining ``PROVIDER`` (a :class:`~.base.ProviderSpec`), named in
:mod:`toolscout.core.settings.provider_registry`; :func:`create_provider` imports the module of
the provider it builds (and, under ``auto``, of each it asks), never the others.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping

from ...settings.layers import Settings
from ...settings.provider_registry import AUTO, OFFLINE, provider_module, provider_names
from .base import (
    ModelRequest,
    ModelResponse,
    Provider,
    ProviderConfigError,
    ProviderError,
    ProviderSetup,
    ProviderSpec,
    Usage,
)
from .offline import OfflineProvider

__all__ = [
    "ModelRequest",
    "ModelResponse",
    "OfflineProvider",
    "Provider",
    "ProviderConfigError",
    "ProviderError",
    "ProviderSetup",
    "ProviderSpec",
    "Usage",
    "create_provider",
    "provider_name",
    "provider_of",
    "provider_spec",
]


def provider_spec(name: str) -> ProviderSpec:
    """The :class:`~.base.ProviderSpec` of registered provider ``name`` (its module's ``PROVIDER``).

    Raises:
        ProviderConfigError: ``name`` is not registered, or its module cannot be imported or
            defines no ``PROVIDER``.
    """
    try:
        path = provider_module(name)
    except KeyError:
        raise ProviderConfigError(f"unknown provider {name!r}: use one of {', '.join(provider_names())}") from None
    try:
        module = importlib.import_module(path)
    except ImportError as exc:
        raise ProviderConfigError(f"provider {name} cannot be loaded ({path}: {exc})") from None
    spec = getattr(module, "PROVIDER", None)
    if not isinstance(spec, ProviderSpec):
        raise ProviderConfigError(f"provider {name}: {path} defines no PROVIDER (a ProviderSpec)")
    return spec


def provider_name(settings: Settings, env: Mapping[str, str] | None = None) -> str:
    """The provider :func:`create_provider` would build, without building it: ``provider.name``,
    or for ``auto`` the first registered provider whose :attr:`~.base.ProviderSpec.detect` finds
    its key or endpoint set, else ``offline``."""
    name: str = settings.get("provider.name") or AUTO
    if name != AUTO:
        return name
    setup = ProviderSetup(settings, os.environ if env is None else env, 0)
    return next((n for n in provider_names() if n != OFFLINE and provider_spec(n).detect(setup)), OFFLINE)


def provider_of(settings: Settings, env: Mapping[str, str] | None = None) -> tuple[str, str | None]:
    """:func:`provider_name`, and the base URL that provider would use (None: its own API)."""
    env = os.environ if env is None else env
    name = provider_name(settings, env)
    var = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}.get(name)
    return name, ProviderSetup(settings, env, 0).base_url(var) if var else None


def create_provider(settings: Settings, env: Mapping[str, str] | None = None, *, max_retries: int = 2) -> Provider:
    """The provider named by ``provider.name``; ``auto``: the first registered provider whose
    :attr:`~.base.ProviderSpec.detect` says its key or endpoint is set (Anthropic key →
    Anthropic; OpenAI key or an OpenAI base URL → OpenAI), else offline.

    Args:
        settings: resolved settings (flags already applied by ``settings_from_args``).
        env: environment (default ``os.environ``): ``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``,
            ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, and those of any other provider.

    Raises:
        ProviderConfigError: an explicitly chosen provider lacks its key (or is unknown).
    """
    setup = ProviderSetup(settings, os.environ if env is None else env, max_retries)
    return provider_spec(provider_name(settings, env)).create(setup)
