"""Files kg writes stay in the workspace, and one file kg may not use does not fail the whole job (a QA pass of
the periodic job: `kg export memory --force` rewrote the file an outside symlink led to, and a folder named
USER.md failed `kg cycle`). Real CLI, real files, the demo's real graph."""

from __future__ import annotations

NOW = "--now 2026-12-04T09:00"


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

