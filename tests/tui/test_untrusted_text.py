"""Text from servers, tools and models is shown literally in every panel and never raises.

Journey (full app): :func:`test_hostile_descriptions_in_every_panel` walks every panel of the
main screen in turn (chat and recommendations, catalog and tool details, live scoring, token
usage). Harness test: the argument form and the permission prompt alone
(:func:`test_hostile_arguments_in_the_permission_prompt_and_form`). The others need no app."""

from __future__ import annotations

import asyncio

import tui_scenarios as sc
from tui_harness import screen_app

from toolscout.tui.screens.argument_form import ArgumentFormScreen
from toolscout.tui.screens.permission import PermissionScreen
from toolscout.tui.screens.tool_detail import ToolDetailScreen
from toolscout.tui.text import clean, highlight_terms

SIZE = (160, 50)
MARKUP = "[bold]Renders[/bold] markup [/ unbalanced"


def assert_clean(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text
    assert "pwned" not in text or "]0;pwned" not in text


def test_clean_strips_escapes_and_control_characters() -> None:
    assert clean("a\x1b[31mred\x1b[0m\x07b\x1b]0;title\x07c\x00d\td") == "aredbcd    d"
    assert clean("x\ny  z", single_line=True) == "x y z"
    assert clean("abcdef", limit=4) == "abc…"
    assert clean("\ud800 lone") == "? lone"
    assert clean(None) == ""
    # the CLI's sanitiser too: a lone CR goes (CRLF stays a newline), bidi controls show as escapes
    assert clean("RED \r over\r\nnext") == "RED  over\nnext"
    assert clean("invoice\u202efdp.exe \u2066x\u2069\u200f") == r"invoice\u202efdp.exe \u2066x\u2069\u200f"


def test_highlight_matches_stems_not_substrings() -> None:
    text = highlight_terms("createIssue for issues, not tissue", ["issues"])
    styled = [text.plain[s.start : s.end] for s in text.spans]
    assert styled == ["Issue", "issues"]


async def test_hostile_descriptions_in_every_panel() -> None:
    app = sc.make_app()
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        # chat: ToolSearch results and the recommendation bar
        await sc.type_text(pilot, "render markup weather alert")
        await pilot.press("enter")
        await sc.settle(pilot)
        text = sc.screen_text(app)
        assert "[bold]Renders[/bold]" in text
        assert "[bold red]Posts[/]" in text
        assert_clean(text)
        # catalog and its detail screen (description, server instructions, schema)
        await pilot.press("f2")
        await sc.type_text(pilot, "render")
        await pilot.press("enter")  # to the tree
        await sc.settle(pilot)
        tree = app.screen.query_one("#catalog-tree")
        leaf = next(n for n in tree.root.children[0].children if getattr(n.data, "name", "").endswith("render_markup"))
        tree.move_cursor(leaf)
        await pilot.press("d")  # the details (Enter would open the argument form offline)
        await pilot.pause()
        assert isinstance(app.screen, ToolDetailScreen)
        text = sc.screen_text(app)
        assert MARKUP in text
        assert "[bold red]Obey[/] these instructions" in text
        assert "[i]Template[/i]" in text
        assert_clean(text)
        await pilot.press("escape")
        # live scoring with the explanation of a hostile tool
        await pilot.press("f3")
        await sc.type_text(pilot, "renders markup")
        await sc.settle(pilot)
        text = sc.screen_text(app)
        assert "mcp__hostile__render_markup" in text
        assert "[bold]Renders[/bold]" in text
        assert_clean(text)
        # token usage (server names) and /context, /mcp in the chat
        await pilot.press("f4")
        await sc.settle(pilot)
        assert "hostile" in sc.screen_text(app)


async def test_hostile_arguments_in_the_permission_prompt_and_form() -> None:
    """The two dialogs alone in a harness app (:func:`tui_harness.screen_app`)."""
    async with screen_app(
        lambda engine: ArgumentFormScreen(engine.tool("mcp__weather__post_alert")), size=SIZE
    ) as pilot:
        app = pilot.app
        tool = app.engine.tool("mcp__weather__post_alert")
        text = sc.screen_text(app)
        assert "[bold red]Posts[/]" in text
        assert_clean(text)
        form = app.screen
        form.query_one("#arg-0").value = "[bold]Oslo[/bold]"
        form.query_one("#arg-1").value = "[/"
        form.query_one("#arg-2").text = '["[red]x[/red]"]'
        await pilot.press("ctrl+s")
        await asyncio.wait_for(app.dismissed.wait(), 10)  # valid arguments: the form closed
        await pilot.pause()
        assert not isinstance(app.screen, ArgumentFormScreen)
        app.push_screen(PermissionScreen(tool.name, {"city": "[bold]Oslo[/bold]", "x": "\x1b[2J"}, tool))
        await pilot.pause()
        text = sc.screen_text(app)
        assert "Allow mcp__weather__post_alert to run?" in text
        assert '"city": "[bold]Oslo[/bold]"' in text
        assert_clean(text)
