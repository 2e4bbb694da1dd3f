"""The memory layer against a real Kùzu workspace."""

import json

import pytest

from kg.core.errors import NotFound, UsageError
from kg.memory import inject, preferences, scores, search, sessions, skills, topics


def test_session_start_end_writes_summary_and_daily_log(ws):
    s = sessions.start(ws, "2026-05-27T09:00")
    assert s["id"] == "2026-05-27-001" and ws.current_session() == s["id"]
    ws.log("learning", "deployed the docs", category="task", now="2026-05-27T10:00")
    ws.log("error", "npm install 失败: EACCES", now="2026-05-27T10:05")
    ws.log("learning", "不对，应该用 pnpm", category="correction", now="2026-05-27T10:06")
    out = sessions.end(ws, "shipped docs; npm still broken", "2026-05-27T18:00", open_items=["ask about CI"])
    text = (ws.memory / "sessions" / "2026-05-27-001.md").read_text(encoding="utf-8")
    assert text.startswith("# Session Summary: 2026-05-27-001\n")
    assert "- shipped docs; npm still broken\n- deployed the docs [LRN-20260527-001]" in text
    assert "npm install 失败: EACCES [ERR-20260527-001]" in text and "- ask about CI" in text
    assert "correction: 不对，应该用 pnpm" in text
    assert out["events"] == 3 and ws.current_session() is None
    daily = (ws.memory / "2026-05-27.md").read_text(encoding="utf-8")
    assert "### 📝 18:00 - Session summary 2026-05-27-001: shipped docs; npm still broken\n" in daily
    with ws.store() as st:
        row = st.run("memory_session_get", id="2026-05-27-001")[0]
    assert row["summary"] == "shipped docs; npm still broken" and row["ended_at"] is not None
    assert sessions.start(ws, "2026-05-27T19:00")["id"] == "2026-05-27-002"
    with pytest.raises(UsageError, match="ended already"):
        sessions.end(ws, "again", "2026-05-27T20:00", session="2026-05-27-001")


def test_session_end_without_session_says_how(ws):
    with pytest.raises(UsageError, match="kg session start"):
        sessions.end(ws, "x", "2026-01-01")


def test_preferences_history_and_user_md(ws):
    preferences.set_(ws, "answer_style", "直接回答，不要解释", now="2026-01-01")
    preferences.set_(ws, "answer_style", "concise, with examples", now="2026-02-01")
    preferences.set_(ws, "language", "zh", now="2026-02-01")
    assert preferences.get(ws, "answer_style")["value"] == "concise, with examples"
    data = json.loads((ws.memory / "preferences.json").read_text(encoding="utf-8"))
    assert data == {"answer_style": "concise, with examples", "language": "zh"}
    preferences.unset(ws, "language", now="2026-03-01")
    hist = preferences.history(ws, "answer_style")
    assert [(h["action"], h["previous"], h["value"]) for h in hist] == [
        ("set", None, "直接回答，不要解释"), ("set", "直接回答，不要解释", "concise, with examples")]
    user = (ws.root / "USER.md").read_text(encoding="utf-8")
    assert "- **answer_style**: concise, with examples" in user and "language" not in user
    with pytest.raises(NotFound):
        preferences.get(ws, "language")


def test_hand_edit_is_recorded_as_history(ws):
    preferences.set_(ws, "tone", "formal", now="2026-01-01")
    (ws.memory / "preferences.json").write_text('{"tone": "casual"}', encoding="utf-8")
    preferences.set_(ws, "emoji", "no", now="2026-01-02")
    assert [h["action"] for h in preferences.history(ws, "tone")] == ["set", "hand-edit"]


def test_hand_broken_preferences_are_never_overwritten(ws):
    path = ws.memory / "preferences.json"
    broken = '{"tone": "formal",\n "emoji": }\n'
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(preferences.BrokenPreferences, match=r"not valid JSON \(line 2, column 11"):
        preferences.set_(ws, "tone", "casual", now="2026-01-01")
    with pytest.raises(preferences.BrokenPreferences, match="will not overwrite"):
        preferences.unset(ws, "tone")
    assert path.read_text(encoding="utf-8") == broken
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(preferences.BrokenPreferences, match="one JSON object"):
        preferences.list_(ws)
    assert inject.inject(ws, "hello", now="2026-01-01")["warnings"]


def test_preference_values_are_redacted(ws):
    out = preferences.set_(ws, "deploy_token", "use ghp_" + "a" * 36, now="2026-01-01")
    assert "ghp_" not in (ws.memory / "preferences.json").read_text() and out["redacted"]


def test_skills_new_dedupes_updates_and_finds(ws):
    a = skills.new(ws, "deploy-docs", description="Publish the docs site", triggers=["deploy docs", "发布文档"],
                   tools=["bash"], steps=["make html", "rsync to server"], pitfalls=["stale cache"],
                   checks=["open the site"], now="2026-01-01T10:00")
    assert a["action"] == "created"
    b = skills.new(ws, "docs-deploy", description="deploy the docs", triggers=["publish docs"],
                   steps=["purge CDN"], now="2026-01-02T10:00")
    assert b["action"] == "updated" and b["slug"] == "deploy-docs" and "similar" in b["reason"]
    assert not (ws.memory / "skills" / "docs-deploy.md").exists()
    s = skills.load(ws, "deploy-docs")
    assert s.items("Procedure") == ["make html", "rsync to server", "purge CDN"]
    assert s.created == "2026-01-01 10:00" and s.updated == "2026-01-02 10:00"
    c = skills.new(ws, "bake-bread", description="sourdough at home", triggers=["烤面包"], now="2026-01-03")
    assert c["action"] == "created"
    assert skills.find(ws, "发布文档到服务器")[0]["slug"] == "deploy-docs"
    assert skills.find(ws, "how do I deploy the docs?")[0]["slug"] == "deploy-docs"
    assert skills.find(ws, "烤面包")[0]["slug"] == "bake-bread"
    with pytest.raises(UsageError, match="kebab-case"):
        skills.new(ws, "Bad Slug!")
    with ws.store() as st:
        rows = st.execute("MATCH (k:Meta {key: 'skill:deploy-docs'}) RETURN k.revisions AS r")
    assert rows[0]["r"] == 2


def _seed(ws):
    ws.log("error", "git push failed: authentication not configured", area="tooling", now="2026-01-05T10:00")
    ws.log("learning", "用户喜欢直接回答，不要解释太多", category="preference", now="2026-01-06T10:00")
    ws.log("learning", "pytest 需要先激活 venv 才能运行", now="2026-01-07T10:00")
    ws.node_add("principle", "Run the test suite before every push", now="2026-01-08")
    (ws.root / "MEMORY.md").write_text("# Memory\n\n## Self-Improvement Principles\n- Deploy docs with make "
                                       "html then rsync\n", encoding="utf-8")


@pytest.mark.parametrize("query, expected", [
    ("git push auth", "git push failed"),
    ("直接回答", "用户喜欢直接回答"),
    ("pytest venv", "pytest 需要先激活 venv"),
    ("激活虚拟环境 pytest", "pytest 需要先激活 venv"),
    ("pushing authentication", "git push failed"),
    ("deploy docs rsync", "Deploy docs with make html"),
])
def test_search_en_zh_mixed(ws, query, expected):
    _seed(ws)
    hits = search.search(ws, query, now="2026-01-10")
    assert hits and expected in hits[0].text, [h.text for h in hits]


def test_search_hit_says_where_and_folds_daily_twins(ws):
    _seed(ws)
    hit = search.search(ws, "git push authentication", now="2026-01-10")[0]
    assert hit.source == "graph" and hit.location.startswith("graph ERR-20260105-001 (error")
    assert hit.also == ["memory/2026-01-05.md:3"]
    mem = search.search(ws, "rsync", now="2026-01-10")[0]
    assert mem.source == "MEMORY.md" and mem.location == "MEMORY.md:4"


def test_search_filters(ws):
    _seed(ws)
    sessions.start(ws, "2026-01-09T09:00")
    ws.log("learning", "push via ssh works", now="2026-01-09T10:00")
    assert {h.kind for h in search.search(ws, "push", type="principle", now="2026-01-10")} == {"principle"}
    assert [h.text for h in search.search(ws, "push", session="2026-01-09-001", sources=["graph"],
                                          now="2026-01-10")] == ["push via ssh works"]
    recent = search.search(ws, "push", since="2026-01-08", sources=["graph"], now="2026-01-10")
    assert all(h.created_at >= "2026-01-08" for h in recent) and recent
    with pytest.raises(UsageError, match="unknown type"):
        search.search(ws, "push", type="bogus")
    with pytest.raises(UsageError, match="empty"):
        search.search(ws, "  ")


def test_search_held_and_direct_agree(ws):
    _seed(ws)
    direct = [h.as_dict() for h in search.search(ws, "push tests", now="2026-01-10", sources=["graph"])]
    with ws:
        held = [h.as_dict() for h in search.search(ws, "push tests", now="2026-01-10", sources=["graph"])]
    assert direct == held


def test_inject_is_relevant_budgeted_and_deterministic(ws):
    _seed(ws)
    preferences.set_(ws, "answer_style", "直接回答", now="2026-01-08")
    ws.node_add("lesson", "git push needs an ssh key set up first", now="2026-01-08")
    a = inject.inject(ws, "how do I git push?", now="2026-01-10", budget=600)
    b = inject.inject(ws, "how do I git push?", now="2026-01-10", budget=600)
    assert a == b and a["chars"] <= 600
    block = a["block"]
    assert "### Preferences\n- answer_style: 直接回答" in block
    assert "Run the test suite before every push" in block and "git push needs an ssh key" in block
    assert "### Watch list\n- git push failed: authentication not configured (high, pending)" in block
    small = inject.inject(ws, "how do I git push?", now="2026-01-10", budget=120)
    assert small["chars"] <= 120 and small["dropped"] > 0


def test_topics_build_and_recall(ws):
    _seed(ws)
    ws.log("error", "python script crashed with a bug", now="2026-01-09T10:00")
    built = topics.build(ws, now="2026-01-10")
    assert built["nodes_linked"] >= 1 and (ws.memory / ".memory-index.json").exists()
    r = topics.recall(ws, "code", now="2026-01-10")
    assert any("python script crashed" in n["text"] for n in r["nodes"])
    assert topics.recall(ws, message="the python bug again", now="2026-01-10")["topic"] == "code"
    with pytest.raises(UsageError, match="unknown topic"):
        topics.recall(ws, "nope")


def test_scores_and_trends(ws):
    scores.record(ws, [6, 6, 6, 6, 6], now="2026-01-01T09:00")
    scores.record(ws, [9, 9, 8, 9, 9], notes="good", now="2026-01-03T09:00")
    t = scores.trends(ws, 7, now="2026-01-04").as_dict()
    assert [r["date"] for r in t["rows"]] == ["2026-01-01", "2026-01-03"] and t["trend"] == "↑"
    assert scores.trends(ws, 1, now="2026-01-10").count == 0
    with pytest.raises(UsageError):
        scores.record(ws, [1, 2, 3, 4, 99])


@pytest.mark.slow
def test_locomo_slice_beats_bm25(shared_data):
    """One LoCoMo conversation through the real write and search paths: a sane floor, and above BM25."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "locomo_eval.py"
    spec = importlib.util.spec_from_file_location("locomo_eval", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    result = mod.run(shared_data / "locomo" / "locomo_dev.json", 1, quiet=True)
    assert result["kg"]["overall@10"] >= 0.6
    assert result["kg"]["overall@10"] > result["bm25"]["overall@10"] + 0.05


def test_inject_held_and_direct_agree(ws):
    _seed(ws)
    ws.node_add("principle", "Never force-push to main", now="2026-01-09")
    direct = inject.inject(ws, "push to main", now="2026-01-10")
    with ws:
        held = inject.inject(ws, "push to main", now="2026-01-10")
    assert direct == held


def test_search_skips_a_trail_that_mirrors_the_graph(ws):
    """A trail JSON whose entries are all graph nodes (imported, or exported by kg) is not parsed on every
    search; one the seed's tool went on writing (ids the graph lacks at its end) is searched."""
    logged = ws.log("error", "gradle daemon crashed on the wharf build", now="2026-03-01T10:00", wait=True)
    trail = ws.memory / ".learning-trail.json"
    entry = {"id": logged.id, "summary": "gradle daemon crashed on the wharf build"}
    trail.write_text(json.dumps({"version": 3, "entries": [entry]}), encoding="utf-8")
    hits = search.search(ws, "gradle wharf", now="2026-03-02", sources=["trail"])
    assert hits == []
    assert search.mirrors_graph(trail, lambda ids: ids == [logged.id, logged.id])
    later = {"id": "ERR-20260302-900", "summary": "gradle wharf cache corrupted after the upgrade"}
    trail.write_text(json.dumps({"version": 3, "entries": [entry, later]}), encoding="utf-8")
    hits = search.search(ws, "gradle wharf", now="2026-03-02", sources=["trail"])
    assert [h.source for h in hits] == ["trail", "trail"]
    assert any("cache corrupted" in h.text for h in hits)


def test_recall_folds_nodes_that_read_the_same_and_refuses_a_limit_below_one(ws):
    # one failed edit retried six times took every place of the recall's graph part
    for i in range(6):
        ws.log("error", "python edit failed: SEARCH/REPLACE block did not match", now=f"2026-01-09T10:0{i}",
               link=False)
    ws.log("error", "python script crashed with a bug", now="2026-01-08T10:00", link=False)
    topics.build(ws, now="2026-01-10")
    r = topics.recall(ws, "code", now="2026-01-10")
    texts = [n["text"] for n in r["nodes"]]
    assert len(texts) == len(set(texts)) and "python script crashed with a bug" in texts
    folded = next(n for n in r["nodes"] if "SEARCH/REPLACE" in n["text"])
    assert len(folded["alike"]) == 5 and "(×6)" in topics.render_recall(r)
    with pytest.raises(UsageError, match="--limit must be at least 1"):
        topics.recall(ws, "code", limit=-1)  # sliced [:-1] before: every file but the last
