"""Recurring patterns: list them with their derived recurrence, and let a human correct what near-duplicate
matching decided (`merge`, `split`).

A pattern node (kind 'pattern') has `derived_from` edges to its member events; recurrence, sessions, first
and last seen are derived from those members by query. A merged pattern stays as a tombstone (status
'merged', pointed at by the pattern it went into), so logs that still name its key join the live pattern.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kg.core import clock
from kg.core.entries import slug_field
from kg.core.errors import NotFound, UsageError
from kg.core.text import nfc
from kg.graph import linking
from kg.graph.reads import all_or
from kg.store import plain


def _json(row: dict[str, Any]) -> dict[str, Any]:
    return plain(row)


def list_patterns(ws: Any, *, limit: int = 50, min_recurrence: int = 1,
                  now: datetime | str | None = None) -> list[dict[str, Any]]:
    """The patterns, most recurring first; `revive_next`: decay expired it, it recurred, the next cycle revives
    it (kg/lifecycle/revival.py)."""
    from kg.lifecycle import revival

    limit = all_or(limit)  # 0: every pattern, as `kg list --limit 0` and `kg graph query --limit 0`
    if min_recurrence < 1:  # a QA pass: `--min -1` listed every pattern with exit 0
        raise UsageError(f"--min must be at least 1 (a pattern is seen once or more), not {min_recurrence}")
    with ws.reading() as st:
        rows = st.run("pattern_list", limit=limit, min_recurrence=min_recurrence)
        back = revival.due(ws, st, clock.now(now), rows)
    return [{**_json(r), "revive_next": r["id"] in back} for r in rows]


def _resolve(st: Any, ref: str, *, live: bool = True) -> dict[str, Any]:
    ref = nfc(ref)
    rows = [r for r in st.run("pattern_get", ref=ref) if r["id"] == ref or r["key"] == ref]
    if not rows:
        raise NotFound(f"no pattern {ref!r}: `kg patterns` lists them (by id or key)")
    row = rows[0]
    if live and row["status"] == "merged":
        raise UsageError(f"pattern {ref!r} was merged into {row['merged_into']}; use that one")
    return row


def find(st: Any, key: str) -> dict[str, Any]:
    """A pattern node's properties by its key (NotFound: no node has that id, no pattern that key)."""
    from kg.graph.reads import get_node

    key = nfc(key)
    rows = [r for r in st.run("pattern_get", ref=key) if r["key"] == key]
    if not rows:
        raise NotFound(f"no node or pattern {key!r}: `kg list` shows the ids, `kg patterns` the pattern keys")
    return get_node(st, rows[0]["id"])


def _stats(st: Any, key: str) -> dict[str, Any] | None:
    rows = st.run("pattern_stats", keys=[key])
    return _json(rows[0]) if rows else None


def show(ws: Any, ref: str, *, now: datetime | str | None = None) -> dict[str, Any]:
    from kg.lifecycle import revival

    with ws.reading() as st:
        p = _resolve(st, ref, live=False)
        members = [_json(m) for m in st.run("pattern_members", id=p["id"])]
        stats = _stats(st, p["key"])
        back = revival.due(ws, st, clock.now(now), [p])
    return {"pattern": _json(p), "recurrence": stats, "members": members, "revive_next": bool(back)}


def merge(ws: Any, into: str, other: str, *, now: datetime | str | None = None) -> dict[str, Any]:
    """Move every event of pattern `other` into pattern `into`; `other` becomes a tombstone."""
    at = clock.now(now)
    with ws.store() as st:
        a = _resolve(st, into)
        b = _resolve(st, other)
        if a["id"] == b["id"]:
            raise UsageError(f"{into} and {other} are the same pattern")
        _mergeable(a, b)
        ids = [m["id"] for m in st.run("pattern_members", id=b["id"])]
        reason = f"merged from {b['key']} by hand"
        with st.transaction():
            if ids:
                st.run("pattern_move_members", src=b["id"], ids=ids)
                for event in ids:
                    st.run("pattern_add_member", pattern=a["id"], event=event, at=at, manual=True, score=1.0,
                           reason=reason)
                    linking.set_event_key(st, event, a["key"], at)
            st.run("pattern_retire", into=a["id"], id=b["id"], at=at, reason=f"{b['key']} merged into {a['key']}")
        stats = _stats(st, a["key"])
    return {"into": a["id"], "key": a["key"], "merged": b["id"], "merged_key": b["key"], "moved": ids,
            "recurrence": stats}


def _mergeable(a: dict[str, Any], b: dict[str, Any]) -> None:
    """A pattern with a rule the lifecycle follows (promoted, verified, reverted and waiting to come back ...) is
    judged on its own events: merged away, its rule stayed in its file checked against a pattern with none
    ("no history before the change"), and `kg why` named a tombstone (QA7 #1). Only a pattern a person may set
    (active, wont_fix) is merged into another; the other way round keeps the rule and adds the events to it."""
    from kg.ingest.writes import PATTERN_STATUSES

    if b["status"] in PATTERN_STATUSES:
        return
    way = (f"merge it the other way, `kg patterns merge {b['key']} {a['key']}`, to keep its rule and give it "
           f"{a['key']}'s events" if a["status"] in PATTERN_STATUSES else
           f"{a['key']} is {a['status']} too: keep the two apart, each with its rule")
    raise UsageError(f"pattern {b['key']} is {b['status']}: its rule is verified on its own events (`kg why`, "
                     f"`kg verify`), so it cannot be merged away; {way}")


def split(ws: Any, ref: str, events: list[str], *, key: str | None = None, detach: bool = False,
          now: datetime | str | None = None) -> dict[str, Any]:
    """Take events out of a pattern: into a new pattern (`key`, or a derived one), or out of any (`detach`)."""
    from kg.ingest.apply import node_params as _node_params

    at = clock.now(now)
    if not events:
        raise UsageError("name the events to split off: kg patterns split PATTERN EVENT_ID...")
    if detach and key:
        raise UsageError("--detach and --key exclude each other: detach removes the events from any pattern")
    rules = linking.rules_of(ws.rules)
    with ws.store() as st:
        p = _resolve(st, ref)
        members = {m["id"]: m for m in st.run("pattern_members", id=p["id"])}
        wanted = list(dict.fromkeys(events))
        strangers = [e for e in wanted if e not in members]
        if strangers:
            raise UsageError(f"not in pattern {p['key']}: {', '.join(strangers)} (`kg patterns show "
                             f"{p['key']}` lists its events)")
        if len(wanted) == len(members) and not detach and not key:
            raise UsageError("that is every event of the pattern; name a --key to rename it instead")
        first = members[wanted[0]]
        # redacted raw, first; then in the form `kg log --pattern-key` stores (NFC, one line, lower-cased)
        new_key = slug_field(ws.rules.redactor.redact(key).text, "pattern key") if key else None
        if not detach and not new_key:
            new_key = linking.derived_key(rules, first["entry_type"] or "", first["area"], first["text"])
        if new_key and new_key == p["key"]:
            raise UsageError(f"{new_key} is the pattern's own key; choose another")
        with st.transaction():
            st.run("pattern_move_members", src=p["id"], ids=wanted)
            for event in wanted:
                linking.set_event_key(st, event, None, at)
            target = None
            if new_key:
                existing = [r for r in st.run("pattern_get", ref=new_key) if r["key"] == new_key]
                if existing:
                    target = existing[0]["merged_into"] or existing[0]["id"]
                else:
                    with ws.journal.locked():
                        (target,) = ws.journal.allocate(ws.policy.node_prefix["pattern"], f"{at:%Y%m%d}")
                    st.run("node_create", **_node_params(target, "pattern", first["text"], at,
                                                         pattern_key=new_key, area=first["area"]))
                    linking.index_terms(st, first["text"], rules)
                for event in wanted:
                    st.run("pattern_add_member", pattern=target, event=event, at=at, manual=True, score=1.0,
                           reason=f"split from {p['key']} by hand")
                    linking.set_event_key(st, event, new_key, at)
        return {"from": p["id"], "from_key": p["key"], "events": wanted, "into": target, "key": new_key,
                "recurrence": _stats(st, p["key"]), "new_recurrence": _stats(st, new_key) if new_key else None}
