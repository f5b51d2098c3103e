"""``toolscout serve --index DIR`` as a real subprocess, driven by the real ``mcp`` client (or
raw JSON-RPC lines where what answers first matters), from an index written by a real
``toolscout index --out DIR``:

- ``initialize`` and ``tools/list`` answer while the upstream server has not connected, the
  served list already announces the index's tools, a search finds them, and a call runs once
  the server is up;
- two stateless HTTP replicas serving one index (different ``PYTHONHASHSEED``, the default
  ranker with the dense signal) give byte-identical answers to the same searches.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
import serve_helpers
from serve_helpers import (
    WAIT_S,
    client_dir,
    fixture_entry,
    http_client,
    http_gateway,
    raw_stdio_gateway,
    serve_env,
    text_of,
    write_config,
)

from toolscout.core.search.dense import dense_available

CATALOGS = Path(__file__).resolve().parents[1] / "fixtures" / "tui_catalogs"
SEARCHES = [
    "send a message to a channel",
    "read a file",
    "current time",
    "create an issue",
    "list",
    "search",
    "look at what is inside a folder",  # no word in common with a tool: found by the dense signal only
    "convert time between timezones",
    "get",
    "select:mcp__slack__slack_post_message",
]


def build_index(tmp_path: Path, out: Path, *args: str, ranker: str | None) -> dict[str, Any]:
    """``toolscout index ARGS --out OUT --json`` in the gateway's folder; its JSON summary."""
    proc = subprocess.run(
        [sys.executable, "-m", "toolscout", "index", *args, "--out", str(out), "--json"],
        cwd=client_dir(tmp_path),
        env=serve_env(ranker),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    summary: dict[str, Any] = json.loads(proc.stdout)
    return summary


@pytest.mark.parametrize(
    "ranker",
    [
        "bm25f",
        pytest.param(None, marks=pytest.mark.skipif(not dense_available(), reason="dense extra not installed")),
    ],
)
async def test_the_index_is_served_before_its_server_connects(tmp_path: Path, ranker: str | None) -> None:
    out, gate, log = tmp_path / "index", tmp_path / "gate", tmp_path / "calls.jsonl"
    built = write_config(tmp_path, {"late": fixture_entry("late", "late", "--tools", "5")})
    summary = build_index(tmp_path, out, "--mcp-config", str(built), ranker=ranker)
    assert summary["index"]["tool_count"] == 5
    assert (summary["index"]["encoder"] is None) == (ranker == "bm25f")  # lexical: no vectors
    config = write_config(
        tmp_path, {"late": fixture_entry("late", "late", "--tools", "5", "--gate", str(gate), "--log", str(log))}
    )
    async with raw_stdio_gateway(
        tmp_path, "--mcp-config", str(config), "--index", str(out), "--allowed-tools", "mcp__late", ranker=ranker
    ) as gw:
        with anyio.fail_after(WAIT_S):
            init = await gw.answer(
                await gw.request(
                    "initialize",
                    {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
                )
            )
            assert init["result"]["serverInfo"]["name"] == "toolscout"
            await gw.send({"method": "notifications/initialized"})
            listed = await gw.answer(await gw.request("tools/list"))
            announced = listed["result"]["tools"][0]["description"]
            assert "Available tools (5)" in announced and "op_0003" in announced
            assert "Still connecting" not in announced
            found = await gw.answer(
                await gw.request(
                    "tools/call", {"name": "search_tools", "arguments": {"query": "operation 3 on the records"}}
                )
            )
        answer = json.loads(found["result"]["content"][0]["text"])
        assert answer["results"][0]["name"] == "mcp__late__op_0003"
        assert "pending_servers" not in answer and "notes" not in answer
        assert not gate.exists()  # all of it while the server was still held back

        gate.touch()
        with anyio.fail_after(WAIT_S):
            ran = await gw.answer(
                await gw.request(
                    "tools/call",
                    {"name": "call_tool", "arguments": {"name": "mcp__late__op_0003", "arguments": {}}},
                )
            )
        assert ran["result"]["content"][0]["text"] == "ran op_0003", ran
    assert [json.loads(line)["tool"] for line in log.read_text().splitlines()] == ["op_0003"]
    assert "index " in (tmp_path / "gateway.stderr").read_text()


@pytest.mark.skipif(not dense_available(), reason="dense extra (onnxruntime, tokenizers, model) not installed")
async def test_two_replicas_of_one_index_answer_every_search_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "index"
    summary = build_index(tmp_path, out, "--catalog", str(CATALOGS), ranker=None)
    assert summary["index"]["encoder"]["model_id"] and summary["index"]["tool_count"] > 40

    # the catalog is the index's alone: the embedded default servers connecting part-way through
    # would change every score between one replica's searches and the other's
    answers: list[list[str]] = []
    for seed in ("1", "2"):

        def env(ranker: str | None = None, seed: str = seed) -> dict[str, str]:
            return {**serve_env(None), "PYTHONHASHSEED": seed}  # the default ranker, with the dense signal

        monkeypatch.setattr(serve_helpers, "serve_env", env)
        replica = tmp_path / f"replica{seed}"
        replica.mkdir()
        async with (
            http_gateway(replica, "--stateless", "--index", str(out), "--no-default-servers") as gateway,
            http_client(gateway.url) as client,
        ):
            texts = []
            for query in SEARCHES:
                result = await client.call_tool("search_tools", {"query": query, "max_results": 10})
                assert not result.is_error, text_of(result)
                texts.append(text_of(result))
            answers.append(texts)
    assert answers[0] == answers[1]
    assert all(json.loads(t)["results"] for t in answers[0])  # each replica ranked with the dense signal
