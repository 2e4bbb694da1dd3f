"""Auto-linking, near-duplicate patterns and graph queries on a real Kùzu workspace."""

from __future__ import annotations

import pytest

from kg.core.errors import NotFound, UsageError
from kg.graph import linking, patterns
from kg.graph import queries as graphq

# The same mistake, worded three ways (claude_code transcript 258c7280: "Exit code 128 / fatal: The current
# branch spotter-gqc has no upstream branch").
PUSH = [
    "git push failed: The current branch spotter-gqc has no upstream branch",
    "Pushing the session branch failed because no upstream branch was set",
    "git push error, need --set-upstream origin for the new branch",
]
PUSH_ZH = ["推送失败：当前分支没有上游分支", "git push 失败，因为当前分支没有设置上游分支",
           "推送又失败了：分支没有上游分支"]


def _log3(ws, texts, area="tooling", kind="error"):
    return [ws.log(kind, t, area=area, session=f"s{i}", now=f"2026-05-0{i + 1}T10:00:00")
            for i, t in enumerate(texts)]


def test_same_mistake_three_ways_is_one_pattern_with_recurrence_3(ws):
    first, second, third = _log3(ws, PUSH)
    assert first.pattern is None
    assert second.pattern_key == third.pattern_key
    key = third.pattern_key
    assert key == linking.derived_key(linking.rules_of(ws.rules), "error", "tooling", PUSH[0])
    assert third.pattern["recurrence"] == 3 and third.pattern["sessions"] == 3
    rows = patterns.list_patterns(ws)
    assert [(r["key"], r["recurrence"], r["sessions"]) for r in rows] == [(key, 3, 3)]
    assert rows[0]["first_seen"].startswith("2026-05-01") and rows[0]["last_seen"].startswith("2026-05-03")
    # every member carries the key now, as if it had been named
    assert {ws.show(r.id)["node"]["pattern_key"] for r in (first, second, third)} == {key}
    # the members are not also related_to each other: the pattern joins them
    assert all(e["type"] == "derived_from" for e in ws.show(first.id)["edges"])


def test_chinese_and_mixed_wording_forms_one_pattern(ws):
    results = _log3(ws, PUSH_ZH)
    assert results[-1].pattern["recurrence"] == 3


def test_other_area_or_kind_or_unrelated_text_stays_apart(ws):
    ws.log("error", PUSH[0], area="tooling", now="2026-05-01T10:00:00")
    other_area = ws.log("error", PUSH[1], area="backend", now="2026-05-02T10:00:00")
    other_kind = ws.log("learning", PUSH[1], area="tooling", now="2026-05-02T11:00:00")
    unrelated = ws.log("error", "Bash eval failed with exit code 1: permission denied", area="tooling",
                       now="2026-05-02T12:00:00")
    assert other_area.pattern is None and other_kind.pattern is None and unrelated.pattern is None
    assert patterns.list_patterns(ws) == []


def test_contradicting_learnings_are_never_merged(ws):
    a = ws.log("learning", "Use pnpm instead of npm to install packages", area="tooling",
               now="2026-05-01T10:00:00")
    b = ws.log("learning", "Use npm, not pnpm, to install packages", area="tooling", now="2026-05-02T10:00:00")
    assert b.pattern is None and patterns.list_patterns(ws) == []
    edges = ws.show(b.id)["edges"]
    assert [(e["type"], e["other"], e["direction"]) for e in edges] == [("contradicts", a.id, "out")]


def test_a_contradicting_principle_gets_contradicts_not_a_merge(ws):
    p1 = ws.node_add("principle", "Prefer the read tool over exec for viewing files", now="2026-05-01T10:00:00")
    p2 = ws.node_add("principle", "Use exec instead of the read tool for viewing files", now="2026-05-02T10:00:00")
    assert [(e["type"], e["from"], e["to"]) for e in p2["links"]] == [("contradicts", p2["id"], p1["id"])]
    assert "one refuses what the other wants" in p2["links"][0]["reason"]
    assert patterns.list_patterns(ws) == []
    assert ws.show(p1["id"])["node"]["kind"] == "principle"


def test_event_lesson_principle_chain_and_the_queries_show_it(ws):
    events = _log3(ws, PUSH)
    lesson = ws.node_add("lesson", "Set the upstream when pushing a new branch: git push --set-upstream origin",
                         now="2026-05-04T10:00:00")
    principle = ws.node_add("principle", "Always push new branches with --set-upstream origin",
                            now="2026-05-05T10:00:00")
    against = ws.node_add("principle", "Never push new branches with --set-upstream, push to origin by name",
                          now="2026-05-06T10:00:00")
    assert [e["type"] for e in lesson["links"]] == ["caused_by"]  # one edge into the pattern, not three
    assert lesson["links"][0]["from"] == lesson["id"] and lesson["links"][0]["to"] in {e.id for e in events}
    assert ("led_to", lesson["id"], principle["id"]) in {(e["type"], e["from"], e["to"]) for e in principle["links"]}
    assert {e["type"] for e in against["links"]} >= {"contradicts"}

    # whole graph: every node and edge, grouped by kind
    whole = graphq.query(ws, "all")
    assert whole["counts"] == {"event": 3, "lesson": 1, "principle": 2, "knowledge": 0, "pattern": 1}
    assert whole["total_edges"] == len(whole["edges"])
    types = {e["type"] for e in whole["edges"]}
    assert {"derived_from", "caused_by", "led_to", "contradicts"} <= types

    # by type, one step out: the lessons and their neighbours
    by_type = graphq.query(ws, "type:lesson", depth=1)
    assert by_type["start"] == [lesson["id"]]
    assert principle["id"] in {n["id"] for n in by_type["nodes"]}

    # the chain from the first event to the principle
    chain = graphq.path(ws, events[0].id, principle["id"])
    assert chain["found"] and chain["nodes"][0]["id"] == events[0].id
    assert chain["nodes"][-1]["id"] == principle["id"]
    for here, hop, there in zip(chain["nodes"], chain["hops"], chain["nodes"][1:], strict=False):
        assert {hop["from"], hop["to"]} == {here["id"], there["id"]}
        assert hop["forward"] is (hop["from"] == here["id"])
    step = graphq.path(ws, lesson["id"], principle["id"])
    assert [(h["type"], h["forward"]) for h in step["hops"]] == [("led_to", True)]
    back = graphq.path(ws, lesson["links"][0]["to"], lesson["id"])
    assert [(h["type"], h["forward"]) for h in back["hops"]] == [("caused_by", False)]

    # why: the stored reasons
    why = graphq.explain(ws, lesson["id"])
    assert {(e["direction"], e["type"]) for e in why["edges"]} >= {("out", "caused_by"), ("out", "led_to"),
                                                                   ("in", "contradicts")}
    assert all(e["reason"] and (e["manual"] or e["score"] > 0) for e in why["edges"])


def test_link_auto_is_idempotent_and_never_self_links(ws):
    a = ws.node_add("lesson", "Re-read the file before an edit so the string to replace still matches",
                    link=False, now="2026-05-01T10:00:00")
    b = ws.log("error", "Edit failed: string to replace not found in file", now="2026-05-02T10:00:00",
               link=False)
    assert ws.show(a["id"])["edges"] == [] and ws.show(b.id)["edges"] == []
    dry = ws.link_auto(a["id"], dry_run=True, now="2026-05-03T10:00:00")
    assert [e["other"] for e in dry["links"]] == [b.id] and ws.show(a["id"])["edges"] == []
    made = ws.link_auto(a["id"], now="2026-05-03T10:00:00")
    assert [(e["type"], e["from"], e["to"]) for e in made["links"]] == [("caused_by", a["id"], b.id)]
    assert ws.link_auto(a["id"], now="2026-05-03T10:00:00")["links"] == []
    assert ws.link_auto(b.id, now="2026-05-03T10:00:00")["links"] == []  # no reverse duplicate
    with pytest.raises(NotFound):
        ws.link_auto("nope")


def test_a_manual_edge_is_kept_and_not_duplicated(ws):
    a = ws.node_add("lesson", "Run mix format before committing", now="2026-05-01T10:00:00", link=False)
    b = ws.log("error", "Pre-commit validation failed: code is not formatted, run mix format",
               now="2026-05-02T10:00:00", link=False)
    ws.edge_add(b.id, a["id"], "led_to", reason="by hand")
    assert ws.link_auto(a["id"])["links"] == []
    assert [e["manual"] for e in ws.show(a["id"])["edges"]] == [True]


def test_no_link_skips_links_and_patterns_but_keeps_an_explicit_key(ws):
    _log3(ws, PUSH[:2])
    quiet = ws.log("error", PUSH[2], area="tooling", link=False, now="2026-05-09T10:00:00")
    assert ws.show(quiet.id)["edges"] == []
    keyed = ws.log("error", "git push failed again", pattern_key="git.push", link=False,
                   now="2026-05-09T11:00:00")
    assert keyed.pattern["key"] == "git.push" and keyed.pattern["recurrence"] == 1


def test_an_event_with_no_key_joins_an_explicit_pattern(ws):
    named = ws.log("error", PUSH[0], area="tooling", pattern_key="git.push.upstream", now="2026-05-01T10:00:00")
    later = ws.log("error", PUSH[1], area="tooling", now="2026-05-02T10:00:00")
    assert later.pattern_key == named.pattern_key == "git.push.upstream"
    assert later.pattern["recurrence"] == 2


def test_journal_backlog_applies_in_order(ws):
    """Entries logged while the graph was busy are applied together: the earlier ones are the pattern."""
    for i, text in enumerate(PUSH):
        ws.log("error", text, area="tooling", apply=False, now=f"2026-05-0{i + 1}T10:00:00")
    report = ws.drain()
    assert report.applied == 3
    [row] = patterns.list_patterns(ws)
    assert row["recurrence"] == 3


def test_keyword_table_counts_nodes_and_is_rebuilt_for_an_old_graph(ws):
    _log3(ws, PUSH)
    with ws.store() as st:
        assert st.run("link_terms_df", term=linking.DOCS_KEY)[0]["df"] == 4  # 3 events + the pattern
        assert st.run("link_terms_df", term="upstream")[0]["df"] >= 3
        st.run("link_terms_clear")  # as on a graph made before migration 0004
    ws.node_add("lesson", "Set the upstream when pushing a new branch", now="2026-05-04T10:00:00")
    with ws.store() as st:
        assert st.run("link_terms_df", term=linking.DOCS_KEY)[0]["df"] == 5


def test_keyword_table_kept_by_the_write_path_equals_a_recount(ws):
    """Logs (linked or not), hand-made nodes and new patterns each count their keywords exactly once."""
    _log3(ws, PUSH)
    ws.log("error", "推送失败，当前分支没有上游分支", area="tooling", now="2026-05-04T10:00:00")
    ws.log("learning", "Set the upstream with git push -u", link=False, now="2026-05-04T11:00:00")
    ws.log("error", "git push failed: no upstream", pattern_key="push.named", now="2026-05-04T12:00:00")
    ws.node_add("principle", "Always set the upstream branch when pushing", now="2026-05-05T10:00:00")
    ws.node_add("knowledge", "!!!", now="2026-05-05T11:00:00")  # no keywords at all
    with ws.store() as st:
        kept = {r["term"]: r["df"] for r in st.execute("MATCH (x:Term) WHERE x.df > 0 RETURN x.term AS term, "
                                                         "x.df AS df")}
        rules = linking.rules_of(ws.rules)
        linking.rebuild_terms(st, rules)
        recount = {r["term"]: r["df"] for r in st.execute("MATCH (x:Term) RETURN x.term AS term, x.df AS df")}
    assert kept == recount and recount[linking.DOCS_KEY] == 10  # 6 entries, 2 patterns, 2 hand-made nodes


def test_a_pattern_key_finds_its_pattern_through_a_stale_or_merged_cache_entry(ws):
    """The key -> pattern id cache in Meta is checked on use: a wrong entry falls back to the scan, and a
    merged pattern's key finds the pattern it went into."""
    a = ws.log("error", "git push failed: no upstream", pattern_key="push.a", now="2026-05-01T10:00:00")
    ws.log("error", "git push rejected: non fast forward", pattern_key="push.b", now="2026-05-02T10:00:00")
    with ws.store() as st:
        st.run("meta_set", key="pattern-key:push.a", value=a.id)  # an event's id: stale
    again = ws.log("error", "git push failed again: no upstream", pattern_key="push.a", now="2026-05-03T10:00:00")
    assert again.pattern["key"] == "push.a" and again.pattern["recurrence"] == 2
    patterns.merge(ws, "push.b", "push.a", now="2026-05-04T10:00:00")
    later = ws.log("error", "git push: no upstream set", pattern_key="push.a", now="2026-05-05T10:00:00")
    assert later.pattern["key"] == "push.b" and later.pattern["recurrence"] == 4
    assert [r["key"] for r in patterns.list_patterns(ws)] == ["push.b"]


def test_merge_and_split_patterns(ws):
    a = ws.log("error", "git push failed: no upstream", pattern_key="push.a", now="2026-05-01T10:00:00")
    b = ws.log("error", "git push rejected: non fast forward", pattern_key="push.b", now="2026-05-02T10:00:00")
    merged = patterns.merge(ws, "push.a", "push.b", now="2026-05-03T10:00:00")
    assert merged["moved"] == [b.id] and merged["recurrence"]["recurrence"] == 2
    assert [r["key"] for r in patterns.list_patterns(ws)] == ["push.a"]
    # the old key still finds the live pattern
    again = ws.log("error", "git push rejected again", pattern_key="push.b", now="2026-05-04T10:00:00")
    assert again.pattern["key"] == "push.a" and again.pattern["recurrence"] == 3
    with pytest.raises(UsageError, match="was merged into"):
        patterns.merge(ws, "push.a", "push.b")
    with pytest.raises(UsageError, match="same pattern"):
        patterns.merge(ws, "push.a", "push.a")

    out = patterns.split(ws, "push.a", [b.id, again.id], key="push.rejected", now="2026-05-05T10:00:00")
    assert out["recurrence"]["recurrence"] == 1 and out["new_recurrence"]["recurrence"] == 2
    assert ws.show(b.id)["node"]["pattern_key"] == "push.rejected"
    gone = patterns.split(ws, "push.rejected", [b.id], detach=True)
    assert gone["key"] is None and ws.show(b.id)["node"]["pattern_key"] is None
    with pytest.raises(UsageError, match="not in pattern"):
        patterns.split(ws, "push.a", [b.id])
    with pytest.raises(NotFound):
        patterns.split(ws, "nope", [a.id])


def test_graph_query_errors(ws):
    with pytest.raises(UsageError, match="unknown type 'bogus'"):
        graphq.query(ws, "type:bogus")
    with pytest.raises(NotFound):
        graphq.query(ws, "les-20990101-001")
    with pytest.raises(UsageError, match="--depth"):
        graphq.query(ws, "all", depth=9)
    assert graphq.query(ws, "type:lesson")["total_nodes"] == 0


def test_query_by_tag_and_error_type(ws):
    n = ws.node_add("knowledge", "Kuzu FTS splits on whitespace only", tags=["kuzu"], now="2026-05-01T10:00:00")
    e = ws.log("error", "Edit failed: string to replace not found in file", now="2026-05-01T11:00:00")
    assert graphq.query(ws, "tag:kuzu", depth=0)["start"] == [n["id"]]
    assert graphq.query(ws, "type:error", depth=0)["start"] == [e.id]
