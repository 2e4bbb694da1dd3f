"""A long Chinese lesson is cut where a clause ends (，；。、), not at the last blank before a Latin word, which in
Chinese (written without blanks) dropped the rest of the sentence, instruction and all (QA qa10 F6)."""

from __future__ import annotations

from kg.core.policy import packaged
from kg.lifecycle import promote
from kg.lifecycle.policy import LifecyclePolicy
from kg.reflect.lesson import shorten

LP = LifecyclePolicy.from_mapping(packaged("lifecycle"))
CLAUSES = ["以后写数据库迁移的时候", "一定要先在本地的 docker-compose 环境里跑一遍 pnpm db:migrate",
           "确认 PostgreSQL 里的表结构和 schema.prisma 完全一致", "并且所有的种子数据都能正常导入之后",
           "再提交到远程仓库", "千万不要直接在测试环境上试"]
LONG = "，".join(CLAUSES) + "。"


def test_a_long_chinese_lesson_is_cut_after_a_clause():
    cut = shorten(LONG, 120, 120)
    assert cut == "，".join(CLAUSES[:4]) + "…"
    assert shorten("，".join(CLAUSES[:3]) + "。" + "，".join(CLAUSES[3:]), 120, 120) == "，".join(CLAUSES[:3]) + "…"


def test_a_promoted_chinese_rule_is_cut_after_a_clause():
    limit = LP.promotion.max_text_chars
    text = promote.rule_text(LONG + LONG, None, LP)
    assert len(text) <= limit and text.endswith("完全一致…"), text
    # no clause mark: cut at a blank as before; none of either: at the limit
    assert promote.rule_text("以" * 300, None, LP) == "以" * (limit - 1) + "…"
    text = promote.rule_text("word " * 100, None, LP)
    assert text.endswith("word…") and len(text) <= limit


def test_an_english_lesson_is_cut_as_before():
    text = ("Always run the full test suite before pushing, because the CI is slow and a failing build blocks "
            "everyone else on the team from merging their own work for hours.")
    assert shorten(text, 120, 120) == "Always run the full test suite before pushing, because the CI is slow…"
