"""The agent's own work, as the signals compare it: its whole answer since the user last spoke (aider writes the edit
blocks first and its last words after them), and its reply restating the user's words as replacing that work."""

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


def answered(said: str, reply: str) -> Transcript:
    turns = [("user", "add a test like test_read_option_with_external_file for cmd_read"),
             ("assistant", f"Certainly! Here is the test.\n{EDIT}"), ("assistant", PROSE),
             ("tool", "Applied edit to tests/basic/test_commands.py"), ("user", said), ("assistant", reply)]
    return Transcript("text", tuple(Turn(i, r, x, position=f"turn {i + 1}") for i, (r, x) in enumerate(turns)))


def test_prose_after_the_edit_is_longer_than_what_prev_reads():
    assert len(PROSE) > RULES.signals.prev_chars and RULES.signals.work_chars > len(PROSE) + len(EDIT)


def test_an_instruction_the_agent_restates_as_replacing_its_own_work_is_a_correction():
    t = answered("use `GitTemporaryDirectory`",
                 "Certainly! I'll modify `test_cmd_read` to use `GitTemporaryDirectory` instead of "
                 "`ChdirTemporaryDirectory`. Here are the changes:")
    sigs = turn_signals(t, RULES)[4]
    assert {"replaces_own", "instruction_replaces_work"} <= set(sigs)
    assert "correction" in {f.category for f in learnings(t, RULES) if f.turn == 4}


def test_a_reply_replacing_what_the_agent_never_wrote_is_the_next_step():
    t = answered("use the Spinner class in the tests",
                 "Certainly! I'll use the `Spinner` class instead of the inlined progress printer. Here are the "
                 "changes:")
    sigs = turn_signals(t, RULES)[4]
    assert "replaces_own" not in sigs and "instruction_replaces_work" not in sigs
    assert "correction" not in {f.category for f in learnings(t, RULES) if f.turn == 4}


def test_forbidding_what_the_agents_whole_answer_used_reads_past_its_last_words():
    # the object is in the edit block, before the last prev_chars of the answer
    t = answered("write it without ChdirTemporaryDirectory", "Certainly! Here are the changes:")
    assert "forbids_agent_act" in turn_signals(t, RULES)[4]
    # ... and only the answer since the user last spoke: an older answer's names are not this work
    older = Transcript("text", (*answered("thanks", "You're welcome.").turns,
                                Turn(6, "user", "write it without ChdirTemporaryDirectory",
                                     position="turn 7")))
    assert "forbids_agent_act" not in turn_signals(older, RULES)[6]


def test_a_chinese_my_mistake_is_an_apology():
    t = Transcript("text", tuple(Turn(i, r, x, position=f"turn {i + 1}") for i, (r, x) in enumerate(
        [("user", "修复登录"), ("assistant", "已完成，测试通过。"), ("user", "你推送了吗？"),
         ("assistant", "抱歉，我的错。")])))
    assert "apologises" in turn_signals(t, RULES)[2]
