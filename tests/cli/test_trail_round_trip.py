"""A graph rebuilt from its trail is the same graph. `kg export trail` then `kg import trail` into an empty workspace
(or `kg doctor --repair` over a lost graph, which imports the workspace's trail) gave every pattern key twice, lost
the changes (`"changes": []`), the verdicts and the proposals, and the next cycle proposed the reverted rule again.
The history here is `kg demo`'s: a real loop over 45 days (logs until patterns promote, cycles, approvals, checks
days later that confirm three rules and revert one), run through the real CLI into a real Kùzu in tmp."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest

NOW = "--now 2026-11-30T09:00:00"
LATER = "--now 2026-12-02T09:00:00"  # the next day's cycle
RULE = "- push with `git push -u origin HEAD`"  # a rule the demo confirms in TOOLS.md


# the trail carries the lifecycle of an embedded graph: a team graph neither exports nor imports it (the import
# warns), and a copied workspace's Kùzu file is its graph
pytestmark = pytest.mark.embedded_only("the lifecycle round trip is the embedded graph's (a team graph lacks it)")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from kg.cli.app import app
    from typer.testing import CliRunner

    root = tmp_path_factory.mktemp("demo") / "ws"
    with pytest.MonkeyPatch.context() as mp:
        for name in ("KG_WORKSPACE", "KG_NOW", "KG_SESSION", "KG_STORE"):
            mp.delenv(name, raising=False)
        mp.setenv("KG_SERVER", "0")
        done = CliRunner().invoke(app, ["demo", str(root)])
    assert done.exit_code == 0, done.output
    return root


@pytest.fixture
def original(demo, tmp_path):
    root = tmp_path / "original"
    shutil.copytree(demo, root)
    return root


def _trail(run_kg, root, out) -> dict:
    r = run_kg(f"export trail --out {out} {NOW}", workspace=root)
    assert r.exit_code == 0, r.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    del doc["exported"]  # the one field that is the export's own time
    return doc


def _cycle(run_kg, root) -> dict:
    r = run_kg(f"cycle --dry-run --json {LATER}", workspace=root)
    assert r.exit_code == 0, r.stderr
    return r.json


def test_a_trail_imported_into_an_empty_workspace_exports_the_same_trail(run_kg, ws, original):
    before = _trail(run_kg, original, original / "trail.json")
    keys = Counter(n["pattern_key"] for n in before["graph"]["nodes"] if n["type"] == "pattern")
    assert set(keys.values()) == {1} and len(keys) == 4
    assert {c["status"] for c in before["changes"]} == {"confirmed", "auto_reverted"}
    reverted = [c for c in before["changes"] if c["reverted_at"]]
    assert len(reverted) == 1 and reverted[0]["rule"] and reverted[0]["pattern"]
    r = run_kg(f"import trail {original / 'trail.json'} --json {NOW}")
    assert r.exit_code == 0, r.stderr
    assert r.json["lifecycle"] == {"changes": 4, "proposals": 3, "decisions": 0, "blocks": 1}
    # the blocks are what kg wrote into the original's files, which this workspace does not hold: its next cycle
    # writes them afresh (taken as they were, each would read as removed by hand and pause its rule's checks);
    # the one taken is AGENTS.md's, emptied by the revert
    assert r.json["skipped"] == {"block of a file this workspace does not hold (the next cycle writes it)": 5}
    after = _trail(run_kg, ws.root, ws.root / "trail.json")
    blocks = before["lifecycle"].pop("blocks")
    assert after["lifecycle"].pop("blocks") == [b for b in blocks if b["path"] == "AGENTS.md"]
    assert len(blocks) == 6 and after == before
    # the next cycle decides as the original's would: nothing verified, reverted or proposed anew
    mine, theirs = _cycle(run_kg, ws.root), _cycle(run_kg, original)
    for part in ("verified", "reverted", "promoted", "proposed", "evidence_requested", "decayed", "conflicts"):
        assert mine[part] == theirs[part], part
    assert [p["number"] for p in run_kg("propose --json").json] == [1]  # the critical fix: the demo's first cycle
    # proposes only it (its patterns wait for 14 days watched), the promotions come after
    why = run_kg(["why", RULE, "--json", *LATER.split()]).json
    assert why["change"]["id"] == "chg-20261031-001" and why["change"]["status"] == "confirmed", why


def test_doctor_repair_rebuilds_the_same_graph_from_the_trail(run_kg, original):
    before = _trail(run_kg, original, original / "memory" / ".learning-trail.json")
    cycle = _cycle(run_kg, original)
    for name in ("graph.kuzu", "graph.kuzu.wal"):
        (original / "memory" / ".kg" / name).unlink(missing_ok=True)
    r = run_kg("doctor --repair", workspace=original)
    assert "started a new graph" in r.stdout, r.stdout
    assert _trail(run_kg, original, original / "again.json") == before
    assert _cycle(run_kg, original) == cycle
    why = run_kg(["why", RULE, "--json", *LATER.split()], workspace=original).json
    assert why["source"] == "kg" and why["change"]["id"] == "chg-20261031-001", why


def test_importing_the_same_trail_twice_adds_nothing(run_kg, ws, original):
    trail = original / "trail.json"
    _trail(run_kg, original, trail)
    first = run_kg(f"import trail {trail} --json {NOW}").json
    once = _trail(run_kg, ws.root, ws.root / "once.json")
    again = run_kg(f"import trail {trail} --json {NOW}").json
    assert (again["entries"], again["nodes"], again["edges"]) == (0, 0, 0)
    assert again["lifecycle"] == {"changes": 0, "proposals": 0, "decisions": 0, "blocks": 0}
    assert again["already_present"] == first["entries"] + first["nodes"] + 4 + 3 + 1
    assert _trail(run_kg, ws.root, ws.root / "twice.json") == once


def test_a_trail_with_its_lifecycle_still_reads_as_the_graphs_mirror(run_kg, original):
    """Search skips a trail whose ids are graph nodes (kg/memory/search_files.py `mirrors_graph`): the ids of the
    changes, proposals and decisions at its end are no nodes, and made it search the trail's copy of every hit."""
    _trail(run_kg, original, original / "memory" / ".learning-trail.json")
    r = run_kg(f"search 'pytest database' --source trail --json {NOW}", workspace=original)
    assert (r.exit_code, r.json) == (0, [])


@pytest.mark.parametrize("edge", ["change_applies", "proposal_about"])
def test_an_import_killed_between_the_lifecycle_and_its_edges_resumes_to_the_same_graph(run_kg, ws, original, edge):
    """A real SIGKILL after the changes (or the proposals) are loaded and before their edges: the resumed import
    found them present and skipped them whole, so `kg why` could not say which rule a change wrote (its `rule`
    and `pattern` were gone from the trail) and a proposal was about nothing."""
    import os
    import signal
    import subprocess
    import sys

    trail = original / "trail.json"
    before = _trail(run_kg, original, trail)
    script = ("import os, signal, sys\nfrom pathlib import Path\nimport kg, kg.ingest.trail\n"
              "from kg.store import bulk\n"
              "copy = bulk.copy_rows\n"
              "def die(st, label, rows, **kw):\n"
              "    if label == sys.argv[3]:\n        os.kill(os.getpid(), signal.SIGKILL)\n"
              "    return copy(st, label, rows, **kw)\n"
              "bulk.copy_rows = die\n"
              "kg.ingest.trail.import_trail(kg.open_workspace(Path(sys.argv[1])), [Path(sys.argv[2])])\n")
    env = {k: v for k, v in os.environ.items() if k not in ("KG_WORKSPACE", "KG_STORE")}
    proc = subprocess.run([sys.executable, "-c", script, str(ws.root), str(trail), edge], timeout=300, env=env)
    assert proc.returncode == -signal.SIGKILL
    assert (ws.kg_dir / "import.json").exists()
    r = run_kg(f"import trail --json {NOW}")
    assert r.exit_code == 0 and r.json["resumed"], r.stdout + r.stderr
    after = _trail(run_kg, ws.root, ws.root / "trail.json")
    blocks = before["lifecycle"].pop("blocks")
    assert after["lifecycle"].pop("blocks") == [b for b in blocks if b["path"] == "AGENTS.md"]
    assert after == before
    why = run_kg(["why", RULE, "--json", *LATER.split()]).json
    assert why["change"]["id"] == "chg-20261031-001" and why["change"]["status"] == "confirmed", why


def test_a_graph_rebuilt_from_its_trail_holds_every_column_of_every_node(run_kg, ws, original):
    """The trail left out a knowledge or principle node's category and files (the file its rule is in) and the
    secret kinds an entry's text lost: `kg why` on a rule named its file before and none after a restore."""
    from kg.analysis import to_networkx

    _trail(run_kg, original, original / "trail.json")
    assert run_kg(f"import trail {original / 'trail.json'} {NOW}").exit_code == 0
    theirs, mine = to_networkx(original), to_networkx(ws.root)
    assert set(theirs) == set(mine)
    differ = {(n, key): (value, mine.nodes[n].get(key)) for n, attrs in theirs.nodes(data=True)
              for key, value in attrs.items() if mine.nodes[n].get(key) != value}
    assert differ == {}
    assert any(attrs.get("files") for _, attrs in mine.nodes(data=True) if attrs["kind"] == "principle")
    why = run_kg(["why", RULE, "--json", *LATER.split()]).json
    assert why["node"]["files"] == ["TOOLS.md"], why
