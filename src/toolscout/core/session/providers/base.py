"""The provider contract: one streamed model call from a provider-neutral request.

Messages use one internal format everywhere (the Anthropic Messages shape): ``{"role": "user" |
"assistant", "content": [block, ...]}`` with ``text``, ``tool_use`` (``id``, ``name``, ``input``)
and ``tool_result`` (``tool_use_id``, ``content`` as text, ``is_error``) blocks. Each provider
translates it into its own wire format in :meth:`Provider.body`, which is exactly what it sends.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ...settings.layers import Settings

DEFAULT_MAX_TOKENS = 8192


@dataclass
class ModelRequest:
    """Everything a model call needs. ``tools`` are Anthropic-style definitions."""

    model: str
    system: str
    tools: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    max_tokens: int = DEFAULT_MAX_TOKENS


@dataclass
class Usage:
    """Token counts of one call (tokens). ``input_tokens`` excludes cached input."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0


@dataclass
class ModelResponse:
    """One complete assistant message in the internal format, with why it stopped and usage."""

    content: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    usage: Usage = field(default_factory=Usage)


class ProviderError(Exception):
    """A model call failed for a reason a person can act on (the message says how).

    Attributes:
        status: the HTTP status of an API's refusal (400, 529 …), None for other failures.
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ProviderConfigError(ProviderError):
    """The configured provider cannot be used (e.g. missing key); the message says what to set."""


@dataclass(frozen=True)
class ErrorWording:
    """How one provider names itself in :func:`provider_error` messages."""

    rejected_by: str  #: "Anthropic" → "Anthropic rejected the API key (401)"
    service: str  #: what cannot be reached when no base URL is set
    api_error: str  #: prefix of status errors ("Anthropic API error 529: overloaded")
    key_var: str  #: the API key's environment variable
    url_var: str  #: the base URL's environment variable


def provider_error(
    sdk: Any, exc: Exception, wording: ErrorWording, base_url: str | None, status_message: Callable[[Any], str]
) -> ProviderError:
    """The one mapping of an SDK error (``anthropic`` and ``openai`` share the class names:
    ``AuthenticationError``, ``APIConnectionError``, ``APIStatusError``, ``APIError``) into a
    :class:`ProviderError` that says what to check.

    Args:
        sdk: the SDK module (``anthropic`` or ``openai``).
        exc: the error the SDK raised.
        wording: the provider's names.
        base_url: the configured base URL, or None for the provider's own API.
        status_message: the human message of an ``APIStatusError``.
    """
    if isinstance(exc, sdk.AuthenticationError):
        return ProviderError(f"{wording.rejected_by} rejected the API key (401). Check {wording.key_var}.")
    if isinstance(exc, sdk.APIConnectionError):
        return ProviderError(
            f"Cannot reach {base_url or wording.service}: {exc.__cause__ or exc}. Check the "
            f"network or --base-url / {wording.url_var}."
        )
    if isinstance(exc, sdk.APIStatusError):
        return ProviderError(f"{wording.api_error} {exc.status_code}: {status_message(exc)}", exc.status_code)
    return ProviderError(f"{wording.api_error}: {exc}")


class Provider(Protocol):
    """A model API. ``name``: its registered name (``anthropic``, ``openai``, ``offline``, …:
    :mod:`toolscout.core.settings.provider_registry`); ``model``: model name; ``base_url``: the
    endpoint it talks to (None: the provider's own API, or none at all)."""

    name: str
    model: str
    base_url: str | None

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The exact request body (JSON-serialisable) :meth:`complete` sends."""
        ...

    async def complete(self, request: ModelRequest, on_text: Callable[[str], None]) -> ModelResponse:
        """Stream one response, calling ``on_text`` with each text delta.

        Raises:
            ProviderError: bad key, unreachable endpoint, API error (message for people).
        """
        ...


def merge_consecutive(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of ``messages`` where consecutive same-role messages are joined into one.

    Happens when a session resumes after a crash (a repair result follows an unanswered user
    message). The stored transcript is never changed; only the wire copy is merged. Within a
    merged user message tool_result blocks come first, as the Anthropic API requires.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        if out and out[-1]["role"] == message["role"]:
            out[-1]["content"].extend(copy.deepcopy(blocks))
        else:
            out.append({"role": message["role"], "content": copy.deepcopy(blocks)})
    for message in out:
        if message["role"] == "user":
            blocks = message["content"]
            message["content"] = [b for b in blocks if b.get("type") == "tool_result"] + [
                b for b in blocks if b.get("type") != "tool_result"
            ]
    return out


@dataclass(frozen=True)
class ProviderSetup:
    """What a provider is built from: the settings, the environment and the SDK retries.

    Attributes:
        settings: resolved settings (flags applied): ``provider.model``, ``provider.baseUrl``
            and any key of the provider's own.
        env: the environment (``os.environ`` unless a test gives one): API keys, base URLs.
        max_retries: SDK retries on connection errors, 429 and 5xx (0 in tests).
    """

    settings: Settings
    env: Mapping[str, str]
    max_retries: int = 2

    @property
    def model(self) -> str | None:
        """``provider.model`` (None: the provider's default model)."""
        model: str | None = self.settings.get("provider.model")
        return model

    def base_url(self, var: str) -> str | None:
        """The API base URL: ``--base-url`` > the environment variable ``var`` (such as
        ``OPENAI_BASE_URL``) > ``provider.baseUrl`` in a settings file; None: the SDK's default."""
        configured: str | None = self.settings.get("provider.baseUrl")
        if configured and self.settings.sources.get("provider.baseUrl") == "cli":
            return configured
        return self.env.get(var) or configured


def never(setup: ProviderSetup) -> bool:
    """A :attr:`ProviderSpec.detect` that never picks the provider under ``auto``."""
    return False


@dataclass(frozen=True)
class ProviderSpec:
    """How :func:`~toolscout.core.session.providers.create_provider` handles one provider: the
    ``PROVIDER`` of its module (registered by name in
    :mod:`toolscout.core.settings.provider_registry`).

    Attributes:
        create: builds the provider; raises :class:`ProviderConfigError` saying what to set when
            it cannot (a missing key).
        detect: True when ``provider.name = auto`` should pick this provider (its key or endpoint
            is set); providers are asked in registration order, and none → ``offline``.
    """

    create: Callable[[ProviderSetup], Provider]
    detect: Callable[[ProviderSetup], bool] = never
