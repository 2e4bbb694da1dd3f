"""Issue 14: signals any user and any agent produce, for corrections by people and agents the model never saw.

Fresh held-out sets of other users' chats (bench/reflect_heldout.py p17-p20) found 4 in 10 of their corrections and
none of the Chinese ones. What the development turns could not teach is written here as language: how an agent owns
a mistake (in English, Chinese, Japanese, Spanish, Portuguese), how anyone says a change had no effect or that the
agent's diagnosis is not the cause, work handed back and sent back ("you run them"), and the Chinese forms of the
same (不对, 还是, 重新, 没有…变化). Every sentence here is written for this test; none is a labelled turn."""

from __future__ import annotations

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


def test_a_runtimes_session_read_before_the_agent_answered_has_no_correction_in_its_opening_words():
    """Read as it grows, a Claude Code session can hold the user's first words and nothing else yet: they answer
    nothing (as when the whole file is read), however they are worded. Plain text of user lines may be notes."""
    said = (Turn(0, "user", "the dev server doesn't seem to work", position="line 1"),)
    assert [f.category for f in detect(Transcript("claude-code", said), RULES)] == []
    assert [f.category for f in detect(Transcript("text", said), RULES)] == ["correction"]
