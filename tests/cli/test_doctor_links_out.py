"""kg doctor's files check looks at the folders kg writes into, not only the files in them (QA3 #5: with
memory/skills and memory/sessions linked out of the workspace, `kg skill new` and `kg session end` failed while
doctor said "session and skill files stay inside the workspace", exit 0). Each such link is an error naming the
link and the fix, exit 1; memory/ linked out is said once. The real CLI on real files."""

from __future__ import annotations

import shutil

import pytest


def _files(r) -> list[dict]:
    return [c for c in r.json["checks"] if c["name"] == "files"]


def test_doctor_says_a_linked_skills_and_sessions_folder_that_commands_refuse(run_kg, ws, tmp_path):
    assert [c["status"] for c in _files(run_kg("doctor --json"))] == ["ok"]
    for name in ("skills", "sessions"):
        shutil.rmtree(ws.memory / name, ignore_errors=True)
        (tmp_path / name).mkdir()
        (ws.memory / name).symlink_to(tmp_path / name)
    refused = run_kg("skill new deploy-app --description d --step s")
    assert refused.exit_code == 1 and refused.stderr.startswith("Error: memory/skills is a symlink to ")
    r = run_kg("doctor --json")
    assert r.exit_code == 1, r.stdout
    assert [(c["status"], c["detail"]) for c in _files(r)] == [
        ("error", f"memory/{name} is a symlink to {tmp_path / name}, outside the workspace {ws.root}; kg will not "
                  "write there: replace the link with a copy of the folder, or link to a folder inside the workspace")
        for name in ("skills", "sessions")]


def test_doctor_says_a_linked_memory_folder_once_and_a_linked_learnings(run_kg, ws, tmp_path):
    (ws.memory).rename(tmp_path / "memory")
    (ws.root / "memory").symlink_to(tmp_path / "memory")
    (tmp_path / "learnings").mkdir()
    (ws.root / ".learnings").symlink_to(tmp_path / "learnings")
    r = run_kg("doctor --json")
    assert r.exit_code == 1, r.stdout
    details = [c["detail"] for c in _files(r)]
    assert [d.split(" is a symlink")[0] for d in details] == ["memory", ".learnings"], details


def test_a_folder_linked_inside_the_workspace_passes(run_kg, ws):
    shutil.rmtree(ws.memory / "skills", ignore_errors=True)
    (ws.root / "team-skills").mkdir()
    (ws.memory / "skills").symlink_to(ws.root / "team-skills")
    r = run_kg("doctor --json")
    assert [(c["status"], c["detail"]) for c in _files(r)] == [
        ("ok", "session and skill files stay inside the workspace")]


@pytest.mark.embedded_only("graph.kuzu is the embedded store's file")
def test_a_graph_file_kept_elsewhere_is_no_link_problem(run_kg, ws, tmp_path):
    """Kùzu writes the graph file, and a restore writes through its link (tests/integration/test_rollback.py):
    kept elsewhere through a link, it is not called a link out."""
    assert run_kg("log learning 'logged before the link' --wait").exit_code == 0
    target = tmp_path / "elsewhere" / "graph.kuzu"
    target.parent.mkdir()
    ws.graph_path.replace(target)
    ws.graph_path.symlink_to(target)
    r = run_kg("doctor --json")
    assert [(c["status"], c["detail"]) for c in _files(r)] == [
        ("ok", "session and skill files stay inside the workspace")]


def test_doctor_says_a_linked_file_kg_install_writes_and_install_refuses(run_kg, ws, tmp_path):
    """QA (w-flinks): a linked AGENTS.md leading out of the workspace passed doctor's files check while `kg install
    codex` refused it. Each file install writes (AGENTS.md, .claude/ and its settings, .mcp.json, .codex/, the OpenClaw
    hook folder) is now looked at: a link out is an error naming it and the fix, one line per link, exit 1; a link
    inside the workspace passes."""
    (ws.root / "AGENTS.md").unlink(missing_ok=True)
    (tmp_path / "AGENTS.md").write_text("# someone else's\n", encoding="utf-8")
    (ws.root / "AGENTS.md").symlink_to(tmp_path / "AGENTS.md")
    (tmp_path / "claude").mkdir()
    (ws.root / ".claude").symlink_to(tmp_path / "claude")
    refused = run_kg("install codex --dry-run")
    assert refused.exit_code == 1 and refused.stderr.startswith("Error: AGENTS.md is a symlink to "), refused.stderr
    r = run_kg("doctor --json")
    assert r.exit_code == 1, r.stdout
    assert [(c["status"], c["detail"]) for c in _files(r)] == [
        ("error", f".claude is a symlink to {tmp_path / 'claude'}, outside the workspace {ws.root}; kg will not write "
                  ".claude/settings.json there: replace the link with a copy of the folder, or link to a folder "
                  "inside the workspace (`kg install` writes it, and refuses until then)"),
        ("error", f"AGENTS.md is a symlink to {tmp_path / 'AGENTS.md'}, outside the workspace {ws.root}; kg will not "
                  "write there: replace the link with a copy of the file, or link to a file inside the workspace "
                  "(`kg install` writes it, and refuses until then)")]
    assert (tmp_path / "AGENTS.md").read_text(encoding="utf-8") == "# someone else's\n"
    (ws.root / "AGENTS.md").unlink()
    (ws.root / ".claude").unlink()
    (ws.root / "team-agents.md").write_text("# ours\n", encoding="utf-8")
    (ws.root / "AGENTS.md").symlink_to(ws.root / "team-agents.md")  # a link inside the workspace passes
    r = run_kg("doctor --json")
    assert [(c["status"], c["detail"]) for c in _files(r)] == [
        ("ok", "session and skill files stay inside the workspace")]
