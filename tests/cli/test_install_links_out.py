"""`kg install` and `kg uninstall` write nothing through a link leading out of the workspace (QA3 #3: a linked
AGENTS.md got kg's block in the outside file and a linked .claude/ the settings, exit 0 and nothing said, where
`kg cycle` and `kg export memory` refuse the same link). The install is refused before it writes anything, with
the one line the rest of kg says (exit 1); a link inside the workspace, and a `--project` folder outside any
workspace, are written as before. The real CLI on real files."""

from __future__ import annotations

import json

import pytest

SHARED = "shared agents file\n"


@pytest.fixture
def outside(tmp_path):
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


def test_install_codex_refuses_a_linked_agents_md_before_writing_anything(run_kg, ws, outside):
    (outside / "AGENTS.md").write_text(SHARED, encoding="utf-8")
    (ws.root / "AGENTS.md").symlink_to(outside / "AGENTS.md")
    for dry in ("--dry-run ", ""):
        r = run_kg(f"install codex {dry}".strip())
        assert r.exit_code == 1, r.stdout + r.stderr
        assert r.stderr == (f"Error: AGENTS.md is a symlink to {outside / 'AGENTS.md'}, outside the workspace "
                            f"{ws.root}; kg will not write there: replace the link with a copy of the file, or link "
                            "to a file inside the workspace\n")
    assert (outside / "AGENTS.md").read_text(encoding="utf-8") == SHARED
    assert not (ws.root / ".codex").exists()  # refused before the hooks and config were written


def test_install_claude_code_refuses_a_linked_claude_folder(run_kg, ws, outside):
    (ws.root / ".claude").symlink_to(outside)
    r = run_kg("install claude-code")
    assert r.exit_code == 1, r.stdout + r.stderr
    assert r.stderr.startswith(f"Error: .claude is a symlink to {outside}, outside the workspace {ws.root}; kg will "
                               "not write .claude/settings.local.json there: replace the link with a copy of the "
                               "folder")
    assert list(outside.iterdir()) == []
    assert not (ws.kg_dir / "installs.json").exists()


def test_uninstall_writes_nothing_through_a_link_made_after_the_install(run_kg, ws, outside):
    assert run_kg("install codex").exit_code == 0
    installed = (ws.root / "AGENTS.md").read_text(encoding="utf-8")
    assert "kaizen-kg:begin" in installed
    (ws.root / "AGENTS.md").rename(outside / "AGENTS.md")
    (ws.root / "AGENTS.md").symlink_to(outside / "AGENTS.md")
    r = run_kg("uninstall codex")
    assert r.exit_code == 1 and "Error: AGENTS.md is a symlink to " in r.stderr, r.stdout + r.stderr
    assert (outside / "AGENTS.md").read_text(encoding="utf-8") == installed
    assert (ws.root / "AGENTS.md").is_symlink()


def test_a_link_inside_the_workspace_is_written_through(run_kg, ws):
    (ws.root / "team-claude").mkdir()
    (ws.root / ".claude").symlink_to("team-claude")
    (ws.root / "NOTES.md").write_text("# Notes\n", encoding="utf-8")
    (ws.root / "AGENTS.md").symlink_to("NOTES.md")
    assert run_kg("install claude-code").exit_code == 0
    assert run_kg("install codex").exit_code == 0
    hooks = json.loads((ws.root / "team-claude" / "settings.local.json").read_text(encoding="utf-8"))["hooks"]
    assert "SessionStart" in hooks
    assert (ws.root / "AGENTS.md").is_symlink() and "kaizen-kg:begin" in (ws.root / "NOTES.md").read_text()
    assert run_kg("uninstall codex").exit_code == 0
    assert (ws.root / "NOTES.md").read_text(encoding="utf-8") == "# Notes\n"


def test_a_project_folder_outside_the_workspace_is_still_installed_into(run_kg, ws, tmp_path):
    """`--project DIR` (an OpenClaw workspace elsewhere) is a folder the person named: kg writes there, links
    in it included, as before (no workspace of kg's bounds it)."""
    project, team = tmp_path / "project", tmp_path / "team"
    project.mkdir()
    team.mkdir()
    (team / "AGENTS.md").write_text(SHARED, encoding="utf-8")
    (project / "AGENTS.md").symlink_to(team / "AGENTS.md")
    assert run_kg(f"install openclaw --project {project}").exit_code == 0
    assert (project / "hooks" / "kaizen-kg" / "handler.js").is_file()
    r = run_kg(f"install codex --project {project}")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert "kaizen-kg:begin" in (team / "AGENTS.md").read_text(encoding="utf-8")
