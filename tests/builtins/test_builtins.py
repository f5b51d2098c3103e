"""Built-in tools: schemas, behaviour and helpful errors (real files in a temp dir)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import jsonschema
import pytest

from toolscout.core.builtins.base import ToolContext
from toolscout.core.builtins.files import EditTool, ReadTool, WriteTool
from toolscout.core.builtins.find import GlobTool, GrepTool
from toolscout.core.builtins.notebook import NotebookEditTool
from toolscout.core.builtins.registry import builtin_tools, core_tool_names
from toolscout.core.builtins.shell import BashTool
from toolscout.core.builtins.todo import TodoWriteTool
from toolscout.core.builtins.web import WebFetchTool, html_to_text
from toolscout.core.catalog.registry import ToolCatalog
from toolscout.core.models import ToolErrorKind


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def test_registry_core_and_deferred_split() -> None:
    tools = builtin_tools()
    names = [t.spec.name for t in tools]
    assert names == sorted(names)
    assert core_tool_names() == {
        "Read",
        "Write",
        "Edit",
        "Glob",
        "Grep",
        "Bash",
        "TodoWrite",
        "ToolSearch",
        "ExecuteTool",
    }
    catalog = ToolCatalog(core_names=core_tool_names())
    for tool in tools:
        catalog.add_builtin(tool.spec)
    assert [t.name for t in catalog.deferred_tools()] == ["NotebookEdit", "WebFetch"]
    by_name = {t.spec.name: t for t in tools}
    assert by_name["Bash"].read_only is False and by_name["Read"].read_only is True
    for tool in tools:  # every schema is a valid JSON Schema with a description
        jsonschema.Draft202012Validator.check_schema(tool.spec.input_schema)
        assert tool.spec.description and tool.spec.server is None


async def test_read_numbers_lines_and_pages(ctx: ToolContext) -> None:
    (ctx.cwd / "a.txt").write_text("one\ntwo\nthree\n")
    result = await ReadTool().run({"file_path": "a.txt"}, ctx)
    assert not result.is_error
    assert result.text().splitlines() == ["     1\tone", "     2\ttwo", "     3\tthree"]
    page = await ReadTool().run({"file_path": str(ctx.cwd / "a.txt"), "offset": 2, "limit": 1}, ctx)
    assert page.text().splitlines()[0] == "     2\ttwo"
    assert "offset=3" in page.text()


@pytest.mark.parametrize(
    ("setup", "needle"),
    [
        (lambda d: None, "does not exist"),
        (lambda d: (d / "missing.txt").mkdir(), "is a directory"),
        (lambda d: (d / "missing.txt").write_bytes(b"\x00\x01binary"), "binary"),
    ],
)
async def test_read_errors_are_helpful(ctx: ToolContext, setup, needle: str) -> None:
    setup(ctx.cwd)
    result = await ReadTool().run({"file_path": "missing.txt"}, ctx)
    assert result.is_error and needle in result.text()


async def test_write_creates_parents_then_edit(ctx: ToolContext) -> None:
    result = await WriteTool().run({"file_path": "sub/dir/f.py", "content": "x = 1\ny = 1\n"}, ctx)
    assert not result.is_error and "Created" in result.text()
    target = ctx.cwd / "sub/dir/f.py"
    assert target.read_text() == "x = 1\ny = 1\n"
    dup = await EditTool().run({"file_path": str(target), "old_string": "= 1", "new_string": "= 2"}, ctx)
    assert dup.is_error and "2 times" in dup.text()
    ok = await EditTool().run(
        {"file_path": str(target), "old_string": "= 1", "new_string": "= 2", "replace_all": True}, ctx
    )
    assert not ok.is_error and target.read_text() == "x = 2\ny = 2\n"
    missing = await EditTool().run({"file_path": str(target), "old_string": "zzz", "new_string": "q"}, ctx)
    assert missing.is_error and "not found" in missing.text()
    same = await EditTool().run({"file_path": str(target), "old_string": "x", "new_string": "x"}, ctx)
    assert same.error_kind is ToolErrorKind.INVALID_PARAMS


async def test_glob_newest_first_and_skips_vcs(ctx: ToolContext) -> None:
    (ctx.cwd / "pkg").mkdir()
    (ctx.cwd / ".git").mkdir()
    (ctx.cwd / ".git" / "x.py").write_text("")
    old, new = ctx.cwd / "pkg" / "old.py", ctx.cwd / "top.py"
    old.write_text("")
    new.write_text("")
    past = time.time() - 100
    import os

    os.utime(old, (past, past))
    result = await GlobTool().run({"pattern": "**/*.py"}, ctx)
    assert result.text().splitlines() == ["top.py", "pkg/old.py"]
    none = await GlobTool().run({"pattern": "*.rs"}, ctx)
    assert not none.is_error and "No files" in none.text()


async def test_grep_modes(ctx: ToolContext) -> None:
    (ctx.cwd / "a.py").write_text("def alpha():\n    return 'ALPHA'\n")
    (ctx.cwd / "b.md").write_text("alpha beta\n")
    (ctx.cwd / "c.bin").write_bytes(b"alpha\x00")
    files = await GrepTool().run({"pattern": "alpha"}, ctx)
    assert files.text().splitlines() == ["a.py", "b.md"]
    content = await GrepTool().run({"pattern": "alpha", "output_mode": "content", "-i": True, "glob": "*.py"}, ctx)
    assert content.text().splitlines() == ["a.py:1:def alpha():", "a.py:2:    return 'ALPHA'"]
    count = await GrepTool().run({"pattern": "a", "output_mode": "count", "path": "b.md"}, ctx)
    assert count.text() == "b.md:3"
    bad = await GrepTool().run({"pattern": "("}, ctx)
    assert bad.is_error and bad.error_kind is ToolErrorKind.INVALID_PARAMS


async def test_bash_runs_in_cwd_reports_exit_code_and_times_out(ctx: ToolContext) -> None:
    ok = await BashTool().run({"command": "pwd"}, ctx)
    assert ok.text() == str(ctx.cwd)
    failed = await BashTool().run({"command": "echo oops >&2; exit 3"}, ctx)
    assert failed.is_error and "oops" in failed.text() and "exit code 3" in failed.text()
    slow = await BashTool().run({"command": "sleep 5", "timeout": 200}, ctx)
    assert slow.error_kind is ToolErrorKind.TIMEOUT


async def test_bash_cancel_kills_the_process(ctx: ToolContext) -> None:
    import os

    pidfile = ctx.cwd / "pid"
    os.mkfifo(pidfile)  # the shell's pid arrives as an event on the loop, not by polling a file
    fd = os.open(pidfile, os.O_RDONLY | os.O_NONBLOCK)
    written = asyncio.Event()
    asyncio.get_running_loop().add_reader(fd, written.set)
    try:
        task = asyncio.create_task(BashTool().run({"command": f"echo $$ > {pidfile}; exec sleep 30"}, ctx))
        await asyncio.wait_for(written.wait(), 5)
        pid = int(os.read(fd, 64))
    finally:
        asyncio.get_running_loop().remove_reader(fd)
        os.close(fd)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    with pytest.raises(ProcessLookupError):  # killed and reaped, not left running
        os.kill(pid, 0)


async def test_todowrite_keeps_state(ctx: ToolContext) -> None:
    todos = [{"content": "a", "status": "completed"}, {"content": "b", "status": "in_progress"}]
    result = await TodoWriteTool().run({"todos": todos}, ctx)
    assert "1/2 done" in result.text() and ctx.state["todos"][1]["content"] == "b"
    two = await TodoWriteTool().run({"todos": [{"content": "x", "status": "in_progress"}] * 2}, ctx)
    assert two.is_error


async def test_notebook_edit_replace_insert_delete(ctx: ToolContext) -> None:
    nb = {
        "cells": [
            {"cell_type": "code", "id": "c1", "metadata": {}, "source": "1", "outputs": [], "execution_count": 1}
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = ctx.cwd / "n.ipynb"
    path.write_text(json.dumps(nb))
    tool = NotebookEditTool()
    assert not (await tool.run({"notebook_path": "n.ipynb", "cell_id": "c1", "new_source": "2"}, ctx)).is_error
    assert not (
        await tool.run(
            {
                "notebook_path": "n.ipynb",
                "cell_id": "0",
                "new_source": "# hi",
                "cell_type": "markdown",
                "edit_mode": "insert",
            },
            ctx,
        )
    ).is_error
    cells = json.loads(path.read_text())["cells"]
    assert [c["source"] for c in cells] == ["2", "# hi"]
    assert not (
        await tool.run({"notebook_path": "n.ipynb", "cell_id": "c1", "new_source": "", "edit_mode": "delete"}, ctx)
    ).is_error
    assert [c["source"] for c in json.loads(path.read_text())["cells"]] == ["# hi"]
    bad = await tool.run({"notebook_path": "n.ipynb", "cell_id": "nope", "new_source": ""}, ctx)
    assert bad.is_error and "No cell" in bad.text()


async def test_webfetch_fails_clearly_without_a_server(ctx: ToolContext) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on: connection refused, immediately
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    named = ToolContext(ctx.cwd, private_host_allowed=lambda tool, host: host == "127.0.0.1")
    result = await WebFetchTool().run({"url": f"http://127.0.0.1:{port}/"}, named)
    assert result.is_error and "Could not fetch" in result.text()
    scheme = await WebFetchTool().run({"url": "file:///etc/passwd"}, ctx)
    assert scheme.error_kind is ToolErrorKind.INVALID_PARAMS


def test_html_to_text() -> None:
    assert (
        html_to_text(
            "<html><head><title>t</title></head><body><p>Hello <b>w</b></p><script>x()</script><p>bye</p></body></html>"
        )
        == "Hello w\nbye"
    )
