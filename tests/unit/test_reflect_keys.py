"""A lesson that recurs gets the same pattern key (bench/reflect_keys.py measures it on every real transcript)."""

from __future__ import annotations

from collections import Counter

from kg.reflect import default_rules, read_transcript, reflect

RULES = default_rules()
SPEC = ("transcripts", "specstory")


def _keys(shared_data, name: str, word: str) -> set[str]:
    t = read_transcript(shared_data.joinpath(*SPEC, name))
    return {f.pattern_key for f in reflect(t, RULES).findings if word in f.summary}


def test_a_rebuke_and_the_rule_it_names_recur_under_one_key(shared_data):
    """One user, two sessions: "Follow @dont-ignore-errors.mdc" (a correction) and "We must never ignore errors
    according to @dont-ignore-errors.mdc" (the rule, a preference). The key's words were the same, its prefix not
    (fix.error-ignor-mdc, pref.error-ignor-mdc): two patterns, neither recurring."""
    rebuke = _keys(shared_data, "2025-04-29_19-23-continuing-task-001.md", "dont-ignore-errors")
    rule = _keys(shared_data, "2025-04-29_16-44-available-tasks-inquiry.md", "dont-ignore-errors")
    assert rebuke and rule and rebuke == rule == {"fix.error-ignor-mdc"}


def test_no_turn_of_a_real_session_writes_one_lesson_twice(shared_data):
    """A correction that states a fact ("There's an existing task spec file in the current workspace") was written
    twice, as a correction and as "Remember: ..." (a knowledge gap), under fix.x and fact.x. One entry now: the
    correction, marked as the fact too. (Praise and a correction in one turn, "this is good, but duplicates ...", are
    two lessons and stay two.)"""
    twice = []
    for path in sorted(shared_data.joinpath(*SPEC).glob("*.md")):
        if path.name == "2025-05-21_improve-mcp-error-handling.md":
            continue  # a summary document, refused
        found = reflect(read_transcript(path), RULES).findings
        words = Counter((f.turn, f.pattern_key.split(".", 1)[1]) for f in found
                        if f.pattern_key and f.category in ("correction", "preference", "knowledge_gap"))
        twice += [(path.name, k) for k, n in words.items() if n > 1]
    assert not twice, twice
    t = read_transcript(shared_data.joinpath(*SPEC, "2025-04-30_17-43-continuing-work-on-task-011.md"))
    facts = [f for f in reflect(t, RULES).findings if "existing task spec file" in f.summary]
    assert [(f.category, f.also) for f in facts] == [("correction", ("knowledge_gap",))], facts
