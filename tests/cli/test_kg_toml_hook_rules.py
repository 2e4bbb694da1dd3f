"""A bad `[rules.hooks]` value in kg.toml (QA6 #4). `budget = -1` passed the open (its type is right), so the
read server opened the workspace with it; a session-start it answered then failed on `rules/hooks.toml: budget`
(exit 1, no brief), naming a file the user never edited, where other bad values fell back with a warning. Now
every rule file is built at the open: a command refuses the workspace (exit 2) naming kg.toml's key and line, no
server serves such rules, and a hook runs on the packaged rules with one warning naming kg.toml."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

KG = str(Path(sys.executable).with_name("kg"))
START = json.dumps({"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"})


def _kg(ws, args: list[str], stdin: str = "", *, server: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"KG_SERVER": "1" if server else "0"}
    if os.environ.get("KG_STORE"):
        env["KG_STORE"] = os.environ["KG_STORE"]
    return subprocess.run([KG, "-w", str(ws.root), *args], input=stdin, capture_output=True, text=True, env=env,
                          timeout=300)


@pytest.mark.parametrize(("value", "server"), [("budget = -1", True), ("high_priorities = []", True),
                                               ("limits.watch = -1", False)])
def test_a_bad_hooks_value_keeps_the_brief_and_names_the_kg_toml_key(ws, value, server):
    (ws.root / "kg.toml").write_text(f"[rules.hooks]\n{value}\n", encoding="utf-8")
    key = value.split(" =")[0]
    try:
        r = _kg(ws, ["hook", "session-start", "--runtime", "claude-code"], START, server=server)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        [warning] = [line for line in r.stderr.splitlines() if line.startswith("Warning: ")]
        assert f"kg.toml [rules.hooks]: {key}: must be" in warning and "(kg.toml line 2)" in warning, warning
        assert "This hook ran on the packaged rules" in warning, warning
        status = _kg(ws, ["status"], server=server)
        assert status.returncode == 2, status.stderr
        assert status.stderr.startswith("Error: ") and f"kg.toml [rules.hooks]: {key}: must be" in status.stderr
        assert "(kg.toml line 2). Fix: " in status.stderr and "Traceback" not in status.stderr, status.stderr
    finally:
        _kg(ws, ["serve", "stop"], server=False)
