"""When each pattern is ready to promote (issue 22): `kg status` and the session brief pay for the few ready
patterns they show, not for every pattern in the promotion window.

A pattern's figures inside the window [now - window, now] (its counted events, their distinct sessions, the
newest) change only when one of its events enters the window (now = its time) or leaves it (now = its time +
window + 1 µs). Between two such instants they are constant, so the spans of `now` during which the pattern is
ready (as `lc_promotion_candidates` counts: `min_recurrence` events across `min_sessions` sessions, statuses
set and not ignored) are computed once per write (`spans_of`, pure) and kept as `ready_span` edges from the
pattern's PatternOcc row to its node (migration 0010). A read then asks Kùzu to count the spans that hold `now`
and to return the first few in rank order (`ready_top`); the patterns some proposal is about (a handful) are
checked by key.

Each span carries its pattern's id, status and priority (copied when the row is written, and by every write
that sets a pattern's status or priority: `aggregates.WATCH`), so a read never touches the node table: at 1M
entries reading those three columns of the ready patterns' nodes cost 0.19 s.

The spans follow the packaged promotion rule (rules/lifecycle.toml `[promotion]`); its figures are stored with
them (Meta `aggregate:ready_spans`) and a read whose policy differs (a workspace's own rule) asks the full
query. They are kept and rebuilt with PatternOcc (kg/store/aggregates.py: the same flag, the same transaction,
`kg doctor`'s comparison). A team graph (FalkorDB) keeps none: it asks the full query.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from functools import cache
from typing import Any

TICK = timedelta(microseconds=1)  # Kùzu's and Python's time resolution: an event leaves the window a tick after
# a rebuild's COPY into ready_span
COLUMNS = ("src", "dst", "opens", "closes", "n", "sessions", "last", "pid", "status", "priority")
Span = tuple[datetime, datetime, int, int, datetime]  # opens, closes (exclusive), recurrence, sessions, last seen


# -- pure -----------------------------------------------------------------------------------------------------
def spans_of(members: Iterable[tuple[datetime | None, str | None, str | None]], *, window: timedelta,
             min_recurrence: int, min_sessions: int, ignore: Iterable[str]) -> list[Span]:
    """The spans of `now` during which a pattern whose counted members are (time, session, status) is ready,
    with its window's figures in each, oldest first. `aggregates.window_figures` at any `now` inside a span
    gives its figures; at any `now` outside every span the pattern is not ready."""
    skip = set(ignore)
    evs = sorted(((t, s) for t, s, status in members
                  if t is not None and status is not None and status not in skip),  # NULLs fail the query's tests
                 key=lambda e: e[0])
    if len(evs) < max(min_recurrence, 1):
        return []
    points = sorted({t for t, _ in evs} | {t + window + TICK for t, _ in evs})
    sessions: Counter[str] = Counter()
    out: list[Span] = []
    first = after = 0  # the events inside the window at x: evs[first:after]
    for k, x in enumerate(points[:-1]):
        while after < len(evs) and evs[after][0] <= x:
            if evs[after][1] is not None:
                sessions[evs[after][1]] += 1
            after += 1
        while first < after and evs[first][0] < x - window:
            s = evs[first][1]
            if s is not None:
                sessions[s] -= 1
                if not sessions[s]:
                    del sessions[s]
            first += 1
        n, distinct = after - first, len(sessions)
        if n < min_recurrence or distinct < min_sessions:
            continue
        figures = (n, distinct, evs[after - 1][0])
        if out and out[-1][1] == x and out[-1][2:] == figures:
            out[-1] = (out[-1][0], points[k + 1], *figures)
        else:
            out.append((x, points[k + 1], *figures))
    return out


def fingerprint(window_days: float, min_recurrence: int, min_sessions: int, ignore: Iterable[str]) -> str:
    """The promotion rule spans were made with, as stored beside them."""
    return json.dumps([float(window_days), int(min_recurrence), int(min_sessions), sorted(set(ignore))])


@cache
def packaged() -> dict[str, Any]:
    """The packaged promotion rule (rules/lifecycle.toml), which the kept spans follow."""
    from kg.core.policy import packaged as rules

    p = rules("lifecycle")["promotion"]
    return {"window_days": p["window_days"], "min_recurrence": p["min_recurrence"],
            "min_sessions": p["min_sessions"], "ignore": tuple(p["ignore_event_statuses"])}


@cache
def _rule() -> dict[str, Any]:
    p = packaged()
    return {"window": timedelta(days=p["window_days"]), "min_recurrence": p["min_recurrence"],
            "min_sessions": p["min_sessions"], "ignore": p["ignore"]}


def spans_of_row(row: dict[str, Any], rule: dict[str, Any] | None = None) -> list[Span]:
    """The spans of one PatternOcc row (`aggregates._row`)."""
    return spans_of(zip(row["at"], row["sess"], row["st"], strict=True), **(rule or _rule()))


# -- upkeep ---------------------------------------------------------------------------------------------------
def kept(st: Any) -> bool:
    return getattr(st, "backend", "kuzu") == "kuzu"


def write(st: Any, pid: str, row: dict[str, Any] | None) -> None:
    """One pattern's spans, from its PatternOcc row just made (a row is never updated in place: the old one
    took its spans with it, DETACH DELETE) and its node's status and priority (inside the write's transaction)."""
    if not kept(st) or row is None:
        return
    fields = st.run("spn_pattern", id=pid)
    if not fields or fields[0]["kind"] != "pattern":
        return
    spans = spans_of_row(row)
    if spans:
        st.run("spn_add", id=pid, status=fields[0]["status"], priority=fields[0]["priority"],
               spans=[_params(s) for s in spans])


def _params(s: Span) -> dict[str, Any]:
    return {"opens": s[0], "closes": s[1], "n": s[2], "sessions": s[3], "last": s[4]}


def span_row(pid: str, s: Span, status: str | None, priority: str | None) -> dict[str, Any]:
    """One `ready_span` row of a batch write (`spn_add_many`, a rebuild's COPY): the span with its pattern's
    id, status and priority."""
    return {**_params(s), "pid": pid, "status": status, "priority": priority}


def patterns(st: Any) -> dict[str, tuple[str | None, str | None]]:
    """Every pattern's (status, priority), for a rebuild (one read of the node table)."""
    from kg.store.bulk import iter_rows

    return {pid: (status, priority) for pid, status, priority in iter_rows(st, "spn_patterns_all")}


def copy_rows_of(found: Iterable[tuple[str, Span]],
                 fields: dict[str, tuple[str | None, str | None]]) -> Iterator[dict[str, Any]]:
    """`ready_span`'s rows for a rebuild's COPY, from (pattern id, span) pairs and the patterns' fields (a row
    whose node is not a pattern has none)."""
    for pid, s in found:
        if pid in fields:
            status, priority = fields[pid]
            yield {"src": pid, "dst": pid, **span_row(pid, s, status, priority)}


def mark(st: Any) -> None:
    """After a rebuild: the rule the spans were made with."""
    if kept(st):
        st.run("spn_fingerprint_set", value=_packaged_fingerprint())


def current(st: Any) -> bool:
    """Whether the kept spans follow the packaged rule (else a writer's open rebuilds them)."""
    return not kept(st) or _stored(st) == [_packaged_fingerprint()]


def _packaged_fingerprint() -> str:
    p = packaged()
    return fingerprint(p["window_days"], p["min_recurrence"], p["min_sessions"], p["ignore"])


def _stored(st: Any) -> list[str] | None:
    """The rule the kept spans were made with (None on a graph before migration 0010)."""
    try:
        return [r["value"] for r in st.run("spn_fingerprint")]
    except Exception:  # noqa: BLE001 - a graph before migration 0010
        return None


# -- reading --------------------------------------------------------------------------------------------------
def ready_top(st: Any, *, statuses: list[str], now: datetime, window_days: float, min_recurrence: int,
              min_sessions: int, ignore: Iterable[str], high_n: int, high_p: Iterable[str],
              limit: int) -> tuple[list[dict[str, Any]], int] | None:
    """(the first `limit` patterns ready at `now` in rank order, how many are ready), as `lc_promotion_figures`
    then `promote.rank` give them: None when the kept spans cannot answer (no complete aggregate, another
    promotion rule, a team graph): the caller asks the full query."""
    from kg.store.aggregates import ready

    if not kept(st) or not ready(st):
        return None
    if _stored(st) != [fingerprint(window_days, min_recurrence, min_sessions, ignore)]:
        return None
    blocked = _blocked(st, statuses, now)
    total = st.run("spn_count", statuses=statuses, now=now)[0]["n"] - len(blocked)
    rows = st.run("spn_top", statuses=statuses, now=now, high_n=high_n, high_p=list(high_p),
                  limit=max(0, limit) + len(blocked))
    out = [{k: r[k] for k in ("id", "priority", "recurrence", "sessions", "last_seen")}
           for r in rows if r["id"] not in blocked]
    return out[:max(0, limit)], total


def _blocked(st: Any, statuses: list[str], now: datetime) -> set[str]:
    """The patterns ready at `now` that a proposal keeps out (pending, or skipped since their last event)."""
    from kg.store.aggregates import _blocking
    from kg.store.schema import meta_key

    about: dict[str, list[tuple[str | None, datetime | None]]] = {}
    for q in st.run("agg_proposals_only", statuses=["pending", "skipped"]):
        for link in st.run("agg_proposal_links", key=meta_key("Proposal", q["id"])):
            if link["node"] is not None:
                about.setdefault(link["node"], []).append((q["status"], q["decided_at"]))
    out = set()
    for pid, proposals in sorted(about.items()):
        for r in st.run("spn_of", id=pid, now=now, statuses=statuses):
            if _blocking(proposals, r["last_seen"]):
                out.add(pid)
    return out


def differences(st: Any, rows: dict[str, dict[str, Any]]) -> list[str]:
    """How the kept spans differ from those of PatternOcc's recomputed rows (`aggregates._all_rows`) and their
    patterns' own status and priority."""
    if not kept(st):
        return []
    rule = _rule()
    have: dict[str, list[Span]] = {}
    kinds: dict[str, str | None] = {}
    out = []
    for r in st.run("spn_all"):
        if not r["node"] == r["pid"] == r["id"]:
            out.append(f"ready span of {r['id']}: on node {r['node']}, named {r['pid']}")
        if (r["status"], r["priority"]) != (r["node_status"], r["node_priority"]):
            out.append(f"ready span of {r['id']}: status {r['status']}, priority {r['priority']} kept, "
                       f"{r['node_status']}, {r['node_priority']} on the pattern")
        have.setdefault(r["id"], []).append((r["opens"], r["closes"], r["n"], r["sessions"], r["last"]))
        kinds[r["id"]] = r["kind"]
    have = {pid: sorted(s) for pid, s in have.items()}
    fields = patterns(st)
    want = {pid: spans_of_row(r, rule) for pid, r in rows.items() if pid in fields}
    want = {pid: s for pid, s in want.items() if s}
    out += [f"ready spans of {pid}: {len(have.get(pid, []))} kept, {len(want.get(pid, []))} derived"
            for pid in sorted(set(want) | set(have)) if want.get(pid) != have.get(pid)]
    out += [f"ready spans of {pid}: its node is a {kind}" for pid, kind in sorted(kinds.items()) if kind != "pattern"]
    if not current(st):
        out.append("ready spans: made with another promotion rule")
    return out
