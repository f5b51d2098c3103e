"""An upstream server's question during a call (``elicitation/create``) through ``toolscout
serve``: forwarded to the gateway's client when it declared elicitation, its answer returned
upstream; refused clearly otherwise. The upstream server writes down what it received
(``asking.py``); the client is the real SDK client over stdio (and streamable HTTP)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from serve_helpers import (
    fixture_entry,
    http_client,
    http_gateway,
    stdio_gateway,
    text_of,
    write_config,
    write_user_settings,
)

BOOK = {"name": "mcp__travel__book", "arguments": {"flight": "LH 400"}}


def setup(tmp_path: Path) -> tuple[list[str], Path]:
    log = tmp_path / "answers.jsonl"
    cfg = write_config(tmp_path, {"travel": fixture_entry("asking", "travel", str(log))})
    return ["--mcp-config", str(cfg), "--allowed-tools", "mcp__travel"], log


def received(log: Path) -> list[dict[str, Any]]:
    """What the upstream server received as answers, in order."""
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


class Person:
    """An elicitation callback answering ``action`` with ``content``, recording each question."""

    def __init__(self, action: str = "accept", content: dict[str, Any] | None = None) -> None:
        self.action, self.content = action, content
        self.questions: list[types.ElicitRequestParams] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.questions.append(params)
        return types.ElicitResult(action=self.action, content=self.content if self.action == "accept" else None)


async def test_the_upstream_question_reaches_the_client_and_its_answer_the_server(tmp_path):
    args, log = setup(tmp_path)
    person = Person("accept", {"seat": "12A", "window": True})
    async with stdio_gateway(tmp_path, *args, elicit=person) as client:
        result = await client.call_tool("call_tool", BOOK)
    assert not result.is_error, text_of(result)
    assert text_of(result) == "booked 12A on LH 400"
    assert received(log) == [{"action": "accept", "data": {"seat": "12A", "window": True}}]
    [question] = person.questions
    # the server's own question and form, said to come from that server (not from toolscout)
    assert "Which seat on flight LH 400?" in question.message and "travel" in question.message
    assert set(question.requested_schema["properties"]) == {"seat", "window"}


async def test_a_declined_question_is_declined_upstream(tmp_path):
    args, log = setup(tmp_path)
    person = Person("decline")
    async with stdio_gateway(tmp_path, *args, elicit=person) as client:
        result = await client.call_tool("call_tool", BOOK)
    assert text_of(result) == "not booked (decline)"
    assert received(log) == [{"action": "decline", "data": None}]
    assert len(person.questions) == 1


async def test_a_client_without_elicitation_is_not_asked_and_the_server_told_why(tmp_path):
    args, log = setup(tmp_path)
    async with stdio_gateway(tmp_path, *args) as client:
        result = await client.call_tool("call_tool", BOOK)
    assert result.is_error
    [entry] = received(log)
    assert "did not declare the elicitation capability" in entry["error"], entry
    assert "did not declare the elicitation capability" in text_of(result), text_of(result)


async def test_a_2026_client_is_not_asked_mid_call(tmp_path):
    """A 2026-07-28 connection has no server-to-client requests, and a question in the middle
    of an upstream call cannot travel as an InputRequiredResult: refused, saying so."""
    args, log = setup(tmp_path)
    person = Person("accept", {"seat": "1A"})
    async with stdio_gateway(tmp_path, *args, elicit=person, mode="auto") as client:
        version = client.session.protocol_version
        result = await client.call_tool("call_tool", BOOK)
    assert version.startswith("2026-")
    assert result.is_error and person.questions == []
    [entry] = received(log)
    assert "2026-07-28" in entry["error"], entry


async def test_over_http_the_question_goes_to_the_client_of_the_call(tmp_path):
    args, log = setup(tmp_path)
    person = Person("accept", {"seat": "3C"})
    async with http_gateway(tmp_path, *args) as gateway, http_client(gateway.url, elicit=person) as client:
        result = await client.call_tool("call_tool", BOOK)
    assert text_of(result) == "booked 3C on LH 400", text_of(result)
    assert received(log) == [{"action": "accept", "data": {"seat": "3C", "window": False}}]


async def test_waiting_for_the_answer_does_not_count_against_the_call_timeout(tmp_path):
    """``mcp.callTimeout`` bounds the server, not the person: an answer that takes longer than
    the whole timeout still reaches the server, and the call completes."""
    args, log = setup(tmp_path)
    write_user_settings({"mcp": {"callTimeout": 0.5}})
    answered = Person("accept", {"seat": "7F"})

    async def slow_person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        await anyio.sleep(1.5)  # reading the form for three times the call timeout
        return await answered(context, params)

    async with stdio_gateway(tmp_path, *args, elicit=slow_person) as client:
        result = await client.call_tool("call_tool", BOOK)
    assert text_of(result) == "booked 7F on LH 400", text_of(result)
    assert received(log) == [{"action": "accept", "data": {"seat": "7F", "window": False}}]


async def test_a_question_is_never_shown_to_another_client(tmp_path):
    """Two HTTP clients of one gateway call the same server at once: MCP does not say which call
    a question belongs to, so while both calls are in flight a question is refused rather than
    shown to the wrong person; the question asked before the second call goes to the first."""
    args, log = setup(tmp_path)
    second_result: list[types.CallToolResult] = []
    second_asked: list[str] = []

    async def second_person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        second_asked.append(params.message)
        return types.ElicitResult(action="accept", content={"seat": "99Z"})

    async with http_gateway(tmp_path, *args) as gateway:

        async def first_person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            async with http_client(gateway.url, elicit=second_person) as other:
                second_result.append(await other.call_tool("call_tool", BOOK))  # while this question waits
            return types.ElicitResult(action="accept", content={"seat": "1A"})

        async with http_client(gateway.url, elicit=first_person) as client:
            first = await client.call_tool("call_tool", BOOK)
    assert text_of(first) == "booked 1A on LH 400", text_of(first)
    assert second_asked == [] and second_result[0].is_error
    refused, accepted = received(log)
    assert "several clients" in refused["error"], refused
    assert accepted == {"action": "accept", "data": {"seat": "1A", "window": False}}
