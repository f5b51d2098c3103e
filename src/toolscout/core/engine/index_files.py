"""The prebuilt index on disk (``toolscout index --out DIR``, ``toolscout serve --index DIR``).

A folder of three files, written into a temporary sibling folder and swapped in with one rename
(:func:`write_index`), so a reader sees the old index or the new one, never half of either:

- ``manifest.json``: ``{"format": "toolscout-index", "format_version": 1, "created": ISO-8601
  UTC, "toolscout_version", "tool_count", "server_count", "encoder": {"model_id", "dim",
  "model_sha256", "class"} | null, "hashes": {"catalog.json": sha256, "vectors.npy": sha256}}``.
- ``catalog.json``: ``{"servers": [{"name", "kind": "mcp" | "file", "description",
  "instructions", "tools": [{...the tool as the catalog keeps it..., "hash", "vector_key"}]}]}``
  in server-name order, each server's tools in catalog order. A tool record is every
  :class:`~toolscout.core.models.ToolSpec` field but ``name`` and ``server`` (the catalog
  computes the canonical name again): the definition as listed (``source_schema``) and its
  projection, so loading it needs no projection. ``hash``: sha256 of the record (sorted-key
  JSON); ``vector_key``: the :func:`~toolscout.core.search.dense.text_key` of the text embedded
  for it under the manifest's encoder (null without one), i.e. the content hash of its vector.
- ``vectors.npy``: float32[tool_count, dim], one row per tool in ``catalog.json`` order (absent
  when the index was built without the dense encoder).

:func:`read_index` checks the format and version, both hashes and the vector shape; any problem
is an :class:`IndexDirError` whose message is one line naming the folder and what to do.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from toolscout import __version__

from ..models import ToolSpec

if TYPE_CHECKING:
    from ..search.dense import DenseEncoder

FORMAT = "toolscout-index"
#: Bumped on any change of the files' meaning; another version is refused (rebuild it).
FORMAT_VERSION = 1
MANIFEST, CATALOG, VECTORS = "manifest.json", "catalog.json", "vectors.npy"
#: ToolSpec fields a record leaves out (the catalog assigns them when it registers the tool).
_NOT_RECORDED = ("name", "server")
_TUPLE_FIELDS = frozenset(f.name for f in dataclasses.fields(ToolSpec) if isinstance(f.default, tuple))


class IndexDirError(ValueError):
    """A prebuilt index that cannot be used; the message is one line (folder, problem, remedy)."""


@dataclass(frozen=True)
class IndexedServer:
    """One server of a prebuilt index.

    Attributes:
        name: the server's canonical name. kind: ``mcp`` (a configured MCP server) or ``file``
        (a ``--catalog`` file's server: searchable, never called). description, instructions:
        as the engine used them (None: none). tools: its tools in catalog order, with
        ``original_name`` set and ``name`` the original name (registered again by the catalog).
        vector_keys: per tool, the content hash of its vector (None without an encoder).
    """

    name: str
    kind: str
    description: str | None
    instructions: str | None
    tools: tuple[ToolSpec, ...]
    vector_keys: tuple[str | None, ...]


@dataclass(frozen=True)
class PrebuiltIndex:
    """A prebuilt index read from disk (:func:`read_index`).

    Attributes:
        path: the folder. manifest: ``manifest.json`` as read. servers: in the index's order.
        vectors: float32[tool_count, dim] in the order of the servers' tools, or None.
    """

    path: Path
    manifest: dict[str, Any]
    servers: tuple[IndexedServer, ...]
    vectors: np.ndarray | None

    @property
    def encoder(self) -> dict[str, Any] | None:
        """The identity of the encoder the vectors came from (:func:`encoder_identity`), or None."""
        found = self.manifest.get("encoder")
        return found if isinstance(found, dict) else None

    @property
    def tool_count(self) -> int:
        """Tools over all servers."""
        return sum(len(s.tools) for s in self.servers)

    def vectors_by_key(self) -> dict[str, np.ndarray]:
        """Content hash → vector of every tool that has one."""
        if self.vectors is None:
            return {}
        keys = [k for s in self.servers for k in s.vector_keys]
        return {k: self.vectors[i] for i, k in enumerate(keys) if k is not None}


def tool_record(tool: ToolSpec) -> dict[str, Any]:
    """``tool`` as a JSON-ready record: every field but ``name`` and ``server``; ``input_schema``
    is left out when it is the schema as sent (``source_schema``), as it is for most tools."""
    record = {
        f.name: list(value) if isinstance(value := getattr(tool, f.name), tuple) else value
        for f in dataclasses.fields(ToolSpec)
        if f.name not in _NOT_RECORDED
    }
    if record.get("input_schema") == record.get("source_schema"):
        del record["input_schema"]
    return record


def tool_from_record(record: dict[str, Any]) -> ToolSpec:
    """The :class:`ToolSpec` of a record (unknown keys ignored; ``name`` is the original name).

    Raises:
        IndexDirError: no string ``original_name``.
    """
    original = record.get("original_name")
    if not isinstance(original, str):
        raise IndexDirError("a tool record has no string original_name")
    known = {f.name for f in dataclasses.fields(ToolSpec)} - set(_NOT_RECORDED)
    values: dict[str, Any] = {
        k: tuple(v) if k in _TUPLE_FIELDS and isinstance(v, list) else v for k, v in record.items() if k in known
    }
    if "input_schema" not in values and isinstance(values.get("source_schema"), dict):
        values["input_schema"] = values["source_schema"]  # the projection changed nothing
    for key, kinds in _FIELD_TYPES.items():
        if key in values and not isinstance(values[key], kinds):
            raise IndexDirError(f"tool {original[:80]!r}: {key} is a {type(values[key]).__name__}")
    if not all(isinstance(w, str) for w in values.get("schema_warnings", ())):
        raise IndexDirError(f"tool {original[:80]!r}: schema_warnings are not all strings")
    return ToolSpec(name=original, **values)


#: What a record's typed fields must be (a hand-edited or foreign catalog.json is refused, never
#: served half-valid; ``source_schema`` is whatever the server sent).
_FIELD_TYPES: dict[str, type | tuple[type, ...]] = {
    "description": str,
    "input_schema": dict,
    "search_hint": (str, type(None)),
    "always_load": bool,
    "annotations": (dict, type(None)),
    "wrapped_arguments": bool,
    "schema_warnings": tuple,
}


def record_hash(record: dict[str, Any]) -> str:
    """sha256 (hex) of a tool record as sorted-key compact JSON."""
    return hashlib.sha256(json.dumps(record, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def encoder_identity(encoder: DenseEncoder) -> dict[str, Any]:
    """What makes an encoder's vectors what they are, read from the encoder object: its
    ``model_id``, the vector size, the sha256 of its model file (``model_path``), its tool piece cap
    and its class.
    Two identities that differ never share vectors."""
    from ..search.vector_cache import VECTOR_DIM

    return {
        "model_id": encoder.model_id,
        "dim": VECTOR_DIM,
        "model_sha256": _file_sha256(str(encoder.model_path)),
        "tool_pieces": encoder.tool_pieces,  # word pieces read per tool text: other caps, other vectors
        "class": f"{type(encoder).__module__}.{type(encoder).__qualname__}",
    }


@cache
def _file_sha256(path: str) -> str | None:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def write_index(
    out: Path,
    servers: list[dict[str, Any]],
    vectors: np.ndarray | None,
    encoder: dict[str, Any] | None,
) -> dict[str, Any]:
    """Write a prebuilt index to folder ``out``, replacing one that is there atomically.

    Args:
        servers: the ``catalog.json`` server entries (records already built, see module doc).
        vectors: float32[tools, dim] in record order, or None. encoder: :func:`encoder_identity`.

    Returns:
        The manifest written.

    Raises:
        OSError: the folder cannot be written (nothing is left half-written at ``out``).
    """
    out = Path(out).absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        catalog = json.dumps({"servers": servers}, ensure_ascii=False, separators=(",", ":")).encode()
        hashes = {CATALOG: _write(tmp / CATALOG, catalog)}
        if vectors is not None:
            with open(tmp / VECTORS, "wb") as fh:
                np.save(fh, np.ascontiguousarray(vectors, dtype=np.float32), allow_pickle=False)
            hashes[VECTORS] = _file_digest(tmp / VECTORS)
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "toolscout_version": __version__,
            "tool_count": sum(len(s["tools"]) for s in servers),
            "server_count": len(servers),
            "encoder": encoder if vectors is not None else None,
            "hashes": hashes,
        }
        _write(tmp / MANIFEST, json.dumps(manifest, indent=2).encode())
        os.chmod(tmp, 0o755)  # mkdtemp's 0700 would keep other users' replicas out
        _swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest


def _write(path: Path, data: bytes) -> str:
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return hashlib.sha256(data).hexdigest()


def _file_digest(path: Path) -> str:
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())
        return hashlib.file_digest(fh, "sha256").hexdigest()


#: ``renameat2``'s flag that swaps two paths in one step (Linux ≥ 3.15).
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _swap_in(tmp: Path, out: Path) -> None:
    """Make ``tmp`` be ``out``: a plain rename when ``out`` does not exist; else an atomic
    exchange (Linux ``renameat2(RENAME_EXCHANGE)``) and the old folder removed, or where that is
    unavailable two renames (a reader in between finds no index and says so)."""
    if not out.exists():
        os.rename(tmp, out)
        return
    if not out.is_dir() or (not (out / MANIFEST).exists() and any(out.iterdir())):
        raise OSError(f"{out}: exists and is not a toolscout index (not replaced)")
    if _exchange(tmp, out):
        shutil.rmtree(tmp, ignore_errors=True)  # tmp now holds the old index
        return
    old = out.with_name(f".{out.name}.old-{os.getpid()}")
    os.rename(out, old)
    os.rename(tmp, out)
    shutil.rmtree(old, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    name = ctypes.util.find_library("c")
    if not name:
        return False
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(name, use_errno=True)
        fn = libc.renameat2
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        return bool(fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0)
    return False


def read_index(path: str | Path) -> PrebuiltIndex:
    """Read and check the prebuilt index in folder ``path``.

    Raises:
        IndexDirError: missing folder or file, unreadable or invalid JSON, another format or
            format version, a hash that does not match (a corrupt or half-copied index), vectors
            of the wrong shape. The message is one line.
    """
    folder = Path(path)
    rebuild = f"build it with: toolscout index --out {folder}"
    if not folder.is_dir():
        raise IndexDirError(f"{folder}: no index folder there ({rebuild})")
    manifest = _json(folder, MANIFEST, rebuild)
    if manifest.get("format") != FORMAT:
        raise IndexDirError(f"{folder}: {MANIFEST} is not a toolscout index manifest ({rebuild})")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise IndexDirError(
            f"{folder}: index format version {version!r}, this toolscout reads version {FORMAT_VERSION} "
            f"(rebuild it: toolscout index --out {folder})"
        )
    found = manifest.get("hashes")
    hashes: dict[str, Any] = found if isinstance(found, dict) else {}
    raw = _bytes(folder, CATALOG, rebuild)
    if hashlib.sha256(raw).hexdigest() != hashes.get(CATALOG):
        raise IndexDirError(f"{folder}: {CATALOG} does not match its hash in {MANIFEST} (corrupt; {rebuild})")
    try:
        servers = tuple(_server(s) for s in json.loads(raw)["servers"])
    except (ValueError, KeyError, TypeError, IndexDirError) as exc:
        raise IndexDirError(f"{folder}: {CATALOG} is not a valid index catalog: {exc} ({rebuild})") from None
    vectors = None
    if VECTORS in hashes:
        blob = _bytes(folder, VECTORS, rebuild)
        if hashlib.sha256(blob).hexdigest() != hashes[VECTORS]:
            raise IndexDirError(f"{folder}: {VECTORS} does not match its hash in {MANIFEST} (corrupt; {rebuild})")
        try:
            import io

            vectors = np.load(io.BytesIO(blob), allow_pickle=False)
        except ValueError as exc:
            raise IndexDirError(f"{folder}: {VECTORS} is not a vector file: {exc} ({rebuild})") from None
        count = sum(len(s.tools) for s in servers)
        encoder = manifest.get("encoder")
        dim = encoder.get("dim") if isinstance(encoder, dict) else None
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise IndexDirError(f"{folder}: {MANIFEST} names no encoder (with a vector size) for {VECTORS} ({rebuild})")
        if vectors.dtype != np.float32 or vectors.shape != (count, dim):
            raise IndexDirError(
                f"{folder}: {VECTORS} holds {vectors.dtype}{list(vectors.shape)}, expected float32[{count}, {dim}] "
                f"({rebuild})"
            )
    return PrebuiltIndex(folder, manifest, servers, vectors)


def _bytes(folder: Path, name: str, rebuild: str) -> bytes:
    try:
        return (folder / name).read_bytes()
    except FileNotFoundError:
        raise IndexDirError(f"{folder}: no {name} (not a complete index; {rebuild})") from None
    except OSError as exc:
        raise IndexDirError(f"{folder}: cannot read {name}: {exc.strerror or exc}") from None


def _json(folder: Path, name: str, rebuild: str) -> dict[str, Any]:
    raw = _bytes(folder, name, rebuild)  # its IndexDirError is a ValueError too: outside the try
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise IndexDirError(f"{folder}: {name} is not valid JSON: {exc} ({rebuild})") from None
    if not isinstance(data, dict):
        raise IndexDirError(f"{folder}: {name} is not a JSON object ({rebuild})")
    return data


def _server(raw: dict[str, Any]) -> IndexedServer:
    name, kind, tools = raw["name"], raw["kind"], raw["tools"]
    if not isinstance(name, str) or kind not in ("mcp", "file") or not isinstance(tools, list):
        raise IndexDirError(f"bad server entry {str(name)[:80]!r}")
    description, instructions = raw.get("description"), raw.get("instructions")
    return IndexedServer(
        name,
        kind,
        description if isinstance(description, str) else None,
        instructions if isinstance(instructions, str) else None,
        tuple(tool_from_record(t) for t in tools),
        tuple(k if isinstance(k := t.get("vector_key"), str) else None for t in tools),
    )
