"""What ``toolscout serve`` passes through from its upstream servers (issue 26 items 0 and 1):
prompts (served as ``<server>__<prompt>``), resources and resource templates (URIs kept, colliding
ones prefixed), completion routed to the owning server, subscriptions with
``notifications/resources/updated``, list changes, permission rules applied to all of it; and
results and tool definitions exactly as the server sent them (annotations, ``_meta``, resource
link fields, ``title``, ``$schema``, ``outputSchema``), task-required tools shown as not callable.

Two copies of the ``library`` fixture server (``lib`` and ``shelf``) share a prompt name and a
resource URI; each writes down what it received, and the tests assert on that and on what the
real SDK client saw.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from serve_helpers import WAIT_S, Inbox, fixture_entry, stdio_gateway, text_of, write_config, write_user_settings

from fixtures.servers.library import IMPOSTOR_URI, LINK, OUTPUT_SCHEMA, TEXT_ANNOTATIONS, TYPED_SCHEMA


def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The config with ``lib`` and ``shelf``, and each one's log of what it received."""
    lib, shelf = tmp_path / "lib.jsonl", tmp_path / "shelf.jsonl"
    servers = {"lib": fixture_entry("library", "lib", str(lib)), "shelf": fixture_entry("library", "shelf", str(shelf))}
    return write_config(tmp_path, servers), lib, shelf


def received(log: Path, what: str | None = None) -> list[dict[str, Any]]:
    """What the upstream wrote down (only requests of kind ``what`` when given)."""
    lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return [entry for entry in lines if what is None or entry["got"] == what]


async def test_prompts_are_served_per_server_and_get_reaches_the_owner(tmp_path):
    cfg, lib, shelf = setup(tmp_path)
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg)) as client:
        caps = client.session.server_capabilities
        prompts = (await client.list_prompts()).prompts
        got = await client.get_prompt("shelf__greet", {"who": "Ada"})
        with pytest.raises(MCPError) as ambiguous:
            await client.get_prompt("greet", {"who": "Bo"})
        with pytest.raises(MCPError) as unknown:
            await client.get_prompt("nope")
    assert caps.prompts is not None and caps.prompts.list_changed is True
    assert [p.name for p in prompts] == ["lib__greet", "shelf__greet"]
    first = prompts[0]
    assert first.title == "Greeting" and first.arguments[0].name == "who" and first.arguments[0].required
    assert first.meta == {"lib/prompt": "lib", "toolscout/server": "lib"}
    # the owner got the prompt by its own name, with the arguments as given; the other got nothing
    assert received(shelf, "prompts/get") == [{"got": "prompts/get", "name": "greet", "arguments": {"who": "Ada"}}]
    assert received(lib, "prompts/get") == []
    message = got.messages[0].content
    assert (
        message.text == "Hello Ada from shelf" and message.annotations.model_dump(exclude_none=True) == TEXT_ANNOTATIONS
    )
    assert got.meta == {"lib/prompt-result": True} and got.description == "greeting from shelf"
    assert "lib__greet, shelf__greet" in ambiguous.value.error.message
    assert "Unknown prompt 'nope'" in unknown.value.error.message


async def test_a_prompt_by_its_upstream_name_when_one_server_has_it(tmp_path):
    log = tmp_path / "lib.jsonl"
    cfg = write_config(tmp_path, {"lib": fixture_entry("library", "lib", str(log))})
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg)) as client:
        got = await client.get_prompt("greet", {"who": "Cy"})
    assert got.messages[0].content.text == "Hello Cy from lib"
    assert received(log, "prompts/get") == [{"got": "prompts/get", "name": "greet", "arguments": {"who": "Cy"}}]


async def test_resources_and_templates_are_served_with_colliding_uris_apart(tmp_path):
    cfg, lib, shelf = setup(tmp_path)
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg)) as client:
        caps = client.session.server_capabilities
        listed = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        theirs = next(r for r in listed if r.meta and r.meta.get("toolscout/server") == "shelf" and r.name == "readme")
        from_shelf = await client.read_resource(theirs.uri)
        from_lib = await client.read_resource("lib://readme")
        item = await client.read_resource("shelf://items/7")
        with pytest.raises(MCPError) as unknown:
            await client.read_resource("elsewhere://x")
    assert caps.resources is not None and caps.resources.subscribe is True and caps.resources.list_changed is True
    uris = [str(r.uri) for r in listed]
    assert uris[:2] == ["toolscout://catalog", "toolscout://context"]
    # lib (first in the config) keeps lib://readme; shelf's copy of that URI is served under its name
    assert uris[2:] == ["lib://readme", "lib://notes", "toolscout://upstream/shelf/lib%3A%2F%2Freadme", "shelf://notes"]
    readme = listed[2]
    assert readme.title == "Readme" and readme.size == 42 and readme.meta == {"toolscout/server": "lib"}
    assert [(t.uri_template, t.meta["toolscout/server"]) for t in templates] == [
        ("lib://items/{id}", "lib"),
        ("shelf://items/{id}", "shelf"),
    ]
    assert from_shelf.contents[0].text == "shelf has lib://readme" and from_shelf.contents[0].meta == {
        "lib/read": "shelf"
    }
    assert from_lib.contents[0].text == "lib has lib://readme"
    assert item.contents[0].text == "shelf has shelf://items/7"  # routed by shelf's template
    assert received(shelf, "resources/read") == [
        {"got": "resources/read", "uri": "lib://readme"},
        {"got": "resources/read", "uri": "shelf://items/7"},
    ]
    assert received(lib, "resources/read") == [{"got": "resources/read", "uri": "lib://readme"}]
    assert "Unknown resource elsewhere://x" in unknown.value.error.message


async def test_an_upstream_uri_in_the_gateway_s_own_scheme_reads_from_the_server_that_listed_it(tmp_path):
    # mimic lists toolscout://upstream/lib/lib%3A%2F%2Freadme as its own: served as is, a read of it
    # went to lib (the server the URI names) while the listing said mimic
    lib, mimic = tmp_path / "lib.jsonl", tmp_path / "mimic.jsonl"
    servers = {"lib": fixture_entry("library", "lib", str(lib)), "mimic": fixture_entry("library", "mimic", str(mimic))}
    async with stdio_gateway(tmp_path, "--mcp-config", str(write_config(tmp_path, servers))) as client:
        listed = (await client.list_resources()).resources
        impostor = next(r for r in listed if r.name == "impostor")
        got = await client.read_resource(impostor.uri)
    assert impostor.meta == {"toolscout/server": "mimic"}
    assert got.contents[0].text == f"mimic has {IMPOSTOR_URI}"
    assert received(mimic, "resources/read") == [{"got": "resources/read", "uri": IMPOSTOR_URI}]
    assert received(lib, "resources/read") == []
    assert str(impostor.uri) == "toolscout://upstream/mimic/" + quote(IMPOSTOR_URI, safe="")


async def test_a_template_an_earlier_server_lists_too_is_served_prefixed_and_reaches_its_server(tmp_path):
    # lib and mimic both list lib://items/{id}: served twice as is, every read and completion of it
    # went to lib, so mimic's template could not be used at all
    lib, mimic = tmp_path / "lib.jsonl", tmp_path / "mimic.jsonl"
    servers = {"lib": fixture_entry("library", "lib", str(lib)), "mimic": fixture_entry("library", "mimic", str(mimic))}
    async with stdio_gateway(tmp_path, "--mcp-config", str(write_config(tmp_path, servers))) as client:
        templates = (await client.list_resource_templates()).resource_templates
        copy = next(t for t in templates if t.name == "copy")
        got = await client.read_resource(copy.uri_template.replace("{id}", "9"))  # as a client expands it
        done = await client.complete(
            types.ResourceTemplateReference(type="ref/resource", uri=copy.uri_template), {"name": "id", "value": "9"}
        )
        first = await client.read_resource("lib://items/9")
    assert copy.meta == {"toolscout/server": "mimic"}
    assert copy.uri_template == "toolscout://upstream/mimic/lib%3A%2F%2Fitems%2F{id}"
    assert got.contents[0].text == "mimic has lib://items/9" and done.completion.values == ["9-mimic"]
    assert received(mimic, "resources/read") == [{"got": "resources/read", "uri": "lib://items/9"}]
    assert [e["ref"] for e in received(mimic, "completion/complete")] == [
        {"type": "ref/resource", "uri": "lib://items/{id}"}
    ]
    assert first.contents[0].text == "lib has lib://items/9"  # the first server keeps the template as it is


async def test_completion_goes_to_the_server_owning_the_prompt_or_template(tmp_path):
    cfg, lib, shelf = setup(tmp_path)
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg)) as client:
        assert client.session.server_capabilities.completions is not None
        await client.list_prompts()
        for_prompt = await client.complete(
            types.PromptReference(type="ref/prompt", name="shelf__greet"), {"name": "who", "value": "A"}, {"lang": "en"}
        )
        for_template = await client.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="lib://items/{id}"), {"name": "id", "value": "4"}
        )
    assert for_prompt.completion.values == ["A-shelf"] and for_template.completion.values == ["4-lib"]
    assert received(shelf, "completion/complete") == [
        {
            "got": "completion/complete",
            "ref": {"type": "ref/prompt", "name": "greet"},
            "argument": {"name": "who", "value": "A"},
            "context": {"lang": "en"},
        }
    ]
    assert received(lib, "completion/complete") == [
        {
            "got": "completion/complete",
            "ref": {"type": "ref/resource", "uri": "lib://items/{id}"},
            "argument": {"name": "id", "value": "4"},
            "context": None,
        }
    ]


async def test_subscriptions_and_list_changes_are_passed_on(tmp_path):
    cfg, lib, _shelf = setup(tmp_path)
    inbox = Inbox()
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "lib", inbox=inbox) as client:
        await client.list_resources()
        await client.subscribe_resource("lib://notes")
        touched = await client.call_tool("call_tool", {"name": "mcp__lib__touch", "arguments": {}})
        updated = await inbox.wait_for(types.ResourceUpdatedNotification)
        await inbox.wait_for(types.ResourceListChangedNotification)
        await inbox.wait_for(types.PromptListChangedNotification)
        await client.unsubscribe_resource("lib://notes")
    assert text_of(touched) == "touched"
    assert str(updated.params.uri) == "lib://notes"
    assert received(lib, "resources/subscribe") == [{"got": "resources/subscribe", "uri": "lib://notes"}]
    assert received(lib, "resources/unsubscribe") == [{"got": "resources/unsubscribe", "uri": "lib://notes"}]


async def test_a_denied_server_s_prompts_and_resources_are_not_served(tmp_path):
    cfg, _lib, shelf = setup(tmp_path)
    write_user_settings({"permissions": {"deny": ["mcp__shelf__*"]}})
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg)) as client:
        prompts = [p.name for p in (await client.list_prompts()).prompts]
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        with pytest.raises(MCPError) as prompt:
            await client.get_prompt("shelf__greet", {"who": "Ada"})
        with pytest.raises(MCPError) as read:
            await client.read_resource("toolscout://upstream/shelf/shelf%3A%2F%2Fnotes")
        # shelf's template is not served: the URI goes to the one server left (lib), never to shelf
        guessed = await client.read_resource("shelf://items/1")
    assert prompts == ["lib__greet"]
    assert uris == ["toolscout://catalog", "toolscout://context", "lib://readme", "lib://notes"]
    assert templates == ["lib://items/{id}"]
    assert "Unknown prompt 'shelf__greet'" in prompt.value.error.message
    assert "mcp__shelf__*" in read.value.error.message
    assert guessed.contents[0].text == "lib has shelf://items/1"
    assert received(shelf, "prompts/get") == [] and received(shelf, "resources/read") == []


async def test_results_pass_through_with_every_field(tmp_path):
    cfg, _lib, _shelf = setup(tmp_path)
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "lib") as client:
        result = await client.call_tool("call_tool", {"name": "mcp__lib__annotated", "arguments": {}})
    assert not result.is_error
    text, link = (block.model_dump(by_alias=True, exclude_none=True, mode="json") for block in result.content)
    assert text == {
        "type": "text",
        "text": "annotated text",
        "annotations": TEXT_ANNOTATIONS,
        "_meta": {"lib/block": 1},
    }
    assert link == LINK
    assert result.meta == {"lib/result": "kept"}


@pytest.mark.parametrize("expose", ["static", "dynamic"])
async def test_tool_definitions_keep_their_fields_and_task_tools_are_not_offered(tmp_path, expose):
    cfg, lib, _shelf = setup(tmp_path)
    async with stdio_gateway(
        tmp_path, "--mcp-config", str(cfg), "--expose", expose, "--allowed-tools", "lib"
    ) as client:
        found = await client.call_tool("search_tools", {"query": "select:mcp__lib__typed,mcp__lib__long_job"})
        listed = {t.name: t for t in (await client.list_tools()).tools}
        job = await client.call_tool("call_tool", {"name": "mcp__lib__long_job", "arguments": {}})
    typed, long_job = found.structured_content["results"]
    assert typed["name"] == "mcp__lib__typed" and typed["title"] == "Typed doubler"
    assert typed["inputSchema"] == TYPED_SCHEMA  # "$schema" included: as the server sent it
    assert typed["outputSchema"] == OUTPUT_SCHEMA and typed["annotations"]["readOnlyHint"] is True
    assert "callable" not in typed
    assert long_job["execution"] == {"taskSupport": "required"} and long_job["callable"] is False
    assert "MCP task" in long_job["notCallable"]
    assert job.is_error and "MCP task" in text_of(job)
    assert received(lib, "tools/call") == []  # refused before anything was sent
    if expose == "dynamic":
        served = listed["lib__typed"]
        assert served.title == "Typed doubler" and served.output_schema == OUTPUT_SCHEMA
        assert served.input_schema == TYPED_SCHEMA
        assert served.meta == {"lib/tool": "typed", "anthropic/alwaysLoad": True}
        assert "lib__long_job" not in listed  # never offered, then refused
    else:
        assert list(listed) == ["search_tools", "call_tool"]


async def test_a_2026_client_hears_upstream_list_changes_on_its_listen_stream(tmp_path):
    """A 2026-07-28 client (Claude Code's protocol) lists upstream prompts, and an upstream's
    prompt and resource list changes reach its ``subscriptions/listen`` stream."""
    cfg, _lib, _shelf = setup(tmp_path)
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "lib", mode="auto") as client:
        caps = client.session.server_capabilities
        prompts = [p.name for p in (await client.list_prompts()).prompts]
        async with client.listen(prompts_list_changed=True, resources_list_changed=True) as events:
            await client.call_tool("call_tool", {"name": "mcp__lib__touch", "arguments": {}})
            with anyio.fail_after(WAIT_S):
                heard = {type(await events.__anext__()).__name__ for _ in range(2)}
    assert caps.prompts.list_changed is True and caps.resources.list_changed is True
    assert caps.resources.subscribe is False  # resources/subscribe is not on the 2026-07-28 wire
    assert prompts == ["lib__greet", "shelf__greet"]
    assert heard == {"PromptsListChanged", "ResourcesListChanged"}
