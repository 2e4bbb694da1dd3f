"""A user-view tester's findings on memory search and injection (issue 17), through the real CLI."""

import pytest


def test_inject_budget_is_a_hard_cap_even_with_no_memory(run_kg):
    run_kg("log error 'npm ci failed with ERESOLVE' --now 2026-12-01T10:00")
    for budget in (40, 50, 59):
        r = run_kg(f"inject -m docker --budget {budget} --now 2026-12-02 --json")
        assert r.exit_code == 0
        assert len(r.json["block"]) <= budget and r.json["chars"] == len(r.json["block"])
        plain = run_kg(f"inject -m docker --budget {budget} --now 2026-12-02")
        assert len(plain.stdout.rstrip("\n")) <= budget


def test_an_entry_is_under_lessons_or_the_watch_list_not_both(run_kg):
    run_kg("log learning 'the staging database needs a VPN connection first' --priority high "
           "--now 2026-12-02T10:00")
    block = run_kg("inject -m 'staging database VPN' --now 2026-12-02T12:00 --json").json["block"]
    assert block.count("the staging database needs a VPN connection first") == 1, block


def test_identical_pending_entries_are_one_watch_line_with_a_count(run_kg):
    for minute in ("01", "02", "03"):
        run_kg(f"log error 'npm run build failed: generate is not a function' --priority high "
               f"--now 2026-12-02T10:{minute}")
    block = run_kg("inject -m 'npm build' --now 2026-12-02T12:00 --json").json["block"]
    assert block.count("generate is not a function") == 1, block
    assert "[ERR-20261202-003] (3×)" in block, block


def test_a_session_summary_line_and_its_events_are_one_hit_naming_its_sources(run_kg):
    run_kg("session start --now 2026-12-01T09:00")
    for minute in ("01", "02"):
        run_kg(f"log error 'edit failed: SEARCH block did not match CONVENTIONS.md' --now 2026-12-01T10:{minute}")
    run_kg("session end --summary 'tidied the conventions file' --now 2026-12-01T18:00")
    hits = run_kg("search 'SEARCH block' --now 2026-12-02 --json").json
    assert len(hits) == 1, [h["location"] for h in hits]
    top = hits[0]
    assert top["source"] == "graph" and top["count"] == 2
    assert "memory/sessions/2026-12-01-001.md:18" in top["also"], top["also"]
    assert "memory/2026-12-01.md:3" in top["also"]  # the daily log folds the repeat into its line (❌×2)
    # the summary line of the session file and the daily log's "Session summary" line: one hit too
    summary = run_kg("search 'tidied' --now 2026-12-02 --json").json
    assert [h["location"] for h in summary] == ["memory/sessions/2026-12-01-001.md:6"]
    assert summary[0]["also"] == ["memory/2026-12-01.md:4"]


def test_text_hits_show_their_date(run_kg, ws):
    run_kg("log learning 'rotate the signing key every quarter' --now 2026-11-20T14:05")
    (ws.root / "MEMORY.md").write_text("# Memory\n\n- the signing key lives in the vault\n", encoding="utf-8")
    r = run_kg("search 'signing key' --source daily --source MEMORY.md --now 2026-12-02")
    assert "] memory/2026-11-20.md:3 · 2026-11-20 14:05\n" in r.stdout, r.stdout
    assert "] MEMORY.md:3 · 20" in r.stdout, r.stdout  # a file without dated lines: its last change


def test_a_named_day_matches_that_day_only(run_kg):
    run_kg("log error 'docker build failed: permission denied' --now 2026-12-01T10:00")
    run_kg("log learning 'always run the migrations before the tests' --now 2026-12-01T15:00")
    run_kg("log error 'npm ci failed with ERESOLVE' --now 2026-12-02T09:00")
    run_kg("log learning 'the staging cluster moved' --now 2026-11-24T09:00")
    now = "--now 2026-12-02T12:00"

    def days(query: str) -> set[str]:
        return {h["created_at"][:10] for h in run_kg(f"search '{query}' {now} --json").json}

    assert days("on December 1") == {"2026-12-01"}
    assert days("yesterday") == {"2026-12-01"}
    assert days("today") == {"2026-12-02"}
    assert days("上周") == {"2026-12-01", "2026-11-24"}  # the last fortnight before today
    assert days("last week") == {"2026-12-01", "2026-11-24"}
    # --now moves "yesterday"
    assert {h["created_at"][:10] for h in run_kg("search yesterday --now 2026-12-03T08:00 --json").json} \
        == {"2026-12-02"}
    # nothing on the day named: the days around it, said so
    r = run_kg(f"search 'on November 26' {now}")
    assert r.stdout.splitlines()[1] == "  (nothing in the time named; showing entries from the days around it)"
    assert "2026-11-24" in r.stdout and "2026-12-0" not in r.stdout


def test_chinese_relative_days_are_read_as_times(run_kg):
    """QA: `kg search "三天前 数据库"` said "no memory holds '三天', '天前'": "三天前" (three days ago) was read as
    words, not as the time "3 days ago" is, as the Chinese phrases of rules/memory.toml's [dates] are."""
    run_kg("log error '数据库 连接 超时' --now 2026-12-02T10:00")
    run_kg("log error '数据库 迁移 失败' --now 2026-11-20T10:00")
    now = "--now 2026-12-05T12:00"
    for query, day in (("三天前 数据库", "2026-12-02"), ("三天前数据库", "2026-12-02"), ("3天前 数据库", "2026-12-02"),
                       ("两周前 数据库", "2026-11-20"), ("3 days ago 数据库", "2026-12-02")):
        r = run_kg(f"search '{query}' {now}")
        assert r.exit_code == 0 and "no memory holds" not in r.stdout, (query, r.stdout)
        assert r.stdout.splitlines()[1].endswith(f"· {day} 10:00"), (query, r.stdout)


def test_a_weekday_named_is_that_day(run_kg):
    """QA: "last Friday" and "上周五" returned hits of three weeks unfiltered, saying nothing: weekdays were words.
    2026-12-06 is a Sunday: "last Friday" is 12-04, "上周五" the Friday of the calendar week before (11-27), "周三"
    this week's Wednesday (12-02)."""
    for day, text in (("2026-11-27", "deploy: the docker image push was denied"),
                      ("2026-12-02", "deploy hung waiting for the migration lock"),
                      ("2026-12-04", "deploy rolled back after the health check failed")):
        run_kg(f"log error '{text}' --now {day}T10:00")
    now = "--now 2026-12-06T12:00"

    def days(query: str) -> list[str]:
        """The hits' days, best first (a day within [dates] slack_days of the one named still counts, at half)."""
        r = run_kg(f"search '{query}' {now} --json")
        assert r.exit_code == 0, r.stderr
        return [h["created_at"][:10] for h in r.json]

    # the day named first (the query's other words still find the rest, below it)
    assert days("deploy last Friday")[0] == days("deploy on friday")[0] == "2026-12-04"
    assert days("上周五 deploy")[0] == days("上个星期五 deploy")[0] == "2026-11-27"
    assert days("周三 deploy")[0] == days("这周三 deploy")[0] == "2026-12-02"
    assert days("last Friday") == ["2026-12-04"]  # a time alone: that day
    assert days("上周五") == ["2026-11-27"]
    assert sorted(days("deploy friday")) == ["2026-11-27", "2026-12-02", "2026-12-04"]  # a bare weekday: a word


def test_a_query_no_memory_holds_is_no_result_and_a_partial_one_says_so(run_kg):
    run_kg("log error 'edit failed: file has not been read yet' --now 2026-12-01T10:00")
    run_kg("log error '编辑配置文件失败：权限不足' --now 2026-12-01T11:00")
    r = run_kg("search '数据库 超时' --now 2026-12-02")
    assert r.stdout.startswith("No results for '数据库 超时'.\n"), r.stdout
    assert "[0." not in r.stdout  # the newest memory after it is not scored as a match
    r = run_kg("search '编辑 失败' --now 2026-12-02 --json")
    assert r.json[0]["text"] == "编辑配置文件失败：权限不足" and r.json[0]["match"] == "terms"
    r = run_kg("search '更新 失败' --now 2026-12-02")
    assert r.stdout.splitlines()[1] == "  (no memory holds '更新': matched the other words)", r.stdout


def test_chinese_without_spaces_names_no_half_word_as_missing(run_kg):
    run_kg("log error '编辑配置文件失败：权限不足' --now 2026-12-01T11:00")
    r = run_kg("search '编辑失败' --now 2026-12-02 --json")  # 编辑 辑失 失败: 辑失 spans the two words
    assert r.json[0]["text"] == "编辑配置文件失败：权限不足"
    assert r.json[0]["match"] == "terms" and r.json[0]["unmatched"] == []


@pytest.mark.embedded_only("numbers are counted by the SQLite side index, which a team graph does not have")
def test_a_number_no_memory_holds_is_named_not_taken_for_the_rarest_word(run_kg):
    run_kg("log learning 'the charity race raised 1500 dollars' --now 2026-12-01T10:00")
    run_kg("log learning 'the charity bake sale raised money' --now 2026-12-01T11:00")
    # a number is not in the keyword table: the side index counts it (before, 4217 was "rare", never "missing")
    r = run_kg("search 'charity 4217' --now 2026-12-02 --json")
    assert r.json[0]["match"] == "partial" and r.json[0]["unmatched"] == ["4217"], r.json[0]
    r = run_kg("search 'charity 1500' --now 2026-12-02 --json")
    assert r.json[0]["text"] == "the charity race raised 1500 dollars" and r.json[0]["match"] == "terms"


def test_the_session_brief_shows_a_pending_entry_once(run_kg):
    run_kg("log learning 'the staging database needs a VPN connection first' --priority high "
           "--now 2026-12-02T10:00")
    run_kg("log error 'npm ci failed with ERESOLVE' --priority high --now 2026-12-02T10:05")
    brief = run_kg("hook session-start -m 'staging database VPN npm ERESOLVE' --now 2026-12-02T12:00 --json")
    text = brief.json["text"]
    assert "⚠️ Pending High-Priority Items" in text
    assert text.count("the staging database needs a VPN connection first") == 1, text
    assert text.count("npm ci failed with ERESOLVE") == 1, text
