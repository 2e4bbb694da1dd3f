"""The analyst's functions refuse a wrong argument at the call, naming it and what is accepted (QA of fx2):
`central(top='x')` was a TypeError from a slice deep inside, `a.central(kinds=("principal",))` and
`error_timeline(by="areas")` answered as if nothing were there, a negative count was taken. Each is kg's usage
error and a ValueError. Hand-built graphs, no database (a folder that is not a workspace is a real folder)."""

from __future__ import annotations

from datetime import datetime

import networkx as nx
import pytest

from kg import analysis as ka
from kg.analysis import export as ke
from kg.core.errors import ArgumentError, UsageError


@pytest.fixture(scope="module")
def graph() -> nx.MultiDiGraph:
    g = nx.MultiDiGraph()
    for i, day in enumerate((1, 2, 9), 1):
        g.add_node(f"e{i}", kind="event", entry_type="error", area="tooling", session=f"s{i}", text=f"error {i}",
                   created_at=datetime(2026, 11, day, 10))
    g.add_node("pat", kind="pattern", pattern_key="git.push", text="git push", created_at=datetime(2026, 11, 1))
    g.add_node("pri", kind="principle", text="set the upstream", created_at=datetime(2026, 11, 10))
    for e in ("e1", "e2", "e3"):
        g.add_edge("pat", e, key="derived_from", type="derived_from")
    g.add_edge("pri", "pat", key="supports", type="supports")
    return g


BAD = [
    ("central top text", lambda g: ka.central(g, top="x"), "top must be a whole number, at least 1 (got 'x')"),
    ("central top negative", lambda g: ka.central(g, top=-3), "top must be a whole number, at least 1 (got -3)"),
    ("central unknown kind", lambda g: ka.central(g, kinds=("principal",)),
     "kinds: unknown kind 'principal': use one or more of event, lesson, principle, knowledge, pattern"),
    ("communities unknown kind", lambda g: ka.communities(g, kind="lesons"), "kind: unknown kind 'lesons'"),
    ("communities negative size", lambda g: ka.communities(g, min_size=-1), "min_size must be a whole number"),
    ("chains unknown kind", lambda g: ka.chains(g, kind="rule"), "kind: unknown kind 'rule'"),
    ("orphans unknown kind", lambda g: ka.orphans(g, kinds=["lesson", "rules"]), "kinds: unknown kind 'rules'"),
    ("unsupported unknown kind", lambda g: ka.unsupported(g, kinds=("belief",)), "kinds: unknown kind 'belief'"),
    ("evidence negative hops", lambda g: ka.evidence(g, "pri", max_hops=-1), "max_hops must be a whole number"),
    ("recurrence top text", lambda g: ka.recurrence(g, top="5"), "top must be a whole number, at least 1 or None"),
    ("timeline unknown field", lambda g: ka.error_timeline(g, by="areas"),
     "by must name a field of the event nodes: one of area, created_at, entry_type, kind, session, text"),
    ("timeline unknown entry type", lambda g: ka.error_timeline(g, entry_type="failure"),
     "entry_type: unknown entry type 'failure': use one or more of learning, error, feature"),
    ("failing areas unknown entry type", lambda g: ka.failing_areas(g, entry_type="bug"),
     "entry_type: unknown entry type 'bug'"),
    ("failing areas given a path", lambda g: ka.failing_areas("path/to/workspace"),
     "graph must be a networkx graph: an Analysis (kg.analysis.load(...)), its .graph, or "
     "kg.analysis.to_networkx(...) (got str)"),
    ("neighbourhood depth text", lambda g: ka.neighbourhood(g, "pri", depth="2"), "depth must be a whole number"),
    ("neighbourhood negative limit", lambda g: ka.neighbourhood(g, "pri", limit=-3), "limit must be a whole number"),
    ("filter since a number", lambda g: ka.filter_graph(g, since=7), "since must be a span such as '7d'"),
    ("types a number", lambda g: ka.parse_types(5), "types must be text such as 'lesson,principle'"),
    ("pagerank damping", lambda g: ka.pagerank(g, damping=2), "damping must be a number between 0 and 1"),
    ("period unknown", lambda g: ka.recurrence(g, period="weekly"), "unknown period 'weekly'"),
    ("render a path", lambda g: ke.render("graph.json", "json"), "graph must be a networkx graph"),
    ("report top text", lambda g: ka.report(top="5"), "top must be a whole number, at least 1 (got '5')"),
    ("load a number", lambda g: ka.load(5), "workspace must be a Workspace, a workspace folder's path"),
    # (QA #10) a `now` kg's clock refused was a UsageError (no ValueError), a number an AttributeError (.strip),
    # and to_networkx/filter_graph without `since` never read it
    ("load now month 13", lambda g: ka.load("nowhere", now="2026-13-01"), "invalid --now '2026-13-01'"),
    ("load now a number", lambda g: ka.load("nowhere", now=5), "now must be a datetime or an ISO 8601 date"),
    ("rule effect now text", lambda g: ka.rule_effect(g, now="garbage"), "invalid --now 'garbage'"),
    ("rule effect now a number", lambda g: ka.rule_effect(g, now=5), "now must be a datetime"),
    ("to_networkx now text", lambda g: ka.to_networkx("nowhere", now="garbage"), "invalid --now 'garbage'"),
    ("filter now text", lambda g: ka.filter_graph(g, now="garbage"), "invalid --now 'garbage'"),
    ("filter now a number", lambda g: ka.filter_graph(g, types="lesson", now=5.0), "now must be a datetime"),
]


@pytest.mark.parametrize(("call", "said"), [(c, s) for _, c, s in BAD], ids=[n for n, _, _ in BAD])
def test_a_wrong_argument_is_refused_at_the_call_by_name(graph, call, said):
    with pytest.raises(ArgumentError) as caught:
        call(graph)
    assert said in str(caught.value)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, UsageError)  # Python's and kg's


def test_the_names_an_analyst_writes_are_taken(graph):
    """One kind as text is that kind (it was read letter by letter: nothing found), a plural is its singular,
    and an Analysis or its graph are both a graph."""
    assert [h["id"] for h in ka.central(graph, kinds="principle")] == ["pri"]
    assert [h["id"] for h in ka.central(graph, kinds=["principles", "patterns"])] == ["pat", "pri"]
    assert ka.error_timeline(graph, entry_type="errors").rows == ["tooling"]

    class Holder:  # what an Analysis offers: its graph
        pass

    holder = Holder()
    holder.graph = graph
    assert ka.failing_areas(holder) == ka.failing_areas(graph)


def test_the_plots_refuse_what_they_cannot_draw(graph, need):
    need("matplotlib")
    from kg.analysis import drawing as kd

    for call, said in [(lambda: kd.plot_timeline(graph), "table must be a Table"),
                       (lambda: kd.plot_heatmap(None), "table must be a Table"),
                       (lambda: kd.plot_rule_effect("x"), "rows must be the list of rows a.rule_effect() returns"),
                       (lambda: kd.plot_score_trends(5), "rows must be the list of rows a.score_trends() returns"),
                       (lambda: kd.draw_graph(graph, center="nope"), "center 'nope' is not a node"),
                       (lambda: kd.draw_graph("graph.png"), "graph must be a networkx graph")]:
        with pytest.raises(ArgumentError, match=said.replace("(", r"\(").replace(")", r"\)")):
            call()


def test_a_folder_that_is_not_a_workspace_and_a_bad_now_are_said_at_load(tmp_path, ws):
    with pytest.raises(ArgumentError, match="is not a kg workspace: run `kg init"):  # a usage error and a ValueError
        ka.load(tmp_path / "elsewhere")
    with pytest.raises(UsageError, match="invalid --now 'last tuesday'"):
        ka.load(ws, now="last tuesday")  # refused at load, not at the first question that reads the time


def test_a_path_that_is_no_workspace_and_a_bad_since_are_value_errors(tmp_path):
    """The README promises a ValueError for a wrong argument, a path that is not a workspace included; `load`
    raised NoWorkspace (kg's usage error only) and `to_networkx(since="garbage")` a UsageError."""
    import kg.analysis as ka

    with pytest.raises(ValueError, match="workspace"):
        ka.load(tmp_path)
    with pytest.raises(ValueError, match="garbage"):
        ka.filter_graph(nx.MultiDiGraph(), since="garbage")
