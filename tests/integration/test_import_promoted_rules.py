"""Another workspace's promoted TOOLS.md rule, imported into a graph that does not take the trail's lifecycle (a
history of its own, or a team graph), waits as a pending `import` proposal; its pattern is not left `promoted` with
nothing rendered. Before, the rule node came in with no change to render it (no file got it, `kg why` found nothing,
no proposal) and its pattern came in `promoted`, so the mistake recurring here was never promoted again. Real CLI,
real graph (and a real FalkorDB team graph for the move the `kg init --store` refusal points to)."""

from __future__ import annotations

import pytest

from tests.conftest import TEST_STORE, fresh_workspace, kg_runner

RULE = "run git push -u origin HEAD"
KEY = "git.push.no_upstream"
pytestmark = pytest.mark.baseline_wait_off("the other workspace promotes on its first days: the test is the import")


def _log(run, day: str, session: str):
    r = run(["log", "error", "git push failed: no upstream branch", "--area", "tooling", "--pattern-key", KEY,
             "--session", session, "--action", RULE, "--now", f"{day}T10:00:00"])
    assert r.exit_code == 0, r.stderr


def _trail(tmp_path, request, name: str = "other"):
    """A workspace that promoted RULE into TOOLS.md, and its trail."""
    other = fresh_workspace(tmp_path / name, request)
    run_o = kg_runner(other.root)
    for d, s in (("2026-11-05", "s1"), ("2026-11-06", "s2"), ("2026-11-08", "s3")):
        _log(run_o, d, s)
    assert f"promoted '{KEY}' to TOOLS.md" in run_o(["cycle", "--now", "2026-11-20T05:40:00"]).stdout
    out = other.root / "theirs.json"
    assert run_o(["export", "trail", "--out", str(out), "--now", "2026-11-20T06:00:00"]).exit_code == 0
    return out


def _status(run) -> str:
    r = run(["patterns", "show", KEY, "--json"])
    assert r.exit_code == 0, r.stderr
    return r.json["pattern"]["status"]


def _imports(run) -> list[dict]:
    r = run(["propose", "--json"])
    assert r.exit_code == 0, r.stderr
    return [p for p in r.json if p["type"] == "import"]


@pytest.fixture
def imported(ws, run_kg, tmp_path, request):
    """`ws` with a history of its own, then the other workspace's trail imported into it."""
    assert run_kg(["log", "learning", "use pnpm not npm", "--now", "2026-11-10T08:00:00"]).exit_code == 0
    out = _trail(tmp_path, request)
    r = run_kg(["import", "trail", str(out), "--json", "--now", "2026-11-27T08:00:00"])
    assert r.exit_code == 0, r.stderr
    return r


def test_promoted_rule_waits_for_approval_and_renders_once_approved(ws, run_kg, imported):
    assert imported.json["rules_proposed"] == 1, imported.json
    if TEST_STORE == "kuzu":  # (a team graph's trail carries no lifecycle)
        assert imported.json["lifecycle_not_imported"] == {"changes": 1}, imported.json
    (p,) = _imports(run_kg)
    assert p["target"] == "TOOLS.md" and p["text"] == RULE and "theirs.json" in p["motivation"], p
    assert _status(run_kg) == "active"  # not `promoted` with nothing rendered
    assert run_kg(["cycle", "--now", "2026-11-27T09:00:00"]).exit_code == 0
    assert not (ws.root / "TOOLS.md").exists() or RULE not in (ws.root / "TOOLS.md").read_text()
    a = run_kg(["approve", str(p["number"]), "--json", "--now", "2026-11-27T10:00:00"])
    assert a.exit_code == 0 and a.json["action"] == "applied" and a.json["target"] == "TOOLS.md", a.stdout + a.stderr
    assert f"- {RULE}" in (ws.root / "TOOLS.md").read_text()
    assert _status(run_kg) == "promoted"
    why = run_kg(["why", RULE, "--json", "--now", "2026-11-27T11:00:00"])
    assert why.exit_code == 0 and why.json["change"]["id"] == a.json["change"], why.stdout
    assert why.json["pattern"]["key"] == KEY and why.json["change"]["next_check"], why.json
    assert _imports(run_kg) == [] and run_kg(["cycle", "--now", "2026-11-27T12:00:00"]).exit_code == 0
    assert (ws.root / "TOOLS.md").read_text().count(RULE) == 1


def test_skipped_rule_is_never_rendered_and_its_pattern_comes_back_when_it_recurs(ws, run_kg, imported):
    """Held while the proposal waits (as a pending promotion proposal holds its pattern: the cycle does not promote
    it from the trail's events behind the person's back); skipped, it stays out until the mistake recurs here, and
    then it is promoted from this workspace's own evidence (before: never, the pattern being `promoted`)."""
    (p,) = _imports(run_kg)
    for day in ("2026-11-27T09:00", "2026-11-28T10:00"):
        assert "promoted" not in run_kg(["cycle", "--now", day]).stdout
    assert run_kg(["skip", str(p["number"]), "--reason", "not ours", "--now", "2026-11-28T11:00"]).exit_code == 0
    r = run_kg(["cycle", "--now", "2026-11-28T12:00"])
    assert r.exit_code == 0 and "promoted" not in r.stdout, r.stdout
    assert not (ws.root / "TOOLS.md").exists() or RULE not in (ws.root / "TOOLS.md").read_text()
    assert _imports(run_kg) == []
    for d, s in (("2026-11-29", "t1"), ("2026-11-30", "t2"), ("2026-12-01", "t3")):
        _log(run_kg, d, s)
    r = run_kg(["cycle", "--now", "2026-12-02T10:00:00"])
    assert r.exit_code == 0 and f"promoted '{KEY}' to TOOLS.md" in r.stdout, r.stdout
    assert (ws.root / "TOOLS.md").read_text().count(RULE) == 1


@pytest.mark.falkordb
def test_moving_to_a_team_graph_keeps_the_rule_as_a_proposal(tmp_path, request, falkordb_url):
    """The path `kg init --store`'s refusal gives (export trail, init --store, import trail): the embedded
    workspace's lifecycle is counted as not imported (it said {} while warning so) and its rule waits."""
    import kg

    if TEST_STORE != "kuzu":
        pytest.skip("the source workspace must be embedded: its trail carries the lifecycle")
    out = _trail(tmp_path, request)
    team = kg.init_workspace(tmp_path / "team", store=falkordb_url).root
    run_t = kg_runner(team)
    r = run_t(["import", "trail", str(out), "--json", "--now", "2026-11-27T08:00:00"])
    assert r.exit_code == 0, r.stderr
    assert r.json["lifecycle_not_imported"] == {"changes": 1} and r.json["rules_proposed"] == 1, r.json
    assert any("team graph" in w and "1 change" in w for w in r.json["warnings"]), r.json["warnings"]
    assert _status(run_t) == "active"
    (p,) = _imports(run_t)
    a = run_t(["approve", str(p["number"]), "--now", "2026-11-27T09:00:00"])
    assert a.exit_code == 0, a.stdout + a.stderr
    assert f"- {RULE}" in (team / "TOOLS.md").read_text()
    assert _status(run_t) == "promoted"


# The real CLI in a child that SIGKILLs itself in the import once its rules' proposals are made
# (kg/lifecycle/imported_rules.py `propose`), as tests/integration/test_import_principles.py kills its principles'.
_KILLED_PROPOSING = """
import os, sys
import kg.lifecycle.imported_rules as R
from kg.cli.app import run
propose = R.propose
def killing(*args, **kwargs):
    propose(*args, **kwargs)
    os.kill(os.getpid(), 9)
R.propose = killing
run(sys.argv[1:])
"""


def test_an_import_killed_once_its_rules_are_proposed_leaves_their_pattern_active_when_resumed(ws, run_kg, tmp_path,
                                                                                             request):
    """rev5 #2: killed with the rule's proposal made and its pattern not yet reopened, the resumed import found the
    rule proposed, proposed nothing and reopened nothing: the pattern stayed `promoted` with nothing rendering it,
    so once skipped the mistake recurring here was never promoted. Now the pattern is reopened with its proposal,
    and every run reopens the patterns pending import proposals hold, exactly as an unkilled run leaves them."""
    import os
    import subprocess
    import sys

    assert run_kg(["log", "learning", "use pnpm not npm", "--now", "2026-11-10T08:00:00"]).exit_code == 0
    out = _trail(tmp_path, request)
    proc = subprocess.run([sys.executable, "-c", _KILLED_PROPOSING, "-w", str(ws.root), "--now",
                           "2026-11-27T08:00:00", "import", "trail", str(out)], capture_output=True, text=True,
                          env={**os.environ, "KG_SERVER": "0"}, cwd=request.config.rootpath)
    assert proc.returncode == -9, proc.stdout + proc.stderr
    resumed = run_kg(["import", "trail", "--json", "--now", "2026-11-27T08:30:00"])  # no paths: the mark's
    assert resumed.exit_code == 0 and resumed.json["resumed"], resumed.stdout + resumed.stderr
    (p,) = _imports(run_kg)
    assert p["target"] == "TOOLS.md" and p["text"] == RULE, p
    assert _status(run_kg) == "active"  # not `promoted` with nothing rendered
    assert run_kg(["skip", str(p["number"]), "--reason", "not ours", "--now", "2026-11-28T11:00"]).exit_code == 0
    for d, s in (("2026-11-29", "t1"), ("2026-11-30", "t2"), ("2026-12-01", "t3")):
        _log(run_kg, d, s)
    r = run_kg(["cycle", "--now", "2026-12-02T10:00:00"])
    assert r.exit_code == 0 and f"promoted '{KEY}' to TOOLS.md" in r.stdout, r.stdout


def test_a_dry_run_counts_the_rule_proposals_the_import_makes(ws, run_kg, tmp_path, request):
    """rev5 #4: `--dry-run` said `rules_proposed: 0` (and nothing of the TOOLS.md rule) where the import then made
    one proposal: it counts them from the files as it counts principles, and says that the import decides."""
    assert run_kg(["log", "learning", "use pnpm not npm", "--now", "2026-11-10T08:00:00"]).exit_code == 0
    out = _trail(tmp_path, request)
    dry = run_kg(["import", "trail", str(out), "--json", "--dry-run", "--now", "2026-11-27T08:00:00"])
    assert dry.exit_code == 0 and dry.json["rules_proposed"] == 1, dry.stdout + dry.stderr
    assert any("1 promoted rule(s)" in w and "pending `import` proposal" in w and "dry run reads no graph" in w
               for w in dry.json["warnings"]), dry.json["warnings"]
    text = run_kg(["import", "trail", str(out), "--dry-run", "--now", "2026-11-27T08:00:00"])
    assert text.exit_code == 0, text.stderr
    assert "1 promoted rule(s) of another workspace would wait for your approval" in text.stdout, text.stdout
    assert "Warning: 1 promoted rule(s) for TOOLS.md" in text.stderr, text.stderr
    assert _imports(run_kg) == []  # (nothing written)
    real = run_kg(["import", "trail", str(out), "--json", "--now", "2026-11-27T08:00:00"])
    assert real.exit_code == 0 and real.json["rules_proposed"] == 1 == len(_imports(run_kg)), real.stdout


def test_an_import_proposal_whose_pattern_was_promoted_here_is_closed_by_the_cycle(ws, run_kg, tmp_path, request):
    """This workspace promoted the pattern itself, from its own entries: the other workspace's rule of it, proposed
    by the import, stayed pending, and approving it was refused ("skip proposal #N"). The next cycle closes it as
    superseded (its own rule stands, checked against its own evidence: a second rule of one pattern would make the
    verdict on either meaningless) and says so, as `kg status` does."""
    for d, s in (("2026-11-10", "h1"), ("2026-11-11", "h2"), ("2026-11-12", "h3")):
        _log(run_kg, d, s)
    assert f"promoted '{KEY}' to TOOLS.md" in run_kg(["cycle", "--now", "2026-11-13T10:00:00"]).stdout
    out = _trail(tmp_path, request)
    assert run_kg(["import", "trail", str(out), "--now", "2026-11-27T08:00:00"]).exit_code == 0
    numbers = [p["number"] for p in _imports(run_kg)]
    assert len(numbers) == 1, numbers
    r = run_kg(["cycle", "--json", "--now", "2026-11-27T09:00:00"])
    assert r.exit_code == 0, r.stderr
    assert [(q["number"], q["pattern_key"]) for q in r.json["superseded"]] == [(n, KEY) for n in numbers], r.json
    assert _imports(run_kg) == []
    text = run_kg(["cycle", "--now", "2026-11-27T09:00:00", "--dry-run"]).stdout
    assert "superseded" not in text, text  # closed once
    status = run_kg(["status", "--json", "--now", "2026-11-27T10:00:00"])
    assert status.exit_code == 0, status.stderr
    assert [q["number"] for q in status.json["lifecycle"]["proposals_superseded"]] == numbers, status.json["lifecycle"]
    assert "superseded" in run_kg(["status", "--now", "2026-11-27T10:00:00"]).stdout
    assert (ws.root / "TOOLS.md").read_text().count(RULE) == 1


def test_closing_the_pattern_skips_the_import_proposal_and_approve_refuses_it(ws, run_kg, imported):
    """rev6 #2: a person's `kg resolve KEY --status wont_fix` while the import proposal waited: approving it still
    promoted the pattern they closed and rendered the rule. Closing skips it, saying why."""
    [q] = _imports(run_kg)
    r = run_kg(["resolve", KEY, "--status", "wont_fix", "--now", "2026-11-27T09:00:00"])
    assert r.exit_code == 0 and f"proposal #{q['number']} skipped: the pattern is closed" in r.stdout, r.stderr
    assert _imports(run_kg) == []
    r = run_kg(["approve", str(q["number"]), "--now", "2026-11-27T10:00:00"])
    assert r.exit_code == 2 and "already skipped" in r.stderr, r.stderr
    assert _status(run_kg) == "wont_fix"
    assert not (ws.root / "TOOLS.md").exists() or RULE not in (ws.root / "TOOLS.md").read_text()
