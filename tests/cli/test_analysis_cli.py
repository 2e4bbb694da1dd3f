"""`kg export graph`, `kg graph show`, `kg graph report`: exact output and exit codes."""

from __future__ import annotations

import json

import networkx as nx
import pytest

NOW = "2026-11-30T18:00:00"


@pytest.fixture
def logged(ws):
    first = ws.log("error", "git push failed: auth", area="tooling", pattern_key="git.push", now="2026-11-01T10:00")
    again = ws.log("error", "git push failed again", area="tooling", pattern_key="git.push", now="2026-11-08T10:00")
    lesson = ws.node_add("lesson", "configure credentials first", now="2026-11-09T10:00")["id"]
    return {"event": first.id, "again": again.id, "pattern": first.pattern["id"], "lesson": lesson}


def test_export_graph_to_stdout_is_the_document(run_kg, logged):
    r = run_kg("export graph --format json")
    assert r.exit_code == 0 and r.stderr == ""
    data = json.loads(r.stdout)
    assert {n["id"] for n in data["nodes"]} >= {logged["event"], logged["pattern"], logged["lesson"]}


def test_export_graph_to_file_reports(run_kg, logged, ws):
    tmp_path = ws.root  # --out stays inside the workspace
    out = tmp_path / "g.graphml"
    r = run_kg(["export", "graph", "--out", str(out), "--type", "event", "--type", "pattern", "--json"])
    assert r.exit_code == 0, r.stderr
    assert r.json == {"format": "graphml", "nodes": 3, "edges": 2, "out": str(out), "warnings": []}
    assert nx.read_graphml(out, force_multigraph=True).number_of_nodes() == 3
    r = run_kg(["export", "graph", "-f", "mermaid", "-o", str(tmp_path / "g.mmd")])
    assert r.stdout.startswith("Exported 4 nodes and ")
    assert r.stdout.endswith(f" edges to {tmp_path / 'g.mmd'} (mermaid)\n")


def test_export_graph_since(run_kg, logged):
    r = run_kg(f"export graph -f json --since 25d --now {NOW}")
    assert {n["id"] for n in json.loads(r.stdout)["nodes"]} == {logged["again"], logged["lesson"]}


@pytest.mark.parametrize(("args", "message"), [
    ("export graph --format xml",
     "Error: unknown format 'xml': use one of graphml, gexf, json, mermaid, dot, cypher\n"),
    ("export graph --type rules", ("Error: unknown type 'rules': use one or more of event, lesson, principle, "
                                   "knowledge, pattern, learning, error, feature (comma-separated)\n")),
    ("export graph --since yesterday", ("Error: invalid --since 'yesterday': use a span such as 7d, 12h, 2w or "
                                        "30m, or an ISO 8601 date or time such as 2026-11-30 or "
                                        "2026-11-30T10:35:00\n")),
    ("graph show --out x.png", ("Error: name a node id, or --type (e.g. --type lesson,principle), to choose what "
                                "to draw\n")),
    ("graph show nope --out x.png", "Error: no node 'nope' in the graph: `kg list` shows the ids\n"),
    ("graph show --type lesson --out x.gif", "Error: --out {ws}/x.gif: name a .png, .svg or .pdf file\n"),
    ("graph report --top 0", "Error: --top must be at least 1\n"),
])
def test_bad_input_exits_2_with_a_fix(run_kg, logged, ws, args, message):
    r = run_kg(args)  # a relative --out is taken from the workspace, and named so
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", message.replace("{ws}", str(ws.root)))


def test_graph_show_draws(run_kg, logged, ws, need):
    need("matplotlib")
    tmp_path = ws.root  # --out stays inside the workspace
    out = tmp_path / "p.png"
    r = run_kg(["graph", "show", logged["pattern"], "--out", str(out)])
    assert r.exit_code == 0, r.stderr
    assert r.stdout == f"Drew 3 nodes and 2 edges to {out}\n"
    assert out.read_bytes()[:4] == b"\x89PNG"
    r = run_kg(["graph", "show", "--type", "event", "--out", str(tmp_path / "e.svg"), "--json"])
    assert r.json["nodes"] == 2 and r.json["format"] == "svg"


def test_graph_report(run_kg, logged):
    r = run_kg(f"graph report --now {NOW} --json")
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert d["failing_areas"][0]["area"] == "tooling" and d["failing_areas"][0]["errors"] == 2
    assert d["patterns"][0]["key"] == "git.push" and d["patterns"][0]["recurrence"] == 2
    text = run_kg(f"graph report --now {NOW}").stdout
    assert "❌ Where it keeps failing (errors by area):\n   tooling: 2 errors, last 2026-11-08\n" in text
    assert "   git.push: 2x in 0 session(s), 2026-11-01 → 2026-11-08\n" in text


def test_commands_have_help(run_kg):
    for args in ("export graph --help", "graph show --help", "graph report --help"):
        r = run_kg(args)
        assert r.exit_code == 0 and "Usage:" in r.stdout


@pytest.mark.baseline_wait_off("the report and verify giving one verdict")
def test_graph_report_and_verify_give_one_verdict(ws, run_kg):
    """`kg graph report` says whether each rule helped with the verdict `kg verify` gives it: the same history,
    deadline and the workspace's pooled prior (five changes, so the prior is in play). Fails when the report
    decides by a rule of its own."""
    day = lambda d, h=10: f"2026-10-{d:02d}T{h:02d}:00"  # noqa: E731

    def log(i: int, d: int, h: int) -> None:
        ws.log("error", f"tool {i} failed: bad flag", area="tooling", pattern_key=f"tool.{i}", session=f"s{d % 2}",
               now=day(d, h))

    with ws:
        for i in range(5):
            for d in range(1 + i, 10):  # baselines of different lengths: the pooled prior moves verdicts
                log(i, d, 8)
    assert run_kg(f"cycle --now {day(9, 12)}").exit_code == 0
    with ws:
        for i in range(5):
            for d in range(10, 10 + 2 * i):  # after the change: none for tool.0, eight for tool.4
                log(i, d // 2 + 5, d % 2 * 8 + 2)
    now = day(17, 12)
    verified = run_kg(f"verify --dry-run --now {now} --json").json["verified"]
    assert len(verified) == 5 and verified[0]["stats"]["prior"]["events"] > 0
    assert {v["verdict"] for v in verified} == {"confirmed", "inconclusive", "ineffective"}
    report = run_kg(f"graph report --top 20 --now {now} --json").json["rule_effect"]
    effect = {r["change"]: r for r in report if r.get("change")}
    for v in verified:
        r = effect[v["change"]]
        assert (r["verdict"], r["before"], r["after"]) == (v["verdict"], v["before"], v["after"])
        assert r["why"] == v["summary"]  # the numbers behind it, the prior's included
        assert r["helped"] == {"confirmed": True, "inconclusive": None}.get(v["verdict"], False)


@pytest.mark.parametrize("argv", [["export", "graph", "--format", "json"], ["export", "trail"],
                                  ["graph", "show", "--type", "learning"]])
@pytest.mark.parametrize("target", ["MEMORY.md", "AGENTS.md", "memory/preferences.json", "memory/notes.png",
                                    ".learnings/LEARNINGS.md", "CLAUDE.md", ".cursorrules"])
def test_an_export_never_replaces_a_file_kg_keeps_or_agents_read(ws, run_kg, argv, target):
    """`--out MEMORY.md` replaced it whole (the person's text and kg's block gone, exit 0); `--out
    memory/preferences.json` made the graph's keys preferences. A file of the user's own may still be named."""
    assert run_kg(["log", "learning", "pin the versions", "--wait"]).exit_code == 0
    path = ws.root / target
    path.parent.mkdir(parents=True, exist_ok=True)
    before = path.read_bytes() if path.exists() else None
    if before is None and target.endswith(".md"):
        path.write_text("# kept\n")
        before = path.read_bytes()
    r = run_kg([*argv, "--out", target])
    assert r.exit_code == 2 and "kg keeps that place" in r.stderr, r.stdout + r.stderr
    assert (path.read_bytes() if path.exists() else None) == before
    suffix = ".png" if argv[0] == "graph" else ".json"
    assert run_kg([*argv, "--out", f"mine{suffix}"]).exit_code == 0 and (ws.root / f"mine{suffix}").exists()


def test_only_kg_export_trail_may_name_the_trail_file(ws, run_kg):
    """The trail file's exemption was shared: `kg export graph --out memory/.learning-trail.json` replaced the
    trail with a Mermaid chart (the reviewer)."""
    assert run_kg(["log", "learning", "pin the versions", "--wait"]).exit_code == 0
    assert run_kg(["export", "trail", "--out", "memory/.learning-trail.json"]).exit_code == 0
    before = (ws.root / "memory" / ".learning-trail.json").read_bytes()
    r = run_kg(["export", "graph", "--format", "mermaid", "--out", "memory/.learning-trail.json"])
    assert r.exit_code == 2 and (ws.root / "memory" / ".learning-trail.json").read_bytes() == before


@pytest.mark.parametrize("fmt", ["json", "graphml"])
def test_an_export_at_a_given_time_is_the_same_bytes(run_kg, logged, monkeypatch, fmt):
    """QA6 #4: two `kg export graph` runs under one KG_NOW differed: the snapshot's stamp was the wall clock. The
    stamp is the time kg runs at, --now or KG_NOW, so a replayed export is reproducible."""
    first = run_kg(f"export graph --format {fmt} --now {NOW}").stdout
    monkeypatch.setattr("kg.core.clock.wall", lambda: __import__("datetime").datetime(2031, 1, 2, 3, 4, 5))
    assert run_kg(f"export graph --format {fmt} --now {NOW}").stdout == first
    monkeypatch.setenv("KG_NOW", NOW)
    assert run_kg(f"export graph --format {fmt}").stdout == first
    assert NOW in first
