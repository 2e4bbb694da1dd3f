"""Chinese queries (QA qa10 F14, F17), through the real CLI on a real graph: "用 pnpm" ("use pnpm") finds the
lessons holding pnpm first, as "use pnpm" does: a lone 用 is a common word, as "use" is, not the query's rarest
term; and a run of characters no memory holds is named as the user wrote it, not as its character pairs."""

from __future__ import annotations

NOW = ["--now", "2026-11-20T12:00:00"]
LESSONS = ("以后都用 pnpm 安装依赖，不要用 npm。", "以后提交信息都用中文写。", "注释用中文写，变量名用英文。",
           "Always use pnpm to install dependencies.", "Write commit messages in Chinese, use the imperative.",
           "用户喜欢直接回答，不要解释太多")


def _history(run_kg) -> None:
    for text in LESSONS:
        r = run_kg(["log", "learning", text, "--now", "2026-11-20T02:00:00"])
        assert r.exit_code == 0, r.stderr


def test_a_lone_common_character_does_not_outweigh_the_keyword(run_kg, ws):
    _history(run_kg)
    for query in ("用 pnpm", "用pnpm", "use pnpm"):
        hits = run_kg(["search", query, "--json", *NOW]).json
        assert hits and {h["text"] for h in hits[:2]} == {LESSONS[0], LESSONS[3]}, (query, hits)
    # 用 alone is a common word, not a character pairs holding it: 用户 ("user") is still a word
    hits = run_kg(["search", "用户", "--json", *NOW]).json
    assert hits and hits[0]["text"] == LESSONS[5], hits


def test_a_run_of_characters_no_memory_holds_is_named_as_written(run_kg, ws):
    _history(run_kg)
    r = run_kg(["search", "pnpm 火箭发射", "--json", *NOW])
    assert r.exit_code == 0 and r.json and r.json[0]["unmatched"] == ["火箭发射"], r.json
    out = run_kg(["search", "pnpm 火箭发射", *NOW]).stdout
    assert "(no memory holds '火箭发射': matched the other words)" in out, out


def test_the_brief_lists_one_chinese_lesson_once_whatever_its_spacing_and_end_mark(run_kg, ws):
    """QA qa10 F9: three wordings of one lesson (a space beside a Latin word or not, 。 or ！) were three lines of
    the session brief's Lessons; one line now, the newest, counting all three."""
    for day, text in (("04", "以后都用 pnpm 安装依赖，不要用 npm！"), ("09", "以后都用pnpm安装依赖，不要用npm。"),
                      ("15", "以后都用 pnpm 安装依赖，不要用 npm。")):
        r = run_kg(["log", "learning", text, "--category", "correction", "--session", f"s{day}",
                    "--now", f"2026-11-{day}T01:00:00"])
        assert r.exit_code == 0, r.stderr
    brief = run_kg(["hook", "session-start", "-m", "帮我用 npm 装一下 dayjs", "--now", "2026-11-23T05:00:00"])
    assert brief.exit_code == 0, brief.stderr
    lines = [x for x in brief.stdout.splitlines() if x.startswith("- 以后都用")]  # (the Lessons section)
    assert len(lines) == 1 and lines[0].startswith("- 以后都用 pnpm 安装依赖，不要用 npm。 [LRN-20261115-") \
        and lines[0].endswith("(3×)"), brief.stdout
