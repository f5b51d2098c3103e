"""The catalog panel: grouping, states, failed servers, filtering and the detail screen."""

from __future__ import annotations

import tui_scenarios as sc

from toolscout.core.models import ToolSpec
from toolscout.tui.screens.tool_detail import ToolDetailScreen
from toolscout.tui.widgets.catalog import CatalogPanel

SIZE = (140, 44)


async def test_groups_states_and_a_failed_server() -> None:
    app = sc.make_app(broken=True, settings=sc.make_settings(**{"toolSearch.enabled": "true"}))
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        panel = app.screen.query_one(CatalogPanel)
        groups = [g for g, _ in panel.groups()]
        assert groups[0] == "built-in"
        assert {"github", "slack", "time", "filesystem", "hostile", "weather", "jira"} <= set(groups)
        text = sc.screen_text(app)
        assert "jira" in text and "failed" in text
        assert "cannot start '/nonexistent/jira-mcp'" in text
        assert "servers 6/7 · 1 failed" in text
        assert "ToolSearch  core" in text
        assert "NotebookEdit  deferred" in text


async def test_filter_narrows_the_tree_and_enter_shows_details() -> None:
    app = sc.make_app(settings=sc.make_settings(**{"toolSearch.enabled": "true"}))
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await pilot.press("f2")
        await sc.type_text(pilot, "create_issue")
        await sc.settle(pilot)
        summary = str(app.screen.query_one("#catalog-summary").render())
        assert summary.startswith("1 of ")
        await pilot.press("enter")  # into the tree
        tree = app.screen.query_one("#catalog-tree")
        leaf = next(n for n in tree.root.children[0].children if isinstance(n.data, ToolSpec))
        tree.move_cursor(leaf)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ToolDetailScreen)
        assert app.screen.tool.name == "mcp__github__create_issue"
        assert app.screen.state == "deferred"
        assert app.screen.tokens and app.screen.tokens > 0
        text = sc.screen_text(app)
        assert 'Input schema' in text and '"properties"' in text  # the full schema
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ToolDetailScreen)


async def test_f2_again_hides_the_panel_on_a_narrow_screen() -> None:
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
        assert not app.screen.sidebar_visible
        assert app.focused.id == "prompt"


async def test_enter_on_a_failed_server_shows_the_full_reason() -> None:
    from toolscout.tui.screens.tool_detail import ServerDetailScreen

    app = sc.make_app(broken=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await sc.settle(pilot)
        await pilot.press("f2")
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
    settings = sc.make_settings(**{"toolSearch.enabled": "false"})
    app = sc.make_app(settings=settings, session="model")
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await pilot.press("f2")
        await sc.settle(pilot)
        text = sc.screen_text(app)
        assert "NotebookEdit  inline" in text and "NotebookEdit  deferred" not in text
        assert "deferral off" in text
        await pilot.press("ctrl+l")
        await sc.type_text(pilot, "hello")  # the session's own decision, once it has one
        await pilot.press("enter")
        await sc.settle(pilot)
        assert app.session.mode_decision is not None and not app.session.mode_decision.defer
        assert "NotebookEdit  inline" in sc.screen_text(app)
