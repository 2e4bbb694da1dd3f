"""The agent's own work as its reply's signals compare it: its whole answer since the user last spoke (aider writes the
edit blocks first and its last words after them), and the reply restating the user's words as replacing that work;
the reply owning a mistake or a skipped step in words the rules missed."""

from __future__ import annotations

import tomllib
from pathlib import Path

from kg.reflect import load_rules
from kg.reflect.detect import learnings, turn_signals
from kg.reflect.parse import Transcript, Turn

RULES = load_rules(tomllib.loads(
    (Path(__file__).resolve().parents[2] / "rules" / "reflect.toml").read_text(encoding="utf-8")))

# An aider-shaped answer: the edit block with the names it used, then more than prev_chars of prose without them.
EDIT = ("tests/basic/test_commands.py\n```python\n<<<<<<< SEARCH\n=======\n    def test_cmd_read(self):\n"
        "        with ChdirTemporaryDirectory():\n            fname = Path('test.txt')\n>>>>>>> REPLACE\n```")
PROSE = ("This new test does the following: 1. It creates a temporary file outside the current working directory. "
         "2. It runs the read command on that file and checks that the file is added to the read-only files. "
         "3. It drops the file again and checks that it is gone from the chat, as the main test of the read option "
         "does for the command line. The test works on every platform, since it only uses the standard library "
         "and the helpers the tests already share. Let me know if you want more cases covered.")


def answered(said: str, reply: str, edited: bool = True) -> Transcript:
    turns = [("user", "add a test like test_read_option_with_external_file for cmd_read"),
             ("assistant", f"Certainly! Here is the test.\n{EDIT}"), ("assistant", PROSE),
             *([("assistant", "", "edit", "tests/basic/test_commands.py")] if edited else []),
             ("user", said), ("assistant", reply)]
    return Transcript("text", tuple(Turn(i, r, x, tool_name=tool[0] if tool else None,
                                         tool_input=tool[1] if tool else None, position=f"turn {i + 1}")
                                    for i, (r, x, *tool) in enumerate(turns)))


def test_prose_after_the_edit_is_longer_than_what_prev_reads():
    assert len(PROSE) > RULES.signals.prev_chars and RULES.signals.work_chars > len(PROSE) + len(EDIT)


def test_an_instruction_the_agent_restates_as_replacing_its_own_work_is_a_correction():
    t = answered("use `GitTemporaryDirectory`",
                 "Certainly! I'll modify `test_cmd_read` to use `GitTemporaryDirectory` instead of "
                 "`ChdirTemporaryDirectory`. Here are the changes:")
    sigs = turn_signals(t, RULES)[4]
    assert {"replaces_own", "instruction_replaces_work"} <= set(sigs)
    found = [f for f in learnings(t, RULES) if f.turn == 4 and f.category == "correction"]
    # the lesson names what not to do again, which the user's two words left out
    assert [f.summary for f in found] == ["Use `GitTemporaryDirectory` instead of `ChdirTemporaryDirectory`"]
    assert found[0].pattern_key


def test_an_instruction_after_the_agent_only_proposed_a_change_is_the_go_ahead():
    t = answered("fix that", "Certainly! I'll initialize it in `__init__` instead of using "
                             "`ChdirTemporaryDirectory` as a class attribute.", edited=False)
    sigs = turn_signals(t, RULES)[3]
    assert "replaces_own" in sigs and "instruction_replaces_work" not in sigs


def test_a_reply_replacing_what_the_agent_never_wrote_is_the_next_step():
    t = answered("use the Spinner class in the tests",
                 "Certainly! I'll use the `Spinner` class instead of the inlined progress printer. Here are the "
                 "changes:")
    sigs = turn_signals(t, RULES)[4]
    assert "replaces_own" not in sigs and "instruction_replaces_work" not in sigs
    assert "correction" not in {f.category for f in learnings(t, RULES) if f.turn == 4}


def test_the_agents_work_is_its_answer_since_the_user_last_spoke():
    # an older answer's names are not the work the reply replaces
    older = Transcript("text", (*answered("thanks", "You're welcome.").turns,
                                Turn(6, "user", "use `GitTemporaryDirectory`", position="turn 7"),
                                Turn(7, "assistant", "Certainly! I'll use `GitTemporaryDirectory` instead of "
                                                     "`ChdirTemporaryDirectory`.", position="turn 8")))
    assert "replaces_own" not in turn_signals(older, RULES)[6]


def test_a_chinese_my_mistake_is_an_apology():
    t = Transcript("text", tuple(Turn(i, r, x, position=f"turn {i + 1}") for i, (r, x) in enumerate(
        [("user", "修复登录"), ("assistant", "已完成，测试通过。"), ("user", "你推送了吗？"),
         ("assistant", "抱歉，我的错。")])))
    assert "apologises" in turn_signals(t, RULES)[2]


def test_a_reply_naming_the_step_it_skipped_mid_sentence_admits_the_omission():
    asked = [("user", "add the session flag"), ("assistant", "I've added the flag and updated the README."),
             ("user", "did you cover this new behavior with a test?")]
    admitted = Transcript("text", tuple(Turn(i, r, x, position=f"turn {i + 1}") for i, (r, x) in enumerate(
        [*asked, ("assistant", "You're right to ask. We implemented the feature but didn't add tests for it.")])))
    saved = Transcript("text", tuple(Turn(i, r, x, position=f"turn {i + 1}") for i, (r, x) in enumerate(
        [*asked, ("assistant", "The rule says it belongs in docs/pr.md. Let me save it:")])))
    covered = Transcript("text", tuple(Turn(i, r, x, position=f"turn {i + 1}") for i, (r, x) in enumerate(
        [*asked, ("assistant", "Yes: tests/test_session.py covers it, and we didn't change the old tests.")])))
    assert "admits_no" in turn_signals(admitted, RULES)[2]
    assert "finds_undone" in turn_signals(saved, RULES)[2]
    assert "admits_no" not in turn_signals(covered, RULES)[2] and "finds_undone" not in turn_signals(covered, RULES)[2]
