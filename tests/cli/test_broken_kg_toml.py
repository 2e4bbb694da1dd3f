"""A mistake in kg.toml, through the real CLI on a real workspace. `kg doctor` said "rules: valid" over a bad key
in [rules.lifecycle] that every `kg cycle` refused; a TOML typo made every command exit 2, doctor included, and
every installed hook exit 1, so every tool failure was dropped. Now doctor runs the loaders every command runs and
names the line and the fix; a hook keeps the capture on the packaged rules and says so once on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_hook_imports import TRANSCRIPTS, _payloads

BAD_KEY = "[rules.lifecycle.promotion]\nmin_occurrences = 3\n"
BAD_VALUE = "# tuned by hand\n[rules.lifecycle.promotion]\nmin_recurrence = \"three\"\n"
TYPO = "[rules.lifecycle\nx = 1\n"


@pytest.mark.parametrize(("text", "said"), [
    (BAD_KEY, ["promotion.min_occurrences: unknown key", "kg.toml line 2", "Fix: remove that line"]),
    (BAD_VALUE, ["promotion.min_recurrence: must be a number", "kg.toml line 3", "Fix: set the value"]),
    (TYPO, ["not valid TOML", "at line 1, column 17", "Fix the syntax there"]),
])
def test_doctor_refuses_what_cycle_refuses_and_names_the_line_and_fix(ws, run_kg, text, said):
    (ws.root / "kg.toml").write_text(text, encoding="utf-8")
    cycle = run_kg(["cycle"])
    assert cycle.exit_code == 2 and cycle.stderr.startswith("Error: "), cycle.stderr
    r = run_kg(["doctor", "--json"])
    assert r.exit_code == 1, r.stderr  # an error found, not a usage error: doctor ran
    rules = next(c for c in r.json["checks"] if c["name"] == "rules")
    assert rules["status"] == "error"
    for part in said:
        assert part in rules["detail"], rules["detail"]
    assert {c["name"] for c in r.json["checks"]} >= {"ids", "graph", "journal"}  # the other checks ran


def test_doctor_says_valid_rules_are_valid(ws, run_kg):
    (ws.root / "kg.toml").write_text("[rules.lifecycle.promotion]\nmin_recurrence = 4\n", encoding="utf-8")
    r = run_kg(["doctor", "--json"])
    rules = next(c for c in r.json["checks"] if c["name"] == "rules")
    assert rules["status"] == "ok", rules


def _hook(ws, args: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
    """The installed `kg` console script, as a runtime runs it (KG_HOOK_WAIT=1: the entry is applied before it
    answers, so the test reads it at once)."""
    kg = str(Path(sys.executable).with_name("kg"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"KG_SERVER": "0", "KG_HOOK_WAIT": "1"}
    if os.environ.get("KG_STORE"):
        env["KG_STORE"] = os.environ["KG_STORE"]
    return subprocess.run([kg, "-w", str(ws.root), *args], input=stdin, capture_output=True, text=True, env=env,
                          timeout=300)


@pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason="needs /work/shared/data/runtimes")
@pytest.mark.parametrize("text", [TYPO, BAD_KEY, "[rules.hooks]\nno_such_key = 1\n"])
def test_a_hook_keeps_the_capture_of_a_real_failed_tool_call_over_a_broken_kg_toml(ws, run_kg, text):
    (ws.root / "kg.toml").write_text(text, encoding="utf-8")
    call = next(p for p in _payloads() if p.pop("is_error") and p["tool_name"] == "Bash")
    # a failed call reaches the hook as PostToolUseFailure, its output as `error` (HOOKS_SUMMARY.md)
    failed = {k: v for k, v in call.items() if k != "tool_response"} | {
        "hook_event_name": "PostToolUseFailure", "error": call["tool_response"]}
    r = _hook(ws, ["hook", "post-tool-use", "--runtime", "claude-code"], json.dumps(failed))
    assert r.returncode == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if line.startswith("Warning: ")]
    assert len(warnings) == 1 and "kg.toml" in warnings[0] and "capture is kept" in warnings[0], r.stderr
    start = _hook(ws, ["hook", "session-start", "--runtime", "claude-code"], json.dumps(
        {"session_id": failed["session_id"], "hook_event_name": "SessionStart", "source": "startup"}))
    assert start.returncode == 0, start.stderr
    (ws.root / "kg.toml").unlink()
    listed = run_kg(["list", "--type", "error", "--json"])
    assert listed.exit_code == 0, listed.stderr
    assert len(listed.json) == 1, listed.json


def test_a_hook_over_a_wrong_clock_zone_alone_says_it_ran_on_the_rules_of_kg_toml(ws, run_kg):
    """Only [clock] is wrong: the hook keeps kg.toml's rules (its own redaction, hook limits) and the zone the
    workspace keeps; it said it ran on "the packaged rules", and so did doctor."""
    (ws.root / "kg.toml").write_text('[clock]\nzone = "Mars/Olympus"\n\n[rules.hooks]\nitem_chars = 150\n',
                                     encoding="utf-8")
    payload = json.dumps({"session_id": "s", "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                          "tool_input": {"command": "make"}, "error": "make: *** No rule to make target 'all'"})
    r = _hook(ws, ["hook", "post-tool-use", "--runtime", "claude-code"], payload)
    assert r.returncode == 0, r.stderr
    [warning] = [line for line in r.stderr.splitlines() if line.startswith("Warning: ")]
    assert "unknown [clock] zone 'Mars/Olympus'" in warning, warning
    assert "This hook ran on the rules of kg.toml, without kg.toml's [clock] zone: times in " in warning, warning
    assert "packaged" not in warning, warning
    doctor = _hook(ws, ["doctor", "--dry-run", "--json"], "")
    rules = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "rules")
    assert "the other checks ran on the rules of kg.toml, without kg.toml's [clock] zone" in rules["detail"], rules


def test_the_hook_checks_kg_toml_again_once_it_changes(ws, run_kg):
    """The hook skips loading every rule file when kg.toml and the rule files loaded before (a stamp in the
    cache folder); a kg.toml edited since is checked again."""
    payload = json.dumps({"session_id": "s", "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                          "tool_input": {"command": "make"}, "error": "Exit code 2\nmake: *** no rule"})
    (ws.root / "kg.toml").write_text("[rules.lifecycle.promotion]\nmin_recurrence = 4\n", encoding="utf-8")
    first = _hook(ws, ["hook", "post-tool-use", "--runtime", "claude-code"], payload)
    assert first.returncode == 0 and "Warning" not in first.stderr, first.stderr
    assert (ws.kg_dir / "cache" / "rules-checked").is_file()
    (ws.root / "kg.toml").write_text(BAD_KEY, encoding="utf-8")
    second = _hook(ws, ["hook", "post-tool-use", "--runtime", "claude-code"], payload)
    assert second.returncode == 0 and "promotion.min_occurrences: unknown key" in second.stderr, second.stderr


def test_a_team_workspace_keeps_its_store_over_a_typo_elsewhere_in_kg_toml(ws, monkeypatch):
    """The hooks' fallback reads the [store] table alone: a typo in [rules.NAME] must not send a team workspace's
    captures to a local graph of its own."""
    from kg.workspace import Workspace

    monkeypatch.delenv("KG_STORE", raising=False)
    (ws.root / "kg.toml").write_text('[store]\nurl = "falkordb://127.0.0.1:6390/team"\n\n' + TYPO, encoding="utf-8")
    opened = Workspace(ws.root, fallback=True)
    assert opened.rules_problem and "not valid TOML" in opened.rules_problem
    assert opened.store_url is not None and opened.store_url.graph == "team"
    (ws.root / "kg.toml").write_text(TYPO, encoding="utf-8")
    assert Workspace(ws.root, fallback=True).store_url is None
