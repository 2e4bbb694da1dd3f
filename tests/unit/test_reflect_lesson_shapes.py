"""Lessons of real transcripts read as rules an agent can follow without the transcript (tests/conftest.py
`shared_data`): a question said as what to do or what to check, a statement said with doubt kept as the statement, a
long lesson cut where a word ends. bench/reflect_lessons.py counts the same shapes on every real transcript."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from kg.reflect import default_rules, read_transcript
from kg.reflect.detect import learnings, reflect

RULES = default_rules()
SPEC = "transcripts/specstory/"


def lessons(shared_data, name: str, category: str = "correction") -> dict[int, str]:
    t = read_transcript(shared_data / name)
    return {f.turn: f.summary for f in reflect(t, RULES).findings if f.category == category}


def lessons_by_line(shared_data, name: str, category: str = "correction") -> dict[int, str]:
    """The lessons by the first line of their user turn in the file (aider: a reader that adds a turn, as for an
    interrupt, moves the turn indexes, not the lines)."""
    t = read_transcript(shared_data / name)
    return {t.turns[f.turn].line: f.summary for f in reflect(t, RULES).findings if f.category == category}


def test_a_rule_asked_for_as_a_question_is_said_as_what_to_do(shared_data):
    """"how can we improve the rules to ensure ...?" (a preference) -> "Find a way to improve the rules ..." (main
    kept the question)."""
    got = lessons(shared_data, SPEC + "2025-04-28_18-34-create-minsky-task-command.md", "preference")[4]
    assert got.startswith("Find a way to improve the rules to ensure"), got


@pytest.mark.parametrize(("name", "turn", "lesson"), [
    # no "?" but a question's opening: said as what to do (main: the question itself, "Why not just edit ...")
    (SPEC + "2025-05-01_19-32-starting-task-027.md", 24, "Edit the file directly"),
    (SPEC + "2025-04-28_16-22-backlog-task-inquiry.md", 10, "Make sure you cover this logic with a test"),
    (SPEC + "2025-04-28_19-10-starting-work-on-project-#004.md", 22,
     "Do not forget: we were about to create a task for that change i requested"),
    (SPEC + "2025-04-28_16-22-backlog-task-inquiry.md", 22, "Propose what to do about the test"),
    # "how might we ..." asks for a way as "how can we ..." does (was "Check this first: how might we nsure ...?")
    (SPEC + "2025-04-28_18-53-available-tasks-inquiry.md", 6, "Find a way to nsure this doesnt happe nin the future"),
    # "why did you X A and not B" -> "X B, not A" (main: "Do not commit to the main branch and not a session branch")
    (SPEC + "2025-04-29_18-53-starting-task-002.md", 22, "Commit to a session branch, not the main branch"),
    # an English statement said with doubt is the statement (main: "Check this first: scrolling back ...?")
    ("transcripts/claude_code/tool_heavy.jsonl", 10,
     "Scrolling back in xterm.js still does not work (maybe because outer web catches it)"),
])
def test_a_real_question_becomes_what_to_do(shared_data, name, turn, lesson):
    assert lessons(shared_data, name)[turn] == lesson


def test_a_question_in_another_language_is_the_question_to_answer_not_the_agents_words(shared_data):
    """"куда ты создал файл" (where did you create the file) has no "?" and no English rule to rewrite it. It was the
    agent's last statement ("Check this before handing it back: 📁 Report path: `./.claude/agent-reports/...`"), which
    an agent reads as its rule (QA4 class 4), then the question glued to an order, "Check this first: куда ты создал
    файл?" (QA7 d): a question is no instruction. The lesson says the user had to ask it, and to say it unasked."""
    got = lessons_by_line(shared_data, "runtimes/aider/alexshchuka_mozgoslav/.aider.chat.history.md")[4206]
    assert got == ('The user had to ask "куда ты создал файл?": say what was done, where and why, without being '
                   "asked"), got


def test_a_question_that_proposes_is_said_as_the_proposal(shared_data):
    """aider: "isn't there a "safe print" method in rich?" was "Check this first: isn't there ... in rich?", a question
    glued to an order (QA7 d); it proposes the method, and keys as the question's own words did."""
    t = read_transcript(shared_data / "runtimes/aider/aider-ai_aider/chat-history.part1.md")
    (f,) = [f for f in learnings(t, RULES) if t.turns[f.turn].line == 42521]
    assert f.summary == 'Use an existing "safe print" method in rich if there is one', f.summary
    assert f.pattern_key == "fix.method-print-safe", f.pattern_key


def test_a_russian_yes_no_question_becomes_the_step_to_take(shared_data):
    """"Ты зациклился. Удалось понять причину бага?" (you're looping; did you manage to find the bug's cause?): main
    wrote "Check this first: Удалось понять причину бага?"; the lesson is the step, said as Russian instructions are
    (an infinitive)."""
    got = lessons_by_line(shared_data, "runtimes/aider/alexshchuka_mozgoslav/.aider.chat.history.md")[3057]
    assert got == "Понять причину бага до того, как продолжать", got


@pytest.mark.parametrize(("sentence", "asks"), [
    ("why not just edit the file directly", True),
    ("did you cover this logic with a test", True),
    ("куда ты создал файл", True),
    ("Удалось понять причину бага?", True),  # yes/no in Russian: no opener, the "?" decides
    ("scrolling back still does not work (maybe because X)?", False),
    ("tests pass?", True),  # too short to be a statement said with doubt
    ("do it yourself", False),  # an imperative, not "do you ..."
    ("when working with json outputs, never use grep", False),
])
def test_what_is_a_question(sentence, asks):
    from kg.reflect.lesson import is_question

    assert is_question(sentence, RULES.lessons) is asks


def test_no_lesson_of_a_real_transcript_is_cut_mid_word(shared_data):
    """The 120-character summary cut words in half ("…covers the behavior prio…"): it cuts where a word ends."""
    cut = []
    for path in sorted((shared_data / "transcripts" / "specstory").glob("*.md")):
        if path.name == "2025-05-21_improve-mcp-error-handling.md":
            continue  # a summary document, no turns: refused (tests/cli/test_reflect_cli.py)
        t = read_transcript(path)
        for f in reflect(t, RULES).findings:
            if not f.summary.endswith("…"):
                continue
            last = re.findall(r"[\w'-]+", f.summary[:-1])[-1]
            # the words the lesson may come from: the user's turn, and the agent's turns before it (a lesson said
            # in context quotes the agent's last words, which the details keep only 300 characters of)
            said = " ".join(x.text for x in t.turns[max(0, f.turn - 5): f.turn + 1])
            words = set(re.findall(r"[\w'-]+", f"{said} {f.details}"))
            if last not in words:
                cut.append(f.summary)
    assert not cut, cut


def test_a_lesson_in_context_names_what_the_agent_did_not_its_offer():
    """"try again" names nothing: the details name the agent's last statement, never an offer ("If you want me to
    ...") or a question back (main named the offer); the lesson is the user's verdict, not the agent's words; the key
    names the file the agent had just edited, never its words (QA7: fix.acceleration-disabl-enabl, from "Check if GPU
    acceleration is enabled", the claim the user rejected)."""
    from kg.reflect.parse import Transcript, Turn

    said = ("I rewrote the retry loop in client.py to back off exponentially. "
            "If you want, I can also switch the client to a fixed delay.")
    turns = [Turn(0, "user", "fix the retries"), Turn(1, "assistant", "", tool_name="edit", tool_input="src/client.py"),
             Turn(2, "tool", "Successfully replaced text in src/client.py.", tool_name="edit"),
             Turn(3, "assistant", said), Turn(4, "user", "try again")]
    t = Transcript("text", tuple(replace(u, position=f"turn {u.index + 1}") for u in turns))
    got = [f for f in reflect(t, RULES).findings if f.category == "correction"]
    assert got and "retry loop" in got[0].details.rsplit("The verdict is on: ", 1)[-1], got
    assert got[0].pattern_key == "fix.client-py", got
    assert "retry" not in got[0].summary and "try again" in got[0].summary, got
    # no tool call to name: no key (the agent's words never make one)
    t = Transcript("text", tuple(replace(u, position=f"turn {u.index + 1}") for u in (
        Turn(0, "user", "fix the retries"), Turn(1, "assistant", said), Turn(2, "user", "try again"))))
    got = [f for f in reflect(t, RULES).findings if f.category == "correction"]
    assert got and got[0].pattern_key is None and "try again" in got[0].summary, got


def test_a_lesson_rewritten_from_a_question_keys_as_the_same_lesson_said_plainly():
    """The templates' own words ("Check whether", "Find the cause:", "before handing work back") are no key words:
    on main "Check whether you are editing ... main workspace or ... session repo" keyed fix.session-whether-workspac,
    apart from the same lesson said plainly in other sessions (bench/reflect_keys.py)."""
    from kg.reflect.lesson import key

    asked = key("correction", "Check whether you are editing files in the main workspace or in the session repo",
                RULES.lessons)
    said = key("correction", "Work on the file in the session, not in the main workspace", RULES.lessons)
    assert asked == said == "fix.main-session-workspac"
    assert key("correction", "Find the cause: the build still hangs", RULES.lessons) == key(
        "correction", "The build still hangs", RULES.lessons)


@pytest.mark.parametrize(("said", "lesson"), [
    ("你为什么没有运行测试？", "运行测试"),  # why didn't you run the tests -> run the tests
    ("为什么你改了配置文件？", "不要改配置文件"),  # why did you change the config -> do not change the config
    ("为什么不直接修改这个文件？", "直接修改这个文件"),  # why not edit this file directly -> edit it directly
    ("你推送了吗？", "交回前确认已推送"),  # did you push -> before handing back, make sure it is pushed
])
def test_a_chinese_question_is_said_as_what_to_do(said, lesson):
    """The same rules for Chinese (main: "Check this first: <the question>?")."""
    from kg.reflect.parse import Transcript, Turn

    t = Transcript("text", tuple(Turn(i, r, x, position=f"turn {i + 1}") for i, (r, x) in enumerate(
        [("user", "修复登录"), ("assistant", "已完成，测试通过。"), ("user", said), ("assistant", "抱歉，我的错。")])))
    got = [f for f in reflect(t, RULES).findings if f.category == "correction"]
    assert got and got[0].summary == lesson and got[0].pattern_key, got


def test_i_mean_with_no_step_says_what_the_user_meant(shared_data):
    """"i mean non-blank not including the hash, etc" (aider): the fragment alone ("Non-blank not including the hash,
    etc") read as an order; then the lesson named the agent's statement after it ('The user meant "...", after: These
    modifications will make the script consider only…'), the agent's words as a rule (QA4 class 4). It says what the
    user meant, in their words."""
    got = lessons_by_line(shared_data, "runtimes/aider/aider-ai_aider/chat-history.part1.md")[5499]
    assert got == 'The user meant "non-blank not including the hash, etc"', got


def test_a_caption_above_a_pasted_shell_prompt_is_no_lesson(shared_data):
    """pi's user pasted two terminal screens, each under the terminal's name ("vs code" above "➜  pi-mono git:(main) ✗
    npx tsx ...", "ghostty" above the next), then "wtf". The caption became the lesson "Vs code", with no key. A line of
    a few words right before a shell prompt names the paste: the lesson names what the agent had said, as for a bare
    "wtf"."""
    t = read_transcript(shared_data / "runtimes" / "openclaw" / "transcripts" / "pi-coding-agent"
                        / "large-session.jsonl")
    (turn,) = [u.index for u in t.turns if u.role == "user" and u.text.startswith("vs code\n➜")]
    (f,) = [f for f in learnings(t, RULES) if f.turn == turn]  # (a low note: the per-kind cap may leave it out)
    # (an expletive alone is the user's frustration, not a rule: kg.reflect.verdict)
    assert f.summary == ('The user was frustrated ("wtf") after the agent\'s last step: edit '
                         'packages/coding-agent/src/theme/theme.ts'), f.summary
    assert f.pattern_key is None and f.evidence != "vs code" and "The verdict is on: " in f.details
    # a short line that is the user's own sentence is kept, prompt or not
    from kg.reflect.detect import own_lines
    said = own_lines("use pnpm!\n$ npm install\nadded 3 packages", RULES)
    assert said == [(0, "use pnpm!")]
    screens = "vs code\n➜  repo git:(main) ✗ npm test\nok\n\nghostty\n➜  repo git:(main) ✗ npm test\nok"
    assert own_lines(screens, RULES) == []
    # one short line above one paste may be the verdict itself
    assert own_lines("still failing\n$ npm test\n1 failed", RULES) == [(0, "still failing")]
