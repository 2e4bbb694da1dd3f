"""`kg link`, `kg patterns`, `kg graph query|path|explain`, and `--no-link`: exact output and exit codes."""

from __future__ import annotations

import re

import pytest

from kg.graph.linking import default_rules

# The two wordings share an automatic pattern key, `auto.<area>.<8 hex digits of the keywords' hash>`: what is
# promised is its shape and that both events land on it, not the hash (any weight or stopword change moves it).
AUTO_KEY = re.compile(r"auto\.tooling\.[0-9a-f]{8}")


def _key(run_kg) -> str:
    [pattern] = run_kg("patterns --json").json
    assert AUTO_KEY.fullmatch(pattern["key"]), pattern["key"]
    return pattern["key"]


def _fill(run_kg):
    """Two wordings of one error, a lesson learned from it, and an unrelated lesson added without links."""
    r = run_kg("log error 'git push failed: no upstream branch' --area tooling --session s1 "
               "--now 2026-05-01T10:00:00")
    assert r.exit_code == 0, r.stderr
    r = run_kg("log error 'git push error: the branch has no upstream' --area tooling --session s2 "
               "--now 2026-05-02T10:00:00")
    assert r.stdout == ("📝 [ERR-20260502-001] git push error: the branch has no upstream\n"
                        f"🔄 pattern {_key(run_kg)}: seen 2x in 2 session(s)\n")
    r = run_kg("node add lesson 'Set the upstream when you git push a new branch' --now 2026-05-03T10:00:00")
    assert r.stdout == ("🔷 Node created: [les-20260503-001] (lesson) Set the upstream when you git push a new "
                        "branch\n  🔗 Auto-linked to: ERR-20260501-001\n")
    r = run_kg("node add lesson 'x y' --no-link --now 2026-05-03T10:00:00")
    assert r.stdout == "🔷 Node created: [les-20260503-002] (lesson) x y\n"
    return run_kg


@pytest.fixture
def filled(run_kg):
    """The filled workspace, this test's own (for tests that change it)."""
    return _fill(run_kg)


@pytest.fixture(scope="module")
def shared(module_workspace):
    """The filled workspace, built once for the tests that only read it."""
    return _fill(module_workspace[1])


def test_graph_query_has_the_seed_shape(shared):
    r = shared("graph query")
    assert r.exit_code == 0
    assert r.stdout == """
🕸️  Knowledge Graph (5 nodes, 3 edges):

  📌 EVENTs (2):
    [ERR-20260501-001] git push failed: no upstream branch
    [ERR-20260502-001] git push error: the branch has no upstream
  💡 LESSONs (2):
    [les-20260503-001] Set the upstream when you git push a new branch
    [les-20260503-002] x y
  🔍 PATTERNs (1):
    [pat-20260502-001] git push failed: no upstream branch

  🔗 Edges:
    git push failed: no upstream b... ──derived_from──► git push failed: no upstream b...
    git push failed: no upstream b... ──derived_from──► git push error: the branch has...
    Set the upstream when you git ... ──caused_by──► git push failed: no upstream b...
"""


def test_graph_query_neighbourhood_and_type(shared):
    r = shared("graph query les-20260503-001 --depth 1 --json")
    assert sorted(n["id"] for n in r.json["nodes"]) == ["ERR-20260501-001", "les-20260503-001"]
    assert [(e["src"], e["type"], e["dst"]) for e in r.json["edges"]] == [
        ("les-20260503-001", "caused_by", "ERR-20260501-001")]
    r = shared("graph query type:lesson --depth 0")
    assert r.stdout == ("\n🕸️  Knowledge Graph (2 nodes, 0 edges):\n\n  💡 LESSONs (2):\n"
                        "    [les-20260503-001] Set the upstream when you git push a new branch\n"
                        "    [les-20260503-002] x y\n")
    r = shared("graph query type:knowledge")
    assert (r.exit_code, r.stdout) == (0, "No nodes found matching query.\n")  # said once


def test_graph_path_and_explain(shared):
    r = shared("graph path ERR-20260501-001 les-20260503-001")
    assert r.stdout == ("📌 [ERR-20260501-001] git push failed: no upstream branch\n"
                        "   ◄──caused_by──\n"
                        "💡 [les-20260503-001] Set the upstream when you git push a new branch\n")
    r = shared("graph path les-20260503-002 ERR-20260501-001")
    assert (r.exit_code, r.stdout) == (1, "No path between les-20260503-002 and ERR-20260501-001.\n")
    [edge] = shared("graph explain les-20260503-001 --json").json["edges"]
    assert (edge["direction"], edge["type"], edge["manual"]) == ("out", "caused_by", False)
    assert default_rules().link_min_score <= edge["score"] <= 1.0  # linked because it passed the threshold
    r = shared("graph explain les-20260503-001")
    shown = f"{edge['score']:.2f}"
    assert r.stdout == (
        "💡 [les-20260503-001] Set the upstream when you git push a new branch\n"
        "  ──caused_by──► [ERR-20260501-001] git push failed: no upstream branch\n"
        f"      auto, score {shown}, 2026-05-03T10:00: caused_by: lesson → error entry; shared: branch, git, push, "
        f"upstream; score {shown}\n")


def test_patterns_list_show_merge_split(filled):
    key = _key(filled)
    r = filled("patterns")
    assert r.stdout == (
        "KEY                              SEEN SESS  FIRST       LAST        TEXT\n"
        f"{key}              2x    2  2026-05-01  2026-05-02  git push failed: no upstream branch\n")
    r = filled("patterns --json")
    assert [(p["key"], p["recurrence"], p["sessions"]) for p in r.json] == [(key, 2, 2)]
    # a key longer than the column (detected keys carry a hash) widens it: every column stays under its heading
    long_key = "err.edit.read_before_write.80108eb5"
    filled(f"patterns split {key} ERR-20260502-001 --key {long_key} --now 2026-05-04T10:00:00")
    head, *rows = filled("patterns --min 1").stdout.splitlines()
    assert [row.index("1x ") + 2 for row in rows] == [head.index("SEEN") + 4] * 2, (head, rows)
    filled(f"patterns merge {key} {long_key} --now 2026-05-04T10:00:00")
    r = filled(f"patterns show {key}")
    assert r.stdout.splitlines()[:2] == [(f"🔍 [pat-20260502-001] {key}: git push failed: no "
                                         "upstream branch"),
                                         "   2x in 2 session(s), 2026-05-01 → 2026-05-02"]
    r = filled(f"patterns split {key} ERR-20260502-001 --key git.push.other "
               "--now 2026-05-04T10:00:00")
    assert r.stdout == (f"✂️  1 event(s) moved from {key} into git.push.other; "
                        f"{key} is now 1x\n")
    r = filled(f"patterns merge {key} git.push.other --now 2026-05-05T10:00:00")
    assert r.stdout == (f"🔄 git.push.other merged into {key}: 1 event(s) moved; now 2x in "
                        "2 session(s)\n")


@pytest.mark.parametrize("args, code, stderr", [
    ("link auto nope", 2, "Error: no node 'nope': `kg list` shows the ids\n"),
    ("graph query type:bogus", 2, ("Error: unknown type 'bogus' in 'type:bogus': use type: with one of event, "
                                  "lesson, principle, knowledge, pattern, learning, error, feature\n")),
    ("graph query nope", 2, "Error: no node 'nope': `kg list` shows the ids\n"),
    ("graph query --depth 7", 2, "Error: --depth must be from 0 to 6\n"),
    ("graph path les-20260503-001 les-20260503-001", 2,
     "Error: a path needs two different nodes; both are les-20260503-001\n"),
    ("graph explain nope", 2, "Error: no node 'nope': `kg list` shows the ids\n"),
    ("patterns merge {key} {key}", 2,
     "Error: {key} and {key} are the same pattern\n"),
    ("patterns merge {key} nope", 2,
     "Error: no pattern 'nope': `kg patterns` lists them (by id or key)\n"),
    ("patterns split {key} les-20260503-001", 2,
     ("Error: not in pattern {key}: les-20260503-001 (`kg patterns show {key}` "
     "lists its events)\n")),
])
def test_bad_input_exits_2_with_a_message(shared, args, code, stderr):
    key = _key(shared)
    args, stderr = args.format(key=key), stderr.format(key=key)
    r = shared(args)
    assert (r.exit_code, r.stdout, r.stderr) == (code, "", stderr)


def test_link_auto(filled):
    r = filled("link auto les-20260503-002")
    assert r.stdout == "No new links for [les-20260503-002]: nothing similar enough that is not linked already.\n"
    r = filled("link auto les-20260503-001 --json")
    assert r.json == {"id": "les-20260503-001", "kind": "lesson",
                      "text": "Set the upstream when you git push a new branch", "dry_run": False, "links": []}
    r = filled("node add principle 'Always set the upstream on a git push of a new branch' --no-link --json "
               "--now 2026-05-06T10:00:00")
    assert r.json["links"] == []
    r = filled("link auto pri-20260506-001 --dry-run --now 2026-05-06T11:00:00")
    assert r.stdout.splitlines()[0] == "Would link: les-20260503-001, ERR-20260501-001"
    r = filled("link auto pri-20260506-001 --now 2026-05-06T11:00:00")
    assert r.stdout.splitlines()[0] == "🔗 Auto-linked to: les-20260503-001, ERR-20260501-001"
    assert "[les-20260503-001] ──led_to──► [pri-20260506-001]" in r.stdout
    r = filled("link reindex --json")
    assert r.json == {"nodes": 6}


def test_log_no_link(run_kg):
    run_kg("log error 'git push failed: no upstream branch' --area tooling --now 2026-05-01T10:00:00")
    r = run_kg("log error 'git push error: the branch has no upstream' --area tooling --no-link --json "
               "--now 2026-05-02T10:00:00")
    assert r.json["pattern"] is None and r.json["pattern_key"] is None
    assert run_kg("show ERR-20260502-001 --json").json["edges"] == []


@pytest.mark.embedded_only("copies the demo workspace's Kùzu file: a team graph stays on the server")
def test_a_pattern_with_a_live_rule_is_not_merged_away(demo_built, tmp_path):
    """QA7 #1: `kg patterns merge A B` retired a promoted B; its rule stayed in its file, checked against a pattern
    with no events ("no history before the change"), and `kg why` named the tombstone. B must be a pattern a
    person may set (active, wont_fix); the other way round keeps the rule and gives it A's events."""
    import shutil

    from tests.conftest import kg_runner

    root = tmp_path / "ws"
    shutil.copytree(demo_built[0], root, symlinks=True)
    now = demo_built[1]
    kg = kg_runner(root)

    def patterns() -> dict[str, tuple[str, int]]:
        return {p["key"]: (p["status"], p["recurrence"]) for p in kg("patterns --json").json}

    before = patterns()
    assert before["pkg.use_pnpm"][0] == "promoted"
    refused = kg(f"patterns merge git.push.no_upstream pkg.use_pnpm --now {now}")
    assert refused.exit_code == 2, refused.stdout
    assert refused.stderr.startswith("Error: pattern pkg.use_pnpm is promoted: its rule is verified on its own "
                                     "events"), refused.stderr
    assert patterns() == before
    for text in ("npm install failed: the lockfile is pnpm-lock.yaml", "npm ci failed again: use pnpm here"):
        assert kg(f"log error '{text}' --pattern-key pkg.npm_again --wait --now {now}").exit_code == 0
    wrong_way = kg(f"patterns merge pkg.npm_again pkg.use_pnpm --now {now}")
    assert wrong_way.exit_code == 2
    assert "merge it the other way, `kg patterns merge pkg.use_pnpm pkg.npm_again`" in wrong_way.stderr
    told = kg(f"patterns merge pkg.use_pnpm pkg.npm_again --now {now}")
    assert told.exit_code == 0, told.stderr
    after = patterns()
    assert after["pkg.use_pnpm"] == ("promoted", before["pkg.use_pnpm"][1] + 2)
    why = kg(f"why '- always use pnpm in this repository' --json --now {now}")
    assert why.exit_code == 0 and "pkg.use_pnpm" in why.stdout, why.stdout + why.stderr
