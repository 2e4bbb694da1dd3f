"""QA8's findings in the analyst's Python API, on a real Kùzu workspace: each was a raw Python error or a CLI
flag's words where a notebook's caller needs a ValueError naming its own argument."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kg import analysis as ka
from kg.analysis import export as ke
from kg.analysis import snapshot


@pytest.fixture
def logged(ws):
    """Two errors three weeks apart, on the workspace's clock."""
    with ws:
        old = ws.log("error", "npm ci failed: lockfile out of sync", area="build", now="2026-11-01T10:00:00",
                     wait=True).id
        new = ws.log("error", "git push failed: no upstream", area="tooling", now="2026-11-22T10:00:00",
                     wait=True).id
    return ws, old, new


@pytest.fixture
def tokyo(tmp_path):
    """A workspace made in Tokyo (its clock zone recorded so: every time in it is Tokyo's wall clock, whatever the
    zone of the process that reads it), with two errors three weeks apart."""
    kg_cli = str(Path(sys.executable).with_name("kg"))
    env = {**os.environ, "TZ": "Asia/Tokyo", "KG_SERVER": "0"}
    root = tmp_path / "tokyo"
    subprocess.run([kg_cli, "init", str(root)], env=env, check=True, capture_output=True, timeout=120)
    ids = []
    for at, text in (("2026-11-01T10:00:00", "npm ci failed: lockfile out of sync"),
                     ("2026-11-22T10:00:00", "git push failed: no upstream")):
        done = subprocess.run([kg_cli, "-w", str(root), "--now", at, "log", "error", text, "--wait", "--json"],
                              env=env, check=True, capture_output=True, text=True, timeout=120)
        ids.append(json.loads(done.stdout)["id"])
    return root, *ids


def test_a_since_with_a_time_zone_is_read_in_the_workspace_zone(tokyo):
    """`since=datetime.now(timezone.utc) - timedelta(days=30)` was a TypeError ("can't compare offset-naive and
    offset-aware datetimes") from every function that filters by time: it is converted into the workspace's
    clock zone as `now=` is."""
    root, old, new = tokyo
    since = datetime(2026, 11, 15, 9, 30, tzinfo=ZoneInfo("Asia/Tokyo")).astimezone(UTC)  # 00:30 in UTC
    graph = ka.to_networkx(root, since=since)
    assert new in graph and old not in graph
    assert graph.graph["since"] == "2026-11-15T09:30:00"  # Tokyo's wall clock, as the workspace's nodes are dated
    with ka.load(root) as a:
        assert set(a.subgraph(since=since)) == set(graph)
        assert set(ka.filter_graph(a.graph, since=since)) == set(graph)
    assert ke.export_graph(root, "json", since=since).nodes == graph.number_of_nodes()


WRONG = [  # (the Python call, what it says, the command, what the command says)
    ("report top 0", lambda w: ka.report(w, top=0), "top must be a whole number, at least 1 (got 0)",
     ["graph", "report", "--top", "0"], "--top must be at least 1"),
    ("show limit -1", lambda w: kd().show_subgraph(w, types="lesson", limit=-1, out=w / "q.png"),
     "limit must be a whole number, at least 1 (got -1)",
     ["graph", "show", "--type", "lesson", "--limit", "-1", "--out", "q.png"], "--limit must be at least 1"),
    ("show nothing chosen", lambda w: kd().show_subgraph(w, out=w / "q.png"), "give node_id, or types",
     ["graph", "show", "--out", "q.png"], "name a node id, or --type (e.g. --type lesson,principle)"),
    ("export format xml", lambda w: ke.export_graph(w, "xml", out=w / "g.xml"), "fmt: unknown format 'xml'",
     ["export", "graph", "--format", "xml"], "unknown format 'xml': use one of graphml"),
    ("render format xml", lambda w: ke.render(ka.to_networkx(w), "xml"), "fmt: unknown format 'xml'", None, None),
    ("render format a number", lambda w: ke.render(ka.to_networkx(w), 5), "fmt: unknown format 5", None, None),
    ("plot rows without rates", lambda w: kd().plot_rule_effect([{"x": 1}]),
     "rows[0] has no key, rate_before, rate_after: give the rows a.rule_effect() returns (it has x)", None, None),
    ("plot scores without a time", lambda w: kd().plot_score_trends([{"x": 1}]), "rows[0] has no at or period",
     None, None),
]


def kd():
    from kg.analysis import drawing

    return drawing


@pytest.mark.parametrize(("call", "said", "argv", "cli_said"), [w[1:] for w in WRONG], ids=[w[0] for w in WRONG])
def test_a_wrong_argument_is_a_value_error_naming_it_and_the_command_keeps_its_words(logged, run_kg, call, said,
                                                                                     argv, cli_said):
    """README: a wrong argument is refused at the call with a ValueError naming it. `report(top=0)`, a negative
    `limit` and an unknown format were kg's UsageError naming the CLI's flag (no ValueError), a row without the
    fields a drawing reads a bare KeyError (QA8 #2). The commands passing those options still say theirs."""
    ws, _, _ = logged
    with pytest.raises(ValueError) as caught:
        call(ws.root)
    assert said in str(caught.value)
    assert "--" not in str(caught.value)
    if argv:
        r = run_kg(argv)
        assert r.exit_code == 2
        assert cli_said in r.stderr and "fmt:" not in r.stderr and "whole number" not in r.stderr


def test_the_trail_is_exported_from_a_workspace_path_as_the_graph_is(logged, tmp_path):
    """`export_trail("path", out=...)` was an AttributeError ('str' object has no attribute 'store'): it takes a
    workspace path as export_graph does, and says a folder that is no workspace by name, as a ValueError."""
    from kg.ingest.trail import export_trail

    ws, old, new = logged
    done = export_trail(str(ws.root), out=str(tmp_path / "trail.json"))
    assert done["written"] == [str(tmp_path / "trail.json")] and done["entries"] == 2
    ids = {e["id"] for e in json.loads((tmp_path / "trail.json").read_text(encoding="utf-8"))["entries"]}
    assert {old, new} <= ids
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="empty"):
        export_trail(tmp_path / "empty", out=tmp_path / "t2.json")
    with pytest.raises(ValueError, match="workspace must be a Workspace"):
        export_trail(5)


HOLDER = """
import sys
import kg.analysis as ka
a = ka.load(sys.argv[1])  # a notebook's load: its snapshot copy held for as long as it lives
print(a.snapshot.directory, flush=True)
sys.stdin.read()  # held until its stdin closes, or it is killed
"""


def _holder(root):
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(root)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "KG_SERVER": "0"})
    line = child.stdout.readline().strip()
    assert line, child.stderr.read()
    return child, Path(line)


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_doctor_reports_and_removes_the_copy_a_killed_notebook_left_never_a_living_ones(logged, run_kg, how):
    """A notebook killed while it held `kg.analysis.load(...)` left memory/.kg/snapshots/snap-*/ (49 MB on the
    demo) and `kg doctor` said "temporary files: none left behind" (QA8 #4): it says it, with --dry-run only
    that, and removes it as the next snapshot would (its owner lock is free), never a living owner's copy."""
    ws, _, _ = logged
    killed, left = _holder(ws.root)
    living, kept = _holder(ws.root)
    try:
        killed.send_signal(how)
        assert killed.wait(timeout=60) == -how
        assert left.is_relative_to(ws.kg_dir / snapshot.SNAPSHOTS) and left.is_dir() and kept.is_dir()
        said = {c["name"]: c for c in run_kg(["doctor", "--dry-run", "--json"]).json["checks"]}["temporary files"]
        assert said["status"] == "warning" and left.name in said["detail"] and kept.name not in said["detail"]
        assert "1 snapshot copy of the graph" in said["detail"]
        assert left.is_dir()  # a dry run removes nothing
        said = {c["name"]: c for c in run_kg(["doctor", "--json"]).json["checks"]}["temporary files"]
        assert said["status"] == "repaired" and left.name in said["detail"], said
        assert not left.exists() and kept.is_dir()  # the living notebook's copy is still there
        said = {c["name"]: c for c in run_kg(["doctor", "--json"]).json["checks"]}["temporary files"]
        assert said["status"] == "ok", said
    finally:
        living.stdin.close()
        living.wait(timeout=60)
        if killed.poll() is None:
            killed.kill()
    assert not kept.exists()  # its owner removed it as it closed


def test_import_of_a_workspace_s_own_trail_counts_its_edges_in_the_plural(ws, run_kg):
    """QA2 #7: importing a workspace's own trail said "skipped 2 edge already presents": the reason's last word was
    taken for its noun. Every edge of its graph section is there already, said as "N edges already present"."""
    for n in range(2):
        r = run_kg(["log", "error", f"deploy failed: database lock timeout {n}", "--pattern-key", "db.lock", "--wait"])
        assert r.exit_code == 0, r.stderr
    assert run_kg(["export", "trail", "--out", "t.json"]).exit_code == 0
    r = run_kg(["import", "trail", str(ws.root / "t.json")])
    assert r.exit_code == 0, r.stderr
    said = re.search(r"skipped (\d+) edges already present(,|$)", r.stdout.strip())
    assert said and int(said[1]) > 1 and "presents" not in r.stdout, r.stdout
    from kg.cli.trail import counted

    assert counted(3, "edge whose endpoint is not in the graph") == "3 edges whose endpoint is not in the graph"


def test_import_trail_counts_what_it_skipped_in_the_plural(ws, run_kg):
    """`kg import trail` said "skipped 3 block of a file ..." and "3 entry without a LRN/ERR/FEAT id" (QA8 #6):
    the reason's noun agrees with its count; `--json` keys them as before."""
    trail = ws.root / "t.json"
    trail.write_text(json.dumps({"entries": [{"summary": s, "type": "error"} for s in "abc"] + [[1]],
                                 "graph": {"nodes": [], "edges": []}}), encoding="utf-8")
    r = run_kg(["import", "trail", str(trail)])
    assert r.exit_code == 0, r.stderr
    assert "skipped 1 entry is not an object, 3 entries without a LRN/ERR/FEAT id" in r.stdout
    assert run_kg(["import", "trail", str(trail), "--dry-run", "--json"]).json["skipped"] == {
        "entry is not an object": 1, "entry without a LRN/ERR/FEAT id": 3}
    from kg.cli.trail import counted

    said = counted(3, "block of a file this workspace does not hold (the next cycle writes it)")
    assert said == "3 blocks of a file this workspace does not hold (the next cycle writes it)"
    assert counted(2, "graph is not an object") == "2 graphs are not objects"
    assert counted(2, "duplicate id in the imported files") == "2 duplicate ids in the imported files"
    assert counted(4, "change kg cannot read") == "4 changes kg cannot read"
    assert counted(2, "binary file") == "2 binary files"
