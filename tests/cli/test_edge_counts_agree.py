"""`kg status`, its `--json`, the session-start brief, `kg graph query` and `kg export graph` give one count of
edges: the typed edges between nodes. The lifecycle's links (a change to its pattern and its rule) are counted
apart and said as such (a QA pass: status and the brief said "Edges: 21" where graph query and export said 19,
the two links of each promoted rule counted as edges). Real CLI, real graph."""

from __future__ import annotations

import re

import pytest


@pytest.mark.baseline_wait_off("a rule promoted on its first days")
def test_every_view_counts_the_same_edges_and_labels_the_lifecycle_links(run_kg, ws):
    for d in ("05", "06", "08"):
        r = run_kg(["log", "error", "git push failed: no upstream branch", "--area", "tooling", "--pattern-key",
                    "git.push.no_upstream", "--session", f"s{d}", "--action", "run git push -u origin HEAD",
                    "--now", f"2026-11-{d}T10:00:00"])
        assert r.exit_code == 0, r.stderr
    r = run_kg(["log", "learning", "git push needs an upstream branch the first time", "--now",
                "2026-11-09T10:00:00"])
    assert r.exit_code == 0, r.stderr
    assert "promoted 'git.push.no_upstream'" in run_kg("cycle --now 2026-11-20T05:40:00").stdout
    now = "--now 2026-11-20T06:00:00"

    query = run_kg(f"graph query all --limit 0 {now}")
    assert query.exit_code == 0, query.stderr
    drawn = query.stdout.count("──►")
    exported = run_kg(f"export graph --format json --out g.json --json {now}")
    assert exported.exit_code == 0, exported.stderr
    assert exported.json["edges"] == drawn and drawn >= 4  # derived_from: three events and the rule

    data = run_kg(f"status --json {now}").json
    assert sum(data["edges"].values()) == drawn, data["edges"]
    assert data["links"] == {"change_applies": 1, "change_pattern": 1}
    text = run_kg(f"status {now}").stdout
    assert re.search(rf"Edges: {drawn} \(and 2 lifecycle or topic links\)   Sessions: ", text), text
    brief = run_kg(f"hook session-start {now}").stdout
    assert f"| Edges: {drawn} |" in brief, brief
