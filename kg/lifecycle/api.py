"""The lifecycle's public functions. Each takes a `Workspace`, holds its graph for the call, and returns plain
data (or a `CycleReport`). The CLI (`kg cycle`, `kg propose`, ...) makes one call to one of these.

    from kg.lifecycle import api
    report = api.cycle(ws, now="2026-12-01T06:00", dry_run=True)
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from kg.core import clock
from kg.core.errors import NotFound, UsageError
from kg.lifecycle import blocks, imported, imported_rules, promote, promoting
from kg.lifecycle.api_controls import conflicts, pin, reinforce, resolve_conflict  # noqa: F401 - api.X stays
from kg.lifecycle.cycle import DAY, LIVE, CycleReport, Lifecycle, _jsonable, drained, holding
from kg.lifecycle.policy import load as load_policy
from kg.lifecycle.verify_check import current as check_current
from kg.lifecycle.verify_check import explain as check_explain
from kg.lifecycle.verifying import CHECKING
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
        report = lc.run_all(force=force)
        _how_out(lc, report.withdrawn)
        return report


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
            with lc.tx():
                logs = lc.revert(lc.verify())
            lc.log(lc.missed_logs(logs))
            lc.export()
        monitoring = [_change_view(c) for c in st.run("lc_changes_all") if c["status"] in (*LIVE, CHECKING)]
        _how_out(lc, lc.report.withdrawn)
        _how_out(lc, [m for m in monitoring if m["withdrawn_since"]], key="id")  # a paused one only (QA5 #7)
    rep = lc.report.as_dict()
    return {k: rep[k] for k in ("now", "dry_run", "verified", "withdrawn", "checks", "reverted", "reminders",
                                "evidence_requested", "logged", "files", "flags", "skipped", "journal_applied")} | \
        {"monitoring": monitoring}


# -- proposals ------------------------------------------------------------------------------------------------
def propose(ws: Any) -> list[dict[str, Any]]:
    """The pending proposals, by number (`kg cycle` makes them)."""
    with holding(ws) as st:
        rows = st.run("lc_proposals", statuses=["pending"])
    return [_jsonable(r) for r in rows]


def _proposal(st: Any, number: int) -> dict[str, Any]:
    for r in st.run("lc_proposals", statuses=["pending", "approved", "skipped", "obsolete", "superseded"]):
        if r["number"] == number:
            return r
    raise NotFound(f"no proposal #{number}: `kg propose` lists the pending ones")


def approve(ws: Any, number: int, now: Now = None) -> dict[str, Any]:
    """Carry out pending proposal N: apply a promotion, confirm a verification, take up a critical fix, render an
    imported principle (kg/lifecycle/imported.py)."""
    at = clock.now(now)
    lp = load_policy(ws)
    with holding(ws) as st:
        q = _proposal(st, number)
        if q["status"] != "pending":
            raise UsageError(f"proposal #{number} is already {q['status']}; `kg propose` lists the pending ones")
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
                    raise UsageError(f"{q['target']}: {lc.report.held[-1]['reason']}; fix the file, then approve "
                                     "again")
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
        plans = lc.export()
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
        st.run("lc_proposal_decide", key=meta_key("Proposal", q["id"]), status="skipped", reason=reason, at=at)
    return {"number": number, "type": q["type"], "status": "skipped", "reason": reason}


# -- export and explanation -------------------------------------------------------------------------------------
def export_memory(ws: Any, now: Now = None, dry_run: bool = False, *, force: bool = False) -> dict[str, Any]:
    """Render every kg block (MEMORY.md's active principles, conflict winners only, in a stable order; and the
    other targets) from the graph. Two runs give identical bytes."""
    at = clock.now(now)
    with holding(ws) as st:
        lc = Lifecycle(ws, st, at, dry_run=dry_run)
        plans = lc.export(force=force)
        desired = lc.desired()
    return {"now": at.isoformat(), "dry_run": dry_run,
            "files": [p.as_dict() for p in plans if p.action not in ("none", "skip")],
            "skipped": lc.report.skipped,
            "blocks": [{"path": d.file, "block": d.block, "lines": [line.text for line in d.lines]}
                       for _, d in sorted(desired.items())]}


_MARKER = re.compile(r"^(?:<!--|#)\s*kaizen-kg:(begin|end)\s+(\S+?)\s*(?:-->)?$")


def _norm(line: str) -> str:
    """A line as compared: spaces and a list bullet aside, and a marker of kg's in it made inert, as the block
    editor renders it (`blocks.neutral`): the line copied from the file and the rule's own text are one line."""
    text = " ".join(blocks.neutral(line).split())
    return re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", text).strip()


def why(ws: Any, line: str, now: Now = None, limit: int = 10) -> dict[str, Any]:
    """Trace a line of an instruction file back to the change, the rule node, the pattern and its events.

    In this order: the exact line in a block kg renders now; else the exact line of a past change (reverted,
    say); else the exact line outside kg's blocks (a human wrote it); else the candidates: lines that contain
    the text as a fragment, then fuzzy matches, each with the change behind it."""
    line = ws.rules.redactor.redact(line).text  # echoed in the answer; kg's own lines hold markers, not secrets
    needle = _norm(line)
    if not needle:
        raise UsageError("give the line to explain, e.g. kg why \"- Use SSH remotes for git push\"")
    at = clock.now(now)
    with holding(ws) as st:
        lc = Lifecycle(ws, st, at)
        desired = lc.desired()
        changes = {c["id"]: c for c in st.run("lc_changes_all")}
        live = [(rl, x) for d in desired.values() for rl in d.lines for x in rl.text.splitlines() if _norm(x)]
        hit = next((rl for rl, x in live if _norm(x) == needle), None)
        if hit is not None:
            out = _trace(st, hit.node, changes.get(hit.change), at, _how(lc, hit.change))
            out.update(line=line, found=True, source="kg", file=hit.file, block=hit.block, text=hit.text)
            return _jsonable(out)
        past = [c for c in changes.values() if any(_norm(x) == needle for x in (c["text"] or "").splitlines())]
        if past:
            c = past[-1]
            out = _trace(st, c["node"], c, at, _how(lc, c["id"]))
            out.update(line=line, found=True, source="kg-inactive", file=c["target"], block=c["block"],
                       text=c["text"])
            out["explanation"].insert(0, f"kg wrote this line with {c['id']}, but that change is {c['status']} "
                                         "now, so kg no longer renders it." if c["status"] != CHECKING else
                                         f"kg wrote this line with {c['id']} and took it out for a check: "
                                         f"{check_explain(c['evidence'])}.")
            return _jsonable(out)
    human = [(path, x) for path in _instruction_files(ws, desired) for x in (blocks.read(ws.root / path) or "")
             .splitlines() if _norm(x)]
    holders = list(dict.fromkeys(path for path, x in human if _norm(x) == needle))
    marker = _MARKER.match(" ".join(line.split()))  # (the line as given: `needle` has its markers made inert)
    if marker:  # kg's own marker: the same line bounds its block in every file that has one
        end, name = marker.group(1), marker.group(2)
        where = f"in {', '.join(holders)}" if holders else "no instruction file holds it now"
        return {"line": line, "found": True, "source": "kg-marker", "file": holders[0] if holders else None,
                "files": holders, "block": name,
                "explanation": [f"kg wrote this line: the {end} marker of its block {name!r} ({where}); kg writes "
                                "only between its markers, and the text around them is yours"]}
    for path, x in human:
        if _norm(x) == needle:
            text = blocks.read(ws.root / path) or ""
            inside = blocks.block_of_line(text, text.find(x))
            ours = _kg_wrote(ws, desired, path, text, x, inside)
            if ours:
                return {"line": line, "found": True, "source": "kg-block", "file": path, "block": inside,
                        "explanation": [f"{path}: {ours}."]}
            where = (f"this line is inside kg's block {inside!r}, but kg did not write it: a person edited the "
                     "block (kg keeps the edit and flags the block)" if inside else
                     "this line is outside kg's blocks; kg did not write it")
            also = [f"the same line is also in {', '.join(holders[1:])}"] if len(holders) > 1 else []
            return {"line": line, "found": True, "source": "human", "file": path, "files": holders,
                    "block": inside, "explanation": [f"{path}: {where}.", *also]}
    pool = ([("kg", rl.file, x, rl.change, (changes.get(rl.change) or {}).get("status") or "active")
             for rl, x in live] +
            [("kg-inactive", c["target"], x, c["id"], c["status"]) for c in changes.values() if c["status"] not in LIVE
             for x in (c["text"] or "").splitlines() if _norm(x)] +
            [("human", path, x, "", "") for path, x in human])
    cands = _candidates(needle, pool, limit)
    if cands:
        lines = [f"no line is exactly this; {len(cands)} candidate(s), best first:"]
        lines += [f"  [{c['match']} {c['score']:.0f}] {c['file']}: {c['text']}"
                  + (f" ({c['change']}, {c['status']})" if c["change"] else " (outside kg's blocks)")
                  for c in cands]
        lines.append("run kg why with one of these lines for its full story")
        return {"line": line, "found": True, "source": "candidates", "candidates": cands, "explanation": lines}
    return {"line": line, "found": False, "source": "unknown", "candidates": [],
            "explanation": ["no kg block holds this line and no change ever wrote it"]}


def _kg_wrote(ws: Any, desired: dict[tuple[str, str], Any], path: str, text: str, x: str,
              inside: str | None) -> str:
    """Why kg wrote a line no lifecycle change holds ('' when it did not): a line of another kg writer's block
    (preferences, the AGENTS.md block...) whose content still has the hash kg wrote, or the heading kg put before
    a block it created."""
    if inside:
        inner = blocks.inner_of(text, inside) or ""
        if any(s.get("hash") and blocks.same(inner, str(s["hash"])) for s in blocks.load_states(ws.kg_dir).values()):
            return (f"kg wrote this line in its block {inside!r} (kept by a kg command such as `kg pref set`, "
                    "not by a lifecycle change), and nobody edited the block since")
        return ""
    heading = x.strip()
    for (file, block), d in desired.items():
        if file == path and d.section and d.section.strip() == heading:
            return f"kg added this heading when it created its block {block!r} under it"
    return ""


def _candidates(needle: str, pool: list[tuple[str, str, str, str, str]], limit: int) -> list[dict[str, Any]]:
    """Lines holding the text as a fragment (whole words first), then fuzzy matches (≥ 80)."""
    from rapidfuzz import fuzz

    low = needle.casefold()
    seen, out = set(), []
    for source, file, text, change, status in pool:
        norm = _norm(text)
        key = (file, norm)  # a line kg renders is also in the file: it is kg's, not a human's
        if key in seen:
            continue
        seen.add(key)
        hay = norm.casefold()
        if low in hay:
            words = re.search(rf"(?<!\w){re.escape(low)}(?!\w)", hay) is not None
            match, score = "fragment", 100.0 if words else 95.0
        else:
            score = fuzz.ratio(low, hay)
            if score < 80:
                continue
            match = "fuzzy"
        out.append({"match": match, "score": round(score, 1), "source": source, "file": file, "text": norm,
                    "change": change, "status": status})
    order = {"kg": 0, "kg-inactive": 1, "human": 2}
    out.sort(key=lambda c: (c["match"] != "fragment", -c["score"], order[c["source"]], c["file"], c["text"]))
    return out[:limit]


def instruction_files(ws: Any) -> list[str]:
    """The files kg's promotions write (each target's file and the memory file), as workspace-relative names."""
    lp = load_policy(ws)
    return sorted({t.file for t in lp.targets.values() if "{" not in t.file} | {lp.memory.file})


def _instruction_files(ws: Any, desired: dict[tuple[str, str], Any]) -> list[str]:
    lp = load_policy(ws)
    names = {t.file for t in lp.targets.values() if "{" not in t.file} | {lp.memory.file} | {f for f, _ in desired}
    return sorted(names)


UNVERIFIED = ("not verified: it came from no pattern and nothing it relates to here belongs to one (an imported rule "
              "another workspace added by hand), so there is no mistake's rate to check it against; it stays until a "
              "person takes it out")


def _trace(st: Any, node_id: str, change: dict[str, Any] | None, at: datetime,
           out_how: str | None = None) -> dict[str, Any]:
    node_rows = st.run("node_get", id=node_id)
    node = {k: v for k, v in node_rows[0]["n"].items() if not k.startswith("_") and k != "tokens"} if node_rows else {}
    out: dict[str, Any] = {"node": node, "change": None, "pattern": None, "events": [], "decisions": []}
    lines = [f"rule node {node_id} ({node.get('kind')}, {node.get('status')})"]
    if change:
        out["change"] = _change_view(change) | {"evidence": change["evidence"], "rate_before": change["rate_before"],
                                                "rate_after": change["rate_after"]}
        how = "auto-applied" if change["source"] == "auto" else f"approved (proposal #{change['proposal']})"
        if change["source"] == imported.TYPE:
            how = f"imported from another workspace, approved by a human (proposal #{change['proposal']})"
        lines.insert(0, f"written by {change['id']} on {change['applied_at']:%Y-%m-%d} ({how}) into "
                        f"{change['target']}; hypothesis: {change['hypothesis']}")
        if change["pattern"] or change["verdict"]:
            lines.append(f"verification: {change['verdict'] or 'not yet'}; status {change['status']}; next check "
                         f"{change['next_check']:%Y-%m-%d}")
        else:  # a change is checked against its pattern's rate (lc_changes_due): with none, its check never comes
            out["change"].update(next_check=None, unverified=UNVERIFIED)
            lines.append(f"verification: none; status {change['status']}; {UNVERIFIED}")
        from kg.lifecycle.verify_withdrawn import explain

        here = (getattr(st, "origin", None) or {}).get("origin_workspace") or None  # a team graph's member
        if change["status"] in LIVE and (paused := explain(change["evidence"], at, out_how, here)):
            lines.append(f"verification {paused}")
        if change["status"] == CHECKING:
            lines.append(f"a check, not a revert: {check_explain(change['evidence'])}")
        checks = [e for e in change["evidence"] or [] if e[:4].isdigit()]
        if len(checks) > 1:
            lines.append(f"last check: {checks[-1]}")
        if change["pattern"]:
            stats = st.run("pattern_stats", keys=[change["key"]]) if change["key"] else []
            out["pattern"] = {"id": change["pattern"], "key": change["key"],
                              **({k: stats[0][k] for k in ("recurrence", "sessions", "first_seen", "last_seen")}
                                 if stats else {})}
            out["events"] = st.run("lc_pattern_events", id=change["pattern"], limit=100)
            lines.append(f"from pattern '{change['key']}' ({change['pattern']}): "
                         f"{out['pattern'].get('recurrence', '?')}x in {out['pattern'].get('sessions', '?')} sessions")
            lines += [f"  event {e['id']} {e['created_at']:%Y-%m-%d}: {e['text']}" for e in out["events"][:20]]
    else:
        lines.insert(0, f"rendered from active principle {node_id} (no change: added by hand or imported) into "
                        "MEMORY.md")
    for d in st.run("lc_decisions"):
        if node_id in (d["a"], d["b"]):
            out["decisions"].append(d)
            state = "won" if d["winner"] == node_id else ("tie (under review)" if not d["winner"] else "lost")
            lines.append(f"conflict {d['id']}: {state} ({d['score_a']} vs {d['score_b']})")
    out["explanation"] = lines
    return out


def _how_out(lc: Lifecycle, items: list[dict[str, Any]], key: str = "change") -> None:
    """Say how each paused change's rule left its file (`how`): "edited" while its kg block is still there (a
    person edited inside it: the rule reworded, or taken out of the block, the block kept), "withdrawn" when the
    block or the whole file is gone. Verification pauses either way (kg/lifecycle/verify_withdrawn.py): the rule
    as kg wrote it is not in effect, and a reworded rule is no evidence about kg's words."""
    if not items:
        return
    blocks_of = {r["id"]: (r["target"], r["block"]) for r in lc.st.run("lc_live_effects", statuses=list(LIVE))}
    texts: dict[str, str | None] = {}
    for item in items:
        target, block = blocks_of.get(item.get(key), (None, None))
        if target is None or lc.problem(target):
            continue
        if target not in texts:
            texts[target] = blocks.read(lc.root / target)
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
def lifecycle_status(ws: Any, now: Now = None, limit: int = 10, ready_limit: int | None = None) -> dict[str, Any]:
    """Extra sections for `kg status`: verifications due, patterns ready to promote, proposals waiting, blocks
    flagged for review, conflicts tied. `ready_limit`: list fewer ready patterns than `limit` (each is filled
    with its window's events, read by key: the session brief shows 5 of them, not the 8 of its longest list)."""
    at = clock.now(now)
    lp = load_policy(ws)
    with holding(ws) as st:
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
        ties = [d for d in st.run("lc_decisions") if d["status"] == "tie"]
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
    })
