"""Issue 14: signals kg has in other languages, read in Polish (a fault still there, an error, a hand-back, "do it for
me"), Japanese (the agent handing the work back) and Traditional Chinese (an error, "none exist"); and a claim of done
said the way Copilot's agent sums up ("- Fix the crash — **Done** (...)") or as "no further changes are needed".
Every sentence here is written for this test; none is a labelled turn."""

from __future__ import annotations

import pytest

from kg.reflect import detect
from kg.reflect.detect import own_lines
from tests.unit.test_reflect_detect import RULES
from tests.unit.test_reflect_unseen_users import _chat, _turns, signals

OK = "ok"


@pytest.mark.parametrize("claim", [
    "## Requirements coverage\n- Fix the crash on save — **Done** (guarded the null path).",
    "- Pagination bug: **Fixed**\n- Sorting: **Completed**",
    "The header is defined in layout.html. No further changes are needed.",
    "That is the only file involved; no additional code changes are required.",
])
def test_a_bold_verdict_or_no_work_left_is_a_claim_of_done(claim):
    assert "claims_done" in signals(claim, OK)


@pytest.mark.parametrize("not_a_claim", [
    "Which of these is **done** already on your side?",
    "Before we continue: are further changes needed in the API?",
])
def test_a_bold_word_in_a_question_or_a_question_of_work_left_is_no_claim(not_a_claim):
    assert "claims_done" not in signals(not_a_claim, OK)


@pytest.mark.parametrize(("signal", "agent", "said"), [
    ("still_again", "I've updated the menu.", "wciąż nie ma menu"),
    ("still_again", "I've updated the menu.", "nadal nie dziala"),
    ("still_again", "I've updated the menu.", "znowu ten sam błąd"),
    ("problem_report", "I've updated the menu.", "strona się nie wyświetla"),
    ("problem_report", "I've updated the menu.", "jest blad przy buildzie"),
    ("hands_back", "Mogę przygotować polecenia. Czy chcesz taką instrukcję?", OK),
    ("hands_back", "Gotowe. Możesz teraz uruchomić serwer.", OK),
    ("leaves_to_agent", "Uruchom te polecenia w terminalu.", "wpisz mi to do terminala"),
    ("leaves_to_agent", "Uruchom te polecenia w terminalu.", "zrób to za mnie"),
    ("hands_back", "`.env`を作成したら、もう一度実行してみてください！", OK),
    ("hands_back", "結果を教えてください。", OK),
    ("problem_report", "已修正路徑。", "圖檔路徑都不存在"),
    ("problem_report", "已修正路徑。", "還是報錯"),
])
def test_polish_japanese_and_traditional_chinese_words_fire_the_signal(signal, agent, said):
    assert signal in signals(agent, said)


@pytest.mark.parametrize(("signal", "agent", "said"), [
    ("still_again", OK, "dalej zrób stronę kontaktu"),          # "further / next": a request
    ("still_again", OK, "nadal chcę używać Hugo"),              # "still want": the user's own need
    ("leaves_to_agent", OK, "wpisz tytuł strony do config.toml"),  # an instruction with no "for me"
])
def test_polish_words_that_also_mean_something_else_do_not_fire(signal, agent, said):
    assert signal not in signals(agent, said)


@pytest.mark.parametrize(("agent", "said"), [
    # the fault still there right after the agent said no more work was needed
    ("The menu is defined in config.toml. It will appear automatically; no further changes are needed.",
     "wciąż nie ma menu"),
    # the steps handed to the user, and the user hands them back
    ("Mogę przygotować polecenia do terminala, które wykonasz lokalnie. Czy chcesz taką instrukcję?",
     "tak, wpisz mi to do terminala"),
])
def test_a_polish_fault_after_done_or_work_handed_back_is_a_correction(agent, said):
    # (a correction, or a finding that is also one; German's "nie" (never) is read in German words only:
    # tests/unit/test_reflect_scoped_words.py)
    found = [(f.category, *f.also) for f in detect(_chat(*_turns(agent, said, None)), RULES)]
    assert any("correction" in cats for cats in found), found


@pytest.mark.parametrize(("said", "words"), [
    ("#terminalSelection Please check the build and fix it", "Please check the build and fix it"),
    ("#terminalLastCommand #file:src/app.py the server crashed again", "the server crashed again"),
    ("@workspace where is the config read?", "where is the config read?"),
])
def test_copilot_context_before_the_words_is_not_the_users_words(said, words):
    assert [line for _, line in own_lines(said, RULES)] == [words]


@pytest.mark.parametrize("said", ["#terminalSelection fix it", "@workspace fix it", "#file:app.py fix it"])
def test_a_bare_fix_behind_copilot_context_reads_as_one(said):
    assert "bare_fix" in signals("- Fix the crash — **Done** (guarded the null path).", said)


@pytest.mark.parametrize("said", ["@docs/design.md fix it", "#123 is broken again", "# Plan\nadd a footer"])
def test_a_file_the_user_points_at_an_issue_number_or_a_heading_stay(said):
    assert [line for _, line in own_lines(said, RULES)][0] == said.splitlines()[0]


def test_an_agents_prompt_pasted_into_the_message_is_not_the_users_words(shared_data):
    """QA7 c: an aider user asked to look into a bug and pasted another agent's prompt after it ("... - You are the
    Analyzer Agent (...). Your goals: ..." and dozens of lines of its rules): the prompt was read as the user's words,
    its orders as corrections and the evidence. From the prompt's opening on, the lines are pasted; a user telling
    the agent what it is, in a line or two, is still speaking."""
    prompt = ("please look at the hotkey bug, follow the prompt below - You are the Review Agent (Senior Code "
              "Reviewer). Your goals:\nFind defects.\nYOU DO NOT write code.\nNEVER run builds.\nALWAYS cite the file."
              "\nReport in three sections.\nStop after two failed attempts.")
    said = [line for _, line in own_lines(prompt, RULES)]
    assert said == ["please look at the hotkey bug, follow the prompt below -"]
    short = "you are the agent here, do it yourself\nand run the tests"
    assert [line for _, line in own_lines(short, RULES)] == short.splitlines()
    from kg.reflect import read_transcript
    from kg.reflect.detect import learnings
    t = read_transcript(shared_data / "runtimes/aider/alexshchuka_mozgoslav/.aider.chat.history.md")
    found = [f for f in learnings(t, RULES) if t.turns[f.turn].line == 3732]
    assert not [f for f in found if "Analyzer Agent" in f.evidence + f.details + f.summary], found
