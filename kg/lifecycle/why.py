"""`kg why`: trace a line of an instruction file back to the change, the rule node, the pattern and its events
(moved out of kg/lifecycle/api.py, which re-exports `why` and `instruction_files`)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from kg.core import clock
from kg.core.errors import UsageError
from kg.lifecycle import blocks, imported
from kg.lifecycle.cycle import LIVE, Lifecycle, _jsonable, holding
from kg.lifecycle.policy import load as load_policy
from kg.lifecycle.verify_check import explain as check_explain
from kg.lifecycle.verifying import CHECKING

Now = datetime | str | None


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
    from kg.lifecycle.api import _how  # what `kg status` says of a paused rule (api imports this module)

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
        texts = {path: blocks.read(ws.root / path) or "" for path in {c["file"] for c in cands if not c["change"]}}
        for c in cands:  # a person's line may sit inside kg's block (an edit kg keeps and flags): say which
            if not c["change"]:
                c["block"] = _block_at(texts[c["file"]], c["text"])
        lines = [f"no line is exactly this; {len(cands)} candidate(s), best first:"]
        lines += [f"  [{c['match']} {c['score']:.0f}] {c['file']}: {c['text']}"
                  + (f" ({c['change']}, {c['status']})" if c["change"] else
                     f" (inside kg's block {c['block']!r}: a person's edit)" if c.get("block") else
                     " (outside kg's blocks)")
                  for c in cands]
        lines.append("run kg why with one of these lines for its full story")
        return {"line": line, "found": True, "source": "candidates", "candidates": cands, "explanation": lines}
    return {"line": line, "found": False, "source": "unknown", "candidates": [],
            "explanation": ["no kg block holds this line and no change ever wrote it"]}


def _block_at(text: str, norm: str) -> str | None:
    """The kg block holding the first line of `text` that reads `norm` (None: outside every block)."""
    offset = 0
    for x in text.splitlines(keepends=True):
        if _norm(x) == norm:
            return blocks.block_of_line(text, offset)
        offset += len(x)
    return None


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


def _when_next(change: dict[str, Any], at: datetime) -> str:
    """What comes next for a change: its next check while it is live or out for a check (due already, when that day
    is past), none once it is settled (QA2 #13c: a change reverted on 11-05 showed "next check 2026-11-05")."""
    if change["status"] not in (*LIVE, CHECKING):
        when = change.get("reverted_at")
        return (f"{change['status']} on {when:%Y-%m-%d}" if isinstance(when, datetime) else change["status"]) + \
            ", no further check"
    due = change.get("next_check")
    if not isinstance(due, datetime):
        return "no check set"
    return f"next check {due:%Y-%m-%d}" + (" (due: the next kg cycle judges it)" if due <= at else "")


def _trace(st: Any, node_id: str, change: dict[str, Any] | None, at: datetime,
           out_how: str | None = None) -> dict[str, Any]:
    from kg.lifecycle.api import _change_view  # shared with `kg verify`'s list (api imports this module)

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
            lines.append(f"verification: {change['verdict'] or 'not yet'}; status {change['status']}; "
                         + _when_next(change, at))
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
