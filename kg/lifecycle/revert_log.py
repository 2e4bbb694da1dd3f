"""The entry a revert logs (why the rule was reverted; a critical item when it made things worse), and the
entries a cycle killed after its revert committed never logged.

A revert marks the change reverted in the graph, in the verify step's transaction; its entry is then logged
through the workspace's write path (journal, then graph), which cannot run inside that transaction. A cycle
killed between the two (QA: kill -9 at 1.4 s) left the changes reverted and their entries, and so the
critical_fix proposals made from them, lost for good: the rerun found nothing due. So every cycle also logs the
entry of each reverted change that has none (an entry is tagged with its change's id, `Lifecycle.log`), built
from what the change keeps: its text, target, pattern key, verdict and revert reason.
"""

from __future__ import annotations

from typing import Any

from kg.lifecycle import verify

REVERTED = ("reverted", "auto_reverted")


def entry(r: dict[str, Any], critical_priority: str) -> dict[str, Any]:
    """The log entry of one revert: `r` has change, target, text, pattern_key, verdict, summary and critical."""
    what = {verify.WORSE: "made things worse", verify.INEFFECTIVE: "was ineffective"}.get(
        r["verdict"], "was auto-reverted (verification overdue)")
    summary = f"kg reverted the rule '{r['text'][:80]}' in {r['target']}: it {what}"
    details = f"{r['summary']}\nChange {r['change']}, pattern '{r['pattern_key']}'."
    if r["critical"]:
        return {"kind": "error", "summary": summary, "priority": critical_priority, "category": "error",
                "details": details, "change": r["change"]}
    return {"kind": "learning", "summary": summary, "priority": "medium", "category": "insight",
            "details": details, "change": r["change"]}


def missed(lc: Any, area: str, skip: set[str]) -> list[dict[str, Any]]:
    """The entries of reverted changes (not in `skip`, the reverts of this run) that no entry of `area` is tagged
    with: a cycle was killed after the revert committed and before it logged them."""
    changes = [c for c in lc.st.run("lc_changes_all")
               if c["status"] in REVERTED and c["reverted_at"] is not None and c["id"] not in skip]
    if not changes:
        return []
    tagged = {t for row in lc.st.run("lc_area_event_tags", area=area) for t in row["tags"] or ()}
    out = []
    for c in changes:
        if c["id"] in tagged:
            continue
        reason = c["revert_reason"] or ""
        summary = reason[11:] if reason[:4].isdigit() and reason[10:11] == " " else reason  # "YYYY-MM-DD ..."
        summary = summary.rsplit("; ", 1)[0]  # without what was done ("; reverted at once")
        out.append(entry({"change": c["id"], "target": c["target"], "text": c["text"] or "",
                          "pattern_key": c["key"], "verdict": c["verdict"], "summary": summary,
                          "critical": c["verdict"] == verify.WORSE}, lc.lp.verification.critical_priority))
    return out
