"""The README and the docs stay true: the set-up commands, every link, every command the CLI
table names, and the settings reference generated from the schema (issue 23 item 5)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from toolscout.cli import build_parser
from toolscout.core.settings.reference import BEGIN, END, render_reference

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
PAGES = [README, REPO / "CONTRIBUTING.md", REPO / "SECURITY.md", *sorted((REPO / "docs").glob("*.md"))]
APP_COMMAND = "python3 -m venv .venv && .venv/bin/pip install -e '.[dense]' && .venv/bin/toolscout"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor for a markdown heading: lower case, punctuation but ``-`` dropped, spaces → ``-``."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"\s", "-", re.sub(r"[^\w\- ]", "", text))


def _anchors(page: Path) -> set[str]:
    return {_slug(line.lstrip("#")) for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("#")}


def test_the_readme_keeps_both_setup_commands_and_ci_runs_the_test_one() -> None:
    readme = README.read_text(encoding="utf-8")
    ci_command = (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci_command == "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test,dense]' && .venv/bin/pytest"
    assert f"\n{ci_command}\n" in readme
    assert f"\n{APP_COMMAND}\n" in readme


def test_the_readme_is_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_reaches_a_file_and_its_heading(page: Path) -> None:
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading #{anchor}")
    assert broken == []


def test_every_command_in_the_readme_table_is_a_real_subcommand() -> None:
    readme = README.read_text(encoding="utf-8")
    table = readme.split("\n## Command line\n", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"^\| `toolscout ([a-z][\w-]*)", table, re.M)
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    assert named and set(named) <= set(sub.choices), set(named) - set(sub.choices)


def test_every_readme_shell_line_names_a_real_command_or_option() -> None:
    """The shell blocks of the README run toolscout with options its parser accepts."""
    readme = README.read_text(encoding="utf-8")
    parser = build_parser()
    for block in re.findall(r"```sh\n(.*?)```", readme, re.S):
        for line in block.splitlines():
            words = shlex.split(line.split("#", 1)[0] if " #" in line else line)
            for i, word in enumerate(words):
                if word.endswith("toolscout") and i + 1 < len(words) and words[i + 1] != "&&":
                    args = [w for w in words[i + 1 :] if w != "&&"]
                    args = args[: args.index("&&")] if "&&" in args else args
                    parser.parse_args(args)  # exits (SystemExit 2) on an unknown option


def test_the_settings_reference_matches_the_schema() -> None:
    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    block = page.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert block == render_reference(), (
        "docs/configuration.md is stale: run python -m toolscout.core.settings.reference docs/configuration.md"
    )


def test_the_deployment_page_shows_the_balancer_config_the_tests_run() -> None:
    """docs/deployment.md quotes docs/examples/toolscout-nginx.conf and toolscout-health.js whole:
    tests/serve/test_serve_balancer.py renders those files, so page and test cannot drift."""
    page = (REPO / "docs" / "deployment.md").read_text(encoding="utf-8")
    for name, fence in (("toolscout-nginx.conf", "nginx"), ("toolscout-health.js", "javascript")):
        text = (REPO / "docs" / "examples" / name).read_text(encoding="utf-8")
        assert f"```{fence}\n{text}```" in page, name
