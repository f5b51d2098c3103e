"""The prebuilt index (``toolscout index --out DIR`` / ``serve --index DIR``), in process: an
engine over a real stdio fixture server writes one; another engine, whose server has changed
since and has not connected yet, serves from it at once and encodes only the changed tools; an
index of another encoder identity is ignored, never mixed; a bad folder is one clear line."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from mcp_helpers import make_engine, server_args, server_path

from toolscout.cli import run as cli_run
from toolscout.core.engine.index_files import (
    CATALOG,
    MANIFEST,
    VECTORS,
    IndexDirError,
    read_index,
    write_index,
)
from toolscout.core.engine.index_snapshot import build_index
from toolscout.core.mcp.config import ServerConfig
from toolscout.core.search.dense import dense_available
from toolscout.core.search.vector_cache import VectorCache

needs_dense = pytest.mark.skipif(
    not dense_available(), reason="dense extra (onnxruntime, tokenizers, model) not installed"
)


def late(tools: int, gate: Path | None = None) -> ServerConfig:
    """The ``late`` fixture server with ``tools`` tools (held back until ``gate`` exists)."""
    args = ["late", "--tools", str(tools), *(["--gate", str(gate)] if gate else [])]
    return ServerConfig(
        "late", "stdio", command=sys.executable, args=tuple(server_args(server_path("late"), *args)), source="test"
    )


async def built_index(out: Path, tools: int = 5, **settings: object) -> dict[str, object]:
    """Write the index of an engine over ``late`` with ``tools`` tools; its manifest."""
    engine = make_engine([late(tools)], builtins=False, **settings)
    await engine.start()
    try:
        assert await engine.wait_for_servers(30)
        await asyncio.to_thread(engine.wait_ranker_ready, 120)
        return await asyncio.to_thread(build_index, engine.catalog, engine.search, {"late"}, out)
    finally:
        await engine.stop()


@needs_dense
@pytest.mark.parametrize("changed", [None, "model_sha256", "tool_pieces"])
async def test_a_served_index_answers_before_its_server_connects_and_encodes_only_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changed: str | None
) -> None:
    same_encoder = changed is None
    out = tmp_path / "index"
    manifest = await built_index(out, tools=5)
    assert manifest["tool_count"] == 5 and manifest["encoder"]
    if changed:  # as if built with another model file of the same name, or another piece cap
        data = json.loads((out / MANIFEST).read_text())
        data["encoder"][changed] = "0" * 64 if changed == "model_sha256" else data["encoder"][changed] + 1
        (out / MANIFEST).write_text(json.dumps(data))
    # a fresh process: nothing cached in memory or on disk
    VectorCache._memory.clear()
    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", str(tmp_path / "fresh-cache"))

    gate = tmp_path / "gate"
    engine = make_engine([late(7, gate)], builtins=False)  # two tools more than when indexed
    warnings: list[str] = []
    engine.subscribe(lambda e: warnings.append(e.message) if hasattr(e, "message") else None)
    engine.use_prebuilt_index(read_index(out))
    await engine.start(warm_search=False)  # as the gateway starts it (gateway/starting.py)
    try:
        await asyncio.to_thread(engine.warm_prebuilt)
        assert engine.pending_servers() == ["late"]
        found = await asyncio.to_thread(engine.search_tools, "operation 3 on the late server's records")
        assert "mcp__late__op_0003" in [h.tool.name for h in found.hits]
        assert found.pending_servers == []  # its tools are known: the search does not say "still connecting"
        assert len(engine.catalog.server_tools("late")) == 5  # the index's, kept while it connects

        gate.touch()
        assert await engine.wait_for_servers(30)
        assert await asyncio.to_thread(engine.wait_ranker_ready, 120)
        assert len(engine.catalog.server_tools("late")) == 7
        index = engine.search.index
        if same_encoder:
            assert index.encoded_texts == 2  # op_0005 and op_0006 only
            assert not any("vectors are ignored" in w for w in warnings)
        else:
            assert index.encoded_texts == 7  # none of the index's vectors was used
            said = [w for w in warnings if "vectors are ignored and its 5 tools are encoded again" in w]
            assert len(said) == 1
            if changed == "tool_pieces":  # the two identities must not read alike: say what differs
                pieces = manifest["encoder"]["tool_pieces"]
                assert f"tool_pieces {pieces + 1}" in said[0] and f"tool_pieces {pieces})" in said[0], said
        assert index.dense_ready and index.active_profile == "default"
    finally:
        gate.touch()
        await engine.stop()


async def test_a_server_that_fails_loses_the_index_tools(tmp_path: Path) -> None:
    out = tmp_path / "index"
    await built_index(out, tools=3, **{"toolSearch.ranker": "bm25f"})
    broken = ServerConfig("late", "stdio", command=sys.executable, args=("-c", "raise SystemExit(3)"), source="test")
    engine = make_engine([broken], builtins=False, **{"toolSearch.ranker": "bm25f"})
    engine.use_prebuilt_index(read_index(out))
    assert len(engine.catalog.server_tools("late")) == 3
    await engine.start()
    try:
        assert await engine.wait_for_servers(30)
        assert engine.catalog.server_tools("late") == []  # not callable, so not served
        assert engine.indexed_servers == frozenset()
    finally:
        await engine.stop()


def _index_dir(tmp_path: Path) -> Path:
    out = tmp_path / "idx"
    record = {"original_name": "t", "description": "d", "input_schema": {"type": "object", "properties": {}}}
    servers = [{"name": "s", "kind": "file", "description": None, "instructions": None, "tools": [record]}]
    write_index(out, servers, np.ones((1, 4), dtype=np.float32), {"model_id": "m", "dim": 4, "model_sha256": None})
    return out


def _rehash(out: Path, name: str) -> None:
    import hashlib

    data = json.loads((out / MANIFEST).read_text())
    data["hashes"][name] = hashlib.sha256((out / name).read_bytes()).hexdigest()
    (out / MANIFEST).write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        ("missing", "no index folder there"),
        ("no-manifest", "no manifest.json"),
        ("bad-json", "manifest.json is not valid JSON"),
        ("version", "index format version 99, this toolscout reads version 1"),
        ("catalog-bytes", "catalog.json does not match its hash"),
        ("vectors-bytes", "vectors.npy does not match its hash"),
        ("vectors-shape", "expected float32[1, 4]"),
        ("catalog-shape", "catalog.json is not a valid index catalog"),
        ("tool-types", "tool 't': description is a int"),
        ("no-encoder", "manifest.json names no encoder (with a vector size) for vectors.npy"),
    ],
)
def test_a_bad_index_is_one_clear_line_and_exit_2(
    tmp_path: Path, damage: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _index_dir(tmp_path)
    if damage == "missing":
        out = tmp_path / "nowhere"
    elif damage == "no-manifest":
        (out / MANIFEST).unlink()
    elif damage == "bad-json":
        (out / MANIFEST).write_text("{not json")
    elif damage == "version":
        data = json.loads((out / MANIFEST).read_text())
        (out / MANIFEST).write_text(json.dumps({**data, "format_version": 99}))
    elif damage == "catalog-bytes":
        (out / CATALOG).write_bytes((out / CATALOG).read_bytes()[:-5])
    elif damage == "vectors-bytes":
        (out / VECTORS).write_bytes((out / VECTORS).read_bytes()[:-8])
    elif damage == "vectors-shape":
        np.save(out / VECTORS, np.ones((2, 4), dtype=np.float32))
        _rehash(out, VECTORS)
    elif damage == "catalog-shape":
        (out / CATALOG).write_text(json.dumps({"servers": [{"name": "s", "kind": "web", "tools": []}]}))
        _rehash(out, CATALOG)
    elif damage == "no-encoder":  # was "expected float32[1, None]"
        data = json.loads((out / MANIFEST).read_text())
        (out / MANIFEST).write_text(json.dumps({**data, "encoder": None}))
    elif damage == "tool-types":
        tool = {"original_name": "t", "description": 7}
        (out / CATALOG).write_text(json.dumps({"servers": [{"name": "s", "kind": "file", "tools": [tool]}]}))
        _rehash(out, CATALOG)
    with pytest.raises(IndexDirError) as raised:
        read_index(out)
    assert says in str(raised.value) and "\n" not in str(raised.value)
    assert cli_run(["serve", "--index", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and says in err and err.startswith(f"toolscout: --index {out}")
    # one reason and one remedy: a missing file is not also called invalid JSON
    assert err.count("build it with") + err.count("rebuild it") == 1, err


def test_an_index_is_replaced_whole_and_nothing_else_is(tmp_path: Path) -> None:
    out = _index_dir(tmp_path)
    first = read_index(out).manifest["created"]
    servers = [{"name": "s2", "kind": "file", "description": "x", "instructions": "i", "tools": []}]
    write_index(out, servers, None, None)
    again = read_index(out)
    assert [s.name for s in again.servers] == ["s2"] and again.vectors is None and first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]  # no temporary or old folder left
    other = tmp_path / "photos"
    other.mkdir()
    (other / "cat.jpg").write_bytes(b"meow")
    with pytest.raises(OSError, match="not a toolscout index"):
        write_index(other, servers, None, None)
    assert (other / "cat.jpg").read_bytes() == b"meow"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx", "photos"]


async def test_an_index_server_not_configured_here_is_left_out_with_a_warning(tmp_path: Path) -> None:
    out = tmp_path / "index"
    await built_index(out, tools=3, **{"toolSearch.ranker": "bm25f"})
    engine = make_engine([], builtins=False, **{"toolSearch.ranker": "bm25f"})
    engine.use_prebuilt_index(read_index(out))
    assert engine.catalog.server_tools("late") == [] and engine.indexed_servers == frozenset()
    assert "index: late: its 3 tools in the index are not served (not configured here)" in engine.warnings


def late_named(name: str, tools: int, gate: Path | None = None) -> ServerConfig:
    """The ``late`` fixture server as server ``name``."""
    args = [name, "--tools", str(tools), *(["--gate", str(gate)] if gate else [])]
    return ServerConfig(
        name, "stdio", command=sys.executable, args=tuple(server_args(server_path("late"), *args)), source="test"
    )


async def test_replicas_whose_servers_list_in_another_order_answer_alike(tmp_path: Path) -> None:
    """Two servers changed since the index; on one replica ``a`` lists first, on the other
    ``b``: the searches' answers (order and scores, as the gateway serializes them) are equal."""
    from toolscout.core.gateway.served import search_answer
    from toolscout.core.serialize import dumps

    lexical = {"toolSearch.ranker": "bm25f"}
    out = tmp_path / "index"
    source = make_engine([late_named("a", 4), late_named("b", 6)], builtins=False, **lexical)
    await source.start()
    try:
        assert await source.wait_for_servers(30)
        await asyncio.to_thread(build_index, source.catalog, source.search, {"a", "b"}, out)
    finally:
        await source.stop()

    answers = []
    for first, second in (("a", "b"), ("b", "a")):
        gates = {name: tmp_path / f"gate-{first}-{name}" for name in ("a", "b")}
        engine = make_engine([late_named(n, 9, gates[n]) for n in ("a", "b")], builtins=False, **lexical)
        engine.use_prebuilt_index(read_index(out))
        await engine.start(warm_search=False)
        try:
            await asyncio.to_thread(engine.warm_prebuilt)
            for name in (first, second):  # one listing after the other, in this replica's order
                gates[name].touch()
                async with asyncio.timeout(30):
                    while len(engine.catalog.server_tools(name)) != 9:
                        await asyncio.sleep(0.02)
            # listed is not yet connected: until both are, an answer names the pending server
            assert await engine.wait_for_servers(30) and engine.pending_servers() == []
            texts = []
            for query in ("operation 7", "operation on the late server's records", "records", "op_0005"):
                result = await asyncio.to_thread(engine.search_tools, query, 10)
                assert result.hits
                texts.append(dumps(search_answer(result, engine.catalog.instructions)))
            answers.append(texts)
        finally:
            for gate in gates.values():
                gate.touch()
            await engine.stop()
    assert answers[0] == answers[1]


@needs_dense
async def test_an_index_of_a_server_without_tools_is_read_back(tmp_path: Path) -> None:
    await built_index(tmp_path / "idx", tools=0)
    assert read_index(tmp_path / "idx").tool_count == 0  # was "float32[0, 0], expected float32[0, 384]"


def test_no_servers_to_index_leaves_the_old_index_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _index_dir(tmp_path)
    before = (out / MANIFEST).read_bytes()
    # the operator's config lies in the folder they run from, not approved: no server starts
    cfg = tmp_path / "servers.mcp.json"
    entry = {"command": sys.executable, "args": server_args(server_path("late"), "late", "--tools", "2")}
    cfg.write_text(json.dumps({"mcpServers": {"late": entry}}))
    monkeypatch.chdir(tmp_path)
    assert cli_run(["index", "--mcp-config", str(cfg), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"--out {out}: no server's tools to index" in err and "left as it was" in err, err
    assert (out / MANIFEST).read_bytes() == before
