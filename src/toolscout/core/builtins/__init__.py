"""Built-in tools: the core set (Read, Write, Edit, Glob, Grep, Bash, TodoWrite) and deferred extras."""
