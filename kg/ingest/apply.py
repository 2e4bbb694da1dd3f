"""Applying journal records to the graph: each logged entry becomes an event node, joins its pattern and is
auto-linked, in journal order, inside the caller's transaction. Idempotent: an id already in the graph is
skipped, so a drain that a crash cut short replays safely."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kg.core import clock
from kg.core.errors import UsageError
from kg.core.text import index_tokens
from kg.ingest import upkeep
from kg.ingest.batch import THREAD_REASON
from kg.store import Store

if TYPE_CHECKING:  # kg.graph.linking (and rapidfuzz) load when the graph is written, not for `kg log`'s answer
    from kg.graph import linking
    from kg.workspace import Workspace

PATTERN_KEY_META = "pattern-key:"


def pattern_for_key(st: Store, key: str) -> str | None:
    """The live pattern with this key (a merged pattern's key finds the pattern it went into), or None.

    Kùzu has no secondary index, so finding a pattern by key scans every node (112 ms and +17 MB resident at
    100k entries). The id found is remembered in `Meta` under `pattern-key:KEY` and checked by primary key on
    later use (about 1 ms); else the side index's patterns of that key (kg/store/sidekeys.py: none means none),
    each checked by primary key; else (a team graph, a side index that cannot say) the scan. A stale or missing
    entry falls back to the next, so no shortcut can give a wrong answer."""
    meta = PATTERN_KEY_META + key
    for row in st.run("meta_get", key=meta):
        found = live_pattern(st, row["value"], key)
        if found is not None:
            return found
    from kg.store.sidekeys import pattern_ids

    ids = pattern_ids(st, key)
    if ids is not None:
        for pid in ids:  # in id order, as the scan below takes them
            found = live_pattern(st, pid, key)
            if found is not None:
                st.run("meta_set", key=meta, value=pid)
                return found
        return None
    for row in st.run("pattern_get", ref=key):
        if row["key"] == key:
            st.run("meta_set", key=meta, value=row["id"])
            return row["merged_into"] or row["id"]
    return None


def _first_event(st: Store, doc: Any, texts: dict[str, tuple[str, str] | None]) -> Any:
    """`key` -> the first event of the live pattern with that key, as the linking decisions compare it with `doc`
    (a pattern's text is its first event's), or None when no pattern has the key. `texts` keeps each key's
    pattern (id, text) for the batch: looked up once, its row as a writer remembers it (linking.node_row)."""
    from kg.graph import linking

    def first(key: str) -> Any:
        if key not in texts:
            pid = pattern_for_key(st, key)
            row = linking.node_row(st, pid) if pid else None
            texts[key] = (pid, row["text"] or "") if row else None
        found = texts[key]
        return linking.Doc(found[0], "event", found[1], entry_type=doc.entry_type, category=doc.category,
                           area=doc.area) if found else None

    return first


def live_pattern(st: Store, pid: str, key: str) -> str | None:
    """The pattern `pid` when it has this key (by primary key): itself, or the pattern it was merged into."""
    if not st.run("pattern_has_key", id=pid, key=key):
        return None
    into = [r["id"] for r in st.run("pattern_sources", id=pid) if r["kind"] == "pattern"]
    return into[0] if into else pid


def node_params(node_id: str, kind: str, text: str, at: datetime, **extra: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "id": node_id, "kind": kind, "entry_type": None, "text": text, "details": None, "action": None,
        "category": None, "priority": None, "status": "active", "area": None, "source": "manual",
        "pattern_key": None, "session": None, "files": [], "tags": [], "error_text": None, "context": None,
        "reproducible": None, "user_context": None, "complexity": None, "frequency": None, "redactions": [],
        "created_at": at, "reinforced_at": None, "tokens": "",
    }
    params.update(extra)
    params["reinforced_at"] = params["reinforced_at"] or params["created_at"]  # when kg learned it: node_create
    params["tokens"] = index_tokens(params["text"], params.get("details"), " ".join(params["tags"]))
    return params


def ts(value: str | datetime) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


def restamp(ws: Workspace, records: list[dict[str, Any]]) -> None:
    """Read each record's naive times (a log's `created_at` and `learned`, a session start's `at`) in the zone
    the journal says they were written in (`zone`: the writer's mirror, or its process's own when it had none)
    and put them in the store's zone, in place: the store is the authority on its zone (a team graph's, a lost
    or wrong mirror, a KG_STORE override from a workspace of another zone), whatever the writer guessed. Only a
    store that records its zone (`ws.zone_recorded`, put in effect by its open); a record without `zone` (an
    older kg's) is kept as it is."""
    if not ws.zone_recorded:
        return
    here = clock.zone()
    name = clock.zone_name(here)
    for rec in records:
        then_name = rec.get("zone")
        if not isinstance(then_name, str) or then_name == name:
            continue
        try:
            then = clock.parse_zone(then_name)
        except UsageError:
            continue  # a zone this machine does not know: kept as written
        if not clock.same_zone(then, here):
            if rec.get("op") == "session" and "at" in rec:
                rec["at"] = _moved(rec["at"], then, here)
            if isinstance(rec.get("fields"), dict) and "created_at" in rec["fields"]:
                rec["fields"] = {**rec["fields"], "created_at": _moved(rec["fields"]["created_at"], then, here)}
            if rec.get("learned"):
                rec["learned"] = _moved(rec["learned"], then, here)
        rec["zone"] = name


def _moved(value: Any, then: Any, here: Any) -> Any:
    """A naive ISO time read in `then`, as the naive time in `here` of the same instant (else as it is)."""
    try:
        t = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return value
    if t is None or t.tzinfo is not None:
        return value
    return t.replace(tzinfo=then).astimezone(here).replace(tzinfo=None).isoformat(timespec="seconds")


def apply_records(ws: Workspace, st: Store, records: list[dict[str, Any]],
                  stop: Callable[[], bool] | None = None) -> list[str]:
    """Apply `records` in one transaction; the ids newly applied (those already in the graph are skipped).
    `stop()`, asked before each record after the first, ends the batch there (someone waits for the graph):
    what was applied commits, and the ids returned say where it stopped. Their times are first put in the
    store's zone (`restamp`)."""
    from kg.graph import linking

    restamp(ws, records)

    logs = [r for r in records if r.get("op") == "log"]
    started = {r["id"]: {"id": r["id"], "at": ts(r["at"]), "source": r.get("source")}
               for r in records if r.get("op") == "session"}  # session starts journaled while the graph was held
    if not logs:
        if started:
            st.run("sessions_touch", rows=list(started.values()))  # made on first use: a replay changes nothing
        return list(started)
    existing = _present(st, [r["id"] for r in logs])
    renamed = _renamed(ws, st, logs, existing) if existing else {}
    new = [r for r in logs if r["id"] not in existing or r["id"] in renamed]
    for rec in new:
        if rec["id"] in renamed:
            rec["id"], rec["taken"] = renamed[rec["id"]], rec["id"]
    for rec in new:
        if rec.get("after") in renamed:
            rec["after"] = renamed[rec["after"]]
    _earlier_renames(st, [r for r in new if r.get("after") and r["after"] not in renamed.values()])
    if not new:
        if started:
            st.run("sessions_touch", rows=list(started.values()))
        return list(started)
    rules = linking.rules_of(ws.rules)
    batched = getattr(st, "batched", None)  # a team graph: the batch's writes go as one atomic query
    if any(r.get("link", True) for r in new):  # (issue 22) linking asks the side index: in step first
        from kg.store.sidelink import ready

        ready(st)
    from kg.store.sidelink import batch as side_batch

    # (issue 17) remembered across the batch: the candidates' rows (kept once it commits), the side index's
    # node count, stamp and tail (kg/store/sidelink.py)
    with linking.remembering(st), side_batch(st), (batched() if batched else st.transaction()), \
            linking.counting(st), upkeep.kept(st) as keep:
        linking.prefetch_terms(st, (r["fields"]["text"] for r in new), rules)
        guess = getattr(st, "prefetch_candidates", None)  # a team graph: the full-text lookups in one round trip
        if guess is not None:
            guess([r["fields"]["text"] for r in new], rules)
        sessions = dict(started)  # a journaled start before the logs that name its session: its time and source
        for rec in new:
            f = rec["fields"]
            if f.get("session") and f["session"] not in sessions:
                sessions[f["session"]] = {"id": f["session"], "at": ts(f["created_at"]), "source": f.get("source")}
        if sessions:
            st.run("sessions_touch", rows=list(sessions.values()))
        # One record at a time, in journal order: each is created, joined to its pattern and linked before
        # the next exists, so a drained batch ends up exactly as the same logs applied one by one (created
        # all at once, each would find the later ones among its candidates, and link both ways). Keyword
        # counts are kept in memory and written once per keyword at the batch's end (kg/graph/term_counts.py).
        left = None  # the first record a stop left for the next batch
        for n, rec in enumerate(new):
            if n and stop is not None and stop():
                left, new = rec, new[:n]
                break
            f = rec["fields"]
            params = dict(id=rec["id"], kind="event", entry_type=f["entry_type"], text=f["text"],
                          details=f.get("details"), action=f.get("action"), category=f.get("category"),
                          priority=f["priority"], status=f["status"], area=f.get("area"), source=f.get("source"),
                          pattern_key=f.get("pattern_key"), session=f.get("session"), files=f.get("files") or [],
                          tags=f.get("tags") or [], error_text=f.get("error_text"), context=f.get("context"),
                          reproducible=f.get("reproducible"), user_context=f.get("user_context"),
                          complexity=f.get("complexity"), frequency=f.get("frequency"),
                          redactions=list(rec.get("redacted", [])), created_at=ts(f["created_at"]),
                          # an old entry kg learns now: its age counts from now (kg.ingest.batch learned_field)
                          reinforced_at=ts(rec.get("learned") or f["created_at"]), tokens=f["tokens"])
            st.run("node_create", **params)
            if rec.get("taken"):  # in the same transaction: a replay of this record finds it was applied,
                st.run("meta_set", key=_taken_key(rec["taken"], f), value=rec["id"])
                # and a later batch's turn threaded after it finds where it went
                st.run("meta_set", key=f"{TAKEN_META}id:{rec['taken']}", value=rec["id"])
                st.run("meta_set", key=f"{TAKEN_META}any", value="1")
            linking.remember_created(st, params)  # a later entry's candidate: not read back
            keep.node(rec["id"], "event", f["entry_type"], f["status"], f["priority"], ts(f["created_at"]))
            if not rec.get("link", True):
                linking.index_terms(st, f["text"], rules)  # linked records are counted after their lookup
            placed = attach_patterns(ws, st, [rec])
            # Auto-links in the same transaction: a log is linked when it is applied, or not at all.
            made: list[dict[str, Any]] = []
            if rec["id"] in placed:
                doc, found = placed[rec["id"]]
                made = linking.link_node(st, rec["id"], rules, now=ts(f["created_at"]), doc=doc, found=found,
                                         existing=set())
                for edge in made:
                    keep.edge(edge["type"])
            if rec.get("after"):
                _thread(st, keep, rec["after"], rec["id"], ts(f["created_at"]), made)
    if started and left is not None:
        # cut short: only the starts before the cut are reported (`drain.apply_batch` resumes after the last record
        # it is told of); those after it were made already, and their replay changes nothing
        cut = next(i for i, r in enumerate(records) if r is left)
        started = {r["id"]: None for r in records[:cut] if r.get("op") == "session"}
    return list(started) + [r["id"] for r in new]


def _present(st: Store, ids: list[str]) -> set[str]:
    present = getattr(st, "present", None)  # a team graph: one round trip for the batch
    return present(ids) if present else {i for i in ids if st.run("node_exists", id=i)}  # key lookups, not a scan


TAKEN_META = "taken:"


def _taken_key(taken: str, fields: dict[str, Any]) -> str:
    """The Meta key that says which id a log journaled as `taken` was applied under (one log: its id, time, text)."""
    import hashlib

    at = whole_second(fields["created_at"])
    digest = hashlib.sha1(f"{at.isoformat() if at else ''}\n{fields['text']}".encode()).hexdigest()[:16]
    return f"{TAKEN_META}{taken}:{digest}"


def applied_as(st: Store, entry_id: str, fields: dict[str, Any]) -> str:
    """The id the log journaled as `entry_id` is in the graph under: its own, or the one `_renamed` gave it."""
    rows = st.run("meta_get", key=_taken_key(entry_id, fields))
    return rows[0]["value"] if rows else entry_id


def _earlier_renames(st: Store, threaded: list[dict[str, Any]]) -> None:
    """A turn threaded after a log an earlier batch kept under a new id (`_renamed`) is threaded after that id, not
    the other entry that holds the old one. One lookup a batch until any log was ever renamed in this graph."""
    if not threaded or not st.run("meta_get", key=f"{TAKEN_META}any"):
        return
    for rec in threaded:
        rows = st.run("meta_get", key=f"{TAKEN_META}id:{rec['after']}")
        if rows:
            rec["after"] = rows[0]["value"]


def _renamed(ws: Workspace, st: Store, logs: list[dict[str, Any]], existing: set[str]) -> dict[str, str]:
    """Of the logs whose id is a node already, a replay (a drain a crash cut short: the node is this log, or the
    graph notes the log was applied under another id) is skipped. A log whose id another entry holds gets the next
    free id of its kind: on a team graph an import of an embedded workspace's trail by another member holds plain
    ids, which member 1 gives out too, and its acknowledged log was skipped as "already there" (a lost write; such
    an import is refused now: kg/ingest/import_scan.py `plain_ids`, so this is the net under any other way)."""
    from kg.ingest import drain

    out: dict[str, str] = {}
    for rec in logs:
        if rec["id"] not in existing or rec["id"] in out:
            continue
        f = rec["fields"]
        if st.run("meta_get", key=_taken_key(rec["id"], f)):
            continue  # applied under its new id before
        rows = st.run("node_get", id=rec["id"])
        node = rows[0]["n"] if rows else {}
        if (node.get("text"), node.get("entry_type"), whole_second(node.get("created_at"))) == \
                (f["text"], f["entry_type"], whole_second(f["created_at"])):
            continue
        head = rec["id"].rsplit("-", 1)[0]
        prefix, day = head.split("-", 1)
        with ws.journal.locked():
            while rec["id"] not in out:
                ids = ws.journal.allocate(prefix, day, 8)
                free = [i for i in ids if i not in _present(st, ids) and i not in out.values()]
                if free:
                    out[rec["id"]] = free[0]
        drain.warn(f"the id {rec['id']} is another entry's in the graph (one another workspace gave out: an import "
                   f"of its trail brings its ids); the entry logged as {rec['id']} is kept as {out[rec['id']]}")
    return out


def whole_second(value: Any) -> datetime | None:
    """A time as kg keeps it (naive UTC, whole seconds), whichever form it was read in."""
    if value is None:
        return None
    at = ts(value)
    if at.tzinfo is not None:
        at = at.astimezone(UTC).replace(tzinfo=None)
    return at.replace(microsecond=0)


def _thread(st: Store, keep: upkeep.Upkeep, src: str, dst: str, at: datetime, made: list[dict[str, Any]]) -> None:
    """The turn `src` led to `dst` (a bulk log's thread: a fact of the transcript, so manual). An auto `led_to`
    that `dst`'s own linking just made between the two becomes this one; else a new edge is counted."""
    if any(e["type"] == "led_to" and e["from"] == src and e["to"] == dst for e in made):
        st.run("ingest_thread", src=src, dst=dst, reason=THREAD_REASON, at=at)
    elif st.run("ingest_thread_new", src=src, dst=dst, reason=THREAD_REASON, at=at):
        keep.edge("led_to")


def _new_pattern_id(ws: Workspace, at: datetime) -> str:
    with ws.journal.locked():
        (pid,) = ws.journal.allocate(ws.policy.node_prefix["pattern"], f"{at:%Y%m%d}")
    return pid


def _create_pattern(st: Store, params: dict[str, Any]) -> None:
    from kg.graph import linking

    st.run("node_create", **params)
    linking.remember_created(st, params)  # its text is what a later event is compared with: not read back
    upkeep.kept_by(st).node(params["id"], "pattern", params["entry_type"], params["status"], params["priority"],
                            params["created_at"])


def attach_patterns(ws: Workspace, st: Store, records: list[dict[str, Any]]
                    ) -> dict[str, tuple[linking.Doc, linking.Candidates]]:
    """A log whose Pattern-Key exists joins that pattern; a new key makes the pattern. A log with no key
    that nearly duplicates earlier events of its entry type and area (and does not contradict them)
    joins their pattern, or makes one with a derived key (`auto.<area>.<hash>`).

    Returns, for each record to auto-link (all but `--no-link` ones), the record as the linking
    decisions see it and its full-text candidates, so linking does not query the index twice."""
    from kg.graph import linking

    if not records:
        return {}
    rules = linking.rules_of(ws.rules)
    keys = sorted({r["fields"]["pattern_key"] for r in records if r["fields"].get("pattern_key")})
    known: dict[str, str] = {}
    for key in keys:
        live = pattern_for_key(st, key)
        if live is not None:
            known[key] = live
    for rec in records:
        key = rec["fields"].get("pattern_key")
        if not key:
            continue
        at = ts(rec["fields"]["created_at"])
        if key not in known:
            pid = _new_pattern_id(ws, at)
            _create_pattern(st, node_params(pid, "pattern", rec["fields"]["text"], at, pattern_key=key,
                                            area=rec["fields"].get("area"), priority=rec["fields"]["priority"]))
            st.run("meta_set", key=PATTERN_KEY_META + key, value=pid)
            linking.index_terms(st, rec["fields"]["text"], rules)
            known[key] = pid
        # one statement per member: `UNWIND $rows ... MATCH (n {id: r.x})` scans the node table in kuzu
        st.run("pattern_add_new_member", pattern=known[key], event=rec["id"], at=at, manual=False, score=1.0,
               reason="same pattern key")
        upkeep.kept_by(st).member(known[key])
    placed: dict[str, tuple[linking.Doc, linking.Candidates]] = {}
    heads: dict[str, tuple[str, str] | None] = {}  # a pattern key's (id, text), read once a batch
    for rec in records:
        if not rec.get("link", True):
            continue
        f = rec["fields"]
        at = ts(f["created_at"])
        key = f.get("pattern_key")
        doc = linking.Doc(id=rec["id"], kind="event", text=f["text"], entry_type=f["entry_type"],
                          category=f.get("category"), area=f.get("area"), created_at=at, pattern_key=key)
        found = linking.candidates(st, doc, rules, count=True)
        linking.index_terms(st, f["text"], rules, found=found)
        match = None if key else linking.match_pattern(doc, found, rules, _first_event(st, doc, heads))
        if match is not None:
            pid = None
            if not match.new:
                rows = st.run("pattern_of_event", id=match.via)
                pid = rows[0]["id"] if rows else None
            if pid is None:
                pid = _new_pattern_id(ws, at)
                _create_pattern(st, node_params(pid, "pattern", match.text or f["text"], at,
                                                pattern_key=match.key, area=f.get("area"), priority=f["priority"]))
                heads[match.key] = (pid, match.text or f["text"])
                linking.index_terms(st, match.text or f["text"], rules)
            for member in (*match.members, rec["id"]):
                # `pattern_add_member` only for the earlier events of a pattern made just now: a new edge too.
                # Each earlier one with its own pair's score and reason, which names the new event
                score, reason = match.member_reasons.get(member, (match.score, match.reason))
                st.run("pattern_add_new_member" if member == rec["id"] else "pattern_add_member",
                       pattern=pid, event=member, at=at, manual=False, score=score, reason=reason)
                upkeep.kept_by(st).member(pid)
                linking.set_event_key(st, member, match.key, at)
            doc = linking.with_pattern(doc, match.key)
            found = linking.Candidates(
                [linking.with_pattern(d, match.key) if d.id in match.members else d for d in found.docs],
                found.weights, found.query, found.table, found.sims)
        placed[rec["id"]] = (doc, found)
    return placed
