"""toolscout: deferred tool loading for LLM agents connected to many MCP servers."""

__version__ = "0.1.0"
