"""Tool texts are encoded for the dense ranker only once no server is connecting (issue 12:
the encoder is the process's largest CPU user and would compete with servers starting up and
with the UI). A fixture server held back by a gate file decides when connecting ends."""

from __future__ import annotations

import asyncio
import sys

import pytest
from mcp_helpers import make_engine, server_path

from toolscout.core.mcp.config import ServerConfig
from toolscout.core.search.dense import dense_available

pytestmark = pytest.mark.skipif(not dense_available(), reason="dense extra (onnxruntime, tokenizers, model) not installed")


async def test_encoding_waits_until_every_server_has_settled(tmp_path) -> None:
    gate = tmp_path / "gate"
    late = ServerConfig("late", "stdio", command=sys.executable,
                        args=(server_path("late"), "late", "--tools", "5", "--gate", str(gate)), source="test")
    engine = make_engine([late])
    await engine.start()
    try:
        index = await asyncio.to_thread(lambda: engine.search.index)

        def encoder_loaded() -> bool:
            with index._dense_cond:
                return index._dense_cond.wait_for(lambda: index._encoder is not None or index.fallback_reason, 120)

        assert await asyncio.to_thread(encoder_loaded)
        if index.fallback_reason:
            pytest.skip(f"dense encoder unavailable: {index.fallback_reason}")
        # the model is loaded and the built-ins' texts are queued, but nothing is encoded yet
        assert engine.pending_servers() == ["late"]
        assert index.dense_pending > 0 and not index._job_running and not index.dense_ready

        gate.touch()  # the server answers now
        assert await engine.wait_for_servers(30)
        assert engine.catalog.server_tools("late")
        assert await asyncio.to_thread(engine.search.wait_ready, 120)
        assert index.dense_pending == 0
    finally:
        gate.touch()
        await engine.stop()
