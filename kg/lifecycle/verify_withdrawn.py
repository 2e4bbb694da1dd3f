"""Changes a person took out of the files: verification pauses while the rule is not in effect. Pure.

A rule is in effect while its line is in its file. When a person deletes kg's block (or the file, or the
rule's line inside the block), the change stays live in the graph (kg flags the block and does not write it
back), but the days without the rule are no evidence about it: its verification pauses from the first kg
run that sees the rule gone, and resumes, its clocks moved on by the pause, when the line is back (the person
restored it, or `kg export memory --force` rewrote the block). The pauses are kept in the change's evidence
trail, one dated line each way, so `kg why` and `kg verify --json` show them and no schema change is needed.

On a team graph one change renders into every member's files, and each member's cycle sees only its own: the
shared evidence's pause followed whichever cycle ran last (one member paused it each morning, another resumed it
an hour later and even judged it on days the first ran without the rule). So there each line names the workspace
whose file it is about (`withdrawn by hand [alpha#2]: ...`), a workspace's cycle pauses and resumes only its own
withdrawal, and the rule's days out are those of any member's (the union: `pauses`): no member's cycle judges it
while one member runs without it, and the others' cycles leave that member's pause alone. An embedded graph's
lines name no workspace, as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from kg.lifecycle import blocks

WITHDRAWN = "withdrawn by hand"  # kg's block or the file is gone
EDITED = "edited by hand"  # kg's block is there, the rule reworded or taken out of it (said as `kg status` says it)
ASIDE = "set aside by a conflict"  # kg itself left the rule out of its file: it lost (or tied) a conflict
RESUMED = "back in effect"
STAMP = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[+-]\d{2}:\d{2})?"  # an evidence line's ISO time


def mark_pattern(*words: str) -> re.Pattern[str]:
    """An evidence line that opens with its time and one of `words`: (time, word)."""
    return re.compile(rf"^({STAMP}) ({'|'.join(re.escape(w) for w in words)})\b")


_MARK = re.compile(rf"^({STAMP}) ({'|'.join(re.escape(w) for w in (WITHDRAWN, EDITED, ASIDE, RESUMED))})\b"
                   r"(?: \[([^\]\n]*)\])?")  # and the workspace a team graph's line is about
OUT = (WITHDRAWN, EDITED, ASIDE)
ANY = object()  # every workspace's pauses (`pauses`, `paused_since`): the rule out of any member's file
_BULLET = re.compile(r"^(?:[-*+]\s+)")


def _norm(line: str) -> str:
    return _BULLET.sub("", line.strip()).strip()


def in_effect(text: str | None, block: str, rule: str, expected_hash: str | None) -> bool:
    """Whether a live change's rule is in its file (`text`, None when the file is gone). A block that still
    holds what kg last wrote (`expected_hash`), or one kg never recorded writing, is kg's own rendering: in
    effect. Otherwise a person touched it, and the rule is in effect only while every line of it is still
    somewhere in the file (kept inside the edited block, moved out of it, or reworded around: "- Avoid x (my
    wording)" still holds "Avoid x")."""
    if not expected_hash:
        return True
    if text is not None:
        try:
            inner = blocks.inner_of(text, block)
        except blocks.BlockError:
            inner = None
        if inner is not None and blocks.same(inner, expected_hash):
            return True
    if text is None:
        return False
    need = {_norm(x).casefold() for x in blocks.neutral(rule).splitlines() if _norm(x)}  # as kg renders it
    have = [x.casefold() for x in text.splitlines()]
    return bool(need) and all(any(n in h for h in have) for n in need)


def written_in(text: str | None, block: str, rule: str) -> bool:
    """Whether kg's block `block` of a file's `text` holds every line of `rule` as kg renders it: what an export
    wrote there, not only a block unchanged since kg last wrote it (`in_effect`, which takes that for every rule
    of the block, and a rule kg kept out of it is not there)."""
    try:
        inner = blocks.inner_of(text, block) if text is not None else None
    except blocks.BlockError:
        inner = None
    if inner is None:
        return False
    need = {_norm(x).casefold() for x in blocks.neutral(rule).splitlines() if _norm(x)}
    have = [x.casefold() for x in inner.splitlines()]
    return bool(need) and all(any(n in h for h in have) for n in need)


def tag_name(where: str) -> str:
    """A workspace's name as its pause lines carry it: `]` and line breaks would end the tag, so they are written
    as `)` and a space. Names are compared in this form too, so a folder named `wsB [old]` finds its own lines
    (the `#n` a team graph adds keeps two members apart)."""
    return where.replace("]", ")").replace("\r", " ").replace("\n", " ")


def _tag(where: str | None) -> str:
    return f" [{tag_name(where)}]" if where else ""


def _as_tagged(where: Any) -> Any:
    return tag_name(where) if isinstance(where, str) else where


def _by_workspace(evidence: Iterable[str] | None, now: datetime) -> dict[str | None, list[tuple[datetime, datetime]]]:
    """Each workspace's withdrawals (None: the lines that name none, an embedded graph's), the last one open: up
    to `now`."""
    lines: dict[str | None, list[str]] = {}
    for line in evidence or ():
        m = _MARK.match(line)
        if m:
            lines.setdefault(m.group(3), []).append(line)
    return {where: marked_spans(these, now, _MARK, lambda word: word in OUT, lambda word: word == RESUMED)
            for where, these in lines.items()}


def _union(spans: Iterable[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    out: list[tuple[datetime, datetime]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def pauses(evidence: Iterable[str] | None, now: datetime, where: Any = ANY) -> list[tuple[datetime, datetime]]:
    """The periods the change was withdrawn by hand, from its evidence trail (the last one open: up to `now`):
    out of any workspace's file (a team graph's members: their union), or of the workspace `where` names."""
    spans = _by_workspace(evidence, now)
    if where is not ANY:
        return spans.get(_as_tagged(where), [])
    return _union(x for these in spans.values() for x in these)


def closed_total(evidence: Iterable[str] | None) -> timedelta:
    """How long the change's closed withdrawals covered, overlaps once: a resume moves its clocks on by what this
    adds (an embedded graph's: the pause it closes)."""
    closed = []
    for where in _workspaces(evidence):
        start: datetime | None = None
        for line in evidence or ():
            m = _MARK.match(line)
            if not m or m.group(3) != where:
                continue
            at = datetime.fromisoformat(m.group(1))
            if m.group(2) in OUT and start is None:
                start = at
            elif m.group(2) == RESUMED and start is not None:
                closed.append((start, max(start, at)))
                start = None
    return sum((b - a for a, b in _union(closed)), timedelta(0))


def elsewhere(evidence: Iterable[str] | None, here: str | None) -> list[tuple[str, datetime]]:
    """The other workspaces that have the rule out of their file now, each since when (a team graph)."""
    out, here = [], _as_tagged(here)
    for where in _workspaces(evidence):
        if where != here and where is not None and (since := paused_since(evidence, where)) is not None:
            out.append((where, since))
    return sorted(out, key=lambda x: (x[1], x[0]))


def marked_spans(evidence: Iterable[str] | None, now: datetime, mark: Any, opens: Any,
                 closes: Any) -> list[tuple[datetime, datetime]]:
    """Periods between an opening and a closing mark line of an evidence trail (`mark` matches a line as
    (time, word)); one still open runs up to `now`. Withdrawals by hand and checks are both read this way."""
    out: list[tuple[datetime, datetime]] = []
    start: datetime | None = None
    for line in evidence or ():
        m = mark.match(line)
        if not m:
            continue
        at = datetime.fromisoformat(m.group(1))
        if opens(m.group(2)) and start is None:
            start = at
        elif closes(m.group(2)) and start is not None:
            out.append((start, at))
            start = None
    if start is not None:
        out.append((start, max(start, now)))
    return out


def paused_since(evidence: Iterable[str] | None, where: Any = ANY) -> datetime | None:
    """When the current pause began (None: the rule is in effect): out of any workspace's file, or of `where`'s."""
    if where is not ANY:
        start, where = None, _as_tagged(where)
        for line in evidence or ():
            m = _MARK.match(line)
            if m and m.group(3) == where:
                start = datetime.fromisoformat(m.group(1)) if m.group(2) in OUT else None
        return start
    starts = [since for w in _workspaces(evidence) if (since := paused_since(evidence, w)) is not None]
    return min(starts, default=None)


def paused_aside(evidence: Iterable[str] | None, where: Any) -> bool:
    """Whether the current pause (of `where`'s file) is one kg made itself, setting the rule aside for a conflict."""
    word, where = None, _as_tagged(where)
    for line in evidence or ():
        m = _MARK.match(line)
        if m and m.group(3) == where:
            word = m.group(2) if m.group(2) in OUT else None
    return word == ASIDE


def out_by_hand(evidence: Iterable[str] | None) -> bool:
    """Whether the rule is out of its file now because a person took it out (withdrawn or edited by hand), not
    because a conflict set it aside. On a team graph the lines name the members whose files it is out of, not the
    others (whose files may hold it): the verify step asks this on an embedded graph only."""
    last: dict[str | None, str] = {}
    for line in evidence or ():
        if m := _MARK.match(line):
            last[m.group(3)] = m.group(2)
    out = [w for w in last.values() if w != RESUMED]
    return bool(out) and ASIDE not in out


def _workspaces(evidence: Iterable[str] | None) -> set[str | None]:
    return {m.group(3) for line in evidence or () if (m := _MARK.match(line))}


def out_words(evidence: Iterable[str] | None) -> str:
    """How the rule left its file in the pauses of an evidence trail, for a verdict's counts: "withdrawn by
    hand", "edited by hand", or both when it was out both ways."""
    words = [w for w in OUT if any((m := _MARK.match(line)) and m.group(2) == w for line in evidence or ())]
    hand = [w.removesuffix(" by hand") for w in words if w != ASIDE]
    said = ([" or ".join(hand) + " by hand"] if hand else []) + ([ASIDE] if ASIDE in words else [])
    return " or ".join(said) or WITHDRAWN


def last_out(evidence: Iterable[str] | None) -> str:
    """The word of the last pause line (WITHDRAWN, EDITED or ASIDE), WITHDRAWN when there is none."""
    word = WITHDRAWN
    for line in evidence or ():
        m = _MARK.match(line)
        if m and m.group(2) in OUT:
            word = m.group(2)
    return word


def withdrawn_line(at: datetime, target: str, gone: bool, edited: bool = False, where: str | None = None, *,
                   aside: bool = False) -> str:
    """The evidence line of a pause: `edited` when kg's block is still in the file (a person reworded the rule
    inside it, or took it out of the block), as `kg status` tells the two apart; `aside` when kg left it out
    itself, the loser of a conflict (or both sides of a tie)."""
    if aside:
        return (f"{at.isoformat()} {ASIDE}{_tag(where)}: kg left the rule out of {target}, which a conflict "
                "decided (`kg conflicts`); verification paused, the days from here on are no evidence")
    if edited:
        return (f"{at.isoformat()} {EDITED}{_tag(where)}: the rule was reworded or taken out inside its kg block "
                f"({target}); verification paused, the days from here on are no evidence")
    what = "the file is gone" if gone else "its line is no longer in the file"
    return (f"{at.isoformat()} {WITHDRAWN}{_tag(where)}: {what} ({target}); verification paused, the days from "
            "here on are no evidence")


def resumed_line(at: datetime, since: datetime, target: str, where: str | None = None) -> str:
    return (f"{at.isoformat()} {RESUMED}{_tag(where)}: the rule is in {target} again after {_days(since, at)} "
            "withdrawn; verification resumed")


def _days(a: datetime, b: datetime) -> str:
    d = (b - a).total_seconds() / 86400
    return f"{d:.1f} days"


def overlap(spans: Sequence[tuple[datetime, datetime]], start: datetime, end: datetime) -> timedelta:
    """How much of [start, end] the spans cover."""
    total = timedelta(0)
    for a, b in spans:
        lo, hi = max(a, start), min(b, end)
        if hi > lo:
            total += hi - lo
    return total


def explain(evidence: Iterable[str] | None, now: datetime, how: str | None = None, here: Any = ANY) -> str:
    """One line for `kg status` and `kg why`: '' while the rule is in effect. `how`: "edited", "aside", "let back" or
    "withdrawn",
    as `kg status` finds it in the file now (None: as the last pause line says). `here`: this workspace (a team
    graph's, None for an embedded one): its own withdrawal, else another member's."""
    since = paused_since(evidence, here)
    if since is None and here is not ANY and (others := elsewhere(evidence, here)):
        names = ", ".join(w for w, _ in others)
        return (f"paused: {WITHDRAWN} in {names} since {others[0][1]:%Y-%m-%d} (a team member took it out of their "
                "file; it is in effect here, and the days it is out there are no evidence for any member)")
    if since is None:
        return ""
    if how == "let back":  # (`kg.lifecycle.api._how_out`) the conflict no longer keeps it out, kg wrote it back
        return (f"paused: {ASIDE} since {since:%Y-%m-%d}, and let back: no conflict keeps it out now (`kg "
                "conflicts`), the rule is in its file again as kg wrote it, and the next kg cycle resumes its "
                "verification (its days out are no evidence)")
    if (how == "aside") if how is not None else last_out(evidence) == ASIDE:
        return (f"paused: {ASIDE} since {since:%Y-%m-%d} (kg leaves the rule out of its file while a conflict "
                "decides against it, `kg conflicts`; its days out are no evidence, and verification resumes when "
                "it is back)")
    edited = how == "edited" if how is not None else last_out(evidence) == EDITED
    if edited:
        return (f"paused: {EDITED} inside its kg block since {since:%Y-%m-%d} (the rule as kg wrote it is not in "
                "its file; put kg's words back, or run `kg export memory --force`, and verification resumes)")
    return (f"paused: {WITHDRAWN} since {since:%Y-%m-%d} (the rule is not in its file; put it back, or run "
            "`kg export memory --force`, and verification resumes)")
