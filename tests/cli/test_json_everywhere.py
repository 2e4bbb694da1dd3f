"""`--json` on every command that prints data: on a workspace with a little of everything, each one exits 0 and
prints one valid JSON document on stdout (messages go to stderr), through the real CLI, one test per command.
A command that gains `--json` must be added to RUN, or to NOT_RUN with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from kg.cli.app import app

# Commands with --json that this test does not run, and why (each has its own tests).
NOT_RUN = {
    "demo": "builds a second workspace (tests/cli/test_cli_conventions.py runs it)",
    "schedule install": "writes the user's crontab (tests/integration/test_schedule.py, in a stand-in)",
    "schedule uninstall": "edits the user's crontab (tests/integration/test_schedule.py)",
    "schedule run": "runs the whole periodic job with its log (tests/integration/test_schedule.py)",
    "hook post-tool-use": "reads a runtime's payload on stdin (tests/cli/test_hooks_cli.py)",
    "hook session-end": "reads a runtime's payload on stdin (tests/cli/test_hooks_cli.py)",
    "hook session-start": "reads a runtime's payload on stdin (tests/cli/test_hooks_cli.py)",
    "approve": "needs a proposal, weeks of history (tests/integration/test_lifecycle_done_when.py)",
    "skip": "needs a proposal, weeks of history (its errors: tests/cli/test_lifecycle_cli.py)",
    "conflicts resolve": "needs a scored conflict (its errors: tests/cli/test_lifecycle_cli.py)",
    "server start": "starts a FalkorDB server (tests/integration/test_falkordb_team.py)",
    "server status": "asks a FalkorDB server (tests/integration/test_falkordb_team.py)",
    "server stop": "stops a FalkorDB server (tests/integration/test_falkordb_team.py)",
    "serve start": "starts the read server, a detached process (tests/integration/test_serve.py)",
    "serve status": "asks the read server (tests/integration/test_serve.py)",
    "serve stop": "stops the read server (tests/integration/test_serve.py)",
}


def _json_commands() -> set[str]:
    def walk(group, prefix=()):
        for name, cmd in sorted(group.commands.items()):
            if hasattr(cmd, "commands"):
                yield from walk(cmd, (*prefix, name))
            elif any("--json" in getattr(p, "opts", ()) for p in cmd.params):
                yield " ".join((*prefix, name))

    return set(walk(typer.main.get_command(app)))


NOW = "--now 2026-05-10T10:00:00"

# Each command with --json, and its arguments on the module's workspace ({names} come from `built`).
RUN = {
    "log": f"log error 'git push failed: the remote hung up' --area tooling --session s2 {NOW}",
    "node add": f"node add lesson 'Check the remote before pushing' {NOW}",
    "edge add": f"edge add {{rule}} {{event}} supports {NOW}",
    "list": "list",
    "session start": f"session start {NOW}",
    "session end": "session end --summary 'pushed the branch'",
    "pref set": "pref set editor vim",
    "pref get": "pref get tone",
    "pref list": "pref list",
    "pref history": "pref history",
    "pref unset": "pref unset emoji",
    "skill new": "skill new release-notes -d 'Write the release notes' --step 'git log'",
    "skill update": "skill update deploy-docs --check 'the site loads'",
    "skill list": "skill list",
    "skill find": "skill find 'publish the docs'",
    "skill check": "skill check --message 'remember this'",
    "score": "score 7 7 6 8 7",
    "status": "status",
    "show": "show {event}",
    "search": "search 'git push upstream'",
    "recall": "recall -m 'git push'",
    "inject": "inject -m 'push a new branch'",
    "trends": "trends",
    "graph query": "graph query {lesson}",
    "graph path": "graph path {rule} {lesson}",
    "graph explain": "graph explain {lesson}",
    "graph report": "graph report",
    "graph show": "graph show {lesson} --out {root}/g.png",
    "link auto": "link auto {rule}",
    "link reindex": "link reindex",
    "pin": "pin {rule}",
    "reinforce": f"reinforce {{rule}} {NOW}",
    "resolve": "resolve {event} --status resolved",
    "retention": "retention",
    "index build": "index build",
    "propose": "propose",
    "verify": f"verify {NOW}",
    "cycle": f"cycle --dry-run {NOW}",
    "export memory": f"export memory {NOW}",
    "export graph": "export graph --format json --out {root}/graph.json",
    "export trail": "export trail --out {root}/trail2.json",  # --out stays inside the workspace
    "import trail": "import trail {root}/trail.json",
    "why": "why 'Push new branches with -u'",
    "doctor": "doctor",
    "schedule status": "schedule status",
    "install": "install codex",
    "uninstall": "uninstall codex",
    "init": "init {other}",
    "ingest": f"ingest {{root}}/turns.jsonl --session s3 {NOW}",
    "reflect": f"reflect {{transcript}} {NOW}",
    "patterns show": "patterns show npm.lock",
    "patterns split": f"patterns split npm.lock {{npm2}} --key npm.split {NOW}",
    "patterns merge": f"patterns merge npm.lock npm.other {NOW}",
}


@pytest.fixture(scope="module")
def built(module_workspace, tmp_path_factory) -> dict[str, str]:
    """A workspace with a little of everything each command reads or changes."""
    ws, run = module_workspace

    def kg(args: str) -> dict:
        r = run(f"{args} --json")
        assert r.exit_code == 0, (args, r.stderr)
        return r.json

    names = {"root": str(ws.root), "other": str(tmp_path_factory.mktemp("other") / "ws")}
    names["event"] = kg(f"log error 'git push failed: no upstream branch' --area tooling --session s1 {NOW}")["id"]
    kg(f"log error 'git push error: the branch has no upstream' --area tooling --session s2 {NOW}")
    npm = [kg(f"log error 'npm ci failed: lockfile out of sync ({i})' --pattern-key npm.lock --session s{i} "
              f"{NOW}")["id"] for i in range(3)]
    names["npm2"] = npm[2]
    kg(f"patterns split npm.lock {npm[1]} --key npm.other {NOW}")
    kg(f"log learning 'set the upstream before the first push' --session s1 {NOW}")
    names["lesson"] = kg(f"node add lesson 'Set the upstream when you git push a new branch' {NOW}")["id"]
    names["rule"] = kg(f"node add principle 'Push new branches with -u' --no-link {NOW}")["id"]
    kg(f"edge add {names['rule']} {names['lesson']} derived_from {NOW}")
    kg("pref set tone brief")
    kg("pref set emoji no")
    kg("skill new deploy-docs -d 'Publish the docs' --step 'make docs'")
    kg(f"export memory {NOW}")
    kg(f"session start {NOW}")
    kg(f"export trail --out {ws.root / 'trail.json'}")
    (ws.root / "turns.jsonl").write_text('{"kind": "learning", "summary": "pin the node version in CI"}\n'
                                         '{"kind": "learning", "summary": "run the linter before pushing"}\n',
                                         encoding="utf-8")
    return names


@pytest.mark.parametrize("name", sorted(RUN))
def test_command_prints_valid_json(name, built, module_workspace, shared_data):
    _, run = module_workspace
    args = RUN[name].format(**built, transcript=Path(shared_data, "transcripts", "claude_code", "short.jsonl"))
    r = run(f"{args} --json")
    try:
        json.loads(r.stdout)
    except ValueError:
        pytest.fail(f"{args}: not JSON (exit {r.exit_code}): {r.stdout[:120]!r} {r.stderr[:200]!r}")
    assert r.exit_code == 0, r.stderr


def test_every_command_with_json_is_run_or_excused():
    commands = _json_commands()
    assert commands - set(RUN) - set(NOT_RUN) == set(), "add these to RUN (or NOT_RUN, with the reason)"
    assert set(RUN) | set(NOT_RUN) <= commands, "RUN or NOT_RUN names a command without --json"
