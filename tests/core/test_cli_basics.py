"""CLI behaviour that needs no server: usage errors, search and context on catalog files."""

import json
import os

import pytest

from toolscout.cli import run

CATALOG = {
    "server": "weather",
    "instructions": "Prefer metric units.",
    "tools": [
        {
            "name": "get_forecast",
            "description": "Get the weather forecast for a city.",
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
        {
            "name": "post_alert",
            "description": "Post a severe weather alert.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        },
    ],
}


@pytest.fixture
def catalog(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLSCOUT_RANKER", "bm25f")  # lexical: fast, and no model to load
    path = tmp_path / "weather.json"
    path.write_text(json.dumps(CATALOG), encoding="utf-8")
    return str(path)


def test_missing_catalog_or_config_is_a_usage_error(tmp_path, capsys):
    assert run(["search", "x", "--catalog", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert run(["search", "x", "--mcp-config", str(tmp_path / "nope.json")]) == 2


@pytest.mark.parametrize("argv", [["search", "  "], ["search", "x", "--limit", "0"], ["search", "x", "--limit", "51"]])
def test_bad_search_arguments_exit_2_on_stderr(catalog, capsys, argv):
    assert run([*argv, "--catalog", catalog]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("toolscout: ")


def test_search_json_contract(catalog, capsys):
    assert run(["search", "weather forecast", "--catalog", catalog, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) >= {"query", "mode", "results", "missing", "already_loaded", "no_good_match"}
    assert data["mode"] == "keyword"
    top = data["results"][0]
    assert top["name"] == "mcp__weather__get_forecast" and top["server"] == "weather"
    assert {"score", "lexical_score", "tfidf_score", "dense_score", "components", "matched"} <= set(top)
    parts = top["lexical_score"] + top["tfidf_score"] + top["dense_score"]
    assert abs(parts - sum(top["components"].values())) < 1e-5  # each part named for what it holds
    assert run(["search", "select:get_forecast,nope", "--catalog", catalog, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] == "select" and data["missing"] == ["nope"]


def test_search_text_marks_a_loaded_hit(catalog, capsys):
    """A built-in such as Read is found (issue 24) and marked on its own line as already loaded."""
    assert run(["search", "read a file", "--catalog", catalog]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("  1. Read  score ") and lines[1].endswith("[already loaded]"), lines
    assert not any("call it directly" in line for line in lines)  # not said twice


def test_search_explain_and_context_text(catalog, capsys):
    assert run(["search", "severe alert", "--catalog", catalog, "--explain"]) == 0
    out = capsys.readouterr().out
    assert "mcp__weather__post_alert" in out and "matched" in out
    assert run(["context", "--catalog", catalog, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["servers"][-1]["server"] == "weather"
    assert report["mode"]["mode"] == "tst-auto" and report["mode"]["defer"] is False


def test_catalog_directory_skips_fifos(tmp_path, catalog, capsys):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    os.mkfifo(tmp_path / "pipe.json")
    assert run(["search", "forecast", "--catalog", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"]


def test_call_starts_only_the_server_it_needs():
    from toolscout.cli.call_cmd import servers_for
    from toolscout.core.mcp.server_config import ServerConfig

    servers = [ServerConfig("time", "stdio", command="t"), ServerConfig("my.git", "stdio", command="g")]
    assert [s.name for s in servers_for("mcp__time__get_current_time", servers)] == ["time"]
    assert [s.name for s in servers_for("mcp__my_git__git_log", servers)] == ["my.git"]
    assert servers_for("Read", servers) == []
    assert servers_for("get_current_time", servers) == servers  # bare names are looked up everywhere
    assert servers_for("mcp__nope__x", servers) == servers  # unknown: keep all, for suggestions


def test_a_reader_that_stops_early_ends_the_run_quietly():
    """``toolscout search … | head -1``: no BrokenPipeError traceback, exit code 141."""
    import subprocess
    import sys
    from pathlib import Path

    catalog = Path(__file__).resolve().parents[1] / "fixtures" / "tui_catalogs" / "github.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolscout", "search", "file", "--catalog", str(catalog), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # the reader is gone before the first write
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err


def test_a_query_that_is_empty_after_its_prefix_exits_2(catalog, capsys):
    assert run(["search", "discover:", "--catalog", catalog]) == 2
    assert "empty query" in capsys.readouterr().out


def test_a_huge_query_is_echoed_short(catalog, capsys):
    assert run(["search", "weather " * 20_000, "--catalog", catalog]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert len(first) < 300 and "(160,000 chars)" in first


def test_search_output_says_why_nothing_matched_once(catalog, tmp_path, capsys):
    """An ambiguous select: name is not also "no such tool", and an empty query or a +word in no
    tool name is not also "no good match" (found by a new-user try)."""
    other = tmp_path / "radar.json"
    other.write_text(json.dumps({"server": "radar", "tools": [CATALOG["tools"][0]]}), encoding="utf-8")
    run(["search", "select:get_forecast", "--catalog", catalog, "--catalog", str(other)])
    out = capsys.readouterr().out
    assert "'get_forecast' is ambiguous: 2 tools" in out and "no such tool" not in out
    for query, why in (("+++", "empty query"), ("+rain", "a +word must be in the tool's name")):
        run(["search", query, "--catalog", catalog])
        out = capsys.readouterr().out
        assert why in out and "no good match" not in out, out
