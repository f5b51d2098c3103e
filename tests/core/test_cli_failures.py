"""The CLI fails clearly (issue 14), run as a newcomer runs it: ``python -m toolscout ...`` in a
subprocess with a fresh ``HOME`` and config dirs, in an empty folder (the ``toolscout`` fixture of
``tests/conftest.py``).

A run no catalog could be read for exits non-zero naming the file and why; ``eval`` on a file that
is not queries summarises its skipped lines; a mistyped option or command prints that command's
one-line usage and a "did you mean".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolscout.core.search.evaluation import SHOWN_WARNINGS

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
CATALOGS = REPO / "tests" / "fixtures" / "tui_catalogs"


def test_search_with_no_readable_catalog_fails_naming_the_file_and_why(toolscout) -> None:
    proc = toolscout("search", "foo", "--catalog", str(README))
    assert proc.returncode == 2
    assert proc.stdout == ""  # no "no good match" from the built-ins alone
    assert f"no catalog could be read: {README}: not valid JSON" in proc.stderr
    proc = toolscout("search", "foo", "--catalog", str(README), "--json")
    assert proc.returncode == 2 and proc.stdout == ""


def test_a_folder_without_catalogs_is_no_catalog_either(toolscout, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "index.json").write_text('{"pages": []}', encoding="utf-8")  # JSON, but not a catalog
    proc = toolscout("context", "--catalog", str(folder))
    assert proc.returncode == 2 and proc.stdout == ""
    assert f"no catalog could be read: {folder}: no tools in it" in proc.stderr


def test_one_readable_catalog_is_enough(toolscout) -> None:
    """A bad catalog beside a good one is a warning, not a failure."""
    proc = toolscout(
        "search", "github issue", "--catalog", str(README), "--catalog", str(CATALOGS / "github.json"), "--json"
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["results"][0]["server"] == "github"
    assert f"warning: catalog: {README}: not valid JSON" in proc.stderr


def test_a_catalog_flood_of_skipped_lines_is_summarised(toolscout, tmp_path: Path) -> None:
    """A JSONL catalog that is really prose skips every line: the first few, then a count."""
    prose = tmp_path / "notes.jsonl"
    prose.write_text(README.read_text(encoding="utf-8"), encoding="utf-8")
    skipped = sum(1 for line in README.read_text(encoding="utf-8").splitlines() if line.strip())
    proc = toolscout("search", "github issue", "--catalog", str(prose), "--catalog", str(CATALOGS / "github.json"))
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == SHOWN_WARNINGS + 1
    assert all(w.startswith(f"warning: catalog: {prose}:") for w in warnings[:-1])
    assert warnings[-1] == f"warning: … and {skipped - SHOWN_WARNINGS} more catalog warnings"


def test_eval_summarises_skipped_lines_then_says_why_it_stops(toolscout) -> None:
    lines = [line for line in README.read_text(encoding="utf-8").splitlines() if line.strip()]
    proc = toolscout("eval", "--tools", str(CATALOGS / "github.json"), "--queries", str(README))
    assert proc.returncode == 2 and proc.stdout == ""
    err = proc.stderr.splitlines()
    assert len(err) == SHOWN_WARNINGS + 2  # the first few, the count, the error
    assert all(line.startswith(f"warning: {README}:") and ": skipped: " in line for line in err[:SHOWN_WARNINGS])
    assert err[SHOWN_WARNINGS] == f"warning: … and {len(lines) - SHOWN_WARNINGS} more"
    assert err[-1].startswith(f"toolscout eval: {README}: no queries to evaluate ({len(lines)} entries skipped;")
    assert '{"query": TEXT, "relevant": [NAME, ...]}' in err[-1]


def test_a_mistyped_option_gets_the_commands_usage_and_a_suggestion(toolscout) -> None:
    proc = toolscout("search", "foo", "--jsno")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "usage: toolscout search [options] QUERY   (toolscout search -h for help)",
        "toolscout search: error: unrecognized arguments: --jsno; did you mean --json?",
    ]
    nested = toolscout("mcp", "list", "--jsn").stderr.splitlines()
    assert nested[0].startswith("usage: toolscout mcp list [options]")
    assert nested[1].endswith("did you mean --json?") and len(nested) == 2


def test_a_mistyped_command_or_choice_gets_a_suggestion(toolscout) -> None:
    proc = toolscout("serch", "foo")
    assert proc.returncode == 2
    usage, error = proc.stderr.splitlines()
    assert usage.startswith("usage: toolscout [options] [COMMAND ...]")
    assert "invalid choice: 'serch'" in error and error.endswith("; did you mean search?")
    proc = toolscout("search", "foo", "--ranker", "bm25")
    assert proc.stderr.splitlines()[-1].endswith("; did you mean bm25f?") and proc.returncode == 2


def test_common_slips_say_how_to_fix_them(toolscout) -> None:
    words = toolscout("search", "create", "issue").stderr.splitlines()
    assert words[-1].endswith("unrecognized arguments: issue; QUERY is one argument: put quotes around several words")
    late = toolscout("search", "foo", "--provider", "offline").stderr.splitlines()
    assert late[-1].endswith("; --provider goes before the command: toolscout --provider ... search ...")
    stray = toolscout("--provder", "x").stderr.splitlines()  # not "invalid choice: 'x'"
    assert stray[-1] == "toolscout: error: unrecognized arguments: --provder; did you mean --provider?"
    mistyped_top = toolscout("search", "foo", "--provder", "x").stderr.splitlines()
    assert mistyped_top[-1].endswith(
        "; did you mean --provider? It goes before the command: toolscout --provider ... search ..."
    )
    missing = toolscout("eval").stderr.splitlines()
    assert missing == [
        "usage: toolscout eval [options]   (toolscout eval -h for help)",
        "toolscout eval: error: the following arguments are required: --tools, --queries",
    ]


def test_a_query_that_starts_with_a_dash_is_told_to_go_after_double_dash(capsys) -> None:
    """``toolscout search -time``: argparse reads ``-time`` as an option and then misses QUERY;
    the error says where such a value goes (and ``--`` then takes it)."""
    from toolscout.cli import build_parser

    parser = build_parser()
    with pytest.raises(SystemExit) as stop:
        parser.parse_args(["search", "-time"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "toolscout search: error: the following arguments are required: query; "
        "a QUERY that starts with '-' goes after '--': toolscout search -- -time"
    )
    assert parser.parse_args(["search", "--", "-time"]).query == "-time"
    with pytest.raises(SystemExit):
        parser.parse_args(["search"])  # nothing dashed: no such hint
    assert "goes after '--'" not in capsys.readouterr().err
