"""Which graph a workspace uses: the embedded Kùzu file (the default) or a FalkorDB server shared by a team.

Chosen per workspace, first match wins: the `KG_STORE` environment variable, then `[store] url` in the
workspace's kg.toml (written by `kg init --store URL`). A URL is `falkordb://[user@]HOST:PORT/GRAPH`
(`falkordbs://` for TLS). The password never goes into kg.toml: it comes from `KG_STORE_PASSWORD`, or from a
URL given in `KG_STORE` itself (an environment, never a committed file).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from kg.core.errors import UsageError

ENV_STORE = "KG_STORE"
ENV_PASSWORD = "KG_STORE_PASSWORD"
ENV_CA = "KG_STORE_CA"  # a CA bundle for a TLS server with a private certificate authority
SCHEMES = ("falkordb", "falkordbs")
_GRAPH = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


@dataclass(frozen=True)
class StoreUrl:
    host: str
    port: int
    graph: str
    tls: bool = False
    username: str | None = None
    password: str | None = None

    @property
    def public(self) -> str:
        """The URL without its password: safe for kg.toml, messages and logs."""
        user = f"{self.username}@" if self.username else ""
        host = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 address, as a URL writes it
        return f"{'falkordbs' if self.tls else 'falkordb'}://{user}{host}:{self.port}/{self.graph}"

    def __repr__(self) -> str:  # never print the password by accident
        return f"StoreUrl({self.public!r})"


def parse_url(text: str, *, allow_password: bool = True) -> StoreUrl:
    """A store URL, checked. `allow_password=False` for a URL that is about to be written to kg.toml."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError as exc:
        raise UsageError(f"the store URL {text!r} is not valid ({exc}); give falkordb://HOST:PORT/GRAPH") from None
    if parts.scheme not in SCHEMES:
        raise UsageError(f"the store URL must start with falkordb:// (or falkordbs:// for TLS), not "
                         f"{parts.scheme + '://' if parts.scheme else text!r}; give falkordb://HOST:PORT/GRAPH")
    graph = parts.path.strip("/") or "kg"
    if not _GRAPH.match(graph):
        raise UsageError(f"the graph name {graph!r} in the store URL may hold letters, digits, '_', '.' and '-' "
                         "only (at most 64)")
    if not parts.hostname:
        raise UsageError(f"the store URL {text!r} names no host; give falkordb://HOST:PORT/GRAPH")
    if port == 0:  # QA2 #7: taken for "no port" (6379), and the error then named a port never given
        raise UsageError(f"the store URL {text!r} names port 0, which no server listens on; give the server's port "
                         "(1-65535): falkordb://HOST:PORT/GRAPH, or leave it out for 6379")
    if parts.password and not allow_password:
        raise UsageError("the store URL holds a password, and kg.toml may be committed: give the URL without it "
                         f"and set {ENV_PASSWORD} in the environment (or give the whole URL in {ENV_STORE})")
    return StoreUrl(host=parts.hostname, port=port or 6379, graph=graph, tls=parts.scheme == "falkordbs",
                    username=unquote(parts.username) if parts.username else None,
                    password=unquote(parts.password) if parts.password else os.environ.get(ENV_PASSWORD) or None)


WORKSPACE_SLOT = "{workspace}"


def resolve(configured: str | None, root: Path | None = None) -> StoreUrl | None:
    """The workspace's store: `KG_STORE`, else the configured `[store] url`, else None (embedded Kùzu).
    `KG_STORE=kuzu` forces the embedded graph for one command. A `{workspace}` in `KG_STORE`'s graph name
    gives each workspace a graph of its own on that server (named for its folder: a CI job running many
    separate workspaces, such as the test suite's FalkorDB pass)."""
    env = os.environ.get(ENV_STORE, "").strip()
    if env:
        if WORKSPACE_SLOT in env and root is not None:
            key = hashlib.sha1(str(root).encode("utf-8")).hexdigest()[:10]
            env = env.replace(WORKSPACE_SLOT, f"{re.sub(r'[^A-Za-z0-9_-]', '_', root.name)[:20]}-{key}")
        return None if env.lower() == "kuzu" else parse_url(env)
    return parse_url(configured) if configured else None


def resolve_configured(table: Any) -> StoreUrl | None:
    """The store kg.toml's `[store]` table names (`KG_STORE` aside), or None for the embedded graph; a table kg
    cannot read counts as none (opening the workspace reports it)."""
    url = table.get("url") if isinstance(table, dict) else None
    if not isinstance(url, str) or not url.strip():
        return None
    try:
        return parse_url(url)
    except UsageError:
        return None


def lane(chosen: StoreUrl | None, configured: StoreUrl | None) -> str | None:
    """The journal lane for writes to `chosen` when the workspace is configured for `configured`
    (kg/ingest/journal.py): None when they are the same store, else `kuzu` or a fixed-length key of the server's
    address and graph (fixed length, so no lane's file names start with another's)."""
    if _same(chosen, configured):
        return None
    return own_lane(chosen)


def own_lane(store: StoreUrl | None) -> str:
    """The lane `store`'s writes take while the workspace is configured for another store: `kuzu` for the embedded
    graph, else a fixed-length key of the server's address and graph. The plain lane adopts it once the workspace
    is configured for `store` again (kg/ingest/journal.py)."""
    if store is None:
        return "kuzu"
    return hashlib.sha1(f"{store.host}:{store.port}/{store.graph}".encode()).hexdigest()[:12]


def _same(a: StoreUrl | None, b: StoreUrl | None) -> bool:
    if a is None or b is None:
        return a is b
    return (a.host.lower(), a.port, a.graph) == (b.host.lower(), b.port, b.graph)
