"""What is not a correction on anyone's transcript: a fresh start, a message sent again, a question in ask mode,
thanks for a greeting, the user's own slip, an answer the agent asked for, and words that are not the user's."""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path

import pytest

from kg.core.errors import RulesError
from kg.reflect import load_rules
from kg.reflect.detect import learnings, own_lines, turn_signals
from kg.reflect.lesson import phrase
from kg.reflect.parse import Transcript, Turn, parse_bytes

RULES_PATH = Path(__file__).resolve().parents[2] / "rules" / "reflect.toml"
RAW = tomllib.loads(RULES_PATH.read_text(encoding="utf-8"))
RULES = load_rules(RAW)


def transcript(*turns: tuple) -> Transcript:
    """(role, text) or (role, text, tool_name, tool_input) per turn."""
    out = []
    for i, t in enumerate(turns):
        role, text, *tool = t
        out.append(Turn(i, role, text, tool_name=tool[0] if tool else None, tool_input=tool[1] if tool else None,
                        position=f"turn {i + 1}"))
    return Transcript("text", tuple(out))


def found(t: Transcript, turn: int) -> set[str]:
    return {f.category for f in learnings(t, RULES) if f.turn == turn}


WORKED = [("user", "add caching to the loader"), ("assistant", "", "edit", "loader.py"),
          ("assistant", "Added an LRU cache to load().")]
REDIRECT = "make the cache a module-level dict keyed by path"


@pytest.mark.parametrize("reset", ["/clear", "/reset", "/cle", "/exit", "<command-name>/clear</command-name>"])
def test_words_after_a_fresh_start_answer_nothing_before_it(reset):
    undone = transcript(*WORKED, ("user", "/undo"), ("user", reset), ("user", REDIRECT))
    sigs = turn_signals(undone, RULES)[5]
    # a fresh start after earlier work: resumed, not the session's first words
    assert "redirect_after_undo" not in sigs and "resumed" in sigs and "first_turn" not in sigs
    assert "correction" not in found(undone, 5)
    # the same words right after the undo, with no fresh start between, redirect the agent
    assert "correction" in found(transcript(*WORKED, ("user", "/undo"), ("user", REDIRECT)), 4)


def test_a_new_aider_session_in_the_same_history_is_a_fresh_start():
    def history(*sessions: str) -> bytes:
        return "".join(f"# aider chat started at 2024-08-0{i + 1}10:00:00\n\n{s}"
                       for i, s in enumerate(sessions)).encode()

    first = "#### add a pager to cmd_web  \n\nI added pypager to `cmd_web`.\n\n> Applied edit to aider/commands.py\n\n"
    said = "#### don't paginate cmd_web  \n\nOK.\n"
    same = parse_bytes(history(first + said))
    fresh = parse_bytes(history(first, said))
    at = [t.index for t in same.turns if t.role == "user"][-1]
    assert "correction" in found(same, at)
    at = [t.index for t in fresh.turns if t.role == "user"][-1]
    assert fresh.turns[at - 1].role == "system" and "correction" not in found(fresh, at)


def test_a_new_session_may_correct_what_an_earlier_one_left_behind():
    """A fresh start answers nothing before it, but its words can still say the earlier work was wrong; a plain
    new task after it, or the same words as the very first turn of a transcript, are not corrections."""
    def history(*sessions: str) -> bytes:
        return "".join(f"# aider chat started at 2024-08-0{i + 1}10:00:00\n\n{s}"
                       for i, s in enumerate(sessions)).encode()

    first = "#### ask the user before overwriting files  \n\nI added a confirm() call to write_file.\n\n"
    fix = "#### don't use confirm(), just prompt()  \n\nSwitched to prompt().\n"
    task = "#### add a --verbose flag to the cli  \n\nAdded --verbose.\n"
    for said, want in ((fix, True), (task, False)):
        t = parse_bytes(history(first, said))
        at = [x.index for x in t.turns if x.role == "user"][-1]
        assert "resumed" in turn_signals(t, RULES)[at]
        assert ("correction" in found(t, at)) is want
    alone = parse_bytes(history(fix))
    at = [x.index for x in alone.turns if x.role == "user"][-1]
    assert "first_turn" in turn_signals(alone, RULES)[at] and "correction" not in found(alone, at)


def test_a_message_sent_again_is_not_the_agent_told_twice():
    ask = "rename the flag to --dry-run everywhere"
    unanswered = transcript(("user", "go"), ("assistant", "Done."), ("user", ask), ("user", ask))
    assert "repeats_request" not in turn_signals(unanswered, RULES)[3]
    retried = transcript(("user", ask), ("assistant", "Renamed it in cli.py."), ("user", "/model gpt-4o"),
                         ("user", ask))
    assert "repeated_ask" not in turn_signals(retried, RULES)[3]
    told = transcript(("user", ask), ("assistant", "Renamed it in cli.py."), ("user", ask))
    assert "repeated_ask" in turn_signals(told, RULES)[2]


def test_a_question_in_ask_mode_is_not_a_request_nor_a_verdict():
    said = "is there a way to tell if the clipboard holds an image"
    before = [("user", "add /paste"), ("assistant", "", "edit", "commands.py"), ("assistant", "Added cmd_paste.")]
    asked = transcript(*before, ("user", f"/ask {said}"), ("user", said))
    assert "ask_mode" in turn_signals(asked, RULES)[4]
    assert found(asked, 4) == set()
    assert "feature_request" in found(transcript(*before, ("user", said)), 3)


@pytest.mark.parametrize(("agent", "expected"), [("Hello! How can I help you today?", set()),
                                                  ("Done: the parser handles empty input now.", {"best_practice"})])
def test_thanks_for_a_greeting_approves_no_way_of_working(agent, expected):
    t = transcript(("user", "hi"), ("assistant", agent), ("user", "great, thanks!"))
    assert found(t, 2) == expected


@pytest.mark.parametrize("said", ["sorry, i meant the staging server", "typo: staging, not stagging"])
def test_the_user_fixing_their_own_slip_is_a_signal(said):
    t = transcript(("user", "deploy to stagging"), ("assistant", "Which server is stagging?"), ("user", said))
    assert "self_corrects" in turn_signals(t, RULES)[2]


def test_the_answer_the_agent_asked_for_is_not_a_rebuke():
    t = transcript(("user", "add the markdown rules to CONVENTIONS.md"),
                   ("assistant", "I need to edit CONVENTIONS.md. Please add CONVENTIONS.md to the chat."),
                   ("user", "CONVENTIONS.md"))
    sigs = turn_signals(t, RULES)[2]
    assert "supplies_asked" in sigs and "rule_ref_after_work" not in sigs
    assert found(t, 2) == set()


@pytest.mark.parametrize(
    ("text", "own"),
    [
        # pytest's error line, alone after a quoted source line
        (">       self.assertIn(path, coder.fnames)\nE       AssertionError: '/tmp/x' not found in {'/tmp/y'}", []),
        # a traceback with Windows paths, code and blank lines between its frames
        ("def test_subtree(self):\n    with GitTemporaryDirectory():\n\n        repo = git.Repo()\n\n"
         "tests\\basic\\test_repo.py:378: \n_ _ _ _ _ _ _ _ _ _\nC:\\hostedtoolcache\\Lib\\repo.py:303: in ignored\n\n"
         "self = WindowsPath('C:/Users/x')\nfix this", ["fix this"]),
        # a terminal screen copied with its padding, then the user's words
        ("+ 8 - **Colors**: user messages now respect the theme token                 \n"
         "background and text colours, and the tool boxes use their own tokens        \n"
         "+ 9 - **Fixed**: invalid themes no longer crash the application on startup  \n\n"
         "remove that, just say themes are supported", ["remove that, just say themes are supported"]),
        # a terminal UI's box drawing and a program's error line
        ("it crashed\n⠇ Working... (esc to interrupt)\n────────────\nError: Variable reference not found: dim",
         ["it crashed"]),
        # a thread's uncaught error as Python prints it, then its traceback: no word of the user's
        ("Exception in thread Worker-3 (poll):\nTraceback (most recent call last):\n"
         '  File "/srv/app/poller.py", line 41, in poll\n    data = fetch()\n' "KeyError: 'id'", []),
        # a test runner's summary and results with their times, then the user's words
        ("Shop.Tests test failed with 1 error(s) (3.1s)\n  Failed TestCheckoutTotal (12ms)\n"
         "the total is off again", ["the total is off again"]),
        # a user's line that ends on a time is the user's
        ("the build is slow now (30s)", ["the build is slow now (30s)"]),
        # what an IDE or the runtime put into the message
        ("<ide_opened_file>The user opened x.py in the IDE.\nIt may not matter.</ide_opened_file>\nuse pnpm, not npm\n"
         "<system-reminder>Be brief.</system-reminder>", ["use pnpm, not npm"]),
        ("# Files mentioned by the user:\n\n## notes.vtt: /x/notes.vtt\n\n## My request for Codex:\nsummarize it",
         ["summarize it"]),
    ],
)
def test_words_that_are_not_the_users_are_not_read(text, own):
    assert [ln for _, ln in own_lines(text, RULES)] == own


def test_an_injected_tag_must_be_a_tag_name():
    data = copy.deepcopy(RAW)
    data["quoting"]["injected_tags"] = ["ide selection"]
    with pytest.raises(RulesError, match=r"quoting.injected_tags: 'ide selection' is not a tag name"):
        load_rules(data)


@pytest.mark.parametrize(
    ("category", "said", "lesson"),
    [
        # a question is not a lesson: another sentence that says what to do, else the question said as a check
        ("correction", ["are you editing the main workspace or the session repo?", "use the session repo"],
         "Use the session repo"),
        ("correction", ["are you editing files in the main workspace or in the session repo?"],
         "Check whether you are editing files in the main workspace or in the session repo"),
        ("correction", ["did you push?", "why not?"], "Make sure you push before handing work back"),
        ("correction", ["have all changes been committed and pushed?"],
         "Check whether all changes have been committed and pushed"),
        ("correction", ["why do these commands keep hanging?"], "Find out why these commands keep hanging"),
        # a leading "no" is dropped, "no X" is kept
        ("correction", ["no, the block should stay as is"], "The block should stay as is"),
        ("correction", ["no console logs!"], "No console logs"),
        # "did you need to X" doubts X: it is not the lesson "X"
        ("correction", ["did you need to prepend the process path, those are relative links"],
         "Do not prepend the process path unless needed: those are relative links"),
        # a rewrite that leaves one word says nothing: the question, said as a check, is the lesson
        ("correction", ["are you currently in the session repo?", "you should be"],
         "Check whether you are currently in the session repo"),
        # a fact set right beside a rhetorical question is the lesson, not "the user had to ask" (QA10 #4)
        ("correction", ["搞错了吧？", "端口是 8080 不是 3000。"], "端口是 8080 不是 3000。"),
        ("correction", ["Are you kidding?", "It's port 8080, not 3000."], "It's port 8080, not 3000"),
        # a list item's marker, bold markup and swearing are not part of the lesson
        ("preference", ["- when working with json outputs, never use grep, but rather **jq**"],
         "When working with json outputs, never use grep, but rather jq"),
        # what / where / why questions and requests asked as questions, said as what to do
        ("correction", ["what the fuck is commit 30bdeaf?"], "Say what commit 30bdeaf is before relying on it"),
        ("correction", ["where did you get that number?"], "Name the source of that number before using it"),
        ("correction", ["where is the config file?"], "Find out where the config file is"),
        ("correction", ["what's wrong with the parser?"], "Find out what is wrong with the parser"),
        ("correction", ["why is the cache empty?"], "Find out why the cache is empty"),
        ("correction", ["why does the test fail?"], "Find out why the test fails"),
        ("correction", ["any idea why the colors differ in the terminal?"],
         "Find out why the colors differ in the terminal"),
        ("correction", ["why wasn't the style guide followed?"], "Make sure the style guide gets followed"),
        ("correction", ["can you check the logs too please?"], "Check the logs too"),
        ("correction", ["what about the error path?"], "Cover the error path too"),
        ("correction", ["the tests still hang, why?"], "Find the cause: the tests still hang"),
        ("correction", ["we need to pass it to the parser too, right?"], "We need to pass it to the parser too"),
        # nothing to say it as: what the user had to ask, never glued to an order ("Check this first: ...?", QA7 d)
        ("correction", ["what are you doing?"],
         'The user had to ask "what are you doing?": say what was done, where and why, without being asked'),
        ("correction", ["isn't there a retry helper in the http client?"],
         "Use an existing retry helper in the http client if there is one"),
        # a sentence that is only fillers or an attached file's path gives way to the next one
        ("correction", ["'/var/folders/T/Screenshot 2025-11-21 at 01.39.27.png'", "use the old colours"],
         "Use the old colours"),
        # the path of an attached screenshot is not part of the lesson
        ("correction", ["'/var/folders/T/Screenshot 2025-11-21 at 01.48.00.png' this is what we had before, make it "
                        "like that again"], "This is what we had before, make it like that again"),
    ],
)
def test_a_lesson_is_said_as_what_to_do(category, said, lesson):
    assert phrase(category, said, said[0], RULES.lessons)[0] == lesson


def test_actually_as_an_intensifier_is_not_news():
    before = [("user", "test the headers"), ("assistant", "I mocked completion() in the test.")]
    intensifier = transcript(*before,
                             ("user", "mock the httpx library which completion uses to actually make the request"))
    news = transcript(*before, ("user", "the header is actually set by httpx, not by completion"))
    assert "says_news" not in turn_signals(intensifier, RULES)[2]
    assert "says_news" in turn_signals(news, RULES)[2]
    assert "knowledge_gap" not in found(intensifier, 2)


def test_swearing_in_a_question_that_asks_for_help_is_not_at_the_agent():
    before = [("user", "theme the app"), ("assistant", "", "edit", "theme.ts"), ("assistant", "I replaced chalk.")]
    helps = transcript(*before, ("user", "the border shit is left. how can we solve this with our theme?"))
    vents = transcript(*before, ("user", "what the shit is this border?"))
    assert "frustrated_at_work" not in turn_signals(helps, RULES)[3]
    assert "frustrated_at_work" in turn_signals(vents, RULES)[3]


def test_a_few_words_the_agent_answers_with_you_are_right_are_a_correction():
    """The agent conceding at the start of its reply ("You're right, I'll ...") right after the user's few words
    about its work is a reason on its own, as an apology is: "the session repo" says nothing wrong in itself. "You're
    right, good point" welcomes a suggestion, and thanks the agent agrees to are not corrections."""
    said = [("user", "add caching to the loader"), ("assistant", "", "edit", "loader.py"),
            ("assistant", "Added an LRU cache to load() in the main workspace.")]
    conceded = transcript(*said, ("user", "the session repo"), ("assistant", "You're right, I'll move it there."))
    assert found(conceded, 3) == {"correction"}
    thanks = transcript(*said, ("user", "thanks, looks good"), ("assistant", "You're right, it is done."))
    assert "correction" not in found(thanks, 3)


DONE = [("user", "add an export button"),
        ("assistant", "I've added the export button to the toolbar and wired it to the CSV writer. The tests pass.")]
YES = "You're absolutely right! Let me add that."


@pytest.mark.parametrize("said", ["can you also add a progress bar?", "how does the CSV writer handle quotes?",
                                  "what about adding a JSON export too?", "should we add a test for this?",
                                  "now make the same button for import"])
def test_agreement_alone_to_a_request_or_a_question_is_not_a_correction(said):
    """Agents that open replies with "You're absolutely right!" say it to new requests and questions: agreement that
    is all the agent says, to a turn naming no fault, makes no correction (on main each of these was one)."""
    t = transcript(*DONE, ("user", said), ("assistant", YES))
    assert "agrees_only" in turn_signals(t, RULES)[2]
    assert "correction" not in found(t, 2)


@pytest.mark.parametrize(("said", "reply"), [
    ("no, that's the wrong file, the button goes in the export menu", YES),
    ("ok but now the import button is gone", YES),
    ("the staging database", "You're right, my mistake: I used production. Switching to staging."),
])
def test_agreement_to_a_fault_or_with_an_admission_stays_a_correction(said, reply):
    t = transcript(*DONE, ("user", said), ("assistant", reply))
    assert "agrees_only" not in turn_signals(t, RULES)[2]
    assert "correction" in found(t, 2)


@pytest.mark.parametrize("said", ["I like the approach. Let's keep going with the import",
                                  "love this, keep going"])
def test_liking_the_work_and_going_on_is_neither_a_rule_nor_a_correction(said):
    """"keep going" is not "it keeps failing"; "I like the approach" praises this work, it states no lasting rule."""
    t = transcript(*DONE, ("user", said), ("assistant", "Great! Moving on to the import."))
    sigs = turn_signals(t, RULES)[2]
    assert "still_again" not in sigs and "prefers" not in sigs
    assert not found(t, 2) & {"correction", "preference"}


@pytest.mark.parametrize("said", ["I like tabs over spaces in this repo", "i like it when you run the tests first",
                                  "it keeps failing on the import", "you keep adding print statements"])
def test_a_lasting_liking_and_a_repeated_failure_still_fire(said):
    sigs = turn_signals(transcript(*DONE, ("user", said), ("assistant", "OK.")), RULES)[2]
    assert {"prefers", "still_again"} & set(sigs)


@pytest.mark.parametrize(("said", "lasting"), [
    ("in this project we use tabs, not spaces", True),  # the team's convention
    ("remember: the staging db is read-only", True),  # a point given to keep
    ("在这个项目里我们统一用 pnpm", True),
    ("в этом проекте мы используем pnpm", True),
    ("always the same error, it fails on import", False),  # what happens, not a rule
    ("it never finishes, the build hangs", False),
    ("for now, skip the tests", False),  # a one-off
    ("这次先跳过测试", False),
])
def test_lasting_rule_language_is_kept_apart_from_one_offs_and_reports(said, lasting):
    t = transcript(*DONE, ("user", said), ("assistant", "OK."))
    assert ("preference" in found(t, 2)) is lasting, turn_signals(t, RULES)[2]


@pytest.mark.parametrize("said", ["I changed my mind, let's use JSON instead of CSV",
                                  "on second thought, put the button in the menu", "我改主意了，用 JSON 吧"])
def test_the_user_changing_their_own_mind_is_not_a_correction(said):
    """The agent did what was asked; the user changed the request: not the agent's mistake (main: a correction)."""
    t = transcript(*DONE, ("user", said), ("assistant", "Sure."))
    assert "self_corrects" in turn_signals(t, RULES)[2]
    assert "correction" not in found(t, 2)


@pytest.mark.parametrize("said", ["there's also a bug in the login page: it doesn't redirect after sign in",
                                  "another issue: the settings page crashes on save",
                                  "unrelated, but the footer links are broken",
                                  "separate problem: our CI is failing on the lint step since last week"])
def test_a_problem_the_user_marks_as_another_one_is_a_new_task(said):
    """labels/README.md: "problems the current agent did not cause" are not corrections (main: each one was)."""
    t = transcript(*DONE, ("user", said), ("assistant", "Let me look into it."))
    sigs = turn_signals(t, RULES)[2]
    assert "new_problem" in sigs and "fails_after_claim" not in sigs
    assert "correction" not in found(t, 2)


@pytest.mark.parametrize("said", ["the export button doesn't work, nothing happens when I click it",
                                  "the CSV is empty"])
def test_a_problem_in_what_the_agent_just_did_stays_a_correction(said):
    t = transcript(*DONE, ("user", said), ("assistant", "Let me look into it."))
    assert "correction" in found(t, 2)


def test_the_same_problem_in_a_hypothetical_is_not_a_recurrence():
    """"same problem if the app tried ..." describes a design question, not a failure that came back."""
    said = "in a web ui it is hard to ask the user synchronously. same problem if the app served an api instead."
    sigs = turn_signals(transcript(*DONE, ("user", said), ("assistant", "OK.")), RULES)[2]
    assert "still_again" not in sigs
    again = "same error again after your fix"
    assert "still_again" in turn_signals(transcript(*DONE, ("user", again), ("assistant", "OK.")), RULES)[2]


@pytest.mark.parametrize(("said", "praised"), [("ok thanks", False), ("thanks, now write the docs", False),
                                               ("谢谢", False), ("excellent, that fixed it", True),
                                               ("works now, thanks for fixing that", True)])
def test_thanks_alone_is_not_praise_of_the_work(said, praised):
    """labels/README.md: praise is "explicit praise or confirmation that the work or approach was good"; gratitude
    alone, or with the next request, says neither (main: a best_practice finding for each)."""
    t = transcript(*DONE, ("user", said), ("assistant", "You're welcome."))
    assert ("best_practice" in found(t, 2)) is praised


def test_a_how_to_question_with_no_lack_shown_is_not_a_feature_request():
    """"is there a way to ...?" when nothing failed and the agent said nothing it cannot do: a how-to question."""
    t = transcript(*DONE, ("user", "is there a way to run only one test?"), ("assistant", "Yes: pytest -k NAME."))
    assert "feature_request" not in found(t, 2)
    lack = transcript(("user", "run the tests"), ("assistant", "I can't run a single test with this runner."),
                      ("user", "is there a way to run only one test?"), ("assistant", "Not yet."))
    assert "feature_request" in found(lack, 2)


def test_a_dot_inside_a_file_name_does_not_end_the_doubt():
    """"i don't think the generated pr.md is correct": the dot of "pr.md" cut the sentence, and says_wrong missed it."""
    t = transcript(*DONE, ("user", "i don't think the generated pr.md is correct"), ("assistant", "Let me check."))
    assert "says_wrong" in turn_signals(t, RULES)[2]


# -- Chinese acknowledgement and praise (QA qa10 F3) --------------------------------------------------------------
@pytest.mark.parametrize("agent,user", [
    ("需要我再优化一下吗？", "不用了，这样就挺好。"),          # "no need": declines an offer, forbids nothing
    ("已经部署好了。", "收到，多谢。"),                      # thanks: nothing to keep doing
    ("修好了，刷新页面看看。", "好了好了，可以了，谢谢你。"),
    ("测试都通过了。", "太棒了，辛苦了！"),
    ("完成了。", "棒棒哒，今天就到这里吧。"),
])
def test_chinese_acknowledgement_and_bare_praise_teach_nothing(agent, user):
    t = transcript(("user", "帮我看一下 shop-api 这个项目。"), ("assistant", agent), ("user", user))
    assert found(t, 2) == set()


def test_chinese_praise_that_names_the_work_is_kept_and_no_rule():
    # 规范 after 很 is "tidy", and 得 before 很 the particle: no rule, no "should"; the praise names what to keep
    t = transcript(("user", "帮我提交一下。"), ("assistant", "已提交：修复：订单分页。"),
                   ("user", "很棒，提交信息写得很规范。"))
    assert found(t, 2) == {"best_practice"}
    assert not {"should", "rule_word", "edits_rule"} & set(turn_signals(t, RULES)[2])


@pytest.mark.parametrize("agent,user,category", [
    ("我先执行 npm install。", "不用 npm，以后都用 pnpm。", "preference"),   # 不用 + a name is still a prohibition
    ("我先执行 npm install。", "不要用 npm，用 pnpm。", "correction"),
])
def test_chinese_prohibitions_and_musts_are_still_read(agent, user, category):
    t = transcript(("user", "帮我看一下 shop-api 这个项目。"), ("assistant", agent), ("user", user))
    assert category in found(t, 2) and "prohibition" in turn_signals(t, RULES)[2], found(t, 2)
    must = transcript(("user", "帮我看一下 shop-api 这个项目。"), ("assistant", "我直接提交了。"),
                      ("user", "你得先跑测试再提交。"))
    assert "should" in turn_signals(must, RULES)[2]  # 得 "must" is still read


def test_a_long_turn_of_one_acknowledgement_word_does_not_hang_reflect():
    """(review H3) `嗯+` inside bare_praise's repeated group backtracked exponentially: "嗯"×26 then "？" took 11 s
    in `kg reflect` and the session-end hook, ~40 characters hours. A child process bounds a regression."""
    import subprocess
    import sys

    code = ("from kg.reflect import detect, load_rules, parse_text; import tomllib, pathlib, kg;"
            "raw = tomllib.loads((pathlib.Path(kg.__file__).parent.parent / 'rules' / 'reflect.toml').read_text());"
            "from kg.reflect.parse import Transcript, Turn;"
            "said = [('user', 'go'), ('assistant', '已完成。'), ('user', '嗯' * 60 + '？'), ('user', '对' * 60 + 'x'),"
            " ('user', '好的' * 40 + '?')];"
            "t = Transcript('text', tuple(Turn(i, r, x, position=f'turn {i + 1}') for i, (r, x) in enumerate(said)));"
            "print(len(detect(t, load_rules(raw))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
