"""The lifecycle's public functions. Each takes a `Workspace`, holds its graph for the call, and returns plain
data (or a `CycleReport`). The CLI (`kg cycle`, `kg propose`, ...) makes one call to one of these.

    from kg.lifecycle import api
    report = api.cycle(ws, now="2026-12-01T06:00", dry_run=True)
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kg.core import clock
from kg.core.errors import NotFound, StoreError, UsageError, os_failure
from kg.lifecycle import blocks, imported, imported_rules, promote, promoting, render, settling
from kg.lifecycle.api_controls import conflicts, pin, reinforce, resolve_conflict  # noqa: F401 - api.X stays
from kg.lifecycle.cycle import DAY, LIVE, CycleReport, Lifecycle, _jsonable, drained, holding
from kg.lifecycle.policy import load as load_policy
from kg.lifecycle.verify_check import current as check_current
from kg.lifecycle.verify_check import explain as check_explain
from kg.lifecycle.verifying import CHECKING
from kg.lifecycle.why import instruction_files, why  # noqa: F401 - api.why and api.instruction_files stay
from kg.store.schema import meta_key

__all__ = [
    "CycleReport", "approve", "conflicts", "cycle", "export_memory", "lifecycle_status", "pin", "propose",
    "reinforce", "resolve_conflict", "skip", "verify", "why",
]

Now = datetime | str | None


def cycle(ws: Any, now: Now = None, dry_run: bool = False, *, force: bool = False) -> CycleReport:
    """verify, revert, decay, conflicts, promote, export. Idempotent for a given `now`."""
    at = clock.now(now)
    before = getattr(ws, "applied_total", 0)
    with holding(ws) as st:
        lc = Lifecycle(ws, st, at, dry_run=dry_run)
        lc.report.journal_applied = drained(ws, before)
        if not dry_run:
            from kg.memory.preferences import record_waiting

            record_waiting(ws, st)
        report = lc.run_all(force=force)
        _how_out(lc, report.withdrawn)
        if not dry_run:
            report.compacted = _compacted(ws, st)
        return report


def _compacted(ws: Any, st: Any) -> dict[str, Any]:
    """The periodic job bounds the graph file (kg/store/compact.py): rebuilt when it grew past its rule. A failed
    compaction leaves the graph as it was and is said, not raised: the cycle's own work is done and committed."""
    from kg.core.errors import StoreError
    from kg.store import compact

    with ws._mutex:  # (a background apply of the cycle's own logs ends first: the handle is closed and reopened)
        try:
            done = compact.maybe(st, ws.policy)
        except (StoreError, RuntimeError, OSError) as exc:
            return {"error": str(exc)}
    return done.as_dict() | {"text": done.text()} if done is not None else {}


def verify(ws: Any, now: Now = None, dry_run: bool = False) -> dict[str, Any]:
    """Judge the changes that are due (and revert what failed); lists what is being monitored."""
    at = clock.now(now)
    before = getattr(ws, "applied_total", 0)
    with holding(ws) as st:
        lc = Lifecycle(ws, st, at, dry_run=dry_run)
        lc.report.journal_applied = drained(ws, before)
        if dry_run:
            with lc.rehearsal():
                lc.log(lc.revert(lc.verify()))
                lc.export()
        else:
            lc.sync()  # committed first: the verdicts read the changes it made anew (`Lifecycle.sync`)
            with lc.tx():
                logs = lc.revert(lc.verify())
            lc.log(lc.missed_logs(logs))
            lc.export()
        monitoring = [_change_view(c) for c in st.run("lc_changes_all") if c["status"] in (*LIVE, CHECKING)]
        _how_out(lc, lc.report.withdrawn)
        _how_out(lc, [m for m in monitoring if m["withdrawn_since"]], key="id")  # a paused one only (QA5 #7)
    rep = lc.report.as_dict()
    return {k: rep[k] for k in ("now", "dry_run", "verified", "withdrawn", "checks", "reverted", "held", "reminders",
                                "evidence_requested", "logged", "files", "flags", "skipped", "journal_applied")} | \
        {"monitoring": monitoring}


# -- proposals ------------------------------------------------------------------------------------------------
def propose(ws: Any) -> list[dict[str, Any]]:
    """The pending proposals, by number (`kg cycle` makes them). A read: a read-only workspace lists them too."""
    with ws.reading() as st:
        rows = st.run("lc_proposals", statuses=["pending"])
    return [_jsonable(r) for r in rows]


def _proposal(st: Any, number: int) -> dict[str, Any]:
    for r in st.run("lc_proposals", statuses=["pending", "approved", "skipped", "obsolete", "superseded"]):
        if r["number"] == number:
            return r
    raise NotFound(f"no proposal #{number}: `kg propose` lists the pending ones")


def _not_before(q: dict[str, Any], at: datetime, number: int) -> None:
    """Refuse a decision dated before its proposal was made (QA2 #4: `kg approve N --now 2026-01-01` applied a
    change months before its evidence, judged then on "no history before the change to compare with")."""
    made = q.get("created_at")
    if isinstance(made, datetime) and at.replace(tzinfo=None) < made.replace(tzinfo=None):
        raise UsageError(f"--now {at:%Y-%m-%d %H:%M} is before proposal #{number} was made ({made:%Y-%m-%d %H:%M}): "
                         "a proposal is decided after it exists; check the date")


def approve(ws: Any, number: int, now: Now = None) -> dict[str, Any]:
    """Carry out pending proposal N: apply a promotion, confirm a verification, take up a critical fix, render an
    imported principle (kg/lifecycle/imported.py)."""
    at = clock.now(now)
    lp = load_policy(ws)
    with holding(ws) as st:
        q = _proposal(st, number)
        if q["status"] == "approved" and q["target"]:  # again: an approve killed after the graph took it wrote
            lc = Lifecycle(ws, st, at)  # no file (QA8 #5): its file written now, and only that is said
            mine = [p for p in lc.export() if p.path == q["target"]]
            written = [p.as_dict() for p in mine if p.action not in ("none", "flag", render.SKIP)]
            if written:
                return {"number": number, "type": q["type"], "action": "approved already; its file written now",
                        "files": written}
            refused = [s["reason"] for s in lc.report.skipped if s["path"] == q["target"]]
            if refused:  # a file kg may not use: said as the first approve says it (exit 1)
                raise imported.not_written(lc, q["target"], refused[0])
        if q["status"] != "pending":
            raise UsageError(f"proposal #{number} is already {q['status']}; `kg propose` lists the pending ones")
        _not_before(q, at, number)
        closed = st.run("node_get", id=q["node"])[0]["n"] if q["node_kind"] == "pattern" else {}
        if closed.get("status") == "wont_fix":  # a person's close (or decay's expiry): never promoted
            key = closed.get("pattern_key") or q["node"]
            raise UsageError(f"pattern {key} is wont_fix (closed): `kg resolve {key} --status active` first, or "
                             f"`kg skip {number} --reason \"...\"`")
        lc = Lifecycle(ws, st, at)
        result: dict[str, Any] = {"number": number, "type": q["type"]}
        with lc.tx():
            if q["type"] == "promotion":
                pattern = st.run("node_get", id=q["node"])[0]["n"]
                if pattern.get("status") == "promoted":
                    raise UsageError(f"pattern {q['node']} is promoted already; skip proposal #{number}")
                target = lp.targets.get(q["target_kind"])
                if target is None:
                    raise UsageError(f"proposal #{number} names target {q['target_kind']!r}, which the rules no "
                                     "longer have (rules/lifecycle.toml [targets])")
                plan = promote.Plan(
                    pattern_id=q["node"], key=pattern.get("pattern_key") or q["node"], target=q["target_kind"],
                    file=q["target"], block=target.block, mode=target.apply, node_kind=target.node, text=q["text"],
                    hypothesis=q["hypothesis"] or "", change=q["change"], motivation=q["motivation"],
                    risk=q["risk"], effort=q["effort"], impact=q["impact"], priority=q["priority"] or "medium",
                    area=q["area"] or "", category=q["category"] or "", event_ids=tuple(q["evidence"] or ()))
                change = lc.apply(plan, source="approved", proposal=number)
                if change is None:
                    raise imported.not_written(lc, q["target"], lc.report.held[-1]["reason"])
                result.update(action="applied", change=change, target=q["target"], text=q["text"])
            elif q["type"] == imported.TYPE and q["target_kind"] != imported.TARGET:  # a TOOLS.md rule, ...
                result.update(imported_rules.adopt(lc, q, number))
            elif q["type"] == imported.TYPE:  # another workspace's principle, rendered only now
                result.update(imported.adopt(lc, q, number))
            elif q["type"] == "verification":
                line = f"{at:%Y-%m-%d} confirmed by a human (proposal #{number})"
                rows = st.run("lc_change_confirm", id=q["change_id"], statuses=list(LIVE), at=at,
                              next_check=at + lp.verification.monitor_days * DAY, line=line)
                result.update(action="confirmed" if rows else "no longer live", change=q["change_id"])
            else:
                st.run("status_set", id=q["node"], status="in_progress", at=at)
                result.update(action="in_progress", entry=q["node"])
            st.run("lc_proposal_decide", key=meta_key("Proposal", q["id"]), status="approved", reason="", at=at)
        with lc.tx():  # a rule approved against a live one: settled before the export writes both (in its own
            settling.outside(lc)  # transaction: the new change read back in the one that made it came out torn)
        aside = [p["set_aside"] for p in lc.report.promoted
                 if p.get("set_aside") and p["change"] == result.get("change")]
        if aside:  # (what keeps it out of its file, as the cycle says it)
            result["set_aside"] = aside[0]
        try:
            plans = lc.export()
        except OSError as exc:  # the approval is the graph's already (QA11 #1: "nothing half-written was kept")
            raise StoreError(f"proposal #{number} is approved, but its file could not be written "
                             f"({os_failure(exc).split(';')[0]}): fix that, then run `kg approve {number}` again to "
                             "write it (the next `kg cycle` writes it too)") from None
    result["files"] = [p.as_dict() for p in plans if p.action != "none"]
    return result


def skip(ws: Any, number: int, reason: str, now: Now = None) -> dict[str, Any]:
    """Decline pending proposal N, with a reason. A skipped promotion comes back only if the pattern recurs."""
    at = clock.now(now)
    reason = " ".join(ws.rules.redactor.redact(reason or "").text.split())  # redacted raw, first: it is answered too
    if not reason:
        raise UsageError("say why with --reason \"...\" (it is kept with the proposal)")
    with holding(ws) as st:
        q = _proposal(st, number)
        if q["status"] != "pending":
            raise UsageError(f"proposal #{number} is already {q['status']}")
        _not_before(q, at, number)
        st.run("lc_proposal_decide", key=meta_key("Proposal", q["id"]), status="skipped", reason=reason, at=at)
    return {"number": number, "type": q["type"], "status": "skipped", "reason": reason}


# -- export and explanation -------------------------------------------------------------------------------------
def export_memory(ws: Any, now: Now = None, dry_run: bool = False, *, force: bool = False) -> dict[str, Any]:
    """Render every kg block (MEMORY.md's active principles, conflict winners only, in a stable order; and the
    other targets) from the graph. Two runs give identical bytes."""
    at = clock.now(now)
    with holding(ws) as st:
        lc = Lifecycle(ws, st, at, dry_run=dry_run)
        if dry_run:  # the conflicts it would settle first (`settling.outside`), undone
            with lc.rehearsal():
                settling.outside(lc)
                plans = lc.export(force=force)
                desired = lc.desired()
        else:
            with lc.tx():
                settling.outside(lc)
            plans = lc.export(force=force)
            desired = lc.desired()
    return {"now": at.isoformat(), "dry_run": dry_run,
            "files": [p.as_dict() for p in plans if p.action not in ("none", "skip")],
            "skipped": lc.report.skipped,
            "blocks": [{"path": d.file, "block": d.block, "lines": [line.text for line in d.lines]}
                       for _, d in sorted(desired.items())]}


def _how_out(lc: Lifecycle, items: list[dict[str, Any]], key: str = "change") -> None:
    """Say how each paused change's rule left its file (`how`): "aside" when kg left it out for a conflict it
    lost or tied, "let back" when a conflict had set it aside and no longer does, and it is in its file again as
    kg wrote it (resumed by the cycle or `kg conflicts resolve` that wrote it back: `resume_let_back`),
    "edited" while its kg block is still there (a
    person edited inside it: the rule reworded, or taken out of the block, the block kept), "withdrawn" when the
    block or the whole file is gone. Verification pauses either way (kg/lifecycle/verify_withdrawn.py): the rule
    as kg wrote it is not in effect, and a reworded rule is no evidence about kg's words."""
    if not items:
        return
    from kg.lifecycle.verify_withdrawn import ASIDE, in_effect, last_out
    from kg.lifecycle.verifying import set_aside

    rows = {r["id"]: r for r in lc.st.run("lc_live_effects", statuses=list(LIVE))}
    states = {r["id"]: r for r in lc.st.run("lc_blocks")}
    aside = set_aside(lc)
    texts: dict[str, str | None] = {}
    for item in items:
        if item.get("action") == "not written":  # never in its file here: nothing left it (`verifying.unwritten`)
            continue
        row = rows.get(item.get(key))
        target, block = (row["target"], row["block"]) if row else (None, None)
        if target is None or lc.problem(target):
            continue
        if item.get(key) in aside:  # kg left it out itself: a conflict decided against it
            item["how"] = "aside"
            continue
        if target not in texts:
            texts[target] = blocks.read(lc.root / target)
        if last_out(row["evidence"]) == ASIDE and in_effect(  # kg wrote it back itself: nobody edited it
                texts[target], block, row["text"] or "", (states.get(f"{target}#{block}") or {}).get("hash")):
            item["how"] = "let back"
            continue
        try:
            item["how"] = "edited" if blocks.inner_of(texts[target], block) is not None else "withdrawn"
        except blocks.BlockError as exc:  # damaged markers: kg leaves the block alone, and says so (`kg doctor`)
            item["how"] = "damaged"
            _flag_damaged(lc.report.flags, target, block, exc)


def _flag_damaged(flags: list[dict[str, Any]], path: str, block: str, exc: Exception) -> None:
    """A block whose markers are damaged, as a flag (once): a person's fix, kg writes nothing into it until then."""
    if not any(f["path"] == path and f["block"] == block for f in flags):
        flags.append({"path": path, "block": block, "flag": f"{exc}; {blocks.DAMAGED_FIX}"})


def _how(lc: Lifecycle, change: str | None) -> str | None:
    """How a paused change's rule left its file now (`_how_out`), so `kg why` says what `kg status` says."""
    item: dict[str, Any] = {"change": change}
    _how_out(lc, [item])
    return item.get("how")


def _withdrawn(lc: Lifecycle, at: datetime) -> dict[str, dict[str, Any]]:
    """Live changes whose rule a person took out of its file: paused by a cycle already, or seen so now (the
    next cycle pauses them)."""
    from kg.lifecycle import verify_withdrawn, verifying

    rows = lc.st.run("lc_live_effects", statuses=list(LIVE))
    on = verifying.effects(lc, rows) if rows else {}
    here = verifying.here_of(lc)  # a team graph: this workspace's own withdrawal, or another member's
    out = {}
    for r in rows:
        since = verify_withdrawn.paused_since(r["evidence"], here)
        others = verify_withdrawn.elsewhere(r["evidence"], here) if since is None else []
        if since is None and not others and on[r["id"]] is not False:  # in its file, or it cannot be read (None)
            continue
        away = bool(others) and on[r["id"]] is not False  # in effect here, out of another member's file
        out[r["id"]] = {"change": r["id"], "target": r["target"], "text": (r["text"] or "")[:80],
                        "withdrawn_since": since or (others[0][1] if away else at),
                        "recorded": since is not None or away, "back_in_file": on[r["id"]],
                        **({"elsewhere": [w for w, _ in others]} if away else {})}
    _how_out(lc, list(out.values()))
    for item in out.values():
        if item.get("elsewhere"):
            item["how"] = "elsewhere"
    return out


def _ready_view(c: promote.Candidate, lc: Lifecycle, room: promote.Budget) -> dict[str, Any]:
    """A ready pattern for `kg status`; `waiting` says why a cycle would not promote it now (a full block, or
    its rate before resting on too few days watched: `baseline`, with the day it becomes eligible)."""
    plan = promote.plan(c, lc.lp)
    wait = promote.says_nothing_to_do(c, plan.text, lc.lp) or room.why_not(plan.file, plan.block, plan.text)
    base = promoting.baseline_wait(lc, c.pattern_id) if not wait and not c.failed else None
    return {"pattern": c.pattern_id, "key": c.key, "recurrence": c.recurrence, "sessions": c.sessions,
            "summary": plan.text[:80], "target": plan.file + (f" (waits: {wait or base.short})" if wait or base
                                                              else ""),
            "waiting": wait or (base.reason if base else ""), "baseline": base.as_dict() if base else None,
            "recovering": bool(c.failed)}


def _change_view(c: dict[str, Any]) -> dict[str, Any]:
    from kg.lifecycle.verify_withdrawn import paused_since

    return _jsonable({k: c.get(k) for k in ("id", "status", "target", "text", "hypothesis", "applied_at",
                                            "next_check", "verdict", "verdict_at", "reverted_at", "revert_reason",
                                            "check_count", "node", "pattern", "key")}
                     | {"withdrawn_since": paused_since(c.get("evidence")) if c.get("status") in LIVE else None,
                        "check": _check_of(c)})


def _check_of(c: dict[str, Any]) -> dict[str, Any] | None:
    """A change out for a check: since, until, and what happens then."""
    if c.get("status") != CHECKING:
        return None
    since, until = check_current(c.get("evidence")) or (None, None)
    return {"since": since, "until": until, "why": check_explain(c.get("evidence"))}


# -- status ---------------------------------------------------------------------------------------------------
def lifecycle_status(ws: Any, now: Now = None, limit: int = 10, ready_limit: int | None = None, *,
                     undecided: bool = False) -> dict[str, Any]:
    """Extra sections for `kg status`: verifications due, patterns ready to promote, proposals waiting, blocks
    flagged for review, conflicts tied. `ready_limit`: list fewer ready patterns than `limit` (each is filled
    with its window's events, read by key: the session brief shows 5 of them, not the 8 of its longest list).
    `undecided`: also the contradictions no decision covers yet (rules added or approved since the last cycle),
    as `kg conflicts` would decide them, nothing stored (`conflicts_undecided`; the session brief, which shows no
    conflicts, does not ask)."""
    at = clock.now(now)
    lp = load_policy(ws)
    with ws.reading() as st:  # a read: a read-only workspace answers too (QA5 #4)
        from kg.store.sideindex import open_reader

        open_reader(st, open_it=True)  # a ready pattern's events: the columns that never change from its rows
        lc = Lifecycle(ws, st, at)
        due = st.run("lc_changes_due", statuses=list(LIVE), now=at)
        paused = _withdrawn(lc, at)
        due = [r for r in due if r["id"] not in paused]
        shown = limit if ready_limit is None else max(0, min(limit, ready_limit))
        ready_rows, ready_total = promoting.ready_top(lc, shown)
        ready = lc.fill(ready_rows)
        room = promote.Budget(lp, {k: [x.text for x in d.lines] for k, d in lc.desired().items()})
        ready_views = [_ready_view(c, lc, room) for c in ready[:limit]]
        pending = st.run("lc_proposals", statuses=["pending"])
        superseded = st.run("lc_proposals", statuses=[imported_rules.SUPERSEDED])  # an import's or a promotion's
        flags = [{"path": b["path"], "block": b["name"], "flag": b["flag"]} for b in st.run("lc_blocks") if b["flag"]]
        flags += [f for f in lc.report.flags  # damaged markers seen now (`_how_out`), before a cycle stored them
                  if not any(f["path"] == g["path"] and f["block"] == g["block"] for g in flags)]
        decisions = st.run("lc_decisions")
        ties = [d for d in decisions if d["status"] == "tie"]
        new = settling.undecided(lc, decisions) if undecided else []
        checks = st.run("lc_changes_in", statuses=[CHECKING])
    from kg.lifecycle.verify import due_stage

    return _jsonable({
        "verifications_due": [{"change": r["id"], "target": r["target"], "text": r["text"][:80],
                               "due": r["next_check"],
                               "overdue": due_stage(r["status"], r["due_since"], r["next_check"], at, lp)}
                              for r in due[:limit]],
        "verifications_due_total": len(due),
        "verifications_paused": list(paused.values()),
        "checks_out": [{"change": c["id"], "target": c["target"], "text": (c["text"] or "")[:80], **_check_of(c)}
                       for c in checks],
        "ready_to_promote": ready_views,
        "ready_to_promote_total": ready_total,
        "proposals_pending": [{"number": q["number"], "type": q["type"], "target": q["target"],
                               "change": q["change"]} for q in pending[:limit]],
        "proposals_pending_total": len(pending),
        "proposals_superseded": [{"number": q["number"], "target": q["target"], "change": q["change"],
                                  "reason": q["reason"], "at": q["decided_at"]} for q in superseded[-limit:]],
        "flags": flags,
        "conflicts_tied": [{"id": d["id"], "a": d["a"], "b": d["b"], "score": d["score_a"],
                            "kept": d["winner"] or None} for d in ties],
        **({"conflicts_undecided": [{"a": d["a"], "b": d["b"], "text_a": d["text_a"], "text_b": d["text_b"],
                                     "score_a": d["score_a"], "score_b": d["score_b"], "status": d["status"],
                                     "winner": d["winner"] or None} for d in new]} if undecided else {}),
    })
