"""The conflicts step of a cycle: contradictions found among the live rules and the free principles, and each
pair settled by score into a decision (`kg conflicts`, `kg why`).

Apart from `Lifecycle` (kg/lifecycle/cycle.py) as `verifying` and `promoting` are: the cycle's steps each in
their module, the class holding what they share (the graph, the clock, the report, ids). Decisions are the
pure functions of `kg.lifecycle.conflicts`; `Lifecycle.settle_conflicts`, `rule_facts` and `_score` call these.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any

from kg.lifecycle import conflicts
from kg.lifecycle.verify_transition import DAY


def settle(lc: Any, *, only_new: bool = False) -> None:
    """Find the contradictions among the live rules and free principles (up to `conflicts.max_detect` of them),
    add the new ones as edges, and score each pair: a decision row per pair, made or brought up to date, a
    person's override left as it is. `only_new`: decide only the pairs no decision covers yet (`outside`)."""
    found = _contradictions(lc)
    if found is None:
        return
    pairs, added = found
    if added:
        from kg.store.bulk import run_each  # one indexed statement per pair (see the query)

        run_each(lc.st, "lc_contradicts_add", added)
    if not pairs:
        return
    facts = rule_facts(lc, sorted({x for pair in pairs for x in pair}))
    rows = _decide(lc, pairs, facts, lc.st.run("lc_decisions"), only_new=only_new, record=True)
    if rows:
        lc.st.run("lc_decision_upsert", rows=rows)


def _contradictions(lc: Any) -> tuple[dict[tuple[str, str], str], list[dict[str, Any]]] | None:
    """The contradicting pairs among the live rules and free principles (the edges there, and those found in their
    texts), and the found pairs not yet an edge (to add); None under two rules. Their facts are read apart
    (`rule_facts`, a scan of the rules): a read whose pairs all have a decision needs none."""
    c = lc.lp.conflicts
    live, free = lc.rule_rows()
    texts = {r["node"]: r["rule_text"] for r in live if r["node_status"] == "active" and r["kind"] in c.kinds}
    texts.update((r["node"], r["text"]) for r in free)
    ids = sorted(texts)
    if len(ids) < 2:
        return None
    pairs = {(r["a"], r["b"]): r["reason"] for r in lc.st.run("lc_contradictions", ids=ids)
             if r["a"] < r["b"] and r["b"] in texts}
    added = []
    pool = ids[: c.max_detect]
    for a, b, reason in conflicts.find_all([(i, texts[i] or "") for i in pool], lc.lp):
        if (a, b) not in pairs:
            pairs[(a, b)] = reason
            added.append({"a": a, "b": b, "at": lc.now, "reason": lc._redact(reason)})
    return pairs, added


def _decide(lc: Any, pairs: dict[tuple[str, str], str], facts: dict[str, dict[str, Any]],
            decisions: list[dict[str, Any]], *, only_new: bool, record: bool) -> list[dict[str, Any]]:
    """The decision rows to store for `pairs` against the stored `decisions` (a pair's unchanged decision: none).
    `record`: the rows are to be stored (new ids; what changed said in the cycle's report); else a preview for a
    reader, each new row's id None."""
    c = lc.lp.conflicts
    live, _ = lc.rule_rows()
    existing = {(d["a"], d["b"]): d for d in decisions}
    confirmed = {r["node"] for r in live if r["status"] == "confirmed"} if c.tie_keeps_confirmed else set()
    rows = []
    new_ids = lc._seq_ids("lc_decision_ids", "dec") if record else repeat(None)
    for (a, b), reason in sorted(pairs.items()):
        old = existing.get((a, b)) or existing.get((b, a))
        if old and (old["override"] or only_new):
            continue
        sa, sb = score(lc, facts[a]), score(lc, facts[b])
        w = conflicts.winner(a, sa.total, b, sb.total)
        status = "settled" if w else "tie"
        if not w and old and old["winner"]:
            w = old["winner"]  # a tie does not overturn a settled decision: the incumbent stays, flagged
        elif not w and len(kept := {a, b} & confirmed) == 1:
            (w,) = kept  # nor takes out a verified rule for an unverified one (`tie_keeps_confirmed`)
        if old:
            oa, ob = (sa, sb) if old["a"] == a else (sb, sa)
            if (old["score_a"], old["score_b"], old["winner"], old["status"]) == (oa.total, ob.total, w, status):
                continue
            row = {"id": old["id"], "a": old["a"], "b": old["b"], "score_a": oa.total, "score_b": ob.total,
                   "parts_a": oa.parts(), "parts_b": ob.parts()}
        else:
            row = {"id": next(new_ids), "a": a, "b": b, "score_a": sa.total,
                   "score_b": sb.total, "parts_a": sa.parts(), "parts_b": sb.parts()}
        row.update(winner=w, status=status, reason=reason or "", at=lc.now)
        rows.append(row)
        if not record:
            continue
        if not old or (old["winner"], old["status"]) != (w, status):
            lc.report.conflicts.append({k: v for k, v in row.items() if k != "at"} |
                                         {"text_a": facts[row["a"]]["text"], "text_b": facts[row["b"]]["text"]})
        else:
            lc.report.rescored += 1
    return rows


def undecided(lc: Any, decisions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The contradictions no stored decision (`decisions`) covers yet, decided as `outside` would decide them,
    nothing written: what a read (`kg status`, `kg inject`) says of rules added since the last cycle, where it may
    not write (a read-only workspace answers them too). Each a decision's row, its id None, with both texts.
    `kg inject` showed both sides of such a pair, and `kg status` said nothing of it, until a command that writes
    decided it."""
    found = _contradictions(lc)
    return _judged(lc, found[0], decisions) if found else []


def _judged(lc: Any, pairs: dict[tuple[str, str], str], decisions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`undecided` over pairs found already: the facts read (at `lc.now`) only when a pair has no decision."""
    covered = {(d["a"], d["b"]) for d in decisions} | {(d["b"], d["a"]) for d in decisions}
    todo = {k: v for k, v in pairs.items() if k not in covered}
    if not todo:
        return []
    facts = rule_facts(lc, sorted({x for pair in todo for x in pair}))
    rows = _decide(lc, todo, facts, decisions, only_new=True, record=False)
    return [r | {"override": False, "text_a": facts[r["a"]]["text"], "text_b": facts[r["b"]]["text"]}
            for r in rows]


def kept_out(lc: Any, memo: dict[Any, Any] | None = None) -> tuple[set[str], list[dict[str, Any]]]:
    """What a reader leaves out of what it shows of the rules, as `kg export memory` leaves it out of the files
    (the loser of each decision, both sides of a tie held back by `on_tie`), the contradictions no decision covers
    yet decided as `kg conflicts` would decide them; and those (`undecided`). Writes nothing. `memo`: a dict kept
    while the graph does not change (a held workspace's view), holding what does not depend on the time; the pairs
    no decision covers, if any, are scored at `lc.now` each call."""
    kept = memo.get(_MEMO) if memo is not None else None
    if kept is None:
        live, free = lc.rule_rows()
        decisions, pairs = [], {}
        # (a decision keeps a rule out only beside an active rival: under two, nothing to read)
        if len({r["node"] for r in live if r["node_status"] == "active"} | {r["node"] for r in free}) >= 2:
            decisions = lc.st.run("lc_decisions")
            found = _contradictions(lc)
            pairs = found[0] if found else {}
        if memo is not None:
            memo[_MEMO] = (live, free, decisions, pairs)
    else:
        live, free, decisions, pairs = kept
        lc._rules = (live, free)  # (rule_rows as read when the memo was made: the graph is the same)
    new = _judged(lc, pairs, decisions)
    return lc.hidden(live, free, decisions + new), new


_MEMO = ("settling", "kept_out")


def outside(lc: Any) -> None:
    """Between cycles, where a person meets the rules (`kg conflicts`, `kg export memory`, `kg approve`, `kg
    conflicts resolve`): the contradictions no decision covers yet, decided as a cycle decides them (`settle`),
    and the live changes they set aside paused as the cycle pauses them. Two principles added by hand, one
    "always", one "never", both went into MEMORY.md and `kg conflicts` said there were none until a cycle ran
    (QA4 #7). Decisions already made are brought up to date by the cycle only: a listing does not rescore them."""
    from kg.lifecycle.verifying import pause_set_aside

    settle(lc, only_new=True)
    pause_set_aside(lc)


def note_aside(lc: Any, aside: set[str]) -> None:
    """On each rule this cycle promoted that a conflict keeps out of its file (`aside`: change ids), the decision
    that does (`set_aside`: its id, "tie" or "lost", the other rule, both scores). The cycle printed "promoted ...
    to MEMORY.md" for both sides of a tie, and MEMORY.md was never written (QA4 #6)."""
    if not aside:
        return
    decisions = lc.st.run("lc_decisions")
    for p in lc.report.promoted:
        if p["change"] not in aside:
            continue
        for d in decisions:
            if (p["node"] in (d["a"], d["b"]) and d["winner"] != p["node"]  # (not one it won, nor kept both)
                    and d["status"] != conflicts.COMPATIBLE):
                mine, other = (d["score_a"], d["score_b"]) if d["a"] == p["node"] else (d["score_b"], d["score_a"])
                rival = d["b"] if d["a"] == p["node"] else d["a"]
                p["set_aside"] = {"decision": d["id"], "outcome": "tie" if d["status"] == "tie" else "lost",
                                  "rival": rival, "kept": d["winner"] or None, "score": mine, "rival_score": other}
                break


def rule_facts(lc: Any, ids: list[str]) -> dict[str, dict[str, Any]]:
    """What a conflict is scored on, for each of `ids` that is a rule of a kind the conflicts step weighs."""
    wanted = set(ids)
    kinds = sorted(set(lc.lp.conflicts.kinds) | {"principle", "knowledge"})
    return {f["id"]: f for f in lc.st.run("lc_rule_facts", kinds=kinds, now=lc.now) if f["id"] in wanted}

def score(lc: Any, f: dict[str, Any]) -> conflicts.Score:
    """A rule's conflict score from its facts: priority, recurrence, and the days since it was last seen."""
    return conflicts.score(f["priority"], int(f["recurrence"] or 0), max(0, (lc.now - last_seen(f)) // DAY),
                           f["area"], lc.lp)


def last_seen(f: dict[str, Any]) -> Any:
    """When a rule was last seen, for its recency: its pattern's last occurrence, or a person's `kg reinforce` of
    the rule since it was made (`reinforced_at` after `created_at`: a rule is made with the two equal). Not
    when the rule was made: that is when a cycle promoted it or a person approved it, and the rule approved an
    hour after its rival's promotion won their conflict on recency, the same evidence behind both (QA4 #5). A
    rule with no pattern (a principle added by hand, or imported) was last seen when it was stated."""
    made, again = f["created_at"], f["reinforced_at"]
    seen = [x for x in (f["last_seen"], again if again and made and again > made else None) if x]
    return max(seen) if seen else (made or again)
