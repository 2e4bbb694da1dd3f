"""A turn whose words teach nothing by themselves: an insult, an expletive, "try again" after the agent's work.

An insult with no content ("you messed that component up real good", "wtf") says how the user felt, not what to
do: read as a rule it is noise, and promoted it would be abuse in AGENTS.md. It is kept at most as a low-priority
note that the user was frustrated after the agent's last step, with no pattern key (a note never recurs into a rule).
A bare rejection ("try again") keeps its category's context lesson; its key names the tool call or the file the agent
had just worked on, never the agent's own words: keyed on "Check if GPU acceleration is enabled", the claim the user
rejected became a pattern (fix.acceleration-disabl-enabl), as if it were the lesson. No step: no key.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .lesson import exclaims, fill, key, names_something, prose, sentences, shorten
from .lesson_rules import Lessons
from .parse import Turn

_MARKUP = re.compile(r"^[\s#>*+\-\d.)]+|[*_`]{2,}")
_CONTEXT_CHARS = 100
_STEP_CHARS = 80
_PATH = re.compile(r"^[\w@~.-]*[/\\]?[\w@.-]*\.\w{1,8}$|^[\w@~.-]*([/\\][\w@.-]+)+[/\\]?$")
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Verdict:
    lesson: str
    judged: str  # the agent's statement the verdict is on: context for the details, never the lesson
    key: str | None
    priority: str | None  # None: as the class grades it


def last_step(turns: Sequence[Turn], start: int, end: int, rules: Lessons) -> tuple[str, str] | None:
    """(tool, what it ran on) of the agent's last tool call between turns `start` and `end`: the last one that
    changed a file (rules/reflect.toml [lessons] step_tool), else the last of any. None: it called no tool."""
    calls = [(t.tool_name, (t.tool_input or "").strip().splitlines()[0] if (t.tool_input or "").strip() else "")
             for t in turns[start + 1:end] if t.role == "assistant" and t.tool_name]
    if not calls:
        return None
    writes = [c for c in calls if rules.step_tool is not None and rules.step_tool.search(c[0])]
    tool, target = (writes or calls)[-1]
    return tool, target


def describe(step: tuple[str, str] | None) -> str:
    if step is None:
        return "its last answer"
    tool, target = step
    return f"{tool} {shorten(target, _STEP_CHARS, _STEP_CHARS)}".strip()


def step_key(category: str, step: tuple[str, str] | None, rules: Lessons) -> str | None:
    """The key of a verdict on the agent's last step: the file's name ("theme.ts" -> theme-ts), else the command and
    its first word ("git push origin" -> git-push); None when that is one word or there is no step."""
    if step is None or not step[1]:
        return None
    target = step[1]
    if _PATH.match(target):
        words = _WORD.findall(re.split(r"[/\\]", target.rstrip("/\\"))[-1].lower())
    else:
        head = [w for w in target.split()[:2] if _WORD.fullmatch(w)]
        words = [w.lower() for w in head]
    words = words[: rules.key_words]
    if len(words) < 2:
        return None
    prefix = rules.key_prefix.get(category, category)
    return f"{prefix}.{'-'.join(words)}"


def abusive(words: str, rules: Lessons) -> bool:
    """The turn is only an expletive, or an insult with nothing else a key could hold ("you screwed that up")."""
    if exclaims(words, rules):
        return True
    said = rules.drop.sub(" ", words) if rules.drop is not None else words  # "you f…ing idiot": the insult
    if rules.abuse is None or not rules.abuse.search(said):
        return False
    return not names_something(rules.abuse.sub(" ", said), rules)


def last_statement(category: str, prev: str, rules: Lessons) -> str | None:
    """The agent's last statement before the verdict (not a question, not an offer) that names something: what the
    verdict judged, for the details."""
    for raw in reversed(sentences(prev)):
        s = " ".join(_MARKUP.sub("", raw).split())
        if s.endswith(("?", "？", ":")) or len(s) < 12 or not prose(s) or key(category, s, rules) is None:
            continue
        if rules.context_skip is not None and rules.context_skip.search(s):
            continue  # an offer or a question back, not what the agent did
        return s if len(s) <= _CONTEXT_CHARS else s[: _CONTEXT_CHARS - 1]
    return None


def verdict(category: str, words: str, lesson: str, found: str | None, prev: str, step: tuple[str, str] | None,
            rules: Lessons) -> Verdict | None:
    """The lesson, context and key of a finding whose user words are `words`; None: no finding (an expletive after
    nothing the agent said, praise that names nothing done). `found`: the lesson's own key."""
    said = " ".join(words.split())
    said = said if len(said) <= 60 else said[:59] + "…"
    judged = last_statement(category, prev, rules) if prev else None
    template = rules.frustrated.get(category)
    if template is not None and abusive(words, rules):
        if exclaims(words, rules) and judged is None:
            return None  # only "wtf", "ugh", after nothing the agent said it did
        note = fill(template, {"s": said.strip(" .!?"), "step": describe(step)})
        return Verdict(note, judged or "", None, rules.frustrated_priority)
    if found is not None:
        return Verdict(lesson, "", found, None)
    template = rules.context.get(category)
    if template is not None and judged is not None and not names_something(said, rules):
        return Verdict(fill(template, {"s": said.strip(" .!?")}), judged, step_key(category, step, rules), None)
    if exclaims(lesson, rules) or category in rules.need_key:
        return None  # praise that names nothing, after nothing the agent said it did: no lesson to keep
    return Verdict(lesson, "", None, None)
