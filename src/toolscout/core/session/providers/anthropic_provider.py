"""Anthropic Messages API provider (the ``anthropic`` SDK, streaming).

Prompt caching: the system prompt is sent as one text block carrying a ``cache_control``
breakpoint; because the API orders the prefix tools → system → messages, that one breakpoint
caches the whole stable prefix (tools array + system). A second breakpoint on the last block of
the last message caches the conversation so far (as Claude Code does). Both are added to the
wire copy only. ``cache_creation_input_tokens`` / ``cache_read_input_tokens`` are reported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import (
    ErrorWording,
    ModelRequest,
    ModelResponse,
    ProviderConfigError,
    ProviderSetup,
    ProviderSpec,
    Usage,
    merge_consecutive,
    provider_error,
)

WORDING = ErrorWording(
    "Anthropic", "the Anthropic API", "Anthropic API error", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"
)

DEFAULT_MODEL = "claude-sonnet-5-5"
_EPHEMERAL = {"type": "ephemeral"}


def anthropic_body(request: ModelRequest, default_model: str) -> dict[str, Any]:
    """Messages API parameters for ``request``, with the two cache breakpoints (wire copy only)."""
    messages = merge_consecutive(request.messages)
    if messages and messages[-1]["content"]:
        messages[-1]["content"][-1]["cache_control"] = _EPHEMERAL
    return {
        "model": request.model or default_model,
        "max_tokens": request.max_tokens,
        "system": [{"type": "text", "text": request.system, "cache_control": _EPHEMERAL}],
        "tools": request.tools,
        "messages": messages,
    }


class AnthropicProvider:
    """Talks to ``/v1/messages`` at ``base_url`` (None: the SDK default or ``ANTHROPIC_BASE_URL``).

    Args:
        api_key: the key (required). model: model name. max_retries: SDK retries on
            connection errors, 429 and 5xx (0 in tests). timeout: per request (s).
    """

    name = "anthropic"

    def __init__(
        self,
        api_key: str,
        model: str | None = None,
        base_url: str | None = None,
        *,
        max_retries: int = 2,
        timeout: float = 600.0,
    ) -> None:
        from anthropic import AsyncAnthropic

        self.model = model or DEFAULT_MODEL
        self.base_url = base_url
        self._client = AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout)

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The ``messages.create`` parameters, cache breakpoints included."""
        return anthropic_body(request, self.model)

    async def complete(self, request: ModelRequest, on_text: Callable[[str], None]) -> ModelResponse:
        """Stream one message; see :class:`~.base.Provider`."""
        import anthropic

        try:
            async with self._client.messages.stream(**self.body(request)) as stream:
                async for event in stream:
                    if event.type == "text":
                        on_text(event.text)
                final = await stream.get_final_message()
        except anthropic.APIError as exc:
            raise provider_error(anthropic, exc, WORDING, self.base_url, _message) from exc
        content: list[dict[str, Any]] = []
        for block in final.content:
            if block.type == "text":
                content.append({"type": "text", "text": block.text})
            elif block.type == "tool_use":
                content.append(
                    {
                        "type": "tool_use",
                        "id": block.id,
                        "name": block.name,
                        "input": block.input if isinstance(block.input, dict) else {},
                    }
                )
        u = final.usage
        usage = Usage(
            input_tokens=u.input_tokens or 0,
            output_tokens=u.output_tokens or 0,
            cache_read_tokens=getattr(u, "cache_read_input_tokens", None) or 0,
            cache_creation_tokens=getattr(u, "cache_creation_input_tokens", None) or 0,
        )
        return ModelResponse(content, final.stop_reason, usage)


def _message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(getattr(exc, "message", exc))


def _detect(setup: ProviderSetup) -> bool:
    return bool(setup.env.get("ANTHROPIC_API_KEY"))


def _create(setup: ProviderSetup) -> AnthropicProvider:
    key = setup.env.get("ANTHROPIC_API_KEY")
    if not key:
        raise ProviderConfigError("provider anthropic needs ANTHROPIC_API_KEY to be set (or use --provider offline).")
    return AnthropicProvider(key, setup.model, setup.base_url("ANTHROPIC_BASE_URL"), max_retries=setup.max_retries)


#: ``auto`` picks Anthropic when ``ANTHROPIC_API_KEY`` is set (before any other provider).
PROVIDER = ProviderSpec(create=_create, detect=_detect)
