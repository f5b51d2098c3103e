"""Entry point: ``toolscout`` and ``python -m toolscout``."""

from __future__ import annotations

import gc
import os
import sys


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code.

    Output piped into a reader that stops early (``toolscout eval … | head``) ends the run
    quietly with exit code 141 (128 + SIGPIPE, what a shell reports), as in the Python docs'
    "Note on SIGPIPE" recipe.

    The objects left at the end are frozen (``gc.freeze``) so that the interpreter's exit does
    not walk them all in a last collection: ~0.5 s of CPU with the SDKs loaded, paid before the
    parent (a shell, an MCP client stopping ``toolscout serve``) sees the process end.
    """
    from toolscout.cli import run

    try:
        code = run(sys.argv[1:] if argv is None else argv)
        sys.stdout.flush()
        gc.freeze()
        return code
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not fail again
        return 141


if __name__ == "__main__":
    raise SystemExit(main())
