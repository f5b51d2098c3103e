"""``toolscout mcp list`` over the 47 real servers of ``../shared/bench-data/catalogs`` keeps every
one of their 1,673 tools (the GitLab server's 9 malformed schemas included).

Needs the servers installed (``dump_catalog.py --install``, see the catalogs' README): their
work folder is ``$TOOLSCOUT_REAL_SERVERS`` (default ``/work/realservers/work``), the catalogs
``$TOOLSCOUT_BENCH_CATALOGS`` (default ``../shared/bench-data/catalogs`` beside the repo). The
test skips with the reason when either is absent (CI has neither).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolscout.cli import run

REAL_SERVERS = Path(os.environ.get("TOOLSCOUT_REAL_SERVERS", "/work/realservers/work"))
CATALOGS = Path(
    os.environ.get("TOOLSCOUT_BENCH_CATALOGS")
    or Path(__file__).resolve().parents[3] / "shared" / "bench-data" / "catalogs"
)


def test_mcp_list_keeps_every_tool_of_the_real_servers(tmp_path, monkeypatch, capsys):
    catalogs = CATALOGS
    if not (catalogs / "write_mcp_json.py").is_file():
        pytest.skip(f"real catalogs not found at {catalogs} (set TOOLSCOUT_BENCH_CATALOGS)")
    if not REAL_SERVERS.is_dir():
        pytest.skip(f"real MCP servers not installed at {REAL_SERVERS} (set TOOLSCOUT_REAL_SERVERS)")
    config = tmp_path / ".mcp.json"
    subprocess.run(
        [sys.executable, str(catalogs / "write_mcp_json.py"), "--root", str(REAL_SERVERS), "--out", str(config)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    servers = json.loads(config.read_text())["mcpServers"]
    expected = {name: len(json.loads((catalogs / f"{name}.json").read_text())["tools"]) for name in servers}
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TOOLSCOUT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("TOOLSCOUT_MCP_TIMEOUT", "180")  # 47 servers starting at once on 2 cores
    assert run(["mcp", "list", "--json", "--no-default-servers", "--mcp-config", str(config)]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["servers"]}
    counts = {name: rows[name]["tool_count"] for name in servers}
    assert counts == expected, {n: (rows[n]["state"], rows[n]["error"]) for n in servers if counts[n] != expected[n]}
    assert sum(counts.values()) == 1673
    assert not any("dropped" in w for r in rows.values() for w in r["warnings"])
