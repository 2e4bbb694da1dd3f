"""kg.toml values of the right TOML type that broke only when used (QA6 #3): a regex without the group kg reads, a
replacement with a back-reference to no group, a list of the wrong element type, an empty list of entry kinds, an
infinite number (also in the read server's [serve] settings, which no check loaded). Each passed the rules check
(`kg doctor`: "valid", or doctor itself crashed), then a command failed as an "unexpected failure" (exit 1) or a
hook lost its capture. Now the checker refuses each at the open, naming kg.toml's key and line and the fix (exit
2); doctor names it; a hook falls back to the packaged rules and keeps the capture."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

KG = str(Path(sys.executable).with_name("kg"))

CASES = [
    ('[rules.errors.classify]\nerror_name = "Error"\n', "classify.error_name: must have group 1"),
    ('[rules.lifecycle.promotion]\ngeneralise = [["push", "\\\\1"]]\n',
     "promotion.generalise[0]: is not a valid replacement"),
    ("[rules.memory.skills]\nremember_phrases = [1]\n", "skills.remember_phrases: must be a list of strings"),
    ("[rules.memory.inject]\nwatch_priorities = [1]\n", "inject.watch_priorities: must be a list of strings"),
    ("[rules.policy.entries]\nkinds = []\n", "entries.kinds: must be a non-empty list"),
    ("[rules.lifecycle.verification]\nmin_baseline_days = inf\n", "verification.min_baseline_days: must be a finite"),
    ("[rules.policy.serve]\nbusy_backoff_seconds = inf\n", "serve.busy_backoff_seconds: must be a finite"),
]


@pytest.mark.parametrize(("text", "said"), CASES)
def test_a_value_that_breaks_at_use_is_refused_at_the_open_with_its_key_and_line(ws, run_kg, text, said):
    (ws.root / "kg.toml").write_text(text, encoding="utf-8")
    status = run_kg(["status"])
    assert status.exit_code == 2, status.stderr
    assert status.stderr.startswith("Error: ") and "kg.toml [rules." in status.stderr, status.stderr
    assert said in status.stderr and "(kg.toml line 2). Fix: " in status.stderr, status.stderr
    doctor = run_kg(["doctor", "--json"])
    assert doctor.exit_code == 1, doctor.stderr  # it found an error and ran its checks
    rules = next(c for c in doctor.json["checks"] if c["name"] == "rules")
    assert rules["status"] == "error" and said in rules["detail"], rules


@pytest.mark.parametrize(("text", "said"), [CASES[0], CASES[4]])
def test_a_hook_keeps_the_capture_over_a_value_that_breaks_at_use(ws, run_kg, text, said):
    (ws.root / "kg.toml").write_text(text, encoding="utf-8")
    payload = json.dumps({"session_id": "s", "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                          "tool_use_id": "t1", "tool_input": {"command": "python app.py"},
                          "error": "Exit code 1\nTraceback (most recent call last):\nValueError: bad input"})
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"KG_SERVER": "0", "KG_HOOK_WAIT": "1"}
    if os.environ.get("KG_STORE"):
        env["KG_STORE"] = os.environ["KG_STORE"]
    r = subprocess.run([KG, "-w", str(ws.root), "hook", "post-tool-use", "--runtime", "claude-code"],
                       input=payload, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    [warning] = [line for line in r.stderr.splitlines() if line.startswith("Warning: ")]
    assert said in warning and "the capture is kept" in warning, warning
    (ws.root / "kg.toml").unlink()
    listed = run_kg(["list", "--type", "error", "--json"])
    assert listed.exit_code == 0 and len(listed.json) == 1, (listed.stderr, listed.stdout)
