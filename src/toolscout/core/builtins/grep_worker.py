"""Grep's search in a child process: ``python -m toolscout.core.builtins.grep_worker``.

A model-supplied regular expression can backtrack catastrophically (``(a+)+$`` on a line of
``a``s): Python's ``re`` then runs for hours inside C code that holds the GIL, and no thread
of the app could interrupt it. Run here, in its own process group, the search can be killed:
on Grep's time limit, on Esc, and when the app quits.

Protocol: one JSON object on stdin (``pattern``, ``ignore_case``, ``root``, ``glob``, ``mode``,
``limit``); a JSON list of output lines on stdout.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path


def main() -> int:
    """Read the request, search, print the lines; exit 0 (2 for a bad request)."""
    try:
        req = json.load(sys.stdin)
        regex = re.compile(req["pattern"], re.IGNORECASE if req.get("ignore_case") else 0)
    except (ValueError, KeyError, re.error) as exc:
        print(json.dumps({"error": str(exc)}), file=sys.stderr)
        return 2
    from .find import search_files

    lines = search_files(regex, Path(req["root"]), req.get("glob"), req["mode"], int(req["limit"]))
    json.dump(lines, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
