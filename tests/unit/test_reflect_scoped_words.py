"""Issue 14: a word of one language that is another word in another is read only in its own language (German "nie",
never, is Polish "nie", not: [signals.in_language]). Every sentence here is written for this test; none is a labelled
turn."""

from __future__ import annotations

import copy

import pytest

from kg.core.errors import RulesError
from kg.reflect import detect, load_rules
from tests.unit.test_reflect_detect import RAW, RULES
from tests.unit.test_reflect_unseen_users import _chat, _turns, signals

OK = "ok"
DONE = "I've updated the export. It should work now."


@pytest.mark.parametrize("said", [
    "wciąż nie ma przycisku",
    "to nie działa, nie widzę zmian",
    "nie ma tego pliku w repo",
])
def test_polish_nie_is_not_a_lasting_rule(said):
    assert "lasting" not in signals(DONE, said)


@pytest.mark.parametrize("said", [
    "Benutze nie Tabs, das ist die Regel in diesem Projekt",
    "Schreib nie direkt in die Datenbank und nutze immer die Migrationen",
])
def test_german_nie_in_german_words_is_still_a_lasting_rule(said):
    assert "lasting" in signals(OK, said)


def test_a_polish_fault_after_done_is_a_correction_not_a_rule():
    found = [f.category for f in detect(_chat(*_turns(DONE, "wciąż nie ma przycisku", None)), RULES)]
    assert found == ["correction"]


@pytest.mark.parametrize(("scoped", "message"), [
    ({"klingon": {"lasting": ["x"]}},
     "signals.in_language.klingon: not a language of [signals.reply_language.languages]"),
    ({"german": {"claims_done": ["x"]}},
     "signals.in_language.german.claims_done: not a signal of [signals.user]"),
])
def test_scoped_words_name_a_known_language_and_a_user_signal(scoped, message):
    data = copy.deepcopy(RAW)
    data["signals"]["in_language"] = scoped
    with pytest.raises(RulesError) as exc:
        load_rules(data, source="rules/reflect.toml", model=None)
    assert str(exc.value).startswith(f"rules/reflect.toml: {message}")
