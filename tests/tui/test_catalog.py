"""The catalog panel: grouping, states, failed servers, filtering and the detail screen.

Harness tests: the panel's own behaviour, and the core's events reaching it (a server re-listing,
a server's warning), in a harness app (:func:`catalog_app`, bridged to the engine as the app is);
its labels under the token report's mode decision (:func:`deciding_catalog_app`).
Journey (full app): F2, Ctrl+B and Esc on a narrow screen, where the panel replaces the chat.
The session's own mode decision reaching the panel is in test_tool_search_visible.py's journey."""

from __future__ import annotations

import tui_scenarios as sc
from tui_harness import catalog_app, focus_filter
from tui_harness_panels import deciding_catalog_app

from toolscout.core.models import ToolSpec
from toolscout.tui.screens.tool_detail import ServerDetailScreen, ToolDetailScreen
from toolscout.tui.widgets.catalog import CatalogPanel


async def test_groups_states_and_a_failed_server() -> None:
    """The panel alone (the status bar's "servers 6/7 · 1 failed": test_warnings.py's journey)."""
    engine = sc.make_engine(sc.make_settings(**{"toolSearch.enabled": "true"}), broken=True)
    async with catalog_app(engine=engine) as pilot:
        app = pilot.app
        panel = app.screen.query_one(CatalogPanel)
        groups = [g for g, _ in panel.groups()]
        assert groups[0] == "built-in"
        assert {"github", "slack", "time", "filesystem", "hostile", "weather", "jira"} <= set(groups)
        text = sc.screen_text(app)
        assert "jira" in text and "failed" in text
        assert "cannot start '/nonexistent/jira-mcp'" in text
        assert "ToolSearch  core" in text
        assert "NotebookEdit  deferred" in text


async def test_filter_narrows_the_tree_and_enter_shows_details() -> None:
    async with catalog_app(settings=sc.make_settings(**{"toolSearch.enabled": "true"})) as pilot:
        app = pilot.app
        await focus_filter(pilot)
        await sc.type_text(pilot, "create_issue")
        await sc.settle(pilot)
        summary = str(app.screen.query_one("#catalog-summary").render())
        assert summary.startswith("1 of ")
        await pilot.press("enter")  # into the tree
        tree = app.screen.query_one("#catalog-tree")
        leaf = next(n for n in tree.root.children[0].children if isinstance(n.data, ToolSpec))
        tree.move_cursor(leaf)
        await pilot.press("d")  # Enter runs the tool in this offline session; d shows its details
        await pilot.pause()
        assert isinstance(app.screen, ToolDetailScreen)
        assert app.screen.tool.name == "mcp__github__create_issue"
        assert app.screen.state == "deferred"
        assert app.screen.tokens and app.screen.tokens > 0
        text = sc.screen_text(app)
        assert "Input schema" in text and '"properties"' in text  # the full schema
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ToolDetailScreen)


async def test_under_a_filter_each_server_counts_its_matching_tools() -> None:
    """Typing a filter: each server's line says how many of its tools match ('6 of 26 tools'),
    as many as the tool lines under it; without the filter, its full count again."""
    async with catalog_app() as pilot:
        app = pilot.app
        panel = app.screen.query_one(CatalogPanel)
        totals = {group: len(tools) for group, tools in panel.groups()}
        await focus_filter(pilot)
        await sc.type_text(pilot, "issue")
        await sc.settle(pilot)
        tree = app.screen.query_one("#catalog-tree")
        counted = 0
        for node in tree.root.children:
            shown = sum(isinstance(child.data, ToolSpec) for child in node.children)
            total = totals[node.data]
            if shown:  # shown under this server: its label counts them, out of all its tools
                counted += 1
                assert f"  {shown} of {total} tool" in str(node.label), node.label
        assert counted >= 2  # github's issue tools, and ToolSearch (its description says issue)
        github = next(line for line in sc.screen_text(app).splitlines() if "github" in line)
        assert f"of {totals['github']} tools" in github
        for _ in "issue":
            await pilot.press("backspace")
        await sc.settle(pilot)
        for node in tree.root.children:  # every server connected: each with its tool count
            label = str(node.label)
            assert " of " not in label and f"  {totals[node.data]} tool" in label, label


async def test_f2_again_keeps_the_panel_and_ctrl_b_or_esc_hide_it_on_a_narrow_screen() -> None:
    """Journey: the app's panel keys and the main screen's Esc, where the panel and the chat
    share one column (test_keys.py: the same keys on a wide screen)."""
    app = sc.make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await sc.settle(pilot)
        sidebar = app.screen.query_one("#sidebar")
        chat = app.screen.query_one("#chat-column")
        assert not app.screen.sidebar_visible and chat.region.width == 80
        await pilot.press("f2")
        await pilot.pause()
        assert app.screen.sidebar_visible and sidebar.region.width == 80
        assert chat.region.width == 0
        await pilot.press("f2")
        await pilot.pause()
        assert app.screen.sidebar_visible  # the panel key shows its panel, never hides it
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert not app.screen.sidebar_visible
        assert app.focused.id == "prompt"
        await pilot.press("f2", "escape")  # back to the prompt: the chat comes back with it
        await pilot.pause()
        assert not app.screen.sidebar_visible and chat.region.width == 80
        assert app.focused.id == "prompt"


async def test_enter_on_a_failed_server_shows_the_full_reason() -> None:
    async with catalog_app(size=(120, 36), engine=sc.make_engine(sc.make_settings(), broken=True)) as pilot:
        app = pilot.app
        await focus_filter(pilot)
        await sc.type_text(pilot, "jira")
        await sc.settle(pilot)
        await pilot.press("enter")  # into the tree
        tree = app.screen.query_one("#catalog-tree")
        reason = next(n for n in tree.root.children[0].children if n.data == "jira:error")
        tree.move_cursor(reason)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ServerDetailScreen)
        full = app.engine.catalog and app.screen.status.error
        assert full and full.startswith("cannot start '/nonexistent/jira-mcp'")
        text = " ".join(sc.screen_text(app).split())
        assert " ".join(full.split())[-30:] in text  # the end of the reason is on screen, wrapped
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ServerDetailScreen)


async def test_tools_are_labelled_inline_when_tool_search_is_off() -> None:
    """The panel given the token report's decision as the main screen gives it (the session's own
    decision, once it has one, keeps the labels: test_tool_search_visible.py's journey)."""
    settings = sc.make_settings(**{"toolSearch.enabled": "false"})
    async with deciding_catalog_app(settings=settings) as pilot:
        text = sc.screen_text(pilot.app)
        assert "NotebookEdit  inline" in text and "NotebookEdit  deferred" not in text
        assert "deferral off" in text


async def test_one_server_changing_rebuilds_only_its_subtree() -> None:
    """A server re-listing (list_changed) redraws its own subtree; every other server's node and
    tool nodes stay the very same objects."""
    import importlib.util

    from toolscout.core.mcp.config import ServerConfig
    from toolscout.tui.messages import CatalogChanged

    spec = importlib.util.spec_from_file_location("fixture_dynamic", sc.FIXTURES / "servers" / "dynamic.py")
    assert spec and spec.loader
    dynamic = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dynamic)
    settings = sc.make_settings()
    engine = sc.make_engine(settings, servers=(ServerConfig.memory("dyn", dynamic.build("dyn")),))
    async with catalog_app(engine=engine, message_hook=(msgs := sc.Messages())) as pilot:
        app = pilot.app
        await sc.settle(pilot)
        panel = app.screen.query_one(CatalogPanel)
        tree = app.screen.query_one("#catalog-tree")
        before = {n.data: (n, list(n.children)) for n in tree.root.children}
        assert "dyn" in before and "github" in before and len(before) >= 5
        start = len(msgs.seen)
        await engine.pool.connection("dyn").call_tool("add_tool", {"name": "fresh_tool"}, 10)
        await msgs.wait_for(
            pilot, lambda m: isinstance(m, CatalogChanged) and "mcp__dyn__fresh_tool" in m.added, start=start
        )
        await sc.settle(pilot)  # the redraw may be postponed by the catalog's throttle
        assert panel.last_rebuilt == ["dyn"]
        after = {n.data: (n, list(n.children)) for n in tree.root.children}
        assert after.keys() == before.keys()
        for group, (node, children) in before.items():
            if group == "dyn":
                continue
            assert after[group][0] is node, group
            assert all(a is b for a, b in zip(after[group][1], children, strict=True)), group
        dyn_tools = [n.data.name for n in after["dyn"][1] if isinstance(n.data, ToolSpec)]
        assert "mcp__dyn__fresh_tool" in dyn_tools


async def test_a_servers_warnings_are_lines_under_it() -> None:
    from toolscout.tui.messages import WarningRaised

    async with catalog_app(message_hook=(msgs := sc.Messages())) as pilot:
        app = pilot.app
        app.engine.warn("tool 'no_schema' dropped: no inputSchema", "weather")
        app.engine.warn("tool 'no_schema' dropped: no inputSchema", "weather")  # a re-list repeats it
        await msgs.wait_for(pilot, lambda m: isinstance(m, WarningRaised) and m.source == "weather")
        await sc.settle(pilot)
        tree = app.screen.query_one("#catalog-tree")
        weather = next(n for n in tree.root.children if n.data == "weather")
        notes = [str(n.label) for n in weather.children if n.data == "weather:warning"]
        assert notes == ["⚠ tool 'no_schema' dropped: no inputSchema"]
