"""Rebuild a Kùzu graph whose full-text index kuzu 0.11.3 left half-dropped (issue 20).

kuzu 0.11.3 cannot replay a `DROP_FTS_INDEX` from its write-ahead log: after the replay the index is gone but its
hidden tables are not, so `CREATE_FTS_INDEX` fails for good ("Table: 1_node_fts_appears_info already exists",
"Cannot find table catalog entry with id 9223372036854775814"), and so does `CHECKPOINT`. The rows all read back
fine. (A kill in the middle of CREATE_FTS_INDEX can leave its hidden tables without the index: "Table:
1_node_fts_docs already exists"; repaired the same way.) `drop_fts` checkpoints right after the drop; a process
killed in between leaves such a graph, and the next writer's open (so also `kg doctor`) repairs it here: every
table exported as the graph reads now (its write-ahead log included), imported into a new file without the half-
dropped index, the index built, and the new file swapped in. The old file and its log are kept beside it as
`*.stale-fts-*`.

The swap is rolled forward by `finish` on the next open when a process dies during it: the intent file is written
once the new file is complete, the old log is moved aside before the new file replaces the old one, so the new file
never meets the old log and the old file never loses it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

from kg.store.values import db_size_args

# after a replayed drop (first three), or a kill in the middle of CREATE_FTS_INDEX (its hidden tables made, the
# index not): "Table: 1_node_fts_docs already exists"
_SIGNS = re.compile(r"Cannot find table catalog entry with id|Table: \d+_node_fts_\w+ already exists|"
                    r"Index with name node_fts already exists|\d+_node_fts_\w+ does not exist in catalog|"
                    r"Index node_fts is not loaded yet")
# the hidden tables of Kùzu's full-text index (`<table id>_node_fts_<part>`); `appears_info` lives during a build
_FTS_PARTS = ("docs", "terms", "appears_in", "appears_info")
_FTS_MACRO = re.compile(r"\s*CREATE MACRO `\d+_NODE_FTS_", re.I)
# The full-text index build's buffer pool, per node in the graph (kuzu 0.11.3 sorts every posting in its pool).
# Measured on bench/scale.py's 1M graph (2 threads, the build alone): a 1024 MB pool fails ("buffer pool is
# full"); 1280 MB builds it in 52 s of CPU at a 1.63 GiB peak, 1536 MB in 67 s at 1.87 GiB.
FTS_KB_PER_NODE = 1.25


def fts_pool_mb(nodes: int, floor: int) -> int:
    """The buffer pool (MB) that builds the full-text index of a graph of `nodes` nodes, never under `floor`."""
    return max(floor, int(nodes * FTS_KB_PER_NODE / 1024) + 1)


def drop_fts(store: Any) -> None:
    """Drop the full-text index, then checkpoint at once, so the drop is never replayed from the log (a
    plain close without a checkpoint, as kg's writers do, leaves the same graph as a kill). A kill between the
    two is repaired by `rebuild`. A team graph (FalkorDB: `store.backend`) has no such log."""
    from kg.store import _FTS_DROP

    store._execute_raw(_FTS_DROP, {})
    store.forget_prepared()
    if getattr(store, "backend", "kuzu") == "kuzu":
        store._execute_raw("CHECKPOINT", {})


def half_index(store: Any) -> str | None:
    """After a crash (a resumed import's open, which builds no index, or an open that found a cut-short bulk
    change): the full-text index missing while its hidden tables are there, a drop replayed half or a build cut
    short. Left alone, the import's next COPY failed ("Cannot find table catalog entry with id 2^63+12") and the
    workspace with it. Returns an error text `stale_fts` recognises, or None. A few catalogue calls."""
    if getattr(store, "backend", "kuzu") != "kuzu" or store.has_fts():
        return None
    ids = [r["id"] for r in store._execute_raw("CALL show_tables() RETURN id, name", {}) if r["name"] == "Node"]
    for part in _FTS_PARTS if ids else ():
        name = f"{ids[0]}_node_fts_{part}"
        try:
            store._execute_raw(f"CALL table_info('{name}') RETURN *", {})
        except Exception:  # noqa: BLE001 - not there: the expected case
            continue
        return f"Table: {name} already exists without its index node_fts"
    return None


def stale_fts(message: str) -> bool:
    """Whether an error is kuzu's answer on a graph whose full-text index was half-dropped by a WAL replay."""
    return bool(_SIGNS.search(message))


def _literal(path: Path) -> str:
    return "'" + str(path).replace("\\", "\\\\").replace("'", "\\'") + "'"


def _intent(path: Path) -> Path:
    return path.with_name(path.name + ".rebuild.json")


def rebuild(path: Path, kuzu: Any, fts_create: str, *, buffer_pool_mb: int, kept_as: str = "stale-fts") -> Path:
    """Export the graph at `path` (closed by the caller, whose lock is held), build the new file, swap it in.
    Returns where the old one is kept (`<name>.<kept_as>-<time>`; a compaction, kg/store/compact.py, deletes it).
    (A fresh handle exports: on the one whose CREATE_FTS_INDEX had just
    failed, kuzu 0.11.3 crashed with a segmentation fault.) The new file and the old one's copy live beside the
    file itself (a symbolic link's target), which the swap replaces: the link stays."""
    file = Path(os.path.realpath(path))
    work = file.with_name(f".rebuild-{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    export, new = work / "export", work / path.name
    db = kuzu.Database(str(path), buffer_pool_size=buffer_pool_mb * 1024 * 1024, **db_size_args())
    conn = kuzu.Connection(db)
    conn.execute("CALL force_checkpoint_on_close=false")  # a checkpoint fails on such a graph
    conn.execute(f"EXPORT DATABASE {_literal(export)} (format='parquet')")
    try:  # the new file builds the full-text index: at a million nodes the workspace's pool is too small
        result = conn.execute("MATCH (n:Node) RETURN count(n)")
        new_pool = fts_pool_mb(int(result.get_next()[0]), buffer_pool_mb)
    except Exception:  # noqa: BLE001 - the count is a sizing hint; the workspace's pool is the floor
        new_pool = buffer_pool_mb
    conn.close()
    db.close()
    schema = export / "schema.cypher"
    statements = schema.read_text(encoding="utf-8").split(";\n")
    schema.write_text(";\n".join(s for s in statements if not _FTS_MACRO.match(s)), encoding="utf-8")
    db = kuzu.Database(str(new), buffer_pool_size=new_pool * 1024 * 1024, **db_size_args())
    conn = kuzu.Connection(db)
    conn.execute(f"IMPORT DATABASE {_literal(export)}")
    if fts_create:  # (issue 22) a graph carries no full-text index of its own: ""
        conn.execute(fts_create)
    conn.execute("CHECKPOINT")
    conn.close()
    db.close()
    wal = new.with_name(new.name + ".wal")
    if wal.exists() and wal.stat().st_size == 0:
        wal.unlink()
    if wal.exists():
        raise RuntimeError(f"the rebuilt graph {new} kept a write-ahead log; the old graph is unchanged")
    backup = file.with_name(f"{file.name}.{kept_as}-{time.strftime('%Y%m%dT%H%M%S')}")
    _intent(path).write_text(json.dumps({"new": str(new), "backup": str(backup)}), encoding="utf-8")
    finish(path)
    return backup


def unfinished(path: Path) -> bool:
    """Whether a swap was cut short: the graph's name may still hold the old file, whose log was moved aside, so a
    read-only open (which cannot finish it) would read the graph as it was before that log."""
    return _intent(path).exists()


def finish(path: Path) -> bool:
    """Complete a swap that was cut short (idempotent; called on every open, one stat when there is none)."""
    intent = _intent(path)
    try:
        plan = json.loads(intent.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    new, backup = Path(plan["new"]), Path(plan["backup"])
    wal, backup_wal = path.with_name(path.name + ".wal"), backup.with_name(backup.name + ".wal")
    file = Path(os.path.realpath(path))  # (Kùzu's log sits beside the name it was given; the file at the target)
    if new.exists():  # not swapped yet: keep the old pair, move the old log aside, then the new file in
        if file.exists() and not backup.exists():
            os.link(file, backup)
        if wal.exists():
            os.replace(wal, backup_wal)
        os.replace(new, file)
    intent.unlink()
    shutil.rmtree(new.parent, ignore_errors=True)
    return True
