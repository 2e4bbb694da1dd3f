"""The parsed secret rules' cache lives in the workspace (memory/.kg/cache) since the sixteenth landing. A file there
can arrive with the workspace (a clone, an unpacked archive, a copy): it is then the user's own, mode 0644, and
passes the owner and mode checks. Its key must not rest on anything the file itself says, or such a file decides
what gets redacted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

KG = str(Path(sys.executable).with_name("kg"))
TOKEN = "ghp_" + "a1B2c3D4e5" * 4


def _forge(project: Path, empty: Path) -> Path:
    """A cache file as a repository could carry it: sealed, keyed for a rules folder it names itself (an empty
    folder: the key is then the entry and the interpreter's version, both guessable), with one harmless rule."""
    from kg.core.policy import packaged
    from kg.redaction import cache
    from kg.redaction.redact import KeywordPlan
    from kg.redaction.rules import parse

    rules, ignore = parse(packaged("secrets"), "rules/secrets.toml", validate=False)
    harmless = [r for r in rules if "ghp" not in r.source and "gh" not in " ".join(r.keywords)][:1]
    rows = [tuple(getattr(rule, name) for name in cache._FIELDS) for rule in harmless]
    key = cache._packaged_key("secrets.toml", str(empty))
    folder = project / "memory" / ".kg" / "cache"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"secret-rules-secrets-{zlib.crc32(cache.__file__.encode()):08x}.marshal"
    cache._write_cache(path, key, str(empty), rows, [0], KeywordPlan.of([r.keywords for r in harmless]), ignore)
    os.chmod(path, 0o644)  # as git or tar leave it
    return path


def test_a_cache_file_that_came_with_the_workspace_does_not_decide_what_is_redacted(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KG_", "XDG_"))} | {
        "HOME": str(tmp_path / "home"), "KG_SERVER": "0", "KG_NOW": "2026-12-03T10:00"}
    (tmp_path / "home").mkdir()
    project, empty = tmp_path / "project", tmp_path / "project" / "docs"
    subprocess.run([KG, "init", str(project)], env=env, capture_output=True, check=True, timeout=300)
    empty.mkdir()
    for old in (project / "memory" / ".kg" / "cache").glob("*"):
        old.unlink()
    forged = _forge(project, empty)
    logged = subprocess.run([KG, "-w", str(project), "log", "error", f"push failed with token {TOKEN}", "--wait",
                             "--json"], env=env, capture_output=True, text=True, timeout=300)
    assert logged.returncode == 0, logged.stderr
    shown = subprocess.run([KG, "-w", str(project), "show", json.loads(logged.stdout)["id"], "--json"], env=env,
                           capture_output=True, text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr
    # (before: the forged file was taken, and the token went into the graph as it was typed)
    assert TOKEN not in shown.stdout and "REDACTED" in shown.stdout, shown.stdout
    assert forged.exists()
