"""``toolscout mcp list`` and ``toolscout call`` against real stdio fixture servers."""

from __future__ import annotations

import json
import sys

import pytest
from mcp_helpers import server_args, server_path

from toolscout.cli import run
from toolscout.cli.call_cmd import result_json
from toolscout.cli.mcp_cmd import format_statuses
from toolscout.core.models import ContentBlock, ToolResult


def config(tmp_path, *names: str) -> str:
    entries = {
        "normal": {"command": sys.executable, "args": server_args(server_path("normal"))},
        "crash": {"command": sys.executable, "args": server_args(server_path("crash"))},
        "schemas": {"command": sys.executable, "args": server_args(server_path("schemas"))},
        "odd": {"type": "carrier-pigeon"},
    }
    path = tmp_path / f"servers-{'-'.join(names)}.json"
    path.write_text(json.dumps({"mcpServers": {n: entries[n] for n in names}}))
    return str(path)


def test_mcp_list_json_and_table(tmp_path, capsys, outside_cwd):
    assert run(["mcp", "list", "--json", "--mcp-config", config(tmp_path, "normal")]) == 0
    assert json.loads(capsys.readouterr().out)["servers"][0]["state"] == "connected"
    cfg = config(tmp_path, "normal", "crash", "odd")
    assert run(["mcp", "list", "--json", "--mcp-config", cfg]) == 1  # a server failed: exit 1, all shown
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["servers"]}
    assert rows["normal"]["state"] == "connected" and rows["normal"]["tool_count"] == 6
    assert rows["normal"]["has_instructions"] and rows["normal"]["has_resources"]
    assert rows["normal"]["source"] == cfg
    assert rows["crash"]["state"] == "failed" and "FAKE_API_KEY" in rows["crash"]["error"]
    assert rows["odd"]["state"] == "failed" and "unknown type" in rows["odd"]["error"]
    table = format_statuses(list(rows.values()))
    assert "connected" in table and "! " in table and table.splitlines()[0].startswith("SERVER")

    assert run(["mcp", "list", "--mcp-config", config(tmp_path, "odd")]) == 1
    out = capsys.readouterr()
    assert "odd" in out.out and "failed" in out.out
    assert "odd" in out.err  # the invalid entry is also a warning


def test_call_headless_denies_then_allows(tmp_path, capsys, outside_cwd):
    cfg = config(tmp_path, "normal")
    assert run(["call", "mcp__normal__echo", "--params", '{"text": "hi"}', "--mcp-config", cfg]) == 1
    err = capsys.readouterr().err
    assert "needs permission" in err and "--allowed-tools mcp__normal__echo" in err

    assert (
        run(
            [
                "call",
                "mcp__normal__echo",
                "--params",
                '{"text": "hi"}',
                "--mcp-config",
                cfg,
                "--allowed-tools",
                "normal",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.strip() == "hi"

    assert run(["call", "mcp__normal__ecko", "--mcp-config", cfg, "--allowed-tools", "normal"]) == 1
    err = capsys.readouterr().err  # the model's ToolSearch is not something a person can run here
    assert "Did you mean: mcp__normal__echo," in err and 'toolscout search "' in err and "ToolSearch" not in err

    assert run(["call", "mcp__normal__add", "--params", "{nope", "--mcp-config", cfg]) == 2
    assert run(["call", "mcp__crash__anything", "--mcp-config", config(tmp_path, "crash"), "--json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["error_kind"] == "server_failed" and "FAKE_API_KEY" in payload["content"][0]["text"]


def test_call_with_a_bad_enum_value_prints_a_short_refusal(tmp_path, capsys, outside_cwd):
    cfg = config(tmp_path, "schemas")
    call = [
        "call",
        "mcp__schemas__big_enum",
        "--params",
        '{"unit": "kelvin"}',
        "--mcp-config",
        cfg,
        "--allowed-tools",
        "schemas",
    ]
    assert run(call) == 1
    err = capsys.readouterr().err
    refusal = err[err.index("toolscout: Invalid parameters") :].split("\nwarning:")[0]  # warnings follow
    assert len(refusal) <= 2000, len(refusal)
    assert "params.unit: 'kelvin' is not one of ['unit_0000'" in refusal and "… and 4,995 more]" in refusal
    assert run([*call, "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["error_kind"] == "invalid_params" and len(result["content"][0]["text"]) <= 2000


def test_call_json_prints_the_result_exactly_as_the_server_sent_it(tmp_path, capsys, outside_cwd):
    """``toolscout call --json``: every field of every block (annotations, ``_meta``, a resource
    link's title, description and size) and the result's ``_meta``, as the server sent them."""
    from fixtures.servers.library import LINK, TEXT_ANNOTATIONS

    log = tmp_path / "lib.jsonl"
    path = tmp_path / "lib.json"
    entry = {"command": sys.executable, "args": server_args(server_path("library"), "lib", str(log))}
    path.write_text(json.dumps({"mcpServers": {"lib": entry}}))
    assert run(["call", "mcp__lib__annotated", "--mcp-config", str(path), "--allowed-tools", "lib", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["content"] == [
        {"type": "text", "text": "annotated text", "annotations": TEXT_ANNOTATIONS, "_meta": {"lib/block": 1}},
        LINK,
    ]
    assert result["meta"] == {"lib/result": "kept"}
    # a task-required tool is refused with the reason, never sent
    assert run(["call", "mcp__lib__long_job", "--mcp-config", str(path), "--allowed-tools", "lib", "--json"]) == 1
    refused = json.loads(capsys.readouterr().out)
    assert "MCP task" in refused["content"][0]["text"]
    assert [json.loads(line)["name"] for line in log.read_text().splitlines()] == ["annotated"]


def test_result_json_shape():
    result = ToolResult(
        "t",
        (ContentBlock("text", "a"), ContentBlock("image", data="AA==", mime_type="image/png")),
        structured={"x": 1},
        duration_ms=1.23456,
    )
    assert result_json(result) == {
        "tool": "t",
        "is_error": False,
        "error_kind": None,
        "structured": {"x": 1},
        "duration_ms": 1.235,
        "content": [{"type": "text", "text": "a"}, {"type": "image", "data": "AA==", "mimeType": "image/png"}],
    }


@pytest.mark.parametrize("value", ["", "0", "off", " None ", "cache"])
def test_a_cache_switched_off_or_relative_writes_nothing_where_the_app_runs(
    tmp_path, capsys, outside_cwd, monkeypatch, value
):
    """``TOOLSCOUT_CACHE_DIR=""`` or ``0`` switch the vector cache off, and so the server sizes
    too: neither lands in the current folder (``./server-sizes.json``, ``./0/``), nor does a
    relative folder name (``cache``) put one under it. An absolute folder gets the sizes."""
    from toolscout.core.engine.server_sizes import FILE_NAME, default_path
    from toolscout.core.search.vector_cache import default_cache_path

    cfg = config(tmp_path, "normal")
    kept = tmp_path / "kept"
    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", str(kept))
    assert run(["mcp", "list", "--json", "--mcp-config", cfg]) == 0
    assert (kept / FILE_NAME).is_file()  # this command records server sizes
    capsys.readouterr()

    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", value)
    assert run(["mcp", "list", "--json", "--mcp-config", cfg]) == 0
    assert json.loads(capsys.readouterr().out)["servers"][0]["state"] == "connected"
    assert sorted(str(p.relative_to(outside_cwd)) for p in outside_cwd.rglob("*")) == []
    assert default_path() is None and default_cache_path() is None  # one answer for both caches
