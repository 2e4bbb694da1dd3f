"""`kg doctor`'s checks of the graph itself: the file (missing, empty, over ids given out), its schema and
tables, a team server's logging, the retired full-text index, the side index (search and linking) and the
pattern aggregates. kg/doctor/__init__.py runs them in order with the workspace's other checks."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from kg.core.errors import KgError

if TYPE_CHECKING:
    from kg.doctor import DoctorReport


def _graph_file(ws: Any, report: DoctorReport, repair: bool) -> bool:
    """False when the graph is missing or empty while ids were given out (and was not repaired)."""
    from kg.ingest.recover import reimport

    if getattr(ws, "store_url", None) is not None:
        return True  # a team graph is on its server: there is no file here to be missing
    path = ws.graph_path
    empty = not path.exists() or path.stat().st_size == 0
    why = ws._acknowledged() if empty else None
    if not why:
        return True
    if not repair:
        report.add("graph", "error", f"{path.relative_to(ws.root)} is {'empty' if path.exists() else 'missing'} "
                   f"but {why}. Restore it from a backup, or run `kg doctor --repair` to start a new graph "
                   "rebuilt from memory/.learning-trail.json and .learnings/ when present")
        return False
    aside = ""
    if path.exists():
        target = path.with_name(f"{path.name}.empty-{time.strftime('%Y%m%d-%H%M%S')}")
        os.replace(path, target)
        aside = f"; the empty file was kept as {target.name}"
    ws._allow_new_graph = True
    try:
        with ws.store():
            pass
        imported = reimport(ws)
    finally:
        ws._allow_new_graph = False
    report.add("graph", "repaired", f"started a new graph{aside}; {imported}")
    return True


def _graph_crashes(ws: Any, report: DoctorReport, repair: bool, dry_run: bool) -> bool:
    """(QA #6) Whether Kùzu crashes opening the graph file, asked of a child process before doctor opens it itself
    (kg/store/probe.py): kuzu 0.11.3 ends the process with a segmentation fault on some damaged files, doctor
    included, saying nothing. True when it does and the file is still there (said, with what --repair brings back);
    with `repair` the file is kept aside and a new graph started, as for a file Kùzu refuses with an error. Unless
    `dry_run`, a mark is left that makes every other command ask too, and say it, instead of crashing."""
    if getattr(ws, "store_url", None) is not None or not ws.graph_path.is_file():
        return False
    from kg.core.errors import GraphUnopenable
    from kg.ingest.recover import start_over
    from kg.store import probe
    from kg.store.lock import FileLock

    lock = FileLock(ws.kg_dir / "graph.lock", timeout=ws.lock_timeout, shared=True)  # beside readers, not a writer
    try:
        lock.acquire()
    except KgError:
        return False  # held (or a read-only folder's lock file): the open below says it as every command does
    try:
        how = probe.crashes(ws.graph_path)
        if how is None:
            if not dry_run:  # (a kill during an open left them: the file is sound)
                probe.unmark(probe.left_marks(ws.graph_path))
            return False
    finally:
        lock.release()
    status, detail = start_over(ws, GraphUnopenable(probe.crashed_text(ws.graph_path, how)), repair)
    report.add("graph", status, detail)
    if status != "repaired":
        if not dry_run:
            probe.crashed(ws.graph_path)  # so the next command says it too, instead of crashing on it first
        return True
    probe.unmark(probe.left_marks(ws.graph_path))  # the damaged file's marks: the new graph opens
    return False


# the hidden tables of kuzu 0.11.3's full-text index: a complete index has the last three; a build holds the
# first while it runs and leaves it behind when it fails (a timeout, a full buffer pool) or is killed
_FTS_HIDDEN = ("appears_info", "docs", "terms", "appears_in")


def _fts_leftovers(ws: Any) -> list[str]:
    """Hidden tables of the full-text index left without it, or of a build that did not finish (issue 20): every
    later CREATE_FTS_INDEX fails on them ("Table: 1_node_fts_appears_info already exists"), so each writer's open
    rebuilds the graph. A read-only look; [] when the graph cannot be opened (`_graph` reports why)."""
    if ws.store_url is not None:
        return []
    from kg.store import FTS_NAME, Store

    try:
        with Store.open(ws.graph_path, lock_path=ws.kg_dir / "graph.lock", read_only=True,
                        lock_timeout=ws.lock_timeout) as st:
            if st is None:
                return []
            ids = [r["id"] for r in st._execute_raw("CALL SHOW_TABLES() RETURN id, name", {}) if r["name"] == "Node"]
            if not ids:
                return []
            found = []
            for part in _FTS_HIDDEN:
                name = f"{int(ids[0])}_{FTS_NAME}_{part}"
                try:
                    st._execute_raw(f"CALL table_info('{name}') RETURN count(*) AS n", {})
                except KgError:
                    continue
                found.append(name)
            complete = st.has_fts() and not any(n.endswith("_appears_info") for n in found)
            return [] if complete else found
    except (KgError, OSError):
        return []


def _unmark_fts(ws: Any) -> None:
    """Take a graph's mark of having no full-text index cleanly (`Store.fts_retired`) away, so that its next
    writer's open checks for an index's hidden tables and rebuilds the graph without them."""
    from kg.store import FTS_RETIRED

    try:
        with ws.store() as st:
            st.execute("MATCH (m:Meta {key: $key}) DELETE m", {"key": FTS_RETIRED})
    except KgError:
        pass  # `_graph` reports what is wrong


def _left_text(leftovers: list[str]) -> str:
    return (f"hidden tables of a full-text index build that failed or was cut short are left without the index "
            f"({', '.join(leftovers)})")


def _graph(ws: Any, report: DoctorReport, dry_run: bool, leftovers: list[str] | None = None,
           repair: bool = False) -> None:
    from kg.core.errors import GraphUnopenable

    early, first = _before_drain(ws, dry_run)
    try:
        with ws.store() as st:
            repairs = early + list(getattr(st, "repairs", []))
            fts = st.has_fts()
            deferred = _retire_waits(st) if fts else None
            drained = ws._last_drain
            aggregate = _aggregate(ws, st, dry_run)
            lists = _lists(st, dry_run)
            side = _search_index(ws, st, dry_run)
            merged = _merged_tables(st)
            logged = _team_server(st)
            size = first or _size(ws, st, dry_run)  # last: a compaction closes and reopens the handle
    except GraphUnopenable as exc:
        from kg.ingest.recover import start_over

        report.add("graph", *start_over(ws, exc, repair))
        return
    except KgError as exc:
        report.add("graph", "error", str(exc))
        return
    if aggregate:
        report.add(*aggregate)
    for found in lists:
        report.add(*found)
    where = ws.store_url.public if getattr(ws, "store_url", None) is not None else ws.graph_path.relative_to(ws.root)
    report.add("graph", "ok", f"{where} opens; its schema is current")
    if size:
        report.add(*size)
    report.add(*merged)
    for found in logged:
        report.add(*found)
    from kg.store.retire import NOT_DROPPED

    waits = [r for r in repairs if r.startswith(NOT_DROPPED)]  # (the old index's drop waits for room: a warning)
    repairs = [r for r in repairs if not r.startswith(NOT_DROPPED)]
    if repairs:
        report.add("full-text index", "repaired", "; ".join(([_left_text(leftovers)] if leftovers else []) + repairs))
    elif leftovers:  # the writer's open did not repair them (it would have said so)
        report.add("full-text index", "error", f"{_left_text(leftovers)}, and the graph's open did not rebuild it")
    elif fts and getattr(ws, "store_url", None) is None:  # an old graph's, whose drop waits (kg/store/retire.py)
        report.add("full-text index", "warning", waits[0] if waits else deferred or
                   "the old full-text index node_fts is still in the graph: the next writer's open drops it")
    else:
        team = getattr(ws, "store_url", None) is not None  # a team graph keeps its own index (issue 22: the
        report.add("full-text index", "ok" if fts or not team else "error",  # embedded one none: the side index)
                   "node_fts is present" if fts else "node_fts is missing" if team else
                   "none in the graph: the side index serves search and linking")
    if side:
        report.add(*side)
    if "_doctor_lost" in ws.__dict__:
        _restore(ws, report)
    if drained.applied or drained.sessions or drained.rejected:
        done = ([f"applied {drained.applied} waiting entr(y/ies)"] if drained.applied else []) + (
            [f"made {drained.sessions} session start(s) journaled while the graph was held"] if drained.sessions
            else []) + ([f"set aside {drained.rejected} line(s)"] if drained.rejected else [])
        report.add("journal", "repaired", "; ".join(done))


def _graph_looked_at(ws: Any, report: DoctorReport) -> None:
    """`--dry-run`: the graph opened read-only, as a one-off reader opens it. A writer's open changes it (it applies
    the journal, migrates, drops an old graph's node_fts, brings the side index in step): a check-only run leaves
    all of that to `kg doctor` and says what it would do."""
    from kg.core.errors import GraphUnopenable, NewerGraph, SchemaError
    from kg.store import Store

    team = getattr(ws, "store_url", None) is not None
    if not team and not ws.graph_path.exists():
        report.add("graph", "ok", "no graph yet: the first write makes it")
        return
    try:
        with Store.open(ws.graph_path, lock_path=ws.kg_dir / "graph.lock", read_only=True,
                        lock_timeout=ws.lock_timeout,
                        queries_dir=ws.rules.rules_dir / "queries" if ws.rules.rules_dir else None,
                        url=ws.store_url) as st:  # read-only: no origin stamp, so no member number asked for
            from kg.workspace_zone import check_store

            check_store(ws, st, read_only=True)  # the store's zone, whatever the mirror says (the clock check)
            fts, retired = st.has_fts(), getattr(st, "fts_retired", bool)()
            waits = _retire_waits(st) if fts and not team else None
            aggregate = _aggregate(ws, st, True)
            lists = _lists(st, True)
            side = _search_index(ws, st, True)
            merged = _merged_tables(st)
            logged = _team_server(st)
            size = _size(ws, st, True)
    except NewerGraph as exc:  # (QA #9) doctor cannot upgrade kg: it said "(`kg doctor` does it)" and exit 0
        report.add("graph", "error", str(exc))
        return
    except SchemaError as exc:  # a migration not applied yet: the writer's open applies it
        report.add("graph", "warning", f"{exc} (`kg doctor` does it)")
        return
    except GraphUnopenable as exc:  # what --repair would bring back, as `kg doctor` says it (not "run kg doctor")
        from kg.ingest.recover import start_over

        report.add("graph", *start_over(ws, exc, False))
        return
    except KgError as exc:
        report.add("graph", "error", str(exc))
        return
    if aggregate:
        report.add(*aggregate)
    for found in lists:
        report.add(*found)
    where = ws.store_url.public if team else ws.graph_path.relative_to(ws.root)
    report.add("graph", "ok", f"{where} opens read-only; its schema is current")
    if size:
        report.add(*size)
    report.add(*merged)
    for found in logged:
        report.add(*found)
    if team:
        report.add("full-text index", "ok" if fts else "error", "node_fts is present" if fts else "node_fts is missing")
    elif fts:
        report.add("full-text index", "warning", waits or "the old full-text index node_fts is still in the graph "
                   "(nothing asks it): the next writer's open, or `kg doctor`, drops it")
    elif not retired:
        report.add("full-text index", "warning", "none in the graph, but the graph is not marked as having dropped "
                   "it cleanly: the next writer's open, or `kg doctor`, checks and marks it")
    else:
        report.add("full-text index", "ok", "none in the graph: the side index serves search and linking")
    if side:
        report.add(*side)


def _before_drain(ws: Any, dry_run: bool) -> tuple[list[str], tuple[str, str, str] | None]:
    """A grown graph with entries waiting is compacted before they are applied: a file grown past what Kùzu's
    buffer pool holds fails every apply ("the buffer pool is full"), and so the writer's open, which applies them
    first, and `kg doctor` with it. (The open's repairs, and what the compaction did, when it did something.)"""
    from kg.store import compact

    if dry_run or getattr(ws, "store_url", None) is not None or not ws.journal.has_pending():
        return [], None
    if compact.file_bytes(ws.graph_path) <= ws.policy.compact_floor_mb * compact.MB:
        return [], None
    try:
        with ws.store(apply_journal=False) as st:
            repairs, size = list(getattr(st, "repairs", [])), _size(ws, st, dry_run)
    except KgError:
        return [], None  # the writer's open after says what is wrong
    return repairs, size if size is not None and size[1] != "ok" else None


def _size(ws: Any, st: Any, dry_run: bool) -> tuple[str, str, str] | None:
    """The graph file against the data it holds (kg/store/compact.py): rebuilt compact when past its rule
    (`store.compact_factor`, `store.compact_floor_mb`), a crash-safe swap that loses nothing, so a plain `kg doctor`
    does it; a dry run says it would. A team graph's server keeps its own storage: nothing to say."""
    from kg.store import compact

    if getattr(st, "backend", "kuzu") != "kuzu":
        return None
    file, live, last = compact.file_bytes(st.path), compact.live_bytes(st), compact.last_size(st.path)
    said = f"the file is {file / compact.MB:.1f} MB for {live / compact.MB:.1f} MB of data"
    left = compact.leftovers(st.path)
    if left and not dry_run:  # a killed compaction's old file, its swap rolled forward by this open
        for p in left:
            p.unlink(missing_ok=True)
        said += f"; removed {', '.join(p.name for p in left)}, the old file of a compaction a kill cut short"
    kept = [p for p in compact.kept(st.path) if p not in left or dry_run]
    if kept:  # what no open resolves: the counts differed, or a compaction that left no record of them
        said += (f"; kept beside it: {', '.join(p.name for p in kept)}, the old file of a compaction whose row "
                 "counts differed from the rebuilt graph's (or were not recorded), a copy of the whole graph as it "
                 "was: compare it with the graph, then delete it")
    if not compact.due(file, live, ws.policy.compact_factor, ws.policy.compact_floor_mb, last):
        return ("graph size", "warning" if kept else "repaired" if left and not dry_run else "ok", said)
    if dry_run:
        return ("graph size", "warning", f"{said}, past store.compact_factor {ws.policy.compact_factor:g}: `kg "
                "doctor` rebuilds it compact")
    with ws._mutex:
        try:
            done = compact.run(st, ws.policy.buffer_pool_mb, live)
        except (KgError, RuntimeError, OSError) as exc:
            return ("graph size", "error", f"{said}; {exc}")
    return ("graph size", "warning" if done.kept else "repaired", done.text())


def _team_server(st: Any) -> list[tuple[str, str, str]]:
    """A team graph's server: its logging (`_team_log`) and the copies of the graph a killed process left."""
    found = [_team_log(st)]
    if getattr(st, "effects_threshold", None) is not None:
        from kg.store.team import left_copies

        left = left_copies(st)
        if left:
            found.append(("team server", "warning", "copies of the team graph left by killed processes of this "
                          f"machine: {', '.join(left)}; the next `kg cycle --dry-run`, `kg export graph` or "
                          "snapshot drops them"))
    return [f for f in found if f is not None]


def _team_log(st: Any) -> tuple[str, str, str] | None:
    """A team graph's server: how it logs writes to its append-only file (kg/store/falkor_server.py). Replayed
    from their effects after a kill -9, FalkorDB 1.4.1 brought back a graph upgraded by migration 0011 without
    the keyword counts it had acknowledged; replayed as queries, it did not."""
    read = getattr(st, "effects_threshold", None)
    if read is None:
        return None  # the embedded graph
    from kg.store.falkor_server import EFFECTS_THRESHOLD_US

    got = read()
    if got is None:
        return ("team server", "warning", "could not read its EFFECTS_THRESHOLD (GRAPH.CONFIG): make sure the "
                f"module is loaded with EFFECTS_THRESHOLD {EFFECTS_THRESHOLD_US}")
    if got < EFFECTS_THRESHOLD_US:
        return ("team server", "warning", f"EFFECTS_THRESHOLD is {got} µs: writes that run longer go to its "
                "append-only file as effects, and a restart after a crash replayed such effects without the keyword "
                f"counts they set; load the module with EFFECTS_THRESHOLD {EFFECTS_THRESHOLD_US} (`kg server start` "
                f"does), or run GRAPH.CONFIG SET EFFECTS_THRESHOLD {EFFECTS_THRESHOLD_US} until its next restart")
    return ("team server", "ok", "its append-only file keeps each write as its query")


def _merged_tables(st: Any) -> tuple[str, str, str]:
    """(issue 17) The four small tables migration 0011 made kinds of Meta row: none left as a table, every row
    keyed by its kind and its id (so a lookup by key finds it). Nothing to repair: the migration runs in one
    transaction; a row keyed wrong was written by hand, and the message names it."""
    from kg.store.schema import MERGED_KINDS, merged_problems

    tables = {r["name"]: r["type"] for r in st._execute_raw("CALL show_tables() RETURN name, type", {})}
    meta = st._execute_raw("MATCH (m:Meta) RETURN m.key AS key, m.kind AS kind, m.id AS id", {})
    problems = merged_problems(tables, meta)
    if problems:
        return ("tables", "error", f"{len(problems)} problem(s) in the merged small tables: {problems[0]}; a row "
                "keyed wrong is not found by its key: re-key it as its kind, ':', its id")
    names = ", ".join(sorted(MERGED_KINDS))
    return ("tables", "ok", f"{names} are kinds of Meta row (migration 0011), each keyed by its kind")


def _retire_waits(st: Any) -> str | None:
    """Why an embedded graph's old node_fts is still there after a writer's open (kg/store/retire.py), or None."""
    if getattr(st, "backend", "kuzu") != "kuzu":
        return None
    from kg.store import retire

    return retire._no_room(st) or retire.deferred(st)


def _search_index(ws: Any, st: Any, dry_run: bool) -> tuple[str, str, str] | None:
    """Memory search's side index (kg/store/sideindex.py) against the graph; caught up or rebuilt when it is
    behind, missing or unreadable (it is derived data: nothing is lost)."""
    if getattr(ws, "store_url", None) is not None:
        return None  # a team graph keeps its own full-text index
    import sqlite3

    from kg.store import sideindex

    path = sideindex.path_of(st.path)
    name = path.relative_to(ws.root) if path.is_relative_to(ws.root) else path
    try:
        lost = _lost(ws, st, dry_run)
        if lost or "_doctor_lost" in ws.__dict__:
            return lost  # (restored once the graph is closed, and the index then brought in step: `_restore`)
        ok, what, rebuild = sideindex.check(st)
        lacks = _side_rows(st, path) if ok else None
        if lacks:  # the stamp says all, but rows were deleted by hand: only a rebuild puts them back
            ok, what, rebuild = False, f"{sideindex.FILE} {lacks}", True
        if ok:
            return ("search index", "ok", what)
        if dry_run:
            st._side_hold = True  # nor does the writer's close bring it in step
            return ("search index", "warning", f"{what}; search asks the graph's own index until it is "
                    f"{'rebuilt' if rebuild else 'caught up'}: run `kg doctor` to do it")
        return ("search index", "repaired", f"{what}: {sideindex.sync(st, rebuild=rebuild)}")
    except (sqlite3.Error, OSError) as exc:
        st._side_hold = True  # the writer's close would fail on it the same way
        import os

        if dry_run and not os.access(path.parent, os.W_OK):  # a read-only workspace: searched as it is, not checked
            return ("search index", "warning", f"{name} was not checked for writing: the workspace is read-only "
                    f"({exc}); search reads it as it is (where SQLite cannot open it so, it scans every entry's "
                    "words). Run `kg doctor` where the workspace is writable to check it")
        return ("search index", "error", f"{name} cannot be opened for writing ({exc}); search asks the graph's "
                f"own index meanwhile. Fix: remove or rename {name} (it is derived data, rebuilt from the "
                "graph) or make it writable, then run `kg doctor`")


def _lost(ws: Any, st: Any, dry_run: bool) -> tuple[str, str, str] | None:
    """(QA5 #1) Nodes the side index holds and the graph lacks (kg/ingest/recover.py `lacking`): acknowledged
    entries the graph lost with its write-ahead log. A rebuild of the index to the graph's count threw away
    their last copy; instead the index is held as it is, and `kg doctor` restores them (`_restore`, once the
    graph is closed) before bringing the index in step."""
    from kg.ingest.recover import lacking
    from kg.store import sideindex

    nodes = lacking(st)
    if not nodes:
        return None
    st._side_hold = True  # the writer's close leaves the index as it is (its sync refuses the rebuild anyway)
    said = (f"the graph lacks {len(nodes)} node(s) that {sideindex.FILE} still holds (the first: {nodes[0]['id']}): "
            f"acknowledged entries the graph lost, with its write-ahead log "
            f"{ws.graph_path.name}.wal lost or cut short before a checkpoint, or an older copy of "
            f"{ws.graph_path.name} put back")
    if dry_run:
        return ("graph", "error", f"{said}; run `kg doctor` to restore them from {sideindex.FILE} (their links "
                "are not in it)")
    ws._doctor_lost = (nodes, said)
    return None


def _restore(ws: Any, report: DoctorReport) -> None:
    """Import the nodes `_lost` found back into the graph, then bring the side index in step with it."""
    from kg.ingest.recover import restore
    from kg.store import sideindex

    nodes, said = ws.__dict__.pop("_doctor_lost")
    try:
        done = restore(ws, nodes)
    except KgError as exc:
        report.add("graph", "error", f"{said}; restoring them failed ({exc}): {sideindex.FILE} is kept as it is, "
                   "run `kg doctor` again")
        return
    report.add("graph", "repaired", f"{said}: {done}")
    try:
        with ws.store() as st:
            found = _search_index(ws, st, False)
    except KgError as exc:
        found = ("search index", "error", str(exc))
    if found:
        report.add(*found)


def _side_rows(st: Any, path: Any) -> str | None:
    """What the side file lacks though its stamp says it holds every node (kg/store/sidefile.py `missing`: its
    tables, a row and a linking document per node, a sample of nodes' rows and counts against the graph's, every
    pattern's Pattern-Key)."""
    import sqlite3
    from contextlib import closing

    from kg.store import sidefile, sideindex, sidekeys

    def in_graph(node_id: str) -> tuple[int | None, str | None]:
        rows = st._execute_raw(sideindex._TOKENS, {"id": node_id})
        return sideindex._pos_of(st, node_id), rows[0]["tokens"] if rows else None

    # read and write (it writes nothing): the last connection's close removes the WAL's files, a read-only one's not
    with closing(sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=30.0)) as db:
        count = sideindex._count(st)
        return sidefile.missing(db, count, in_graph, lambda: sidekeys.graph_keys(st, count))


def _aggregate(ws: Any, st: Any, dry_run: bool) -> tuple[str, str, str] | None:
    """The ready-to-promote aggregate (kg/store/aggregates.py) against a full recomputation; rebuilt when it
    differs (it is derived data: nothing is lost)."""
    if getattr(ws, "store_url", None) is not None:
        return None  # a team graph answers the full query
    from kg.store import aggregates

    diff = aggregates.differences(st)
    if not diff:
        return ("aggregate", "ok", "the pattern-occurrence table equals a full recomputation")
    if dry_run:
        return ("aggregate", "warning", f"{len(diff)} pattern row(s) differ ({diff[0]}); run `kg doctor` to rebuild")
    n = aggregates.rebuild(st)
    return ("aggregate", "repaired", f"{len(diff)} pattern row(s) differed ({diff[0]}); rebuilt {n} rows")


def _lists(st: Any, dry_run: bool) -> list[tuple[str, str, str]]:
    """The rows whose lists a kuzu 0.11.3 checkpoint tore before kg made such rows anew (kg/store/remake.py), where
    a torn row can be told: a Meta row holding a list its kind never has (cleared), a change's evidence holding a
    line dated before the change (told: kg cannot tell its own lines back)."""
    from kg.store import remake

    if not remake.kept(st):
        return []
    meta, changes = remake.torn(st)
    out = []
    if meta:
        what = (f"{len(meta)} small-table row(s) ({', '.join(meta[:3])}) hold a list their kind never has: another "
                "row's items, which a kuzu 0.11.3 checkpoint wrote there")
        out.append(("lists", "warning", f"{what}; run `kg doctor` to clear them") if dry_run else
                   ("lists", "repaired", f"{what}; cleared {remake.clear(st, meta)}"))
    if changes:
        out.append(("lists", "error", f"{len(changes)} change(s) ({', '.join(changes[:3])}) hold evidence dated before "
                    "they were applied: another change's trail, which a kuzu 0.11.3 checkpoint wrote there, and their "
                    "next verification reads it; kg cannot tell their own lines back: read each with `kg why`, and "
                    "take a rule whose verdict looks wrong out of its file by hand"))
    if not out:
        out.append(("lists", "ok", "no small-table row holds another kind's list; no change's evidence predates it"))
    return out
