"""The dense model is loaded and tool texts are encoded only once no server is connecting (issue
12: the encoder is the process's largest CPU user and would compete with servers starting up and
with the UI). A fixture server held back by a gate file decides when connecting ends."""

from __future__ import annotations

import asyncio
import sys

import pytest
from mcp_helpers import make_engine, server_args, server_path

from toolscout.core.mcp.config import ServerConfig
from toolscout.core.search.dense import dense_available

pytestmark = pytest.mark.skipif(
    not dense_available(), reason="dense extra (onnxruntime, tokenizers, model) not installed"
)


async def test_encoding_waits_until_every_server_has_settled(tmp_path) -> None:
    gate = tmp_path / "gate"
    late = ServerConfig(
        "late",
        "stdio",
        command=sys.executable,
        args=tuple(server_args(server_path("late"), "late", "--tools", "5", "--gate", str(gate))),
        source="test",
    )
    engine = make_engine([late])
    await engine.start()
    try:
        index = await asyncio.to_thread(lambda: engine.search.index)
        # the built-ins' texts are queued, but the model is not even loaded while "late" connects
        assert engine.pending_servers() == ["late"]
        with index._dense_cond:
            assert index._held and index._encoder is None and index.fallback_reason is None
            assert index.dense_pending > 0 and not index.dense_ready

        gate.touch()  # the server answers now
        assert await engine.wait_for_servers(30)
        assert engine.catalog.server_tools("late")
        assert await asyncio.to_thread(engine.search.wait_ready, 120)
        if index.fallback_reason:
            pytest.skip(f"dense encoder unavailable: {index.fallback_reason}")
        assert index._encoder is not None and index.dense_pending == 0
    finally:
        gate.touch()
        await engine.stop()
