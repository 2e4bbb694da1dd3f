"""The small text tests a secret rule's match and keywords go through: a value's entropy (`min_entropy`), what
stands before a match on its line (`before`, `not_before`), a keyword compared as `(?i)` compares it, and a trie
regex of many keywords.

Apart from `kg.redaction.redact` because they are plain functions of a string, with no rule or span in them:
the scan calls them, and they can be read and tested on their own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

from kg.redaction.rules import regex


def _lowered_is(text: str, word: str) -> bool:
    """Whether `text` lowercased is `word`, each letter to one letter as a regex's `(?i)` compares them: İ is i
    (str.lower() gives i and a combining dot, a string one longer)."""
    low = text.lower()
    if len(low) == len(text):
        return low == word
    return "".join(c.lower()[:1] for c in text) == word


def _trie(words: Iterable[str]) -> str:
    """A regex matching any of `words`, as a trie (shared prefixes factored), longest first."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def walk(node: dict[str, Any]) -> str:
        ends = "" in node
        branches = [re.escape(c) + walk(sub) for c, sub in sorted(node.items()) if c]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if ends else body

    return walk(root)


def _preceded_by(before: re.Pattern[str], text: str, end: int) -> bool:
    """Does the text just before `end`, on the same line (up to 96 characters), end with `before`?"""
    start = max(text.rfind("\n", max(0, end - 96), end) + 1, end - 96, 0)
    return before.search(text, start, end) is not None


def _line_before(pattern: re.Pattern[str], text: str, end: int) -> bool:
    """Does `pattern` occur in the text before `end` on the same line (up to 96 characters)?"""
    start = max(text.rfind("\n", max(0, end - 96), end) + 1, end - 96, 0)
    return pattern.search(text, start, end) is not None


def entropy(value: str) -> float:
    """Shannon entropy in bits per character: random keys score high, words and slugs low."""
    n = len(value)
    if not n:
        return 0.0
    return max(0.0, math.log2(n) - sum(c * math.log2(c) for c in map(value.count, set(value))) / n)


# What may stand glued before a token without being part of it (rules/secrets.toml `glue`: an escape, a URL's
# percent-encoding, an HTML entity, a character of another script): a rule's boundary `(?<![\w-])` reads the `n` of
# `\n`, the `D` of `%3D` and a CJK character as a word's, so a key right after one was kept; `_glued_at` says a failed
# match may be one of these, `unglued` blanks them. `glue_patterns` compiles the regex and its "ends here" form.
def glue_sources(glue: str) -> tuple[str, str]:
    return glue, f"(?:{glue}|_)\\Z"


def glue_patterns(glue: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    found, ends = glue_sources(glue)
    return regex(found), regex(ends)


_RUN = re.compile(r"[A-Za-z0-9_+/=.:!~-]*")  # how far a token starting at a keyword may run (at most 1024 looked at)


def _glued_at(glue_end: re.Pattern[str], text: str, at: int, run_end: int = -1) -> bool:
    """Does glue (`glue_end`: an escape, %XX, an entity, a non-ASCII character or an `_`) end right before `at`, or
    stand at `run_end`, where the run of token characters from `at` ends (`_run_end`; -1: not looked at, ASCII)?"""
    if at > 0 and glue_end.search(text, max(0, at - 8), at) is not None:
        return True
    return 0 <= run_end < len(text) and not text[run_end].isascii()


def _run_end(text: str, at: int) -> int:
    """Where the run of token characters from `at` ends (1024 at most looked at). Every position inside a run has
    its end: a caller keeps it for the positions before it, so "sk-" * 10**5 is read once, not once per keyword."""
    return _RUN.match(text, at, at + 1024).end()


def unglued(glue: re.Pattern[str], text: str, starts: list[int]) -> str:
    """`text` with the glue around each of `starts` blanked to as many spaces (positions stay those of `text`): the
    8 characters before it (an `_` only right before it: TOKEN_glpat-...; every other `_` may be a token's own) and
    after its run of token characters. Only there: blanking a whole 10 MB transcript's escapes cost a second."""
    pieces: list[str] = []
    done = 0
    for at in sorted(set(starts)):
        if at < done:  # inside the last one's run: blanked with it
            continue
        lo = max(done, at - 8)
        hi = min(len(text), _run_end(text, at) + 8)
        before = glue.sub(lambda m: " " * len(m.group()), text[lo:at])
        if before[-1:] == "_":
            before = before[:-1] + " "
        pieces += (text[done:lo], before, glue.sub(lambda m: " " * len(m.group()), text[at:hi]))
        done = hi
    pieces.append(text[done:])
    return "".join(pieces)


_HEX = re.compile(r"(?:[0-9a-f]{2}){12,4096}|(?:[0-9A-F]{2}){12,4096}")


def decoded(value: str, share: float) -> str | None:
    """`value` read as base64 (standard or URL-safe, padded or not), or as hex when it is all hex digits in pairs
    (`414b4941...` is "AKIA..."), when what it encodes is text (UTF-8, nearly all printable); None otherwise (a hash,
    an id, an image's bytes, a word run that only looks like base64). A hex run is no base64 of text (that has
    capitals and small letters), so it is read as hex only: a hash's or a commit's bytes are no text either."""
    import base64
    import binascii

    if _HEX.fullmatch(value) is not None:
        return _printable(bytes.fromhex(value), share)
    if not may_decode(value):
        return None
    body = value.rstrip("=")
    try:
        raw = base64.b64decode(body.replace("-", "+").replace("_", "/") + "=" * (-len(body) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _printable(raw, share)


def may_decode(value: str) -> bool:
    """False when `decoded` reads `value` as no text whatever it holds (a quick test a scan makes before it: most
    runs of a transcript are words in one case or paths): a run that is not hex in pairs, and has a length no base64
    has or no capitals and small letters both (encoded text has)."""
    body = value.rstrip("=")
    if len(body) % 4 != 1 and not body.islower() and not body.isupper():
        return True
    return _HEX.fullmatch(value) is not None


def _printable(raw: bytes, share: float) -> str | None:
    """`raw` as UTF-8 text when `share` of its characters are printable (or line breaks, tabs); None otherwise."""
    try:
        text = raw.decode("utf-8")
    except ValueError:
        return None
    if not text:
        return None
    printable = sum(1 for c in text if c.isprintable() or c in "\n\r\t")
    return text if printable >= share * len(text) else None
