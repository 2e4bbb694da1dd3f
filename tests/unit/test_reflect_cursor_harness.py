"""Cursor's own prompts in the user's place are not the user speaking: a background task's end
(`<system_notification>`, after the message's `<timestamp>`), its follow-up prompt ("Briefly inform the user about the
task result ...", bare or in `<user_query>`) and Plan mode's "Implement the plan as specified ...". kg read them as
the user's words, and their imperatives after the agent's report as corrections (5 of p24's 8 false alarms, one in
p21). The sections are written here in the shape SpecStory saves them; a user's words after a time stamp still count."""

from __future__ import annotations

from kg.reflect import parse_text
from kg.reflect.detect import is_speaking_user, learnings

from .test_reflect_signals import RULES

NOTICE = """<timestamp>Monday, Mar 2, 2026, 4:05 PM (UTC+1)</timestamp>
<system_notification>
The following task has finished. If you were already aware, ignore this notification and do not restate prior responses.

<task>
kind: shell
status: success
title: Run the migration in the background
</task>
</system_notification>"""

FOLLOW_UP = ("<user_query>Briefly inform the user about the task result and perform any follow-up actions (if needed). "
             "If there's no follow-ups needed, don't explicitly say that.</user_query>")

PLAN = ("Implement the plan as specified, it is attached for your reference. Do NOT edit the plan file itself.\n\n"
        "To-do's from the plan have already been created. Do not create them again. Mark them as in_progress as you "
        "work, starting with the first one. Don't stop until you have completed all the to-dos.")


def session(*users: str) -> str:
    parts = ["# Migrate the orders table (2026-03-02 15:00Z)\n"]
    for text in users:
        parts.append(f"_**User**_\n\n{text}\n\n---\n\n_**Agent (model gpt-5, mode Agent)**_\n\n"
                     "Done: the migration ran and every test passes.\n\n---\n")
    return "\n".join(parts)


def test_cursor_s_prompts_are_not_the_user_speaking():
    t = parse_text(session("add a created_at column to orders", NOTICE, NOTICE + "\n" + FOLLOW_UP,
                           "Briefly inform the user about the task result and perform any follow-up actions.", PLAN))
    users = [x for x in t.turns if x.role == "user"]
    assert len(users) == 5
    # the notice alone is taken out of the turn, as every injected section is: no words of the user's are left
    assert [is_speaking_user(x, RULES) for x in users[2:]] == [False, False, False]
    assert learnings(t, RULES) == []


def test_the_user_s_words_after_a_time_stamp_are_still_theirs():
    said = ("<timestamp>Monday, Mar 2, 2026, 4:07 PM (UTC+1)</timestamp>\n"
            "no, you dropped the wrong table, restore orders")
    t = parse_text(session("add a created_at column to orders", said))
    users = [x for x in t.turns if x.role == "user"]
    assert [is_speaking_user(x, RULES) for x in users] == [True, True]
    assert [f.category for f in learnings(t, RULES)] == ["correction"]
