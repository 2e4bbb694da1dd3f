"""A constraint of an earlier request said again: the clauses of a user's turn that carry a constraint ("no external
libraries", "only edit the tests", 不要改接口), compared with rapidfuzz against the same clauses of their earlier turns.
Said again after the agent worked, the constraint was broken (aider's users restate the request's rule: the agent
claims nothing to deny). Which words make a constraint are rules ([signals] constraint_words); pure functions."""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from kg.core.text import folded

# A clause ends at a sentence or clause mark or a line end.
_CLAUSE = re.compile(r"[.;:!?,()\n。；：！？，、]+")
_MIN_WORDS = 3  # a clause of fewer words ("no", "not yet") is no constraint to compare


def constraint_clauses(text: str, words: tuple[re.Pattern[str], ...]) -> list[str]:
    """The clauses of `text` (folded) that hold one of the constraint `words`, of three words at least (or six CJK
    characters)."""
    out = []
    for part in _CLAUSE.split(text):
        clause = folded(part).strip()
        long_enough = len(clause.split()) >= _MIN_WORDS or len(clause) >= 2 * _MIN_WORDS and " " not in clause
        if long_enough and any(w.search(clause) for w in words):
            out.append(clause)
    return out


def restates(clauses: list[str], earlier: list[str], at_least: int) -> bool:
    """One of `clauses` says again one of `earlier`: alike as a whole (rapidfuzz token sort ratio, 0-100, at least
    `at_least`), or holding every content word of it, three at least ("redo it without any external libraries" says
    "without any external libraries" again; "do not change the tests" does not say "do not change the API")."""
    return any(fuzz.token_sort_ratio(c, e) >= at_least or _holds(c, e) for c in clauses for e in earlier)


_CONTENT = re.compile(r"\w{4,}")  # a content word: four letters or more (not "the", "any", "use")


def _holds(clause: str, earlier: str) -> bool:
    need = set(_CONTENT.findall(earlier))
    return len(need) >= _MIN_WORDS and need <= set(_CONTENT.findall(clause))
