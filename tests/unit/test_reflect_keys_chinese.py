"""Pattern keys and link terms of Chinese lessons (QA qa10 F8, F12): a redaction marker's words are no topic
("[REDACTED:password_assignment]" made two unrelated corrections one pattern, fix.assignment-password-redact),
and a Chinese lesson keys on pairs likely to be words (修复, 订单), not on pairs across two words (试还, 口返, 后提)."""

from __future__ import annotations

import pytest

from kg.graph.linking import default_rules as link_rules
from kg.graph.linking import link_terms, terms
from kg.reflect import default_rules
from kg.reflect.lesson import key

LESSONS = default_rules().lessons


def test_a_redaction_marker_is_no_key_word_nor_link_term():
    a = key("correction", "测试库的密码是[REDACTED:password_assignment]，不是 123456。", LESSONS)
    b = key("correction", "Redis 的密码是[REDACTED:password_assignment]，端口是 6380。", LESSONS)
    assert a != b
    for k in (a, b, key("correction", "Don't paste [REDACTED:openai_key] into the config file", LESSONS)):
        assert not {"assignment", "password", "redact", "redacted", "openai"} & set(k.split(".", 1)[1].split("-"))
    for text in ("测试库的密码是[REDACTED:password_assignment]，不是 123456。", "the key [REDACTED:openai_key] leaked"):
        for got in (terms(text, link_rules()), link_terms(text, link_rules())):
            assert not {"assign", "assignment", "password", "redact", "redacted", "openai"} & set(got), got


@pytest.mark.parametrize("lesson, expected", [
    ("修复订单导出分页", "fix.修复-导出-订单"),
    ("以后都用 pnpm 安装依赖，不要用 npm。", "fix.pnpm-依赖-安装"),
    ("以后缩进总是用 tab，不要用空格。", "fix.tab-空格-缩进"),
    ("以后提交信息都用中文写", "fix.中文-信息-提交"),
    ("userid 接口返回的是字符串", "fix.userid-接口-返回"),
    ("以后千万不要提交 .env", "fix.env-提交"),
    # English keys are as they were
    ("Always use pnpm to install dependencies.", "fix.dependency-install-pnpm"),
    ("Stop editing files in the main workspace", "fix.main-workspac"),
])
def test_a_chinese_lesson_keys_on_likely_words(lesson, expected):
    assert key("correction", lesson, LESSONS) == expected
    assert key("correction", lesson, LESSONS) == key("correction", lesson, LESSONS)  # deterministic


@pytest.mark.parametrize(("lesson", "expected"), [
    ("Benutze immer die Abhängigkeiten aus dem Projekt", "fix.abhängigkeiten-benutz-projekt"),
    ("Verwende Lösungsansätze mit Überprüfung", "fix.lösungsansätze-verwend-überprüfung"),
])
def test_an_accented_word_is_a_word_not_a_character_pair(lesson, expected):
    """(review H1) The CJK pairs' ranking took every non-ASCII word for a pair: German keys changed on upgrade
    (`fix.benutz-immer-projekt`), and existing patterns stopped recurring."""
    assert key("correction", lesson, default_rules().lessons) == expected
