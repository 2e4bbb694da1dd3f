"""A token cut over lines or table cells: `ghp_m2QF...` hard-wrapped at a terminal's width or after a shell's `\\`,
or written in a Markdown table with its tail in the next row's cell (QA qa5: the first part was too short for the
token's rule, or an `export NAME=` rule took it, and the rest of the key was stored as it was).

A known token's rule is tried again on the token joined with what continues it (`rejoined`). Only a token format
(a prefix and a run, the rules `Redactor` reads past glue too) is joined, never a bare run: that the joined string
is a whole `ghp_` key of the right length is what says the two pieces are one. A piece that continues it is the
whole of its line, after indentation (or of its cell, in a row whose cells before it are empty, as a wrapped row's
are), a run of token characters; a piece after the token's rule matched without it must look like a key (`keylike`)
and not like a word (`wordlike`): the run alone on the next line may be a word ("done", `Windows11Pro`) or a short
commit (`3f2a9c1`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from itertools import pairwise

# What continues a run of token characters that stops at `at`: its line's end (after a shell's `\`), the next line's
# indentation (or a quote's `> `) and a run that is the whole line (dots inside it too when the token holds them: a
# JWT's payload and signature wrapped at a terminal's width); or its cell's end, the rest of its row, and in the
# next row, after empty cells only, a run that is the whole cell.
_CELL = r"|[ \t]*\|[^\n]{0,1024}\n[ \t]*\|(?:[ \t]*\|){0,16}[ \t]*(?P<cell>[A-Za-z0-9_+/=-]{4,1024})(?=[ \t]*\|)"
_LINE_END = r"(?=[ \t]*(?:\\?\r?\n|\Z|[\"'`]))"
_CONTINUED = re.compile(
    r"[ \t]*\\?\r?\n[ \t]*(?:>[ \t]?){0,4}(?P<line>[A-Za-z0-9_+/=-]{4,1024})" + _LINE_END + _CELL)
# a token with dots in it (a JWT): its pieces may hold dots too; another token's may not (a line that is a second,
# dotted token after a first one is no piece of it)
_CONTINUED_DOTTED = re.compile(
    r"[ \t]*\\?\r?\n[ \t]*(?:>[ \t]?){0,4}(?P<line>[A-Za-z0-9_+/=-][A-Za-z0-9_+/=.-]{2,1022}[A-Za-z0-9_+/=-])"
    + _LINE_END + _CELL)
_RUN = re.compile(r"[A-Za-z0-9_+/=-]*")
_STARTS = frozenset(" \t\\\r\n|")  # what `_CONTINUED` can open with: a run ending elsewhere is read no further


@dataclass(frozen=True)
class Wrapping:
    """How far a token is joined with what continues it, and what a piece of a key or a word is (rules/secrets.toml
    `[wrapped]`, checked by `kg.redaction.rules.settings`)."""

    pieces: int  # at most this many pieces joined
    behind: int  # the text before the token the rule's lookbehind reads
    longest: int  # a token's first piece is read this far at most (a longer run is no piece of a wrapped token)
    key_min_chars: int  # `keylike`: a shorter piece is no piece of a key
    key_case_switches: int  # `keylike`: switches between capitals and small letters that make a piece a key's
    key_digit_switches: int  # `keylike`: switches between letters and digits that do (all-hex pieces aside)
    word_part: str  # `wordlike`: the regex of one part of a CamelCase word
    word_vowels: str  # `wordlike`: a part with small letters holds one of these

    def dump(self) -> tuple[int, int, int, int, int, int, str, str]:
        return (self.pieces, self.behind, self.longest, self.key_min_chars, self.key_case_switches,
                self.key_digit_switches, self.word_part, self.word_vowels)

    @cached_property
    def _part(self) -> re.Pattern[str]:
        return re.compile(self.word_part)

    @cached_property
    def _vowels(self) -> frozenset[str]:
        return frozenset(self.word_vowels)


def keylike(piece: str, wrap: Wrapping) -> bool:
    """A run that reads as part of a key, not a word, a name or a number: `key_min_chars` or more that switch between
    capitals and small letters `key_case_switches` times (`laDQylFYcj`: CamelCase words do too, and `wordlike` tells
    them from a key's piece), or letters and digits that switch `key_digit_switches` times (`a8f3k2m9`: `python311`,
    `matplotlib3` and `3f2a9c1`'s hex are no such piece)."""
    if len(piece) < wrap.key_min_chars:
        return False
    cases = sum(1 for a, b in pairwise(piece) if a.isalpha() and b.isalpha() and a.isupper() != b.isupper())
    if cases >= wrap.key_case_switches:
        return True
    if not piece.isalnum() or all(c in "0123456789abcdefABCDEF" for c in piece):
        return False
    return sum(1 for a, b in pairwise(piece) if a.isdigit() != b.isdigit()) >= wrap.key_digit_switches


def wordlike(piece: str, wrap: Wrapping) -> bool:
    """A run that reads as a CamelCase word with digits (`Base64Encoder2`, `Windows11Pro`): parts of `word_part` from
    end to end, each part with small letters holding one of `word_vowels`. The packaged rules' parts are an acronym
    (`XML` of `XMLParser`), a word, a capital and one small letter (`My`) or a number; a key's run breaks them: a
    capital before a capital and a small letter (`DQy` of `laDQylFYcj`), a part without a vowel (`Cd`, `f`). A piece
    of a key seldom reads as a word (of random runs of 14 letters and digits that `keylike` takes, about 1 in 70; of
    20, 1 in 300)."""
    at = 0
    while at < len(piece):
        part = wrap._part.match(piece, at)
        if part is None or part.end() == at:
            return False
        if any(c.islower() for c in part.group()) and wrap._vowels.isdisjoint(part.group()):
            return False
        at = part.end()
    return at > 0


def may_continue(text: str, end: int) -> bool:
    """Whether a run of token characters ending at `end` stops where a piece could continue it (a quick test)."""
    return end < len(text) and text[end] in _STARTS


def continued(text: str, end: int, dotted: bool = False) -> tuple[int, int] | None:
    """Where the piece that continues a run ending at `end` is, or None (`dotted`: the token holds dots)."""
    if not may_continue(text, end):
        return None
    match = (_CONTINUED_DOTTED if dotted else _CONTINUED).match(text, end)
    if match is None:
        return None
    return match.span("line") if match.group("line") is not None else match.span("cell")


def rejoined(pattern: re.Pattern[str], text: str, at: int, matched_end: int,
             take: Callable[[re.Match[str], str], tuple[int, int] | None], wrap: Wrapping) -> list[tuple[int, int]]:
    """The spans of `text` (the token's and its pieces') a rule's match finds in the token at `at` joined with the
    pieces that continue it; [] when none does. `matched_end`: where the rule's match in `text` ended (-1: it
    failed); then only key-like pieces are joined. `take(match, joined)` is the rule's own checks (entropy,
    placeholders), giving the secret's (start, end) in `joined` or None. `wrap`: the rules' limits."""
    start = matched_end if matched_end >= 0 else at
    end = _RUN.match(text, start, start + wrap.longest).end()  # bounded: "sk-" * 10**5 stays linear
    dotted = "." in text[at:end]
    if continued(text, end, dotted) is None or matched_end < 0 and not keylike(text[at:end], wrap):
        return []  # most tokens end in text; `sk-learn` on a line, a word after it, is no key cut in two
    lo = max(0, at - wrap.behind)
    segments = [(lo, end, 0)]  # (start, end in text, where it starts in `joined`)
    joined = text[lo:end]
    best: list[tuple[int, int]] = []
    for _ in range(wrap.pieces):
        piece = continued(text, end, dotted)
        if piece is None:
            break
        fits = keylike(text[piece[0]:piece[1]], wrap)
        if (best or matched_end >= 0) and (not fits or wordlike(text[piece[0]:piece[1]], wrap)):
            break  # past a whole token only a piece of a key continues it: `Windows11Pro` on the next line is a word
        segments.append((piece[0], piece[1], len(joined)))
        joined += text[piece[0]:piece[1]]
        end = piece[1]
        match = pattern.match(joined + "\n", at - lo)
        found = take(match, joined + "\n") if match is not None else None
        if found is None or found[1] <= segments[-1][2]:  # no match, or none into the piece just joined
            if best or not fits:  # a word that completes no key is no piece of one
                break
            continue
        best = []
        for start, stop, base in segments:
            a, b = max(found[0], base), min(found[1], base + stop - start)
            if b > a:
                best.append((start + a - base, start + b - base))
    return best
