"""Which ``--mcp-config`` files are the project's own, and what of them an approval covers.

A folder's ``.mcp.json`` runs nothing until the person approves the folder (:mod:`.trust`). A
file named with ``--mcp-config`` used to be exempt: the person named it, so it was taken as
theirs. But the README's setup for Claude Code keeps the servers in the project's
``.toolscout/servers.json`` and puts ``toolscout serve --mcp-config .toolscout/servers.json`` in
``.mcp.json``: Claude Code approves that line, not the file it names, so a ``git pull`` that
edits the file would run new commands with no prompt from anyone. So an ``--mcp-config`` file
that lies inside the project folder is project config, approved like ``.mcp.json``; a file
outside it (``~/.config/toolscout/servers.json``, ``/etc/...``) is the person's own, as before.

*Inside* is decided on the paths the file is reached through, so neither a symlink nor ``..``
takes a project file out: the path as given (made absolute, ``..`` removed as written), each
symlink on the way (its folder's real path with its name) and the real path. A file reached
through the folder but whose real path lies elsewhere (a symlink the repository commits) is
project config too: the repository chose what it points to.

A folder that is, or contains, the person's home directory (``~``, ``/home``, the filesystem
root) is no project of anyone else's: files under it stay the person's own. Some clients start
their servers in ``/`` or ``~``, and ``toolscout serve --mcp-config ~/servers.json`` must keep
working there. The home directory is the account's (the password database), never ``$HOME``:
the ``.mcp.json`` line that starts ``toolscout serve`` also sets its environment, and ``HOME=.``
there would make every file the person's own. The folder's own ``.mcp.json`` is the project's
even in such a folder.

An approval records each such file under a *key*: its real path relative to the folder
(``.toolscout/servers.json``), or its absolute real path when that lies outside the folder. The
folder's own ``.mcp.json`` named with ``--mcp-config`` has no key of its own: ``mcpHash``
covers it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..safe_read import SafeReadError, parse_json, read_bytes
from .trust_changes import launch_fields

#: The project file the folder's approval always covers (``mcpHash``).
PROJECT_FILE = ".mcp.json"
#: Most symlinks followed when finding the paths a file is reached through (as the OS's limit).
_MAX_HOPS = 40


def read_servers(path: str | Path) -> tuple[bytes | str | None, dict[str, Any] | None]:
    """One reading of an MCP config file: its raw bytes (None without a file; for a FIFO, a
    device, a file too large: why it was not read, as a ``str``) and its ``mcpServers`` object
    (None when it has none or is malformed). Never raises."""
    try:
        raw = read_bytes(Path(path))
    except OSError:
        return None, None
    except SafeReadError as exc:  # a FIFO, a device, too large: nothing is read from it
        return str(exc), None
    try:
        servers = parse_json(raw.decode("utf-8-sig")).get("mcpServers")
    except (ValueError, AttributeError):
        return raw, None
    return raw, servers if isinstance(servers, dict) else None


def fingerprint(raw: bytes | str | None, servers: dict[str, Any] | None) -> str:
    """SHA-256 of what one reading (:func:`read_servers`) would run: per server its launch fields
    (:func:`~.trust_changes.launch_fields`), independent of key order and formatting; ``""``
    without a file. An unreadable or malformed file hashes its raw bytes (any edit asks again)."""
    if raw is None:
        return ""
    if isinstance(raw, str):
        return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()
    try:
        if servers is None:
            raise TypeError("no mcpServers object")
        reduced: Any = {str(k): launch_fields(v) if isinstance(v, dict) else v for k, v in servers.items()}
        data = json.dumps(reduced, sort_keys=True, ensure_ascii=True).encode()
    except (ValueError, TypeError):
        data = raw
    return hashlib.sha256(data).hexdigest()


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _places(path: str | Path) -> list[str]:
    """The paths ``path`` is reached through: as given (absolute, ``..`` removed as written),
    at each symlink its folder's real path joined with its name, and the real path."""
    given = os.path.normpath(os.path.abspath(path))
    places, hop = [given], os.path.abspath(path)
    for _ in range(_MAX_HOPS):
        here = os.path.join(os.path.realpath(os.path.dirname(hop)), os.path.basename(hop))
        places.append(here)
        if not os.path.islink(here):
            break
        try:
            hop = os.path.join(os.path.dirname(here), os.readlink(here))
        except OSError:
            break
    places.append(os.path.realpath(path))
    return places


def account_home() -> str:
    """The real path of this account's home directory from the password database (``$HOME``
    only where there is none, e.g. Windows): the environment is not evidence here."""
    try:
        import pwd

        home = pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, AttributeError):
        home = os.path.expanduser("~")
    return os.path.realpath(home)


def _inside_by_identity(path: str | Path, folder: str) -> bool:
    """True when a parent folder of ``path``'s real path is ``folder`` by file identity (device
    and inode): on a case-insensitive disk ``../REPO/x`` reaches ``repo/x`` with another spelling."""
    try:
        target = os.stat(folder)
        here = os.path.dirname(os.path.realpath(path))
        for _ in range(256):
            info = os.stat(here)
            if (info.st_dev, info.st_ino) == (target.st_dev, target.st_ino):
                return True
            parent = os.path.dirname(here)
            if parent == here:
                return False
            here = parent
    except OSError:
        return False
    return False


def holds_home(folder: str | Path) -> bool:
    """True when ``folder`` (a real path) is the person's home directory (:func:`account_home`)
    or contains it (``/``, ``/home``): its files are the person's own, not a project's (see the
    module docstring)."""
    return _under(account_home(), os.path.realpath(folder))


def project_key(folder: str | Path, path: str | Path) -> str | None:
    """The key under which ``folder``'s approval records the ``--mcp-config`` file ``path``, or
    None when the file is not the project's.

    Args:
        folder: the project folder (the one :func:`~.trust.check_folder` checks).
        path: the file as given on the command line (relative to the current directory).

    Returns:
        ``.toolscout/servers.json`` (the real path relative to the folder, ``/``-separated), the
        absolute real path when the file is reached through the folder but lies elsewhere,
        ``.mcp.json`` for the folder's own ``.mcp.json``, or None (outside the folder, or the
        folder holds the home directory: :func:`holds_home`). Never raises.
    """
    real_folder = os.path.realpath(folder)
    if os.path.realpath(path) == os.path.join(real_folder, PROJECT_FILE):
        return PROJECT_FILE  # the folder's own .mcp.json: gated wherever the folder is
    if holds_home(real_folder):
        return None
    roots = {real_folder, os.path.normpath(os.path.abspath(folder))}
    if not any(_under(place, root) for place in _places(path) for root in roots) and not _inside_by_identity(
        path, real_folder
    ):
        return None
    real = os.path.realpath(path)
    if _under(real, real_folder) and real != real_folder:
        return Path(os.path.relpath(real, real_folder)).as_posix()
    return real


def project_files(folder: str | Path, paths: Iterable[str | Path]) -> dict[str, str]:
    """Those of ``paths`` that are the project's, as ``{key: the path as first given}``
    (:func:`project_key`), in the order given, without the folder's own ``.mcp.json``
    (``mcpHash`` covers it), and without a path that is no regular file (a folder, a missing
    file: nothing of it can run; loading it fails with its own error). Never raises."""
    out: dict[str, str] = {}
    for path in paths:
        key = project_key(folder, path)
        if key is not None and key != PROJECT_FILE and os.path.isfile(path):
            out.setdefault(key, str(path))
    return out


def key_path(folder: str | Path, key: str) -> Path:
    """The file a key (:func:`project_key`) names: ``folder / key``, or ``key`` when absolute."""
    return Path(os.path.realpath(folder)) / key
