"""Model providers and the one place one is chosen from settings, environment and flags."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ...settings.layers import Settings
from .base import ModelRequest, ModelResponse, Provider, ProviderError, Usage
from .offline import OfflineProvider

__all__ = ["ModelRequest", "ModelResponse", "OfflineProvider", "Provider", "ProviderConfigError",
           "ProviderError", "Usage", "create_provider", "provider_of"]


class ProviderConfigError(ProviderError):
    """The configured provider cannot be used (e.g. missing key); the message says what to set."""


def _base_url(settings: Settings, env: Mapping[str, str], var: str) -> str | None:
    # Precedence: --base-url flag > environment variable > settings files.
    configured: str | None = settings.get("provider.baseUrl")
    if configured and settings.sources.get("provider.baseUrl") == "cli":
        return configured
    return env.get(var) or configured


def provider_of(settings: Settings, env: Mapping[str, str] | None = None) -> tuple[str, str | None]:
    """The provider :func:`create_provider` would make, without making it: its name
    (``anthropic`` | ``openai`` | ``offline``; ``auto`` resolved by which key is set) and base URL."""
    env = os.environ if env is None else env
    name = settings.get("provider.name") or "auto"
    if name == "auto":
        if env.get("ANTHROPIC_API_KEY"):
            name = "anthropic"
        elif env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL") or settings.get("provider.baseUrl"):
            name = "openai"
        else:
            name = "offline"
    var = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}.get(name)
    return name, _base_url(settings, env, var) if var else None


def create_provider(settings: Settings, env: Mapping[str, str] | None = None, *,
                    max_retries: int = 2) -> Provider:
    """The provider named by ``provider.name`` (``auto``: Anthropic key → Anthropic; OpenAI key
    or an OpenAI base URL → OpenAI; else offline).

    Args:
        settings: resolved settings (flags already applied by ``settings_from_args``).
        env: environment (default ``os.environ``): ``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``,
            ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``.

    Raises:
        ProviderConfigError: an explicitly chosen provider lacks its key.
    """
    env = os.environ if env is None else env
    name, _ = provider_of(settings, env)
    model = settings.get("provider.model")
    if name == "anthropic":
        key = env.get("ANTHROPIC_API_KEY")
        if not key:
            raise ProviderConfigError("provider anthropic needs ANTHROPIC_API_KEY to be set "
                                      "(or use --provider offline).")
        from .anthropic_provider import AnthropicProvider

        return AnthropicProvider(key, model, _base_url(settings, env, "ANTHROPIC_BASE_URL"),
                                 max_retries=max_retries)
    if name == "openai":
        base_url = _base_url(settings, env, "OPENAI_BASE_URL")
        key = env.get("OPENAI_API_KEY")
        if not key and not base_url:
            raise ProviderConfigError("provider openai needs OPENAI_API_KEY, or --base-url for a "
                                      "local OpenAI-compatible server that needs no key.")
        from .openai_provider import OpenAIProvider

        return OpenAIProvider(key, model, base_url, max_retries=max_retries,
                              strict=bool(settings.get("provider.openaiStrict")))
    return OfflineProvider(model)
