"""An id copied as the brief prints it (`[ERR-20261201-001]`) or with a sentence's punctuation is that id."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

NOW = "--now 2026-12-01T10:00:00"


def _kg(ws, capsys):
    """`kg.cli.app.run`, the in-process path every command line takes (`kg` and the read server alike)."""
    from kg.cli.app import run

    def call(args: str | list[str]):
        argv = shlex.split(args) if isinstance(args, str) else list(args)
        code = run(["-w", str(ws.root), *argv])
        out, err = capsys.readouterr()
        return type("R", (), {"exit_code": code, "stdout": out, "stderr": err,
                              "json": json.loads(out) if out.strip().startswith("{") else None})

    return call


def test_show_and_resolve_take_the_bracketed_form(ws, capsys):
    run_kg = _kg(ws, capsys)
    r = run_kg(f"log error 'docker: permission denied on the socket' --json {NOW}")
    assert r.exit_code == 0, r.stderr
    eid = r.json["id"]
    for given in (f"[{eid}]", f"{eid}.", f"({eid}),", f"`{eid}`"):
        shown = run_kg(["show", given, "--json"])
        assert shown.exit_code == 0, (given, shown.stderr)
        assert shown.json["node"]["id"] == eid
    done = run_kg(["resolve", f"[{eid}]", "--json", *NOW.split()])
    assert done.exit_code == 0, done.stderr
    # a summary that merely mentions an id is text, left as it is
    said = run_kg(["log", "learning", f"see [{eid}] for the socket fix", "--json", *NOW.split()])
    assert said.exit_code == 0, said.stderr
    assert f"[{eid}]" in run_kg(["show", said.json["id"], "--json"]).json["node"]["text"]


def test_the_installed_command_takes_it_too(ws):
    """The real entry point (which may hand a read to the workspace's read server) sees the bare id."""
    kg = Path(sys.executable).with_name("kg")
    env = {**os.environ, "KG_WORKSPACE": str(ws.root), "KG_NOW": "2026-12-01T10:00:00"}
    logged = subprocess.run([str(kg), "log", "error", "pip: no matching distribution", "--json", "--wait"],
                            capture_output=True, text=True, env=env, cwd=ws.root, timeout=120)
    assert logged.returncode == 0, logged.stderr
    eid = json.loads(logged.stdout)["id"]
    shown = subprocess.run([str(kg), "show", f"[{eid}]"], capture_output=True, text=True, env=env, cwd=ws.root,
                           timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert eid in shown.stdout
    subprocess.run([str(kg), "serve", "stop"], capture_output=True, env=env, cwd=ws.root, timeout=60)


def test_show_takes_a_pattern_by_its_key_as_resolve_does(ws, capsys):
    """QA: `kg show git.push.no_upstream` said "no node", while `kg resolve` and `kg patterns show` take the key."""
    run_kg = _kg(ws, capsys)
    for i in range(2):
        r = run_kg(f"log error 'git push failed {i}: no upstream' --pattern-key git.push.no_upstream --wait {NOW}")
        assert r.exit_code == 0, r.stderr
    shown = run_kg(["show", "git.push.no_upstream", "--json"])
    assert shown.exit_code == 0, shown.stderr
    node = shown.json["node"]
    assert node["kind"] == "pattern" and node["recurrence"]["recurrence"] == 2
    assert run_kg(["show", node["id"], "--json"]).json == shown.json
    gone = run_kg(["show", "git.push.nothing_like_it"])
    assert gone.exit_code == 2 and "no node 'git.push.nothing_like_it'" in gone.stderr, gone.stderr
