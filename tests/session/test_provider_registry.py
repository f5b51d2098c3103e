"""A provider is one module and one registration (core/settings/provider_registry.py): a throwaway
provider defined in this test, registered by name, is accepted wherever a provider is named (a
settings file, ``TOOLSCOUT_PROVIDER``, ``--provider``, the settings screen's choices), is picked
by ``auto`` when its key is set, and runs a real headless conversation and ``toolscout request``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from toolscout.cli import build_parser, run
from toolscout.core.session.providers import create_provider
from toolscout.core.session.providers.base import (
    ModelRequest,
    ModelResponse,
    ProviderConfigError,
    ProviderSetup,
    ProviderSpec,
    Usage,
)
from toolscout.core.settings.layers import KEYS_BY_NAME, Settings, SettingsPaths, load_settings
from toolscout.core.settings.provider_registry import (
    provider_names,
    register_provider,
    unregister_provider,
)
from toolscout.tui.screens.settings import editor_kind

NAME = "echo"


class EchoProvider:
    """A model that answers every turn with what it was sent: how many tools, and the person's
    last words."""

    name = NAME

    base_url: str | None = None

    def __init__(self, model: str | None) -> None:
        self.model = model or "echo-1"

    def body(self, request: ModelRequest) -> dict[str, Any]:
        return {
            "echo_model": request.model or self.model,
            "tool_names": [t["name"] for t in request.tools],
            "turns": len(request.messages),
        }

    async def complete(self, request: ModelRequest, on_text: Callable[[str], None]) -> ModelResponse:
        said = [b["text"] for b in request.messages[-1]["content"] if b.get("type") == "text"][-1]
        text = f"echo ({len(request.tools)} tools): {said}"
        on_text(text)
        return ModelResponse([{"type": "text", "text": text}], "end_turn", Usage(input_tokens=1, output_tokens=1))


def _create(setup: ProviderSetup) -> EchoProvider:
    if not setup.env.get("ECHO_TOKEN"):
        raise ProviderConfigError("provider echo needs ECHO_TOKEN to be set")
    return EchoProvider(setup.model)


#: This module is the provider's module: ``create_provider`` imports it by name and reads this.
PROVIDER = ProviderSpec(create=_create, detect=lambda setup: bool(setup.env.get("ECHO_TOKEN")))


@pytest.fixture
def echo() -> Iterator[str]:
    """The throwaway provider, registered for one test."""
    register_provider(NAME, __name__)
    try:
        yield NAME
    finally:
        unregister_provider(NAME)


def test_a_registered_provider_is_a_valid_setting_everywhere(echo: str, tmp_path: Any) -> None:
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"provider": {"name": echo}}))
    paths = SettingsPaths(user=user, project=None, project_local=None, managed=None)
    from_file = load_settings(paths, env={})
    assert from_file["provider.name"] == echo and from_file.warnings == []
    from_env = load_settings(SettingsPaths(None, None, None, None), env={"TOOLSCOUT_PROVIDER": "ECHO"})
    assert from_env["provider.name"] == echo and from_env.sources["provider.name"] == "env:TOOLSCOUT_PROVIDER"
    assert provider_names()[-1] == echo
    assert KEYS_BY_NAME["provider.name"].choices[-1] == echo  # the settings screen's select lists it
    assert editor_kind("provider.name") == "select"
    assert build_parser().parse_args(["--provider", echo]).provider == echo

    unregister_provider(echo)  # and without the registration, the same file is refused
    refused = load_settings(paths, env={})
    assert refused["provider.name"] == "auto"
    assert [str(w).split(": ", 1)[1] for w in refused.warnings] == [
        'provider.name = "echo": expected one of auto, anthropic, openai, offline; using the default'
    ]


def test_a_registered_provider_is_built_by_name_and_by_auto(echo: str) -> None:
    chosen = Settings().with_overrides({"provider.name": echo, "provider.model": "echo-2"})
    provider = create_provider(chosen, {"ECHO_TOKEN": "t"})
    assert isinstance(provider, EchoProvider) and provider.model == "echo-2"
    with pytest.raises(ProviderConfigError, match="needs ECHO_TOKEN"):
        create_provider(chosen, {})
    assert isinstance(create_provider(Settings(), {"ECHO_TOKEN": "t"}), EchoProvider)  # auto
    assert create_provider(Settings(), {"ECHO_TOKEN": "t", "ANTHROPIC_API_KEY": "k"}).name == "anthropic"  # asked first
    assert create_provider(Settings(), {}).name == "offline"


def test_a_registered_provider_runs_a_headless_conversation(
    echo: str, capsys: Any, monkeypatch: Any, tmp_path: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ECHO_TOKEN", "t")
    code = run(["-p", "hello there", "--provider", echo, "--output-format", "json", "--no-default-servers"])
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    assert data["provider"] == echo and data["model"] == "echo-1"
    assert data["result"].startswith("echo (") and data["result"].endswith("tools): hello there")

    catalog = tmp_path / "weather.json"
    catalog.write_text(
        json.dumps(
            {
                "server": "weather",
                "tools": [
                    {
                        "name": "get_forecast",
                        "description": "Get the weather forecast for a city.",
                        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
                    }
                ],
            }
        )
    )
    assert run(["--provider", echo, "request", "--catalog", str(catalog), "--json"]) == 0
    body = json.loads(capsys.readouterr().out)  # the wire body is the provider's own
    assert body["echo_model"] == "echo-1" and body["turns"] == 1
    assert "mcp__weather__get_forecast" in body["tool_names"]


def test_a_provider_name_must_be_new_and_a_lower_case_word() -> None:
    for bad in ("anthropic", "auto", "Echo", "two words", "", "ünï"):
        with pytest.raises(ValueError, match="provider"):
            register_provider(bad, __name__)
    assert provider_names() == ("anthropic", "openai", "offline")
