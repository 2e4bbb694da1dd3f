"""`kg why`: trace a line of an instruction file back to the change, the rule node, the pattern and its events
(moved out of kg/lifecycle/api.py, which re-exports `why` and `instruction_files`)."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from kg.core import clock
from kg.core.errors import UsageError
from kg.core.text import nfc
from kg.lifecycle import blocks, imported
from kg.lifecycle.conflicts import COMPATIBLE
from kg.lifecycle.cycle import LIVE, Lifecycle, _jsonable, holding
from kg.lifecycle.policy import load as load_policy
from kg.lifecycle.verify_check import explain as check_explain
from kg.lifecycle.verifying import CHECKING

Now = datetime | str | None


_MARKER = re.compile(r"^(?:<!--|#)\s*kaizen-kg:(begin|end)\s+(\S+?)\s*(?:-->)?$")


def _norm(line: str) -> str:
    """A line as compared: spaces and a list bullet aside, and a marker of kg's in it made inert, as the block
    editor renders it (`blocks.neutral`): the line copied from the file and the rule's own text are one line."""
    text = " ".join(blocks.neutral(nfc(line)).split())  # NFC: a line pasted decomposed is the same line
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
            out = _trace(st, hit.node, changes.get(hit.change), at, _how(lc, hit.change), _back(lc, hit.change))
            out.update(line=line, found=True, source="kg", file=hit.file, block=hit.block, text=hit.text)
            return _jsonable(out)
        past = [c for c in changes.values() if any(_norm(x) == needle for x in (c["text"] or "").splitlines())]
        if past:
            c = past[-1]
            out = _trace(st, c["node"], c, at, _how(lc, c["id"]))
            out.update(line=line, found=True, source="kg-inactive", file=c["target"], block=c["block"],
                       text=c["text"])
            out["explanation"].insert(0, _not_rendered(lc, c))
            return _jsonable(out)
    every = [(path, x) for path in _instruction_files(ws, desired) for x in (blocks.read(ws.root / path) or "")
             .splitlines() if _norm(x)]
    human = [(path, x) for path, x in every if not _MARKER.match(" ".join(x.split()))]
    markers = [(path, x) for path, x in every if _MARKER.match(" ".join(x.split()))]  # kg's own (QA4 #1)
    holders = list(dict.fromkeys(path for path, x in every if _norm(x) == needle))
    marker = _MARKER.match(" ".join(line.split()))  # (the line as given: `needle` has its markers made inert)
    if marker and (holders or _block_known(ws, marker.group(2), desired, changes)):
        # kg's own marker: the same line bounds its block in every file that has one (a marker of a block kg never
        # had is nobody's line of kg's, QA4 #2: it is looked for as any other line, and not found)
        end, name = marker.group(1), marker.group(2)
        where = f"in {', '.join(holders)}" if holders else "no instruction file holds it now"
        return {"line": line, "found": True, "source": "kg-marker", "file": holders[0] if holders else None,
                "files": holders, "block": name,
                "explanation": [f"kg wrote this line: the {end} marker of its block {name!r} ({where}); kg writes "
                                "only between its markers, and the text around them is yours"]}
    if marker:  # shaped as kg's marker, of a block kg never had: no line of kg's (a near one is no candidate)
        return {"line": line, "found": False, "source": "unknown", "candidates": [],
                "explanation": [f"kg has no block {marker.group(2)!r} and never had one: no file holds this marker "
                                "and no change of kg's wrote it"]}
    for path, x in human:
        if _norm(x) == needle:
            text = blocks.read(ws.root / path) or ""
            inside = blocks.block_of_line(text, text.find(x))
            ours = _kg_wrote(ws, desired, path, text, x, inside)
            skill = "" if ours or inside else _skill_wrote(path, text, x)
            if ours or skill:
                return {"line": line, "found": True, "source": "kg-skill" if skill else "kg-block", "file": path,
                        "block": inside, "explanation": [f"{path}: {ours or skill}."]}
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
            [("human", path, x, "", "") for path, x in human] +
            [("kg-marker", path, x, "", "") for path, x in markers])
    cands = _candidates(needle, pool, limit)
    if cands:
        texts = {path: blocks.read(ws.root / path) or "" for path in {c["file"] for c in cands if not c["change"]}}
        for c in cands:  # a person's line may sit inside kg's block (an edit kg keeps and flags): say which
            if c["source"] == "kg-marker":  # kg's marker, as the file holds it (`_norm` made it inert)
                c["text"] = " ".join(c["text"].replace("\\:", ":").split())
                c["block"] = _MARKER.match(c["text"]).group(2)  # type: ignore[union-attr]
            elif not c["change"]:
                c["block"] = _block_at(texts[c["file"]], c["text"])
                if not c["block"] and _skill_wrote(c["file"], texts[c["file"]], c["text"]):
                    c["source"] = "kg-skill"  # a line `kg skill new` or `kg skill update` wrote (QA4 #3)
        lines = [f"no line is exactly this; {len(cands)} candidate(s), best first:"]
        lines += [f"  [{c['match']} {c['score']:.0f}] {c['file']}: {c['text']}"
                  + (f" ({c['change']}, {c['status']})" if c["change"] else
                     f" (kg's marker of its block {c['block']!r}: kg wrote it)" if c["source"] == "kg-marker" else
                     " (kg skill new / kg skill update wrote it)" if c["source"] == "kg-skill" else
                     f" (inside kg's block {c['block']!r}: a person's edit)" if c.get("block") else
                     " (outside kg's blocks)")
                  for c in cands]
        lines.append("run kg why with one of these lines for its full story")
        return {"line": line, "found": True, "source": "candidates", "candidates": cands, "explanation": lines}
    return {"line": line, "found": False, "source": "unknown", "candidates": [],
            "explanation": ["no kg block holds this line and no change ever wrote it"]}


def _not_rendered(lc: Lifecycle, c: dict[str, Any]) -> str:
    """Why kg does not render now a line one of its changes wrote: a check, a conflict that set it aside (QA4 #6:
    "that change is applied now, so kg no longer renders it"), or the change is over (reverted, say)."""
    from kg.lifecycle.verifying import set_aside

    if c["status"] == CHECKING:
        return f"kg wrote this line with {c['id']} and took it out for a check: {check_explain(c['evidence'])}."
    if c["status"] not in LIVE:
        return f"kg wrote this line with {c['id']}, but that change is {c['status']} now, so kg no longer renders it."
    if c["id"] in set_aside(lc):
        return (f"kg wrote this line with {c['id']} and leaves it out of {c['target']} for now: a conflict set it "
                "aside (below; `kg conflicts`), and kg renders it again once no conflict holds it out.")
    return f"kg wrote this line with {c['id']} ({c['status']}), but kg does not render it now."


def _block_known(ws: Any, name: str, desired: dict[tuple[str, str], Any], changes: dict[str, Any]) -> bool:
    """Whether kg has, or once had, a block of this name: one it renders now, one a change of its wrote, or one
    another kg writer keeps (`blocks.json`: preferences, the AGENTS.md block of `kg install codex`...)."""
    return (any(block == name for _, block in desired) or any(c["block"] == name for c in changes.values())
            or any(key.rpartition("#")[2] == name for key in blocks.load_states(ws.kg_dir)))


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
    order = {"kg": 0, "kg-inactive": 1, "human": 2, "kg-marker": 3}
    out.sort(key=lambda c: (c["match"] != "fragment", -c["score"], order[c["source"]], c["file"], c["text"]))
    return out[:limit]


def instruction_files(ws: Any) -> list[str]:
    """The files kg's promotions write (each target's file and the memory file), as workspace-relative names."""
    lp = load_policy(ws)
    return sorted({t.file for t in lp.targets.values() if "{" not in t.file} | {lp.memory.file})


def _instruction_files(ws: Any, desired: dict[tuple[str, str], Any]) -> list[str]:
    """The files whose lines kg explains: the targets, the memory file, the files of kg's blocks now, and every
    skill file (`kg skill new` and `kg skill update` write them outside any lifecycle change, QA4 #3)."""
    lp = load_policy(ws)
    names = {t.file for t in lp.targets.values() if "{" not in t.file} | {lp.memory.file} | {f for f, _ in desired}
    skills_dir = ws.memory / "skills"
    names |= {str(p.relative_to(ws.root)) for p in sorted(skills_dir.glob("*.md")) if p.is_file()} \
        if skills_dir.is_dir() else set()
    return sorted(names)


def _skill_wrote(path: str, text: str, x: str) -> str:
    """Why kg wrote a line of a skill file outside the lifecycle's block ('' when it did not): the frontmatter,
    the title and the items of the three sections `kg skill new` and `kg skill update` write (kg/memory/skills.py),
    in a file that has kg's frontmatter. kg keeps no copy of a skill's lines, so a line a person added to one of
    those sections in kg's form reads the same: said."""
    from kg.memory import skills

    if not skills.is_skill_file(path):
        return ""
    try:
        skill = skills.parse(Path(path).stem, text)
    except UsageError:  # damaged markers: `kg skill update` says what to fix
        return ""
    if not (skill.created and skill.updated):  # no frontmatter of kg's: a file a person made
        return ""
    fields = {_norm(f"{k}: {v}"): k for k, v in (("name", skill.name), ("description", skill.description),
                                                  ("created", skill.created), ("updated", skill.updated),
                                                  ("source", skill.source),
                                                  ("triggers", json.dumps(skill.triggers, ensure_ascii=False)),
                                                  ("tools", json.dumps(skill.tools, ensure_ascii=False)))}
    own = {_norm(f"## {name}"): f"its {name} heading" for name in skills.OWN}
    own |= {_norm(f"# {skill.title}"): "its title"} if skill.title else {}
    own |= {_norm(item): f"its {name}" for name in skills.OWN for item in skill.sections.get(name, [])
            if _norm(item) and _norm(item) != "(none yet)"}
    norm = _norm(x)
    part = f"its {fields[norm]}" if norm in fields else own.get(norm)
    if not part:
        return ""
    by = f", source: {skill.source}" if skill.source else ""
    return (f"kg wrote this line with `kg skill new` or `kg skill update` (the skill {skill.slug!r}, {part}; "
            f"last written {skill.updated}{by}). kg keeps no copy of a skill's lines: one a person added there in "
            "the same form reads the same")


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


def _side(d: dict[str, Any], node_id: str) -> str:
    """This rule's side of a decision, as `kg conflicts` says it: a tie kg keeps one side of (`on_tie`) is still a
    tie, not a win (QA4 #6: `kg why` said "won (60 vs 60)" and "lost (60 vs 60)" where `kg conflicts` said TIE)."""
    if d["status"] == COMPATIBLE:
        return "no conflict (a person said so: both rules are written)"
    if d["status"] == "tie":
        if not d["winner"]:
            return "tie (under review; neither rendered)"
        kept = "this rule kept" if d["winner"] == node_id else f"{d['winner']} kept, this rule set aside"
        return f"tie ({kept} for now; under review: `kg conflicts resolve {d['id']} --winner ID`)"
    return "won" if d["winner"] == node_id else "lost"


def _back(lc: Lifecycle, change_id: str | None) -> bool:
    """Whether a live change's rule is in its file as kg wrote it now: a pause its cycle recorded then ends at the
    next cycle (the rule kg renders again once the conflict that set it aside stopped doing so, say)."""
    from kg.lifecycle.verifying import effects

    rows = [r for r in lc.st.run("lc_live_effects", statuses=list(LIVE)) if r["id"] == change_id]
    return bool(rows) and effects(lc, rows).get(change_id) is True


def _trace(st: Any, node_id: str, change: dict[str, Any] | None, at: datetime,
           out_how: str | None = None, back: bool = False) -> dict[str, Any]:
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
        from kg.lifecycle.verify_withdrawn import explain, paused_since

        here = (getattr(st, "origin", None) or {}).get("origin_workspace") or None  # a team graph's member
        paused = explain(change["evidence"], at, out_how, here) if change["status"] in LIVE else ""
        back = back and paused_since(change["evidence"], here) is not None  # (not another member's pause)
        if change["pattern"] or change["verdict"]:  # a paused check is not due (QA4 #6: "due" beside "paused")
            when = (_when_next(change, at) if not paused else "no check while verification is paused (below)"
                    if not back else "its next check is set when verification resumes (below)")
            lines.append(f"verification: {change['verdict'] or 'not yet'}; status {change['status']}; {when}")
        else:  # a change is checked against its pattern's rate (lc_changes_due): with none, its check never comes
            out["change"].update(next_check=None, unverified=UNVERIFIED)
            lines.append(f"verification: none; status {change['status']}; {UNVERIFIED}")
        if paused and back:  # paused by a cycle, in its file again since (QA4 #6: "edited by hand" of kg's words)
            lines.append(f"verification paused since {paused_since(change['evidence'], here):%Y-%m-%d}; the "
                         f"rule is back in {change['target']} as kg wrote it, and the next kg cycle resumes it")
        elif paused:
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
            lines.append(f"conflict {d['id']}: {_side(d, node_id)} ({d['score_a']} vs {d['score_b']})")
    out["explanation"] = lines
    return out
