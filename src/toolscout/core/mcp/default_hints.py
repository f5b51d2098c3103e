"""Search hints toolscout gives the tools of its embedded default servers (``time``, ``git``,
``fetch``: :func:`.config.default_servers`).

A hint is what the tool does in a short phrase of the words people ask with (the role of Claude
Code's ``searchHint``), indexed with the tool (``ToolSpec.search_hint``) and never sent to the
model. These servers' own descriptions are one terse line each: "Get current time in a specific
timezone" and "Convert time between timezones" leave "what time is it in Tokyo" ranking
``convert_time`` first, since its parameters say "time" too. Keys are the tool names the servers
list; a tool not named here, or one that brings a hint of its own, is left as it is.
"""

from __future__ import annotations

#: Server (as :func:`.config.default_servers` names it) → tool name → search hint.
DEFAULT_SEARCH_HINTS: dict[str, dict[str, str]] = {
    "time": {
        # convert_time's schema gives Asia/Tokyo and America/San_Francisco as its examples: named
        # here too, a city among them does not decide between the two tools on its own
        "get_current_time": "what time is it now: the current time in a city or timezone, such as "
        "Asia/Tokyo or America/San_Francisco",
    },
    "git": {
        "git_status": "what changed: modified, staged and untracked files",
        "git_diff_unstaged": "show edits not yet staged",
        "git_diff_staged": "show what is staged in the index",
        "git_diff": "compare branches or revisions",
        "git_commit": "commit what is staged, with a message",
        "git_add": "stage files",
        "git_reset": "unstage everything that is staged",
        "git_log": "show the commit history",
        "git_create_branch": "create a new branch",
        "git_checkout": "switch to another branch",
        "git_show": "show one commit, or a path as of a revision",
        "git_branch": "list local or remote branches",
    },
    "fetch": {
        "fetch": "fetch a URL or web page as markdown",
    },
}
