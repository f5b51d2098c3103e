"""Which sessions defer natively (provider-native tool search), and which endpoints refused it.

The one capability table (:func:`supports_native`), the ``toolSearch.native`` choice
(:func:`choose`) and the per-base-URL memory of refusals (``<user cache dir>/toolscout/
native-refusals.json``). Kept below the session so ``toolscout context`` and the usage panel can
say which path a session uses and why; how the native path works is :mod:`toolscout.core.session.native`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..dirs import cache_dir
from ..safe_read import read_text

#: Anthropic models that support tool search (the docs' model table: 4.5-class and later).
_ANTHROPIC_NATIVE = re.compile(
    r"claude-(?:(?:opus|sonnet|haiku)-(?:4-[5-9]|[5-9])|fable-|mythos-|sonnet-5|opus-5|haiku-5)"
)
#: OpenAI models with the Responses API's tool_search (the guide: gpt-5.4 and later).
_OPENAI_NATIVE = re.compile(r"^gpt-(?:5\.(?:[4-9]|\d\d)|[6-9])")
REFUSALS_FILE = "native-refusals.json"


@dataclass(frozen=True)
class NativeChoice:
    """Whether a session defers natively, and why (one line for ``context``, the panel, the welcome)."""

    native: bool
    reason: str


def supports_native(provider: str, model: str | None) -> bool:
    """True when ``provider``'s API and ``model`` are known to support native deferral.

    The one capability table: Anthropic models of the 4.5 generation and later (the API docs'
    model compatibility list; Opus 4.1 and earlier do not); OpenAI models from gpt-5.4 on (the
    Responses API's ``tool_search`` guide).
    """
    if not model:
        return False
    if provider == "anthropic":
        return bool(_ANTHROPIC_NATIVE.search(model))
    return provider == "openai" and bool(_OPENAI_NATIVE.search(model))


def choose(setting: str, provider: str, model: str | None, base_url: str | None) -> NativeChoice:
    """The session's path for ``toolSearch.native`` = ``setting`` (``auto`` | ``on`` | ``off``).

    ``on`` still needs a provider whose wire format has the native fields (Anthropic); an
    endpoint remembered as refusing them (:func:`refused_by`) takes the portable path.
    """
    if setting == "off":
        return NativeChoice(False, "native tool search off (toolSearch.native = off): ToolSearch + ExecuteTool")
    if provider not in ("anthropic", "openai"):
        return NativeChoice(False, f"{provider}: portable path (ToolSearch + ExecuteTool)")
    if provider == "openai" and setting == "auto" and base_url and "api.openai.com" not in base_url:
        return NativeChoice(
            False,
            f"{base_url}: an OpenAI-compatible endpoint: Chat Completions, the portable path "
            "(toolSearch.native = on tries the Responses API's tool_search)",
        )
    refusal = refused_by(base_url)
    if refusal:
        return NativeChoice(False, f"{base_url} refused native tool search before ({refusal}): portable path")
    how = "defer_loading + tool_reference" if provider == "anthropic" else "the Responses API's tool_search"
    if setting == "on":
        return NativeChoice(True, f"native tool search on (toolSearch.native = on): {how}")
    if supports_native(provider, model):
        return NativeChoice(True, f"native tool search: {model} supports {how}")
    return NativeChoice(False, f"{model or 'this model'} is not known to support native tool search: portable path")


def _refusals() -> dict[str, str]:
    folder = cache_dir()
    if folder is None:
        return {}
    try:
        text = read_text(folder / REFUSALS_FILE, max_bytes=1 << 20)
    except (OSError, ValueError):
        return {}
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def refused_by(base_url: str | None) -> str | None:
    """What ``base_url`` (None: the provider's own API) said when it refused native fields, if it did."""
    return _refusals().get(base_url or "default")


def remember_refusal(base_url: str | None, message: str) -> None:
    """Record that ``base_url`` refuses native fields (atomic write; no cache dir: not kept)."""
    folder = cache_dir()
    if folder is None:
        return
    data = _refusals()
    data[base_url or "default"] = message[:200]
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{REFUSALS_FILE}.tmp"
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    tmp.replace(folder / REFUSALS_FILE)
