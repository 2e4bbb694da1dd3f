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
