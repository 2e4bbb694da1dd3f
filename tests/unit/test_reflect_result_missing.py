"""Issue 14: a Chinese or Russian user saying the agent's finished work is not there, does not open, or should be rolled
back, and denying the cause the agent named.

p24's Chinese and Russian sessions (development data now) held such turns that kg missed: the words for them were
written from each language's grammar (都/也 after 什么 makes "nothing", the potential complement 打不开 "cannot
open", the stems of Russian verbs), never copied from a labelled turn. Every sentence here is written for this test."""

from __future__ import annotations

import pytest

from kg.reflect.detect import learnings
from tests.unit.test_reflect_detect import RULES
from tests.unit.test_reflect_unseen_users import _chat, corrections, signals

CLAIM_ZH = "我已经把项目文件移到新的目录了。"
CLAIM_RU = "Я обновил страницу входа, теперь всё работает."


@pytest.mark.parametrize("said", ["新目录里啥也没有", "这个文件夹什么东西都没有", "打开一看，什么都没有"])
def test_nothing_there_after_a_chinese_claim_is_a_step_not_done(said):
    assert "not_done" in signals(CLAIM_ZH, said)
    assert corrections(CLAIM_ZH, said) == ["correction"]


def test_nothing_there_in_russian_and_a_result_not_seen_without_a_subject():
    assert "not_done" in signals(CLAIM_RU, "в папке ничего нет")
    assert "not_done" in signals(CLAIM_ZH, "刷新以后并没有看到新的按钮")
    # "anything will do" and "I have no other questions" say nothing is missing
    assert "not_done" not in signals(CLAIM_ZH, "什么都可以，你决定")
    assert "not_done" not in signals(CLAIM_ZH, "好的，没有别的问题了")


@pytest.mark.parametrize("said", ["首页现在打不开了", "后台现在登录不了", "图片加载不出来"])
def test_a_chinese_result_that_does_not_open_or_load_is_said_wrong(said):
    """The potential complement (打不开, 加载不出来) is Chinese for "won't open", "doesn't load", which the English
    list reads as a verdict on the result."""
    assert "says_wrong" in signals(CLAIM_ZH, said)
    assert corrections(CLAIM_ZH, said) == ["correction"]


def test_a_denied_cause_is_said_wrong_but_a_question_about_it_or_reassurance_is_not():
    agent = "这很可能是网络问题，建议检查代理设置。"
    assert "says_wrong" in signals(agent, "肯定不是网络问题，别的网站都能访问")
    assert "says_wrong" not in signals(agent, "是不是网络问题？")
    assert "says_wrong" not in signals(agent, "这不是大问题，先放着")


@pytest.mark.parametrize(("fails", "instruction"), [
    ("страница входа не загружается", "не показывай пароль в логах"),
    ("сайт меня не пропустил после входа", "не пускайте гостей в админку"),
])
def test_a_russian_result_that_does_not_open_or_let_one_in_is_said_wrong_not_a_prohibition(fails, instruction):
    assert "says_wrong" in signals(CLAIM_RU, fails)
    assert corrections(CLAIM_RU, fails) == ["correction"]
    assert "says_wrong" not in signals(CLAIM_RU, instruction)


@pytest.mark.parametrize("said", ["回退刚才的修改", "先退回到上一个版本", "换回原来的样式"])
def test_chinese_words_for_a_rollback_are_undo(said):
    assert "undo" in signals("我已经改好了样式。", said)


def test_a_message_written_twice_with_nothing_of_the_agents_between_is_one_finding():
    """SpecStory's copy of a Codex session writes a user message twice in a row: one finding, on the first copy (kg
    reflect kept one entry of the two, but each was scored as a turn); the same words after the agent answered are
    read again."""
    said = "首页现在打不开了"
    twice = _chat(("user", "改一下首页"), ("assistant", CLAIM_ZH), ("user", said), ("user", said))
    assert [(f.category, f.turn) for f in learnings(twice, RULES)] == [("correction", 2)]
    again = _chat(("user", "改一下首页"), ("assistant", CLAIM_ZH), ("user", said), ("assistant", CLAIM_ZH),
                  ("user", said))
    assert [f.turn for f in learnings(again, RULES) if f.category == "correction"] == [2, 4]


@pytest.mark.parametrize("said", ["改之前一直是好好的", "以前都能正常登录", "раньше всё работало",
                                  "до обновления всё открывалось", "it worked fine before your change",
                                  "this used to work"])
def test_it_worked_before_is_a_fact_the_agent_lacked(said):
    assert "states_fact" in signals("这可能是你本地环境的问题。", said)


def test_it_worked_before_against_the_agents_diagnosis_is_a_knowledge_gap_and_a_correction():
    """The agent blamed the network; the user denies it and says the site worked before this change: a fact it did not
    have. An instruction about before ("run the tests before you commit") states nothing."""
    agent = "这很可能是网络问题，建议检查代理设置。"
    said = "肯定不是网络问题，这次更新之前，一直可以正常访问"
    found = {f.category for f in learnings(_chat(("user", "改一下首页"), ("assistant", agent), ("user", said)), RULES)}
    assert found == {"correction", "knowledge_gap"}
    assert "states_fact" not in signals(agent, "提交之前先跑一遍测试")


@pytest.mark.parametrize("said", ["配置已经加了，但是没有编译这个插件", "镜像里并没有安装这个包",
                                  "日志显示还没有生成报告"])
def test_a_chinese_build_step_not_done_after_the_agents_work(said):
    """没有编译 / 并没有安装 / 还没有生成: the step the agent's work was for did not happen, as "hasn't been built" /
    "wasn't installed"."""
    assert "not_done" in signals("我已经把插件加到配置里了。", said)
    assert "not_done" not in signals("我已经把插件加到配置里了。", "好的，编译一下看看")
