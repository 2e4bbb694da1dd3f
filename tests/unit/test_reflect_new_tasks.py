"""What a new task looks like on other users' transcripts, and why it is no correction: a long brief that names the
files to read, a question whether something is wrong, a pasted error with no words of the user's."""

from __future__ import annotations

from kg.reflect.detect import own_lines, turn_signals
from tests.unit.test_reflect_false_alarms import found
from tests.unit.test_reflect_signals import RULES, transcript

DONE = [("user", "add the export button"), ("assistant", "", "edit", "src/Export.tsx"),
        ("assistant", "Done: the export button is in the toolbar and the tests pass.")]

BRIEF = """## Next step: the settings page

Goal: build a settings page where the reader picks a theme, a font size and a language, saved per account.

Context: @docs/settings-design.md @src/api/account.ts @notes/conventions.md

Requirements
1. A form with three fields, each with a label and a short hint below it.
2. Save on submit through the account client; show a spinner while it saves and a message when it fails.
3. The current layout of the header and the side bar stays as it is.
4. Unit tests for the form's validation and one for the save call.

Deliverable: the files changed and a short summary of how to try it by hand in the browser."""


def test_a_long_brief_naming_files_after_finished_work_is_a_new_task():
    t = transcript(*DONE, ("user", BRIEF))
    assert "rule_ref_after_work" not in turn_signals(t, RULES)[3]
    assert "correction" not in found(t, 3)


def test_a_bare_rule_file_after_finished_work_is_still_a_rebuke():
    t = transcript(*DONE, ("user", "@notes/conventions.md"))
    assert "rule_ref_after_work" in turn_signals(t, RULES)[3]


def test_a_chinese_question_whether_something_is_wrong_does_not_say_it_is():
    for asked in ("数据库连接的设置是否有问题", "这个脚本有没有问题", "缓存的配置有问题吗"):
        t = transcript(*DONE, ("user", asked))
        assert "says_wrong" not in turn_signals(t, RULES)[3], asked
        assert "correction" not in found(t, 3), asked
    # said, not asked: still wrong
    assert "says_wrong" in turn_signals(transcript(*DONE, ("user", "导出的文件有问题")), RULES)[3]


# a shell's error record as PowerShell prints it, wrapped at the terminal's width (written for this test)
RECORD = """npx : The term 'npx' is not recognized as the name of a cmdlet, function, script file, or operable program.
Check the spelling of the name, or if a path was included, verify that the path is correct and try again.
At line:1 char:1
+ npx vite build
+ ~~~
    + CategoryInfo          : ObjectNotFound: (npx:String) [], CommandNotFoundException
    + FullyQualifiedErrorId : CommandNotFoundException"""


def test_a_pasted_powershell_error_record_is_not_the_users_words():
    assert own_lines(RECORD, RULES) == []
    t = transcript(("user", "build the site"), ("assistant", "Run `npx vite build` in the terminal."), ("user", RECORD))
    sigs = turn_signals(t, RULES)[2]
    assert "try_again" not in sigs and "are_you_sure" not in sigs
    assert found(t, 2) == set()
    # the user's own words around it stay theirs
    said = own_lines(f"still failing after your fix:\n\n{RECORD}\n\nplease try again", RULES)
    assert [x for _, x in said] == ["still failing after your fix:", "please try again"]


def test_still_of_the_users_own_need_is_no_fault_that_persists():
    for said in ("ok, so we still need the staging server running for the API, right?",
                 "good. i still want the old CSV export next to the new one"):
        t = transcript(*DONE, ("user", said))
        sigs = turn_signals(t, RULES)[3]
        assert "still_again" not in sigs and "better_but" not in sigs, said
        assert "correction" not in found(t, 3), said
    # a fault that outlasts the fix is still one
    t = transcript(*DONE, ("user", "ok, but the export button still does nothing"))
    assert {"still_again", "better_but"} <= set(turn_signals(t, RULES)[3])
    assert "correction" in found(t, 3)


def test_a_verb_after_a_negation_says_what_something_does_not_what_to_undo():
    grouped = [("user", "tidy the toolbar"), ("assistant", "", "edit", "src/Toolbar.tsx"),
               ("assistant", "The toolbar now groups the export button with the print button.")]
    t = transcript(*grouped, ("user", "so the grouping does not remove the old export button from the toolbar?"))
    assert "forbids_agent_act" not in turn_signals(t, RULES)[3]
    assert "correction" not in found(t, 3)
    # an order to undo what the agent made is one, with "don't" as much as without
    for said in ("remove the export button from the toolbar", "don't put the export button in the toolbar"):
        assert "forbids_agent_act" in turn_signals(transcript(*DONE, ("user", said)), RULES)[3], said


def test_a_new_requirement_with_its_checks_is_no_doubt_of_the_work():
    said = """Cap uploads at 5 MB.

- Check the size in the handler (not in the form)
- The form should just show the message the handler returns

Verify:
- a 6 MB file is refused
- a 4 MB file is"""
    t = transcript(("user", "what does the upload form do?"),
                   ("assistant", "It posts the file to /api/upload, and the handler saves it as it is."),
                   ("user", said))
    sigs = turn_signals(t, RULES)[2]
    assert "instruction" in sigs and "are_you_sure" not in sigs
    assert "correction" not in found(t, 2)
    for verb in ("Cap the retries at three", "limit the log to the last 100 lines", "restrict uploads to images"):
        assert "instruction" in turn_signals(transcript(("user", "hi"), ("assistant", "Hello!"), ("user", verb)),
                                             RULES)[2], verb
    # doubt is still doubt
    assert "are_you_sure" in turn_signals(transcript(*DONE, ("user", "can you verify the tests pass")), RULES)[3]


def test_as_usual_states_a_standing_way_of_working():
    ran = [("user", "run the tests"), ("assistant", "", "bash", "python -m pytest"),
           ("assistant", "python: command not found")]
    t = transcript(*ran, ("user", "as usual, use the interpreter in ~/envs/shop/bin"))
    assert "lasting" in turn_signals(t, RULES)[3]
    assert "preference" in found(t, 3)
    # praise that says "as always" states no rule
    assert "preference" not in found(transcript(*DONE, ("user", "thanks, quick as always")), 3)
