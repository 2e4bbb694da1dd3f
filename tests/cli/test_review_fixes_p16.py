"""User-visible defects fixed in the p16 review, each through the real CLI on a real workspace: an id typed in lower
case is the id; an old graph's aider session id with colons answers to the dashed form its file is named by."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

NOW = "2026-12-02T12:00"


def _kg(ws, capsys):
    """`kg.cli.app.run`, the in-process path every command line takes (`kg` and the read server alike)."""
    from kg.cli.app import run

    def call(argv: list[str]):
        code = run(["-w", str(ws.root), *argv])
        out, err = capsys.readouterr()
        return type("R", (), {"exit_code": code, "stdout": out, "stderr": err,
                              "json": json.loads(out) if out.strip()[:1] in ("{", "[") else None})

    return call


@pytest.mark.parametrize("form", ["{low}", "[{low}]", "{low}.", "{mixed}"])
def test_an_id_typed_in_lower_case_is_the_id(ws, capsys, form):
    """`kg show err-...` answered exit 2 "no node": kg's id prefixes are upper case and only a whole upper-case id
    was unwrapped (cli/entry.py `unwrap_ids`)."""
    kg = _kg(ws, capsys)
    logged = kg(["--now", NOW, "log", "error", "the deploy script timed out on the staging host", "--wait", "--json"])
    assert logged.exit_code == 0, logged.stderr
    ident = logged.json["id"]
    low, mixed = ident.lower(), ident[0] + ident[1:].lower()
    shown = kg(["show", form.format(low=low, mixed=mixed), "--json"])
    assert shown.exit_code == 0, shown.stderr
    assert shown.json["node"]["id"] == ident
    why = kg(["why", low, "--json"])  # the id as kg gave it out (an entry is no line kg wrote: exit 2, QA2 #11)
    assert why.json["line"] == ident and why.exit_code == 2
    done = kg(["--now", NOW, "resolve", low, "--json"])
    assert done.exit_code == 0, done.stderr


def test_a_pattern_id_typed_in_upper_case_is_the_id_and_its_own_case_stays(ws, capsys):
    """Node ids have lower-case prefixes (`pat-...`, rules/policy.toml [nodes.prefix]): folding every id to upper
    case would lose them; each prefix keeps its own case."""
    kg = _kg(ws, capsys)
    for _ in range(2):
        assert kg(["--now", NOW, "log", "error", "npm install failed with ERESOLVE", "--pattern-key",
                   "npm.eresolve", "--wait"]).exit_code == 0
    (pattern,) = [r["id"] for r in kg(["list", "--type", "pattern", "--json"]).json]
    assert pattern.startswith("pat-")
    for given in (pattern, pattern.upper(), f"[{pattern.upper()}]"):
        shown = kg(["show", given, "--json"])
        assert shown.exit_code == 0, (given, shown.stderr)
        assert shown.json["node"]["id"] == pattern
    unknown = kg(["show", "zzz-20261201-001"])  # no prefix of kg's: left as typed
    assert unknown.exit_code == 2 and "no node 'zzz-20261201-001'" in unknown.stderr, unknown.stderr


def test_a_log_whose_whole_text_looks_like_an_id_keeps_its_case(ws, capsys):
    kg = _kg(ws, capsys)
    logged = kg(["--now", NOW, "log", "learning", "abc-20261201-001", "--wait", "--json"])
    assert logged.exit_code == 0, logged.stderr
    assert kg(["show", logged.json["id"], "--json"]).json["node"]["text"] == "abc-20261201-001"


def test_the_installed_command_takes_a_lower_case_id(ws):
    """The real entry point, which may hand the read to the workspace's read server (it runs `kg.cli.app.run`)."""
    kg = Path(sys.executable).with_name("kg")
    env = {**os.environ, "KG_WORKSPACE": str(ws.root), "KG_NOW": NOW}
    logged = subprocess.run([str(kg), "log", "error", "pip: no matching distribution", "--json", "--wait"],
                            capture_output=True, text=True, env=env, cwd=ws.root, timeout=120)
    assert logged.returncode == 0, logged.stderr
    eid = json.loads(logged.stdout)["id"]
    try:
        for _ in range(2):  # the first may start the read server, the second be answered by it
            shown = subprocess.run([str(kg), "show", eid.lower()], capture_output=True, text=True, env=env,
                                   cwd=ws.root, timeout=120)
            assert shown.returncode == 0 and eid in shown.stdout, shown.stderr
    finally:
        subprocess.run([str(kg), "serve", "stop"], capture_output=True, env=env, cwd=ws.root, timeout=60)


@pytest.mark.parametrize("asked", ["2025-06-02-14-29-21", "2025-06-02-14:29:21"])
def test_an_old_graphs_aider_session_with_colons_answers_to_the_dashed_form(run_kg, ws, asked):
    """A graph an older kg wrote holds an aider chat's session as `2025-06-02-14:29:21`; the summary file is named
    `2025-06-02-14-29-21.md` and kg now names the chat that way: `kg session end --session <the file's name>`
    answered "no session"."""
    old = "2025-06-02-14:29:21"
    r = run_kg(["--now", "2025-06-02T14:30:00", "log", "error", "the search block failed to match", "--session", old,
                "--wait"])
    assert r.exit_code == 0, r.stderr
    ended = run_kg(["--now", "2025-06-02T15:00:00", "session", "end", "-s", "done with the chat", "--session", asked,
                    "--json"])
    assert ended.exit_code == 0, ended.stderr
    assert ended.json["id"] == old and ended.json["events"] == 1
    assert ended.json["file"] == "memory/sessions/2025-06-02-14-29-21.md"
    assert (ws.root / ended.json["file"]).read_text().startswith(f"# Session Summary: {old}")
    again = run_kg(["--now", "2025-06-02T16:00:00", "session", "end", "--session", "2025-06-02-14-29-21"])
    assert again.exit_code == 2 and f"session {old} ended already" in again.stderr, again.stderr


@pytest.mark.parametrize(("given", "taken"), [("err-20261201-001", "ERR-20261201-001"),
                                              ("[lrn-20261201-002].", "LRN-20261201-002"),
                                              ("ERR-20261201-003", "ERR-20261201-003"),
                                              ("PAT-20261201-004", "pat-20261201-004"),
                                              ("the err-20261201-001 entry", "the err-20261201-001 entry")])
def test_the_mcp_servers_id_arguments_take_any_case(given, taken):
    """The MCP tools (`kg mcp`, installed for Claude Code and Codex) take an id as the CLI does."""
    pytest.importorskip("mcp")
    from kg.runtimes.mcp_server import unwrap_id

    assert unwrap_id(given) == taken
