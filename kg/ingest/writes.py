"""The writing API behind `Workspace`: `log` (acknowledge an entry, then apply it), and the manual graph edits
`node_add`, `link_auto`, `edge_add` and `resolve`. Each takes the workspace first; `Workspace` delegates
here and keeps only the state (the graph handle, the journal, the background applier)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kg.core import clock
from kg.core.entries import choice, prepare
from kg.core.errors import KgError, NotFound, StoreError, UsageError
from kg.core.text import clean
from kg.ingest import copies
from kg.ingest.apply import node_params
from kg.ingest.batch import learned_field
from kg.ingest.ids_rebuild import with_ids
from kg.memory import logs as files
from kg.memory import session_ids
from kg.store import EDGE_TYPES, HIDDEN_COLUMNS, KNOWLEDGE_KINDS, check_label, existing_ids, plain

if TYPE_CHECKING:
    from kg.workspace import Workspace


@dataclass(frozen=True)
class LogResult:
    id: str
    kind: str
    summary: str
    created_at: str
    redacted: tuple[str, ...]
    applied: bool
    pattern_key: str | None = None
    pattern: dict[str, Any] | None = None
    daily_log: str = ""
    note: str = ""
    queued: bool = False  # durable and answered; the background thread applies it (see Workspace.log)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "kind": self.kind, "summary": self.summary, "created_at": self.created_at,
            "redacted": list(self.redacted), "applied": self.applied, "pattern_key": self.pattern_key,
            "pattern": self.pattern, "daily_log": self.daily_log, "note": self.note, "queued": self.queued,
        }


def log(ws: Workspace, kind: str, summary: str, *, now: datetime | str | None = None, session: str | None = None,
        apply: bool = True, wait: bool = False, link: bool = True, learned: datetime | str | None = None,
        **fields: Any) -> LogResult:
    """Record a learning, error or feature request: see `Workspace.log`."""
    from kg.workspace_zone import learn

    learn(ws)  # no mirror to trust (lost, or KG_STORE chose the store): the store's zone, read first
    zone = clock.zone_name(clock.zone())
    at = clock.now(now)
    since = learned_field(at, clock.now(learned)) if learned is not None else {}
    session = session_ids.given(session, ws.rules.redactor) if session else ws.current_session()
    prepared = prepare(ws.policy, ws.rules.redactor, kind, summary, now=at, session=session, **fields)
    f = prepared.fields
    kind = f["entry_type"]
    line = files.daily_line(ws.policy, kind, f.get("category"), f["text"], at)
    def journaled() -> tuple[str, int, Any]:
        with ws.journal.locked():
            (entry_id,) = ws.journal.allocate(ws.policy.entry_prefix[kind], f"{at:%Y%m%d}")
            learning = {**f, "id": entry_id}
            # killed past the append, the next holder of the journal lock writes these copies (kg/ingest/copies.py)
            with copies.noted(ws.kg_dir, ws.journal.path, [entry_id], [(line, f.get("session"), at)],
                              [learning]) as note:
                inode = ws.journal.append([{"op": "log", "id": entry_id, "fields": f, **since,
                                            "redacted": list(prepared.redactions), "link": bool(link)}])
                daily = note.copy(skipped, files.append_daily, ws.memory, line, at, session=f.get("session"))
                note.copy(skipped, files.append_learning, ws.root, learning)
        return entry_id, inode, daily

    skipped: list[str] = []
    try:
        entry_id, inode, daily = with_ids(ws, journaled)
    except PermissionError as exc:
        raise StoreError(f"cannot write to the workspace ({exc.filename}): permission denied; "
                         "check the folder's permissions") from None
    except OSError as exc:
        from kg.core.errors import os_failure

        raise StoreError(f"cannot write to the workspace: {os_failure(exc)}") from None
    result = LogResult(id=entry_id, kind=kind, summary=f["text"], created_at=f["created_at"],
                       redacted=prepared.redactions, applied=False, pattern_key=f.get("pattern_key"),
                       daily_log=str(daily.relative_to(ws.root)) if daily else "",
                       note="; ".join(f"Warning: {x} (the entry is recorded; only its copy there was not written)"
                                 for x in skipped))
    if not apply:
        return result
    if not wait and ws._hand_to_applier():
        return replace(result, queued=True)
    try:
        # When a burst of processes logs at once, whoever holds the graph drains everyone's records; a
        # process that finds its record applied by then leaves without opening the graph at all (and
        # so without the pattern's figures), unless it was asked to wait for them: `--wait` promises the
        # pattern, and 3 of 4 concurrent `kg log --wait` answered `"pattern": null`.
        applied_by_another = None if wait else (lambda: ws.journal.applied_since(inode))
        with ws.store(unless=applied_by_another) as st:
            key, pattern = f.get("pattern_key"), None
            if st is not None and ws.pending and not st.run("node_exists", id=entry_id):
                # a bounded drain (a reader's, or a lifecycle command's under contention) stopped before it
                return replace(result, note="recorded in the journal; not yet in the graph (another process "
                               "waits for the graph, so applying stopped). The next kg command applies it.")
            if st is not None:
                from kg.ingest.apply import applied_as

                # (another entry held its id: the drain kept it under the next free one, kg/ingest/apply.py;
                # asked only when this open's drain did not apply it under its own)
                if entry_id not in ws._last_drain.ids:
                    from kg.ingest.apply import restamp

                    rec = {"op": "log", "fields": f, "zone": zone}  # its time as the applier wrote it
                    restamp(ws, [rec])
                    entry_id = applied_as(st, entry_id, rec["fields"])
                # the pattern the entry joined: its own key, or the one near-duplicate matching found
                joined = st.run("pattern_of_event", id=entry_id)
                rows = st.run("pattern_stats_by_id", id=joined[0]["id"]) if joined else []
                if rows:
                    pattern = plain(rows[0], hide=HIDDEN_COLUMNS)
                    key = pattern["key"]
    except KgError as exc:
        note = (f"recorded in the journal; not yet in the graph ({exc}). The next kg command applies it.")
        return replace(result, note=note)
    except OSError as exc:  # the disk filled while applying (a new pattern's id saved, a side file): the entry is
        # durable and its id must be printed, or a caller's retry logs it twice; the graph rolled back
        note = (f"recorded in the journal; not yet in the graph (cannot write to the workspace: {exc.strerror}). "
                "The next kg command applies it.")
        return replace(result, note=note)
    return replace(result, id=entry_id, applied=True, pattern=pattern, pattern_key=key)


def node_add(ws: Workspace, kind: str, text: str, *, now: datetime | str | None = None,
             tags: list[str] | None = None, source: str = "manual", link: bool = True) -> dict[str, Any]:
    """Add a lesson, principle, knowledge, pattern or event node by hand, auto-linked unless `link=False`."""
    from kg.graph import linking

    kind = choice(kind, KNOWLEDGE_KINDS, "node type") or ""
    at = clock.now(now)
    gated = ws.rules.redactor.redact(text or "")  # the gate, before the text is cleaned and measured
    body = clean(gated.text, one_line=True)
    if not body:
        raise UsageError("the node text is empty")
    if len(body) > ws.policy.summary_max_chars:
        raise UsageError(f"the node text is {len(body):,} characters; the limit is "
                         f"{ws.policy.summary_max_chars:,}")
    fields, kinds = ws.rules.redactor.redact_many({"text": body, "tags": list(tags or [])})
    kinds = tuple(sorted({*kinds, *gated.kinds}))
    rules = linking.rules_of(ws.rules)
    with ws.store() as st:
        with ws.journal.locked():
            (node_id,) = ws.journal.allocate(ws.policy.node_prefix[kind], f"{at:%Y%m%d}")
        if link:  # (issue 22) linking asks the side index: in step with what is committed first
            from kg.store.sidelink import ready

            ready(st)
        with st.transaction():
            st.run("node_create", **node_params(node_id, kind, fields["text"], at, tags=fields["tags"],
                                                source=source, redactions=list(kinds)))
            doc = linking.Doc(id=node_id, kind=kind, text=fields["text"], created_at=at)
            links = linking.link_new(st, doc, rules, now=at, link=link)
    return {"id": node_id, "kind": kind, "text": fields["text"], "created_at": at.isoformat(),
            "redacted": list(kinds), "links": links}


def link_auto(ws: Workspace, node_id: str, *, now: datetime | str | None = None,
              dry_run: bool = False) -> dict[str, Any]:
    """Auto-link an existing node now: candidates from the full-text index, re-ranked, typed by cue words;
    existing edges are kept, none is duplicated."""
    from kg.graph import linking

    at = clock.now(now)
    rules = linking.rules_of(ws.rules)
    with ws.store() as st:
        doc = linking.load_doc(st, node_id)
        links = linking.link_node(st, node_id, rules, now=at, doc=doc, dry_run=dry_run)
    return {"id": doc.id, "kind": doc.kind, "text": doc.text, "dry_run": dry_run, "links": links}


def edge_add(ws: Workspace, src: str, dst: str, edge_type: str, *, now: datetime | str | None = None,
             reason: str | None = None) -> dict[str, Any]:
    """Join two nodes by a typed edge (manual). Duplicates and self-links are refused."""
    edge_type = choice(edge_type, EDGE_TYPES, "edge type") or ""
    at = clock.now(now)
    if src == dst:
        raise UsageError(f"an edge needs two different nodes; both ends are {src}")
    with ws.store() as st:
        found = existing_ids(st, [src, dst])
        for node_id in (src, dst):
            if node_id not in found:
                raise NotFound(f"no node {node_id!r}: `kg list` shows the ids")
        label = check_label(edge_type, EDGE_TYPES, "edge type")
        dup = st.execute(f"MATCH (a:Node {{id: $src}})-[r:{label}]->(b:Node {{id: $dst}}) RETURN count(r) AS n",
                         {"src": src, "dst": dst})
        if dup[0]["n"]:
            raise UsageError(f"{src} ──{edge_type}──► {dst} exists already")
        # named (rules/queries/linking.cypher): the aggregates follow it instead of being rebuilt on the next open
        st.run(f"edge_add_{label}", src=src, dst=dst, at=at,
               reason=clean(ws.rules.redactor.redact(reason or "added by hand").text, one_line=True))
    return {"from": src, "to": dst, "type": edge_type, "created_at": at.isoformat(), "manual": True}


PATTERN_STATUSES = ("active", "wont_fix")  # what a person sets a pattern to: open (a candidate), or never promoted


def resolve(ws: Workspace, entry_id: str, status: str, *, now: datetime | str | None = None) -> dict[str, Any]:
    """Set a logged entry's status (pending, resolved, ...), or a pattern's (by id or key: active or wont_fix).

    A person's decision wins over decay: one that closes a node decay had expired (stage 3, `[decay]
    expired_status`) clears decay's mark (stage 0), so a pattern a person set wont_fix, before or after decay
    expired it, is never revived when it recurs (`lc_decay_revive` revives decay's expiries alone; one an older kg
    recorded is one too)."""
    from kg.graph.patterns import find
    from kg.graph.reads import get_node
    from kg.lifecycle.policy import load as lifecycle

    choice(status, dict.fromkeys((*ws.policy.statuses, *PATTERN_STATUSES)), "status")  # before the graph opens
    at = clock.now(now)
    with ws.store() as st:
        try:
            node = get_node(st, entry_id)
        except NotFound:
            node = find(st, entry_id)  # a pattern's key, as `kg patterns` lists them
        entry_id = node["id"]
        if node["kind"] == "pattern":
            if node.get("status") not in PATTERN_STATUSES:  # promoted, reverted, merged: the lifecycle's to change
                raise UsageError(f"pattern {entry_id} is {node.get('status')}: only an active or wont_fix pattern "
                                 "is closed or reopened by hand (`kg why` and `kg verify` follow a promoted one)")
            status = choice(status, PATTERN_STATUSES, "status for a pattern") or ""
        elif node["kind"] != "event" or not node.get("entry_type"):
            raise UsageError(f"{entry_id} is a {node['kind']} node; only logged entries "
                             "(LRN/ERR/FEAT ids) and live patterns have a status")
        else:
            status = choice(status, ws.policy.statuses, "status") or ""
        closes = status not in lifecycle(ws).decay.statuses
        with st.transaction():
            st.run("status_close" if closes else "status_reopen", id=entry_id, status=status, at=at)
            skipped = _skip_proposals(st, node, at) if closes and node["kind"] == "pattern" else []
    return {"id": entry_id, "status": status, "previous": node.get("status"), "updated_at": at.isoformat(),
            "skipped": skipped}


def _skip_proposals(st: Any, pattern: dict[str, Any], at: datetime) -> list[int]:
    """A person closed `pattern`: its pending proposals (a promotion, an imported rule's or principle's) are
    skipped, saying so, or approving one promoted the pattern they closed. Their numbers."""
    key = pattern.get("pattern_key") or pattern["id"]
    return skip_proposals_of(st, {pattern["id"]: f"pattern '{key}' closed by a person (kg resolve --status wont_fix, "
                                                 f"{at:%Y-%m-%d}); `kg resolve {key} --status active` reopens it"}, at)


def skip_proposals_of(st: Any, reasons: dict[str, str], at: datetime) -> list[int]:
    """Skip the pending proposals about the patterns in `reasons` (pattern id: why), each with its pattern's reason;
    their numbers."""
    from kg.store.schema import meta_key

    rows = [q for q in st.run("lc_proposals", statuses=["pending"]) if q["node"] in reasons]
    for q in rows:
        st.run("lc_proposal_decide", key=meta_key("Proposal", q["id"]), status="skipped", reason=reasons[q["node"]],
               at=at)
    return [q["number"] for q in rows]
