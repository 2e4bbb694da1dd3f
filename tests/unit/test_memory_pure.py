"""Pure pieces of the memory layer: no database."""

from datetime import datetime

import pytest

from kg.core.errors import UsageError
from kg.core.policy import packaged
from kg.memory import dates, inject, query, scores, search, sessions, skills, topics
from kg.memory.rules import MemoryRules, ScoreRules, SkillRules, TopicRules

TOPICS = TopicRules.from_mapping(packaged("topics"))
RULES = MemoryRules.from_mapping(packaged("memory"))


@pytest.mark.parametrize("text, topic", [
    ("the python script has a bug", "code"),
    ("明天天气怎么样，会下雨吗？温度多少", "weather"),
    ("帮我看看股票 stock 行情", "finance"),
    ("please remember this for recall later", "memory"),
    ("I read a book about cooking", "general"),          # "ok" inside "book" does not count
    ("配置 the API key", "config"),
    ("", "general"),
])
def test_detect_topic(text, topic):
    assert topics.detect(text, TOPICS) == topic


def test_detect_tie_goes_to_first_listed():
    assert topics.detect("python browser", TOPICS) == "code"


def test_user_topics_are_detected():
    rules = TopicRules.from_mapping({**packaged("topics"), "topics": {**packaged("topics")["topics"],
                                                                     "travel": ["flight", "航班"]}})
    assert topics.detect("订了明天的航班", rules) == "travel"



def test_a_topic_name_may_hold_a_dot():
    rules = TopicRules.from_mapping({**packaged("topics"), "topics": {"node.js": [" Node ", "npm", "node"]}})
    assert rules.topics == {"node.js": ("node", "npm")}


def _memory_with(table, key, value):
    data = packaged("memory")
    if value is KeyError:
        del data[table][key]
    else:
        data[table] = {**data[table], key: value}
    return data


@pytest.mark.parametrize("table, key, value, message", [
    ("search", "limit", 0, "search.limit: must be a number of at least 1, not 0"),
    ("search", "limit", KeyError, "search.limit: missing"),
    ("search", "candidates", True, "search.candidates: must be a number from 1 to 10000, not True"),
    ("search", "kind_weight", {"lesson": 2}, "search.kind_weight.lesson: must be a number from 0 to 1, not 2"),
    ("search", "sources", ["graph", "web"],
     "search.sources: has unknown 'web' (known: graph, MEMORY.md, USER.md, daily, sessions, skills, trail)"),
    ("scores", "min", 10, "scores.min: must be below scores.max (10), not 10"),
])
def test_memory_rules_name_the_key(table, key, value, message):
    with pytest.raises(UsageError) as err:
        MemoryRules.from_mapping(_memory_with(table, key, value))
    assert str(err.value) == f"rules/memory.toml: {message}"


@pytest.mark.parametrize("change, message", [
    ({"topics": {}}, "topics: must be a table of topic = [keywords], not empty"),
    ({"topics": {"code": ["python", " "]}}, "topics.code: must be a list of non-empty strings; item 2 is ' '"),
    ({"recall_nodes": -1}, "recall_nodes: must be a number of at least 0, not -1"),
])
def test_topic_rules_name_the_key(change, message):
    with pytest.raises(UsageError) as err:
        TopicRules.from_mapping({**packaged("topics"), **change})
    assert str(err.value) == f"rules/topics.toml: {message}"

def test_file_summary_skips_headings_and_falls_back_to_log_entries():
    assert topics.file_summary("# T\n\nline one\n## h\nline two\n") == ["line one", "line two"]
    assert topics.file_summary("# 2026-01-01\n\n### ✅ 10:00 - did x\n") == ["✅ 10:00 - did x"]


@pytest.mark.parametrize("query, terms", [
    ("When did Caroline go to the support group?", ["caroline", "go", "support", "group"]),
    ("用户喜欢直接回答", ["用户", "户喜", "喜欢", "欢直", "直接", "接回", "回答"]),
    ("git push 失败", ["git", "push", "失败"]),
])
def test_query_terms(query, terms):
    assert search.query_terms(query) == terms


def test_pick_index_terms_leaves_out_absent_and_common_terms_only():
    r = RULES.search
    big = 100 * r.common_floor
    df = {"error": big // 2, "push": 10, "kubectl": 3, "lgbtq": 0}
    # "lgbtq" is found nowhere: it is not rare, it is absent; "error" is common in a big graph
    assert query.pick_index_terms(["error", "push", "kubectl", "lgbtq"], df, big, r) == ["kubectl", "push"]
    assert query.pick_index_terms(["error", "lgbtq"], df, big, r) == ["error"]
    assert query.pick_index_terms(["lgbtq"], df, big, r) == []
    # in a small graph a topical term held by a tenth of the nodes is still asked
    small = {"painting": 60, "melanie": 300, "kids": 20}
    assert query.pick_index_terms(["melanie", "painting", "kids"], small, 600, r) == ["kids", "painting", "melanie"]
    # a term whose frequency is unknown (a number, no keyword table) is asked, as if rare
    assert query.pick_index_terms(["4930", "push"], {"push": 10}, 1000, r) == ["4930", "push"]


def test_pick_index_terms_keeps_the_asked_postings_under_the_budget():
    r = RULES.search
    nodes = 1_000_000
    df = {"kubernetes": 30, "ingress": 3000, "timeout": 45000, "retry": 18000}
    # without a budget every rare term is asked (their postings add up to 66,030)
    assert query.pick_index_terms(list(df), df, nodes, r) == ["kubernetes", "ingress", "retry", "timeout"]
    # with one, rarest first while they hold at most that many postings: the rest count in the re-rank only
    assert query.pick_index_terms(list(df), df, nodes, r, 20000) == ["kubernetes", "ingress"]
    assert query.pick_index_terms(list(df), df, nodes, r, 21030) == ["kubernetes", "ingress", "retry"]
    # the rarest is asked whatever its size
    assert query.pick_index_terms(["timeout", "retry"], df, nodes, r, 1000) == ["retry"]
    # common terms only: the two rarest, whatever the budget
    common = {"docker": 88000, "permission": 63000, "error": 90000}
    assert query.pick_index_terms(["docker", "permission", "error"], common, nodes, r, 20000) == \
        ["permission", "docker"]
    # a term of unknown frequency (a number) costs nothing
    assert query.pick_index_terms(["4930", "kubernetes", "ingress"], df, nodes, r, 3030) == \
        ["4930", "kubernetes", "ingress"]


def test_fts_rules_read_the_budget_and_reject_a_bad_one():
    assert query.FtsRules.from_mapping({"fts": {"postings_max": 20000}}).postings_max == 20000
    with pytest.raises(Exception, match="postings_max"):
        query.FtsRules.from_mapping({"fts": {"postings_max": -1}})


def test_term_weights_ignore_absent_terms():
    w = query.term_weights(["kids", "melanie", "zzz"], {"kids": 2, "melanie": 300, "zzz": 0}, 600)
    assert w["kids"] == 1.0 and 0 < w["melanie"] < w["kids"] and w["zzz"] == 0.0


NOW = datetime(2023, 12, 20, 10, 0)


@pytest.mark.parametrize("text, start, end, rest", [
    ("What was Sam doing on December 4, 2023?", "2023-12-04", "2023-12-05", "what was sam doing on ?"),
    ("what happened on 4 Dec", "2023-12-04", "2023-12-05", "what happened on"),
    ("trips in May 2023", "2023-05-01", "2023-06-01", "trips in"),
    ("deploy on 2023-11-02", "2023-11-02", "2023-11-03", "deploy on"),
    ("12月4日 做了什么", "2023-12-04", "2023-12-05", "做了什么"),
    ("errors yesterday", "2023-12-19", "2023-12-20", "errors"),
    ("上周的部署", "2023-12-06", "2023-12-20", "的部署"),
    ("push failed 3 days ago", "2023-12-17", "2023-12-18", "push failed"),
    ("on December 25", "2022-12-25", "2022-12-26", "on"),  # a day without a year: its latest one before now
    ("When did Mel go camping in June?", "2023-06-01", "2023-07-01", "when did mel go camping ?"),
    ("what broke during December", "2023-12-01", "2024-01-01", "what broke"),  # a month alone: its latest
    ("beach trips in 2022?", "2022-01-01", "2023-01-01", "beach trips ?"),  # a year after a preposition
    ("docker broke two weeks ago", "2023-12-06", "2023-12-13", "docker broke"),  # number words count
    ("a month ago", "2023-11-20", "2023-12-20", ""),
    ("moved 2 years ago", "2021-12-20", "2022-12-20", "moved"),
])
def test_dates_in_queries(text, start, end, rest):
    windows, left = dates.find(text, NOW, RULES.dates)
    assert [(f"{w.start:%Y-%m-%d}", f"{w.end:%Y-%m-%d}") for w in windows] == [(start, end)]
    assert left == rest


def test_a_bare_number_is_not_a_year():
    assert dates.find("port 2023 refused", NOW, RULES.dates) == ([], "port 2023 refused")
    assert dates.find("errors in 2023-1 build", NOW, RULES.dates)[0] == []


def test_bad_number_words_are_refused_with_the_key():
    from kg.core.errors import RulesError

    data = packaged("memory")
    bad = {**data, "dates": {**data["dates"], "numbers": {"two": "2"}}}
    with pytest.raises(RulesError, match=r"rules/memory.toml: dates.numbers.two: must be a whole number"):
        MemoryRules.from_mapping(bad)


def test_a_month_word_alone_is_not_a_date():
    assert dates.find("may I ask about docker", NOW, RULES.dates) == ([], "may i ask about docker")
    assert dates.find("what you may find in mayhem", NOW, RULES.dates) == ([], "what you may find in mayhem")


def test_date_weight_is_full_inside_and_half_in_the_slack():
    (w,), _ = dates.find("on December 4, 2023", NOW, RULES.dates)
    assert w.weight(datetime(2023, 12, 4, 18)) == 1.0
    assert w.weight(datetime(2023, 12, 6, 1)) == 0.5
    assert w.weight(datetime(2023, 12, 10)) == 0.0 and w.weight(None) == 0.0


def _hit(ref, text, score, source="graph", kind="event", tags=()):
    loc = f"graph {ref}" if source == "graph" else ref
    return search.Hit(source, ref, kind, text, text, score, loc, tags=list(tags))


def test_collapse_one_hit_per_memory():
    hits = [_hit("pat-1", "docker permission denied", 0.9, kind="pattern"),
            _hit("ERR-2", "Docker permission denied ", 0.8, tags=["D1:2"]),
            _hit("ERR-1", "docker permission denied", 0.7, tags=["D1:1"]),
            _hit("memory/2026-01-05.md:3", "docker permission denied", 0.6, source="daily", kind="file"),
            _hit("ERR-3", "docker build failed", 0.5)]
    out = search.collapse(hits)
    assert [h.ref for h in out] == ["ERR-2", "ERR-3"]
    lead = out[0]
    assert lead.score == 0.9 and lead.count == 2 and lead.tags == ["D1:2", "D1:1"]
    assert sorted(lead.also) == ["ERR-1", "memory/2026-01-05.md:3", "pat-1"]


def test_session_share():
    assert search.session_share(["s1", "s1", "s2", None], "s1", own=False) == 0.5
    assert search.session_share(["s1", "s1", "s2", None], "s1", own=True) == 0.25
    assert search.session_share(["s1"], None, own=False) == 0.0


@pytest.mark.parametrize("term, stemmed", [("painting", "paint"), ("painted", "paint"), ("cats", "cats"),
                                           ("失败", "失败"), ("crashes", "crash"), ("retries", "retr")])
def test_stem_prefix_finds_every_inflection_in_files(term, stemmed):
    from kg.core.text import stem_prefix

    assert stem_prefix(term) == stemmed


def test_coverage_fuzzy_and_exact():
    assert search.coverage(["pytest", "failng"], {}, {"pytest", "failing"}, 80) > 0.9
    assert search.coverage(["kubectl"], {}, {"git"}, 85) == 0.0
    assert search.coverage([], {}, {"x"}, 85) == 0.0


def test_recency_and_link_weight():
    now = datetime(2026, 1, 31)
    assert search.recency(datetime(2026, 1, 1), now, 30) == pytest.approx(0.5)
    assert search.recency(None, now, 30) == 0.0
    assert search.link_weight(True, 0.1) == 1.0
    assert search.link_weight(False, 0.8) == pytest.approx(0.4)


def test_snippet_centres_on_a_term():
    text = "x " * 200 + "the needle is here " + "y " * 200
    s = search.snippet(text, ["needle"], 60)
    assert "needle" in s and s.startswith("…") and s.endswith("…")


SCORE_RULES = ScoreRules(0, 10, 0.5)


@pytest.mark.parametrize("values, message", [
    (["8", "7", "9", "8"], "give 5 scores"),
    (["8", "7", "9", "8", "11"], "proactiveness must be from 0 to 10, not 11"),
    (["8", "x", "9", "8", "7"], "usefulness must be a whole number"),
    (["-1", "7", "9", "8", "7"], "accuracy must be from 0 to 10"),
])
def test_score_validation(values, message):
    with pytest.raises(UsageError, match=message):
        scores.validate(values, SCORE_RULES)


def test_score_average_and_trend():
    assert scores.average([8, 7, 9, 8, 7]) == 7.8
    rows = [{"id": "a", "at": datetime(2026, 1, 1, 9), "average": 6.0, **dict.fromkeys(scores.DIMENSIONS, 6)},
            {"id": "b", "at": datetime(2026, 1, 1, 10), "average": 8.0, **dict.fromkeys(scores.DIMENSIONS, 8)},
            {"id": "c", "at": datetime(2026, 1, 3, 10), "average": 9.0, **dict.fromkeys(scores.DIMENSIONS, 9)}]
    t = scores.summarise(rows, 7, 0.5)
    assert [r["avg"] for r in t.rows] == [7.0, 9.0]
    assert t.rows[0]["acc"] == 6  # the day's first score, as the seed shows
    assert t.arrow == "↑"
    assert scores.arrow(7.0, 7.4, 0.5) == "→" and scores.arrow(7.0, 6.0, 0.5) == "↓"


def test_trends_render_exact():
    rows = [{"id": "a", "at": datetime(2026, 1, 1, 9), "average": 7.8, "accuracy": 8, "usefulness": 7,
             "efficiency": 9, "tone": 8, "proactiveness": 7}]
    text = scores.render_trends(scores.summarise(rows, 7, 0.5).as_dict())
    assert text == ("\n📈 Score Trends (last 7 days, 1 scores):\n\n"
                    "  Date           Avg  Acc  Use  Eff  Ton  Pro\n  " + "─" * 40 + "\n"
                    "  2026-01-01     7.8    8    7    9    8    7")
    assert scores.render_trends({"count": 0, "days": 3}) == "No scores in the last 3 days."


def test_session_ids():
    assert sessions.next_id("2026-05-27", []) == "2026-05-27-001"
    assert sessions.next_id("2026-05-27", ["2026-05-27-001", "2026-05-27-007", "2026-05-26-009"]) == "2026-05-27-008"


def test_session_classify_and_render():
    nodes = [
        {"id": "LRN-1", "kind": "event", "entry_type": "learning", "category": "task", "text": "ship it"},
        {"id": "LRN-2", "kind": "event", "entry_type": "learning", "category": "correction", "text": "不对，用 uv"},
        {"id": "ERR-1", "kind": "event", "entry_type": "error", "status": "pending", "priority": "high",
         "text": "push failed"},
        {"id": "ERR-2", "kind": "event", "entry_type": "error", "status": "resolved", "text": "flaky test"},
        {"id": "les-1", "kind": "lesson", "text": "pin versions"},
    ]
    s = sessions.classify("2026-05-27-001", nodes, [{"slug": "deploy", "revisions": 1}],
                          [{"key": "tone", "value": '"concise"', "action": "set"}], summary="did things",
                          open_items=["ask about X"])
    text = sessions.render(s, datetime(2026, 5, 27, 18, 0))
    assert text.startswith("# Session Summary: 2026-05-27-001\n\nGenerated: 2026-05-27 18:00\n\n## Tasks Completed\n"
                           "- did things\n- ship it [LRN-1]\n")
    for heading in sessions.SECTIONS:
        assert f"## {heading}\n" in text
    assert "- error (high): push failed [ERR-1]\n- ask about X" in text
    assert "- memory/skills/deploy.md (new)" in text
    assert "correction: 不对，用 uv [LRN-2]" in text


SKILL_RULES = SkillRules(80, 40, 5, 5, 2, ("记住", "remember this"))


@pytest.mark.parametrize("kwargs, expected", [
    ({"tool_calls": 5}, True),
    ({"tool_calls": 4}, False),
    ({"message": "好的，记住这个做法"}, True),
    ({"message": "Please REMEMBER THIS"}, True),
    ({"message": "請記住這個流程"}, True),  # traditional (QA10 #18)
    ({"repeats": 2}, True),
    ({"repeats": 1}, False),
    ({"new_workflow": True}, True),
    ({}, False),
])
def test_should_generate(kwargs, expected):
    assert skills.should_generate(SKILL_RULES, **kwargs).generate is expected


def test_skill_roundtrip_keeps_human_sections():
    text = ("---\nname: deploy-docs\ndescription: Publish docs\ncreated: 2026-01-01 10:00\nupdated: 2026-01-01 10:00\n"
            "source: hand\ntriggers: [\"deploy docs\", \"发布文档\"]\ntools: bash, git\nowner: me\n---\n\n# Deploy\n\n"
            "## Procedure\n\n1. build\n2. push\n\n## Notes\n\nhuman text\n")
    s = skills.parse("deploy-docs", text)
    assert s.triggers == ["deploy docs", "发布文档"] and s.tools == ["bash", "git"]
    assert s.items("Procedure") == ["build", "push"]
    again = skills.parse("deploy-docs", skills.render(s))
    assert again.as_dict() == s.as_dict()
    assert again.sections["Notes"] == ["human text"] and again.extra == {"owner": "me"}


def test_skill_similarity_and_match():
    s = skills.Skill("git-push-setup", "git-push-setup", "Set up git push over ssh", triggers=["git push", "推送代码"])
    assert skills.similarity(s, "setup-git-push", "", []) >= 80
    assert skills.similarity(s, "bake-bread", "make sourdough", ["bread"]) < 50
    assert skills.match_score(s, "推送代码到远程仓库") > skills.match_score(s, "烤面包")


def test_inject_fit_respects_budget_and_order():
    items = [inject.Item("lesson", f"les-{i}", "x" * 50, 1.0 - i / 10, 0.5, 0.5) for i in range(10)]
    ranked = inject.rank(items, 0.6, 0.25, 0.15)
    kept, dropped = inject.fit(ranked, 300, "## Memory (kg)")
    assert len(inject.render_block("## Memory (kg)", kept)) <= 300
    assert dropped == 10 - len(kept) and [i.ref for i in kept] == [f"les-{i}" for i in range(len(kept))]


def test_bad_date_rules_are_refused_with_the_key():
    from kg.core.errors import RulesError

    data = packaged("memory")
    bad = {**data, "dates": {**data["dates"], "relative": {"yesterday": [0, -1]}}}
    with pytest.raises(RulesError, match=r"rules/memory.toml: dates.relative.yesterday: must be \[start, end\]"):
        MemoryRules.from_mapping(bad)


@pytest.mark.parametrize("scores, k, want", [
    ([("c", 2.0), ("b", 1.0), ("a", 1.0)], 2, ["c", "a"]),  # a tie at the k-th: the lower id
    ([("d", 3.0), ("b", 2.0), ("a", 2.0), ("c", 1.0)], 3, ["d", "a", "b"]),
    # scores that differ past the compared digits are one tie (their last bits may vary)
    ([("b", 1.0000000000001), ("a", 1.0)], 1, ["a"]),
    ([], 3, []),
])
def test_full_text_top_k_breaks_ties_by_id(scores, k, want):
    from kg.memory.views import ranked

    for order in (scores, scores[::-1]):  # whatever order the index gave them in
        assert [r["id"] for r in ranked([{"id": i, "score": s} for i, s in order], k)] == want


def test_session_summary_folds_identical_entries_into_one_line_with_every_id():
    # an aider session logs the same failed edit seven times: the summary read one line seven times over
    nodes = [{"id": f"ERR-{i}", "kind": "event", "entry_type": "error", "status": "pending", "priority": "high",
              "text": "edit failed: # 1 SEARCH/REPLACE block failed to match!"} for i in range(1, 4)]
    nodes.insert(1, {"id": "ERR-9", "kind": "event", "entry_type": "error", "status": "pending",
                     "priority": "high", "text": "npm ci failed"})
    s = sessions.classify("2025-06-02-001", nodes, [], [], open_items=["ask about X", "ask about X"])
    assert s.open_items == [
        "error (high): edit failed: # 1 SEARCH/REPLACE block failed to match! [ERR-1, ERR-2, ERR-3] (3×)",
        "error (high): npm ci failed [ERR-9]", "ask about X", "ask about X"]


@pytest.mark.parametrize("terms, absent, want", [
    (["编辑", "辑失", "失败"], ["辑失"], []),           # a bigram across two found words
    (["更新", "失败"], ["更新"], ["更新"]),
    (["docker", "kubernetes"], ["kubernetes"], ["kubernetes"]),
    (["zzqx"], ["zzqx"], []),                          # nothing found: said as "no results" instead
])
def test_unmatched_words(terms, absent, want):
    from kg.memory.ranking import unmatched

    assert unmatched(terms, absent) == want


@pytest.mark.parametrize("query, names, want", [
    ("pnpm 火箭发射", ["火箭", "箭发", "发射"], ["火箭发射"]),       # the user's run, not its pairs (QA qa10 F17)
    ("pnpm 火箭 依赖发射", ["火箭", "赖发", "发射"], ["火箭", "发射"]),  # 依赖 held: 赖发 reaches into it
    ("火箭发射 和 卫星", ["火箭", "箭发", "发射", "卫星"], ["火箭发射", "卫星"]),
    ("docker 9.9 kubernetes", ["9.9", "kubernetes"], ["9.9", "kubernetes"]),
])
def test_unmatched_cjk_named_as_written(query, names, want):
    from kg.memory.ranking import cjk_spans

    assert cjk_spans(query, names) == want


def test_collapse_joins_a_summary_line_to_the_events_it_names():
    hits = [_hit("ERR-20261201-001", "npm ci failed", 0.9),
            _hit("memory/sessions/s.md:18", "error (high): npm ci failed [ERR-20261201-001, ERR-20261201-002] (2×)",
                 0.8, source="sessions", kind="file"),
            _hit("memory/2026-12-01.md:3", "npm ci failed", 0.5, source="daily", kind="file"),
            _hit("memory/sessions/s.md:6", "Reflected on a transcript", 0.4, source="sessions", kind="file"),
            _hit("memory/2026-12-01.md:9", "Reflected on a transcript", 0.3, source="daily", kind="file")]
    out = search.collapse(hits)
    assert [h.ref for h in out] == ["ERR-20261201-001", "memory/sessions/s.md:6"]
    assert out[0].count == 2
    assert set(out[0].also) == {"memory/sessions/s.md:18", "memory/2026-12-01.md:3", "ERR-20261201-002"}
    assert out[1].also == ["memory/2026-12-01.md:9"]


def test_a_session_summary_daily_line_with_a_colon_id_parses():
    from kg.memory.search_files import LOG_LINE

    m = LOG_LINE.match("### 📝 14:29 - Session summary 2025-06-02-14:29:21: Reflected on a.md (aider)")
    assert m and m.group(1) == "Reflected on a.md (aider)"


def test_terms_the_keyword_table_cannot_count_are_counted_by_the_side_index():
    plan = query.Plan(["charity", "5k", "77b"], ["5k", "77b", "charity"], {"charity": 1.0, "5k": 1.0, "77b": 1.0},
                      {"charity": 40, "5k": query.UNKNOWN, "77b": query.UNKNOWN}, 1000)
    counts = {"5k": 3, "77b": 0}
    out = query.with_counted(plan, counts.get, RULES.search)
    assert out.df == {"charity": 40, "5k": 3, "77b": 0} and out.absent == ["77b"]
    assert out.ask == ["5k", "charity"] and out.weights["77b"] == 0.0 and out.weights["5k"] == 1.0
    assert query.with_counted(plan, lambda t: None, RULES.search) is plan  # no side index: as it was


@pytest.mark.parametrize("a, b, same", [
    ("以后都用 pnpm 安装依赖，不要用 npm。", "以后都用pnpm安装依赖，不要用npm！", True),
    ("以后都用 pnpm 安装依赖，不要用 npm。", "以后都用 pnpm 安装依赖，不要用 npm", True),
    ("Always use pnpm.", "always use pnpm!", True),
    ("Always use pnpm.", "Always use pnpm now.", False),
    ("以后提交信息都用中文写。", "以后提交信息都用中文写，不要写英文。", False),
    ("use npm run build", "use npmrun build", False),  # a space between two Latin words stays
])
def test_variant_key(a, b, same):
    from kg.core.text import variant_key

    assert (variant_key(a) == variant_key(b)) == same


def test_fold_variants_keeps_the_newest_and_counts_all():
    from kg.memory.inject import Item, fold_variants

    items = [Item("lesson", "LRN-20261115-001", "以后都用 pnpm 安装依赖，不要用 npm。", 0.5, 0.5, 0.9, count=3),
             Item("lesson", "LRN-20261109-001", "以后都用pnpm安装依赖，不要用npm。", 0.7, 0.5, 0.6),
             Item("lesson", "LRN-20261104-001", "以后都用 pnpm 安装依赖，不要用 npm！", 0.5, 0.5, 0.4),
             Item("watch", "ERR-1", "以后都用 pnpm 安装依赖，不要用 npm！", 0.5, 0.5, 0.4),
             Item("lesson", "LRN-20261104-002", "以后提交信息都用中文写。", 0.5, 0.5, 0.4)]
    out = fold_variants(items)
    assert [(i.ref, i.count, i.relevance) for i in out] == [("LRN-20261115-001", 5, 0.7), ("ERR-1", 1, 0.5),
                                                              ("LRN-20261104-002", 1, 0.5)]


def test_a_clip_never_cuts_inside_what_shows_as_one_character():
    """(QA10 #11) `kg list` cut an emoji family after a joiner and a flag to one regional indicator."""
    from kg.core.text import clip

    family, flag = "👨\u200d👩\u200d👧\u200d👦", "🇨🇳"
    text = "以" * 66 + family + flag + "好"
    for limit in range(66, 76):
        got = clip(text, limit)
        assert len(got) <= limit and got in (text[:66], text[:73], text[:75]), (limit, got)
    assert clip("plain ascii text", 5) == "plain" and clip("e\u0301te\u0301", 2) == "e\u0301"
