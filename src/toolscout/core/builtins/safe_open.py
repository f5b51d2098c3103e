"""Opening exactly what the permission check approved: no symlink followed, no special file.

The permission check (:mod:`toolscout.core.rules.specs`) decides on a *real* path: ``~``
expanded, relative to the project, symlinks resolved. The file built-ins then open that real path
(``ToolContext.target``) one component at a time, each relative to the directory before it and
with ``O_NOFOLLOW`` (an ``openat`` walk). A real path has no symlink in it, so a symlink met on
the walk was swapped in after the check (while the person read the question, or by a process
running beside the tool): the open then fails with :class:`Refused` instead of going where the
link points. What is opened is what was checked, with no gap between the two.

Only regular files are opened. A FIFO, device or socket is refused by name before it is opened
(opening a FIFO waits for a writer, ``/dev/zero`` never ends); the file is then opened
non-blocking and its type checked again on the descriptor, so even one swapped in between
cannot block. POSIX only (``O_NOFOLLOW``, ``O_DIRECTORY``, ``dir_fd``), like the rest of the built-ins.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from ..rules.specs import target_path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: Folders passed through are opened ``O_PATH`` where there is one (Linux): that needs only the
#: search permission a path lookup needs, so an execute-only folder (``--x``) is no obstacle.
_WALK_FLAGS = os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_PATH", os.O_RDONLY)
_FILE_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_OPEN_FLAGS = {"read": os.O_RDONLY, "update": os.O_RDWR, "write": os.O_WRONLY | os.O_CREAT | os.O_TRUNC}
_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFDIR: "a directory",
    stat.S_IFREG: "a regular file",
}

Mode = Literal["read", "update", "write"]


class Refused(Exception):
    """The path cannot be used as it stands; ``str()`` is a whole sentence naming the path."""


class NotADirectory(Refused):
    """:func:`open_dir` was given the path of something else (a file: open it with :func:`open_file`)."""


def kind(mode: int) -> str:
    """What a ``st_mode`` is, in words: ``"a FIFO (named pipe)"``, ``"a character device"`` ..."""
    return _KINDS.get(stat.S_IFMT(mode), "a special file")


def checked_target(tool: str, params: Mapping[str, Any], cwd: Path, approved: Path | None) -> Path:
    """The real path a path built-in works on: the one the permission check approved
    (``approved``, set per call by the executor), else resolved now as that check does
    (:func:`~toolscout.core.rules.specs.target_path`; for built-ins run outside the executor)."""
    if approved is not None:
        return approved
    found = target_path(tool, params, cwd)
    assert found is not None, f"{tool} is not a path tool"
    return found


def _symlink_refusal(path: Path, at: Path) -> Refused:
    where = "" if at == path else f" ({at} on the way to it)"
    return Refused(
        f"{path}{where} is a symbolic link now, and was not one when the permission check resolved the "
        "path; it is not followed. Call the tool again so that the new target is checked."
    )


def _step(parent: int, name: str, whole: Path, at: Path, create: bool, flags: int) -> int:
    """The directory ``name`` under the descriptor ``parent``, opened without following a link."""
    if name in (".", ".."):
        raise Refused(f"{whole} is not a resolved path ({name!r} in it).")
    try:
        return os.open(name, flags, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o777, dir_fd=parent)
        return _step(parent, name, whole, at, False, flags)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise
        try:
            mode = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
        except OSError:
            raise exc from None
        if stat.S_ISLNK(mode):
            raise _symlink_refusal(whole, at) from None
        if at == whole:
            raise NotADirectory(f"{whole} is {kind(mode)}, not a directory.") from None
        raise Refused(f"{whole} cannot be reached: {at} is {kind(mode)}, not a directory.") from None


def open_dir(path: Path, *, create: bool = False, listing: bool = False) -> int:
    """A descriptor of the directory at the absolute ``path``, reached with no symlink followed.

    Args:
        path: an absolute, resolved path (as :func:`checked_target` gives).
        create: make missing directories on the way (mode ``0o777`` less the umask).
        listing: the descriptor will be listed (``os.scandir``), so it is opened for reading;
            otherwise it may be an ``O_PATH`` one, good for ``dir_fd`` and ``fchdir`` only.

    Raises:
        NotADirectory: ``path`` itself is not a directory (and not a symlink).
        Refused: a symlink on the way or at the end, or a non-directory on the way.
        FileNotFoundError: a component is missing (and ``create`` is False).
        OSError: anything else (permission denied ...).
    """
    if not path.is_absolute():
        raise Refused(f"{path} is not an absolute path.")
    names = path.parts[1:]
    fd = os.open(path.anchor, _DIR_FLAGS if listing and not names else _WALK_FLAGS)
    at = Path(path.anchor)
    try:
        for i, name in enumerate(names, 1):
            at = at / name
            parent, fd = fd, -1
            try:
                fd = _step(parent, name, path, at, create, _DIR_FLAGS if listing and i == len(names) else _WALK_FLAGS)
            finally:
                os.close(parent)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def open_file(path: Path, mode: Mode, *, create_parents: bool = False) -> Iterator[tuple[io.FileIO, bool]]:
    """The regular file at the absolute ``path``, opened with no symlink followed on the way.

    Args:
        path: an absolute, resolved path.
        mode: ``read``, ``update`` (read and write, never created) or ``write`` (created or
            truncated; missing parent directories too when ``create_parents``).

    Yields:
        ``(file, existed)``: an unbuffered binary file (closed on exit) and whether the file was
        there before.

    Raises:
        Refused: a symlink on the way or at the end, or not a regular file (a FIFO, a device, a
            socket: named in the message).
        IsADirectoryError: ``path`` is a directory.
        FileNotFoundError: it does not exist (``read``, ``update``) or its folder does not.
        OSError: anything else.
    """
    if not path.name:
        raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
    parent = open_dir(path.parent, create=create_parents and mode == "write")
    try:
        try:
            before: os.stat_result | None = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            if mode != "write":
                raise
            before = None
        if before is not None:
            _check_regular(path, before.st_mode)
        try:
            fd = os.open(path.name, _OPEN_FLAGS[mode] | _FILE_FLAGS, 0o666, dir_fd=parent)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK):
                raise _symlink_refusal(path, path) from None
            raise
    finally:
        os.close(parent)
    with open(fd, "r+b" if mode == "update" else ("wb" if mode == "write" else "rb"), buffering=0) as file:
        now = os.fstat(fd)
        _check_regular(path, now.st_mode)
        if before is not None and mode != "write" and (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            raise Refused(f"{path} was replaced while it was being opened; call the tool again.")
        os.set_blocking(fd, True)
        yield file, before is not None


def _check_regular(path: Path, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
    if stat.S_ISLNK(mode):
        raise _symlink_refusal(path, path)
    raise Refused(
        f"{path} is {kind(mode)}, not a regular file; the file tools open regular files only "
        "(reading one of these could wait forever or never end)."
    )


def read_capped(file: io.FileIO, limit: int) -> bytes | None:
    """All of ``file`` from where it stands, or None when it holds more than ``limit`` bytes
    (at most ``limit + 1`` bytes are read either way)."""
    chunks, size = [], 0
    while size <= limit:
        chunk = file.read(min(1 << 20, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return None if size > limit else b"".join(chunks)


def write_all(file: io.FileIO, data: bytes) -> None:
    """Write all of ``data`` to ``file`` (an unbuffered file may take it in parts)."""
    view = memoryview(data)
    while view:
        view = view[file.write(view) or 0 :]


def rewrite(file: io.FileIO, data: bytes) -> None:
    """Replace the whole content of ``file`` (opened for ``update``) with ``data``."""
    file.seek(0)
    write_all(file, data)
    file.truncate()
