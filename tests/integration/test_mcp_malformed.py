"""`kg mcp` over stdio when a client's message is malformed (a find-only QA): `approve` took `true` for proposal 1
and approved it. Each test writes its lines to the real `kg mcp`, closes stdin and reads the answers."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
GREETING = [json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HELLO}),
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})]
PING = json.dumps({"jsonrpc": "2.0", "id": "last", "method": "ping"})


def _served(root: Path, lines: list[str], *, greet: bool = True) -> list[dict]:
    """What `kg mcp` wrote for the handshake (unless `greet` is False), `lines` as they are, then a ping: every
    answer, after checking the ping was answered and the server ended well."""
    proc = subprocess.run([str(Path(sys.executable).with_name("kg")), "-w", str(root), "mcp"],
                          input="".join(line + "\n" for line in [*(GREETING if greet else []), *lines, PING]),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert {"jsonrpc": "2.0", "id": "last", "result": {}} in answers, proc.stdout[-2000:]
    return answers


def _call(key: int, tool: str, arguments: dict | str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": key, "method": "tools/call",
                       "params": {"name": tool, "arguments": arguments}})


@pytest.mark.embedded_only("copies the demo workspace's Kùzu file: a team graph stays on the server")
def test_approve_and_skip_refuse_a_number_that_is_not_one(demo_built, tmp_path, need):
    """pydantic's lax mode read `true` and "1" as 1: `approve` with `{"number": true}` approved proposal #1.
    Every whole-number argument (number, limit, budget) now refuses another JSON type, naming the argument; 2.0
    is the whole number JSON Schema's integer allows."""
    need("mcp")
    root = tmp_path / "ws"
    shutil.copytree(demo_built[0], root, symlinks=True)
    refused = {1: ("approve", {"number": True}), 2: ("skip", {"number": True, "reason": "x"}),
               3: ("approve", {"number": "1"}), 4: ("skip", {"number": "1", "reason": "x"}),
               5: ("search", {"query": "deploy", "limit": True}), 6: ("inject", {"message": "deploy", "budget": "900"}),
               7: ("brief", {"budget": False}), 8: ("approve", {"number": 1.5})}
    lines = [_call(k, tool, args) for k, (tool, args) in refused.items()]
    lines += [_call(9, "search", {"query": "deploy", "limit": 2.0}), _call(10, "propose", {})]
    answers = {a["id"]: a for a in _served(root, lines)}
    for key, (_, args) in refused.items():
        result = answers[key]["result"]
        name = next(n for n in ("number", "limit", "budget") if n in args)
        assert result["isError"] and f"{name}: should be a whole number (got " in result["content"][0]["text"], \
            (key, result)
    assert "(got true)" in answers[1]["result"]["content"][0]["text"]
    assert not answers[9]["result"]["isError"]
    proposals = answers[10]["result"]["structuredContent"]["proposals"]
    assert [(p["number"], p["status"]) for p in proposals] == [(1, "pending")]  # nothing approved nor skipped
