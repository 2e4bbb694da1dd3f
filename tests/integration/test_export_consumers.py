"""Every export opened by the tool it is for: networkx's readers, Graphviz `dot`, a fresh Kùzu database for the
Cypher script (replayed twice: nothing changes), and Mermaid within its renderers' limits. The graph is a
Chinese-language one, the hardest text the formats have to carry."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

import kg
from kg import analysis as ka
from kg.analysis import export as ke

AREAS = {"部署": "deploy.ssh", "数据库": "db.migrate", "前端": "ui.build", "测试": "tests.flaky", "文档": "docs.links"}
WHAT = ["连接超时", "权限被拒绝", "版本冲突", "配置缺失", "内存不足", "依赖未安装"]


@pytest.fixture(scope="module")
def chinese(tmp_path_factory):
    """About fifty nodes in Chinese: errors in five areas with their patterns, lessons, principles, links."""
    ws = kg.init_workspace(tmp_path_factory.mktemp("zh") / "ws")
    with ws:
        errors = []
        for i in range(30):
            area = list(AREAS)[i % 5]
            r = ws.log("error", f"{area}失败：{WHAT[i % 6]}（第{i}次）", area=area, pattern_key=AREAS[area],
                       session=f"s{i % 7}", now=f"2026-11-{1 + i % 28:02d}T10:{i:02d}:00", wait=True,
                       details="第一行\n第二行：\"引号\" <xml> & #号")
            errors.append(r.id)
        lessons = [ws.node_add("lesson", f"{area}之前先检查{WHAT[j % 6]}的原因",
                               now=f"2026-11-{10 + j:02d}T12:00")["id"] for j, area in enumerate(list(AREAS) * 2)]
        principles = [ws.node_add("principle", text, now=f"2026-11-2{j}T12:00")["id"]
                      for j, text in enumerate(["动手之前先读错误信息", "每次变更都要能回滚", "配置写进版本库",
                                                "失败两次就停下来想一想"])]
        for j, lesson in enumerate(lessons):
            for a, b, t in ((lesson, errors[j], "caused_by"), (principles[j % 4], lesson, "derived_from")):
                try:
                    ws.edge_add(a, b, t, now="2026-11-28T12:00")
                except kg.UsageError:
                    pass
        ws.edge_add(principles[3], principles[0], "contradicts", now="2026-11-28T13:00")
    return ws


@pytest.fixture(scope="module")
def graph(chinese):
    return ka.to_networkx(chinese)


def test_the_graph_is_the_size_the_issue_names(graph):
    assert 45 <= graph.number_of_nodes() <= 60 and graph.number_of_edges() >= 40


def test_graphml_has_gephi_labels_and_colours(chinese, graph, tmp_path):
    out = tmp_path / "g.graphml"
    ke.export_graph(chinese, "graphml", out=out)
    back = nx.read_graphml(out, force_multigraph=True)
    assert set(back.nodes) == set(graph.nodes) and back.number_of_edges() == graph.number_of_edges()
    for node, attrs in back.nodes(data=True):
        assert attrs["label"].startswith(node) and attrs["text"][:10] in attrs["label"]
        assert (attrs["r"], attrs["g"], attrs["b"]) == ke._rgb(ke.KIND_COLORS[attrs["kind"]])
    assert {a["label"] for _, _, a in back.edges(data=True)} == {t for _, _, t in graph.edges(data="type")}


def test_gexf_has_labels_and_colours(chinese, graph, tmp_path):
    out = tmp_path / "g.gexf"
    ke.export_graph(chinese, "gexf", out=out)
    back = nx.read_gexf(out)
    assert set(back.nodes) == set(graph.nodes)
    some = next(n for n, a in graph.nodes(data=True) if a["kind"] == "principle")
    assert back.nodes[some]["label"] == f"{some}: {graph.nodes[some]['text']}"
    assert back.nodes[some]["viz"]["color"]["g"] == ke._rgb(ke.KIND_COLORS["principle"])[1]


def test_json_is_networkx_node_link_with_links(chinese, graph):
    data = json.loads(ke.export_graph(chinese, "json").text)
    assert "links" in data and "edges" not in data
    back = nx.node_link_graph(data, edges="links")
    assert back.is_multigraph() and back.is_directed()
    assert set(back.nodes) == set(graph.nodes) and back.number_of_edges() == graph.number_of_edges()
    assert any("部署" in a["text"] for _, a in back.nodes(data=True))


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed (apt-get install graphviz)")
def test_dot_renders_in_graphviz(chinese, graph, tmp_path):
    out = tmp_path / "g.dot"
    ke.export_graph(chinese, "dot", out=out)
    done = subprocess.run(["dot", "-Tsvg", str(out)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count('class="node"') == graph.number_of_nodes()
    assert done.stdout.count('class="edge"') == graph.number_of_edges()
    assert "数据库失败" in done.stdout
    plain = subprocess.run(["dot", "-Tplain", str(out)], capture_output=True, text=True, timeout=120, check=True)
    assert sum(ln.startswith("node ") for ln in plain.stdout.splitlines()) == graph.number_of_nodes()


def _counts(conn) -> tuple[int, int]:
    nodes = conn.execute("MATCH (n:Node) RETURN count(n)").get_next()[0]
    edges = conn.execute("MATCH (:Node)-[r]->(:Node) RETURN count(r)").get_next()[0]
    return nodes, edges


def test_kuzu_cypher_replays_twice_into_a_fresh_kuzu_database(chinese, graph, tmp_path):
    """What a Kùzu user does with the file: run its statements in a new database, then run them again."""
    import kuzu

    script = tmp_path / "g.cypher"
    ke.export_graph(chinese, "cypher", dialect="kuzu", out=script)
    db = kuzu.Database(str(tmp_path / "fresh.kuzu"))
    conn = kuzu.Connection(db)
    statements = ke.split_cypher(script.read_text(encoding="utf-8"))
    seen = []
    for _ in range(2):
        for statement in statements:
            conn.execute(statement)
        seen.append(_counts(conn))
    assert seen == [(graph.number_of_nodes(), graph.number_of_edges())] * 2
    row = conn.execute("MATCH (n:Node) WHERE n.kind = 'principle' AND n.text CONTAINS '回滚' "
                       "RETURN n.text").get_next()
    assert row == ["每次变更都要能回滚"]
    details = conn.execute("MATCH (n:Node) WHERE n.details IS NOT NULL RETURN n.details LIMIT 1").get_next()[0]
    assert details == "第一行\n第二行：\"引号\" <xml> & #号"


@pytest.mark.embedded_only("kg export cypher writes Kùzu DDL, replayed into a Kùzu file")
def test_kuzu_cypher_replays_twice_into_a_new_workspace(chinese, graph, tmp_path):
    text = ke.export_graph(chinese, "cypher").text
    fresh = kg.init_workspace(tmp_path / "fresh")
    for _ in range(2):
        ke.replay_cypher(fresh, text)
        again = ka.to_networkx(fresh)
        assert (again.number_of_nodes(), again.number_of_edges()) == (graph.number_of_nodes(),
                                                                       graph.number_of_edges())
    assert dict(again.nodes(data=True)) == dict(graph.nodes(data=True))


def test_neo4j_cypher_is_idempotent_and_in_neo4j_syntax(chinese, graph):
    text = ke.export_graph(chinese, "cypher", dialect="neo4j").text
    statements = ke.split_cypher(text)
    assert statements[0] == "CREATE CONSTRAINT kaizen_kg_node_id IF NOT EXISTS FOR (n:Node) REQUIRE n.id IS UNIQUE"
    nodes = [s for s in statements if s.startswith("MERGE (n:Node {id: ")]
    edges = [s for s in statements if s.startswith("MATCH (a:Node")]
    assert (len(nodes), len(edges)) == (graph.number_of_nodes(), graph.number_of_edges())
    assert all(" MERGE (a)-[r:" in s for s in edges)
    assert "localdatetime('2026-11-01T10:00:00')" in text and "timestamp(" not in text
    assert "decode(BLOB" not in text and "CREATE NODE TABLE" not in text and "tokens" not in text
    assert "n.details = '第一行\\n第二行：\"引号\" <xml> & #号'" in text
    assert any(s.endswith(", n:Principle") for s in nodes)


def test_dialect_is_for_cypher_only_and_named(chinese):
    with pytest.raises(ValueError, match="dialect is for fmt='cypher', not 'json'"):  # (a kg.UsageError too)
        ke.export_graph(chinese, "json", dialect="neo4j")
    with pytest.raises(kg.UsageError, match="unknown Cypher dialect 'gremlin': use kuzu or neo4j"):
        ke.export_graph(chinese, "cypher", dialect="gremlin")


def _big_graph(n: int = 420) -> nx.MultiDiGraph:
    g = nx.MultiDiGraph()
    for i in range(n):
        g.add_node(f"evt-{i:04d}", kind="event", text=f"一个相当长的中文错误描述，编号 {i}，" * 3)
    for i in range(1, n):
        g.add_edge(f"evt-{i:04d}", f"evt-{(i * 7) % i:04d}", key="related_to", type="related_to")
        g.add_edge(f"evt-{i:04d}", "evt-0000", key="supports", type="supports")
    return g


def test_mermaid_past_the_limits_warns_and_keeps_the_most_central():
    big = _big_graph()
    assert len(ke.to_mermaid(big)) > ke.MERMAID_MAX_TEXT
    kept, warning = ke.trim_for_mermaid(big)
    text = ke.to_mermaid(kept)
    assert len(text) <= ke.MERMAID_MAX_TEXT and kept.number_of_edges() <= ke.MERMAID_MAX_EDGES
    assert "evt-0000" in kept and kept.number_of_nodes() > 50
    assert warning.startswith("420 nodes and ") and f"kept the {kept.number_of_nodes()} most connected" in warning
    # one node more would not fit
    ranked = sorted(big.nodes, key=lambda v: (-big.degree(v), v))
    more = big.subgraph(ranked[:kept.number_of_nodes() + 1])
    assert len(ke.to_mermaid(more)) > ke.MERMAID_MAX_TEXT or more.number_of_edges() > ke.MERMAID_MAX_EDGES


def test_mermaid_that_fits_is_untouched(graph):
    kept, warning = ke.trim_for_mermaid(graph)
    assert kept is graph and warning is None


def test_cli_warns_when_mermaid_is_trimmed(chinese, tmp_path):
    """A workspace of 420 linked events: `kg export graph -f mermaid` says on stderr what it left out."""
    ws = kg.init_workspace(tmp_path / "big")
    script = "\n".join(ke.to_cypher(_big_graph(), schema=False).splitlines()[3:])
    ke.replay_cypher(ws, script)
    kg_bin = str(Path(sys.executable).with_name("kg"))
    done = subprocess.run([kg_bin, "-w", str(ws.root), "export", "graph", "-f", "mermaid", "-o", "g.mmd"],
                          capture_output=True, text=True, timeout=120, check=False)  # relative: in the workspace
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("Warning: 420 nodes and ") and "narrow it with --type or --since" in done.stderr
    assert len((ws.root / "g.mmd").read_text(encoding="utf-8")) <= ke.MERMAID_MAX_TEXT


NODE_MODULES = os.environ.get("KG_NODE_MODULES")


@pytest.mark.skipif(not (NODE_MODULES and shutil.which("node") and Path(NODE_MODULES, "mermaid").is_dir()),
                    reason="mermaid's parser: `npm install mermaid@11 jsdom@24` in a folder, KG_NODE_MODULES=its "
                           "node_modules")
def test_mermaid_parses_in_mermaid_itself(chinese, tmp_path):
    """mermaid's own parser reads the Chinese export, refuses the untrimmed 420-node file (its edge limit) and
    reads the trimmed one."""
    script = Path(__file__).with_name("mermaid_parse.mjs")

    def parse(text: str) -> dict:
        path = tmp_path / "g.mmd"
        path.write_text(text, encoding="utf-8")
        done = subprocess.run(["node", str(script), str(path)], capture_output=True, text=True, timeout=180,
                              check=False, env={**os.environ, "KG_NODE_MODULES": NODE_MODULES})
        return json.loads(done.stdout.strip().splitlines()[-1])

    assert parse(ke.export_graph(chinese, "mermaid").text)["ok"] is True
    big = _big_graph()
    refused = parse(ke.to_mermaid(big))
    assert refused["ok"] is False and "Edge limit exceeded" in refused["error"]
    kept, _ = ke.trim_for_mermaid(big)
    assert parse(ke.to_mermaid(kept)) == {"ok": True, "type": "flowchart-v2", "chars": len(ke.to_mermaid(kept))}
