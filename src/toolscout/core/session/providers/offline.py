"""The offline provider: no model. The person drives the session (see ``Session`` offline mode).

Used when no API key or endpoint is configured. Its ``body`` renders requests in the Anthropic
format so ``toolscout request`` still shows what a model would receive.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .anthropic_provider import anthropic_body
from .base import ModelRequest, ModelResponse, ProviderError, ProviderSetup, ProviderSpec


class OfflineProvider:
    """A provider that never calls a model."""

    name = "offline"
    base_url: str | None = None

    def __init__(self, model: str | None = None) -> None:
        self.model = model or "offline"

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """What an Anthropic request would look like (for inspection only)."""
        return anthropic_body(request, self.model)

    async def complete(self, request: ModelRequest, on_text: Callable[[str], None]) -> ModelResponse:
        """Always fails: in offline mode the session asks the person instead of a model."""
        raise ProviderError(
            "No model is configured (offline mode): set ANTHROPIC_API_KEY or "
            "OPENAI_API_KEY, or pass --provider and --base-url."
        )


def _create(setup: ProviderSetup) -> OfflineProvider:
    return OfflineProvider(setup.model)


#: Never detected: ``auto`` falls back to it when no other provider is set up.
PROVIDER = ProviderSpec(create=_create)
