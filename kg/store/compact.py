"""Compaction: a Kùzu graph file rebuilt to the size of its data when it has grown far past it.

kuzu 0.11.3 reuses few of the pages a checkpoint frees: every checkpoint writes the column chunks a commit touched
anew and the old pages mostly stay behind as dead space. kg's log path touches the same chunks over and over (each
batch's new nodes and edges, the aggregate rows made anew: kg/store/remake.py), so the file grows superlinearly
with the entries: a QA pass's bulk ingest had 60 MB at 1k entries, 528 MB at 10k and 1.2 GB at ~13k, where every
write then failed ("Buffer manager exception: Unable to allocate memory! The buffer pool is full") and every read
took seconds. At 2k entries 72 MB held 29 MB of pages the tables use (`CALL storage_info`), and an export and
import of the same graph made 25 MB.

So whatever the cause, the file is bounded: when it is more than `store.compact_factor` times the pages its tables
use (summed from `storage_info`, a few milliseconds) and its size right after its last compaction (kept in
`graph.kuzu.compact.json`), and above `store.compact_floor_mb` (rules/policy.toml), it is
rebuilt by kg/store/rebuild.py's export, import and crash-safe swap (a kill in the swap is rolled forward by the
next open's `rebuild.finish`, and the compaction finished by its `settle`). Every table's row count is compared
before and after; when they agree the old file is deleted (its copy would double the disk the compaction was run to
free), else it is kept beside the graph and the report says where. `kg cycle` and `kg doctor` check it (`maybe`),
a bulk ingest between its batches (kg/ingest/drain.py), where the file grows fastest, and a writer's drain that
filled Kùzu's buffer pool (drain.py `recovering`).

The side index (memory/.kg/search.sqlite) keys nodes by their offsets in the node table, which the import
renumbers: it is marked stale as a whole and reread by its next sync.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg.core.errors import StoreError

MB = 1024 * 1024
PAGE = 4096  # Kùzu's page size: `storage_info`'s `num_pages` are of these
KEPT_AS = "compacted"  # the old file's name while the swap runs: graph.kuzu.compacted-<time>
_RECHECK = 1.1  # between a bulk drain's batches, `storage_info` is asked again once the file grew by this much


def full_pool_mb(policy: Any) -> int:
    """The buffer pool of a compaction run because an apply filled Kùzu's: `store.full_pool_factor` times the
    workspace's `store.buffer_pool_mb`, and at least `store.full_pool_floor_mb` (rules/policy.toml): the export and
    the import are databases of their own, and the pool that just filled is the one not to bet on."""
    return max(int(policy.full_pool_factor * policy.buffer_pool_mb), policy.full_pool_floor_mb)


@dataclass
class Compacted:
    before: int  # bytes: the graph file and its write-ahead log
    after: int
    live: int  # bytes of pages the tables used before
    kept: str = ""  # the old file, when the counts did not agree (kept for a person to look at)

    def text(self) -> str:
        said = f"rebuilt the graph file compact: {_mb(self.before)} → {_mb(self.after)} ({_mb(self.live)} of data)"
        if self.kept:
            said += f"; the row counts differed, so the old file is kept at {self.kept}"
        return said

    def as_dict(self) -> dict[str, Any]:
        return {"before_bytes": self.before, "after_bytes": self.after, "live_bytes": self.live, "kept": self.kept}


def _mb(n: int) -> str:
    return f"{n / MB:.1f} MB"


def sizes(path: Path) -> int:
    """The bytes the graph takes on disk: its file (a symbolic link's target) and its write-ahead log."""
    total = 0
    for p in (Path(os.path.realpath(path)), path.with_name(path.name + ".wal")):
        try:
            total += p.stat().st_size
        except OSError:
            pass
    return total


def file_bytes(path: Path) -> int:
    try:
        return Path(os.path.realpath(path)).stat().st_size
    except OSError:
        return 0


def live_bytes(st: Any) -> int:
    """The bytes of the pages every table uses in the graph file (`storage_info`: checkpointed data only; what
    the write-ahead log holds is not in the file yet either)."""
    total = 0
    for (name,) in _tables(st):
        rows = st._execute_raw(f"CALL storage_info('{name}') RETURN sum(num_pages) AS pages", {})
        total += int(rows[0]["pages"] or 0) if rows else 0
    return total * PAGE


def _tables(st: Any) -> list[tuple[str]]:
    """The catalogue's tables, their names checked before they are formatted into a statement."""
    from kg.store.remake import _name

    return [(_name(r["name"]),) for r in st._execute_raw("CALL show_tables() RETURN name", {})]


def counts(st: Any) -> dict[str, int]:
    """Every table's rows (node tables) or edges (relationship tables)."""
    from kg.store.remake import _name

    out = {}
    for r in st._execute_raw("CALL show_tables() RETURN name, type", {}):
        name = _name(r["name"])
        q = f"MATCH (n:{name}) RETURN count(n) AS c" if r["type"] == "NODE" else \
            f"MATCH ()-[e:{name}]->() RETURN count(e) AS c"
        out[name] = int(st._execute_raw(q, {})[0]["c"])
    return out


def due(file: int, live: int, factor: float, floor_mb: int, last: int = 0) -> bool:
    """Whether a graph file of `file` bytes, whose tables use `live`, is to be rebuilt (pure). `last`: the file's
    size right after the last compaction, which is more than its tables' pages (2k entries: 23 MB for 6.6 MB; the
    import leaves free pages, which later writes reuse): measured against `live` alone, it was rebuilt again after
    every batch."""
    return file > floor_mb * MB and file > factor * max(live, last, PAGE)


def _last_path(path: Path) -> Path:
    return path.with_name(path.name + ".compact.json")


def last_size(path: Path) -> int:
    """The file's size right after its last compaction (0: never compacted, or not known). Kept with the file's
    inode: a graph put in its place since (a restore, a new graph `kg doctor --repair` started) is another file,
    whose threshold an old, larger size would have held off."""
    try:
        kept = json.loads(_last_path(path).read_text(encoding="utf-8"))
        if kept["inode"] != Path(os.path.realpath(path)).stat().st_ino:
            return 0
        return int(kept["after"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def embedded(st: Any) -> bool:
    return getattr(st, "backend", "kuzu") == "kuzu" and not getattr(st, "read_only", False)


def maybe(st: Any, policy: Any, *, between: bool = False, pool_mb: int | None = None) -> Compacted | None:
    """Compact the open graph `st` (no transaction open; its lock held) when it is `due`. `between` (a bulk
    drain's batches): `storage_info` is asked again only once the file grew past what the last answer allowed.
    `pool_mb`: the rebuild's buffer pool, when not the workspace's (`full_pool_mb`)."""
    if not embedded(st):
        return None
    file = file_bytes(st.path)
    if file <= policy.compact_floor_mb * MB:
        return None
    if between and file < st.__dict__.get("_compact_next", 0):
        return None
    last = last_size(st.path)
    if file <= policy.compact_factor * last:
        return None
    live = live_bytes(st)
    if not due(file, live, policy.compact_factor, policy.compact_floor_mb, last):
        st.__dict__["_compact_next"] = max(policy.compact_factor * live, file * _RECHECK)
        return None
    return run(st, pool_mb or policy.buffer_pool_mb, live)


def _record_path(path: Path) -> Path:
    return path.with_name(path.name + ".compacting.json")


def settle(st: Any) -> None:
    """At a writer's open (its lock held, a cut-short swap rolled forward by `rebuild.finish`): finish what a
    compaction a kill cut short left. Its record (`graph.kuzu.compacting.json`, written before the rebuild with
    every table's row count) says one ran: its work folder goes (the old file is the graph: nothing was swapped),
    and an old file the roll-forward kept beside the graph is deleted when the graph's counts are the record's,
    else kept as `uncompacted-*` for a person to look at, as the compaction itself does. Without it the old file
    (the whole graph before the compaction) stayed until the next `kg doctor` or compaction. One stat when no
    compaction was cut short."""
    if not embedded(st):
        return
    record = _record_path(st.path)
    try:
        had = json.loads(record.read_text(encoding="utf-8"))["counts"]
    except FileNotFoundError:
        return
    except (OSError, ValueError, KeyError, TypeError):
        had = None  # unreadable: whatever is left is kept (`kg status` and `kg doctor` name it)
    from kg.store import rebuild as _rebuild

    if _rebuild._intent(st.path).exists():
        return  # (`finish` did not run: a read-only open) the old file may be all there is
    file = Path(os.path.realpath(st.path))
    for work in file.parent.glob(".rebuild-*"):  # a rebuild's folder: the lock is held, so none is running
        shutil.rmtree(work, ignore_errors=True)
    left = leftovers(st.path)
    try:
        if left and had is not None:
            same = counts(st) == had
            for p in left:
                if same:
                    p.unlink(missing_ok=True)
                else:
                    os.replace(p, p.with_name(p.name.replace(f".{KEPT_AS}-", ".uncompacted-")))
        if had is not None:
            record.unlink(missing_ok=True)
    except (StoreError, OSError):
        return  # kept, record and all: the next writer's open tries again (the open itself goes on)


def kept(path: Path) -> list[Path]:
    """Old files of a compaction left beside the graph that no open resolves: kept because the row counts
    differed (`uncompacted-*`), or of a compaction with no record of its counts (`compacted-*`: `kg doctor`
    deletes those)."""
    file = Path(os.path.realpath(path))
    return sorted(p for p in file.parent.glob(f"{file.name}.*compacted-*") if not p.name.endswith(".wal"))


def leftovers(path: Path) -> list[Path]:
    """Old files of compactions whose swap a kill cut short: rolled forward by the next open (`rebuild.finish`),
    which keeps the old file, as it does for every rebuild; a compaction's is dead weight once the swap is done."""
    from kg.store import rebuild as _rebuild

    if _rebuild._intent(path).exists():
        return []  # the swap is not finished: the old file may be all there is
    file = Path(os.path.realpath(path))
    return sorted(file.parent.glob(f"{file.name}.{KEPT_AS}-*"))


def run(st: Any, buffer_pool_mb: int, live: int | None = None) -> Compacted:
    """Rebuild the open graph `st` compact, on the same handle (its lock held throughout)."""
    from kg.store import rebuild as _rebuild
    from kg.store import sideindex as _side
    from kg.store import sidestate as _sidestate
    from kg.store.kuzu_import import import_kuzu

    if getattr(st, "_in_tx", False):
        raise StoreError("the graph cannot be compacted inside a transaction")
    live = live_bytes(st) if live is None else live
    before, had = sizes(st.path), counts(st)
    from kg.core.files import write_atomic

    record = _record_path(st.path)  # for the next open, should a kill cut this short (`settle`)
    write_atomic(record, json.dumps({"counts": had}).encode())
    kept: list[Path] = []
    failed: list[BaseException] = []

    def rebuilt() -> None:  # while the handle is closed; a failure reopens the graph as it was, then is raised
        try:
            kept.append(_rebuild.rebuild(st.path, import_kuzu(), "", buffer_pool_mb=buffer_pool_mb, kept_as=KEPT_AS))
        except Exception as exc:  # noqa: BLE001 - raised below, once the graph is open again
            failed.append(exc)
            if not _rebuild._intent(st.path).exists():  # (written once the new file is whole: the swap goes on)
                shutil.rmtree(Path(os.path.realpath(st.path)).with_name(f".rebuild-{os.getpid()}"), ignore_errors=True)

    st.reopen(between=rebuilt)
    if failed:
        if not _rebuild._intent(st.path).exists():
            record.unlink(missing_ok=True)
        raise StoreError(f"the graph file was not compacted: {failed[0]}; the graph is as it was")
    st.__dict__.pop("_compact_next", None)
    side = _side.path_of(st.path)
    if side.exists():  # node offsets were renumbered by the import
        _sidestate.mark_stale(side, (), everything=True)
    backup = kept[0]
    if counts(st) != had:  # renamed: a leftover (below) is deleted, this one is for a person to look at
        aside = backup.with_name(backup.name.replace(f".{KEPT_AS}-", ".uncompacted-"))
        os.replace(backup, aside)
        if backup.with_name(backup.name + ".wal").exists():
            os.replace(backup.with_name(backup.name + ".wal"), aside.with_name(aside.name + ".wal"))
        record.unlink(missing_ok=True)
        return Compacted(before, sizes(st.path), live, kept=str(aside))
    for p in {backup, backup.with_name(backup.name + ".wal"), *leftovers(st.path)}:  # (and a killed compaction's)
        p.unlink(missing_ok=True)
    record.unlink(missing_ok=True)
    file = Path(os.path.realpath(st.path)).stat()
    write_atomic(_last_path(st.path), json.dumps({"after": file.st_size, "inode": file.st_ino}).encode())
    return Compacted(before, sizes(st.path), live)
