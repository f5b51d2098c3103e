"""OpenAI-compatible Chat Completions provider (the ``openai`` SDK, streaming, any ``base_url``).

Translation from the internal format: the system prompt becomes the first ``system`` message;
tools become ``{"type": "function", "function": {name, description, parameters}}`` in the same
order; ``tool_use`` blocks become ``tool_calls``; ``tool_result`` blocks become ``tool`` messages
placed before any text of the same user turn. Cached prompt tokens are reported when the server
returns ``usage.prompt_tokens_details.cached_tokens`` (OpenAI caches prefixes automatically).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ...schemas.strict import cached_strict_schema, restore_strict_arguments
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
from .openai_responses import is_native, parse_response, responses_body

WORDING = ErrorWording("The endpoint", "the OpenAI API", "API error", "OPENAI_API_KEY", "OPENAI_BASE_URL")

DEFAULT_MODEL = "gpt-4.1-mini"


def to_openai_messages(system: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Internal messages → Chat Completions messages (system first)."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for message in merge_consecutive(messages):
        blocks = message["content"]
        text = "\n\n".join(b["text"] for b in blocks if b.get("type") == "text")
        if message["role"] == "assistant":
            calls = [
                {
                    "id": b["id"],
                    "type": "function",
                    "function": {"name": b["name"], "arguments": json.dumps(b.get("input") or {}, ensure_ascii=False)},
                }
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                content = b.get("content")
                if not isinstance(content, str):
                    content = "\n".join(str(x.get("text", "")) for x in content or ())
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": b["tool_use_id"],
                        "content": ("Error: " + content) if b.get("is_error") else content,
                    }
                )
        if text:
            out.append({"role": "user", "content": text})
    return out


def to_openai_tools(tools: list[dict[str, Any]], *, strict: bool = False) -> list[dict[str, Any]]:
    """Anthropic-style tool definitions → Chat Completions function tools (same order).

    With ``strict``, each tool whose (already projected) schema can be made strict is sent with
    ``"strict": true`` and its :func:`~toolscout.core.schemas.strict.strict_schema` form; the
    others are sent as they are, without ``strict``.
    """
    out = []
    for t in tools:
        parameters = t.get("input_schema") or {"type": "object", "properties": {}}
        function: dict[str, Any] = {
            "name": t["name"],
            "description": t.get("description", ""),
            "parameters": parameters,
        }
        view = cached_strict_schema(parameters) if strict else None
        if view is not None:
            function["parameters"], function["strict"] = view, True
        out.append({"type": "function", "function": function})
    return out


class OpenAIProvider:
    """Talks to ``/chat/completions`` at ``base_url`` (None: OpenAI or ``OPENAI_BASE_URL``).

    Args:
        api_key: the key; local gateways that need none get a placeholder. model: model name.
        max_retries: SDK retries (0 in tests). timeout: per request (s).
        strict: send tools with ``"strict": true`` where their schema allows (setting
            ``provider.openaiStrict``).
    """

    name = "openai"

    def __init__(
        self,
        api_key: str | None,
        model: str | None = None,
        base_url: str | None = None,
        *,
        max_retries: int = 2,
        timeout: float = 600.0,
        strict: bool = False,
    ) -> None:
        from openai import AsyncOpenAI

        self.model = model or DEFAULT_MODEL
        self.base_url = base_url
        self.strict = strict
        self._client = AsyncOpenAI(
            api_key=api_key or "not-needed", base_url=base_url, max_retries=max_retries, timeout=timeout
        )

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The ``chat.completions.create`` parameters; for a native request (deferred tools
        marked ``defer_loading``), the Responses API's (:mod:`.openai_responses`)."""
        if is_native(request):
            return responses_body(request, self.model)
        body: dict[str, Any] = {
            "model": request.model or self.model,
            "max_tokens": request.max_tokens,
            "messages": to_openai_messages(request.system, request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = to_openai_tools(request.tools, strict=self.strict)
        return body

    async def complete(self, request: ModelRequest, on_text: Callable[[str], None]) -> ModelResponse:
        """Stream one completion; see :class:`~.base.Provider`."""
        import openai

        if is_native(request):
            try:
                async with self._client.responses.stream(**self.body(request)) as events:
                    async for event in events:
                        if event.type == "response.output_text.delta":
                            on_text(event.delta)
                    final = await events.get_final_response()
            except openai.APIError as exc:
                raise provider_error(openai, exc, WORDING, self.base_url, lambda e: str(e.message)) from exc
            return parse_response(final)
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        finish: str | None = None
        usage = Usage()
        try:
            stream = await self._client.chat.completions.create(**self.body(request))
            async for chunk in stream:
                if chunk.usage is not None:
                    usage = _usage(chunk.usage)
                for choice in chunk.choices or ():
                    delta = choice.delta
                    if delta is not None and delta.content:
                        text.append(delta.content)
                        on_text(delta.content)
                    for call in (delta.tool_calls if delta is not None else None) or ():
                        slot = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                        slot["id"] = call.id or slot["id"]
                        if call.function is not None:
                            slot["name"] = call.function.name or slot["name"]
                            slot["arguments"] += call.function.arguments or ""
                    finish = choice.finish_reason or finish
        except openai.APIError as exc:
            raise provider_error(openai, exc, WORDING, self.base_url, lambda e: str(e.message)) from exc
        content: list[dict[str, Any]] = []
        if text:
            content.append({"type": "text", "text": "".join(text)})
        for index in sorted(calls):
            slot = calls[index]
            arguments = _arguments(slot["arguments"])
            if self.strict:
                arguments = restore_strict_arguments(slot["name"], arguments, request.tools)
            content.append(
                {"type": "tool_use", "id": slot["id"] or f"call_{index}", "name": slot["name"], "input": arguments}
            )
        stop = {"tool_calls": "tool_use", "stop": "end_turn", "length": "max_tokens"}.get(finish or "", finish)
        return ModelResponse(content, stop, usage)


def _arguments(raw: str) -> dict[str, Any]:
    """Parsed tool arguments; unparsable text is kept under one key so validation reports it."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return {"_unparsed_arguments": raw}
    return value if isinstance(value, dict) else {"_unparsed_arguments": raw}


def _usage(u: Any) -> Usage:
    details = getattr(u, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", None) or 0) if details is not None else 0
    prompt = u.prompt_tokens or 0
    return Usage(input_tokens=max(prompt - cached, 0), output_tokens=u.completion_tokens or 0, cache_read_tokens=cached)


def _detect(setup: ProviderSetup) -> bool:
    env = setup.env
    return bool(env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL") or setup.settings.get("provider.baseUrl"))


def _create(setup: ProviderSetup) -> OpenAIProvider:
    base_url = setup.base_url("OPENAI_BASE_URL")
    key = setup.env.get("OPENAI_API_KEY")
    if not key and not base_url:
        raise ProviderConfigError(
            "provider openai needs OPENAI_API_KEY, or --base-url for a "
            "local OpenAI-compatible server that needs no key."
        )
    return OpenAIProvider(
        key,
        setup.model,
        base_url,
        max_retries=setup.max_retries,
        strict=bool(setup.settings.get("provider.openaiStrict")),
    )


#: ``auto`` picks OpenAI(-compatible) when an OpenAI key or base URL is set (or ``provider.baseUrl``).
PROVIDER = ProviderSpec(create=_create, detect=_detect)
