"""QA6 #2: a workspace copied or moved keeps the hooks `kg install` wrote with `-w <the old path>`: a copy's sessions
logged into the original, and a moved one's hooks exited 1 advising `kg init <old path>` (every capture lost),
while `kg init` and `kg doctor` there said nothing."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.embedded_only("copies and moves a workspace's folder, whose graph is the Kùzu file in it")

KG = str(Path(sys.executable).with_name("kg"))
FAILED = {"session_id": "m1", "hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_use_id": "x1",
          "tool_input": {"command": "make x"}, "error": "Exit code 2\nmake: boom in the moved workspace"}


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"KG_SERVER": "0"}


def _kg(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([KG, *argv], cwd=cwd, capture_output=True, text=True, env=_env(), timeout=300)


def _hook(root: Path, event: str) -> list[str]:
    settings = json.loads((root / ".claude" / "settings.local.json").read_text(encoding="utf-8"))
    return shlex.split(settings["hooks"][event][0]["hooks"][0]["command"])


def test_a_copied_or_moved_workspace_says_its_installs_name_the_old_path_and_a_moved_one_keeps_its_captures(
        tmp_path):
    old = tmp_path / "wc1"
    assert _kg(tmp_path, "init", str(old)).returncode == 0
    assert _kg(old, "install", "claude-code").returncode == 0
    copy = tmp_path / "wc2"
    shutil.copytree(old, copy, symlinks=True)
    for argv in (["init"], ["doctor"]):
        r = _kg(copy, *argv)
        said = r.stdout + r.stderr
        assert "another workspace's path" in said and "kg install claude-code" in said, (argv, said)
        assert str(old) in said, said
    r = _kg(old, "doctor")
    assert "another workspace's path" not in r.stdout + r.stderr  # the original's installs are its own
    moved = tmp_path / "wc4"
    old.rename(moved)
    hook = _hook(moved, "PostToolUseFailure")
    r = subprocess.run(hook, cwd=moved, input=json.dumps(FAILED), capture_output=True, text=True,
                       env=_env() | {"KG_HOOK_WAIT": "1"}, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "kg install claude-code" in r.stderr and "kg init" not in r.stderr, r.stderr
    listed = json.loads(_kg(moved, "list", "--type", "error", "--json").stdout)
    assert any("boom in the moved workspace" in row["text"] for row in listed), listed
    elsewhere = subprocess.run(hook, cwd=tmp_path, input=json.dumps(FAILED), capture_output=True, text=True,
                               env=_env(), timeout=300)  # no workspace in its folder: said, not `kg init`
    assert elsewhere.returncode == 1 and "kg install claude-code" in elsewhere.stderr, elsewhere.stderr
    assert "kg init" not in elsewhere.stderr and "Traceback" not in elsewhere.stderr
