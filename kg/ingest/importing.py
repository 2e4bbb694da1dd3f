"""The streaming import behind `kg import trail`: bounded memory, linear time, resumable after a crash.

A trail is read one item at a time (`kg.ingest.jsonstream` for JSON, line by line for `.learnings/*.md`) and loaded
in batches: each batch's rows are validated and redacted (`kg.ingest.trail`), its new patterns get their ids in one
allocation, and its nodes and `derived_from` edges go in with one `COPY` each. The full-text index is
dropped once before the first batch and rebuilt once after the last (a multi-row load into an indexed table
leaves the index wrong in kuzu 0.11.3, and rebuilding it per batch would make the import quadratic); the
keyword table auto-linking ranks by gets the loaded nodes' counts added once (kg/ingest/trail_terms.py).

On a team graph (FalkorDB) the same batches go to the server instead (kg/store/falkor_copy.py: no file, no
index to drop, every node stamped with this workspace and agent), and the ids are checked there: two members
importing the same trail load it once.

Crash safety is mark-and-resume. `memory/.kg/import.json` is written before the index is dropped and
removed after it is rebuilt. A process that opens the graph and finds the mark (the import died: it held
the graph lock) rebuilds the index, so the workspace keeps working. Running `kg import trail` again (with
no paths it takes the mark's) resumes: its own open does not build the index nor the aggregates it would drop
at its first write (`defer_index`: about 50 s of CPU at a million nodes), ids already loaded are set aside
before the gate (never redacted again: `kg.ingest.trail_seen.Screen`), and those of its events that lost their
pattern edge or session to the crash get them, read back from the graph.

A trail of kg's own carries its patterns and lifecycle too: the first pass notes its patterns by key, so its
entries join them rather than new patterns of the same keys, and the changes, proposals, decisions and blocks
load after every node and edge (kg/ingest/trail_lifecycle.py): a graph rebuilt from its trail is the same graph.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from kg.core.text import index_tokens
from kg.ingest import import_groups, import_scan
from kg.ingest.import_gate import GATE_GROUP, REDACTIONS, Clean, Gated, gate  # noqa: F401 (re-exported)
from kg.ingest.import_mark import interrupted, mark_claim, mark_path, mark_principles
from kg.ingest.import_read import files_of, items
from kg.ingest.jsonstream import Read
from kg.ingest.trail_seen import Screen, SeenIds
from kg.store import NODE_COLUMNS, aggregates, bulk, rollback

BATCH = 20_000  # items at most in a batch
# and at most this many characters of trail text: a batch's rows, items and COPY file grow with its items' size,
# not their number (20k items of 20 kB would be 400 MB of text). Not smaller: each COPY into the growing tables
# costs more than the last (100k entries in batches of 2 MiB, ~4,600 entries: 16.8 s of COPY instead of 9.6 s)
BATCH_CHARS = 16 << 20
_NODE_COLUMNS = NODE_COLUMNS + ("decay_stage", "base_priority")  # and each node's decay (kg/ingest/trail_lifecycle.py)
Progress = Callable[[int, int], None]


# -- reading (one trail file, item by item: kg/ingest/import_read.py; the first pass: kg/ingest/import_scan.py)
def _session_kept(item: Any, redactor: Any, seen: dict[str, str]) -> Any:
    """An entry with its session as kg keeps every session id given to it (`kg.memory.session_ids.stored`)."""
    sid = item.get("session") if isinstance(item, dict) else None
    if not isinstance(sid, str) or not sid:
        return item
    if sid not in seen:
        from kg.memory.session_ids import stored

        seen[sid] = stored(sid, redactor)
    return item if seen[sid] == sid else {**item, "session": seen[sid]}


def _batches(ws: Any, files: list[Path], report: Any,
             screen: Callable[[list[tuple[str, Any]]], list[tuple[str, Any]]] | None = None,
             ) -> Iterator[tuple[list, list, list, list]]:
    """The files' items in batches of BATCH items or BATCH_CHARS characters, each batch `screen`ed (items already
    in the graph set aside) and then passed through the gate: what is skipped is never redacted. Each batch:
    its entries, nodes, edges, and its lifecycle items as (kind, item) (kg/ingest/trail_lifecycle.py)."""
    redactor = ws.rules.redactor
    clean = Clean()
    sessions: dict[str, str] = {}  # each entry's session as kg keeps it (kg.memory.session_ids.stored), asked once

    def gated(raw: list[tuple[str, Any]]) -> tuple[list, list, list, list]:
        entries: list = []
        nodes: list = []
        edges: list = []
        rest: list = []
        out = {"entries": entries, "nodes": nodes, "edges": edges}
        kept = screen(raw) if screen is not None else raw
        kept = [(kind, _session_kept(item, redactor, sessions)) if kind == "entries" else (kind, item)
                for kind, item in kept]  # before the gate, which would make a secret one `[REDACTED:...]`
        for i in range(0, len(kept), GATE_GROUP):
            for kind, item in gate(redactor, kept[i:i + GATE_GROUP], clean):
                if isinstance(item, dict) and item.get(REDACTIONS):
                    report.redacted.extend(item[REDACTIONS])
                if kind in out:
                    out[kind].append(item)
                else:
                    rest.append((kind, item))
        return entries, nodes, edges, rest

    raw: list[tuple[str, Any]] = []
    read = Read()
    start = 0
    for f in files:
        for pair in items(f, report, read):
            raw.append(pair)
            if len(raw) >= BATCH or read.chars - start >= BATCH_CHARS:
                yield gated(raw)
                raw = []
                start = read.chars
                _collect()
    if raw:
        yield gated(raw)


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the import, run once per batch instead (`_collect`).

    An import allocates millions of dicts, lists and tuples that live for a batch; the collector, triggered by
    every few hundred allocations, kept walking the batch's live rows and items: about a fifth of a 100k import's
    CPU. Those rows hold no reference cycles (freed by their counts alone), so nothing waits for the collector;
    a collection per batch bounds whatever cycles there are."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _collect() -> None:
    if not gc.isenabled():
        gc.collect()


# -- loading ------------------------------------------------------------------------------------------------
def run(ws: Any, paths: list[Path], *, at: datetime, report: Any, dry_run: bool,
        progress: Progress | None = None) -> Any:
    from kg.ingest.trail_lifecycle import Claim, not_imported, undecided_text

    resumed = interrupted(ws)
    if resumed:  # the interrupted import's files come first, so it is finished whatever else is named
        paths = [Path(p) for p in resumed] + list(paths)
    files = list({f.resolve(): f for f in files_of(paths)}.values())
    claim = Claim.of_mark(mark_claim(ws)) if resumed is not None else Claim()  # whose lifecycle is taken
    undecided: dict[str, int] = {}  # a dry run's lifecycle records, by kind
    with collector_paused():
        groups = import_groups.groups(files)
        for i, group in enumerate(groups):
            later = [f for g in groups[i + 1:] for f in g]  # named by the mark too: a kill in this run loses none
            _run(ws, group, resumed if i == 0 else None, at=at, report=report, dry_run=dry_run, progress=progress,
                 later=later, claim=claim, undecided=undecided)
    team = getattr(ws, "store_url", None) is not None
    if undecided:
        report.warnings.append(undecided_text(undecided, team))
    if dry_run and report.principles_proposed:
        from kg.lifecycle.imported import undecided_principles

        report.warnings.append(undecided_principles(report.principles_proposed))
    if dry_run and report.rules_proposed:
        from kg.lifecycle.imported_rules import undecided_rules

        report.warnings.append(undecided_rules(report.rules_proposed, team))
    if report.lifecycle_not_imported:
        report.warnings.append(not_imported(report.lifecycle_not_imported, dry_run, team))
    return report


def _run(ws: Any, files: list[Path], resumed: list[str] | None, *, at: datetime, report: Any, dry_run: bool,
         progress: Progress | None, later: list[Path] | None = None, claim: Any = None,
         undecided: dict[str, int] | None = None) -> Any:
    from kg.ingest import trail

    undecided = {} if undecided is None else undecided

    total, trail_patterns, plain, highest = import_scan.count(files)
    import_scan.plain_ids(ws, plain)
    if dry_run:  # the files only, never the graph (an open applied the journal, or waited for another's hold):
        # whether the trail's lifecycle is taken is the import's to decide (`Claim`), so it is counted and said,
        # neither as imported nor as not (`undecided`)
        from kg.lifecycle import imported, imported_rules
        from kg.lifecycle.policy import load as load_policy

        lp = load_policy(ws)
        for entries, nodes, edges, rest in _batches(ws, files, report):
            report.entries += len(trail._entry_rows(ws, entries, at, report, redactor=Gated)[0])
            rows = trail._node_rows(ws, nodes, at, report, redactor=Gated)
            report.nodes += len(rows)
            # the active principles, each an `import` proposal (kg/lifecycle/imported.py) unless the import finds
            # the graph with no history of its own, which a dry run does not read (`run` says so)
            report.principles_proposed += len(imported.principles_of(rows, ""))
            report.rules_proposed += len(imported_rules.rules_of(rows, lp))  # the rules' proposals alike
            report.edges += len(edges)
            for kind, _ in rest:
                undecided[kind] = undecided.get(kind, 0) + 1
        return report
    if highest:
        with ws.journal.locked():
            ws.journal.observe(highest)
    ws.importing = True
    options = ws.open_options
    if resumed is not None:  # the index and the aggregates are rebuilt at the end: not on this open too
        ws.open_options = {**options, "defer_index": True}
    try:
        with ws.store() as st:  # one hold of the lock to the end: the copy taken at the first write stays whole
            ws.open_options = options
            resuming = resumed is not None
            report.resumed = report.resumed or resuming  # (a later run of files sharing ids resumes nothing)
            try:
                if _load(ws, st, files, at, report, total, resuming, progress, trail_patterns, later or [], claim):
                    _build_index(ws, st)
            except BaseException:  # raised, not killed: its copy goes before this process writes on
                rollback.abandon(st)
                raise
        _collect()  # what the close freed, before the collector is back (else a young collection at once)
    finally:
        ws.importing = False
        ws.open_options = options
    return report


def _build_index(ws: Any, st: Any) -> None:
    """The import's end: a team graph's full-text index made sure of (it keeps it right row by row); the copy
    taken before the first write released, then the mark removed (in that order: a kill in between leaves a
    mark, and the import resumes on a whole graph). An embedded graph builds no full-text index since issue 22
    (it cost most of a large import's CPU and memory; linking and search ask the side index, which the
    writer's close brings in step)."""
    if getattr(ws, "store_url", None) is not None:
        st.ensure_fts()
    else:
        rollback.release(st)
    mark_path(ws).unlink(missing_ok=True)


def _load(ws: Any, st: Any, files: list[Path], at: datetime, report: Any, total: int, resuming: bool,
          progress: Progress | None, trail_patterns: dict[str, str], later: list[Path], claim: Any) -> bool:
    """Load every batch; True when the graph was written to (the index then needs building)."""
    from kg.graph import linking
    from kg.ingest import import_edges, trail, trail_lifecycle, trail_terms
    from kg.ingest.import_renames import Renames
    from kg.ingest.journal import write_atomic
    from kg.lifecycle import imported

    team = getattr(ws, "store_url", None) is not None
    claim.decide(st, team)  # (by the first run of files, before it writes)
    check = resuming or st.run("bulk_node_count")[0]["n"] > 0  # an empty graph has nothing to skip
    tally = trail_terms.TermTally(linking.rules_of(ws.rules))
    exact_terms = trail_terms.can_merge(st, empty=not check, resuming=resuming)
    marked = [resuming]
    # the principles loaded to be proposed (`imported`): the interrupted run's, then this run's, named by the mark
    # before they are loaded, so a kill before their proposals leaves them to the run that resumes it
    to_propose = mark_principles(ws) if resuming else []

    def write_mark() -> None:
        # this run's files and the later runs' (`run`): `kg import trail` with no paths then finishes them all; and
        # whose lifecycle it takes, so the resumed import takes the same
        write_atomic(mark_path(ws), json.dumps({"paths": [str(f.resolve()) for f in files + later],
                                                "pid": os.getpid(), "started": at.isoformat(),
                                                "lifecycle": claim.as_mark(), "principles": to_propose}).encode())
    copied = [False]

    def mark() -> None:
        """Before the first write: the mark, a copy of the graph to restore should a kill leave it unopenable
        (kg/store/rollback.py), then the index dropped (an import of what is all there already never touches
        any of them)."""
        if not marked[0]:
            write_mark()
            marked[0] = True
        if not copied[0]:
            copied[0] = True
            rollback.take(st, "import")
            bulk.fts_drop(st)
            rollback.phase(st, "load")  # the drop is checkpointed: rows only from here to the index build
        if aggregates.ready(st):  # the COPYs below bypass its upkeep: rebuilt after the last batch
            aggregates.invalidate(st)

    patterns = {r["key"]: r["id"] for r in st.run("bulk_pattern_keys")}
    # the trail's own patterns (`import_scan.count`): an entry joins the pattern of its key the trail holds, loaded
    # with the graph section after the entries (so its edge waits in `implied`); one whose key the graph holds under
    # another id is that pattern (`alias`), not a second of the key
    coming: set[str] = set()
    alias: dict[str, str] = {}
    # a trail pattern whose id another node of the graph holds (another workspace's pattern of another key): its
    # entries join a new pattern of their key, made below as for a key the trail does not hold, and its edges follow
    others = _present(st, [pid for key, pid in trail_patterns.items() if key not in patterns]) if check else set()
    renamed: dict[str, str] = {}  # such a trail pattern id -> its key
    for key, pid in trail_patterns.items():
        if key not in patterns and pid in others:
            renamed[pid] = key
        elif key not in patterns:
            patterns[key] = pid
            coming.add(pid)
        elif patterns[key] != pid:
            alias[pid] = patterns[key]
    seen = SeenIds(lambda ids: _in_graph(st, ids))  # bounded: no set of every id
    sessions: dict[str, datetime] = {}
    spool = ws.kg_dir / f".import-edges-{os.getpid()}.jsonl"
    implied = ws.kg_dir / f".import-implied-{os.getpid()}.jsonl"
    lifecycle = ws.kg_dir / f".import-lifecycle-{os.getpid()}.jsonl"
    renames = Renames(ws, st) if check else None
    # another workspace's principles, into a graph with a history of its own: each waits for a human's approval
    # (kg/lifecycle/imported.py); a restore or a move into an empty graph renders them as before
    origin = str(files[0]) if len(files) == 1 else ", ".join(f.name for f in files)
    principles: list[dict[str, Any]] | None = [] if not claim.open and (check or not team) else None
    screen = Screen(st, seen, lambda ids: _present(st, ids) if check else set(), renames)
    loaded_any = False
    try:
        with open(spool, "w", encoding="utf-8") as edges_out, open(implied, "w", encoding="utf-8") as implied_out, \
                open(lifecycle, "w", encoding="utf-8") as lifecycle_out:
            for entries, nodes, edges, rest in _batches(ws, files, report, screen):
                for e in edges:
                    edges_out.write(json.dumps(e, ensure_ascii=False, default=str) + "\n")
                for pair in rest:
                    if claim.open and claim.source is None and claim.takes(pair[1].get("_source")) and marked[0]:
                        write_mark()  # the file whose lifecycle is taken, named before it is loaded
                    lifecycle_out.write(json.dumps(pair, ensure_ascii=False, default=str) + "\n")
                rows, links = trail._entry_rows(ws, entries, at, report, redactor=Gated)
                rows += trail._node_rows(ws, nodes, at, report, redactor=Gated)
                if alias:
                    n = len(rows)
                    rows = [r for r in rows if r["id"] not in alias]
                    report.already_present += n - len(rows)
                report.already_present += len(screen.skipped)
                first, repeated = seen.split([r["id"] for r in rows])
                for _ in repeated:
                    report.skip("duplicate id in the imported files")
                keep = set(first)
                fresh = []
                for r in rows:
                    if r["id"] in keep:
                        keep.discard(r["id"])  # the first of a batch's repeats
                        fresh.append(r)
                present = screen.present  # (the graph has not changed since the batch was screened)
                new_rows = [r for r in fresh if r["id"] not in present]
                report.already_present += len(fresh) - len(new_rows)
                new_ids = {r["id"] for r in new_rows}
                attach = [x for x in links if x["event"] in new_ids]
                # resuming, the rows the killed run loaded count too: their pattern edges may have died with it,
                # and their sessions were written only at its end
                kept = list(screen.loaded_rows()) if resuming else []  # each row its own link too
                if resuming:
                    earlier = [x for x in kept if x["key"]] + [x for x in links if x["event"] in present]
                    kept += [r for r in fresh if r["id"] in present]
                    lost = [x["event"] for x in earlier]
                    have = {r["id"] for r in st.run("bulk_with_pattern", ids=lost)} if lost else set()
                    attach += [x for x in earlier if x["event"] not in have]
                if principles is not None and (batch_principles := imported.principles_of(new_rows, origin)):
                    principles += batch_principles
                    to_propose.extend(r["id"] for r in batch_principles)
                    if marked[0]:  # (else `mark` below writes it first)
                        write_mark()
                report.entries += sum(1 for r in new_rows if r["entry_type"])
                report.nodes += sum(1 for r in new_rows if not r["entry_type"])
                for r in kept + new_rows:
                    if r.get("session") and (r["session"] not in sessions or r["created_at"] < sessions[r["session"]]):
                        sessions[r["session"]] = r["created_at"]
                with ws.journal.locked():
                    ws.journal.observe([r["id"] for r in new_rows])
                if new_rows or attach:
                    mark()
                new_patterns = _new_patterns(ws, attach, patterns)
                report.nodes += len(new_patterns)
                bulk.copy_rows(st, "Node", new_patterns + new_rows, scratch=ws.kg_dir, columns=_NODE_COLUMNS)
                if exact_terms:
                    tally.add([r["text"] for r in new_patterns] + [r["text"] for r in new_rows])
                edge_rows = []
                for x in attach:
                    row = {"src": patterns[x["key"]], "dst": x["event"], "created_at": x["at"], "manual": False,
                           "score": 1.0, "reason": "same pattern key"}
                    if row["src"] in coming:
                        implied_out.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
                    else:
                        edge_rows.append(row)
                bulk.copy_rows(st, "derived_from", edge_rows, scratch=ws.kg_dir, columns=import_edges.EDGE_COLUMNS)
                loaded_any = loaded_any or bool(new_rows or new_patterns or edge_rows)
                if progress:
                    progress(screen.done, total)
                # the batch's items and rows go now, not when the next batch is bound: the collection `_batches`
                # runs between batches then walks what lives on, not ~170k objects of this batch (0.17 s each at
                # 100k entries), and two batches' rows are never alive at once
                del entries, nodes, edges, rows, links, first, repeated, keep, fresh, present, new_rows, new_ids
                del attach, kept, new_patterns, edge_rows
        held = lambda ids: _present(st, ids)  # noqa: E731
        if renames is not None and renames.moved:  # the trail's edges and records name its entries by their old ids
            alias = {**alias, **renames.moved}
        alias.update({pid: patterns[key] for pid, key in renamed.items() if key in patterns})
        report.warnings.extend(renames.warnings() if renames is not None else [])
        report.edges += import_edges.load(ws, st, import_edges.trail_rows(spool, report, alias), report, mark, held)
        # the entries' edges to the trail's patterns, where the trail's own edges did not make them already
        loaded_any = import_edges.load(ws, st, import_edges.implied_rows(implied), report, mark, held,
                                       quiet=True) > 0 or loaded_any
        loaded = trail_lifecycle.load(ws, st, lifecycle, report, mark, alias, held, claim)
        kinds = [*report.lifecycle, *(k for k in loaded if k not in report.lifecycle)]  # (not a set: its hash order
        report.lifecycle = {k: report.lifecycle.get(k, 0) + loaded.get(k, 0) for k in kinds}  # was --json's order)
        loaded_any = loaded_any or any(loaded.values())
        if principles is not None and resuming:  # the interrupted run's loaded principles still without one
            principles = imported.unproposed(st, to_propose, origin, principles)
        if principles:
            from kg.lifecycle.policy import load as load_policy

            report.principles_proposed += imported.propose(st, principles, at, load_policy(ws))
        if not claim.open and (report.nodes or resuming):  # the trail's lifecycle not taken: its promoted rules
            _propose_rules(ws, st, at, report, origin)
    finally:
        for path in (spool, implied, lifecycle):
            path.unlink(missing_ok=True)
    rows = [{"id": s, "at": t, "source": "import"} for s, t in sorted(sessions.items())]
    for i in range(0, len(rows), 5000):
        st.run("sessions_touch", rows=rows[i:i + 5000])
    if loaded_any or resuming:
        st.run("pattern_reinforce_bulk")
        # the bulk load bypassed the write path: add its nodes to the keyword table auto-linking ranks by
        trail_terms.merge(st, tally, exact=exact_terms)
        aggregates.rebuild(st)
    return marked[0]


def _propose_rules(ws: Any, st: Any, at: datetime, report: Any, origin: str) -> None:
    """Another workspace's promoted TOOLS.md, USER.md and skill rules, which its changes rendered there, each a
    pending `import` proposal about its pattern, active again while nothing renders it here
    (kg/lifecycle/imported_rules.py)."""
    from kg.lifecycle import imported_rules
    from kg.lifecycle.policy import load as load_policy

    lp = load_policy(ws)
    report.rules_proposed += len(imported_rules.propose(st, at, lp, origin))
    imported_rules.reopen_pending(st, lp, at)  # a killed run's proposals too


def _present(st: Any, ids: list[str]) -> set[str]:
    return {r["id"] for r in st.run("bulk_present", ids=ids)} if ids else set()


LOOKUPS = 256  # up to this many ids are looked up by key (~0.3 ms each); more, with one scan of the ids


def _in_graph(st: Any, ids: list[str]) -> set[str]:
    """Which of `ids` are nodes, at a cost that does not grow with the graph when they are few."""
    if len(ids) > LOOKUPS:
        return _present(st, ids)
    return {r["id"] for r in bulk.run_each(st, "node_exists", ({"id": i} for i in ids))}


def _new_patterns(ws: Any, links: list[dict[str, Any]], known: dict[str, str]) -> list[dict[str, Any]]:
    """Pattern nodes for the keys first seen in this batch, their ids allocated at once (the journal's id
    file is written once per batch, not once per pattern)."""
    first: dict[str, dict[str, Any]] = {}
    for link in sorted(links, key=lambda x: x["at"]):
        if link["key"] not in known and link["key"] not in first:
            first[link["key"]] = link
    if not first:
        return []
    prefix = ws.policy.node_prefix["pattern"]
    with ws.journal.locked():
        ids = ws.journal.allocate_many([(prefix, f"{x['at']:%Y%m%d}") for x in first.values()])
    out = []
    for pid, link in zip(ids, first.values(), strict=True):
        row = {c: None for c in NODE_COLUMNS}
        row.update(id=pid, kind="pattern", text=link["text"], pattern_key=link["key"], area=link["area"],
                   priority=link["priority"], status="active", source="import", files=[], tags=[], redactions=[],
                   created_at=link["at"], updated_at=link["at"], reinforced_at=link["at"], pinned=False,
                   stale=False, decay_stage=0, tokens=index_tokens(link["text"]))
        out.append(row)
        known[link["key"]] = pid
    return out
