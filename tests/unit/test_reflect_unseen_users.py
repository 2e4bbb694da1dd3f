"""Issue 14: signals any user and any agent produce, for corrections by people and agents the model never saw.

Fresh held-out sets of other users' chats (bench/reflect_heldout.py p17-p20) found 4 in 10 of their corrections and
none of the Chinese ones. What the development turns could not teach is written here as language: how an agent owns
a mistake (in English, Chinese, Japanese, Spanish, Portuguese), how anyone says a change had no effect or that the
agent's diagnosis is not the cause, work handed back and sent back ("you run them"), and the Chinese forms of the
same (不对, 还是, 重新, 没有…变化). Every sentence here is written for this test; none is a labelled turn."""

from __future__ import annotations

import pytest

from kg.reflect import detect
from kg.reflect.detect import turn_signals
from kg.reflect.parse import Transcript, Turn
from kg.reflect.signals import words
from tests.unit.test_reflect_detect import RULES


def _chat(*turns: tuple[str, str]) -> Transcript:
    return Transcript("text", tuple(Turn(i, r, x, position=f"turn {i + 1}") for i, (r, x) in enumerate(turns)))


def _turns(agent: str, said: str, reply: str | None) -> tuple[tuple[str, str], ...]:
    turns = [("user", "fix the list view / 修一下列表"), ("assistant", agent), ("user", said)]
    return (*turns, ("assistant", reply)) if reply else tuple(turns)


def signals(agent: str, said: str, reply: str | None = None) -> tuple[str, ...]:
    """The signals of the user's second turn."""
    return turn_signals(_chat(*_turns(agent, said, reply)), RULES)[2]


def corrections(agent: str, said: str, reply: str | None = None) -> list[str]:
    return [f.category for f in detect(_chat(*_turns(agent, said, reply)), RULES) if f.category == "correction"]


def test_a_chinese_character_is_a_word_so_a_chinese_sentence_is_not_short():
    """Each CJK character counts as a word (the docstring said so, the pattern did not: a whole Chinese sentence was
    one word, and every Chinese turn "short")."""
    assert words("不需要这么复杂，用一个简单的函数就行") == 17
    assert words("it's a co-op 还是") == 5
    assert "short" not in signals("我已经重构了过滤函数。", "不需要这么复杂，用一个简单的函数就行，别加配置类")
    assert "short" in signals("我已经重构了过滤函数。", "还是不行")


def test_a_chinese_negation_of_the_agents_own_words_is_compared_by_its_character_pairs():
    """"问题不在缓存" after the agent blamed "缓存": a CJK term is a character pair, which the three-letter floor for a
    word the user and the agent share left out."""
    agent = "问题出在缓存上，我已清除缓存逻辑。"
    assert "negates_agent" in signals(agent, "问题不在缓存，查一下查询语句")
    assert "negates_agent" not in signals(agent, "问题不在这里，查一下查询语句")


@pytest.mark.parametrize(("signal", "said"), [
    ("says_wrong", "that's not the issue, the cache is fine"),
    ("says_wrong", "the problem isn't the cache"),
    ("says_wrong", "问题不在前端，是接口返回的数据"),
    ("not_done", "the toggle isn't visible anywhere"),
    ("not_done", "no difference at all, it looks exactly the same"),
    ("not_done", "改完之后没有任何变化"),
    ("not_done", "页面跟之前一样"),
    ("not_done", "não mudou nada"),
    ("problem_report", "导出的文件是空的"),
    ("undo", "I reverted your change, the login broke"),
    ("undo", "I rolled it back, the login broke"),
    ("do_it_yourself", "you run them"),
    ("do_it_yourself", "你来跑一下测试"),
    ("do_it_yourself", "自分でやってください"),
    ("do_it_yourself", "hazlo tú"),
    ("try_again", "你重新改一下"),
    ("be_careful", "重新检查一下代码"),
    ("flaw", "这是过度设计"),
    ("contrast", "不是前端，是后端"),
    ("asked_for", "我想要的是一个按钮"),
    ("says_wrong", "the page won't scroll past the first screen"),
    ("says_wrong", "Not working."),
    ("still_again", "the flicker persists"),
])
def test_the_users_words_for_a_change_that_missed(signal, said):
    assert signal in signals("I've updated the list view.", said)


@pytest.mark.parametrize(("signal", "reply"), [
    ("apologises", "I introduced a regression in the sort order."),
    ("apologises", "My earlier change broke the sort order."),
    ("apologises", "抱歉，我理解错了您的需求。"),
    ("apologises", "失礼しました。セレクタを直します。"),
    ("apologises", "Cometí un error con el selector."),
    ("apologises", "Cometi um erro no seletor."),
    ("concedes", "您说得对，列表确实渲染了两次。"),
    ("concedes", "你是对的，我来改。"),
    ("concedes", "その通りです。修正します。"),
    ("concedes", "Você está certo, o seletor estava errado."),
    ("concedes", "Thanks for flagging that: the key is reused."),
    ("agrees", "Tiene razon, lo corrijo."),
    ("realises", "我发现问题了：列表的 key 重复。"),
])
def test_the_agents_words_for_owning_a_mistake(signal, reply):
    assert signal in signals("I've updated the list view.", "look at the second row", reply)


@pytest.mark.parametrize(("fails", "not_a_verdict"), [
    ("the links don't open", "just don't open a new tab"),
    ("the totals do not update", "please do not update the docs"),
    ("the stats don't sync", "we don't sync on weekends"),
])
def test_what_the_result_does_not_do_is_said_with_its_subject_not_as_a_prohibition(fails, not_a_verdict):
    """"the links don't open" judges the result; the same words after "just", "please" or "we" tell or describe."""
    assert "says_wrong" in signals("I've updated the list view.", fails)
    assert "says_wrong" not in signals("I've updated the list view.", not_a_verdict)


def test_a_pointed_why_right_after_the_agent_acted_questions_that_step():
    """"why are you deleting that directory?" right after the agent ran a command: the step it just took is questioned
    (a "why" about the world, with nothing done before it, is a question)."""
    turns = [("user", "clean the build"), Turn(1, "assistant", "", tool_name="Bash", tool_input="rm -rf build/ dist/"),
             ("user", "wait, why are you deleting dist?")]
    t = Transcript("text", tuple(x if isinstance(x, Turn) else Turn(i, x[0], x[1], position=f"turn {i + 1}")
                                 for i, x in enumerate(turns)))
    assert "why_after_work" in turn_signals(t, RULES)[2]
    assert [f.category for f in detect(t, RULES)] == ["correction"]
    assert "why_after_work" not in signals("Here is how the cache works.", "why is the cache keyed by path?")


def test_a_change_stated_with_yi_jiang_is_a_claim_of_work_done():
    """已将 X 移到 Y ("have moved X to Y") states a change made, as "I've moved X to Y" does."""
    assert "claims_done" in signals("已将过滤逻辑移到服务端。", "好")


@pytest.mark.parametrize(("agent", "said"), [
    ("我已经修复了这个问题，现在列表应该只显示一次了。", "改完之后没有任何变化"),
    ("问题出在缓存上，我已清除缓存逻辑。", "问题不在缓存，你重新看一下代码"),
    ("I've added a toggle to the settings panel.", "the toggle isn't visible anywhere"),
    ("You can now run the tests to verify the fix.", "you run them"),
])
def test_a_change_that_missed_is_a_correction_and_the_next_request_is_not(agent, said):
    assert corrections(agent, said) == ["correction"]
    assert corrections(agent, "好的，谢谢！接下来帮我写测试") == []
    assert corrections(agent, "thanks, now add a footer") == []


@pytest.mark.parametrize("reply", ["您说得对，我理解错了您的需求，我重新修改。", "抱歉，我之前的理解有误，马上调整。"])
def test_a_chinese_reply_owning_a_mistake_makes_a_plain_turn_a_correction(reply):
    """The user's words hold no reason ("按钮在右边": the button is on the right); the agent's reply owns a mistake in
    Chinese, as "you're right" / "I misunderstood" do in English. A reply that only goes ahead does not."""
    assert corrections("我修改了样式。", "按钮在右边", reply) == ["correction"]
    assert corrections("我修改了样式。", "按钮在右边", "好的，我把按钮移到右边。") == []


def test_a_runtimes_session_read_before_the_agent_answered_has_no_correction_in_its_opening_words():
    """Read as it grows, a Claude Code session can hold the user's first words and nothing else yet: they answer
    nothing (as when the whole file is read), however they are worded. Plain text of user lines may be notes."""
    said = (Turn(0, "user", "the dev server doesn't seem to work", position="line 1"),)
    assert [f.category for f in detect(Transcript("claude-code", said), RULES)] == []
    assert [f.category for f in detect(Transcript("text", said), RULES)] == ["correction"]


@pytest.mark.parametrize(("again", "not_again"), [
    ("还是不行，页面还是空白的", "还是用表格展示比较好吧？"),
    ("又报错了，和刚才一样", "又加了一个需求：支持导出"),
    ("怎么又是这个错误", "还是你来写测试吧"),
])
def test_chinese_still_and_again_only_of_a_fault(again, not_again):
    """还是 is "still" and also "or" / "had better", 又 is "again" and also "also": after a claimed fix, only the
    fault said right after them sends the work back."""
    agent = "我已经修复了这个问题，现在列表应该只显示一次了。"
    assert "still_after_fix" in signals(agent, again)
    assert corrections(agent, again) == ["correction"]
    assert "still_again" not in signals(agent, not_again)
    assert corrections(agent, not_again) == []


def test_same_as_before_is_a_fault_of_the_result_not_an_instruction_to_keep_it():
    agent = "我已经修复了这个问题，现在列表应该只显示一次了。"
    assert "not_done" in signals(agent, "结果和之前一样")
    assert "not_done" not in signals(agent, "和之前一样，用 MySQL")
    # 不显示 of the result, not of a case asked about ("when it does not show, what is the logic?")
    assert "not_done" in signals(agent, "按钮还是不显示")
    assert corrections(agent, "这个按钮不显示的时候是什么逻辑？") == []


def test_a_chinese_why_that_asks_to_understand_is_a_question_not_a_challenge():
    agent = "我已经把会话存储改成了 Redis。"
    assert "why_after_work" in signals(agent, "为什么要用 Redis？")
    assert "why_after_work" not in signals(agent, "为什么要用 Redis？我想了解一下原理")
