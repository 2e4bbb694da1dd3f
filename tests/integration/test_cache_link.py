"""QA3 #1: memory/.kg/cache is a derived cache (README: "safe to delete"), and a cache kg cannot write never stops a
command. A person's link in its place (to a folder out of the workspace, or elsewhere in it) made every command
that redacts exit 1 with three chained tracebacks: the parse's write refused the link (UnusableFile, which the
cache's OSError catch let through), then the error line's redaction loaded the rules again and failed the same
way, then the last line of defence did. Now the rules are parsed in memory, one warning names the link, and the
report of any failure cannot fail again. Each command runs as a fresh `kg` process: the parse is once a process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

KG = str(Path(sys.executable).with_name("kg"))
TOKEN = "ghp_" + "a1B2c3D4e5" * 4
NOW = "2026-12-03T10:00"


def _env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "home").mkdir(exist_ok=True)
    return {k: v for k, v in os.environ.items() if not k.startswith(("KG_", "XDG_"))} | {
        "HOME": str(tmp_path / "home"), "KG_SERVER": "0", "KG_NOW": NOW, "KG_HOOK_WAIT": "1"}


def _kg(root: Path, env: dict[str, str], *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([KG, "-w", str(root), *args], env=env, input=input, capture_output=True, text=True,
                          timeout=300)


def _linked(root: Path, target: str | Path) -> Path:
    cache = root / "memory" / ".kg" / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    cache.symlink_to(target)
    return cache


def test_a_cache_folder_linked_out_of_the_workspace_stops_no_command_and_is_said_once(ws, tmp_path):
    env = _env(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    _linked(ws.root, outside)
    # an override in kg.toml: every open also caches that the rule files loaded (memory/.kg/cache/rules-checked)
    with open(ws.root / "kg.toml", "a", encoding="utf-8") as fh:
        fh.write("\n[rules.policy.serve]\nenabled = false\n")
    payload = json.dumps({"session_id": "s-1", "tool_name": "Bash", "tool_input": {"command": "git push"},
                          "tool_response": {"stderr": f"fatal: auth failed for {TOKEN}", "exit_code": 1}})
    runs = {
        "log": _kg(ws.root, env, "log", "error", f"push failed with token {TOKEN}", "--wait", "--json"),
        "session-start": _kg(ws.root, env, "hook", "session-start"),
        "post-tool-use": _kg(ws.root, env, "hook", "post-tool-use", "--runtime", "claude-code", input=payload),
        "doctor": _kg(ws.root, env, "doctor"),
        "bad id": _kg(ws.root, env, "show", f"ERR-{TOKEN}"),  # a failure: its Error line is redacted too
        "export": _kg(ws.root, env, "export", "graph", "--out", str(ws.root / "graph.graphml")),
    }
    for name, run in runs.items():
        assert "Traceback" not in run.stderr, (name, run.stderr)
        warnings = [line for line in run.stderr.splitlines() if line.startswith("Warning: kg's cache")]
        assert len(warnings) == 1, (name, run.stderr)  # one a process, whichever cache file came first
        assert (f"memory/.kg/cache is a symlink to {outside}, outside the workspace {ws.root}" in warnings[0]
                and "safe to delete" in warnings[0]), warnings[0]
        # doctor finishes and says the link as a files error (w-flinks: a subfolder of memory/.kg leading out)
        assert run.returncode == {"bad id": 2, "doctor": 1}.get(name, 0), (name, run.stdout, run.stderr)
    assert "❌ files: memory/.kg/cache is a symlink to" in runs["doctor"].stdout, runs["doctor"].stdout
    assert runs["bad id"].stderr.splitlines()[-1].startswith("Error: ") and TOKEN not in runs["bad id"].stderr
    shown = _kg(ws.root, env, "show", json.loads(runs["log"].stdout)["id"], "--json")
    assert shown.returncode == 0 and TOKEN not in shown.stdout and "REDACTED" in shown.stdout, shown.stdout
    assert list(outside.iterdir()) == []  # nothing written through the link
    assert (ws.root / "graph.graphml").is_file()


def test_a_cache_link_to_elsewhere_in_the_workspace_is_not_called_outside_it(ws, tmp_path):
    env = _env(tmp_path)
    (ws.root / "kgcache").mkdir()
    _linked(ws.root, "../../kgcache")
    run = _kg(ws.root, env, "log", "error", "a build failed", "--json")
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    warning = run.stderr.strip()
    assert warning == (
        f"Warning: kg's cache was not written: memory/.kg/cache is a symlink to {ws.root / 'kgcache'}, out of "
        "memory/.kg, the folder kg keeps its state in; kg will not write memory/.kg/cache/"
        f"{warning.split('memory/.kg/cache/')[1].split(' ')[0]} there: replace the link with a copy of the folder, "
        "or link to a folder inside memory/.kg. kg works without it meanwhile (slower); the cache folder is derived "
        "and safe to delete."), warning
    assert "outside" not in warning
    assert list((ws.root / "kgcache").iterdir()) == []


def test_the_cache_folder_removed_as_the_warning_says_is_made_again(ws, tmp_path):
    env = _env(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    cache = _linked(ws.root, outside)
    assert "Warning: kg's cache" in _kg(ws.root, env, "log", "error", "first").stderr
    cache.unlink()  # the fix the warning names
    run = _kg(ws.root, env, "log", "error", "second")
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert any(cache.glob("secret-rules-*.marshal"))


def test_a_report_whose_redaction_fails_is_still_one_error_line_without_the_text(monkeypatch, capsys):
    """The error path never raises while reporting: the rules that must redact a message may fail to load (before,
    each failure raised again from `fail` and from cli/app.py's last line of defence). Failing once, they are
    parsed again in memory; failing every time, the message is not shown (it may quote a secret)."""
    import pytest
    import typer
    from kg.cli.common import fail

    from kg.redaction import redact

    real = redact.packaged_parts
    calls: list[str] = []

    def first_fails(entry: str = "secrets.toml"):
        calls.append(entry)
        if len(calls) == 1:
            raise OSError("the cache cannot be read")
        return real(entry)

    redact.load_default.cache_clear()
    monkeypatch.setattr(redact, "packaged_parts", first_fails)
    try:
        said = redact.redact_report(f"no node {TOKEN!r}")
        assert len(calls) == 2 and said == "no node '[REDACTED:github_token]'", said  # the second try parsed
        monkeypatch.setattr(redact, "packaged_parts", lambda entry="secrets.toml": 1 / 0)
        redact.load_default.cache_clear()
        with pytest.raises(typer.Exit) as done:
            fail(f"no node {TOKEN!r}", 2)
    finally:
        redact.load_default.cache_clear()
    assert done.value.exit_code == 2
    assert capsys.readouterr().err == ("Error: (the message is not shown: kg's secret rules, which must redact it "
                                      "first, could not be loaded: ZeroDivisionError)\n")
