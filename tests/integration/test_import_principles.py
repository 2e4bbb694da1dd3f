"""Another workspace's principles imported into a graph with a history of its own wait for a human: each is a
pending `import` proposal, not a line of this workspace's MEMORY.md at the next `kg cycle`. `kg approve N` renders
it as a change (verified like a promotion), `kg skip N` keeps it out for good. A restore into an empty graph renders
them as before. Real CLI, real graph."""

from __future__ import annotations

import pytest

from tests.conftest import fresh_workspace, kg_runner

THEIRS = "Always pin the base image digest in Dockerfiles"
OWN = "Prefer small commits with a message that says why"


def _other_trail(tmp_path, request, *principles: str):
    """Another workspace holding `principles` (added by hand on 2026-05-02), exported as a trail: its path."""
    other = fresh_workspace(tmp_path / "other", request)
    run_o = kg_runner(other.root)
    for text in principles:
        assert run_o(["node", "add", "principle", text, "--now", "2026-05-02T10:00"]).exit_code == 0
    out = other.root / "theirs.json"
    assert run_o(["export", "trail", "--out", str(out), "--now", "2026-05-02T11:00"]).exit_code == 0
    return out


@pytest.fixture
def imported(ws, run_kg, tmp_path, request):
    assert run_kg(["node", "add", "principle", OWN, "--now", "2026-05-01T10:00"]).exit_code == 0
    assert run_kg(["cycle", "--now", "2026-05-01T11:00"]).exit_code == 0
    out = _other_trail(tmp_path, request, THEIRS)
    r = run_kg(["import", "trail", str(out), "--json", "--now", "2026-05-03T09:00"])
    assert r.exit_code == 0, r.stderr
    return out


def _memory(ws) -> str:
    path = ws.root / "MEMORY.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def _pending(run_kg) -> list[dict]:
    r = run_kg(["propose", "--json"])
    assert r.exit_code == 0, r.stderr
    return [p for p in r.json if p["type"] == "import"]


def test_imported_principle_waits_for_approval(ws, run_kg, imported):
    r = run_kg(["cycle", "--now", "2026-05-03T10:00"])
    assert r.exit_code == 0, r.stderr
    memory = _memory(ws)
    assert OWN in memory and THEIRS not in memory, memory
    (p,) = _pending(run_kg)
    assert p["text"] == THEIRS and "theirs.json" in p["motivation"], p
    text = run_kg(["propose"]).stdout
    assert THEIRS in text and "imported" in text, text
    status = run_kg(["status", "--json"])
    assert status.exit_code == 0, status.stderr
    listed = [q for q in status.json["lifecycle"]["proposals_pending"] if q["type"] == "import"]
    assert [q["number"] for q in listed] == [p["number"]] and "theirs.json" in listed[0]["change"], listed
    assert "import" in run_kg(["status"]).stdout
    a = run_kg(["approve", str(p["number"]), "--json", "--now", "2026-05-03T11:00"])
    assert a.exit_code == 0 and a.json["action"] == "applied", a.stdout + a.stderr
    assert THEIRS in _memory(ws) and OWN in _memory(ws)
    assert run_kg(["cycle", "--now", "2026-05-03T12:00"]).exit_code == 0
    assert THEIRS in _memory(ws)
    why = run_kg(["why", f"- {THEIRS}", "--json", "--now", "2026-05-03T12:00"])
    assert why.exit_code == 0 and why.json["change"]["id"] == a.json["change"], why.stdout
    assert any("imported" in x and "approved" in x for x in why.json["explanation"]), why.json
    # it relates to nothing here: no next check (one that never came, rev5 #5), and why says it is not verified
    assert why.json["change"]["next_check"] is None and why.json["change"]["unverified"], why.json["change"]


def test_skipped_import_is_never_rendered(ws, run_kg, imported):
    (p,) = _pending(run_kg)
    s = run_kg(["skip", str(p["number"]), "--reason", "not how we work", "--now", "2026-05-03T10:00"])
    assert s.exit_code == 0, s.stderr
    for day in ("2026-05-03T11:00", "2026-05-20T11:00"):
        assert run_kg(["cycle", "--now", day]).exit_code == 0
        assert THEIRS not in _memory(ws) and OWN in _memory(ws)
    assert _pending(run_kg) == []


def test_restore_into_an_empty_graph_renders_as_before(tmp_path, request):
    out = _other_trail(tmp_path, request, THEIRS)
    new = fresh_workspace(tmp_path / "new", request)
    run_n = kg_runner(new.root)
    assert run_n(["import", "trail", str(out), "--now", "2026-05-03T09:00"]).exit_code == 0
    assert run_n(["cycle", "--now", "2026-05-03T10:00"]).exit_code == 0
    assert THEIRS in _memory(new)
    assert _pending(run_n) == []


PROMOTED = "Review the staged diff before every commit"


@pytest.mark.baseline_wait_off("the other workspace promotes within its first days: the test is about importing it")
def test_promoted_principle_of_another_workspace_is_verified_once_approved(ws, run_kg, tmp_path, request):
    """The other workspace promoted it (its change is that workspace's lifecycle, not imported): here it waits,
    and once approved its change is checked against the pattern it came from, like a promotion."""
    assert run_kg(["node", "add", "principle", OWN, "--now", "2026-05-01T10:00"]).exit_code == 0
    out = _promoted_trail(tmp_path, request)
    r = run_kg(["import", "trail", str(out), "--now", "2026-05-09T10:00"])
    assert r.exit_code == 0 and "1 principle(s) of another workspace wait for your approval" in r.stdout, r.stdout
    assert run_kg(["cycle", "--now", "2026-05-09T11:00"]).exit_code == 0
    assert PROMOTED not in _memory(ws) and OWN in _memory(ws)
    assert _pattern_status(run_kg) == "active"  # held by the proposal, not `promoted` with nothing rendered
    (p,) = _pending(run_kg)
    a = run_kg(["approve", str(p["number"]), "--json", "--now", "2026-05-09T12:00"])
    assert a.exit_code == 0 and PROMOTED in _memory(ws), a.stdout + a.stderr
    assert _pattern_status(run_kg) == "promoted"  # rendered here now
    c = run_kg(["cycle", "--json", "--now", "2026-05-17T12:00"])
    assert c.exit_code == 0, c.stderr
    assert [v["change"] for v in c.json["verified"]] == [a.json["change"]], c.json["verified"]
    why = run_kg(["why", f"- {PROMOTED}", "--json", "--now", "2026-05-17T12:00"]).json
    assert why["pattern"]["key"] == "commit.review", why


def test_a_dry_run_counts_the_proposals_the_import_makes(ws, run_kg, tmp_path, request):
    """`--dry-run` said 0 principles proposed where the import then made one: it counts them, in text and JSON,
    and says that the import decides (a dry run reads no graph: into an empty one they are rendered as before)."""
    assert run_kg(["node", "add", "principle", OWN, "--now", "2026-05-01T10:00"]).exit_code == 0
    out = _other_trail(tmp_path, request, THEIRS, PROMOTED)
    dry = run_kg(["import", "trail", str(out), "--json", "--dry-run", "--now", "2026-05-03T09:00"])
    assert dry.exit_code == 0 and dry.json["principles_proposed"] == 2, dry.stdout + dry.stderr
    assert any("pending `import` proposal" in w and "dry run reads no graph" in w for w in dry.json["warnings"])
    text = run_kg(["import", "trail", str(out), "--dry-run", "--now", "2026-05-03T09:00"])
    assert text.exit_code == 0, text.stderr
    assert "2 principle(s) of another workspace would wait for your approval" in text.stdout, text.stdout
    assert "Warning: 2 active principle(s) in the trail" in text.stderr, text.stderr
    assert _pending(run_kg) == []  # (nothing written)
    real = run_kg(["import", "trail", str(out), "--json", "--now", "2026-05-03T09:00"])
    assert real.exit_code == 0 and real.json["principles_proposed"] == 2 == len(_pending(run_kg)), real.stdout


# The real CLI in a child that SIGKILLs itself in the import once its principles are loaded and `after` of their
# proposals are made (kg/lifecycle/imported.py `propose`): a point in the run chosen exactly, no timing.
_KILLED_PROPOSING = """
import os, sys
import kg.lifecycle.imported as I
from kg.cli.app import run
after, propose = int(sys.argv[1]), I.propose
def killing(st, rows, at, lp):
    propose(st, rows[:after], at, lp)
    os.kill(os.getpid(), 9)
I.propose = killing
run(sys.argv[2:])
"""


@pytest.mark.parametrize("after", [0, 1])
def test_an_import_killed_after_loading_its_principles_proposes_each_once_when_resumed(ws, run_kg, tmp_path,
                                                                                     request, after):
    """Killed with its principles loaded and none (or one) of their proposals made, the import left them free: the
    next cycle wrote another workspace's rules into MEMORY.md, and the resumed import, finding them loaded, made no
    proposal. The import's mark names them; the run that resumes it proposes those still without one."""
    import os
    import subprocess
    import sys

    assert run_kg(["node", "add", "principle", OWN, "--now", "2026-05-01T10:00"]).exit_code == 0
    out = _other_trail(tmp_path, request, THEIRS, PROMOTED)
    proc = subprocess.run([sys.executable, "-c", _KILLED_PROPOSING, str(after), "-w", str(ws.root), "--now",
                           "2026-05-03T09:00", "import", "trail", str(out)], capture_output=True, text=True,
                          env={**os.environ, "KG_SERVER": "0"}, cwd=request.config.rootpath)
    assert proc.returncode == -9, proc.stdout + proc.stderr
    resumed = run_kg(["import", "trail", "--json", "--now", "2026-05-03T10:00"])  # no paths: the mark's
    assert resumed.exit_code == 0 and resumed.json["resumed"], resumed.stdout + resumed.stderr
    assert resumed.json["principles_proposed"] == 2 - after, resumed.json
    assert sorted(p["text"] for p in _pending(run_kg)) == sorted([THEIRS, PROMOTED])
    again = run_kg(["import", "trail", str(out), "--json", "--now", "2026-05-03T11:00"])
    assert again.exit_code == 0 and again.json["principles_proposed"] == 0, again.stdout + again.stderr
    assert len(_pending(run_kg)) == 2
    assert run_kg(["cycle", "--now", "2026-05-03T12:00"]).exit_code == 0
    memory = _memory(ws)
    assert OWN in memory and THEIRS not in memory and PROMOTED not in memory, memory


DIGEST = "Always pin the base image digest"


@pytest.mark.baseline_wait_off("the workspace's pattern recurs on its first days: the test is about the approval")
def test_an_approved_principle_another_workspace_added_by_hand_is_verified_against_the_pattern_it_relates_to(
        ws, run_kg, tmp_path, request):
    """The other workspace's principle was added by hand there (no pattern in its trail): approved here, its change
    had a next check that never came (a change is checked against a pattern, and it had none), where the same
    principle added by hand here is linked to what it relates to. The approval links it as `kg node add` does (the
    import's bulk load links nothing) and checks its change against the pattern of what it is linked to."""
    for d in range(1, 5):
        r = run_kg(["log", "error", "docker build failed: the base image digest changed upstream", "--pattern-key",
                    "docker.base", "--session", f"s{d}", "--now", f"2026-05-0{d}T10:00"])
        assert r.exit_code == 0, r.stderr
    out = _other_trail(tmp_path, request, DIGEST)
    assert run_kg(["import", "trail", str(out), "--now", "2026-05-05T09:00"]).exit_code == 0
    (p,) = _pending(run_kg)
    a = run_kg(["approve", str(p["number"]), "--json", "--now", "2026-05-05T10:00"])
    assert a.exit_code == 0 and DIGEST in _memory(ws), a.stdout + a.stderr
    c = run_kg(["cycle", "--json", "--now", "2026-05-13T12:00"])
    assert c.exit_code == 0, c.stderr
    assert [v["change"] for v in c.json["verified"]] == [a.json["change"]], c.json["verified"]
    assert c.json["verified"][0]["pattern_key"] == "docker.base", c.json["verified"][0]
    why = run_kg(["why", f"- {DIGEST}", "--json", "--now", "2026-05-13T12:00"]).json
    assert why["pattern"]["key"] == "docker.base" and why["change"]["check_count"] == 1, why


def test_an_approved_principle_that_relates_to_nothing_here_says_it_is_not_verified(ws, run_kg, imported):
    """rev5 #5: approved with nothing here to check it against (no pattern of its own, none of what it relates to),
    `kg why` showed a next check that never came, 12 days after its date still 'to come'. It says the change is not
    verified and why, and gives no next check."""
    (p,) = _pending(run_kg)
    a = run_kg(["approve", str(p["number"]), "--json", "--now", "2026-05-03T10:00"])
    assert a.exit_code == 0 and THEIRS in _memory(ws), a.stdout + a.stderr
    assert run_kg(["verify", "--now", "2026-05-21T10:00"]).exit_code == 0
    why = run_kg(["why", THEIRS, "--json", "--now", "2026-05-22T10:00"])
    assert why.exit_code == 0 and why.json["change"]["id"] == a.json["change"], why.stdout + why.stderr
    assert why.json["change"]["next_check"] is None and why.json["pattern"] is None, why.json["change"]
    assert "not verified: it came from no pattern" in why.json["change"]["unverified"], why.json["change"]
    text = run_kg(["why", THEIRS, "--now", "2026-05-22T10:00"]).stdout
    assert "next check" not in text and "verification: none; status applied; not verified" in text, text


def test_a_cycle_between_a_killed_import_and_its_rerun_renders_none_of_its_principles(ws, run_kg, tmp_path, request):
    """Killed with its principles loaded and no proposal made, the import left them free until its rerun: a cycle in
    between wrote another workspace's principles into MEMORY.md, and the next one took them out again once the rerun
    proposed them. The import's mark names them, and a cycle renders none of those while it is there."""
    import os
    import subprocess
    import sys

    assert run_kg(["node", "add", "principle", OWN, "--now", "2026-05-01T10:00"]).exit_code == 0
    out = _other_trail(tmp_path, request, THEIRS, PROMOTED)
    proc = subprocess.run([sys.executable, "-c", _KILLED_PROPOSING, "0", "-w", str(ws.root), "--now",
                           "2026-05-03T09:00", "import", "trail", str(out)], capture_output=True, text=True,
                          env={**os.environ, "KG_SERVER": "0"}, cwd=request.config.rootpath)
    assert proc.returncode == -9, proc.stdout + proc.stderr
    c = run_kg(["cycle", "--now", "2026-05-03T09:30"])
    assert c.exit_code == 0, c.stdout + c.stderr
    memory = _memory(ws)
    assert OWN in memory and THEIRS not in memory and PROMOTED not in memory, memory
    resumed = run_kg(["import", "trail", "--json", "--now", "2026-05-03T10:00"])
    assert resumed.exit_code == 0 and resumed.json["principles_proposed"] == 2, resumed.stdout + resumed.stderr
    assert run_kg(["cycle", "--now", "2026-05-03T12:00"]).exit_code == 0
    memory = _memory(ws)
    assert OWN in memory and THEIRS not in memory and PROMOTED not in memory, memory


def _promoted_trail(tmp_path, request):
    """Another workspace that promoted PROMOTED (pattern commit.review) into its MEMORY.md, and its trail."""
    other = fresh_workspace(tmp_path / "other", request)
    run_o = kg_runner(other.root)
    for d in range(1, 9):
        r = run_o(["log", "learning", "review the diff before each commit", "--pattern-key", "commit.review",
                   "--session", f"s{d}", "--action", PROMOTED, "--now", f"2026-05-0{d}T10:00"])
        assert r.exit_code == 0, r.stderr
    assert "promoted 'commit.review'" in run_o(["cycle", "--now", "2026-05-08T12:00"]).stdout
    out = other.root / "theirs.json"
    assert run_o(["export", "trail", "--out", str(out), "--now", "2026-05-09T09:00"]).exit_code == 0
    return out


def _pattern_status(run_kg) -> str:
    r = run_kg(["patterns", "show", "commit.review", "--json"])
    assert r.exit_code == 0, r.stderr
    return r.json["pattern"]["status"]


@pytest.mark.baseline_wait_off("the other workspace promotes within its first days: the test is about importing it")
def test_a_skipped_promoted_principle_leaves_its_pattern_to_come_back_when_it_recurs(ws, run_kg, tmp_path, request):
    """The other workspace's promoted principle came in with its pattern `promoted`: skipped, nothing rendered it and
    the mistake recurring here was never promoted again. Its pattern waits like an imported rule's: active, held by
    the proposal (no promotion meanwhile, from the trail's events or this workspace's); skipped, it comes back when
    it recurs here, promoted from this workspace's own evidence."""
    assert run_kg(["node", "add", "principle", OWN, "--now", "2026-05-01T10:00"]).exit_code == 0
    out = _promoted_trail(tmp_path, request)
    assert run_kg(["import", "trail", str(out), "--now", "2026-05-09T10:00"]).exit_code == 0
    assert _pattern_status(run_kg) == "active"  # not `promoted` with nothing rendered
    for d, s in (("10", "t1"), ("11", "t2"), ("12", "t3")):
        r = run_kg(["log", "learning", "review the diff before each commit", "--pattern-key", "commit.review",
                    "--session", s, "--action", "Look at git diff --staged first", "--now", f"2026-05-{d}T10:00"])
        assert r.exit_code == 0, r.stderr
    c = run_kg(["cycle", "--now", "2026-05-12T12:00"])
    assert c.exit_code == 0 and "promoted" not in c.stdout, c.stdout  # held by the proposal
    (p,) = _pending(run_kg)
    assert run_kg(["skip", str(p["number"]), "--reason", "not ours", "--now", "2026-05-12T13:00"]).exit_code == 0
    c = run_kg(["cycle", "--now", "2026-05-12T14:00"])
    assert c.exit_code == 0 and "promoted" not in c.stdout, c.stdout  # held until it recurs after the skip
    assert PROMOTED not in _memory(ws) and _pattern_status(run_kg) == "active"
    for d, s in (("13", "u1"), ("14", "u2"), ("15", "u3")):
        r = run_kg(["log", "learning", "review the diff before each commit", "--pattern-key", "commit.review",
                    "--session", s, "--action", "Look at git diff --staged first", "--now", f"2026-05-{d}T10:00"])
        assert r.exit_code == 0, r.stderr
    c = run_kg(["cycle", "--now", "2026-05-16T10:00"])
    assert c.exit_code == 0 and "promoted 'commit.review'" in c.stdout, c.stdout
    assert PROMOTED not in _memory(ws) and _pattern_status(run_kg) == "promoted"
