r"""The view redaction also reads of a text holding JSON inside a JSON string: without the backslashes that escape
its quotes and slashes. `curl -d "{\"password\":\"…\"}"`, a secret manager's `"SecretString": "{\"password\":…}"`,
a log line's JSON in a JSON field, a URL written `postgres:\/\/app:…@db`: the rules that read `"password":"…"` or a
URL's password see the text as it would be once unescaped (one level of escaping or several). A span found in
the view maps back to the text's, the backslashes inside it included. Pure.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

_ESCAPES = re.compile(r"\\+(?=[\"/])")  # a run of backslashes before a quote or a slash


class Unescaped:
    """`text` without the backslash runs before its quotes and slashes (`.text`), and the way back (`span`)."""

    def __init__(self, text: str) -> None:
        pieces: list[str] = []
        self._at: list[int] = [0]  # view positions from which ...
        self._shift: list[int] = [0]  # ... this many characters of the text before them are not in the view
        done = dropped = 0
        for hit in _ESCAPES.finditer(text):
            pieces.append(text[done:hit.start()])
            dropped += hit.end() - hit.start()
            done = hit.end()
            self._at.append(done - dropped)
            self._shift.append(dropped)
        pieces.append(text[done:])
        self.text = "".join(pieces)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The text's (start, end) of the view's."""
        first = self._shift[bisect_right(self._at, start) - 1]
        last = self._shift[bisect_right(self._at, end - 1) - 1] if end > start else first
        return start + first, end + last


BEFORE, AFTER = 80, 320  # the part of the text around an escaped key read unescaped: its name, then its value
_URL = re.compile(r":\\+/\\+/")  # a URL's `://` escaped (once or more): its rule's keyword is not in the text
_KEY_END = re.compile(r'\\"\s*:')  # an escaped key's closing quote, `\"password\":` (a literal start: a fast scan)
_NAME = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def may_hold(text: str) -> bool:
    """Whether `text` escapes a quote or a slash (most texts: two substring tests)."""
    return '\\"' in text or "\\/" in text


def windows(text: str, starts: dict[int, list[int]]) -> list[tuple[int, Unescaped]]:
    """(where it starts, the view of it) for each stretch of `text` around an escaped key (`\"db_password\":`)
    whose name holds a rule's keyword (`starts`, as the redactor found them), and around an escaped `://`: only
    there can a rule match in the view what it did not in the text. (10 MB of transcripts read whole unescaped
    took twice as long; around every keyword, as long: "key" and "api" are everywhere.)"""
    keywords = sorted({at for found in starts.values() for at in found})
    points = []
    for end in _KEY_END.finditer(text):
        stop = end.start()
        while stop > 0 and text[stop - 1] == "\\":  # `\\\"`: escaped twice
            stop -= 1
        first = bisect_left(keywords, stop - 64)
        if first == len(keywords) or keywords[first] >= stop:
            continue  # no keyword just before (most keys)
        name = stop
        while name > 0 and stop - name < 64 and text[name - 1] in _NAME:
            name -= 1
        first = bisect_left(keywords, name)
        if first < len(keywords) and keywords[first] < stop:
            points.append(name)
    points += [m.start() for m in _URL.finditer(text)] if ":\\" in text else []
    spans: list[list[int]] = []
    for at in sorted(points):
        lo, hi = max(0, at - BEFORE), min(len(text), at + AFTER)
        if spans and lo <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], hi)
        else:
            spans.append([lo, hi])
    return [(lo, Unescaped(text[lo:hi])) for lo, hi in spans]


class Joined:
    """The views `windows` found, read as one text (one scan instead of one per stretch: 228 stretches of 10 MB of
    transcripts took 59 ms scanned one by one), a blank line between two; `span` maps a span back to the text's."""

    def __init__(self, found: list[tuple[int, Unescaped]]) -> None:
        self._found = found
        self._at: list[int] = []
        pieces: list[str] = []
        size = 0
        for _, view in found:
            self._at.append(size)
            pieces.append(view.text)
            size += len(view.text) + 2
        self.text = "\n\n".join(pieces)

    def span(self, start: int, end: int) -> tuple[int, int] | None:
        """The text's (start, end) of the joined text's; None for a span that runs over from one stretch into the
        next."""
        i = bisect_right(self._at, start) - 1
        lo, view = self._found[i]
        off = self._at[i]
        if end - off > len(view.text):
            return None
        a, b = view.span(start - off, end - off)
        return lo + a, lo + b
