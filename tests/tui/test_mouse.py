"""The app never dies on a click (issue 21 item 7): mouse moves and clicks over the chat while a
reply streams in. Each streamed piece re-renders the assistant's Markdown (its blocks are removed
and mounted again), and Textual 8.2.8 routes a mouse event by the last layout: a press on a block
just removed raised ``AttributeError`` (``container.region`` of a widget with no parent) out of
``Screen._forward_event``, which stops the app. Full app over the real Anthropic SDK and a
loopback model API that streams slowly (:mod:`fixtures.providers`)."""

from __future__ import annotations

import asyncio
import json

import tui_scenarios as sc
from textual import events

from fixtures.providers import FakeModelServer, Reply
from toolscout.core.session.providers.anthropic_provider import AnthropicProvider
from toolscout.tui.widgets.chat import AssistantEntry

SIZE = (120, 36)
#: A reply of many Markdown blocks (headings, lists, code), streamed in many pieces; no links
#: (a click on one would open a browser).
REPLY = "\n\n".join(
    f"## Step {i}\n\n- run `make {i}`\n- then **check** item {i}\n\n```\nstep {i}\n```" for i in range(6)
)
#: Pieces the reply streams in (the test lets each through).
PIECES = 12


async def test_clicks_and_moves_while_a_reply_streams_never_stop_the_app() -> None:
    """Each piece of the reply is let through by the test; right after the chat shows it (its
    Markdown is re-rendering) the mouse moves over and clicks the newest blocks, through Pilot
    and as a terminal delivers them. The app keeps running and shows the whole reply."""
    with FakeModelServer([Reply(text=REPLY, pieces=PIECES, paced=True)]) as model:
        provider = AnthropicProvider("test-key", "claude-test", model.url, max_retries=0, timeout=20)
        app = sc.make_app(session="model", provider=provider)
        async with app.run_test(size=SIZE) as pilot:
            await sc.settle(pilot)
            await sc.type_text(pilot, "how do I build it")
            await pilot.press("enter")
            shown = ""
            for piece in range(PIECES):
                if piece:
                    model.next_piece.release()
                async with asyncio.timeout(30):  # until the chat has the new piece
                    while not (entries := app.screen.query(AssistantEntry)) or entries.last().source == shown:
                        assert app.is_running, f"the app stopped: {app._exception!r}"
                        await pilot.pause(0.005)
                entry = entries.last()
                shown = entry.source
                newest, *older = reversed(entry.children)  # what the next piece replaces first
                for kind in (events.MouseDown, events.MouseUp):  # a click, as the terminal sends it
                    sc.terminal_mouse(app, kind, newest.region.x + 2, newest.region.y)
                block = older[0] if older else newest
                x, y = block.region.x + 2, block.region.y
                await (pilot.hover(offset=(x, y)) if piece % 2 else pilot.click(offset=(x, y)))
            async with asyncio.timeout(30):
                while app.screen.busy:
                    await pilot.pause(0.01)
            await sc.settle(pilot)
            assert app.is_running and app._exception is None
            assert app.screen.query(AssistantEntry).last().source.strip() == REPLY.strip()  # none of it lost
            assert "Step 5" in sc.screen_text(app)
        assert "how do I build it" in json.dumps(model.bodies[0]["messages"])  # what the model was asked
