"""User-visible defects fixed in the p17 review, through the real CLI on a real workspace: an old graph's aider
session id with colons is found by `kg search --session` in the dashed form too; the hooks' bad-input rule."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("asked", ["2025-06-02-14-29-21", "2025-06-02-14:29:21"])
def test_search_in_an_old_graphs_aider_session_takes_either_form(run_kg, asked):
    """A graph an older kg wrote holds the chat's session as `2025-06-02-14:29:21`; its file, and kg now, name it
    with dashes: `kg search --session <the dashed form>` found nothing in the graph (kg session end takes both)."""
    old = "2025-06-02-14:29:21"
    logged = run_kg(["--now", "2025-06-02T14:30:00", "log", "error", "the search block failed to match", "--session",
                     old, "--wait", "--json"])
    assert logged.exit_code == 0, logged.stderr
    run_kg(["--now", "2025-06-02T14:31:00", "log", "error", "the search block failed elsewhere", "--session",
            "2025-06-03-09-00-00", "--wait"])
    found = run_kg(["--now", "2025-06-02T15:00:00", "search", "search block failed", "--session", asked,
                    "--source", "graph", "--json"])
    assert found.exit_code == 0, found.stderr
    assert [hit["ref"] for hit in found.json] == [logged.json["id"]]


# -- the hooks' bad input: one rule ------------------------------------------------------------------------------


@pytest.mark.parametrize("runtime", ["claude-code", "codex"])
def test_every_installed_hook_answers_bad_input_with_one_error_line_and_exit_1(ws, runtime):
    """Each command `kg install` writes into the runtime's config, run as the runtime runs it (`sh -c` from the
    project, payload on stdin), given stdin that is not JSON: session-start and post-tool-use exited 1,
    session-end (SessionEnd, Codex's Stop) 0, which hid the error from the user. Now every hook: an `Error:` line,
    exit 1 (both runtimes: a non-blocking hook error), never 2, stdout empty (Codex reads Stop's stdout)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    kg = str(Path(sys.executable).with_name("kg"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"KG_SERVER": "0"}
    installed = subprocess.run([kg, "-w", str(ws.root), "install", runtime], env=env, capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    config = ws.root / (".claude/settings.local.json" if runtime == "claude-code" else ".codex/hooks.json")
    hooks = {event: [h["command"] for group in groups for h in group["hooks"]]
             for event, groups in json.loads(config.read_text())["hooks"].items()}
    assert {"SessionStart", "SessionEnd"} <= set(hooks) and ({"Stop"} if runtime == "codex" else
                                                            {"PostToolUseFailure"}) <= set(hooks)
    for event, commands in hooks.items():
        for command in commands:
            r = subprocess.run(["sh", "-c", command], input="not json {", capture_output=True, text=True, env=env,
                               cwd=ws.root, timeout=300)
            said = (event, r.returncode, r.stderr[-300:])
            assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr, said
            assert r.stderr.startswith("Error: the hook payload on stdin is not JSON"), said


def test_the_readme_states_one_exit_rule_for_every_hook():
    from pathlib import Path

    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8").split())
    assert "exit 1 in every hook (session-start, post-tool-use, session-end, Codex's Stop)" in readme
    assert "never exits non-zero" not in readme and "exit 0 for session-end" not in readme
