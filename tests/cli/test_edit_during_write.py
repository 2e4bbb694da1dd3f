"""A write made to a file kg reads, changes and replaces (memory/preferences.json, a skill file, a runtime's
settings, a crontab file, kg.toml), between kg's read and its replace, is never lost: kg reads the file again
and merges, or, when it keeps changing, leaves it as that person left it and says so (exit 1). The write is
injected through `kg.core.files.BEFORE_REPLACE`, called after kg's new content is on disk and before the check
and the replace (as tests/integration/test_concurrent_edit.py does for the block exports)."""

from __future__ import annotations

import json

from kg.core import files


def _writer(path, edit, times: int | None):
    """A hook that runs `edit(path, n)` each time kg is about to replace `path` (`times` at most)."""
    done: list[int] = []

    def hook(target) -> None:
        if target.resolve() == path.resolve() and (times is None or len(done) < times):
            edit(path, len(done))
            done.append(len(done))
    return hook, done


def _add_key(path, n: int) -> None:
    data = json.loads(path.read_text()) if path.exists() else {}
    data[f"human_{n}"] = "by hand"
    path.write_text(json.dumps(data, indent=2) + "\n")


def test_pref_set_keeps_a_key_written_meanwhile(ws, run_kg, monkeypatch):
    prefs = ws.root / "memory" / "preferences.json"
    assert run_kg("pref set tone concise").exit_code == 0
    hook, done = _writer(prefs, _add_key, 1)
    with monkeypatch.context() as m:
        m.setattr(files, "BEFORE_REPLACE", hook)
        r = run_kg("pref set language en")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert done and json.loads(prefs.read_text()) == {"tone": "concise", "language": "en", "human_0": "by hand"}
    history = [(h["key"], h["action"]) for h in run_kg("pref history --json").json]
    assert ("human_0", "hand-edit") in history  # the person's key is in the history, as any hand edit is


def test_pref_unset_keeps_a_key_written_meanwhile(ws, run_kg, monkeypatch):
    prefs = ws.root / "memory" / "preferences.json"
    assert run_kg("pref set tone concise").exit_code == 0
    hook, done = _writer(prefs, _add_key, 1)
    with monkeypatch.context() as m:
        m.setattr(files, "BEFORE_REPLACE", hook)
        r = run_kg("pref unset tone")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert json.loads(prefs.read_text()) == {"human_0": "by hand"}


def test_pref_set_on_a_file_that_keeps_changing_leaves_it_and_says_so(ws, run_kg, monkeypatch):
    prefs = ws.root / "memory" / "preferences.json"
    assert run_kg("pref set tone concise").exit_code == 0
    hook, done = _writer(prefs, _add_key, None)
    with monkeypatch.context() as m:
        m.setattr(files, "BEFORE_REPLACE", hook)
        r = run_kg("pref set language en")
    assert r.exit_code == 1, r.stdout + r.stderr
    assert "preferences.json was written by someone else while kg was updating it" in r.stderr
    assert "Traceback" not in r.stderr
    data = json.loads(prefs.read_text())
    assert "language" not in data and data["tone"] == "concise" and len(done) == files.TRIES
    assert all(data[f"human_{n}"] == "by hand" for n in done)


def _append_pitfall(path, n: int) -> None:
    text = path.read_text()
    path.write_text(text.replace("## Pitfalls\n", f"## Pitfalls\n\n- a pitfall a person wrote {n}\n", 1)
                    if "## Pitfalls\n" in text else text + f"\n## Pitfalls\n\n- a pitfall a person wrote {n}\n")


def test_skill_update_keeps_a_line_written_meanwhile(ws, run_kg, monkeypatch):
    assert run_kg(["skill", "new", "deploy-docs", "-d", "publish the docs", "--step", "build the site"]).exit_code == 0
    skill = ws.root / "memory" / "skills" / "deploy-docs.md"
    hook, done = _writer(skill, _append_pitfall, 1)
    with monkeypatch.context() as m:
        m.setattr(files, "BEFORE_REPLACE", hook)
        r = run_kg(["skill", "update", "deploy-docs", "--step", "upload it"])
    assert r.exit_code == 0, r.stdout + r.stderr
    text = skill.read_text()
    assert done and "a pitfall a person wrote 0" in text and "upload it" in text and "build the site" in text, text


def test_skill_update_on_a_file_that_keeps_changing_leaves_it(ws, run_kg, monkeypatch):
    assert run_kg(["skill", "new", "deploy-docs", "-d", "publish the docs", "--step", "build the site"]).exit_code == 0
    skill = ws.root / "memory" / "skills" / "deploy-docs.md"
    hook, done = _writer(skill, _append_pitfall, None)
    with monkeypatch.context() as m:
        m.setattr(files, "BEFORE_REPLACE", hook)
        r = run_kg(["skill", "update", "deploy-docs", "--step", "upload it"])
    assert r.exit_code == 1 and "deploy-docs.md was written by someone else" in r.stderr, r.stdout + r.stderr
    text = skill.read_text()
    assert "upload it" not in text and all(f"a pitfall a person wrote {n}" in text for n in done), text


def _add_permission(path, n: int) -> None:
    data = json.loads(path.read_text()) if path.exists() else {}
    data.setdefault("permissions", {}).setdefault("allow", []).append(f"Bash(make test-{n})")
    path.write_text(json.dumps(data, indent=2) + "\n")


def test_install_keeps_a_settings_edit_made_meanwhile(ws, run_kg, monkeypatch):
    """A person's edit of .claude/settings.local.json while `kg install` merges kg's hooks into it is kept, and
    uninstall afterwards takes out kg's hooks only (the bytes from before the install would lose the edit)."""
    settings = ws.root / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "opus"}, indent=2) + "\n")
    hook, done = _writer(settings, _add_permission, 1)
    with monkeypatch.context() as m:
        m.setattr(files, "BEFORE_REPLACE", hook)
        r = run_kg("install claude-code")
    assert r.exit_code == 0, r.stdout + r.stderr
    data = json.loads(settings.read_text())
    assert done and data["model"] == "opus" and data["permissions"] == {"allow": ["Bash(make test-0)"]}, data
    assert "SessionStart" in data["hooks"]
    assert run_kg("uninstall claude-code").exit_code == 0
    assert json.loads(settings.read_text()) == {"model": "opus", "permissions": {"allow": ["Bash(make test-0)"]}}


def test_a_retried_install_and_uninstall_report_what_their_first_attempt_wrote(ws, run_kg, monkeypatch):
    """A person's edit of .mcp.json between kg's read and replace makes install (and uninstall) run again; the
    first attempt had already written .claude/settings.local.json (install: kg's hooks; uninstall: its bytes from
    before put back), so the --json report says so, not "unchanged" or nothing."""
    settings, mcp = ws.root / ".claude" / "settings.local.json", ws.root / ".mcp.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "opus"}, indent=2) + "\n")
    mcp.write_text(json.dumps({"mcpServers": {}}, indent=2) + "\n")
    for verb, action in (("install", "update"), ("uninstall", "update")):
        hook, done = _writer(mcp, _add_key, 1)
        with monkeypatch.context() as m:
            m.setattr(files, "BEFORE_REPLACE", hook)
            r = run_kg(f"{verb} claude-code --json")
        assert r.exit_code == 0 and done, r.stdout + r.stderr
        changes = {c["path"]: c["action"] for c in r.json["changes"]}
        assert changes.get(".claude/settings.local.json") == action, (verb, changes)
        assert changes.get(".mcp.json") == "update", (verb, changes)
    assert json.loads(settings.read_text()) == {"model": "opus"}
    assert json.loads(mcp.read_text()) == {"mcpServers": {}, "human_0": "by hand"}


def test_install_on_settings_that_keep_changing_leaves_them_and_says_so(ws, run_kg, monkeypatch):
    settings = ws.root / ".codex" / "hooks.json"
    settings.parent.mkdir()
    settings.write_text("{}\n")
    hook, done = _writer(settings, _add_permission, None)
    with monkeypatch.context() as m:
        m.setattr(files, "BEFORE_REPLACE", hook)
        r = run_kg("install codex")
    assert r.exit_code == 1 and "hooks.json was written by someone else" in r.stderr, r.stdout + r.stderr
    assert json.loads(settings.read_text()) == {"permissions": {"allow": [f"Bash(make test-{n})" for n in done]}}
    assert run_kg("install codex").exit_code == 0  # run again, the file left alone: kg's hooks are merged in
    data = json.loads(settings.read_text())
    assert "SessionStart" in data["hooks"] and len(data["permissions"]["allow"]) == files.TRIES


def test_install_keeps_an_agents_md_edit_made_meanwhile(ws, run_kg, monkeypatch):
    agents = ws.root / "AGENTS.md"
    agents.write_text("# Agents\n\nMy rules.\n")

    def note(path, n: int) -> None:
        with path.open("a") as f:
            f.write(f"- a rule written meanwhile {n}\n")
    hook, done = _writer(agents, note, 1)
    with monkeypatch.context() as m:
        m.setattr(files, "BEFORE_REPLACE", hook)
        r = run_kg("install codex")
    assert r.exit_code == 0, r.stdout + r.stderr
    text = agents.read_text()
    assert done and "My rules.\n" in text and "- a rule written meanwhile 0\n" in text and "kaizen-kg" in text, text


def _add_cron_line(path, n: int) -> None:
    with path.open("a") as f:
        f.write(f"0 {n} * * * /usr/local/bin/backup-{n}\n")


def test_schedule_install_keeps_a_crontab_line_written_meanwhile(ws, run_kg, monkeypatch, tmp_path):
    crontab = tmp_path / "crontab"
    crontab.write_text("MAILTO=me@example.org\n")
    hook, done = _writer(crontab, _add_cron_line, 1)
    with monkeypatch.context() as m:
        m.setenv("KG_CRONTAB", str(crontab))
        m.setattr(files, "BEFORE_REPLACE", hook)
        r = run_kg("schedule install --cron")
        assert r.exit_code == 0, r.stdout + r.stderr
        text = crontab.read_text()
        assert done and text.startswith("MAILTO=me@example.org\n0 0 * * * /usr/local/bin/backup-0\n"), text
        assert "kg" in text.split("backup-0\n", 1)[1]
        hook, done = _writer(crontab, _add_cron_line, 1)
        m.setattr(files, "BEFORE_REPLACE", hook)
        r = run_kg("schedule uninstall --cron")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert crontab.read_text() == ("MAILTO=me@example.org\n0 0 * * * /usr/local/bin/backup-0\n"
                                   "0 0 * * * /usr/local/bin/backup-0\n"), crontab.read_text()


def test_the_store_table_keeps_a_kg_toml_line_written_meanwhile(tmp_path, monkeypatch):
    from kg.store import team

    path = tmp_path / "kg.toml"
    path.write_text("# my settings\n")

    def line(p, n: int) -> None:
        with p.open("a") as f:
            f.write(f"# a note written meanwhile {n}\n")
    hook, done = _writer(path, line, 1)
    with monkeypatch.context() as m:
        m.setattr(files, "BEFORE_REPLACE", hook)
        team.configure(tmp_path, "falkordb://db.example:6379/team")
    text = path.read_text()
    assert done and text.startswith("# my settings\n# a note written meanwhile 0\n") and "[store]" in text, text
    assert team.configured_url(tmp_path) == "falkordb://db.example:6379/team"


def _append_note(path, n: int) -> None:
    path.write_text(path.read_text() + f"\nA note a person wrote {n}\n")


def test_export_learnings_keeps_a_note_written_meanwhile_and_reports_once(ws, run_kg, monkeypatch):
    """`kg export trail --learnings` merges into `.learnings/*.md`: a person's write between its read and its
    replace is read again and kept, and the entries kg leaves alone are reported once, not once per try."""
    assert run_kg(["log", "learning", "first lesson of the day", "--now", "2026-05-01T10:00"]).exit_code == 0
    assert run_kg(["export", "trail", "--learnings", "--now", "2026-05-01T11:00"]).exit_code == 0
    learnings = ws.root / ".learnings" / "LEARNINGS.md"
    learnings.write_text(learnings.read_text().replace("first lesson of the day", "first lesson (edited by hand)"))
    assert run_kg(["log", "learning", "second lesson of the day", "--now", "2026-05-01T12:00"]).exit_code == 0
    hook, done = _writer(learnings, _append_note, 1)
    with monkeypatch.context() as m:
        m.setattr(files, "BEFORE_REPLACE", hook)
        r = run_kg(["export", "trail", "--learnings", "--json", "--now", "2026-05-01T13:00"])
    assert r.exit_code == 0 and done, r.stdout + r.stderr
    text = learnings.read_text()
    assert "A note a person wrote 0" in text and "second lesson of the day" in text, text
    assert "first lesson (edited by hand)" in text
    assert [k["reason"] for k in r.json["kept"]] == ["edited by hand since kg wrote it: kept as it is"], r.json


def test_export_learnings_on_a_file_that_keeps_changing_leaves_it_and_says_so(ws, run_kg, monkeypatch):
    assert run_kg(["log", "learning", "first lesson of the day", "--now", "2026-05-01T10:00"]).exit_code == 0
    assert run_kg(["export", "trail", "--learnings", "--now", "2026-05-01T11:00"]).exit_code == 0
    learnings = ws.root / ".learnings" / "LEARNINGS.md"
    assert run_kg(["log", "learning", "second lesson of the day", "--now", "2026-05-01T12:00"]).exit_code == 0
    hook, done = _writer(learnings, _append_note, None)
    with monkeypatch.context() as m:
        m.setattr(files, "BEFORE_REPLACE", hook)
        r = run_kg(["export", "trail", "--learnings", "--now", "2026-05-01T13:00"])
    assert r.exit_code == 1, r.stdout + r.stderr
    assert "LEARNINGS.md was written by someone else while kg was updating it" in r.stderr
    assert "Traceback" not in r.stderr and len(done) == files.TRIES
    assert all(f"A note a person wrote {n}" in learnings.read_text() for n in done)
