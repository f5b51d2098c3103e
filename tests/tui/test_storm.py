"""A ``list_changed`` storm with churn (issue 12): a stdio fixture server replaces a generation of
tools and notifies, many times, as fast as the pipe takes it, while the person types.

Asserted: every keystroke typed during the storm is in the prompt; the catalog ends on the
server's last listing; the on-disk vector cache stays under its cap (``toolSearch.vectorCacheMB``);
no text is encoded twice (only new texts are); fewer listings reach the UI loop than the server
triggered (re-lists coalesce).

Journey (full app, no session): the storm's redraws compete with typing in the whole main screen
(catalog, scoring, token report), which is what must not lose a key; no harness stands in for that.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tui_scenarios as sc
from warm_servers import server_args

from toolscout.core.engine.events import CatalogChanged
from toolscout.core.mcp.config import ServerConfig
from toolscout.core.search import dense
from toolscout.core.search.vector_cache import ROW_BYTES

STORM = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "storm.py"
ROUNDS = 30
CHURN = 60
CAP_MB = 0.4  # ~245 vectors: far fewer than the ~2,000 distinct texts the storm produces


class CountingEncoder(dense.DenseEncoder):
    """A stand-in for the ONNX model that records every text it is asked to encode (vectors are
    deterministic hashes: ranking quality is not what this test is about)."""

    def __init__(self) -> None:  # no model file: nothing of the real encoder is loaded
        self.model_id = "counting-test-encoder"
        self.texts: list[str] = []

    def encode(self, texts: Any, batch: int = dense.BATCH, progress: Any = None) -> np.ndarray:
        self.texts.extend(texts)
        out = np.zeros((len(texts), dense.DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
            vec = np.random.default_rng(seed).standard_normal(dense.DIM).astype(np.float32)
            out[i] = vec / np.linalg.norm(vec)
        if progress is not None:
            progress(len(texts))
        return out

    def encode_one(self, text: str, pieces: int | None = None) -> np.ndarray:
        return self.encode([text])[0]


@pytest.fixture
def encoder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CountingEncoder:
    fake = CountingEncoder()
    monkeypatch.setattr(dense, "load_encoder", lambda: fake)
    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", str(tmp_path / "cache"))
    return fake


async def test_a_churning_storm_loses_no_keystroke_and_bounds_the_vector_cache(
    encoder: CountingEncoder, tmp_path: Path
) -> None:
    from toolscout.tui.factory import make_app

    settings = sc.make_settings(**{"toolSearch.ranker": "default", "toolSearch.vectorCacheMB": CAP_MB})
    storm = ServerConfig("storm", command=sys.executable, args=tuple(server_args(STORM)), source="test")
    engine = sc.make_engine(settings, weather=False, servers=(storm,))
    last = f"mcp__storm__churn_g{ROUNDS}_0"
    arrived = asyncio.Event()
    engine.subscribe(lambda e: arrived.set() if isinstance(e, CatalogChanged) and last in e.delta.added else None)
    app = make_app(settings, engine, None)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert await asyncio.wait_for(engine.wait_for_servers(30), 40)
        assert await asyncio.to_thread(engine.search.wait_ready, 30)  # stable tools encoded
        await pilot.pause()
        prompt = app.screen.query_one("#prompt")
        assert app.focused is prompt
        conn = engine.pool.connection("storm")
        answer = await conn.call_tool("storm", {"rounds": ROUNDS, "churn": CHURN}, 10)
        assert answer.content[0].text == "started"
        typed = "storms never eat keys"
        await sc.type_text(pilot, typed)  # typed while the server re-lists
        await asyncio.wait_for(arrived.wait(), 60)
        await pilot.pause()
        assert prompt.value == typed

        done = await conn.call_tool("storm_done", {}, 10)
        assert done.content[0].text == f"rounds={ROUNDS}"
        names = {t.name for t in engine.catalog.server_tools("storm")}
        assert {f"mcp__storm__churn_g{ROUNDS}_{i}" for i in range(CHURN)} <= names
        assert not any(n.startswith(f"mcp__storm__churn_g{ROUNDS - 1}_") for n in names)

        assert await asyncio.to_thread(engine.search.wait_ready, 60)
        assert len(encoder.texts) == len(set(encoder.texts)), "a text was encoded twice"
        assert engine.pool.listings_delivered <= engine.pool.listings_received

    db = sqlite3.connect(tmp_path / "cache" / "embeddings.sqlite")
    rows = db.execute("SELECT COUNT(*) FROM vec").fetchone()[0]
    db.close()
    cap_rows = int(CAP_MB * 2**20) // ROW_BYTES
    assert 0 < rows <= cap_rows
    assert len(set(encoder.texts)) > cap_rows  # the storm really produced more than the cap holds
