"""The engine's side of a prebuilt index: writing one from the catalog it has, and serving from
one before its servers have connected (:mod:`.index_files` is the format).

Writing (:func:`build_index`, ``toolscout index --out DIR``): every server's tools as the catalog
keeps them (listed definition and projection), each server's description and instructions as
the engine uses them, and one vector per tool from the encoder the search index ranks with
(texts already encoded come from the vector cache; its identity is read from that encoder).

Serving (:class:`PrebuiltCatalog`, a mixin of :class:`~.facade.Engine`): the index's tools are
registered for each configured server before it connects, so search answers from the start;
while the server connects its tools stay (a server that fails or disconnects loses them, as
without an index); its own ``tools/list`` then replaces them, and only tools whose definition
changed get a new vector (the rest keep theirs: same text, same content hash). The index's
vectors go to the process's vector cache before the search index is built
(:meth:`PrebuiltCatalog.seed_prebuilt_vectors`), only when the encoder this process loads has
the identity the index was built with; otherwise they are ignored (a warning says so) and the
tools are encoded again: vectors of two encoders are never mixed.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..catalog.registry import CatalogDelta, ToolCatalog
from ..models import ServerState, ServerStatus
from ..search.vector_cache import VECTOR_DIM
from .events import ServerStateChanged
from .index_files import (
    PrebuiltIndex,
    encoder_identity,
    record_hash,
    tool_record,
    write_index,
)

if TYPE_CHECKING:
    from ..mcp.pool import ServerPool
    from ..search.tool_search import ToolSearch
    from .progress import ProgressRelay

log = logging.getLogger(__name__)

#: Encoder identity fields that must be equal for the index's vectors to be used.
SAME_VECTORS = ("model_id", "dim", "model_sha256", "tool_pieces")


def build_index(catalog: ToolCatalog, search: ToolSearch, mcp_servers: set[str], out: Path) -> dict[str, Any]:
    """Write the prebuilt index of ``catalog`` to ``out`` (blocking: run it in a thread, after
    the search index is ready).

    Args:
        mcp_servers: names of configured MCP servers (the other servers came from catalog files).
        search: the engine's search; its index's encoder (None: the index has no vectors).

    Returns:
        The manifest written (:func:`~.index_files.write_index`).
    """
    from ..search.dense import cache_model, embed_tools, text_key
    from ..search.fields import dense_text
    from ..search.vector_cache import VectorCache

    encoder = search.index.encoder  # the encoder the index ranks with, if any
    servers: list[dict[str, Any]] = []
    texts: list[str] = []
    for name in sorted(catalog.servers()):
        description = catalog.server_descriptions.get(name)
        tools = []
        for tool in catalog.server_tools(name):
            record = tool_record(tool)
            text = dense_text(tool, description)
            texts.append(text)
            key = text_key(text, cache_model(encoder)) if encoder is not None else None
            tools.append({**record, "hash": record_hash(record), "vector_key": key})
        servers.append(
            {
                "name": name,
                "kind": "mcp" if name in mcp_servers else "file",
                "description": description,
                "instructions": catalog.instructions.get(name),
                "tools": tools,
            }
        )
    vectors = None
    if encoder is not None:  # memory hits for every indexed text; others (hidden tools) encoded
        vectors = embed_tools(encoder, texts, VectorCache(None)) if texts else np.zeros((0, VECTOR_DIM), np.float32)
    identity = encoder_identity(encoder) if encoder is not None else None
    return write_index(out, servers, vectors, identity)


class PrebuiltCatalog:
    """Serving from a prebuilt index (mixed into :class:`~.facade.Engine`; see the module doc).

    Attributes:
        prebuilt: the index in use, or None.
        indexed_servers: configured servers whose tools in the catalog are still the index's
            (their own listing has not arrived).
    """

    catalog: ToolCatalog
    pool: ServerPool
    search: ToolSearch
    progress: ProgressRelay
    _file_servers: dict[str, ServerStatus]
    warn: Callable[..., None]
    apply_delta: Callable[[CatalogDelta], None]
    emit: Callable[[Any], None]
    prebuilt: PrebuiltIndex | None = None
    indexed_servers: frozenset[str] = frozenset()

    def use_prebuilt_index(self, index: PrebuiltIndex) -> None:
        """Register the tools of ``index``: a configured MCP server's as that server's (until it
        lists its own), a catalog file's server as a file server (searchable, never called). An
        MCP server of the index that is not configured here, or that cannot start (an invalid
        entry, a folder not approved), is left out with a warning. Call before :meth:`start`,
        and :meth:`warm_prebuilt` after (dense encoding is held until it has run)."""
        self.prebuilt = index
        indexed = set(self.indexed_servers)
        added: list[str] = []
        for server in index.servers:
            cfg = self.pool.configs.get(server.name)
            if server.kind == "mcp" and (cfg is None or cfg.error or cfg.not_approved):
                why = "not configured here" if cfg is None else "it cannot start here"
                self.warn(f"{server.name}: its {len(server.tools)} tools in the index are not served ({why})", "index")
                continue
            delta = self.catalog.set_server_tools(server.name, server.tools, server.instructions, server.description)
            if server.kind == "mcp":
                indexed.add(server.name)
            else:
                status = ServerStatus(
                    server.name,
                    ServerState.CONNECTED,
                    instructions=server.instructions,
                    tool_count=len(server.tools),
                    transport="file",
                )
                self._file_servers[server.name] = status
                self.emit(ServerStateChanged(status))
            added += delta.added
        # one change for all (one search sync, not one per server); a live server's tools are
        # checked against their approvals when it lists them
        self.apply_delta(CatalogDelta(added=tuple(added)))
        self.indexed_servers = frozenset(indexed)
        if index.vectors is not None:  # no tool is encoded before the index's vectors are in (warm_prebuilt)
            self.search.hold_dense(True)  # the engine never holds it with an index (Engine._hold_encoding)

    def _seeds_vectors(self) -> bool:
        """True when the index has vectors and the configured ranking profile uses them."""
        from ..search.profiles import make_profile

        profile = make_profile(str(self.search.settings["toolSearch.ranker"]), None)
        return self.prebuilt is not None and self.prebuilt.vectors is not None and "dense" in profile.signals

    def write_prebuilt_index(self, out: Path) -> dict[str, Any]:
        """Write this engine's catalog and vectors as a prebuilt index to folder ``out``
        (:func:`build_index`; blocking: call it in a thread once the search index is ready).

        Raises:
            OSError: the folder cannot be written.
        """
        return build_index(self.catalog, self.search, set(self.pool.configs), out)

    def indexed_tools_stay(self, status: ServerStatus) -> bool:
        """Whether server ``status.name``'s tools stay in the catalog in ``status.state`` though
        it is not connected: True while it connects with its tools from the index. Any other
        state ends the index's part for it (its tools then go, as without an index)."""
        if status.name not in self.indexed_servers:
            return False
        if status.state is ServerState.CONNECTING:
            return True
        self.indexed_servers = self.indexed_servers - {status.name}
        return False

    def listed_live(self, server: str) -> None:
        """Server ``server`` listed its own tools: they replace the index's from now on."""
        if server in self.indexed_servers:
            self.indexed_servers = self.indexed_servers - {server}

    def seed_prebuilt_vectors(self) -> None:
        """Put the index's vectors into the process's vector cache when the encoder this process
        ranks with has the index's identity (:data:`SAME_VECTORS`); else warn that they are
        ignored. Blocking (loads the encoder): call it in a worker thread before the search
        index is built. A no-op without an index, without vectors or for a lexical profile."""
        index = self.prebuilt
        if index is None or not self._seeds_vectors():
            return
        from ..search import dense
        from ..search.vector_cache import VectorCache

        encoder = dense.load_encoder()
        if encoder is None:
            return  # no dense ranking here at all; the ranker status says why
        mine, theirs = encoder_identity(encoder), index.encoder or {}
        differ = [k for k in SAME_VECTORS if mine.get(k) != theirs.get(k)]
        if differ:
            self._warn_soon(
                f"{index.path}: built with encoder {_named(theirs, differ)}, this process ranks with "
                f"{_named(mine, differ)}: "
                f"the index's vectors are ignored and its {index.tool_count} tools are encoded again"
            )
            return
        VectorCache(None).put_many(index.vectors_by_key())

    def warm_prebuilt(self) -> None:
        """Build the search index (blocking: the gateway runs it in a daemon thread). With a
        prebuilt index, the lexical part is built in a second thread while this one loads the
        encoder and seeds the index's vectors (:meth:`seed_prebuilt_vectors`); the dense part is
        held from :meth:`use_prebuilt_index` until then, so no tool is encoded that the index has
        a vector for."""
        if not self._seeds_vectors():  # (imports the ranking modules: here, not on the handshake's path)
            self.search.hold_dense(False)
            self.search.warm()
            return
        lexical = threading.Thread(target=self.search.warm, name="toolscout-index-warm", daemon=True)
        lexical.start()
        try:
            self.seed_prebuilt_vectors()
        finally:
            self.search.hold_dense(False)
        lexical.join()

    def _warn_soon(self, message: str) -> None:
        """:meth:`warn` on the engine's loop (from a worker thread), or here when there is none."""
        loop = self.progress.loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self.warn, message, "index")
                return
        self.warn(message, "index")


def _named(identity: dict[str, Any], differ: list[str]) -> str:
    sha = identity.get("model_sha256")
    # beyond the model: the fields that differ (else two identities can read alike)
    more = "".join(f", {k} {identity.get(k)}" for k in differ if k not in ("model_id", "model_sha256"))
    return f"{identity.get('model_id') or '?'} (model sha256 {sha[:12] if isinstance(sha, str) else '?'}{more})"
