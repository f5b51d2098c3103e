"""Permission rules through ``toolscout serve``: deny wins, ask goes through MCP elicitation when
the client supports it and is refused (naming the rule to add) when it does not. Every test
checks what the upstream server actually ran (its call log)."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
from serve_helpers import fixture_entry, stdio_gateway, text_of, write_config, write_user_settings


def setup(tmp_path: Path) -> tuple[Path, Path]:
    log = tmp_path / "calls.log"
    cfg = write_config(tmp_path, {"notes": fixture_entry("notes", "notes", str(log))})
    write_user_settings({"permissions": {"deny": ["mcp__notes__delete_note"]}})
    return cfg, log


def ran(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


class Person:
    """An elicitation callback answering like a person would, recording each question."""

    def __init__(self, action: str = "accept", remember: bool = False) -> None:
        self.action, self.remember = action, remember
        self.questions: list[str] = []

    async def __call__(self, context, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.questions.append(params.message)
        content = {"remember": self.remember} if self.action == "accept" else None
        return types.ElicitResult(action=self.action, content=content)


WRITE = {"name": "mcp__notes__write_note", "arguments": {"text": "buy milk"}}


async def test_deny_wins_even_when_the_person_would_accept(tmp_path):
    cfg, log = setup(tmp_path)
    person = Person("accept")
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "notes", elicit=person) as client:
        denied = await client.call_tool("call_tool", {"name": "mcp__notes__delete_note", "arguments": {"title": "x"}})
        search = await client.call_tool("search_tools", {"query": "delete a note"})
        listed = await client.list_tools()
    assert denied.is_error and "deny rule 'mcp__notes__delete_note'" in text_of(denied)
    assert "mcp__notes__delete_note" not in [r["name"] for r in search.structured_content["results"]]
    assert "delete_note" not in listed.tools[0].description
    assert person.questions == [] and ran(log) == []


async def test_ask_without_elicitation_is_refused_naming_the_rule(tmp_path):
    cfg, log = setup(tmp_path)
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg)) as client:
        refused = await client.call_tool("call_tool", WRITE)
    message = text_of(refused)
    assert refused.is_error and "mcp__notes__write_note needs permission" in message
    assert '"mcp__notes__write_note"' in message and "permissions.allow" in message
    assert ran(log) == []


async def test_ask_with_elicitation_runs_only_when_the_person_accepts(tmp_path):
    cfg, log = setup(tmp_path)
    person = Person("accept")
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), elicit=person) as client:
        first = await client.call_tool("call_tool", WRITE)
        second = await client.call_tool("call_tool", WRITE)
    assert text_of(first) == text_of(second) == "noted: buy milk"
    assert len(person.questions) == 2  # "once" means once
    assert "mcp__notes__write_note" in person.questions[0] and '{"text":"buy milk"}' in person.questions[0]
    assert ran(log) == ['write_note {"text": "buy milk"}'] * 2


async def test_declined_question_runs_nothing(tmp_path):
    cfg, log = setup(tmp_path)
    for action in ("decline", "cancel"):
        person = Person(action)
        async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), elicit=person) as client:
            refused = await client.call_tool("call_tool", WRITE)
        assert refused.is_error and "The user denied permission to run mcp__notes__write_note" in text_of(refused)
        assert len(person.questions) == 1
    assert ran(log) == []


async def test_remembered_answer_lasts_for_the_client_session_only(tmp_path):
    cfg, log = setup(tmp_path)
    person = Person("accept", remember=True)
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), elicit=person) as client:
        for _ in range(3):
            await client.call_tool("call_tool", WRITE)
    assert len(person.questions) == 1 and len(ran(log)) == 3
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), elicit=person) as client:
        await client.call_tool("call_tool", WRITE)
    assert len(person.questions) == 2 and len(ran(log)) == 4


async def test_ask_rule_beats_an_allow(tmp_path):
    cfg, log = setup(tmp_path)
    write_user_settings({"permissions": {"ask": ["mcp__notes__write_note"]}})
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "notes") as client:
        refused = await client.call_tool("call_tool", WRITE)
    assert refused.is_error and "'mcp__notes__write_note' in permissions.ask" in text_of(refused)
    assert ran(log) == []


async def test_2026_clients_are_asked_with_input_required_results(tmp_path):
    """A 2026-07-28 connection has no server-to-client requests: the question travels as an
    ``InputRequiredResult`` and the client retries the call with the answer."""
    cfg, log = setup(tmp_path)
    person = Person("accept")
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), elicit=person, mode="auto") as client:
        version = client.session.protocol_version
        done = await client.call_tool("call_tool", WRITE)
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), mode="auto") as client:
        refused = await client.call_tool("call_tool", WRITE)
    assert version.startswith("2026-")
    assert text_of(done) == "noted: buy milk" and len(person.questions) == 1
    assert refused.is_error and "permissions.allow" in text_of(refused)
    assert ran(log) == ['write_note {"text": "buy milk"}']
