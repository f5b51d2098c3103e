"""The main screen: status bar, chat with recommendation bar and prompt, and the side panels.

The screen receives the controller's messages (engine and session facts) and hands each to the
widget that shows it. What it wants done (a turn, an interrupt, a new conversation, a tool
picked) it posts up as a request message (:mod:`..messages`); it never calls the app, and reads
what the session knows from the :class:`~toolscout.tui.controller.SessionController` it was
given, never keeping a copy. Work that touches the core runs in workers elsewhere, except the
token report (a thread, ``group="report"``) and live scoring (inside the scoring panel).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Footer, TabbedContent, TabPane

from toolscout.core.models import ServerStatus, ToolSpec
from toolscout.core.tokens import MODE_SETTING

from .. import messages as m
from ..panels import side_panels
from ..search_again import SearchAgain
from ..text import clean
from ..throttle import Throttle
from ..widgets.catalog import CatalogPanel, CatalogTree
from ..widgets.chat import (
    AssistantEntry,
    ChatView,
    ErrorEntry,
    NoticeEntry,
    SearchEntry,
    SearchHits,
    UserEntry,
)
from ..widgets.multiline import MultiLineInput
from ..widgets.prompt import PromptInput
from ..widgets.recommendations import RecommendationBar, RecommendationItem
from ..widgets.scoring import ScoringPanel
from ..widgets.status import StatusBar
from ..widgets.usage import UsagePanel
from ..widgets.welcome import WelcomeEntry
from . import slash
from .layout import SidePanels
from .tool_calls import ToolCallHandlers

if TYPE_CHECKING:
    from ..controller import SessionController

#: Shortest interval between two token reports while servers connect (s).
REPORT_INTERVAL_S = 1.0


class MainScreen(ToolCallHandlers, SidePanels):
    """Chat on the left, one side panel (catalog, scoring, usage: the registered ones,
    :mod:`toolscout.tui.panels`) on the right.

    At widths under the app's breakpoint the side panel, when shown, replaces the chat.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        # The one Esc: priority, so a running turn is interrupted wherever focus is (the
        # recommendation bar included); otherwise it brings the cursor back to the prompt.
        Binding("escape", "escape", "Interrupt", id="main.escape", show=False, priority=True),
        Binding("ctrl+l", "focus_prompt", "Prompt", id="main.focus_prompt", show=False),
    ]

    busy: reactive[bool] = reactive(False)
    """True while a turn runs."""
    # State the bars show, bound to them in compose (``data_bind``): the screen sets it from the
    # controller's messages and settings, the bars redraw.
    provider: reactive[str] = reactive("offline")
    model: reactive[str] = reactive("")
    mode: reactive[str] = reactive("")
    starting: reactive[bool] = reactive(False)
    servers: reactive[dict[str, ServerStatus]] = reactive(dict, always_update=True)
    encoding: reactive[tuple[int, int, float | None] | None] = reactive(None)
    recommendations_enabled: reactive[bool] = reactive(True)
    recommendations_min_score: reactive[float] = reactive(0.15)
    recommendations_max: reactive[int] = reactive(3)

    def __init__(self, controller: SessionController) -> None:
        super().__init__()
        self.controller = controller
        self.engine = engine = controller.engine
        self._report_generation = 0
        #: The chat's welcome entry (added on mount; its settings and mode parts follow changes).
        self.welcome: WelcomeEntry | None = None
        self._report = Throttle(self, self._start_report, REPORT_INTERVAL_S, lambda: bool(engine.pending_servers()))
        self._again = SearchAgain()

    def request(self, message: Message) -> None:
        """Post a request (``…Requested``) up to the app, which hands it to the controller."""
        self.app.post_message(message)

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status").data_bind(
            MainScreen.provider,
            MainScreen.model,
            MainScreen.mode,
            MainScreen.busy,
            MainScreen.starting,
            MainScreen.servers,
            MainScreen.encoding,
        )
        with Horizontal(id="body"):
            with Vertical(id="chat-column"):
                yield ChatView(id="chat")
                yield RecommendationBar(id="recommendations").data_bind(
                    enabled=MainScreen.recommendations_enabled,
                    min_score=MainScreen.recommendations_min_score,
                    max_items=MainScreen.recommendations_max,
                )
                yield PromptInput(placeholder="Message, or /help", id="prompt")
            panels = side_panels()
            with TabbedContent(id="sidebar", initial=panels[0].tab_id):
                for panel in panels:  # the registry's (tui/panels.py), in tab order
                    with TabPane(panel.title, id=panel.tab_id):
                        yield panel.make(self.engine, panel.name)
        yield Footer()

    def on_mount(self) -> None:
        self.apply_settings()
        self.servers = {s.name: s for s in self.engine.server_statuses()}
        self.starting = self.controller.start_engine  # until EngineStarted
        self.set_focus(self.query_one(PromptInput))  # now: the keys typed during start-up go there next
        self.keys_ready()
        self.refresh_report()
        session = self.controller.session
        self.welcome = WelcomeEntry(self._session_kind(), bool(self.controller.settings["recommendations.enabled"]))
        self.chat.add(self.welcome)
        self.apply_settings()  # the welcome's settings part
        self.show_startup_warnings()
        if session is not None and session.messages:  # a --resume'd session: show what was said before
            self.chat.show_history(list(session.messages), session.id, session.saved_searches)

    def show_startup_warnings(self) -> None:
        """Show the warnings recorded before the app started (settings files, MCP config, a
        provider without its key) once, as one notice; later ones arrive as ``WarningRaised``."""
        warnings = list(dict.fromkeys(str(w) for w in self.engine.warnings))
        if warnings:
            self.chat.add(
                NoticeEntry(
                    "\n".join(f"! {clean(w, single_line=True)}" for w in warnings), title="warnings", variant="warning"
                )
            )

    # -- keys ------------------------------------------------------------------------------
    def watch_busy(self, value: bool) -> None:
        # on the prompt, not the screen: a class on the screen restyles every widget under it
        for prompt in self.query(PromptInput):  # none yet while the screen is built
            prompt.set_class(value, "-busy")

    def action_escape(self) -> None:
        """Esc: interrupt a running turn or tool call (from anywhere on the screen); otherwise
        go back to the prompt (out of the recommendation bar or a side panel)."""
        if self.busy:
            self.request(m.InterruptRequested())
        else:
            self.action_focus_prompt()

    # -- settings ----------------------------------------------------------------------------
    def apply_settings(self) -> None:
        """Push the current settings into the widgets that depend on them."""
        settings = self.controller.settings
        self.recommendations_enabled = bool(settings["recommendations.enabled"])
        self.recommendations_min_score = float(settings["recommendations.minScore"])
        self.recommendations_max = int(settings["recommendations.max"])
        self.provider = self.controller.provider_name
        self.model = self.controller.model_name
        self.mode = f"tool search {MODE_SETTING[settings.mode]} · {settings['session.strategy']}"
        if self.welcome is not None:  # its first steps follow the provider too (F5 can change it)
            self.welcome.show(
                kind=self._session_kind(),
                recommendations=bool(settings["recommendations.enabled"]),
                source=str(settings.sources.get("toolSearch.enabled", "")),
            )

    def _session_kind(self) -> str:
        """``none`` (no session), ``offline`` (the person drives) or ``model``: the welcome's kind."""
        return "none" if self.controller.session is None else "offline" if self.controller.offline else "model"

    def on_engine_started(self, message: m.EngineStarted) -> None:
        self.starting = False
        self.query_one(CatalogPanel).schedule_refresh()
        self.refresh_report()

    def on_settings_applied(self, message: m.SettingsApplied) -> None:
        self.apply_settings()
        self.refresh_report()
        self.query_one(ScoringPanel).rescore()

    # -- engine facts ------------------------------------------------------------------------
    def on_server_status_changed(self, message: m.ServerStatusChanged) -> None:
        status = message.status
        self.query_one(CatalogPanel).set_status(status)
        self.servers = {**self.servers, status.name: status}
        due = self._again.due(self.servers)
        if due is not None and not self.busy:  # busy: the person is doing something else
            question, connected = due
            self.chat.add(
                NoticeEntry(
                    f"{', '.join(clean(n, single_line=True) for n in connected)} connected: "
                    f"searching again for “{clean(question, single_line=True, limit=80)}”",
                    title="search again",
                )
            )
            self.send(question)

    def on_catalog_changed(self, message: m.CatalogChanged) -> None:
        self.query_one(CatalogPanel).schedule_refresh()
        # tools whose server went away: Enter on them could only say they are gone
        self.query_one(RecommendationBar).drop_missing(lambda name: self.engine.tool(name) is not None)
        self.query_one(ScoringPanel).rescore()
        self.refresh_report()

    def on_ranker_changed(self, message: m.RankerChanged) -> None:
        self.query_one(ScoringPanel).ranker_changed()

    def on_vectors_progressed(self, message: m.VectorsProgressed) -> None:
        self.encoding = None if message.done >= message.total else (message.done, message.total, message.eta_s)

    def on_warning_raised(self, message: m.WarningRaised) -> None:
        self.chat.add_warning(f"! {clean(message.text, single_line=True)}", message.source)
        self.query_one(CatalogPanel).schedule_refresh()  # a server's warning is also a line under it

    def refresh_report(self) -> None:
        """Recompute the token report in a thread (tiktoken over every schema takes a while).

        Bursts of catalog changes coalesce into one computation, at most one per
        :data:`REPORT_INTERVAL_S` while servers connect (the thread competes with the UI loop
        for the interpreter); a report that finishes after a newer one was requested is dropped
        (thread workers cannot be stopped half-way).
        """
        self._report_generation += 1
        self._report.request()

    def _start_report(self) -> None:
        self._compute_report(self._report_generation, self.controller.loaded_tools, self.controller.tool_calls)

    @work(thread=True, exclusive=True, group="report")
    def _compute_report(self, generation: int, loaded: set[str], calls: dict[str, int]) -> None:
        self.post_message(m.ContextReportReady(self.controller.context_report(loaded, calls), generation))

    def on_context_report_ready(self, message: m.ContextReportReady) -> None:
        if message.generation != self._report_generation:
            return
        per_tool: dict[str, int] = {}
        for row in message.report.rows:
            per_tool.update(row.per_tool)
        catalog = self.query_one(CatalogPanel)
        catalog.set_tokens(per_tool)
        decision = self.controller.mode_decision(message.report)
        catalog.set_defer(decision.defer if decision is not None else True)
        self.query_one(UsagePanel).show_report(message.report)
        if self.welcome is not None and decision is not None:
            self.welcome.show(decision=decision, native=message.report.native)

    # -- session facts -----------------------------------------------------------------------
    @property
    def chat(self) -> ChatView:
        """The conversation view."""
        return self.query_one(ChatView)

    def on_turn_started(self, message: m.TurnStarted) -> None:
        self.busy = True
        self.query_one(RecommendationBar).show_hits([])  # the last turn's tools; this turn's may follow
        if message.text and message.text != self._again.repeating:  # searched again: the notice says so
            self.chat.add(UserEntry(message.text))
        self._again.moved_on(message.text)

    def on_turn_ended(self, message: m.TurnEnded) -> None:
        self.busy = False
        if message.cancelled:
            self.chat.add(NoticeEntry("interrupted", variant="warning"))
        self.refresh_report()

    def on_assistant_text_updated(self, message: m.AssistantTextUpdated) -> None:
        entry = self.chat.assistant(message.key)
        if entry is None:
            self.chat.add(AssistantEntry(message.key, message.text))
        else:
            entry.set_text(message.text)
            if self.chat.following:
                self.chat.scroll_end(animate=False)

    def on_tool_search_ran(self, message: m.ToolSearchRan) -> None:
        if message.loaded:
            loaded = self.controller.loaded_tools
            self.query_one(CatalogPanel).set_loaded(loaded)
            if not self.controller.offline:  # a loaded tool needs no recommending any more
                bar = self.query_one(RecommendationBar)
                bar.show_hits([h for h in bar.hits if h.name not in loaded])
        if message.result is not None:
            self.chat.add(SearchEntry(message.result))
            if self.controller.offline:  # the person's question: still connecting servers may have its tools
                self._again.searched(message.query, message.result.pending_servers)
        else:
            self.chat.add(ErrorEntry(f"ToolSearch {message.query}: {message.text}"))

    def on_recommendations_changed(self, message: m.RecommendationsChanged) -> None:
        self.query_one(RecommendationBar).show_hits(message.tools)

    def on_usage_updated(self, message: m.UsageUpdated) -> None:
        self.query_one(UsagePanel).set_cache(self.controller.cache_stats())

    def on_error_reported(self, message: m.ErrorReported) -> None:
        self.chat.add(ErrorEntry(message.text))

    def on_notice_reported(self, message: m.NoticeReported) -> None:
        self.chat.add(NoticeEntry(message.text, title=message.title))

    def on_busy_changed(self, message: m.BusyChanged) -> None:
        self.busy = message.busy
        if message.busy:  # a tool run by hand: an earlier question is not searched again
            self._again.moved_on()
        if not message.busy:
            self.action_focus_prompt()

    # -- the prompt --------------------------------------------------------------------------
    @on(MultiLineInput.Submitted, "#prompt")
    def submit_prompt(self, event: MultiLineInput.Submitted) -> None:
        event.stop()
        text = event.value
        prompt = self.query_one(PromptInput)
        if not text.strip():
            return
        if not self.busy or text.lstrip().startswith("/"):
            self.chat.stick()  # what the person just sent, and what answers it, is shown
        if text.lstrip().startswith("/"):
            prompt.remember(text)
            prompt.value = ""
            self.run_command(text.strip())
        elif self.busy:  # keep the text: sending now would cancel the running turn
            self.notify(
                "A turn is running: wait for it, or press Esc to interrupt it.", severity="warning", markup=False
            )
        else:
            prompt.remember(text)
            prompt.value = ""
            self.send(text)

    def on_prompt_input_tab_pressed(self, message: PromptInput.TabPressed) -> None:
        self.focus_picks()  # else nothing to pick: the cursor stays in the prompt, so typing is never lost

    def on_scoring_panel_tabbed_out(self, message: ScoringPanel.TabbedOut) -> None:
        if not self.focus_picks():  # nothing to pick: round the panel again, never into the chat
            self.set_focus(self.query_one("#scoring-query"))

    def focus_picks(self) -> bool:
        """Focus the tools the person can pick now: the recommendation bar's first item, else (no
        bar: recommendations off) the newest search's hits in the chat. False when there are none.
        The focus moves now: Enter typed right after Tab picks the tool."""
        bar = self.query_one(RecommendationBar)
        if bar.display and bar.focus_first():
            return True
        hits = self.chat.query(SearchHits)
        if not hits:
            return False
        self.set_focus(hits.last())
        self.chat.scroll_to_widget(hits.last(), animate=False)
        return True

    @on(SearchHits.OptionSelected, ".search-hits")
    def use_search_hit(self, event: SearchHits.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.request(m.ToolUseRequested(event.option.id))

    def opens_a_form(self, widget: Widget | None) -> bool:
        """Enter on ``widget`` opens a tool's argument form: a recommended tool, a search hit, or
        a tool in the catalog, when the person drives (offline, or no session)."""
        if not (self.controller.offline or self.controller.session is None):
            return False  # with a model, a pick loads the tool (or shows its details)
        if isinstance(widget, RecommendationItem | SearchHits):
            return True
        return (
            isinstance(widget, CatalogTree)
            and widget.cursor_node is not None
            and isinstance(widget.cursor_node.data, ToolSpec)
        )

    def on_recommendation_bar_left(self, message: RecommendationBar.Left) -> None:
        self.set_focus(self.query_one(PromptInput))  # now, not deferred: typing goes on in the prompt

    def on_recommendation_bar_picked(self, message: RecommendationBar.Picked) -> None:
        self.request(m.ToolUseRequested(message.hit.name))

    def on_catalog_panel_tool_chosen(self, message: CatalogPanel.ToolChosen) -> None:
        from .tool_detail import ToolDetailScreen

        tool = message.tool
        if not message.details and (self.controller.offline or self.controller.session is None):
            self.request(m.ToolRunRequested(tool))  # you drive: Enter runs the tool ("d" shows its details)
            return
        report = self.query_one(UsagePanel).report
        tokens = None
        if report is not None:
            for row in report.rows:
                tokens = row.per_tool.get(tool.name, tokens)
        state = self.engine.tool_state(tool, self.controller.loaded_tools, defer=self.query_one(CatalogPanel).defer)
        instructions = self.engine.server_instructions(tool.server) if tool.server else None
        self.app.push_screen(ToolDetailScreen(tool, state=state, tokens=tokens, instructions=instructions))

    def on_catalog_panel_server_chosen(self, message: CatalogPanel.ServerChosen) -> None:
        from .tool_detail import ServerDetailScreen

        self.app.push_screen(ServerDetailScreen(message.status))

    def on_conversation_started(self, message: m.ConversationStarted) -> None:
        """A fresh conversation: empty chat, no loaded tools, usage and cache figures from zero
        (as the new session has them), no recommendations; then the notice."""
        self.chat.clear()
        self.query_one(RecommendationBar).show_hits([])
        self.query_one(CatalogPanel).set_loaded(self.controller.loaded_tools)
        self.query_one(UsagePanel).set_cache(self.controller.cache_stats())
        self.refresh_report()
        self.chat.add(NoticeEntry(message.notice, title="/clear"))
        self.action_focus_prompt()

    # -- turns -------------------------------------------------------------------------------
    def send(self, text: str) -> None:
        """Start a turn with ``text`` (shows an error when there is no session)."""
        if self.controller.session is None:
            self.chat.add(UserEntry(text))
            self.chat.add(ErrorEntry("No session is running: only slash commands work. Try /help."))
            return
        self.request(m.TurnRequested(text))

    # -- slash commands ----------------------------------------------------------------------
    def run_command(self, line: str) -> None:
        """Run one slash command (``/name args``; :func:`.slash.run_command`)."""
        slash.run_command(self, line)
