"""The verify step of a cycle: judge every due change on its pattern's whole history, with the workspace's
priors (fitted once a cycle), and record the verdicts; ask for evidence on overdue ones. Selection is by named
queries, decisions are the pure functions of `verify`, writes are set-based; `Lifecycle.verify` calls
`verify_due`.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from kg.lifecycle import blocks, render, verify, verify_check, verify_watch
from kg.lifecycle import verify_withdrawn as withdrawn
from kg.lifecycle.render import LIVE

OWN_AREA = "kg-lifecycle"  # the area of kg's own notes of its verdicts (`Lifecycle.log`): no mistake that recurs

DAY = verify.DAY
CHECKING = "checking"  # a change kg took out of its file for a deliberate check (kg/lifecycle/verify_check.py)


def verify_due(lc: Any, paused: dict[str, list[tuple[datetime, datetime]]] | None = None) -> list[dict[str, Any]]:
    """Judge every due change; returns the reverts to carry out. A change a person took out of its file is
    not judged while it is out (`sync_withdrawals`, or `paused`: what a committed sync returned, `Lifecycle.sync`),
    and its days out are no evidence, but for a decisive revert on its days in effect, on an embedded graph
    (`_out_by_hand`)."""
    paused = sync_withdrawals(lc) if paused is None else paused
    rows = [r for r in lc.st.run("lc_changes_due", statuses=[*LIVE, CHECKING], now=lc.now)  # read after the sync
            if withdrawn.paused_since(r["evidence"]) is None or _out_by_hand(lc, r)]
    if not rows:
        return []
    updates, reverts, requests = [], [], []
    rate_prior, effect, mix = prior(lc), effect_prior(lc), lc.__dict__["_mix"]
    checking = (len(lc.st.run("lc_changes_in", statuses=[CHECKING]))
                if verify_check.enabled(lc.lp) else 0)
    for r in rows:
        out = paused.get(r["id"], [])
        counts, v, deadline = judge_change(lc, r, out)
        human = any(verify.HUMAN_CONFIRMED in line for line in r["evidence"] or [])
        said = v.summary
        by_hand = _out_by_hand(lc, r)
        if by_hand:  # judged on its days in effect: a decisive revert only, which the person has already made
            t = verify.transition(status=r["status"], next_check=r["next_check"], due_since=r["due_since"],
                                  verdict=v, now=lc.now, policy=lc.lp, human=human)
            if t.action != "revert" or deadline:
                # still paused, judged again when its line is back: no deadline's majority call (its overdue clock
                # moves on by the pause only when the line is back: rev12 saw 2 days in effect auto-reverted)
                continue
            t = replace(t, evidence=f"{t.evidence} (its line was already out of {r['target']}: taken out by hand)")
            lc.report.withdrawn[:] = [w for w in lc.report.withdrawn if w["change"] != r["id"]]  # reverted, not paused
        elif r["status"] == CHECKING:
            t, v = end_check(lc, r, counts)
            checking -= t.status != CHECKING
        elif why := (_check_why(lc, r, counts, deadline) if checking < lc.lp.verification.check_max_out else ""):
            t = start_check(lc, r, v, why)
            said = verify_check.summary(why, lc.now + lc.lp.verification.check_days * DAY, v.summary)
            checking += 1
        else:
            t = verify.transition(status=r["status"], next_check=r["next_check"], due_since=r["due_since"],
                                  verdict=v, now=lc.now, policy=lc.lp, human=human)
        evidence = [*(r["evidence"] or []), *([t.evidence] if t.evidence else [])]
        of_check = t.action in ("check", "back") or r["status"] == CHECKING
        item = {"change": r["id"], "target": r["target"], "text": r["text"], "pattern_key": r["key"],
                "verdict": t.verdict if of_check else v.kind, "action": t.action, "status": t.status,
                "overdue": t.overdue,
                "before": v.before, "after": v.after, "rate_before": v.rate_before,
                "rate_after": v.rate_after, "ratio": v.ratio, "summary": said,
                "stats": {"p_cut": v.p_cut, "p_not_enough": v.p_not_enough, "p_up": v.p_up, "interval": v.interval,
                          "k_before": counts.k_before, "days_before": counts.t_before,
                          "k_after": counts.k_after, "days_after": counts.t_after,
                          "not_counted": list(counts.left_out), "deadline": deadline,
                          "dispersion": counts.dispersion,
                          "prior": {"events": rate_prior[0], "days": rate_prior[1],
                                    "source": lc.lp.verification.prior_source},
                          "effect_prior": effect.as_dict(lc.lp.verification.revert_min_ratio) if effect else None,
                          "expected_after": round(verify.expected_after(counts, rate_prior), 4),
                          "error_rate": lc.lp.verification.error_rate, "mix": mix,
                          "levels": dict(zip(("keep", "revert"), v.levels, strict=True)) if v.levels else None,
                          "check_end": ({k: round(x, 4) for k, x in verify_check.numbers(counts, lc.lp, rate_prior,
                                                                                           r["evidence"]).items()}
                                        if r["status"] == CHECKING else None),
                          "withdrawn": [[a, b] for a, b in out],
                          "checks": [[a, b] for a, b in verify_check.spans(evidence, lc.now)]},
                "check": _check_view(t, evidence),
                "next_check": t.next_check if t.action in ("keep", "extend", "check", "back", "checking") else None}
        if t.action != "checking":  # a look at a rule still out for its check: nothing to report
            lc.report.verified.append(item)
        if t.action in ("revert", "auto_revert") and r["status"] in LIVE and not by_hand \
                and _hold_revert(lc, r, item):
            continue  # nothing recorded: still live and due, judged again (and held again) by the next run
        updates.append({"id": r["id"], "status": t.status, "next_check": t.next_check,
                        "has_due": t.due_since is not None, "due_since": t.due_since,
                        "check_count": int(r["check_count"] or 0) + 1, "verdict": t.verdict, "at": lc.now,
                        "rate_before": float(v.rate_before), "rate_after": float(v.rate_after),
                        "evidence": evidence})
        if t.action in ("revert", "auto_revert"):
            reverts.append({**item, "evidence": evidence, "reason": t.evidence, "critical": t.critical,
                            "pattern": r["pattern"] or ""})  # keys: see lc_change_revert
        elif t.overdue == "remind":
            lc.report.reminders.append(item)
        elif t.overdue == "request_evidence":
            requests.append({**r, "evidence": evidence, "due_since": t.due_since})
    if reverts:  # each reverted rule node's key, read before lc_change_update makes any change's row anew
        rules = {x["id"]: x["rule"] for x in lc.st.run("lc_change_rules", ids=[x["change"] for x in reverts])}
        for x in reverts:
            x["rule"] = rules.get(x["change"]) or ""  # (see lc_change_revert)
    if updates:  # (none when every due change's revert was held)
        lc.st.run("lc_change_update", rows=[{k: v for k, v in u.items() if k not in ("has_due", "due_since")}
                                              for u in updates])
    due_set = [{"id": u["id"], "due_since": u["due_since"]} for u in updates if u["has_due"]]
    if due_set:
        lc.st.run("lc_change_due_set", rows=due_set)
    due_clear = [u["id"] for u in updates if not u["has_due"]]
    if due_clear:
        lc.st.run("lc_change_due_clear", ids=due_clear)
    settled = [u["id"] for u in updates if u["verdict"] != verify.INCONCLUSIVE or u["status"] != "applied"]
    if settled:
        lc.st.run("lc_proposals_obsolete", ids=settled, reason="settled by verification", at=lc.now)
    request_evidence(lc, requests)
    return reverts


def _out_by_hand(lc: Any, r: dict[str, Any]) -> bool:
    """A live change whose rule a person took out of its file (paused): its verdict on the days it was in effect
    may still be a revert (one kg held because the person had edited the block, and then the person took the line
    out: paused for good before). Not on a team graph: the other members' files may still hold the rule, and no
    member's cycle judges a rule while one runs without it (kg/lifecycle/verify_withdrawn.py)."""
    return (r["status"] in LIVE and here_of(lc) is None and withdrawn.paused_since(r["evidence"]) is not None
            and withdrawn.out_by_hand(r["evidence"]))


def _hold_revert(lc: Any, r: dict[str, Any], item: dict[str, Any]) -> bool:
    """Hold a revert kg cannot write (True), as a promotion into that block is held: a person edited inside
    the rule's block (or removed it, or damaged its markers), and kg never overwrites that, so the rule stays in
    the file. Recorded as reverted, the change read as done while its rule went on being read (QA2 #3: "reverted
    ... from TOOLS.md", files: [], and the rule still there)."""
    why = lc.blocked(r["target"], r["block"])
    if not why:
        return False
    item["action"] = "held"
    lc.report.held.append({
        "pattern_key": r["key"], "target": r["target"], "change": r["id"],
        "reason": f"kg would revert {r['id']} ({item['verdict']}), but {why}; its rule is still in {r['target']}, "
                  "not working: run `kg export memory --force` to let kg rewrite the block without it (edits inside "
                  "kg's block go, the rest of the file stays), or undo the edit inside the block (kg judges it "
                  "again every run until then)"})
    return True


def _check_why(lc: Any, r: dict[str, Any], counts: verify.Counts, deadline: bool) -> str:
    """Why this due change should be checked now ('' when not): `verify_check.wants` on its verdict at the
    1 − error_rate levels, and kg may write its block (a person's edit there is never overwritten)."""
    if not verify_check.enabled(lc.lp):
        return ""
    strict = verify.judge(counts, lc.lp, prior=prior(lc), effect=effect_prior(lc), mix=lc.__dict__["_mix"])
    why = verify_check.wants(counts, strict, status=r["status"], deadline=deadline, evidence=r["evidence"],
                             policy=lc.lp)
    return why if why and not lc.blocked(r["target"], r["block"]) else ""


def start_check(lc: Any, r: dict[str, Any], v: verify.Verdict, why: str) -> verify.Transition:
    """Take the rule out of its file for `check_days` (the export step renders the block without it)."""
    until = lc.now + lc.lp.verification.check_days * DAY
    lc._rules = None
    lc.report.checks.append({"change": r["id"], "target": r["target"], "text": r["text"], "pattern_key": r["key"],
                             "action": "out", "since": lc.now, "until": until, "why": why})
    return verify.Transition("check", CHECKING, verify_check.next_look(lc.now, until, lc.lp), None,
                             verify.INCONCLUSIVE, "none", False,
                             verify_check.out_line(lc.now, until, r["target"], why) + f" ({v.summary})")


def end_check(lc: Any, r: dict[str, Any], counts: verify.Counts) -> tuple[verify.Transition, verify.Verdict]:
    """A check's period is over: the rule goes back into its file (confirmed, monitored), or, when its days
    without the rule showed it did not help, it is reverted. Before its end (`check_back_level` on) it goes back
    early when the days without it already show it works (`verify_check.back_early`), else stays out (no line)."""
    since, until = verify_check.current(r["evidence"]) or (lc.now, lc.now)
    back, v, why = verify_check.settle(counts, lc.lp, r["evidence"], prior=prior(lc), effect=effect_prior(lc),
                                       mix=lc.__dict__["_mix"])
    if lc.now < until:
        why = verify_check.back_early(counts, lc.lp, prior(lc))
        if not why:
            return verify.Transition("checking", CHECKING, verify_check.next_look(lc.now, until, lc.lp), None,
                                     verify.INCONCLUSIVE, "none", False, ""), v
        back = True
    kind = verify_check.label(v, lc.lp, back)
    lc._rules = None
    lc.report.checks.append({"change": r["id"], "target": r["target"], "text": r["text"], "pattern_key": r["key"],
                             "action": "back" if back else "left out", "since": since, "until": lc.now, "why": why})
    if back:
        monitor = lc.now + lc.lp.verification.monitor_days * DAY
        return verify.Transition("back", "confirmed", monitor, None, kind, "none", False,
                                 verify_check.back_line(lc.now, since, r["target"], f"{why} ({v.summary})")), v
    return verify.Transition("revert", "reverted", r["next_check"], None, kind, "none", kind == verify.WORSE,
                             verify_check.ended_line(lc.now, since, r["target"], f"{why} ({v.summary})")), v


def _check_view(t: verify.Transition, evidence: list[str]) -> dict[str, Any] | None:
    """What `kg verify --json` says of a check: begun, ended (back or left out), or None."""
    if t.action == "check":
        since, until = verify_check.current(evidence) or (None, None)
        return {"state": "out", "since": since, "until": until}
    if t.action == "back" or (t.action == "revert" and verify_check.ENDED in t.evidence):
        a, b = verify_check.spans(evidence, t.next_check)[-1]
        return {"state": "back" if t.action == "back" else "left out", "since": a, "until": b}
    return None


def judge_change(lc: Any, r: dict[str, Any], out: list[tuple[datetime, datetime]],
                 due_since: datetime | None = None) -> tuple[verify.Counts, verify.Verdict, bool]:
    """A live change judged at `lc.now` on its pattern's whole history, with the workspace's priors and mix and
    without the days a person had taken it out of its file (`out`): the one judgement `kg verify`, `kg cycle`
    and `kg graph report` share, so they cannot disagree. Returns (counts, verdict, deadline)."""
    times, excluded = history(lc, r["pattern"], r["id"])
    since = r.get("due_since", due_since)
    deadline = verify.is_deadline(r["status"], since, r["next_check"], lc.now, lc.lp)
    pooled = tries(lc, r)
    counts = verify.evidence(times, r["applied_at"], lc.now, lc.lp, excluded=excluded,
                             observed_from=observed_from(lc), paused=out,
                             out_words=withdrawn.out_words(r.get("evidence")),
                             checks=verify_check.spans(r.get("evidence"), lc.now), pooled=pooled)
    rate_prior = prior(lc)
    # a rule tried again is judged as a monitored one from its first check: its evidence is not new
    v = verify.judge(counts, lc.lp, deadline=deadline, prior=rate_prior,
                     monitoring=r["status"] == "confirmed" or bool(pooled), effect=effect_prior(lc),
                     mix=lc.__dict__["_mix"])
    return counts, v, deadline


def tries(lc: Any, r: dict[str, Any]) -> list[tuple[datetime, datetime]]:
    """With `verification.pool_retries`, the periods an earlier change of the same pattern with the same text was
    in its file: a rule tried again after a revert is judged on every day it was live, not only its own."""
    if not lc.lp.verification.pool_retries:
        return []
    return [s for c in lc.st.run("lc_pattern_changes", id=r["pattern"])
            if c["id"] != r["id"] and c["text"] == r["text"] and c["applied_at"] and c["applied_at"] < r["applied_at"]
            for s in live_spans(c, lc.now, clip=False)]


def prior(lc: Any) -> tuple[float, float]:
    """The workspace's prior for a rate before a change: fitted to every change's baseline (once a
    cycle: a change's baseline ends where it was applied, so this cycle's new changes barely move it). The
    workspace's mix (`verify.mix_factor`, from its settled changes) is read with it."""
    if "_prior" in lc.__dict__:
        return lc.__dict__["_prior"]
    rows = [c for c in lc.st.run("lc_changes_all") if c["pattern"] and c["applied_at"]]
    base, spans = [], []
    for c in rows:
        times, excluded = history(lc, c["pattern"], c["id"])
        e = verify.evidence(times, c["applied_at"], c["applied_at"], lc.lp, excluded=excluded,
                            observed_from=observed_from(lc))
        base.append((e.k_before, e.t_before))
        end = min(c["reverted_at"] or lc.now, lc.now)
        spans.append((times, excluded, c["applied_at"], end, withdrawn.pauses(c["evidence"], end),
                      verify_check.spans(c["evidence"], end)))
    if lc.lp.verification.prior_source == "patterns":
        base = pattern_rates(lc, rows)
    lc.__dict__["_prior"] = rate = verify.population_prior(base, lc.lp)
    lc.__dict__["_mix"] = workspace_mix(lc, rows, rate)
    lc.__dict__["_effect"] = verify.effect_prior(
        (verify.evidence(t, a, end, lc.lp, excluded=x, observed_from=observed_from(lc), paused=out, checks=tested)
         for t, x, a, end, out, tested in spans),
        lc.lp, rate)
    return rate


def pattern_rates(lc: Any, rows: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """Every pattern's (counted occurrences, days) without its rules (`verify.rate_without_rules`): the rows of
    the rate prior with `verification.prior_source = "patterns"`. One read of every pattern's occurrence times,
    less kg's own notes of its reverts (`Lifecycle.log`: a record of a verdict, not a mistake that recurs)."""
    times: dict[str, list[datetime]] = {}
    for e in lc.st.run("lc_patterns_times", now=lc.now, own_area=OWN_AREA):
        times.setdefault(e["pattern"], []).append(e["created_at"])
    spans: dict[str, list[tuple[datetime, datetime]]] = {}
    for c in rows:
        spans.setdefault(c["pattern"], []).extend(live_spans(c, lc.now))
    return [verify.rate_without_rules(t, spans.get(p, []), lc.now, lc.lp, observed_from(lc))
            for p, t in sorted(times.items())]


def workspace_mix(lc: Any, rows: list[dict[str, Any]], rate: tuple[float, float]) -> float:
    """The workspace's mix factor (`verify.mix_factor`, or with `mix_source = "relapse"`
    `verify_mix.relapse_factor` over the relapse verdicts of every pattern reverted at least
    `recovery.cooldown_days` ago)."""
    if lc.lp.verification.mix_source != "relapse":
        return verify.mix_factor((c["status"] for c in rows), lc.lp)
    from kg.lifecycle import verify_mix

    kinds = []
    settled = lc.now - lc.lp.recovery.cooldown_days * DAY  # a relapse needs time without the rule
    for pattern in sorted({c["pattern"] for c in rows if c["reverted_at"] and c["reverted_at"] <= settled}):
        times = history(lc, pattern, "")[0]
        spans = [s for c in rows if c["pattern"] == pattern for s in live_spans(c, lc.now)]
        kinds.append(verify.relapse(times, spans, lc.now, lc.lp, observed_from=observed_from(lc), prior=rate).kind)
    return verify_mix.relapse_factor(kinds, lc.lp)


def effect_prior(lc: Any) -> Any:
    """The workspace's prior on a rule's effect (`kg.lifecycle.effect`), fitted with `prior` once a cycle;
    None when the rules switch it off."""
    prior(lc)
    return lc.__dict__["_effect"]


def observed_from(lc: Any) -> datetime | None:
    """When kg started watching: the workspace's first event, with the spells since in which nothing at all was
    logged (`verify_watch`; the distinct days with an event or a session, one query)."""
    if "_observed" not in lc.__dict__:
        rows = lc.st.run("lc_first_event")
        first = rows[0]["first"] if rows else None
        gap = lc.lp.verification.unobserved_gap_days
        if first is not None and gap > 0:
            first = verify_watch.watched(first, [r["day"] for r in lc.st.run("lc_watch_days", now=lc.now)], gap, lc.now)
        lc.__dict__["_observed"] = first
    return lc.__dict__["_observed"]


def history(lc: Any, pattern: str, change: str) -> tuple[list[datetime], list[tuple[datetime, datetime]]]:
    """Every occurrence time of a pattern, and the periods when its other changes were in effect: live, less
    the days a person had taken the rule out of its file (those days had no rule, so they are base rate, and
    a relapse counts them as time without it)."""
    cache = lc.__dict__.setdefault("_times", {})
    if pattern not in cache:
        cache[pattern] = [e["created_at"] for e in lc.st.run("lc_pattern_times", id=pattern, now=lc.now)]
    times = cache[pattern]
    spans = []
    for c in lc.st.run("lc_pattern_changes", id=pattern):
        if c["id"] != change and c["applied_at"]:
            spans += live_spans(c, lc.now, clip=False)
    return times, spans


def live_spans(c: dict[str, Any], now: datetime, *, clip: bool = True) -> list[tuple[datetime, datetime]]:
    """When a change's rule was in its file: applied to reverted (or `now`, and with `clip` never past it),
    less the days a person had taken it out. History, the effect prior and the relapse mix all count time with
    the rule through this one function (the last two counted the days out as time with it)."""
    end = c["reverted_at"] or now
    end = min(end, now) if clip else end
    out = withdrawn.pauses(c["evidence"], end) + verify_check.spans(c["evidence"], end)
    return in_effect_spans(c["applied_at"], end, out)


def in_effect_spans(start: datetime, end: datetime,
                    out: list[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    """[start, end] less the periods `out`."""
    spans, cur = [], start
    for a, b in sorted(out):
        if a > cur:
            spans.append((cur, min(a, end)))
        cur = max(cur, b)
    if end > cur:
        spans.append((cur, end))
    return [(a, b) for a, b in spans if b > a]


def request_evidence(lc: Any, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    open_ids = {r["id"] for r in lc.st.run("lc_verification_open", ids=[r["id"] for r in rows])}
    for r in rows:
        if r["id"] in open_ids:
            continue
        number = lc._new_proposal(
            type="verification", target=r["target"], target_kind="", change=f"Verify: '{r['text'][:60]}'",
            text=r["text"], hypothesis=r["hypothesis"] or "", priority="", area="", category="",
            motivation=f"Hypothesis: {r['hypothesis']} — due since {r['due_since']:%Y-%m-%d}; no decisive "
                       "verdict yet. Approve to confirm the rule works; otherwise it is auto-reverted at "
                       f"{lc.lp.overdue.revert_days} days overdue.",
            evidence=[r["id"]], risk="Low — just checking", effort="low", impact="high",
            change_id=r["id"])
        lc.report.evidence_requested.append({"change": r["id"], "proposal": number, "target": r["target"]})


def set_aside(lc: Any) -> set[str]:
    """The live changes kg itself leaves out of their files: their rule lost a conflict, or tied one
    (`Lifecycle.hidden`). kg's block then holds what kg last wrote, which reads as "in effect", and their
    verification counted days without the rule as days with it (QA2: both sides of a tie confirmed for days
    neither was in any file)."""
    live, free = lc.rule_rows()
    hidden = lc.hidden(live, free)
    return {r["change"] for r in live if r["node"] in hidden} if hidden else set()


def pause_set_aside(lc: Any, *, always: bool = False) -> None:
    """Pause, in the cycle that decided a conflict (`always`: `kg conflicts resolve`), the live changes it sets
    aside (`set_aside`): else the next cycle at the same --now paused them, and a second cycle at one time was no
    longer a no-op."""
    if not lc.report.conflicts and not always:
        return
    aside = set_aside(lc)
    from kg.lifecycle.settling import note_aside

    note_aside(lc, aside)
    here = here_of(lc)
    writes = []
    for c in lc.st.run("lc_live_effects", statuses=list(LIVE)) if aside else []:
        evidence = list(c["evidence"] or [])
        if c["id"] not in aside or withdrawn.paused_since(evidence, here) is not None:
            continue
        evidence.append(withdrawn.withdrawn_line(lc.now, c["target"], False, where=here, aside=True))
        writes.append({"id": c["id"], "evidence": evidence, "next_check": c["next_check"]})
        lc.report.withdrawn.append({"change": c["id"], "target": c["target"], "text": c["text"],
                                    "action": "paused", "since": lc.now, "how": "aside"})
    if writes:
        lc.st.run("lc_change_pause", rows=writes)


def resume_let_back(lc: Any) -> None:
    """Resume, once the export wrote it back, a change kg had set aside for a conflict and no longer does: its
    pause stayed open until the next cycle, and the days it was back in its file counted as days out (45 in
    tests/cli/test_cycle_determinism.py's history, its first check moved on by all of them). Only a rule the export
    wrote into its kg block (`written_in`, read after it): a file kg cannot write, or a kg block a person edited
    while the rule was out ("not written"), leaves it paused."""
    if not getattr(lc, "aside_open", True):  # (`sync_withdrawals`: no pause of kg's own open)
        return
    here = here_of(lc)
    rows = [c for c in lc.st.run("lc_live_effects", statuses=list(LIVE))
            if withdrawn.paused_since(c["evidence"], here) is not None and withdrawn.paused_aside(c["evidence"], here)]
    aside = set_aside(lc) if rows else set()
    rows = [c for c in rows if c["id"] not in aside]
    if not rows:
        return
    texts: dict[str, str | None] = {}
    writes, due = [], []
    for c in rows:
        if lc.problem(c["target"]):
            continue
        if c["target"] not in texts:
            texts[c["target"]] = blocks.read(lc.root / c["target"])
        if not withdrawn.written_in(texts[c["target"]], c["block"], c["text"] or ""):
            continue
        evidence = list(c["evidence"] or [])
        since = withdrawn.paused_since(evidence, here)
        gap = _resume(lc, c, evidence, since, here, writes, due)
        lc.report.withdrawn = [w for w in lc.report.withdrawn if w.get("change") != c["id"]]
        lc.report.withdrawn.append({"change": c["id"], "target": c["target"], "text": c["text"],
                                    "action": "resumed", "since": since, "how": "let back",
                                    "next_check": c["next_check"] + gap})
    if writes:
        lc.st.run("lc_change_pause", rows=writes)
    if due:
        lc.st.run("lc_change_due_set", rows=due)


def _resume(lc: Any, c: dict[str, Any], evidence: list[str], since: datetime, here: str | None,
            writes: list[dict[str, Any]], due: list[dict[str, Any]]) -> timedelta:
    """Close a change's open pause (a dated line in `evidence`) and move its next check and overdue clock on by the
    time it was out, queued in `writes` and `due`; the gap returned (overlaps with other workspaces' pauses count
    once)."""
    before = withdrawn.closed_total(evidence)
    evidence.append(withdrawn.resumed_line(lc.now, since, c["target"], here))
    gap = max(withdrawn.closed_total(evidence) - before, timedelta(0))
    writes.append({"id": c["id"], "evidence": evidence, "next_check": c["next_check"] + gap})
    if c["due_since"] is not None:
        due.append({"id": c["id"], "due_since": c["due_since"] + gap})
    return gap


def effects(lc: Any, rows: list[dict[str, Any]], aside: set[str] | None = None) -> dict[str, bool | None]:
    """Whether each live change's rule is in its file now (`verify_withdrawn.in_effect`), by change id; None
    when its file cannot be used (`Lifecycle.problem`): nobody can tell, so nothing is paused or resumed; False
    for a change kg sets aside for a conflict (`set_aside`). Reads each file once."""
    states = {r["id"]: r for r in lc.st.run("lc_blocks")}
    aside = set_aside(lc) if aside is None else aside
    here = here_of(lc)
    texts: dict[str, str | None] = {}
    out: dict[str, bool | None] = {}
    desired: dict[Any, Any] | None = None
    for c in rows:
        path = c["target"]
        if lc.problem(path):
            out[c["id"]] = None
            continue
        if c["id"] in aside:
            out[c["id"]] = False
            continue
        if path not in texts:
            texts[path] = blocks.read(lc.root / path)
        state = states.get(f"{path}#{c['block']}") or {}
        out[c["id"]] = withdrawn.in_effect(texts[path], c["block"], c["text"] or "", state.get("hash"))
        if out[c["id"]] and withdrawn.paused_aside(c.get("evidence"), here):
            # kept out by kg itself: a block unchanged since kg's last write does not hold it (that write left it
            # out); in effect once an export wrote it there (a read-only file never gets it)
            out[c["id"]] = withdrawn.written_in(texts[path], c["block"], c["text"] or "")
        if out[c["id"]] is False and texts[path] is not None and _block_there(lc.root / path, c["block"]):
            desired = lc.desired() if desired is None else desired
            if render.written_before(desired.get((path, c["block"])), c["id"], state.get("hash")):
                out[c["id"]] = None  # kg never wrote it here (`unwritten`): not taken out, not in effect either
    return out


def unwritten(lc: Any, rows: list[dict[str, Any]], on: dict[str, bool | None]) -> list[dict[str, Any]]:
    """The live changes kg never wrote into this workspace's file, its kg block there edited by hand first (kg
    leaves a person's edit as it is): said in the cycle's report, neither paused nor resumed here (QA2 #8)."""
    if not any(v is None for v in on.values()):
        return []
    states = {r["id"]: r for r in lc.st.run("lc_blocks")}
    desired = lc.desired()
    return [{"change": c["id"], "target": c["target"], "text": c["text"], "action": "not written"}
            for c in rows if on.get(c["id"]) is None and not lc.problem(c["target"])
            and render.written_before(desired.get((c["target"], c["block"])), c["id"],
                                      (states.get(f"{c['target']}#{c['block']}") or {}).get("hash"))]


def here_of(lc: Any) -> str | None:
    """This workspace on a team graph (its origin: the workspace a pause line names), None on an embedded one."""
    return (getattr(lc.st, "origin", None) or {}).get("origin_workspace") or None


def _block_there(path: Any, block: str) -> bool:
    """Whether kg's block is still in the file (a rule out of it was edited by hand, not withdrawn)."""
    try:
        return blocks.inner_of(blocks.read(path), block) is not None
    except blocks.BlockError:
        return False


def sync_withdrawals(lc: Any) -> dict[str, list[tuple[datetime, datetime]]]:
    """Pause the verification of every live change a person took out of its file, and resume the ones put
    back (their next check and overdue clock moved on by the pause): a dated line in the change's evidence
    each way. Returns, by change id, the periods it was out."""
    rows = lc.st.run("lc_live_effects", statuses=list(LIVE))
    if not rows:
        return {}
    aside = set_aside(lc)
    on = effects(lc, rows, aside)
    here = here_of(lc)  # a team graph: each workspace pauses and resumes only its own withdrawal
    writes, due, out = [], [], {}
    for c in rows:
        evidence = list(c["evidence"] or [])
        untold = withdrawn.paused_since(evidence, None) if here is not None else None
        if untold is not None:  # (a pause an older kg wrote on a team graph, naming no workspace: closed)
            evidence.append(withdrawn.resumed_line(lc.now, untold, c["target"]))
        since = withdrawn.paused_since(evidence, here)
        view = {"change": c["id"], "target": c["target"], "text": c["text"]}
        if on[c["id"]] is None:  # its file cannot be read (reported in `skipped`): neither paused nor resumed
            pass
        elif not on[c["id"]] and since is None:
            gone = not (lc.root / c["target"]).exists()
            edited = not gone and _block_there(lc.root / c["target"], c["block"])
            evidence.append(withdrawn.withdrawn_line(lc.now, c["target"], gone, edited, here,
                                                     aside=c["id"] in aside))
            writes.append({"id": c["id"], "evidence": evidence, "next_check": c["next_check"]})
            lc.report.withdrawn.append({**view, "action": "paused", "since": lc.now})
        elif on[c["id"]] and since is not None:
            gap = _resume(lc, c, evidence, since, here, writes, due)
            lc.report.withdrawn.append({**view, "action": "resumed", "since": since,
                                        "next_check": c["next_check"] + gap})
        elif since is not None:
            lc.report.withdrawn.append({**view, "action": "still paused", "since": since})
        if untold is not None and not any(w["id"] == c["id"] for w in writes):
            writes.append({"id": c["id"], "evidence": evidence, "next_check": c["next_check"]})
        out[c["id"]] = withdrawn.pauses(evidence, lc.now)
    # what kg itself keeps out, for `resume_let_back` to resume once it lets it back
    lc.aside_open = any(withdrawn.paused_aside(w["evidence"], here) for w in writes) or any(
        withdrawn.paused_aside(c["evidence"], here) for c in rows if c["id"] not in {w["id"] for w in writes})
    lc.report.withdrawn += unwritten(lc, rows, on)
    if writes:
        lc.st.run("lc_change_pause", rows=writes)
    if due:
        lc.st.run("lc_change_due_set", rows=due)
    return out
