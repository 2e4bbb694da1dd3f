"""Issue 14: a word of one language that is another word in another is read only where it is that word (German
"nie", never, is Polish "nie", not: a lasting rule unless the words are Polish); Chinese and Japanese verbs of
correcting a mistake (更正, 纠正, 改正, 訂正) say the agent was wrong; a user handing over what the result showed
("here's what it returned") reports what they see; "let's fix it" after a change the agent only told in prose sends
the work back. Every sentence here is written for this test; none is a labelled turn."""

from __future__ import annotations

import pytest

from kg.reflect import detect
from tests.unit.test_reflect_detect import RULES
from tests.unit.test_reflect_unseen_users import _chat, _turns, signals

OK = "ok"
DONE = "I've updated the export. It should work now."


@pytest.mark.parametrize("said", [
    "wciąż nie ma przycisku",
    "to nie działa, nie widzę zmian",
    "nie ma tego pliku w repo",
    "Nie, to nie to",
    "Nie, źle. Popraw.",  # a review: no Polish word of the list, no ł
    "Nie, to źle.",
])
def test_polish_nie_is_not_a_lasting_rule(said):
    assert "lasting" not in signals(DONE, said)


@pytest.mark.parametrize("said", [
    "Benutze nie Tabs, das ist die Regel in diesem Projekt",
    "Schreib nie direkt in die Datenbank und nutze immer die Migrationen",
])
def test_german_nie_in_german_words_is_still_a_lasting_rule(said):
    assert "lasting" in signals(OK, said)


@pytest.mark.parametrize("said", [
    "Benutze nie npm, nur pnpm.",
    "Nie wieder force-push auf main!",
    "Verwende nie sudo in diesem Repo.",
    "Mach das nie wieder.",
    "Committe nie direkt auf main, immer über einen Branch.",
])
def test_a_short_german_rule_with_nie_is_a_lasting_preference(said):
    # too short to have two of German's commonest words: "nie" counts unless the words are Polish (the reviewer's cases)
    assert "lasting" in signals(OK, said)
    assert [f.category for f in detect(_chat(*_turns(OK, said, None)), RULES)] == ["preference"]


def test_a_polish_fault_after_done_is_a_correction_not_a_rule():
    found = [f.category for f in detect(_chat(*_turns(DONE, "wciąż nie ma przycisku", None)), RULES)]
    assert found == ["correction"]


@pytest.mark.parametrize("said", [
    "更正：只处理 src 目录下的文件，测试文件不要动",
    "请纠正这个函数的返回值",
    "这里要改正，日期格式应该是 yyyy-MM-dd",
    "訂正してください。ファイル名は英語だけです",
])
def test_chinese_and_japanese_verbs_of_correcting_say_it_was_wrong(said):
    assert "says_wrong" in signals(DONE, said)


@pytest.mark.parametrize("said", ["请更正", "你需要改正", "纠正一下"])
def test_the_reviewers_real_uses_of_correcting_say_it_was_wrong(said):
    assert "says_wrong" in signals(DONE, said)


@pytest.mark.parametrize("said", [
    "现在更正常了，再把按钮颜色调深一点。",
    "语气再更正式一些，开头加上称呼。",
    "帮我修改正文的第二段，写得简短一点。",
    "这样写更正确，也更正规。",
])
def test_a_correcting_verb_inside_another_word_is_not_the_agent_wrong(said):
    # 更正常 more normal, 更正式 more formal, 修改正文 edit the body text (the reviewer's zh3, zh4)
    assert "says_wrong" not in signals(DONE, said)
    assert "correction" not in [f.category for f in detect(_chat(*_turns(DONE, said, None)), RULES)]


def test_the_user_correcting_their_own_words_is_not_the_agent_wrong():
    assert "says_wrong" not in signals(OK, "我更正一下刚才的说法：端口是 8080")


@pytest.mark.parametrize("said", ["Here's what it printed.", "this is what I get now", "Here is what the page shows:"])
def test_what_the_result_showed_handed_over_is_an_observation(said):
    assert "observes" in signals(DONE, said)


ADVICE = "The client raises because the reply holds a tool call. Update the handler to read the tool call first."


@pytest.mark.parametrize("said", ["Let's fix it", "let us fix this", "can you fix it?"])
def test_a_fix_asked_after_a_change_told_in_prose_sends_the_work_back(said):
    assert "redo_after_advice" in signals(ADVICE, said)


@pytest.mark.parametrize(("agent", "said"), [
    ("Updated the handler to read the tool call first.", "Let's fix it"),   # it did the work: the next step
    (ADVICE, "let's add a test for it"),                                    # a new request, not the fix
])
def test_no_redo_after_work_done_or_a_new_request(agent, said):
    assert "redo_after_advice" not in signals(agent, said)
