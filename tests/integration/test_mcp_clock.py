"""`kg mcp` and the replay clock (a find-only QA, QA9 #4): the global `--now` was ignored (the tools' changes dated
by the machine's clock) while KG_NOW was honoured; approve and skip decided at a KG_NOW years after the machine's
clock, which `kg approve` refuses unless `--future`; and a time before the proposal was refused in the command
line's words ("--now ... is before proposal #1"), naming a flag no tool has. Each test drives the real `kg mcp`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from kg.lifecycle import api

HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
KG = str(Path(sys.executable).with_name("kg"))
WALL = datetime.now().replace(microsecond=0)  # times relative to the machine's clock: the refusal is about it
MADE = WALL - timedelta(days=30)  # when the proposals are made


@pytest.fixture
def proposals(ws):
    """`ws` with two pending proposals (promotions of two patterns), made 30 days before the machine's clock."""
    for key in ("wf.lint_first", "wf.small_commits"):
        for d in (4, 3, 2):
            ws.log("learning", f"always do the {key} thing (day {d})", category="workflow", pattern_key=key,
                   action=f"do the {key} thing first", session=f"s-{key}-{d}", now=MADE - timedelta(days=d))
    api.cycle(ws, now=MADE)
    assert [q["number"] for q in api.propose(ws)] == [1, 2]
    return ws


def _served(root: Path, calls: list[tuple[str, dict]], *, args: tuple[str, ...] = (), env: dict | None = None,
            future: bool = False):
    """The tool calls' results, `kg [args] mcp [--future]` serving them (stdin closed after the last)."""
    msgs = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HELLO},
            {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    msgs += [{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
             for i, (name, arguments) in enumerate(calls, 1)]
    command = [KG, "-w", str(root), *args, "mcp", *(["--future"] if future else [])]
    proc = subprocess.run(command, input="".join(json.dumps(m) + "\n" for m in msgs), capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    answers = {a["id"]: a for a in map(json.loads, proc.stdout.splitlines())}
    return [answers[i]["result"] for i in range(1, len(calls) + 1)]


def _pending(root: Path) -> list[int]:
    import kg

    return [q["number"] for q in api.propose(kg.open_workspace(root)) if q["status"] == "pending"]


@pytest.mark.baseline_wait_off
def test_approve_and_skip_refuse_a_server_clock_more_than_a_day_ahead_unless_started_with_future(proposals):
    ahead = (WALL + timedelta(days=40)).strftime("%Y-%m-%dT%H:%M:%S")
    approve, skip = _served(proposals.root, [("approve", {"number": 1}), ("skip", {"number": 2, "reason": "no"})],
                            env={"KG_NOW": ahead})
    for result, tool in ((approve, "approve"), (skip, "skip")):
        said = result["content"][0]["text"]
        assert result["isError"], result
        assert said.startswith(f"Error executing tool {tool}: the server's clock (KG_NOW) {ahead[:10]} "), said
        assert "day(s) after this machine's clock" in said and "what kg records is dated that day and stays" in said
        assert said.endswith("start the server with `kg mcp --future` to decide at that day on purpose."), said
        assert "--now" not in said, said
    assert _pending(proposals.root) == [1, 2]  # nothing decided
    approve, skip = _served(proposals.root, [("approve", {"number": 1}), ("skip", {"number": 2, "reason": "no"})],
                            args=("--now", ahead), env={"KG_NOW": ""})
    assert approve["isError"] and skip["isError"] and _pending(proposals.root) == [1, 2]  # --now, as KG_NOW
    approve, skip = _served(proposals.root, [("approve", {"number": 1}), ("skip", {"number": 2, "reason": "no"})],
                            args=("--now", ahead), future=True)
    assert not approve["isError"] and not skip["isError"], (approve, skip)
    assert _pending(proposals.root) == []


@pytest.mark.baseline_wait_off
@pytest.mark.parametrize("how", ["KG_NOW", "--now"])
def test_a_time_before_the_proposal_is_refused_naming_the_servers_clock_not_a_flag(proposals, how):
    """`kg --now T mcp` was ignored: approve decided at the machine's clock. Now the global --now is the server's
    clock, as KG_NOW is, and a decision before the proposal is refused without naming `--now`."""
    before = (MADE - timedelta(days=10)).strftime("%Y-%m-%dT%H:%M:%S")
    kwargs = {"env": {"KG_NOW": before}} if how == "KG_NOW" else {"args": ("--now", before), "env": {"KG_NOW": ""}}
    (approve,) = _served(proposals.root, [("approve", {"number": 1})], **kwargs)
    said = approve["content"][0]["text"]
    assert approve["isError"], approve
    assert said == (f"Error executing tool approve: the server's clock (KG_NOW) {before[:10]} {before[11:16]} is "
                    f"before proposal #1 was made ({MADE:%Y-%m-%d %H:%M}): a proposal is decided after it exists; "
                    "check the date"), said
    assert _pending(proposals.root) == [1, 2]
