"""Entry point: ``toolscout`` and ``python -m toolscout``."""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code.

    Output piped into a reader that stops early (``toolscout eval … | head``) ends the run
    quietly with exit code 141 (128 + SIGPIPE, what a shell reports), as in the Python docs'
    "Note on SIGPIPE" recipe.
    """
    from .cli import run

    try:
        code = run(sys.argv[1:] if argv is None else argv)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not fail again
        return 141


if __name__ == "__main__":
    raise SystemExit(main())
