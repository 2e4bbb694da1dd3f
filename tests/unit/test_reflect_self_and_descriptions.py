"""Issue 14: four readings fixed. A description of what keeps happening ("every time it rebuilds, the browser hangs";
German "Das klappt nie.", that never works) is no lasting rule; a request to correct a spec (请更正规范文件) is a
correction; the user fixing their own slip ("更正一下，我刚才说错了", "I said it wrong") is not a correction of the
agent. Every sentence here is written for this test; none is a labelled turn."""

from __future__ import annotations

import pytest

from kg.reflect import detect
from tests.unit.test_reflect_detect import RULES
from tests.unit.test_reflect_unseen_users import _chat, _turns, signals

DONE = "I've updated the build config and the docs. / 我已经更新了构建配置和文档。"


def categories(agent: str, said: str) -> set[str]:
    return {f.category for f in detect(_chat(*_turns(agent, said, None)), RULES) if f.turn == 2}


@pytest.mark.parametrize("said", [
    "every time it rebuilds, Chrome freezes",
    "every time it reloads, Safari hangs",
    "Das klappt nie.",
    "Es läuft nie durch.",
    "Der Test besteht nie.",
])
def test_what_keeps_happening_is_no_lasting_rule(said):
    assert "lasting" not in signals(DONE, said)
    assert "preference" not in categories(DONE, said)


@pytest.mark.parametrize("said", [
    "every time it times out, rerun the job",
    "every time you finish, run tests",
    "Benutze nie npm, nur pnpm.",
])
def test_a_rule_said_with_every_time_or_nie_is_still_lasting(said):
    assert "lasting" in signals(DONE, said)


@pytest.mark.parametrize("said", ["请更正规范文件", "請更正規範文件", "请纠正这个配置"])
def test_a_request_to_correct_is_a_correction(said):
    assert "correction" in categories(DONE, said)


@pytest.mark.parametrize("said", [
    "更正一下，我刚才说错了",
    "更正一下，我刚才说错了，端口应该是 9090",
    "是我记错了，文件在 src 下面",
    "sorry, I said it wrong: the port is 9090",
])
def test_the_user_correcting_their_own_words_is_no_correction(said):
    assert "self_corrects" in signals(DONE, said)
    assert "correction" not in categories(DONE, said)


@pytest.mark.parametrize("said", ["你说错了，端口是 9090", "这个更正规一点", "不对，你搞错了"])
def test_the_agent_told_it_is_wrong_and_more_regular_are_read_as_before(said):
    assert "self_corrects" not in signals(DONE, said)


# Review rev5 #3: 4c83b8d's vetoes read too much. 我 as the object of the agent's verb (给我搞错, 帮我记错) is the
# agent's slip, not the user's; a slip the user admits cancels only its own clause, not another clause's "wrong"
# about the agent's work; an order after "every time ..." ("bump versions") is a rule, only a description ("Chrome
# freezes") is not.
@pytest.mark.parametrize("said", [
    "你又给我搞错了",
    "你又给我搞错了，排序应该按日期",
    "你帮我记错了，文件在 src 下面",
    "你替我写错了，端口是 9090",
    "你又帮我记错了，应该是 pnpm",
])
def test_me_as_the_object_of_the_agents_slip_is_a_correction(said):
    assert "self_corrects" not in signals(DONE, said)
    assert "correction" in categories(DONE, said)


@pytest.mark.parametrize("said", [
    "I said it wrong earlier, but your migration is also wrong",
    "I typed the path wrong, and the config you wrote is wrong too",
    "I said the port wrong; the file you changed is also wrong",
])
def test_a_slip_the_user_admits_cancels_only_its_own_clause(said):
    assert "correction" in categories(DONE, said)


@pytest.mark.parametrize("said", [
    "every time it deploys, bump versions",
    "every time it fails, fetch logs",
    "every time it builds, clean caches",
    "every time they merge, tag releases",
])
def test_an_order_after_every_time_is_lasting(said):
    assert "lasting" in signals(DONE, said)
    assert "preference" in categories(DONE, said)


@pytest.mark.parametrize("said", [
    "every time it deploys, Firefox crashes",
    "every time it starts, Docker hangs",
])
def test_more_descriptions_after_every_time_are_no_lasting_rule(said):
    assert "lasting" not in signals(DONE, said)
