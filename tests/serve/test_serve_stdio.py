"""``toolscout serve`` over stdio, driven by the real ``mcp`` client: the fixed tool list, search,
calls passed through, bad arguments, upstream failures and late connects, dynamic exposure."""

from __future__ import annotations

import json
import os
import signal
import sys

import mcp_types as types
from serve_helpers import (
    Inbox,
    fixture_entry,
    process_gone,
    stdio_gateway,
    text_of,
    time_entry,
    wait_until,
    write_config,
)

PIXEL_PREFIX = "iVBORw0KGgo"


def base_config(tmp_path, *, with_time: bool = True, **extra):
    """The fixture server ``normal``, the real ``mcp-server-time`` (left out where a test does not
    use it: each upstream process costs about a second of CPU at start) and ``extra`` entries."""
    time = {"time": time_entry()} if with_time else {}
    return write_config(tmp_path, {"normal": fixture_entry("normal", "normal"), **time, **extra})


async def test_fixed_tool_list_search_and_context_resources(tmp_path):
    """One gateway over the base config (read-only requests, so one process serves them all):
    the fixed, byte-stable tool list naming the upstream tools (listed once the servers are up:
    reading a resource waits for them, ``tools/list`` does not); search answers with canonical
    names, server, score and schema; the catalog/context resources report what it saves. The
    gateway ranks with the default profile (the other gateways here use bm25f)."""
    cfg = base_config(tmp_path)
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), ranker=None) as client:
        catalog = json.loads((await client.read_resource("toolscout://catalog")).contents[0].text)
        listed = await client.list_tools()
        again = await client.list_tools()
        caps = client.session.server_capabilities
        found = await client.call_tool("search_tools", {"query": "current time in a timezone"})
        selected = await client.call_tool("search_tools", {"query": "select:mcp__normal__echo"})
        names = [str(r.uri) for r in (await client.list_resources()).resources]
        report = json.loads((await client.read_resource("toolscout://context")).contents[0].text)
    # the fixed tool list, sent inline by Claude Code (not deferred behind its own tool search)
    assert [t.name for t in listed.tools] == ["search_tools", "call_tool"]
    assert all(t.meta == {"anthropic/alwaysLoad": True} for t in listed.tools)
    search = listed.tools[0]
    assert "mcp__normal__: add echo explode pid rich stall" in search.description
    assert "mcp__time__: convert_time get_current_time" in search.description
    assert search.input_schema["required"] == ["query"]
    # byte-stable for the client's prompt cache
    assert [t.model_dump() for t in again.tools] == [t.model_dump() for t in listed.tools]
    assert caps.tools.list_changed is False
    # search: canonical name, server, score and schema
    assert not found.is_error
    best = found.structured_content["results"][0]
    assert best["name"] == "mcp__time__get_current_time" and best["server"] == "time"
    assert 0 < best["score"] <= 1 and "timezone" in best["inputSchema"]["properties"]
    assert json.loads(text_of(found)) == found.structured_content  # same answer for text-only clients
    echo = selected.structured_content["results"][0]
    assert echo["name"] == "mcp__normal__echo" and echo["inputSchema"]["required"] == ["text"]
    assert selected.structured_content["instructions"] == {"normal": "The normal server: use echo to repeat text."}
    # the context resource: what the gateway saves
    assert names == [
        "toolscout://catalog",
        "toolscout://context",
        "res://readme",
    ]  # the gateway's own, then the upstream's
    servers = {row["server"]: row for row in report["servers"]}
    assert set(servers) == {"normal", "time"} and servers["normal"]["tools"] == 6
    assert report["gateway"]["served_tokens"] > 0 and report["gateway"]["upstream_tokens"] > 0
    assert {t["name"] for t in catalog["tools"]} >= {"mcp__normal__echo", "mcp__time__convert_time"}
    assert all(t["state"] == "deferred" and t["tokens"] > 0 for t in catalog["tools"])


async def test_allowed_calls_pass_results_through(tmp_path):
    cfg = base_config(tmp_path)
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "normal,time") as client:
        echo = await client.call_tool("call_tool", {"name": "mcp__normal__echo", "arguments": {"text": "héllo"}})
        rich = await client.call_tool("call_tool", {"name": "mcp__normal__rich", "arguments": {}})
        failed = await client.call_tool("call_tool", {"name": "mcp__normal__explode", "arguments": {"reason": "kaput"}})
        now = await client.call_tool(
            "call_tool", {"name": "mcp__time__get_current_time", "arguments": {"timezone": "Europe/Paris"}}
        )
    assert not echo.is_error and text_of(echo) == "héllo" and echo.structured_content == {"result": "héllo"}
    kinds = [b.type for b in rich.content]
    assert kinds == ["text", "image", "resource", "resource_link"]
    assert rich.content[1].data.startswith(PIXEL_PREFIX) and rich.content[1].mime_type == "image/png"
    assert rich.content[2].resource.text == "embedded body" and str(rich.content[3].uri) == "res://readme"
    assert failed.is_error and "kaput" in text_of(failed)
    assert not now.is_error and "Europe/Paris" in text_of(now)


async def test_bad_arguments_are_refused_with_the_schema(tmp_path):
    cfg = base_config(tmp_path, with_time=False, schemas=fixture_entry("schemas"))
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "normal,schemas") as client:
        wrong = await client.call_tool("call_tool", {"name": "mcp__normal__add", "arguments": {"a": "one"}})
        big_enum = await client.call_tool(
            "call_tool", {"name": "mcp__schemas__big_enum", "arguments": {"unit": "kelvin"}}
        )
        not_json_object = await client.call_tool("call_tool", {"name": "mcp__normal__add", "arguments": [1, 2]})
        unknown = await client.call_tool("call_tool", {"name": "mcp__normal__ech", "arguments": {}})
        no_name = await client.call_tool("call_tool", {"tool": "mcp__normal__echo"})
        no_query = await client.call_tool("search_tools", {"max_results": 3})
        too_many = await client.call_tool("search_tools", {"query": "echo", "max_results": 500})
        not_served = await client.call_tool("mcp__normal__echo", {"text": "x"})
    assert wrong.is_error and "Invalid parameters for mcp__normal__add" in text_of(wrong)
    assert "'b' is a required property" in text_of(wrong) and '"integer"' in text_of(wrong)
    assert not_json_object.is_error and "must be a JSON object" in text_of(not_json_object)
    # a 5,000-value enum: a short refusal naming the field and the first allowed values
    assert big_enum.is_error and len(text_of(big_enum)) <= 2000, len(text_of(big_enum))
    assert "params.unit: 'kelvin' is not one of ['unit_0000'" in text_of(big_enum)
    assert "… and 4,995 more" in text_of(big_enum)
    assert unknown.is_error and "Did you mean: mcp__normal__echo" in text_of(unknown)
    assert "Use search_tools" in text_of(unknown)
    assert no_name.is_error and '"name"' in text_of(no_name)
    assert no_query.is_error and "query" in text_of(no_query)
    assert too_many.is_error and "1-50" in text_of(too_many)
    assert not_served.is_error and "Unknown tool 'mcp__normal__echo'" in text_of(not_served)


async def test_failing_upstream_does_not_take_the_gateway_down(tmp_path):
    cfg = base_config(tmp_path, with_time=False, broken=fixture_entry("crash"))
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "normal,broken") as client:
        call = await client.call_tool("call_tool", {"name": "mcp__broken__anything", "arguments": {}})
        echo = await client.call_tool("call_tool", {"name": "mcp__normal__echo", "arguments": {"text": "still up"}})
        catalog = json.loads((await client.read_resource("toolscout://catalog")).contents[0].text)
    assert call.is_error and "Server broken failed to start" in text_of(call)
    assert "then restart toolscout serve (tell the user)" in text_of(call)  # not "reconnect it": a client cannot
    assert text_of(echo) == "still up"
    states = {s["name"]: s["state"] for s in catalog["servers"]}
    assert states["broken"] == "failed" and states["normal"] == "connected"
    assert "FAKE_API_KEY" in next(s["error"] for s in catalog["servers"] if s["name"] == "broken")


async def test_late_server_fills_the_index_live(tmp_path):
    gate = tmp_path / "open-gate"
    cfg = base_config(
        tmp_path, with_time=False, late=fixture_entry("late", "late", "--tools", "3", "--gate", str(gate))
    )
    async with stdio_gateway(
        tmp_path, "--mcp-config", str(cfg), "--wait-servers", "0", "--allowed-tools", "late"
    ) as client:
        listed = await client.list_tools()
        before = await client.call_tool("search_tools", {"query": "select:mcp__late__op_0001"})
        gate.write_text("go")

        async def found() -> bool:
            result = await client.call_tool("search_tools", {"query": "select:mcp__late__op_0001"})
            return bool(result.structured_content["results"])

        await wait_until(found)
        ran = await client.call_tool("call_tool", {"name": "mcp__late__op_0001", "arguments": {}})
    pending = listed.tools[0].description.split("Still connecting (search finds their tools once they are up): ")[1]
    assert "late" in pending.split(", ")
    assert "late" in before.structured_content["pending_servers"] and not before.structured_content["results"]
    assert text_of(ran) == "ran op_0001"


async def test_dynamic_exposure_appends_and_announces(tmp_path):
    cfg = base_config(tmp_path)
    inbox = Inbox()
    async with stdio_gateway(
        tmp_path, "--mcp-config", str(cfg), "--expose", "dynamic", "--allowed-tools", "normal", inbox=inbox
    ) as client:
        assert client.session.server_capabilities.tools.list_changed is True
        first = [t.name for t in (await client.list_tools()).tools]
        await client.call_tool("search_tools", {"query": "select:mcp__normal__echo,mcp__normal__add"})
        await inbox.wait_for(types.ToolListChangedNotification)
        second = (await client.list_tools()).tools
        direct = await client.call_tool("normal__add", {"a": 2, "b": 40})
        by_call_tool = await client.call_tool("call_tool", {"name": "normal__echo", "arguments": {"text": "hi"}})
        await client.call_tool("search_tools", {"query": "select:mcp__time__get_current_time,mcp__normal__echo"})
        third = [t.name for t in (await client.list_tools()).tools]
    assert first == ["search_tools", "call_tool"]
    # served without the canonical mcp__ prefix: Claude Code shows mcp__toolscout__normal__echo
    assert [t.name for t in second] == [*first, "normal__echo", "normal__add"]
    assert second[3].input_schema["required"] == ["a", "b"]
    assert all(t.meta == {"anthropic/alwaysLoad": True} for t in second)
    assert text_of(direct) == "42" and text_of(by_call_tool) == "hi"
    assert third == [*[t.name for t in second], "time__get_current_time"]  # only grows, by appending


async def test_client_disconnect_ends_the_gateway_and_its_upstreams(tmp_path):
    cfg = base_config(tmp_path, with_time=False)
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "normal") as client:
        pid = int(text_of(await client.call_tool("call_tool", {"name": "mcp__normal__pid", "arguments": {}})))

    async def gone() -> bool:
        return process_gone(pid)

    await wait_until(gone)


async def test_a_crashed_upstream_is_reconnected_by_the_next_call(tmp_path):
    """The client cannot reconnect an upstream server: the gateway does, for the call that needs it."""
    cfg = base_config(tmp_path, with_time=False)
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "normal") as client:
        pid = int(text_of(await client.call_tool("call_tool", {"name": "mcp__normal__pid", "arguments": {}})))
        os.kill(pid, signal.SIGKILL)

        async def disconnected() -> bool:
            catalog = json.loads((await client.read_resource("toolscout://catalog")).contents[0].text)
            return {s["name"]: s["state"] for s in catalog["servers"]}["normal"] == "disconnected"

        await wait_until(disconnected)
        echo = await client.call_tool("call_tool", {"name": "mcp__normal__echo", "arguments": {"text": "back"}})
        again = int(text_of(await client.call_tool("call_tool", {"name": "mcp__normal__pid", "arguments": {}})))
    assert not echo.is_error, text_of(echo)
    assert text_of(echo) == "back" and again != pid


async def test_a_configured_gateway_entry_is_not_started(tmp_path):
    """The gateway listed in the config it reads (Claude Code's .mcp.json) must not start itself."""
    cfg = write_config(
        tmp_path,
        {
            "normal": fixture_entry("normal", "normal"),
            "toolscout": {"command": sys.executable, "args": ["-m", "toolscout", "serve"]},
        },
    )
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg)) as client:
        catalog = json.loads((await client.read_resource("toolscout://catalog")).contents[0].text)
    assert [s["name"] for s in catalog["servers"]] == ["normal"]
    assert "toolscout: not started: it runs toolscout serve itself" in (tmp_path / "gateway.stderr").read_text()


async def test_long_results_are_capped_with_the_full_text_as_a_resource(tmp_path):
    cfg = base_config(tmp_path, with_time=False)
    long_text = " ".join(f"word{i}" for i in range(40_000))  # ~ 100k tokens
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "normal") as client:
        capped = await client.call_tool("call_tool", {"name": "mcp__normal__echo", "arguments": {"text": long_text}})
        uri = text_of(capped).rsplit("The full result is the resource ", 1)[1].split()[0]
        full = (await client.read_resource(uri)).contents[0].text
        short = await client.call_tool("call_tool", {"name": "mcp__normal__echo", "arguments": {"text": "short"}})
    head = text_of(capped)
    assert not capped.is_error and head.startswith("word0 word1") and len(head) < len(long_text) / 2
    assert "[Result cut to 25,000 tokens" in head and capped.structured_content is None
    assert uri.startswith("toolscout://results/") and full.startswith(long_text)
    assert text_of(short) == "short" and short.structured_content == {"result": "short"}


async def test_upstream_list_changed_updates_the_index_live(tmp_path):
    cfg = write_config(tmp_path, {"dyn": fixture_entry("dynamic", "dyn")})
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "dyn") as client:
        await client.call_tool("call_tool", {"name": "mcp__dyn__add_tool", "arguments": {"name": "zebra_tagger"}})

        async def found() -> bool:
            result = await client.call_tool("search_tools", {"query": "select:mcp__dyn__zebra_tagger"})
            return bool(result.structured_content["results"])

        await wait_until(found)
        ran = await client.call_tool("call_tool", {"name": "mcp__dyn__zebra_tagger", "arguments": {"text": "x"}})
        await client.call_tool("call_tool", {"name": "mcp__dyn__remove_tool", "arguments": {"name": "zebra_tagger"}})

        async def gone() -> bool:
            return not await found()

        await wait_until(gone)
        after = await client.call_tool("call_tool", {"name": "mcp__dyn__zebra_tagger", "arguments": {"text": "x"}})
    assert text_of(ran) == "zebra_tagger:x"
    assert after.is_error and "Unknown tool" in text_of(after)
