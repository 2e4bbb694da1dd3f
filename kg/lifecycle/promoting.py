"""The promote step of a cycle: select the ready patterns (new ones, and reverted ones that keep recurring),
rank them by impact, fill in the best few from their events, and apply or propose within the budgets.

Selection is by named queries, decisions are the pure functions of `promote` and `verify`, writes go through
`Lifecycle.apply` and `Lifecycle._new_proposal`.
"""

from __future__ import annotations

from typing import Any

from kg.lifecycle import promote, verify, verify_wait, verifying
from kg.store.aggregates import EXCLUDED_TAG  # the tag rules/errors.toml gives an event that is only an exit status

BY_KEY_AT_MOST = 50  # patterns filled one by key (a few ms each) up to this many; past it one join is cheaper


def ready_rows(lc: Any, shown: int | None = None) -> list[dict[str, Any]]:
    """Every pattern ready to promote, ranked by impact, with its figures only. Recovery rows carry
    `failed` (the reverted texts) and `reverted_at`. `shown`: only the first `shown` rows carry the patterns'
    key, text and area (read by key after ranking); the rest are counted and ranked from their figures (issue
    22: a status shows 5-10 of thousands). A workspace's own `lc_promotion_candidates` is asked as written."""
    p = lc.lp.promotion
    since = lc.now - p.window_days * verify.DAY
    light = shown is not None and _packaged(lc.st, "lc_promotion_candidates")
    rows = lc.st.run("lc_promotion_figures" if light else "lc_promotion_candidates", pattern_statuses=["active"],
                     since=since, now=lc.now, ignore_statuses=list(p.ignore_event_statuses),
                     min_recurrence=p.min_recurrence, min_sessions=p.min_sessions)
    rows = [x for x in rows if promote.eligible(int(x["recurrence"]), int(x["sessions"]), lc.lp)]
    rows = promote.rank(rows + _recovering(lc), lc.lp)
    if light:
        _fill_fields(lc, rows[:shown])
    return rows


def _recovering(lc: Any) -> list[dict[str, Any]]:
    """The reverted patterns that keep recurring after their cool-down (recovery rows)."""
    if not int(lc.st.run("lc_reverted_count")[0]["n"]):  # 2.5 s at 100k events, even with nothing reverted
        return []
    p, r = lc.lp.promotion, lc.lp.recovery
    return lc.st.run("lc_recovery_candidates", since=lc.now - p.window_days * verify.DAY, now=lc.now,
                     cooled=lc.now - r.cooldown_days * verify.DAY, ignore_statuses=list(p.ignore_event_statuses),
                     min_recurrence=r.min_recurrence, min_sessions=r.min_sessions)


def _fill_fields(lc: Any, rows: list[dict[str, Any]]) -> None:
    """The key, text and area of the rows shown, read by key."""
    for row in rows:
        if "text" not in row:
            found = lc.st.run("lc_pattern_fields", id=row["id"])
            row.update(found[0] if found else {"key": None, "text": None, "area": None})


def ready_top(lc: Any, shown: int) -> tuple[list[dict[str, Any]], int]:
    """(the first `shown` rows of `ready_rows()`, with their key, text and area; how many rows it has). From the
    kept spans of readiness when they answer (kg/store/spans.py, issue 22: the cost follows `shown`, not the
    number of ready patterns), else from `ready_rows`."""
    from kg.store import spans

    p = lc.lp.promotion
    found = None
    if _packaged(lc.st, "lc_promotion_candidates") and _packaged(lc.st, "lc_promotion_figures"):
        found = spans.ready_top(lc.st, statuses=["active"], now=lc.now, window_days=p.window_days,
                                min_recurrence=p.min_recurrence, min_sessions=p.min_sessions,
                                ignore=p.ignore_event_statuses, high_n=lc.lp.proposals.high_impact_recurrence,
                                high_p=lc.lp.proposals.high_impact_priorities, limit=shown)
    if found is None:
        rows = ready_rows(lc, shown)
        return rows[:shown], len(rows)
    rows, total = found
    rows = [x for x in rows if promote.eligible(int(x["recurrence"]), int(x["sessions"]), lc.lp)]
    recovering = _recovering(lc)
    rows = promote.rank(rows + recovering, lc.lp)[:shown]
    _fill_fields(lc, rows)
    return rows, total + len(recovering)


def _packaged(st: Any, name: str) -> bool:
    """Whether `name` is kg's own query (not a workspace's rules/queries override)."""
    try:
        return st.query(name).source.startswith(("kg.rules.queries/", "kg.store/"))
    except Exception:  # noqa: BLE001 - a store without named-query sources: ask the query as written
        return False


def fill(lc: Any, rows: list[dict[str, Any]]) -> list[promote.Candidate]:
    """Candidates from `ready_rows()` rows, with what their window's events say."""
    p = lc.lp.promotion
    if not rows:
        return []
    since = lc.now - p.window_days * verify.DAY
    events: dict[str, list[dict[str, Any]]] = {}
    ids, window = [r["id"] for r in rows], {"since": since, "now": lc.now,
                                             "ignore_statuses": list(p.ignore_event_statuses)}
    found = ([e for pid in ids for e in lc.st.run("lc_window_events_of", id=pid, **window)]
             if len(ids) <= BY_KEY_AT_MOST else lc.st.run("lc_window_events", ids=ids, **window))
    for e in found:
        events.setdefault(e["pattern"], []).append(e)
    out = []
    here = verifying.here_of(lc)
    for r in rows:
        evs = events.get(r["id"], [])
        if here is not None:
            evs = _own(lc, r, evs, here)
            if evs is None:
                continue
        actions = [e["action"] for e in evs if e["action"]]
        failed: tuple[str, ...] = tuple(r.get("failed") or ())
        every: tuple[str, ...] = ()
        note = ""
        if failed:
            every = tuple(a["action"] for a in lc.st.run("lc_pattern_actions", id=r["id"]))
            note = _relapse_note(lc, r)
        out.append(promote.Candidate(
            pattern_id=r["id"], key=r["key"] or r["id"], summary=r["text"] or "", recurrence=int(r["recurrence"]),
            sessions=int(r["sessions"]), priority=_dominant([e["priority"] for e in evs]) or r["priority"],
            area=_dominant([e["area"] for e in evs]) or r["area"],
            category=_dominant([e["category"] for e in evs]), entry_type=_dominant([e["entry_type"] for e in evs]),
            action=actions[-1] if actions else None,
            tags=tuple(sorted({t for e in evs for t in (e["tags"] or [])})),
            sources=tuple(e["source"] or "" for e in evs), event_ids=tuple(e["id"] for e in evs),
            failed=failed, actions=every, note=note))
    return out


def _own(lc: Any, r: dict[str, Any], evs: list[dict[str, Any]], here: str) -> list[dict[str, Any]] | None:
    """On a team graph, the events a workspace-scope rule (a USER.md preference: rules/lifecycle.toml) is promoted
    from: this workspace's own, when they alone make the pattern ready (`r`'s figures recounted from them); None
    when they do not (the row waits, said in the cycle's report). Another member's preference was written into
    the files of whichever member's cycle ran first, and never into its own (QA2 #1). Other scopes: `evs`."""
    name = promote.classify(lc.lp, category=_dominant([e["category"] for e in evs]),
                            area=_dominant([e["area"] for e in evs]) or r.get("area"),
                            entry_type=_dominant([e["entry_type"] for e in evs]),
                            tags=sorted({t for e in evs for t in (e["tags"] or [])}))
    if lc.lp.targets[name].scope != "workspace":
        return evs
    own = [e for e in evs if e.get("workspace") == here]
    counted = [e for e in own if EXCLUDED_TAG not in (e["tags"] or ())]
    r["recurrence"], r["sessions"] = len(counted), len({e.get("session") for e in counted} - {None})
    if promote.eligible(r["recurrence"], r["sessions"], lc.lp):
        return own
    makers = sorted({e.get("workspace") or "?" for e in evs} - {here})
    lc.report.waiting.append({"pattern_key": r["key"] or r["id"], "target": lc.lp.targets[name].file, "reason": (
        f"a {name} of {', '.join(makers)} (scope workspace): promoted only by the workspace whose events made it; "
        f"{len(counted)} of them here, in {r['sessions']} sessions")})
    return None


def _relapse_note(lc: Any, r: dict[str, Any]) -> str:
    """Whether the pattern came back once its rule was gone (the rule worked, the revert was wrong): the
    pattern judged again on its whole history, the time its rules were live against all the time they were
    not (`verify.relapse`)."""
    times, spans = lc.history(r["id"], "")
    v = verify.relapse(times, spans, lc.now, lc.lp, observed_from=lc.observed_from(), prior=lc.prior(),
                       effect=verifying.effect_prior(lc))
    return f"Judged again on its whole history: {v.summary}: {relapse_head(v, lc.lp, len(r['failed']))}."


def relapse_head(v: verify.Verdict, lp: Any, tries: int = 1) -> str:
    """'the revert looks wrong' when the rule cut the rate with P ≥ recovery.min_posterior and the posterior
    median is below recovery.max_ratio; else 'worth another try' when its rules were tried fewer than
    `recovery.max_tries` times and the whole history does not show they failed (P(ratio > revert_min_ratio) <
    `recovery.retry_below`): a wrong revert on a thin baseline would otherwise stay for good; else 'no sign'.
    A revert that looks wrong after `recovery.max_returns` reverts of the pattern's rules is a question for a
    person (`asks`) instead of another try: each try is weeks of a rule that may not work, and the relapse that
    brings it back rests on the same on/off periods every time."""
    rec = lp.recovery
    wrong = v.ratio is not None and v.p_cut >= rec.min_posterior and v.ratio < rec.max_ratio
    if wrong and 0 < rec.max_returns <= tries:
        return (f"the revert may be wrong (P = {v.p_cut:.3f} ≥ {rec.min_posterior:g}), but its rules were reverted "
                f"{tries} times (recovery.max_returns {rec.max_returns}): {ASK}")
    if wrong:
        return f"the revert looks wrong (P = {v.p_cut:.3f} ≥ {rec.min_posterior:g})"
    if tries < rec.max_tries and v.ratio is not None and v.p_not_enough < rec.retry_below:
        return (f"{RETRY} (tried {tries} of {rec.max_tries} times; P(ratio > {lp.verification.revert_min_ratio:g}) "
                f"= {v.p_not_enough:.3f} < {rec.retry_below:g}, its failure is not shown)")
    return f"no sign the old rule worked (P = {v.p_cut:.3f}, needs {rec.min_posterior:g})"


RETRY = "worth another try"
ASK = "kg asks before trying it again"


def comes_back(note: str) -> bool:
    """Whether a reverted pattern's old text may be tried again (a person's yes when the target asks)."""
    return "revert looks wrong" in note or RETRY in note


def asks(note: str) -> bool:
    """Whether kg stopped trying a reverted pattern's old text and asks a person instead (a proposal that says
    so: `"asked": true` in the cycle's report, the numbers in its motivation)."""
    return ASK in note


def promote_all(lc: Any) -> None:
    """Apply or propose the ready patterns, best first, within the budgets; the rest wait. The per-file
    budget counts what this day's cycles already promoted, so a second cycle with the same `now` changes
    nothing."""
    b = lc.lp.budget
    budget = promote.Budget(lc.lp, {k: [x.text for x in d.lines] for k, d in lc.desired().items()})
    day = lc.now.replace(hour=0, minute=0, second=0, microsecond=0)
    for r in lc.st.run("lc_promoted_since", since=day, now=lc.now):
        budget.per_file[r["target"]] = budget.per_file.get(r["target"], 0) + int(r["n"])
    rows = ready_rows(lc, shown=b.max_examined)
    with lc.marking():
        _promote_ranked(lc, rows[:b.max_examined], budget)
    if len(rows) > b.max_examined:
        lc.report.waiting.append({"pattern_key": f"{len(rows) - b.max_examined} more", "target": "",
                                  "reason": f"a cycle reads at most {b.max_examined} ready patterns"})


def _promote_ranked(lc: Any, rows: list[dict[str, Any]], budget: promote.Budget) -> None:
    for cand in fill(lc, rows):   # one read of their events (each read scans the edges)
        plan = promote.plan(cand, lc.lp)
        asked = bool(cand.failed) and plan.mode == "ask" and asks(cand.note)
        if cand.failed and plan.mode == "ask" and not comes_back(cand.note) and not asked:
            lc.report.waiting.append({"pattern_key": plan.key, "target": plan.file, "reason":
                                      "reverted and recurring, but no new action to try and no sign the old "
                                      "rule worked: log the fix with --action"})
            continue
        why = promote.says_nothing_to_do(cand, plan.text, lc.lp) or budget.why_not(plan.file, plan.block, plan.text)
        if not why and not cand.failed:  # (recovery: `relapse`)
            wait = baseline_wait(lc, plan.pattern_id)
            if wait:
                lc.report.waiting.append({"pattern_key": plan.key, "target": plan.file, "reason": wait.reason,
                                          "baseline": wait.as_dict()})
                continue
        if why:
            lc.report.waiting.append({"pattern_key": plan.key, "target": plan.file, "reason": why})
            continue
        budget.take(plan.file, plan.block, plan.text)
        _carry_out(lc, plan, recovered=bool(cand.failed), asked=asked)


def baseline_wait(lc: Any, pattern_id: str) -> verify_wait.Wait:
    """Whether a ready pattern waits for the days watched its rate before needs, and until when: the promotion
    gate's own answer, which `kg status`, `kg patterns` and the cycle's report show."""
    v = lc.lp.verification
    if v.min_baseline_events <= 0 and v.min_baseline_days <= 0:
        return verify_wait.Wait()
    return verify_wait.baseline_wait(lc.history(pattern_id, "")[0], lc.now, lc.lp, observed_from=lc.observed_from())


def _carry_out(lc: Any, plan: promote.Plan, *, recovered: bool, asked: bool = False) -> None:
    if plan.mode == "auto":
        change = lc.apply(plan, source="auto", proposal=0)
        if change and recovered:
            lc.report.promoted[-1]["recovered"] = True
        return
    number = lc._new_proposal(
        type="promotion", target=plan.file, target_kind=plan.target, change=plan.change,
        text=plan.text, hypothesis=plan.hypothesis, priority=plan.priority, area=plan.area,
        category=plan.category, motivation=plan.motivation, evidence=list(plan.event_ids),
        risk=plan.risk, effort=plan.effort, impact=plan.impact, node=plan.pattern_id)
    lc.report.proposed.append({"number": number, "type": "promotion", "pattern_key": plan.key,
                               "target": plan.file, "mode": plan.mode, "text": plan.text, "recovered": recovered,
                               **({"asked": True} if asked else {})})


def _dominant(values: list[Any]) -> Any:
    """The most frequent non-empty value; ties go to the most recent (values are oldest first)."""
    vals = [v for v in values if v]
    if not vals:
        return None
    counts: dict[Any, int] = {}
    for v in vals:
        counts[v] = counts.get(v, 0) + 1
    best = max(counts.values())
    return next(v for v in reversed(vals) if counts[v] == best)
