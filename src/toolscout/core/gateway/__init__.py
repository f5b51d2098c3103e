"""``toolscout serve``: an MCP server (gateway) in front of the person's configured MCP servers.

The gateway reuses the :class:`~toolscout.core.engine.facade.Engine` (same configuration, settings and
permission rules as the app and headless mode) and serves a small, fixed tool list: a search tool
with ToolSearch's grammar and a call tool with ExecuteTool's semantics; optionally (``dynamic``
exposure) tools found by search are appended to the served list. Modules:

- :mod:`.served`: the served tool definitions, what their descriptions announce, and search
  answers as JSON;
- :mod:`.results`: engine results mapped back to MCP ``CallToolResult`` values;
- :mod:`.asking`: permission questions through MCP elicitation;
- :mod:`.resources`: the catalog and ``/context`` report as MCP resources;
- :mod:`.server`: the MCP server itself (handlers, per-client state, serving alongside the
  engine's start);
- :mod:`.starting`: the engine's start, kept off the handshake's path;
- :mod:`.stdio`: stdio, with a stdin reader a signal can stop;
- :mod:`.http`: streamable HTTP (bind rules, bearer token, DNS-rebinding protection);
- :mod:`.clients`: who a request comes from, sessions bound to their client, limits per client;
- :mod:`.guard`: connection timeouts and caps at the transport, the user of a loopback peer;
- :mod:`.limits`: the values of those limits (``serve.*`` settings).

Nothing here imports Textual or Rich; the MCP SDK is imported by :mod:`.server`, :mod:`.stdio`
and :mod:`.http`.
"""
