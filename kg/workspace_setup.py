"""Making a workspace (`kg init`): its folders and graph, and, for a team, the server tried and named in kg.toml
only once it works, with the writes waiting for the store it replaces settled first."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kg.core.errors import KgError, StoreError
from kg.ingest import drain
from kg.ingest.journal import Journal
from kg.workspace import GRAPH_FILE, Workspace
from kg.workspace_root import MARKER, check_marker, check_path


def init_workspace(path: str | os.PathLike[str], *, rules_dir: Path | None = None,
                   store: str | None = None, force: bool = False) -> Workspace:
    """Make (or re-open) a workspace at `path`: the memory folders and an empty graph. Idempotent. With
    `store` (falkordb://HOST:PORT/GRAPH) its graph is a team's on that server, named in kg.toml; an embedded
    workspace that holds entries is moved only with `force` (they stay in its embedded graph: `_left_behind`)."""
    root = check_path(Path(path).expanduser().resolve())
    check_marker(root)
    # the outermost folder this call makes (a missing parent too), removed again when a team server refuses
    made = next((folder for folder in (*reversed(root.parents), root, root / "memory") if not folder.exists()), None)
    if store:
        from kg.store.team import check_store, configure, reach, trial

        # before anything is written: a bad URL or a kg.toml kg may not edit (bad input), then a server that does
        # not answer (a kg.toml naming a server kg cannot reach left the workspace unable to log at all: a new
        # member's ids need its number from there)
        parsed = check_store(store)
        configure(root, store, dry_run=True)
        if not force:
            _left_behind(root, store)
        reach(parsed)
    new = not (root / MARKER).exists()  # a used workspace without ids.json is rebuilt by the open below
    try:
        for sub in (MARKER, Path("memory") / "sessions", Path("memory") / "skills"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        if new:  # no id given out yet (a missing ids.json reads as damaged: kg/ingest/ids_rebuild.py)
            Journal(root / MARKER, timeout=30.0).start_ids()
    except OSError as exc:
        raise StoreError(f"cannot create the workspace at {root}: {exc.strerror}; choose a folder you can "
                         "write to") from None
    if store:
        try:
            trial(Workspace(root, rules_dir=rules_dir), parsed)  # before anything names the server
        except KgError:
            if made is not None:
                import shutil

                shutil.rmtree(made, ignore_errors=True)  # no half-made workspace
            raise
        _settle_pending(root, parsed, rules_dir)
        configure(root, store)
    ws = Workspace(root, rules_dir=rules_dir)
    with ws.store():
        pass
    return ws


def _left_behind(root: Path, store: str) -> None:
    """Refuse (bad input) to move an embedded workspace that holds entries to a team graph: every command then
    reads the team's graph and what was logged here stays in the embedded one, unseen (`kg status` went from 49
    events to 0 without a word). Says how to carry them over, or to move without them."""
    from kg.core.errors import UsageError
    from kg.ingest.journal import read_ids
    from kg.store.team import configured_url

    if configured_url(root) is not None:  # a team workspace already: its entries are on its server
        return
    given = read_ids(root / MARKER / "ids.json")
    held = (f"{given:,} id(s) given out, memory/.kg/ids.json" if given else _held_without_ids(root))
    if not held:
        return
    raise UsageError(
        f"this workspace's embedded graph holds what kg logged here ({held}), "
        "and the team graph does not: every command would read the team graph and leave them unseen. To carry them "
        f"over: `kg export trail`, then `kg init --store {store} --force`, then `kg import trail` (in the workspace "
        "that made the team graph, member 1). To move without them, pass --force: they stay in the embedded graph "
        "(`KG_STORE=kuzu kg list`)")


def _held_without_ids(root: Path) -> str | None:
    """What the embedded graph holds when ids.json does not say (missing or damaged: the next open rebuilds it
    from the graph): entries waiting in the journal, else the graph's nodes, counted read-only. None when both
    are empty; a graph that cannot be read is taken to hold entries (moving is then refused, --force moves)."""
    from kg.core.errors import SchemaError
    from kg.store import Store

    kg_dir = root / MARKER
    if Journal(kg_dir, timeout=30.0).has_pending():
        return "entries logged here still waiting in memory/.kg/ to be applied"
    graph = kg_dir / GRAPH_FILE
    if not graph.exists():
        return None
    try:
        with Store.open(graph, lock_path=kg_dir / "graph.lock", read_only=True, lock_timeout=30.0,
                        buffer_pool_mb=64, max_threads=1) as st:
            n = int(st.run("bulk_node_count")[0]["n"])
    except (StoreError, SchemaError):
        return f"{GRAPH_FILE} in memory/.kg/, which kg could not read to count them"
    return f"{n:,} node(s) in its graph, memory/.kg/{GRAPH_FILE}" if n else None


def _settle_pending(root: Path, new: Any, rules_dir: Path | None) -> None:
    """Writes waiting in the journal's plain lane were made for the store kg.toml named until now, and once
    `[store]` names another the plain lane is the new store's (kg/ingest/journal.py). So they are applied where
    they were made first (when this process writes to that store), and whatever is left moves to that store's own
    lane, where `kg doctor` names it: never into the new store, whose ids they could collide with."""
    from kg.store.backend import lane, resolve_configured

    old = Workspace(root, rules_dir=rules_dir)
    to = lane(resolve_configured(old._store_conf), new)
    plain = Journal(old.kg_dir, timeout=old.lock_timeout)
    if to is None or not plain.has_pending():
        return
    try:
        if old.journal.lane is None:
            old.drain()
    except KgError:
        pass  # (the old store busy or away) they wait in its lane
    if plain.hand_over(to):
        drain.warn(f"writes made for the store this workspace used until now could not be applied to it; they wait in "
             f"memory/.kg/ (lane {to}) for a kg command run against it"
             + (" (`KG_STORE=kuzu kg status` applies them to the embedded graph)" if to == "kuzu" else ""))
