"""Changes a person took out of the files: verification pauses while the rule is not in effect. Pure.

A rule is in effect while its line is in its file. When a person deletes kg's block (or the file, or the
rule's line inside the block), the change stays live in the graph (kg flags the block and does not write it
back), but the days without the rule are no evidence about it: its verification pauses from the first kg
run that sees the rule gone, and resumes, its clocks moved on by the pause, when the line is back (the person
restored it, or `kg export memory --force` rewrote the block). The pauses are kept in the change's evidence
trail, one dated line each way, so `kg why` and `kg verify --json` show them and no schema change is needed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from kg.lifecycle import blocks

WITHDRAWN = "withdrawn by hand"  # kg's block or the file is gone
EDITED = "edited by hand"  # kg's block is there, the rule reworded or taken out of it (said as `kg status` says it)
RESUMED = "back in effect"
STAMP = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[+-]\d{2}:\d{2})?"  # an evidence line's ISO time


def mark_pattern(*words: str) -> re.Pattern[str]:
    """An evidence line that opens with its time and one of `words`: (time, word)."""
    return re.compile(rf"^({STAMP}) ({'|'.join(re.escape(w) for w in words)})\b")


_MARK = mark_pattern(WITHDRAWN, EDITED, RESUMED)
OUT = (WITHDRAWN, EDITED)
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


def pauses(evidence: Iterable[str] | None, now: datetime) -> list[tuple[datetime, datetime]]:
    """The periods the change was withdrawn by hand, from its evidence trail (the last one open: up to
    `now`)."""
    return marked_spans(evidence, now, _MARK, lambda word: word in OUT, lambda word: word == RESUMED)


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


def paused_since(evidence: Iterable[str] | None) -> datetime | None:
    """When the current pause began (None: the rule is in effect)."""
    start = None
    for line in evidence or ():
        m = _MARK.match(line)
        if m:
            start = datetime.fromisoformat(m.group(1)) if m.group(2) in OUT else None
    return start


def out_words(evidence: Iterable[str] | None) -> str:
    """How the rule left its file in the pauses of an evidence trail, for a verdict's counts: "withdrawn by
    hand", "edited by hand", or both when it was out both ways."""
    words = [w for w in OUT if any((m := _MARK.match(line)) and m.group(2) == w for line in evidence or ())]
    return " or ".join(w.removesuffix(" by hand") for w in words) + " by hand" if words else WITHDRAWN


def last_out(evidence: Iterable[str] | None) -> str:
    """The word of the last pause line (WITHDRAWN or EDITED), WITHDRAWN when there is none."""
    word = WITHDRAWN
    for line in evidence or ():
        m = _MARK.match(line)
        if m and m.group(2) in OUT:
            word = m.group(2)
    return word


def withdrawn_line(at: datetime, target: str, gone: bool, edited: bool = False) -> str:
    """The evidence line of a pause: `edited` when kg's block is still in the file (a person reworded the rule
    inside it, or took it out of the block), as `kg status` tells the two apart."""
    if edited:
        return (f"{at.isoformat()} {EDITED}: the rule was reworded or taken out inside its kg block ({target}); "
                "verification paused, the days from here on are no evidence")
    what = "the file is gone" if gone else "its line is no longer in the file"
    return (f"{at.isoformat()} {WITHDRAWN}: {what} ({target}); verification paused, the days from here on are "
            "no evidence")


def resumed_line(at: datetime, since: datetime, target: str) -> str:
    return (f"{at.isoformat()} {RESUMED}: the rule is in {target} again after {_days(since, at)} withdrawn; "
            "verification resumed")


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


def explain(evidence: Iterable[str] | None, now: datetime, how: str | None = None) -> str:
    """One line for `kg status` and `kg why`: '' while the rule is in effect. `how`: "edited" or "withdrawn",
    as `kg status` finds it in the file now (None: as the last pause line says)."""
    since = paused_since(evidence)
    if since is None:
        return ""
    edited = how == "edited" if how is not None else last_out(evidence) == EDITED
    if edited:
        return (f"paused: {EDITED} inside its kg block since {since:%Y-%m-%d} (the rule as kg wrote it is not in "
                "its file; put kg's words back, or run `kg export memory --force`, and verification resumes)")
    return (f"paused: {WITHDRAWN} since {since:%Y-%m-%d} (the rule is not in its file; put it back, or run "
            "`kg export memory --force`, and verification resumes)")
