"""A lesson comes from the sentence that says what to do, not from one that only points at it ("make a rule so you
never do that again"), not from the agent's answer pasted back ("## Summary", "*No rows found*"), and never says the
opposite of what the user asked ("make sure you never X" is "Never X", not "X"). The wordings are this file's own."""

from __future__ import annotations

import pytest

from kg.reflect import default_rules
from kg.reflect.detect import detect
from kg.reflect.lesson import phrase
from kg.reflect.parse import Transcript, Turn

RULES = default_rules()


def lesson(said: list[str], preferred: str, category: str = "correction") -> str:
    return phrase(category, said, preferred, RULES.lessons)[0]


def chat(*pairs: tuple[str, str]) -> Transcript:
    return Transcript("text", tuple(Turn(i, r, t, position=f"turn {i + 1}") for i, (r, t) in enumerate(pairs)))


@pytest.mark.parametrize(("said", "preferred", "expected"), [
    # a sentence asking to record "this" as a rule names nothing: the other sentence is the rule
    (["no, never run the migrations against the staging db.", "add a rule so you never do that again."], 1,
     "Never run the migrations against the staging db"),
    (["always pin the docker base image.", "save this as a rule in the guidelines."], 1,
     "Always pin the docker base image"),
    # "make sure you never X": what not to do (main: "Push to the release branch directly", the opposite)
    (["make sure you never push to the release branch directly."], 0, "Never push to the release branch directly"),
    # a question pointing at a rule: the rule is the lesson (main kept the question)
    (["didn't the style guide say to run the formatter before committing?"], 0,
     "Run the formatter before committing"),
    # the agent's answer pasted under the user's words: its heading and emphasised lines are not the lesson
    (["this still isn't right, the totals should come from the ledger table", "## Summary",
      "*No totals found in the current report*"], 2, "The totals should come from the ledger table"),
    # a rewrite that names nothing ("There is one") gives way to a sentence that says what to do and names something
    (["that's not true, there is one.", "use the fallback_parser module instead"], 0,
     "Use the fallback_parser module instead"),
    # "that's not it, X" is "X"; an exclamation after the words is no part of a lesson (main kept ", wtf")
    (["no, that's not it, use the light palette"], 0, "Use the light palette"),
    (["the two terminals show the same grey for both styles, wtf?"], 0,
     "The two terminals show the same grey for both styles"),
    # a lesson is for next time: "just now" / "right now" at its end go (main: "Run the linter just now")
    (["why didn't you run the linter just now?"], 0, "Run the linter"),
])
def test_the_lesson_is_the_sentence_that_says_what_to_do(said, preferred, expected):
    assert lesson(said, said[preferred]) == expected


def test_a_request_to_try_again_is_no_pointer():
    """"do it again, more carefully" says what to do; only "never do this again" points elsewhere."""
    said = ["i reverted your merge.", "go back and do it again, more carefully this time."]
    assert lesson(said, said[1]) == "Go back and do it again, more carefully this time"


def test_a_rule_said_with_a_pointer_is_logged_as_the_rule():
    """Through detect: the turn's preference and correction carry the rule, with a key that names it."""
    t = chat(("user", "link the cli for testing"), ("assistant", "Done: ran `npm link` in the session checkout."),
             ("user", "no, never `npm link` a session checkout. make a rule or update one so you never do this again"))
    found = [f for f in detect(t, RULES) if f.category in ("correction", "preference")]
    assert found and all(f.summary == "Never `npm link` a session checkout" for f in found), found
    assert all(f.pattern_key and "link" in f.pattern_key for f in found)


def test_a_lesson_pointing_at_what_the_user_quoted_names_it():
    """"you missed this step: > <the step>": the lesson says which step (main: "Do not skip this step", no key)."""
    t = chat(("user", "set up the test database and seed it"),
             ("assistant", "Done: the database is created and seeded."),
             ("user", "you missed this step:\n> run the migrations before seeding the database"))
    (f,) = [f for f in detect(t, RULES) if f.category == "correction"]
    assert f.summary == "Do not skip this step: run the migrations before seeding the database"
    assert f.pattern_key and "migrat" in f.pattern_key
