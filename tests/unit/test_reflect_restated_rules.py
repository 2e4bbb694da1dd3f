"""Two signals any user of any agent gives when the agent broke what was asked, with no claim of done to deny: a reply
language the user set, asked for again after the agent answered in another (language_broken), and an order to fix
what the agent's own work named that the agent answers by changing again the file it had just changed
(fix_of_its_work). And the ordinary follow-ups that must stay quiet. Every turn here is written for the test, none is
taken from a labelled transcript."""

from __future__ import annotations

import copy

import pytest

from kg.reflect import load_rules
from kg.reflect.reply_language import written_in
from kg.reflect.rules import ReflectRulesError
from tests.unit.test_reflect_aftermath import EDIT, last
from tests.unit.test_reflect_signals import RAW, RULES

ENGLISH = "Sure. The launcher reads the settings file, starts the worker and prints a short summary for you.\n"


def session(*exchanges: tuple[str, str]) -> str:
    """An aider history: each (user line, the agent's reply to it)."""
    parts = ["# aider chat started at 2026-01-01 10:00:00\n"]
    for said, reply in exchanges:
        parts.append(f"#### {said}\n")
        parts.append(reply)
    return "\n".join(parts)


@pytest.mark.parametrize(("rule", "again", "reply"), [
    ("Please always respond in Thai.", "ภาษาไทย", ENGLISH),
    ("Please always respond in Thai.", "หยุดตอบภาษาอังกฤษ ตอบเป็นภาษาไทยเท่านั้น", ENGLISH),
    ("Réponds toujours en français.", "Réponds en français, s'il te plaît !", ENGLISH),
    ("以后请用中文回答", "中文", ENGLISH),
    ("Отвечай только по-русски.", "по-русски!", ENGLISH),
    ("Answer in Spanish from now on.", "I said answer in Spanish", ENGLISH),
    ("Always reply in English.", "reply in English", "Claro. El lanzador lee el archivo de configuración y "
                                                     "arranca el proceso para usted, con los valores del sistema.\n"),
])
def test_a_reply_language_asked_for_again_after_a_reply_in_another_is_a_correction(rule, again, reply):
    sigs, found = last(session((rule, reply), ("What does the launcher do?", reply), (again, reply)))
    assert "language_broken" in sigs, sigs
    assert "correction" in found


def test_the_rule_stands_across_a_fresh_start():
    """Set, broken, then /clear: the rule asked for again in the next context is still a rule restated."""
    text = session(("Please always respond in Thai.", "Got it, I'll respond in English.\n"),
                   ("/clear", "> All chat history cleared.\n"),
                   ("จากนี้ไปให้ตอบเป็นภาษาไทยเท่านั้น และช่วยสรุปไฟล์ main.py", ENGLISH))
    sigs, found = last(text)
    assert "language_broken" in sigs and "correction" in found


@pytest.mark.parametrize("exchanges", [
    # named for the first time: a rule set, not one broken
    [("What does the launcher do?", ENGLISH), ("Answer in Spanish from now on.", ENGLISH)],
    # the agent did answer in the language: asking again is no correction
    [("Réponds toujours en français.", "D'accord. Le lanceur lit le fichier et démarre le processus pour vous.\n"),
     ("Réponds en français et ajoute un test pour le lanceur.", "D'accord.\n")],
    # a language named for a piece of work, not for the replies
    [("Translate the README into German.", EDIT.format(color="navy")),
     ("Now translate the CONTRIBUTING guide into German as well.", ENGLISH)],
])
def test_a_language_asked_for_once_or_kept_is_quiet(exchanges):
    sigs, found = last(session(*exchanges))
    assert "language_broken" not in sigs, sigs
    assert "correction" not in found


@pytest.mark.parametrize(("work", "again"), [
    # the reviewer's two: "chat" is a noun here, and the language is what the work handles
    ("Make the chat bubble support Chinese input.", "Chinese input in the chat bubble: also handle emoji."),
    ("Add Spanish labels to the chat sidebar.", "Spanish chat labels next: the date format in the header."),
    ("Translate the reply templates into Spanish.", "Spanish reply templates: also the footer."),
    ("Ajoute une option de langue espagnol dans les réglages du chat.",
     "Ajoute la traduction en espagnol pour la langue du menu."),
    ("Füge Deutsch als Sprache für die Menüs hinzu.", "Die Sprache Deutsch fehlt noch im Auswahlmenü."),
    ("Agrega el idioma francés a los menús de la app.", "El idioma francés también debe aparecer en el pie de página."),
    ("Добавь немецкий язык в настройки интерфейса.", "Немецкий язык ещё нужен на странице входа."),
    ("给聊天界面加上日语语言包", "日语语言包还缺少设置页面的文案"),
])
def test_a_language_the_work_is_about_is_no_reply_language(work, again):
    """i18n work names a language (input, labels, a translation, a language added to a menu): it asks nothing of
    the agent's replies, however often it is named after a reply in English."""
    sigs, found = last(session((work, ENGLISH), (again, ENGLISH)))
    assert "language_broken" not in sigs, sigs


@pytest.mark.parametrize("again", ["Talk to me in Spanish, please.", "in Spanish please",
                                   "Spanish chat labels can wait: answer me in Spanish."])
def test_a_reply_language_asked_in_other_words_still_counts(again):
    sigs, _ = last(session(("Answer in Spanish from now on.", ENGLISH), ("What does the launcher do?", ENGLISH),
                           (again, ENGLISH)))
    assert "language_broken" in sigs, sigs


def test_how_a_reply_is_read_is_policy():
    raw = copy.deepcopy(RAW)  # the shipped rules, a reply read only in its first few characters
    raw["signals"]["reply_language"]["read_chars"] = 5
    langs = load_rules(raw).signals.reply_language
    assert written_in(ENGLISH, "english", langs) is False  # "Sure." alone shows no common English words
    assert written_in(ENGLISH, "english", RULES.signals.reply_language)


def test_which_language_a_reply_is_in():
    langs = RULES.signals.reply_language
    assert written_in("สวัสดีครับ ไฟล์นี้ทำหน้าที่เปิดโปรแกรม", "thai", langs)
    assert written_in(ENGLISH, "thai", langs) is False
    assert written_in(ENGLISH, "english", langs)
    assert written_in("Le lanceur lit le fichier et démarre le processus pour vous.", "french", langs)
    assert written_in("Le lanceur lit le fichier et démarre le processus pour vous.", "english", langs) is False
    assert written_in("```\ncode only\n```", "thai", langs) is None  # no words to tell by


def test_a_language_needs_its_script_or_its_words():
    raw = copy.deepcopy(RAW)  # the shipped rules, one language given both
    raw["signals"]["reply_language"]["languages"]["thai"]["words"] = ["ครับ"]
    with pytest.raises(ReflectRulesError, match="script"):
        load_rules(raw)


FIX = "Fix the menu colour in style.css: it should be navy, not black."


def test_an_order_to_fix_what_the_agent_just_wrote_is_a_correction():
    """The agent edited style.css and stopped (no claim); the user orders a fix of it; the agent edits it again."""
    text = session(("Make the menu links blue", EDIT.format(color="blue")), (FIX, EDIT.format(color="navy")))
    sigs, found = last(text)
    assert "fix_of_its_work" in sigs, sigs
    assert "correction" in found


def test_an_order_to_fix_something_else_is_quiet():
    other = """I'll fix the login check.

auth.py
```python
<<<<<<< SEARCH
    return user
=======
    return user if user.active else None
>>>>>>> REPLACE
```

> Applied edit to auth.py
"""
    text = session(("Make the menu links blue", EDIT.format(color="blue")),
                   ("Fix the login check in auth.py: inactive users can still sign in.", other))
    sigs, found = last(text)
    assert "fix_of_its_work" not in sigs, sigs
