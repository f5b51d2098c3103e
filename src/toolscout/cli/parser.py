"""The CLI's argument parser: short usage errors that name the fix.

Plain argparse prints the whole top-level usage (7 lines) before any error, even for a mistyped
option of a subcommand (``toolscout search foo --jsno``: the leftover reaches the top-level parser).
:class:`Parser` prints the one-line usage of the command the error belongs to, the error, and a
"did you mean" suggestion from :func:`difflib.get_close_matches` over that command's own options,
subcommands or choices (Python 3.14's ``suggest_on_error`` does the latter only, and not on 3.11).

A repeatable option that both the top level and a subcommand take (``--mcp-config``,
``--catalog``: :func:`add_repeatable`) keeps every value: argparse would let the subcommand's list
replace the top level's (``toolscout --mcp-config a.json search --mcp-config b.json`` lost a.json).
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

_INVALID_CHOICE = re.compile(r"invalid choice: '?(?P<value>.*?)'? \(choose from (?P<choices>.*)\)$")
_REQUIRED = "the following arguments are required: "
_argv: list[str] = []  # the arguments being parsed (for the errors of subcommands' parsers)
#: The dest suffix of a subcommand's copy of a repeatable top-level option (:func:`add_repeatable`).
_ALSO = "__also"


def add_repeatable(parser: argparse.ArgumentParser, flag: str, **kwargs: Any) -> None:
    """Add the repeatable option ``flag`` (``action="append"``) to a subcommand's ``parser``; its
    values are added to those the same option took before the subcommand (:meth:`Parser.parse_args`),
    and it is left unset when given nowhere."""
    dest = flag.lstrip("-").replace("-", "_")
    parser.add_argument(flag, action="append", dest=dest + _ALSO, default=argparse.SUPPRESS, **kwargs)


class Parser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose errors are one usage line, the error, and a hint;
    subparsers added with ``add_subparsers`` are of this class too (argparse's default)."""

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        """Parse like argparse; leftover arguments are reported by the (sub)command they follow.

        Raises:
            SystemExit: exit code 2 after printing the error (argparse's convention).
        """
        global _argv
        _argv = list(sys.argv[1:] if args is None else args)
        parsed, extras = self.parse_known_args(_argv, namespace)
        if extras:
            owner = self.chosen(parsed)
            owner.error(f"unrecognized arguments: {' '.join(extras)}{owner.extras_hint(extras, root=self)}")
        for key in [k for k in vars(parsed) if k.endswith(_ALSO)]:  # see add_repeatable
            dest = key.removesuffix(_ALSO)
            setattr(parsed, dest, [*(getattr(parsed, dest, None) or []), *getattr(parsed, key)])
            delattr(parsed, key)
        return parsed

    def chosen(self, parsed: argparse.Namespace) -> Parser:
        """The innermost (sub)command ``parsed`` selected (``self`` when none was)."""
        parser: Parser = self
        while True:
            sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
            name = getattr(parsed, sub.dest, None) if sub is not None else None
            if sub is None or name not in sub.choices:
                return parser
            parser = sub.choices[name]

    def one_line_usage(self) -> str:
        """``usage: toolscout search [options] QUERY   (toolscout search -h for help)``."""
        words = [self.prog]
        if any(a.option_strings and a.help != argparse.SUPPRESS for a in self._actions):
            words.append("[options]")
        for action in self._actions:
            if action.option_strings:
                continue
            word = str(action.metavar or action.dest.upper())
            if isinstance(action, argparse._SubParsersAction):
                word += " ..."
            optional = action.nargs in ("?", "*") or (
                isinstance(action, argparse._SubParsersAction) and not action.required
            )
            words.append(f"[{word}]" if optional else word)
        return f"usage: {' '.join(words)}   ({self.prog} -h for help)"

    def extras_hint(self, extras: Sequence[str], *, root: argparse.ArgumentParser) -> str:
        """A hint for arguments this command did not take: the closest option for a mistyped
        flag, "goes before the command" for a top-level option, "quote it" for extra words."""
        options = [s for a in self._actions for s in a.option_strings]
        top = [s for a in root._actions for s in a.option_strings] if root is not self else []
        before = f"goes before the command: {root.prog} OPTION ... {self.prog.split(' ', 1)[-1]} ..."
        for extra in extras:
            flag = extra.split("=", 1)[0]
            if not flag.startswith("-"):
                continue
            if flag in top:
                return f"; {flag} {before.replace('OPTION', flag)}"
            close = difflib.get_close_matches(flag, options, n=1)
            if close:
                return f"; did you mean {close[0]}?"
            close = difflib.get_close_matches(flag, top, n=1)
            if close:
                return f"; did you mean {close[0]}? It {before.replace('OPTION', close[0])}"
        positionals = [a for a in self._actions if not a.option_strings]
        if (
            len(positionals) == 1
            and not isinstance(positionals[0], argparse._SubParsersAction)
            and not any(e.startswith("-") for e in extras)
        ):
            name = str(positionals[0].metavar or positionals[0].dest.upper())
            return f"; {name} is one argument: put quotes around several words"
        return ""

    def _stray_option_before(self, value: str) -> str | None:
        """The unknown option just before ``value`` in the parsed arguments, if there is one."""
        at = _argv.index(value) if value in _argv else 0
        before = _argv[at - 1] if at > 0 else ""
        known = before.split("=", 1)[0] in self._option_string_actions
        return before if before.startswith("-") and not known else None

    def dash_value_hint(self, message: str) -> str:
        """For a missing positional while an unknown ``-word`` was given (``toolscout search
        -time``: argparse reads it as an option): put the value after ``--``."""
        if not message.startswith(_REQUIRED):
            return ""
        dashed = next(
            (
                a
                for a in _argv
                if a.startswith("-")
                and a != "--"
                and a.split("=", 1)[0] not in self._option_string_actions
                and not _is_number(a)
            ),
            None,
        )
        if dashed is None:
            return ""
        name = message[len(_REQUIRED) :].split(",")[0].strip().upper()
        return f"; a {name} that starts with '-' goes after '--': {self.prog} -- {dashed}"

    def error(self, message: str) -> NoReturn:
        """Print the one-line usage, ``PROG: error: MESSAGE`` and a suggestion; exit 2."""
        hint = self.dash_value_hint(message)
        match = _INVALID_CHOICE.search(message)
        stray = self._stray_option_before(match["value"]) if match else None
        if stray is not None:  # ``toolscout --provder x``: argparse took x for the command
            message, match = f"unrecognized arguments: {stray}", None
            hint = self.extras_hint([stray], root=self)
        if match:
            choices = [c.strip().strip("'") for c in match["choices"].split(",")]
            close = difflib.get_close_matches(match["value"], choices, n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
        self.exit(2, f"{self.one_line_usage()}\n{self.prog}: error: {message}{hint}\n")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
