"""`kg approve` of a proposal whose target file a person made read-only is an operational failure, exit 1, with the
message that says how to fix it, as `kg cycle` and `kg export memory` exit 1 for the same file (QA1 #8: it exited 2,
as for a mistyped command). The same for the two import paths (another workspace's principle into MEMORY.md, its
rule into TOOLS.md). A person's edit inside the block stays theirs to settle first (exit 2). Nothing is approved:
the proposal waits, and approving it once the file is writable works. The real CLI, real files, a real graph."""

from __future__ import annotations

import json
import os
import stat

import pytest

from tests.conftest import fresh_workspace, kg_runner

pytestmark = pytest.mark.baseline_wait_off("promotions on a workspace's first days")


def _writable(path) -> None:
    os.chmod(path, stat.S_IMODE(os.stat(path).st_mode) | 0o200)


def _pending(run_kg, kind: str) -> list[dict]:
    r = run_kg(["propose", "--json"])
    assert r.exit_code == 0, r.stderr
    return [p for p in r.json if p["type"] == kind]


def _refused_then_approved(ws, run_kg, capsys, p: dict, file: str, now: str) -> None:
    path = ws.root / file
    if not path.exists():
        path.write_text("# mine\n", encoding="utf-8")
    before = path.read_bytes()
    why = (f"Error: {file}: {file} is read-only (mode 444); kg will not replace a file a person made read-only: make "
           f"it writable (chmod u+w {file}) for kg to update it; fix the file, then approve again\n")
    os.chmod(path, 0o444)  # kg's own check reads the mode, root or not
    r = run_kg(["approve", str(p["number"]), "--now", now])
    assert (r.exit_code, r.stdout, r.stderr) == (1, "", why)
    from kg.cli.app import run  # the path every command line takes: with --json, the error is JSON on stdout too

    capsys.readouterr()
    code = run(["-w", str(ws.root), "approve", str(p["number"]), "--json", "--now", now])
    out, err = capsys.readouterr()
    assert (code, json.loads(out), err) == (1, {"error": why[len("Error: "):-1], "exit_code": 1}, why)
    assert path.read_bytes() == before and p in _pending(run_kg, p["type"])  # nothing approved: it waits
    _writable(path)
    r = run_kg(["approve", str(p["number"]), "--json", "--now", now])
    assert r.exit_code == 0 and r.json["action"] == "applied", r.stdout + r.stderr
    assert p["text"] in path.read_text(encoding="utf-8")


def test_approving_a_promotion_into_a_read_only_file_exits_1(ws, run_kg, capsys):
    for s in (1, 2):
        assert run_kg(f"session start --now 2026-11-2{s}T09:00:00").exit_code == 0
        for i in (1, 2):
            r = run_kg(["log", "learning", "User: keep functions small", "--category", "correction", "--area",
                        "backend", "--pattern-key", "style.small_funcs", "--action", "Keep functions under 40 lines",
                        "--now", f"2026-11-2{s}T09:2{i}:00"])
            assert r.exit_code == 0, r.stderr
        assert run_kg(f"session end --summary x --now 2026-11-2{s}T17:00:00").exit_code == 0
    assert run_kg("cycle --now 2026-11-23T06:15:00").exit_code == 0
    (p,) = _pending(run_kg, "promotion")
    assert p["target"] == "SOUL.md", p
    (ws.root / "SOUL.md").write_text("# Soul\n\n## Boundaries\n- be kind\n", encoding="utf-8")
    _refused_then_approved(ws, run_kg, capsys, p, "SOUL.md", "2026-11-23T07:00:00")


def test_damaged_markers_in_the_target_are_still_the_person_s_to_fix_first(ws, run_kg):
    """Not an operational failure: the file is writable, and what is wrong is in it, for its owner to settle."""
    for s in (1, 2):
        for i in (1, 2):
            r = run_kg(["log", "learning", "User: keep functions small", "--category", "correction",
                        "--pattern-key", "style.small_funcs", "--action", "Keep functions under 40 lines",
                        "--session", f"s{s}", "--now", f"2026-11-2{s}T09:2{i}:00"])
            assert r.exit_code == 0, r.stderr
    assert run_kg("cycle --now 2026-11-23T06:15:00").exit_code == 0
    (p,) = _pending(run_kg, "promotion")
    (ws.root / "SOUL.md").write_text("<!-- kaizen-kg:begin kaizen-kg -->\n<!-- kaizen-kg:begin kaizen-kg -->\n")
    r = run_kg(["approve", str(p["number"]), "--now", "2026-11-23T07:00:00"])
    assert r.exit_code == 2 and "markers for 'kaizen-kg' are damaged" in r.stderr, r.stderr


def _other(tmp_path, request):
    """Another workspace holding a principle added by hand and a rule it promoted into TOOLS.md: its trail."""
    other = fresh_workspace(tmp_path / "other", request)
    run_o = kg_runner(other.root)
    assert run_o(["node", "add", "principle", "Always pin the base image digest in Dockerfiles",
                  "--now", "2026-11-02T10:00"]).exit_code == 0
    for d, s in (("2026-11-05", "s1"), ("2026-11-06", "s2"), ("2026-11-08", "s3")):
        r = run_o(["log", "error", "git push failed: no upstream branch", "--area", "tooling", "--pattern-key",
                   "git.push.no_upstream", "--session", s, "--action", "run git push -u origin HEAD",
                   "--now", f"{d}T10:00:00"])
        assert r.exit_code == 0, r.stderr
    assert "promoted 'git.push.no_upstream' to TOOLS.md" in run_o(["cycle", "--now", "2026-11-20T05:40"]).stdout
    out = other.root / "theirs.json"
    assert run_o(["export", "trail", "--out", str(out), "--now", "2026-11-20T06:00:00"]).exit_code == 0
    return out


@pytest.mark.parametrize("file", ["MEMORY.md", "TOOLS.md"])
def test_approving_an_import_into_a_read_only_file_exits_1(ws, run_kg, capsys, tmp_path, request, file):
    assert run_kg(["log", "learning", "use pnpm not npm", "--now", "2026-11-10T08:00:00"]).exit_code == 0
    r = run_kg(["import", "trail", str(_other(tmp_path, request)), "--json", "--now", "2026-11-27T08:00:00"])
    assert r.exit_code == 0, r.stderr
    found = [p for p in run_kg(["propose", "--json"]).json if p["type"] == "import" and p["target"] == file]
    assert len(found) == 1, found
    _refused_then_approved(ws, run_kg, capsys, found[0], file, "2026-11-27T10:00:00")
