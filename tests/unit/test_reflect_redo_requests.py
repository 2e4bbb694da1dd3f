"""Issue 14: a redo of the agent's last work asked for another way, and the Chinese side of structures the English
side already reads.

Missed on other users' chats in three sets of different users (p30, p33, p34): the agent's last answer or change asked
for again with a change ("do it again without ...", "repeat the answer in ..."; Chinese 重新 with a verb of making).
Chinese lacked what English had: "i meant" (我说的是), "just fix it yourself" (你主动修复), the agent's "please
check and let me know" that hands the work back (请您检查 …), "why is there still ..." (为什么还有报错), "it did not
change" (没变, 没反应); "from now on" in traditional characters (以後), and 以后 after a verb is "after", not "from now
on" (刷新以后). Every sentence here is written for this test; none is a labelled turn."""

from __future__ import annotations

import pytest

from kg.reflect import detect
from kg.reflect.detect import turn_signals
from kg.reflect.parse import Transcript, Turn
from tests.unit.test_reflect_detect import RULES

DONE_EN = "I changed the login button to blue. Refresh the page to see it."
DONE_ZH = "已经把登录按钮改成蓝色了，刷新页面即可看到。"
HANDED_ZH = "可能的原因有几个：导入路径、导出方式、组件名称。请您检查这些点，并告诉我您的发现。"


def _chat(agent: str, said: str) -> Transcript:
    turns = [("user", "make the login button blue / 把登录按钮改成蓝色"), ("assistant", agent), ("user", said),
             ("assistant", "OK.")]
    return Transcript("text", tuple(Turn(i, r, x, position=f"turn {i + 1}") for i, (r, x) in enumerate(turns)))


def signals(agent: str, said: str) -> tuple[str, ...]:
    return turn_signals(_chat(agent, said), RULES)[2]


def corrected(agent: str, said: str) -> bool:
    return any(f.category == "correction" and f.turn == 2 for f in detect(_chat(agent, said), RULES))


@pytest.mark.parametrize("said", [
    "do it again without the shadow",
    "make it again but with rounded corners",
    "repeat your answer as a numbered list",
    "give me the whole answer again, formatted as markdown",
    "重新设计一下这个按钮的样式",
    "把首页重新整理成两栏",
])
def test_the_agents_last_work_asked_for_again_another_way_is_a_redo(said):
    assert "try_again" in signals(DONE_EN, said)


@pytest.mark.parametrize("said", [
    "run it again",  # a step run again, not the work redone
    "do it again for the signup button too",  # the same change, somewhere else
    "重新启动一下服务",  # restart the service
    "重新安装一下依赖",  # reinstall
    "我重新生成了一下，现在好了",  # the user's own redo
])
def test_running_a_step_again_or_the_users_own_redo_is_not_a_redo_request(said):
    assert "try_again" not in signals(DONE_ZH, said)


@pytest.mark.parametrize(("signal", "said", "agent"), [
    ("i_mean", "我说的是注册按钮，不是登录按钮", DONE_ZH),
    ("i_mean", "好的。我指的是顶部导航栏里的那个", DONE_ZH),
    ("do_it_yourself", "请你主动排查一下", HANDED_ZH),
    ("do_it_yourself", "您亲自修复吧", HANDED_ZH),
    ("still_again", "为什么还有报错", DONE_ZH),
    ("still_again", "页面还在闪", DONE_ZH),
])
def test_chinese_says_what_english_says(signal, said, agent):
    assert signal in signals(agent, said)


def test_asking_the_user_to_check_and_report_hands_the_work_back_in_chinese():
    assert "hands_back" in signals(HANDED_ZH, "好的")
    assert "hands_back" in signals("我已经改好了。请先刷新页面确认效果。", "好的")
    assert "hands_back" not in signals("我已经改好了，刷新后生效。", "好的")


@pytest.mark.parametrize("said", ["还有一个问题：注册页也要改", "我说话算数，明天再继续", "为什么需要两个按钮？"])
def test_another_problem_or_a_plain_question_is_not_still_nor_i_mean(said):
    sig = signals(DONE_ZH, said)
    assert "still_again" not in sig and "i_mean" not in sig


@pytest.mark.parametrize(("agent", "said"), [
    (DONE_EN, "do it again without the shadow"),
    (DONE_ZH, "重新设计一下这个按钮"),
    (DONE_ZH, "为什么还有报错"),
    (DONE_ZH, "我说的是注册按钮"),
    (HANDED_ZH, "请你主动修复"),
])
def test_each_is_found_as_a_correction(agent, said):
    assert corrected(agent, said)


@pytest.mark.parametrize(("agent", "said"), [
    (DONE_EN, "run it again"),
    (DONE_ZH, "重新启动一下服务"),
    (DONE_ZH, "还有一个问题：注册页也要改"),
])
def test_the_same_shapes_without_the_fault_are_not(agent, said):
    assert not corrected(agent, said)


@pytest.mark.parametrize("said", ["搜索框没变，请再看看", "刷新以后完全没反应", "标题颜色并没有变化"])
def test_chinese_says_the_change_did_nothing_as_english_says_it_did_not_change(said):
    assert "says_wrong" in signals(DONE_ZH, said)
    assert corrected(DONE_ZH, said)


@pytest.mark.parametrize("said", ["有没有变化？", "其他的没变就好", "其它没变吧"])
def test_asking_whether_it_changed_or_what_was_to_stay_is_not_saying_it_failed(said):
    assert "says_wrong" not in signals(DONE_ZH, said)


@pytest.mark.parametrize("said", ["以后都用 pnpm 安装", "我们以后提交前先跑测试", "以後所有的日期都寫成 ISO 格式",
                                  "今後請用繁體中文回答"])
def test_from_now_on_opening_a_clause_in_either_script_is_a_lasting_rule(said):
    assert "from_now_on" in signals(DONE_ZH, said)


@pytest.mark.parametrize("said", ["刷新以后完全没反应", "点击以后都不显示", "部署以後頁面空白"])
def test_after_a_verb_it_means_after_not_from_now_on(said):
    sig = signals(DONE_ZH, said)
    assert "from_now_on" not in sig and "imperative_rule" not in sig
