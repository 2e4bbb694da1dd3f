"""Secrets known by their column: a Markdown table whose header cell names a password holds one in each row's cell
under it, as agents list the accounts they made (`| Role | Email | Password |` and a row per account). No regex
can pair a row's cell with the header's column, so a `column` rule (rules/secrets.toml) names the header words as
its keywords and its pattern is matched on each cell under them, whole.

Cells are counted as Markdown counts them: outer pipes are optional, on the header and on each row apart (a header
written `User | Password` over rows written `| admin | X |` has its password in each row's second cell).

Each line is split once, whatever the number of keywords on it, and a table's rows end at the next separator
line (a new table), so the work stays linear in the text for any input."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator, Sequence

# The line under a header: `|---|:---:|`, `--- | ---`, `|---|`.
_SEPARATOR = re.compile(r"[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*\r?$"
                        r"|[ \t]*\|[ \t]*:?-{3,}:?[ \t]*\|[ \t]*\r?$")
_PIPE = re.compile(r"\|")
_HEADER_CELL = 32  # a longer cell around the word is prose, not a column's name
_NOT_HEADER = re.compile(r"[.!?:;=,]")  # "reset the password: ..." is a sentence in a cell, not a name
_COLUMNS = 8  # password columns read per table: a header naming more is no list of accounts (and stays cheap)


def column_cells(text: str, positions: Sequence[int], header: re.Pattern[str] | None = None
                 ) -> Iterator[tuple[int, int]]:
    """(start, end), spaces trimmed, of each cell under a header cell that holds one of `positions` (sorted) and,
    emphasis and code marks stripped, matches `header` whole: a header is a table row whose next line is a
    separator. Cells are counted by pipes, as Markdown does (a leading pipe opens no cell)."""
    line_end = -1
    columns: set[int] = set()
    for at in positions:
        if at >= line_end:
            if columns:
                yield from _under(text, line_end, columns)
            start = text.rfind("\n", 0, at) + 1
            line_end = text.find("\n", at)
            line_end = len(text) if line_end < 0 else line_end
            pipes = [m.start() for m in _PIPE.finditer(text, start, line_end)]
            columns = set()
            if not pipes or _SEPARATOR.match(text, line_end + 1, _next_end(text, line_end + 1)) is None:
                line_end = max(line_end, at + 1)
                pipes = []
                continue
        if not pipes:
            continue
        index = bisect_left(pipes, at)
        left = pipes[index - 1] + 1 if index else start
        right = pipes[index] if index < len(pipes) else line_end
        cell = text[left:right].strip(" \t\r*_`")
        if len(cell) <= _HEADER_CELL and not _NOT_HEADER.search(cell) and len(columns) < _COLUMNS and (
                header is None or header.fullmatch(cell)):
            columns.add(index - _leads(text, start, pipes[0]))
    if columns:
        yield from _under(text, line_end, columns)


def _next_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def _leads(text: str, start: int, pipe: int) -> int:
    """1 if the line starting at `start` opens with its first pipe (at `pipe`), which opens no cell, else 0."""
    return int(not text[start:pipe].strip(" \t"))


def _under(text: str, header_end: int, columns: set[int]) -> Iterator[tuple[int, int]]:
    """The cells in `columns` (counted without a leading pipe) of the rows after the header ending at `header_end`
    and its separator line."""
    pos = _next_end(text, header_end + 1) + 1
    while pos < len(text):
        stop = _next_end(text, pos)
        pipes = [m.start() for m in _PIPE.finditer(text, pos, stop)]
        if not pipes or _SEPARATOR.match(text, pos, stop) is not None:
            return
        bounds = [pos - 1, *pipes, stop]
        lead = _leads(text, pos, pipes[0])
        for column in columns:
            index = column + lead
            if index + 1 < len(bounds):
                lo, hi = bounds[index] + 1, bounds[index + 1]
                while lo < hi and text[lo] in " \t":
                    lo += 1
                while hi > lo and text[hi - 1] in " \t\r":
                    hi -= 1
                if hi > lo:
                    yield lo, hi
        pos = stop + 1
