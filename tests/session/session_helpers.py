"""Helpers for session tests: providers pointed at the fake server, an event recorder."""

from __future__ import annotations

from typing import Any

from toolscout.core.events import Event
from toolscout.core.session.providers.anthropic_provider import AnthropicProvider
from toolscout.core.session.providers.openai_provider import OpenAIProvider


def provider_for(kind: str, url: str) -> Any:
    """An Anthropic or OpenAI provider that talks to the fake server at ``url`` (no retries)."""
    if kind == "anthropic":
        return AnthropicProvider("test-key", "claude-test", url, max_retries=0, timeout=20)
    return OpenAIProvider("test-key", "gpt-test", url + "/v1", max_retries=0, timeout=20)


class Recorder:
    """Collects events; ``of(Type)`` filters them."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


def user_texts(body: dict[str, Any]) -> list[str]:
    """Every text of every user message of an Anthropic request body."""
    out = []
    for m in body["messages"]:
        if m["role"] == "user":
            out.extend(b.get("text", "") for b in m["content"] if b.get("type") == "text")
    return out
