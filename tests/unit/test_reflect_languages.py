"""Issue 14: corrections in the languages other users write in, from the same rules as English and Chinese.

A fresh set of other users' Cursor chats (bench/reflect_heldout.py p17) held Japanese, Portuguese and Spanish turns;
the signals knew English, Chinese and Russian only, and 9 of 12 Japanese corrections were missed. The sentences here
are written for this test (none is a labelled turn). Each language: a report that the fix does not work, still
fails, or is not what was asked, is a correction; a question about the difference between two things, thanks, and
a plain next request are not."""

from __future__ import annotations

import pytest

from kg.reflect import detect
from kg.reflect.parse import Transcript, Turn
from tests.unit.test_reflect_detect import RULES


def _after_fix(agent: str, said: str) -> list[str]:
    turns = [("user", "ボタンを直して / arrume o botão / arregla el botón"), ("assistant", agent), ("user", said)]
    t = Transcript("text", tuple(Turn(i, r, x, position=f"turn {i + 1}") for i, (r, x) in enumerate(turns)))
    return [f.category for f in detect(t, RULES)]


@pytest.mark.parametrize(("agent", "said"), [
    ("ボタンの処理を修正しました。", "だめです、ボタンがまだ表示されません"),
    ("ボタンの処理を修正しました。", "保存ボタンが動かない"),
    ("ボタンの処理を修正しました。", "いや、設定画面に置きたかったんです"),
    ("Corrigi o botão.", "o botão ainda não aparece"),
    ("Corrigi o botão.", "não funciona, o formulário continua vazio"),
    ("Arreglé el botón.", "no funciona, la página sigue en blanco"),
    ("Arreglé el botón.", "eso está mal, yo pedí un enlace, no un botón"),
    ("I've updated the handler.", "none of that solved the crash"),
    ("I've updated the handler.", "the extension is installed but dosen't work"),
    ("I've updated the handler.", "hmm, that change did not do it"),
    ("Run `make build` with the new flag.", "that threw an exception on my machine"),
])
def test_a_fix_that_does_not_work_is_a_correction_in_any_language(agent, said):
    assert "correction" in _after_fix(agent, said)


@pytest.mark.parametrize(("agent", "said"), [
    ("両方のコマンドを用意しました。", "この2つのコマンドは何が違いますか?"),
    ("ボタンの処理を修正しました。", "ありがとう、完璧です。次はヘッダーをお願いします"),
    ("Corrigi o botão.", "obrigado! agora adicione um rodapé"),
    ("Arreglé el botón.", "gracias, ahora añade un pie de página"),
])
def test_questions_thanks_and_next_requests_are_not(agent, said):
    assert "correction" not in _after_fix(agent, said)


def test_an_apology_for_a_missing_tool_is_politeness_not_owning_a_mistake():
    """The agent's reply says sorry that a tool is unavailable, after a plain request: nothing was corrected (the
    Japanese "申し訳ありません" is "sorry", not "my mistake")."""
    turns = [("user", "こんにちは"), ("assistant", "こんにちは。何をしましょうか。"),
             ("user", "日本語のメッセージでコミットして"),
             ("assistant", "申し訳ありません、ターミナルを使うツールが現在利用できないようです。")]
    t = Transcript("text", tuple(Turn(i, r, x, position=f"turn {i + 1}") for i, (r, x) in enumerate(turns)))
    assert [f.category for f in detect(t, RULES)] == []


@pytest.mark.parametrize(("said", "reply"), [
    ("ok, here is the output now", "I see the issue still persists: the address is wrong. Let me look again."),
    ("日志如下", "我看到问题依然存在！地址还是错误的。"),
])
def test_a_reply_that_sees_its_fix_still_failing_makes_the_turn_a_correction(said, reply):
    """The user sends the result back in a few words or a log; the agent's reply sees that what it fixed still fails
    (the user showed it), whether or not the user's words say so."""
    turns = [("user", "fix the flash address"), ("assistant", "I've fixed the address calculation."),
             ("user", said), ("assistant", reply)]
    t = Transcript("text", tuple(Turn(i, r, x, position=f"turn {i + 1}") for i, (r, x) in enumerate(turns)))
    assert "correction" in [f.category for f in detect(t, RULES)]
    quiet = [*turns[:3], ("assistant", "Thanks, that output looks right: the address is correct now.")]
    t = Transcript("text", tuple(Turn(i, r, x, position=f"turn {i + 1}") for i, (r, x) in enumerate(quiet)))
    assert "correction" not in [f.category for f in detect(t, RULES)]
