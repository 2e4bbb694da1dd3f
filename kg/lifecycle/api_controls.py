"""A person's controls over the lifecycle's settled rules: conflict decisions (`kg conflicts`, `kg resolve`) and
a node's decay (`kg pin`, `kg reinforce`). Public through `kg.lifecycle.api`, as its other functions are."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kg.core import clock
from kg.core.errors import NotFound, UsageError
from kg.lifecycle import settling, verifying
from kg.lifecycle.conflicts import COMPATIBLE
from kg.lifecycle.cycle import Lifecycle, _jsonable, holding
from kg.lifecycle.policy import load as load_policy
from kg.store.schema import meta_key

Now = datetime | str | None


# -- conflicts ------------------------------------------------------------------------------------------------
def conflicts(ws: Any, now: Now = None) -> list[dict[str, Any]]:
    """Every conflict decision with both rules, their scores and the winner ('' for a tie under review); a
    contradiction no decision covers yet (rules added since the last cycle) is decided first (`settling.outside`)."""
    with holding(ws) as st:
        lc = Lifecycle(ws, st, clock.now(now))
        with lc.tx():
            settling.outside(lc)
        decisions = st.run("lc_decisions")
        ids = sorted({d["a"] for d in decisions} | {d["b"] for d in decisions})
        facts = lc.rule_facts(ids) if ids else {}
    out = []
    for d in decisions:
        out.append(_jsonable({**d, "text_a": (facts.get(d["a"]) or {}).get("text"),
                              "text_b": (facts.get(d["b"]) or {}).get("text")}))
    return out


def resolve_conflict(ws: Any, decision_id: str, winner: str | None, now: Now = None, *,
                     compatible: bool = False) -> dict[str, Any]:
    """Override a decision: `winner` is one of its two rule ids (or 'a' / 'b'); or `compatible`, the two rules do
    not conflict: both are rendered, and the pair is not raised again (a person's decision is kept, as a winner
    is: the cycle leaves an override as it is). Re-renders the files."""
    if compatible == bool(winner):
        raise UsageError("give either --winner ID (one rule wins) or --compatible (the two do not conflict)")
    at = clock.now(now)
    with holding(ws) as st:
        found = [d for d in st.run("lc_decisions") if d["id"] == decision_id]
        if not found:
            raise NotFound(f"no conflict decision {decision_id!r}: `kg conflicts` lists them")
        d = found[0]
        pick = "" if compatible else {"a": d["a"], "b": d["b"]}.get((winner or "").lower(), winner or "")
        if not compatible and pick not in (d["a"], d["b"]):
            raise UsageError(f"--winner must be {d['a']} or {d['b']} (or a / b), not {winner!r}")
        lc = Lifecycle(ws, st, at)
        with lc.tx():
            settling.outside(lc)  # (the other contradictions added since the last cycle, before the export)
            st.run("lc_decision_override", key=meta_key("Decision", decision_id), winner=pick,
                   status=COMPATIBLE if compatible else "overridden",
                   reason=(f"judged compatible by a human on {at:%Y-%m-%d}" if compatible else
                           f"overridden by a human on {at:%Y-%m-%d}"), at=at)
        with lc.tx():  # (committed apart: the decision is read back) the new loser paused now
            verifying.pause_set_aside(lc, always=True)
        plans = lc.export()
        with lc.tx():
            verifying.resume_let_back(lc)  # the winner (both, when compatible), once written back
    return {"id": decision_id, "winner": pick or None,
            "loser": None if compatible else d["b"] if pick == d["a"] else d["a"],
            "compatible": compatible, "a": d["a"], "b": d["b"], "override": True,
            "files": [p.as_dict() for p in plans if p.action != "none"]}


# -- decay controls -------------------------------------------------------------------------------------------
def _brief(st: Any, node_id: str) -> dict[str, Any]:
    rows = st.run("lc_node_brief", id=node_id)
    if not rows:
        raise NotFound(f"no node {node_id!r}: `kg list` shows the ids")
    return rows[0]


def pin(ws: Any, node_id: str, now: Now = None, pinned: bool = True) -> dict[str, Any]:
    """Pinned nodes never decay."""
    at = clock.now(now)
    with holding(ws) as st:
        _brief(st, node_id)
        st.run("lc_pin", id=node_id, pinned=pinned, at=at)
    return {"id": node_id, "pinned": pinned}


def reinforce(ws: Any, node_id: str, now: Now = None) -> dict[str, Any]:
    """A user confirmation: resets the decay clock, restores the priority decay took, revives an expired
    node."""
    at = clock.now(now)
    lp = load_policy(ws)
    with holding(ws) as st:
        n = _brief(st, node_id)
        status = n["status"]
        if n["stage"] >= 3 and status == lp.decay.expired_status:
            status = "active" if n["kind"] == "pattern" else "pending"
        priority = n["base_priority"] or n["priority"]
        st.run("lc_reinforce", id=node_id, at=at, priority=priority, status=status)
    return {"id": node_id, "reinforced_at": at.isoformat(), "priority": priority, "status": status,
            "previous": {"priority": n["priority"], "status": n["status"], "stale": bool(n["stale"]),
                         "stage": n["stage"]}}
