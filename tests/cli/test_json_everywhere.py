"""`--json` on every command that prints data: on a workspace with a little of everything, each one exits 0 and
prints one valid JSON document on stdout (messages go to stderr). A command that gains `--json` must be added
here, or to NOT_RUN with the reason."""

from __future__ import annotations

import json

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


def test_every_data_command_prints_valid_json(run_kg, ws, tmp_path, shared_data):
    ran: set[str] = set()
    failures: list[str] = []
    now = "--now 2026-05-10T10:00:00"

    def kg(args: str, name: str) -> object:
        r = run_kg(f"{args} --json")
        ran.add(name)
        try:
            data = json.loads(r.stdout)
        except ValueError:
            failures.append(f"{args}: not JSON (exit {r.exit_code}): {r.stdout[:120]!r} {r.stderr[:200]!r}")
            return None
        if r.exit_code != 0:
            failures.append(f"{args}: exit {r.exit_code}: {r.stderr[:200]!r}")
        return data

    event = kg(f"log error 'git push failed: no upstream branch' --area tooling --session s1 {now}", "log")["id"]
    kg(f"log error 'git push error: the branch has no upstream' --area tooling --session s2 {now}", "log")
    other = kg(f"log error 'npm ci failed: lockfile out of sync' --pattern-key npm.lock --session s2 {now}",
               "log")["id"]
    kg(f"log learning 'set the upstream before the first push' --session s1 {now}", "log")
    lesson = kg(f"node add lesson 'Set the upstream when you git push a new branch' {now}", "node add")["id"]
    rule = kg(f"node add principle 'Push new branches with -u' --no-link {now}", "node add")["id"]
    kg("list", "list")
    kg(f"edge add {rule} {lesson} derived_from {now}", "edge add")
    kg(f"session start {now}", "session start")
    kg("session end --summary 'pushed the branch'", "session end")
    kg("pref set tone brief", "pref set")
    kg("pref get tone", "pref get")
    kg("pref list", "pref list")
    kg("pref history", "pref history")
    kg("pref set emoji no", "pref set")
    kg("pref unset emoji", "pref unset")
    kg("skill new deploy-docs -d 'Publish the docs' --step 'make docs'", "skill new")
    kg("skill update deploy-docs --check 'the site loads'", "skill update")
    kg("skill list", "skill list")
    kg("skill find 'publish the docs'", "skill find")
    kg("skill check --message 'remember this'", "skill check")
    kg("score 7 7 6 8 7", "score")
    for args, name in [
        ("status", "status"), (f"show {event}", "show"), ("search 'git push upstream'", "search"),
        ("recall -m 'git push'", "recall"), ("inject -m 'push a new branch'", "inject"), ("trends", "trends"),
        (f"graph query {lesson}", "graph query"), (f"graph path {rule} {lesson}", "graph path"),
        (f"graph explain {lesson}", "graph explain"), ("graph report", "graph report"),
        (f"graph show {lesson} --out {ws.root / 'g.png'}", "graph show"),
        (f"link auto {rule}", "link auto"), ("link reindex", "link reindex"),
        (f"pin {rule}", "pin"), (f"reinforce {rule} {now}", "reinforce"),
        (f"resolve {event} --status resolved", "resolve"), ("retention", "retention"),
        ("index build", "index build"), ("propose", "propose"), (f"verify {now}", "verify"),
        (f"cycle --dry-run {now}", "cycle"), (f"export memory {now}", "export memory"),
        (f"export graph --format json --out {ws.root / 'graph.json'}", "export graph"),
        (f"export trail --out {ws.root / 'trail.json'}", "export trail"),  # --out stays inside the workspace
        (f"import trail {ws.root / 'trail.json'}", "import trail"),
        ("why 'Push new branches with -u'", "why"), ("doctor", "doctor"), ("schedule status", "schedule status"),
        ("install codex", "install"), ("uninstall codex", "uninstall"), (f"init {tmp_path / 'other'}", "init"),
    ]:
        kg(args, name)
    batch = tmp_path / "turns.jsonl"
    batch.write_text('{"kind": "learning", "summary": "pin the node version in CI"}\n'
                     '{"kind": "learning", "summary": "run the linter before pushing"}\n', encoding="utf-8")
    kg(f"ingest {batch} --session s3 {now}", "ingest")
    transcript = shared_data / "transcripts" / "claude_code" / "short.jsonl"
    kg(f"reflect {transcript} {now}", "reflect")
    keys = [p["key"] for p in run_kg("patterns --json").json]
    assert "npm.lock" in keys and len(keys) >= 2, keys
    auto = next(k for k in keys if k != "npm.lock")
    kg(f"patterns show {auto}", "patterns show")
    kg(f"patterns split npm.lock {other} --key npm.other {now}", "patterns split")
    kg(f"patterns merge npm.lock npm.other {now}", "patterns merge")
    assert failures == [], "\n".join(failures)
    missing = _json_commands() - ran - set(NOT_RUN)
    assert not missing, f"commands with --json this test does not run: {sorted(missing)}"
