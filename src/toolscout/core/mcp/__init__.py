"""MCP servers: configuration (:mod:`.config`), one connection per server owned by one lifetime
task (:mod:`.connection`), the pool that starts and stops them (:mod:`.pool`), and the resource
built-ins (:mod:`.resources`)."""
