"""Where the secrets of one text are, and the text rebuilt with them replaced: `_Spans`, the disjoint spans a
scan collects (earlier rules win, an overlapping later span is dropped), and `MARKER`, what each becomes.

Apart from `kg.redaction.redact`, which decides what is a secret (rules, keywords, echoes), because this is only
bookkeeping over positions: it knows nothing of rules, and is the one place a text is rebuilt.
"""

from __future__ import annotations

import bisect
import re

MARKER = "[REDACTED:{kind}]"
MARKERS = re.compile(r"\[REDACTED:[a-z0-9_]{1,64}\]")  # any MARKER in a text
_DOTTED_RUN = re.compile(r"(?:[A-Za-z0-9_+/=-]|\.(?=[A-Za-z0-9_+/=-]))*")


class _Spans:
    """Disjoint secret spans, sorted by start; a span overlapping one already taken is dropped."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.items: list[tuple[int, int, str]] = []
        self.kinds: set[str] = set()
        self.run = (0, 0)  # the last dotted run read: [start, end)

    def dotted_end(self, text: str, at: int) -> int:
        """Where the dotted run through `at` ends. Every position of a run ends where the run does, so a run is read
        once, not once per secret in it: a blob of 60,000 dotted tokens took 10 s to redact, reading 16 KB each."""
        start, end = self.run
        if not start <= at < end:
            end = _DOTTED_RUN.match(text, at).end()
            self.run = (at, end)
        return end

    def covers(self, at: int) -> bool:
        i = bisect.bisect_right(self.starts, at)
        return bool(i) and self.items[i - 1][1] > at

    def add(self, start: int, end: int, kind: str) -> None:
        i = bisect.bisect_right(self.starts, start)
        if i and self.items[i - 1][1] > start:
            return
        if i < len(self.items) and self.items[i][0] < end:
            return
        self.starts.insert(i, start)
        self.items.insert(i, (start, end, kind))
        if kind:
            self.kinds.add(kind)

    def absorb(self, start: int, end: int, kind: str) -> None:
        """Add a span that may hold spans already taken: those are replaced by it when it holds them whole (and
        all are secrets, not earlier markers); one it only overlaps keeps it out, as in `add`."""
        lo = bisect.bisect_right(self.starts, start) - 1
        if lo < 0 or self.items[lo][1] <= start:
            lo += 1
        hi = bisect.bisect_left(self.starts, end)
        inside = self.items[lo:hi]
        if not inside:
            self.add(start, end, kind)
            return
        if inside[0][0] < start or inside[-1][1] > end or not all(k for _, _, k in inside):
            return
        del self.starts[lo:hi], self.items[lo:hi]
        self.starts.insert(lo, start)
        self.items.insert(lo, (start, end, kind))
        self.kinds = {k for _, _, k in self.items if k}

    def render(self, text: str) -> str:
        parts: list[str] = []
        done = 0
        for start, end, kind in self.items:
            parts += (text[done:start], MARKER.format(kind=kind) if kind else text[start:end])
            done = end
        parts.append(text[done:])
        return "".join(parts)


def _found(text: str, spans: _Spans, least: int) -> dict[str, str]:
    """The secret values of `spans` (lowercased, `least` characters or more) and their kinds."""
    return {text[start:end].lower(): kind for start, end, kind in spans.items if kind and end - start >= least}
