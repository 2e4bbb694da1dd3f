"""Files kg writes stay in the workspace, and one file kg may not use does not fail the whole job (a QA pass of
the periodic job: `kg export memory --force` rewrote the file an outside symlink led to, and a folder named
USER.md failed `kg cycle`). Real CLI, real files, the demo's real graph."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import kg_runner

NOW = "--now 2026-12-04T09:00"


COPIES_KUZU = "copies the demo workspace's Kùzu file: a team graph stays on the server, so the copy has no rules"


@pytest.fixture
def demo(demo_built, tmp_path):
    """A copy of the demo for one test, with its cycle time and a runner."""
    root = tmp_path / "ws"
    shutil.copytree(demo_built[0], root, symlinks=True)
    return root, demo_built[1], kg_runner(root)


def test_export_memory_refuses_a_symlink_out_of_the_workspace_and_writes_the_rest(run_kg, ws, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("a file of someone else\n", encoding="utf-8")
    (ws.root / "MEMORY.md").symlink_to(outside)
    assert run_kg(f"node add principle 'Prefer small commits' {NOW}").exit_code == 0
    r = run_kg(f"export memory --force {NOW}")
    assert r.exit_code == 1, r.stderr
    assert outside.read_text(encoding="utf-8") == "a file of someone else\n"
    assert (ws.root / "MEMORY.md").is_symlink()
    assert (f"⛔ MEMORY.md: skipped, left as it is: MEMORY.md is a symlink to {outside}, outside the workspace "
            f"{ws.root}; kg will not write there: replace the link with a copy of the file") in r.stdout
    data = run_kg(f"export memory --force --json {NOW}")
    assert data.exit_code == 1 and [s["path"] for s in data.json["skipped"]] == ["MEMORY.md"]
    assert data.json["files"] == []


def test_a_symlink_inside_the_workspace_is_still_written_through(run_kg, ws):
    (ws.root / "NOTES.md").write_text("# Notes\n", encoding="utf-8")
    (ws.root / "MEMORY.md").symlink_to("NOTES.md")
    assert run_kg(f"node add principle 'Prefer small commits' {NOW}").exit_code == 0
    r = run_kg(f"export memory {NOW}")
    assert r.exit_code == 0 and "skipped" not in r.stdout, r.stdout
    assert (ws.root / "MEMORY.md").is_symlink()
    assert "- Prefer small commits\n" in (ws.root / "NOTES.md").read_text(encoding="utf-8")


@pytest.mark.embedded_only(COPIES_KUZU)
def test_cycle_skips_a_folder_named_user_md_and_does_the_rest(demo):
    root, now, kg = demo
    (root / "USER.md").unlink()
    (root / "USER.md").mkdir()
    assert kg(f"node add principle 'Review the diff before pushing' --now {now}").exit_code == 0
    r = kg(f"cycle --now {now}")
    assert r.exit_code == 1, r.stdout + r.stderr
    assert ("  ⛔ USER.md: skipped, left as it is: USER.md is a folder, not a file: kg keeps its text in a file "
            "of that name; move or rename the folder\n") in r.stdout
    assert "📄 MEMORY.md: update" in r.stdout  # the rest of the cycle ran: the new principle is in MEMORY.md
    assert "- Review the diff before pushing\n" in (root / "MEMORY.md").read_text(encoding="utf-8")
    assert not any((root / "USER.md").iterdir())
    again = kg(f"cycle --json --now {now}")
    assert again.exit_code == 1
    assert again.json["skipped"] == [{"path": "USER.md", "reason": "USER.md is a folder, not a file: kg keeps its "
                                      "text in a file of that name; move or rename the folder"}]
    assert again.json["withdrawn"] == []  # a rule in a file kg cannot read is not taken as withdrawn
    assert "  ⛔ USER.md: skipped, left as it is: USER.md is a folder" in kg(f"verify --now {now}").stdout


@pytest.mark.embedded_only(COPIES_KUZU)
def test_cycle_leaves_a_file_an_outside_link_leads_to_as_it_is(demo, tmp_path):
    root, now, kg = demo
    outside = tmp_path / "TOOLS-elsewhere.md"
    outside.write_bytes((root / "TOOLS.md").read_bytes())
    before = outside.read_bytes()
    (root / "TOOLS.md").unlink()
    (root / "TOOLS.md").symlink_to(outside)
    assert kg(f"node add principle 'Review the diff before pushing' --now {now}").exit_code == 0
    r = kg(f"cycle --json --now {now}")
    assert r.exit_code == 1
    assert [s["path"] for s in r.json["skipped"]] == ["TOOLS.md"]
    assert "outside the workspace" in r.json["skipped"][0]["reason"]
    assert [f["path"] for f in r.json["files"]] == ["MEMORY.md"]
    assert outside.read_bytes() == before


def test_a_daily_log_linked_out_of_the_workspace_is_not_appended_to_and_the_entry_is_kept(run_kg, ws, tmp_path):
    outside = tmp_path / "elsewhere.md"
    outside.write_text("mine\n", encoding="utf-8")
    (ws.memory / "2026-12-04.md").symlink_to(outside)
    r = run_kg(f"log error 'git push failed: no upstream branch' {NOW} --json")
    assert r.exit_code == 0, r.stderr
    assert r.stderr.startswith("Warning: memory/2026-12-04.md is a symlink to ")
    assert outside.read_text(encoding="utf-8") == "mine\n"
    assert run_kg(f"show {r.json['id']}").exit_code == 0


def test_pref_set_keeps_the_preference_and_leaves_an_outside_user_md_alone(run_kg, ws, tmp_path):
    outside = tmp_path / "USER.md"
    outside.write_text("someone's profile\n", encoding="utf-8")
    (ws.root / "USER.md").symlink_to(outside)
    r = run_kg("pref set editor vim")
    assert r.exit_code == 0 and "USER.md is a symlink to" in r.stderr and r.stderr.startswith("Warning: ")
    assert outside.read_text(encoding="utf-8") == "someone's profile\n"
    assert run_kg("pref get editor --json").json["value"] == "vim"



def test_ingest_keeps_every_entry_when_the_daily_log_links_out_of_the_workspace(run_kg, ws, tmp_path):
    outside = tmp_path / "elsewhere.md"
    outside.write_text("mine\n", encoding="utf-8")
    (ws.memory / "2026-12-04.md").symlink_to(outside)
    lines = tmp_path / "entries.jsonl"
    lines.write_text('{"kind": "error", "summary": "npm ci failed", "at": "2026-12-04T09:00"}\n'
                     '{"kind": "learning", "summary": "use pnpm here", "at": "2026-12-04T09:05"}\n', encoding="utf-8")
    r = run_kg(["ingest", str(lines), "--json"])
    assert r.exit_code == 0, r.stderr
    assert r.json["logged"] == 2 and r.stderr.count("Warning: memory/2026-12-04.md is a symlink to ") == 1
    assert outside.read_text(encoding="utf-8") == "mine\n"
    assert len(run_kg("list --json").json) == 2


def test_skill_new_refuses_a_skills_folder_linked_out_of_the_workspace(run_kg, ws, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.rmtree(ws.memory / "skills", ignore_errors=True)
    (ws.memory / "skills").symlink_to(outside)
    r = run_kg(f"skill new sym-skill --description 'Deploy the docs' {NOW}")
    assert r.exit_code == 1, r.stdout + r.stderr
    assert r.stderr == (f"Error: memory/skills is a symlink to {outside}, outside the workspace {ws.root}; kg will "
                        "not write there: replace the link with a copy of the folder, or link to a folder inside "
                        "the workspace\n")
    assert list(outside.iterdir()) == []
    assert run_kg("skill list --json").json == []


def test_export_trail_refuses_a_learnings_folder_linked_out_of_the_workspace(run_kg, ws, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (ws.root / ".learnings").symlink_to(outside)
    assert run_kg(f"log error 'git push failed: no upstream branch' {NOW}").exit_code == 0
    for args in ("export trail --learnings", "export trail"):  # named, or because the folder is there
        r = run_kg(f"{args} {NOW}")
        assert r.exit_code == 1, r.stdout + r.stderr
        assert r.stderr.startswith(f"Error: .learnings is a symlink to {outside}, outside the workspace {ws.root}; ")
    assert list(outside.iterdir()) == []


def test_session_end_refuses_a_sessions_folder_linked_out_of_the_workspace(run_kg, ws, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    sid = run_kg(f"session start --json {NOW}").json["id"]
    shutil.rmtree(ws.memory / "sessions", ignore_errors=True)
    (ws.memory / "sessions").symlink_to(outside)
    r = run_kg(f"session end --session {sid} --summary 'shipped the docs' {NOW}")
    assert r.exit_code == 1, r.stdout + r.stderr
    assert r.stderr.startswith(f"Error: memory/sessions is a symlink to {outside}, outside the workspace ")
    assert list(outside.iterdir()) == []


@pytest.mark.embedded_only(COPIES_KUZU)
def test_cycle_leaves_a_read_only_instruction_file_as_it_is(demo):
    """A read-only TOOLS.md whose block is current is left as it is and is no failure: kg has nothing to write
    there (QA2 #7: it was 'skipped' with exit 1 on every daily run). One kg must write to is skipped, exit 1:
    tests/cli/test_held_reverts.py."""
    root, now, kg = demo
    tools = root / "TOOLS.md"
    tools.chmod(0o444)  # kg runs as root here: the mode bits, not a failed write, must stop it
    before, inode = tools.read_bytes(), tools.stat().st_ino
    assert kg(f"node add principle 'Review the diff before pushing' --now {now}").exit_code == 0
    dry = kg(f"cycle --dry-run --json --now {now}")
    assert dry.exit_code == 0 and dry.json["skipped"] == [], dry.stdout + dry.stderr
    r = kg(f"cycle --now {now}")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert "TOOLS.md" not in r.stdout and "📄 MEMORY.md: update" in r.stdout
    assert tools.read_bytes() == before and tools.stat().st_ino == inode


def test_a_folder_named_preferences_json_is_said_with_its_fix_by_pref_and_doctor(run_kg, ws):
    (ws.memory / "preferences.json").mkdir()
    said = ("memory/preferences.json is a folder, not a file: kg keeps its text in a file of that name; move or "
            "rename the folder")
    for args in ("pref list", "pref set editor vim"):
        r = run_kg(args)
        assert (r.exit_code, r.stderr) == (1, f"Error: {said}\n"), args
    doctor = run_kg("doctor --json")
    assert doctor.exit_code == 1 and not doctor.json["ok"]
    assert {"name": "preferences", "status": "error", "detail": said} in doctor.json["checks"]
    (ws.memory / "preferences.json").rmdir()
    assert {"name": "preferences", "status": "ok", "detail": "memory/preferences.json is readable and kg may "
            "write it"} in run_kg("doctor --json").json["checks"]


def test_doctor_exits_1_on_damaged_block_markers_and_says_the_fix(ws, run_kg):
    """kg leaves a block with a lost end marker alone, so no promotion reaches that file until a person mends it:
    `kg doctor` said so as a warning and exited 0, though its help says it exits 1 when a person is needed."""
    (ws.root / "MEMORY.md").write_text("# Memory\n\n<!-- kaizen-kg:begin principles -->\n- a rule\n")
    r = run_kg(["doctor"])
    assert r.exit_code == 1, r.stdout + r.stderr
    assert "MEMORY.md [principles]" in r.stdout and "<!-- kaizen-kg:end principles -->" in r.stdout, r.stdout
    (ws.root / "MEMORY.md").write_text("# Memory\n")
    assert run_kg(["doctor"]).exit_code == 0
