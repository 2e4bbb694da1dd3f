"""Lines as tools print them: behind a prefix. A diff marks each line with +, - or a space, grep -n and rg -n print
`path:12:` (a context line `path-12-`, one file's just `12:`), Claude Code's Read `     12→`, cat -n `     12<tab>`,
a quote `> `. A rule that anchors on a line's start does not see that start behind the prefix: `+mimi=<key>` in a
`git diff` kept the key `mimi=<key>` loses, an INI value continued on indented lines kept all of them, and a key
block read with line numbers lost only its BEGIN line (QA qa1). Editing each rule to allow each prefix would be
redone for every rule and every tool.

So a text with such lines is read twice: as it is, and as a view with the prefixes taken off, and what the rules
find in the view is mapped back onto the text (`Redactor._collect`). `rules/secrets.toml` `line_prefix` says what
a prefix is. The view holds only the runs of consecutive prefixed lines that hold a prefix with more than blanks
in it: an indented line alone is no tool's output (a diff's context line is, beside the + and - lines), and a
Markdown list's `- ` line does not make the whole of a 1 MB text be read again, only its run.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from kg.redaction.rules import regex

Patterns = tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]


def sources(source: str) -> tuple[str, str, str, str]:
    """For `line_prefix`: the regexes of (a prefix at a line's start, never empty; a quick test for one with more
    than blanks in it, ending in a mark or in a mark and a blank, as cat -n's tab and a quote's `> ` do; the same
    test after a newline; a run of lines each with a prefix, found by the regex engine rather than line by line in
    Python). The test after a newline is what a text is searched with: it opens with a literal, which the engine
    skips to, where `(?m)^` is tried at every character (0.1 s against 0.04 s for 10 MB)."""
    marked = f"(?:{source})(?:(?<=[^\\s])|(?<=[^\\s][ \\t]))"
    return (f"(?m)^(?:{source})(?<=[^\\n])", f"(?m)^{marked}", f"(?m)\\n{marked}",
            f"(?m)^(?:(?:{source})(?<=[^\\n])[^\\n]*+(?:\\n|\\Z))+")


def compiled(source: str) -> Patterns | None:
    """`sources` compiled (the packaged line prefix's from the rules cache: compiling them was most of what a fresh
    `kg log` paid for redaction), or None for no `line_prefix`."""
    if not source:
        return None
    prefix, marked, after_newline, runs = (regex(item) for item in sources(source))
    return prefix, marked, after_newline, runs


class BareView:
    """The prefixed runs of a text with their prefixes taken off, and the way back to the text's positions (worked
    out for a run only when a secret is found in it: most texts have none, and a 1 MB Read is one run)."""

    def __init__(self, text: str, runs: list[tuple[int, int, str]], prefix: re.Pattern[str]) -> None:
        self.text = text
        self._runs = runs  # (where the run starts in the view, and in the text; the run as in the text)
        self._ends = [at for at, _, _ in runs[1:]] + [len(text)]  # where each run ends in the view
        self._prefix = prefix
        self._lines: dict[int, tuple[list[int], list[int]]] = {}

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The text's (start, end) of the view's. A span that runs on into the next run is cut at its run's end
        (what lies between the two runs in the text is no part of it); one over several lines of a run covers the
        prefixes between them too (a key block is replaced whole)."""
        run = bisect_right(self._ends, start)
        end = min(end, self._ends[run])
        starts, origins = self._mapped(run)
        first = bisect_right(starts, start) - 1
        last = bisect_right(starts, end - 1) - 1
        return origins[first] + start - starts[first], origins[last] + end - starts[last]

    def _mapped(self, run: int) -> tuple[list[int], list[int]]:
        """Where each line of a run starts in the view, and where past its prefix in the text."""
        if run not in self._lines:
            base, lo, chunk = self._runs[run]
            starts: list[int] = []
            origins: list[int] = []
            removed = 0
            for line in self._prefix.finditer(chunk):
                begin, body = line.span()
                removed += body - begin
                starts.append(base + body - removed)
                origins.append(lo + body)
            self._lines[run] = (starts, origins)
        return self._lines[run]


# grep -n / rg -n of one file: `12:` a matching line, `11-` a line of context around it. `11-` alone is no prefix
# (a terminal wraps a bun.lock digest after 'sha51' into a line opening `2-uKXq...`), so a `N-` line counts only in
# a block of lines numbered N, N+1, ... one after another, one of them a match (`N:`) as grep prints them.
_CONTEXT = re.compile(r"\n\d{1,9}-(?![ \t\n]|\Z)")  # after a newline: the engine skips to each one, where
_MATCH = re.compile(r"\n\d{1,9}:")  # `(?m)^` tries every position (32 ms a MB)
_NUMBERED = re.compile(r"(?:\d{1,9}[:-][^\n]*+(?:\n|\Z))+")
_NUMBER = re.compile(r"(\d{1,9})([:-])")


def _grep_context(text: str) -> str:
    """`text` with the `-` of each grep context line (`11-`) beside a matching line made `:`, as `line_prefix`
    reads a matching line's number (same length: positions stay those of `text`); `text` when it has none."""
    hit = _CONTEXT.match("\n" + text[:12]) or _CONTEXT.search(text)
    if hit is None:
        return text
    chars: list[str] | None = None
    done = 0
    while hit is not None:
        lo = text.rfind("\n", 0, hit.start() + 1) + 1  # the numbered lines above it are the block's too
        while lo > done and _NUMBERED.match(text, text.rfind("\n", done, lo - 1) + 1 or done, lo) is not None:
            lo = text.rfind("\n", done, lo - 1) + 1 or done
        block = _NUMBERED.match(text, lo)
        done = block.end() if block is not None else len(text)
        if block is not None and _MATCH.search("\n" + block.group()) is not None:  # a log's dates: none
            lines: list[tuple[int, int, str]] = []  # (number, where its mark is, the mark) of a grep group
            at = lo
            for line in block.group().splitlines(keepends=True):
                number = _NUMBER.match(line)
                if lines and int(number.group(1)) != lines[-1][0] + 1:
                    chars = _as_matches(text, lines, chars)
                    lines = []
                lines.append((int(number.group(1)), at + number.end() - 1, number.group(2)))
                at += len(line)
            chars = _as_matches(text, lines, chars)
        hit = _CONTEXT.search(text, done - 1) if done < len(text) else None
    return text if chars is None else "".join(chars)


def _as_matches(text: str, lines: list[tuple[int, int, str]], chars: list[str] | None) -> list[str] | None:
    if len(lines) < 2 or all(mark == "-" for _, _, mark in lines):
        return chars
    chars = list(text) if chars is None else chars
    for _, at, mark in lines:
        if mark == "-":
            chars[at] = ":"
    return chars


def _marked_line(text: str, at: int, marked: re.Pattern[str], after_newline: re.Pattern[str]) -> int:
    """Where the first line at or after `at` starts whose prefix has more than blanks (`marked`), or -1."""
    if (at == 0 or text[at - 1] == "\n") and marked.match(text, at) is not None:
        return at
    hit = after_newline.search(text, at)
    return -1 if hit is None else hit.start() + 1


def bare_view(text: str, patterns: Patterns) -> BareView | None:
    """The view of `text` without its lines' prefixes, or None when no line has one with more than blanks (most
    texts: one regex search and done)."""
    prefix, marked, after_newline, runs = patterns
    text = _grep_context(text)
    at = _marked_line(text, 0, marked, after_newline)
    if at < 0:
        return None
    pieces: list[str] = []
    kept: list[tuple[int, int, str]] = []
    size = 0
    done = 0  # where the last run ends: each line is looked at once, whatever the runs
    while at >= 0:
        # the run holding a marked line: back over the prefixed lines above it (indented code around a `- ` line
        # of a docstring is no run the regex engine should walk from the text's start), then on to its end
        lo = at
        while lo > done:
            above = text.rfind("\n", done, lo - 1) + 1 or done
            if prefix.match(text, above) is None:
                break
            lo = above
        run = runs.match(text, lo)
        done = run.end() if run is not None else text.find("\n", lo) + 1 or len(text)
        if run is not None:
            chunk = run.group()
            kept.append((size, lo, chunk))
            pieces.append(prefix.sub("", chunk))
            size += len(pieces[-1])
        at = _marked_line(text, done, marked, after_newline) if done < len(text) else -1
    return BareView("".join(pieces), kept, prefix) if kept else None


# What a terminal's colours and cursor moves are written as (CSI: `\x1b[32m`, grep's `\x1b[K`; OSC: a link or a
# title, ended by BEL or ST): `git diff --color`, `grep --color=always` and a coloured log put them before a line's
# `+` or number and between a key and its value, where no rule reads past them.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?")


class Unescaped:
    """The lines of a text that hold terminal escapes (and the line on either side), without the escapes, and the way
    back to the text's positions. Only those lines: the rest of the text reads the same in the text itself, and a
    10 MB transcript with one coloured line was read twice whole (2.8 s against 1.8 s)."""

    def __init__(self, text: str) -> None:
        pieces: list[str] = []
        self._at: list[int] = []  # where each piece starts in the view
        self._shift: list[int] = []  # how many characters of the text before it are not in the view
        self._ends: list[int] = []  # where each run of lines ends in the view: a span is cut there
        size = 0
        text_end = -1  # where the view's last run ends in the text
        hit = _ESCAPES.search(text)
        while hit is not None:
            lo = max(text_end, _line_start(text, _line_start(text, hit.start()) - 1))  # from the line above
            if lo == text_end:
                self._ends.pop()  # the last run goes on
            else:
                self._at.append(size)
                self._shift.append(lo - size)
            done = lo
            end = _line_end(text, _line_end(text, hit.end()))  # to the line below the run's last escape
            while hit is not None and hit.start() < end:
                pieces.append(text[done:hit.start()])
                size += hit.start() - done
                done = hit.end()
                self._at.append(size)
                self._shift.append(done - size)
                end = max(end, _line_end(text, _line_end(text, done)))
                hit = _ESCAPES.search(text, done)
            pieces.append(text[done:end])
            size += end - done
            text_end = end
            self._ends.append(size)
        self.text = "".join(pieces)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The text's (start, end) of the view's: escapes inside the span are in it (a secret is replaced whole); a
        span that runs on past its run's end is cut there (what lies between two runs in the text is none of it)."""
        run = bisect_right(self._ends, start)
        end = min(end, self._ends[run]) if run < len(self._ends) else end
        first = self._shift[bisect_right(self._at, start) - 1]
        last = self._shift[bisect_right(self._at, end - 1) - 1]
        return start + first, end + last


def _line_start(text: str, at: int) -> int:
    return 0 if at <= 0 else text.rfind("\n", 0, at) + 1


def _line_end(text: str, at: int) -> int:
    """Past the newline that ends the line `at` is on (the text's end on its last line)."""
    found = text.find("\n", at)
    return len(text) if found < 0 else found + 1


def unescaped(text: str) -> Unescaped | None:
    """`text` without its terminal escapes, or None when it has none (most texts)."""
    if "\x1b" not in text and "\x9b" not in text:
        return None
    view = Unescaped(text)
    return view if view._ends else None  # (an escape character alone is not an escape)
