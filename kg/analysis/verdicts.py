"""Did the rules kg applied help? The lifecycle's own verdict on each change, read from a snapshot.

`kg graph report` and `kg verify` must never disagree, so nothing here decides: the inputs are the ones
`kg verify` gathers (`kg.lifecycle.cycle.Lifecycle`: the pattern's whole history, the periods its other
changes were live, when kg started watching, the workspace's pooled prior on the rate before), and the
verdict is `kg.lifecycle.verifying.judge_change`, the function `kg verify` calls: the same deadline,
monitoring flag, workspace mix, and the days a person had taken the rule out of its file left out.
`tests/cli/test_analysis_cli.py` runs both commands on one workspace and fails when a verdict differs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kg.store import Store


def change_effects(ws: Any, st: Store, now: datetime, changes: list[dict[str, Any]], *,
                   policy: Any = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One row per change made from a pattern (`changes`: the Change table's rows, for `due_since`), oldest
    first: a live change judged at `now` as `kg verify` would judge it, a reverted one with the verdict it
    was reverted on. Also returns the lifecycle's shared inputs (`prior`, `observed_from`), which the report
    applies to hand-linked principles too."""
    from kg.lifecycle import verify, verify_check, verifying
    from kg.lifecycle import verify_withdrawn as withdrawn
    from kg.lifecycle.cycle import LIVE, Lifecycle
    from kg.lifecycle.policy import load

    lp = policy if policy is not None else load(ws)
    lc = Lifecycle(ws, st, now, dry_run=True, policy=lp)
    prior, observed = lc.prior(), lc.observed_from()
    stored = {c.get("id"): c for c in changes}
    out = []
    for c in st.run("lc_changes_all"):
        if not c["pattern"] or not c["applied_at"]:
            continue
        row = {"change": c["id"], "principle": c["node"], "text": c["text"], "pattern": c["pattern"],
               "key": c["key"], "target": c["target"], "status": c["status"], "promoted_at": c["applied_at"]}
        if c["status"] not in LIVE:  # reverted (the verdict it was reverted on, as recorded) or out for a check
            verdict = c["verdict"] or verify.INCONCLUSIVE
            out.append({**row, "before": None, "after": None,
                        "rate_before": round(float(c["rate_before"] or 0.0) * 7, 3),
                        "rate_after": round(float(c["rate_after"] or 0.0) * 7, 3),
                        "helped": _helped(verdict), "verdict": verdict,
                        "why": c["revert_reason"] or verify_check.explain(c["evidence"])})  # or out for a check
            continue
        out_days = withdrawn.pauses(c["evidence"], now)  # the days a person had taken it out: no evidence
        _, v, _ = verifying.judge_change(lc, c, out_days, due_since=stored.get(c["id"], {}).get("due_since"))
        out.append({**row, "before": v.before, "after": v.after, "rate_before": round(v.rate_before * 7, 3),
                    "rate_after": round(v.rate_after * 7, 3), "helped": _helped(v.kind), "verdict": v.kind,
                    "why": v.summary})
    return out, {"prior": prior, "observed_from": observed}


def _helped(kind: str) -> bool | None:
    """True when confirmed, False when ineffective or made worse, None when inconclusive."""
    from kg.lifecycle import verify

    return None if kind == verify.INCONCLUSIVE else kind == verify.CONFIRMED
