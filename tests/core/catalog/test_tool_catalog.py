import itertools

from toolscout.core.catalog.registry import ToolCatalog, matches_pattern
from toolscout.core.models import ToolSpec
from toolscout.core.serialize import serialize_tools


def tool(name, server=None, desc=""):
    return ToolSpec(name=name, description=desc or f"{name} tool", server=server)


SERVERS = {
    "github": [tool("create_issue"), tool("list_issues")],
    "slack": [tool("send_message"), tool("list_channels")],
    "time": [tool("get_current_time")],
}


def build(order, frozen_after=None):
    cat = ToolCatalog(core_names={"Read"})
    cat.add_builtin(tool("Read"))
    cat.add_builtin(tool("NotebookEdit"))
    for i, server in enumerate(order):
        if frozen_after is not None and i == frozen_after:
            cat.freeze()
        cat.set_server_tools(server, SERVERS[server])
    return cat


def test_serialisation_is_identical_whatever_the_add_order():
    outputs = {serialize_tools(build(order).tools()) for order in itertools.permutations(SERVERS)}
    assert len(outputs) == 1


def test_builtins_first_then_mcp_sorted():
    names = [t.name for t in build(["time", "github", "slack"])]
    assert names == [
        "NotebookEdit",
        "Read",
        "mcp__github__create_issue",
        "mcp__github__list_issues",
        "mcp__slack__list_channels",
        "mcp__slack__send_message",
        "mcp__time__get_current_time",
    ]


def test_late_server_only_appends_after_freeze():
    cat = build(["time", "slack"])
    before = [t.name for t in cat]
    cat.freeze()
    delta = cat.set_server_tools("github", SERVERS["github"])
    after = [t.name for t in cat]
    assert after[: len(before)] == before
    assert after[len(before) :] == ["mcp__github__create_issue", "mcp__github__list_issues"]
    assert delta.added == ("mcp__github__create_issue", "mcp__github__list_issues")


def test_removing_a_server_never_reorders_the_rest():
    cat = build(["time", "slack"], frozen_after=1)
    cat.set_server_tools("github", SERVERS["github"])
    rest = [t.name for t in cat if t.server != "slack"]
    delta = cat.remove_server("slack")
    assert [t.name for t in cat] == rest
    assert set(delta.removed) == {"mcp__slack__send_message", "mcp__slack__list_channels"}


def test_relist_reports_only_changes():
    cat = build(["github"])
    delta = cat.set_server_tools("github", [tool("create_issue"), tool("close_issue")])
    assert delta.added == ("mcp__github__close_issue",)
    assert delta.removed == ("mcp__github__list_issues",)
    assert cat.get("mcp__github__create_issue").original_name == "create_issue"


def test_deferral_decision_order():
    cat = build(["github", "slack"])
    read = cat.get("Read")
    notebook = cat.get("NotebookEdit")
    issue = cat.get("mcp__github__create_issue")
    assert not cat.is_deferred(read)
    assert cat.is_deferred(notebook)
    assert cat.is_deferred(issue)
    cat.set_always_load(["github"])
    assert not cat.is_deferred(issue)
    assert cat.is_deferred(cat.get("mcp__slack__send_message"))
    cat.add_builtin(tool("ToolSearch"))
    assert not cat.is_deferred(cat.get("ToolSearch"))


def test_always_load_patterns_are_anchored():
    t = ToolSpec(name="mcp__slack2__send", server="slack2")
    assert not matches_pattern(t, "slack")
    assert not matches_pattern(t, "mcp__slack__*")
    assert matches_pattern(t, "mcp__slack2__*")
    assert matches_pattern(t, "slack2")
    assert matches_pattern(t, "mcp__slack2__send")
    assert not matches_pattern(t, "send")


def test_duplicate_names_across_servers_and_collisions():
    cat = ToolCatalog()
    cat.set_server_tools("a.b", [tool("x")])
    cat.set_server_tools("a_b", [tool("x")])
    names = sorted(t.name for t in cat)
    assert names == ["mcp__a_b__x", "mcp__a_b__x_2"]
    assert len(cat.resolve("x")) == 2
    assert cat.resolve("MCP__A_B__X")[0].name == "mcp__a_b__x"


def test_resolve_and_visibility():
    cat = build(["github", "slack"])
    assert [t.name for t in cat.resolve("create_issue")] == ["mcp__github__create_issue"]
    cat.set_visibility(lambda t: t.server != "github")
    assert cat.resolve("create_issue") == []
    assert all(t.server != "github" for t in cat.deferred_tools())
