"""Issue 21's done-when for files kg writes, through the real CLI: every marked block goes through the one block
editor (a human edit inside is flagged and kept), a promoted skill survives `kg skill update` (a kana slug
included), and preferences.json has one writer (the lifecycle's key is neither a hand edit nor a second USER.md
section)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

T0 = datetime(2026, 5, 4)


def when(day: float) -> str:
    return (T0 + timedelta(days=day)).isoformat(timespec="seconds")


def _kg(run_kg, args: str, day: float, code: int = 0):
    r = run_kg(f"{args} --now {when(day)}")
    assert r.exit_code == code, (args, r.stdout, r.stderr)
    return r


def _recur(run_kg, log: str, key: str, days: int = 21) -> None:
    """One entry a day for `days` days, in two sessions, so the lifecycle promotes the pattern."""
    for i in range(days):
        _kg(run_kg, f"log {log} --pattern-key {key} --session {'s0' if i < days - 1 else 's1'}", i + 0.4)


def test_a_promoted_skill_with_a_kana_slug_survives_skill_update(run_kg, ws):
    _recur(run_kg, "learning 'ロールバック was done by hand' --tags procedure "
                   "--action 'Roll back with the previous image tag'", "デプロイ.rollback")
    _kg(run_kg, "cycle --json", 21)
    number = next(p["number"] for p in run_kg("propose --json").json if p["target"].startswith("memory/skills/"))
    assert _kg(run_kg, f"approve {number} --json", 21).json["action"] == "applied"
    path = ws.root / "memory/skills/デプロイ-rollback.md"
    promoted = path.read_text()
    begin, end = "<!-- kaizen-kg:begin kaizen-kg -->\n", "<!-- kaizen-kg:end kaizen-kg -->\n"
    assert promoted.startswith(begin) and promoted.endswith(end)

    r = _kg(run_kg, "skill update デプロイ-rollback --step 'docker pull the previous tag' --trigger 'roll back' "
                    "--json", 22)
    assert r.json["added"]["procedure"] == ["docker pull the previous tag"]
    text = path.read_text()
    assert promoted in text  # the lifecycle's block, markers and rule, byte for byte
    assert text.count(begin) == 1 and text.count(end) == 1
    assert text.startswith("---\nname: デプロイ-rollback\n") and "1. docker pull the previous tag" in text
    assert run_kg("skill list --json").json[0]["procedure"] == ["docker pull the previous tag"]
    again = _kg(run_kg, "cycle --json", 23).json
    assert not [f for f in again["flags"] if "skills" in f["path"]], again["flags"]
    # updating twice keeps one block and one copy of each section
    _kg(run_kg, "skill update デプロイ-rollback --pitfall 'the tag may be gone'", 24)
    text = path.read_text()
    assert promoted in text and text.count("## Procedure") == 1 and text.count("## Pitfalls") == 1


def test_preferences_json_has_one_writer_and_user_md_one_section_per_rule(run_kg, ws):
    (ws.root / "USER.md").write_text("# User\n\nName: Ada\n")
    _recur(run_kg, "learning 'user wants metric units' --category preference "
                   "--action 'Use metric units in every answer'", "units.metric")
    first = _kg(run_kg, "cycle --json", 21).json
    assert [p["target"] for p in first["promoted"]] == ["USER.md"]
    assert json.loads((ws.memory / "preferences.json").read_text())["kaizen_kg_learned"]
    _kg(run_kg, "pref set tone dry", 22)
    _kg(run_kg, "pref set tone formal", 23)
    history = run_kg("pref history --json").json
    assert [(h["key"], h["action"]) for h in history] == [("tone", "set"), ("tone", "set")]
    user = (ws.root / "USER.md").read_text()
    assert user.startswith("# User\n\nName: Ada\n")
    assert user.count("Use metric units in every answer") == 1 and "kaizen_kg_learned" not in user
    assert "- **tone**: formal" in user
    r = run_kg("pref set kaizen_kg_learned x")
    assert r.exit_code == 2 and r.stderr.startswith("Error: the key 'kaizen_kg_learned' is kg's own")


def test_a_human_edit_in_the_preferences_block_is_flagged_kept_and_explained(run_kg, ws):
    assert run_kg("pref set tone brief").exit_code == 0
    path = ws.root / "USER.md"
    edited = path.read_text().replace("- **tone**: brief\n", "- **tone**: brief\nmy own line\n")
    path.write_text(edited)
    r = run_kg("pref set lang en --json")
    assert r.exit_code == 0 and "a human edited inside the kg block" in r.stderr
    assert r.json["flag"].startswith("a human edited inside the kg block")
    assert path.read_text() == edited  # kept, not overwritten
    assert json.loads((ws.memory / "preferences.json").read_text())["lang"] == "en"
    why = run_kg(["why", "my own line", "--json"])
    assert why.exit_code == 0 and why.json["source"] == "human" and why.json["block"] == "preferences"
    assert "inside kg's block 'preferences'" in why.json["explanation"][0]
    # the human moves the line out: kg writes again, the line stays where they put it
    path.write_text(edited.replace("my own line\n", "") + "my own line\n")
    assert run_kg("pref set lang fr").exit_code == 0
    text = path.read_text()
    assert "- **lang**: fr\n" in text and text.endswith("<!-- kaizen-kg:end preferences -->\nmy own line\n")
    # an edited kg line needs --force to be rewritten
    path.write_text(text.replace("- **lang**: fr", "- **lang**: fr (really)"))
    assert "a human edited" in run_kg("pref set emoji no").stderr
    r = run_kg("pref set emoji no --force")
    assert r.exit_code == 0 and not r.stderr and "(really)" not in path.read_text()


def test_a_user_md_from_an_older_kg_gets_the_one_block_format(run_kg, ws):
    old = ("# User\n\n<!-- kg:preferences:begin -->\n## User Preferences\n\n_Kept by kg from "
           "memory/preferences.json (`kg pref set KEY VALUE`)._\n\n- **tone**: brief\n<!-- kg:preferences:end -->\n")
    (ws.root / "USER.md").write_text(old)
    assert run_kg("pref set lang en").exit_code == 0
    text = (ws.root / "USER.md").read_text()
    assert "kg:preferences:begin" not in text and text.count("<!-- kaizen-kg:begin preferences -->") == 1
    assert text.startswith("# User\n\n") and "- **lang**: en\n" in text
    (ws.root / "USER.md").write_text(old.replace("- **tone**: brief\n", "- **tone**: brief\nmine\n"))
    r = run_kg("pref set lang de")
    assert r.exit_code == 0 and "a human edited" in r.stderr and "mine\n" in (ws.root / "USER.md").read_text()


def test_a_human_edit_in_the_agents_md_install_block_is_flagged_and_kept(run_kg, ws):
    agents = ws.root / "AGENTS.md"
    agents.write_text("# Agents\n\nBe brief.\n")
    assert run_kg("install codex --json").exit_code == 0
    text = agents.read_text()
    assert text.startswith("# Agents\n\nBe brief.\n\n<!-- kaizen-kg:begin install-codex -->\n")
    edited = text.replace("This project keeps", "Our team note.\nThis project keeps")
    agents.write_text(edited + "A line below, by hand.\n")
    again = run_kg("install codex --json")
    assert again.exit_code == 0 and any("a human edited inside the kg block" in n for n in again.json["notes"])
    assert agents.read_text() == edited + "A line below, by hand.\n"
    gone = run_kg("uninstall codex --json")
    assert gone.exit_code == 0 and any("a human edited inside the kg block" in n for n in gone.json["notes"])
    assert agents.read_text() == edited + "A line below, by hand.\n"  # kept: the edit is inside kg's block
    # once the person moves their note out of the block, uninstall takes out exactly kg's block and its glue
    agents.write_text(text + "Our team note.\n")
    assert run_kg("uninstall codex").exit_code == 0
    assert agents.read_text() == "# Agents\n\nBe brief.\nOur team note.\n"
