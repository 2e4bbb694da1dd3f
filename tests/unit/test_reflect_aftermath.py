"""What a user says about the result right after the agent changed something, when the agent claimed nothing (aider
edits and stops): a defect in what they see, a "can you solve it?" after steps given instead of the work, the result
asked not to use what the agent's edit brought in. And the ordinary follow-ups that must stay quiet. Every turn here
is written for the test, none is taken from a labelled transcript."""

from __future__ import annotations

import pytest

from kg.reflect.detect import learnings, turn_signals
from kg.reflect.readers import parse_aider
from tests.unit.test_reflect_signals import RULES, transcript

EDIT = """I'll update the stylesheet.

style.css
```css
<<<<<<< SEARCH
.menu {{ color: black; }}
=======
.menu {{ color: {color}; }}
>>>>>>> REPLACE
```

> Applied edit to style.css
"""


def aider(*said: str, reply: str = EDIT.format(color="navy")) -> str:
    """A session where each user line is answered by `reply` (an applied edit unless said otherwise)."""
    parts = ["# aider chat started at 2026-01-01 10:00:00\n"]
    for i, s in enumerate(said):
        parts.append(f"#### {s}\n")
        if i < len(said) - 1:
            parts.append(reply)
    return "\n".join(parts)


def last(text: str) -> tuple[tuple[str, ...], set[str]]:
    """The signals and the categories found on the last user turn."""
    t = parse_aider(text)
    i = max(u.index for u in t.turns if u.role == "user")
    return turn_signals(t, RULES)[i], {f.category for f in learnings(t, RULES) if f.turn == i}


FIRST = "Make the menu links navy blue"


@pytest.mark.parametrize("defect", [
    "The search icon beside the menu is invisible now. Fix it.",
    "the dropdown items are cut off at the bottom",
    "help me debug why the menu badges are not displaying",  # the user's typo below keeps the stem
    "help me debug why the menu badges are not displayng",
    "el logo ya no se muestra en la cabecera",
    "o menu sumiu da página inicial",
    "le menu ne s'affiche plus sur mobile",
    "das Menü wird nicht mehr angezeigt",
    "菜单的图标看不见了",
    "меню не отображается на телефоне",
])
def test_a_defect_in_the_result_right_after_an_edit_is_a_correction(defect):
    sigs, found = last(aider(FIRST, defect))
    assert "defect_after_change" in sigs, sigs
    assert "correction" in found


@pytest.mark.parametrize("follow_up", [
    "Now make the footer links navy blue too",
    "add a hidden honeypot field to the signup form",
    "Great, thanks. Next, add a dark mode toggle",
    "what does the hover rule do?",
    "make the sidebar a bit wider",
])
def test_an_ordinary_follow_up_after_an_edit_stays_quiet(follow_up):
    sigs, found = last(aider(FIRST, follow_up))
    assert "defect_after_change" not in sigs, sigs
    assert "correction" not in found


def test_a_defect_named_in_the_opening_request_is_no_correction():
    sigs, found = last(aider("the menu icons are invisible on mobile, fix it"))
    assert "defect_after_change" not in sigs
    assert not found


ADVICE = """Here is what you can check:
1. Verify the database connection string.
2. Look at the server logs for errors.
3. Make sure the table exists.
"""


@pytest.mark.parametrize("ask", ["can you solve it?", "puedes resolver el problema", "você pode resolver isso?",
                                 "fix it", "能帮我解决一下吗"])
def test_asking_the_agent_to_solve_it_after_steps_instead_of_work_is_a_correction(ask):
    sigs, found = last(aider("the signup form does not save anything", ask, reply=ADVICE))
    assert "redo_after_advice" in sigs, sigs
    assert "correction" in found


@pytest.mark.parametrize("reply,ask", [
    (ADVICE, "yes, go ahead and fix it"),  # the steps were a plan, now approved
    (ADVICE, "thanks, that helps"),
    (EDIT.format(color="navy") + "\n1. one\n2. two\n", "can you solve it?"),  # it worked: no advice only
])
def test_a_go_ahead_or_work_done_is_not_the_work_sent_back(reply, ask):
    sigs, _ = last(aider("the signup form does not save anything", ask, reply=reply))
    assert "redo_after_advice" not in sigs, sigs


LONG_ADVICE = ADVICE + "\n" + "I will look into the code and propose the changes once I know more. " * 8 + \
    "Please let me know if you have any other questions!\n"


def test_steps_early_in_a_long_answer_are_still_advice():
    # the steps come first, the last words only promise: the whole answer is read for the list
    sigs, found = last(aider("find out why the signup form does not save and solve it", "can you solve it?",
                             reply=LONG_ADVICE))
    assert "gives_steps" in sigs and "redo_after_advice" in sigs, sigs
    assert "correction" in found


def test_fix_that_after_steps_that_answered_a_question_is_the_next_request():
    sigs, _ = last(aider("what are the ways to make the signup form save its data?", "fix that", reply=ADVICE))
    assert "follows_question" in sigs
    assert "redo_after_advice" not in sigs, sigs  # (a hand-back's own combination may still read it: not this one)


IMPORTED = """Here is the chart.

chart.ts
```typescript
<<<<<<< SEARCH
=======
import Chartist from 'chartist';
export const draw = () => new Chartist.Bar('#c', data);
>>>>>>> REPLACE
```

> Applied edit to chart.ts
"""


def test_asking_that_the_result_not_use_what_the_edit_imported_is_a_correction():
    sigs, found = last(aider("Draw a bar chart of the sales, plain TypeScript only",
                             "Please change the chart so that it does not use Chartist", reply=IMPORTED))
    assert "forbids_what_it_used" in sigs, sigs
    assert "correction" in found


def test_asking_not_to_use_something_the_work_never_named_stays_quiet():
    sigs, found = last(aider("Draw a bar chart of the sales, plain TypeScript only",
                             "Please change the parser so that it does not use regular expressions", reply=IMPORTED))
    assert "forbids_what_it_used" not in sigs, sigs
    assert "correction" not in found


def test_a_finding_says_which_signals_fired_and_keeps_the_users_words():
    t = parse_aider(aider(FIRST, "The search icon beside the menu is invisible now. Fix it."))
    f = next(f for f in learnings(t, RULES) if f.category == "correction")
    assert "defect_after_change" in f.signals
    assert "invisible" in f.summary and "Signals: defect_after_change" in f.details


def test_a_defect_without_any_work_before_it_is_no_defect_after_change():
    turns = transcript(("user", "add a menu"), ("assistant", "Which page should hold it?"),
                       ("user", "the header, the menu is invisible there today"))
    assert "defect_after_change" not in turn_signals(turns, RULES)[2]


BRIEF = "Build a sales chart page in plain TypeScript, without any external libraries"


@pytest.mark.parametrize("again", [
    "Please redo it without any external libraries, plain canvas",
    "it has to be built without any external libraries",
])
def test_a_constraint_of_the_request_said_again_after_the_work_is_a_correction(again):
    sigs, found = last(aider(BRIEF, again))
    assert "constraint_restated" in sigs, sigs
    assert "correction" in found


@pytest.mark.parametrize("other", [
    "do not change the tests",  # another constraint sharing only its negation
    "now add a legend without a border",
    "Build a sales chart page",  # the request again without its constraint: not this signal
])
def test_another_constraint_or_none_is_not_the_constraint_said_again(other):
    sigs, _ = last(aider(BRIEF + ". Do not change the API", other))
    assert "restates_constraint" not in sigs, sigs


def test_a_constraint_said_again_before_any_work_is_no_correction():
    t = transcript(("user", BRIEF), ("user", "remember: without any external libraries"))
    sigs = turn_signals(t, RULES)[1]
    assert "constraint_restated" not in sigs


@pytest.mark.parametrize("said,lesson", [
    ("your change left the search icon hidden", "After a change, check that it does not leave the search icon hidden"),
    ("please find out why the badges are still not showing",
     "After a change, check the result: the badges are not showing"),
])
def test_a_defect_report_becomes_what_to_check_after_a_change(said, lesson):
    t = parse_aider(aider(FIRST, said))
    f = next(f for f in learnings(t, RULES) if f.category == "correction")
    assert f.summary == lesson


@pytest.mark.parametrize("ask", ["can you solve it?", "puedes resolver el problema", "você pode resolver isso?"])
def test_the_work_sent_back_after_advice_is_one_lesson_to_do_it(ask):
    t = parse_aider(aider("the signup form does not save anything", ask, reply=ADVICE))
    f = next(f for f in learnings(t, RULES) if f.category == "correction")
    assert f.summary == "Solve the problem asked about yourself; do not answer with steps for the user"
    assert f.pattern_key == "fix.answer-problem-yourself"  # the same key each time: it recurs, it can be promoted
