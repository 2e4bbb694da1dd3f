"""A two-word lesson ("Use X") completed with what the agent's reply says X replaces ("Use X instead of Y").

Split from kg.reflect.detect to keep it short; `kg.reflect.detect._learnings` calls it for a correction whose reply
fired `replaces_own`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kg.core.text import folded

from .rules import Signal

_CLAUSE_END = re.compile(r"[.;:!?,。；：！？，](?:\s|$)|\n")
# The user's words already say what not to do ("get not post", "don't mock it"): the reply adds nothing.
_SAYS_NOT = re.compile(r"\b(not|no|don't|dont|never|instead|rather|without)\b|不|别", re.IGNORECASE)


def with_replaced(lesson: str, reply: str, matched: Sequence[Signal]) -> str:
    """"Use X" when the agent's reply says it replaces its own Y with it: "Use X instead of Y" (the lesson names
    what not to do again, which the user's two words left out). Unchanged when the lesson already names Y."""
    for s in matched:
        if s.name != "replaces_own":
            continue
        for p in s.patterns:
            hit = p.search(reply)
            if hit is None:
                continue
            said = _CLAUSE_END.split(hit.group(0))[0].strip()
            obj = _CLAUSE_END.split(hit.group("obj"))[0].strip(" `'\"")
            if obj and folded(obj) not in folded(lesson) and not _SAYS_NOT.search(lesson):
                return f"{lesson.rstrip(' .')} {said}"
            return lesson
    return lesson
