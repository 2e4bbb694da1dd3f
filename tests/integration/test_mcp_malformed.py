"""`kg mcp` over stdio when a client's message is malformed (a find-only QA): one request nested too deeply crashed
the whole server; a lone surrogate, params that are no object or a line that is not JSON got no answer at all, and
the server then waited 120 s after stdin closed for the answer it would never write; `approve` took `true` for
proposal 1 and approved it. Each test writes its lines to the real `kg mcp`, closes stdin and reads the answers: a
request with an id gets one, a bad line never stops the server, and it ends as soon as stdin closes (a wait fails
by the timeout)."""

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


@pytest.mark.parametrize("depth", [250, 1_000, 100_000])
def test_a_request_nested_too_deeply_is_answered_and_the_server_goes_on(ws, need, depth):
    """From 1,000 levels Python's json.loads raised RecursionError where the server noted the request's id: "Error:
    unexpected failure: ExceptionGroup", exit 1, the later ping unanswered. Below that the SDK's parser (200 levels)
    dropped the request unanswered and the server waited 120 s at EOF for its answer."""
    need("mcp")
    nested = "[" * depth + "]" * depth
    line = _call(1, "search", {"query": "x"}).replace('"x"', nested)
    answers = {a["id"]: a for a in _served(ws.root, [line])}
    error = answers[1]["error"]
    assert error["code"] == -32602 and "nested too deeply" in error["message"], error


def test_every_malformed_request_with_an_id_gets_an_error_naming_the_problem(ws, need):
    """The SDK dropped each of these unanswered (a client waits for ever); a line that is not JSON got no parse
    error. The well-formed call after them is answered as ever, and nothing was logged."""
    need("mcp")
    surrogate = '"lone \\ud800 x"'
    lines = {
        1: _call(1, "search", {"query": "S"}).replace('"S"', surrogate),
        2: _call(2, "log", {"kind": "error", "summary": "S"}).replace('"S"', surrogate),
        3: _call(3, "show", {"id": "S"}).replace('"S"', surrogate),
        4: json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": "str"}),
        5: json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": [1]}),
        6: json.dumps({"jsonrpc": "1.0", "id": 6, "method": "tools/list"}),
        7: json.dumps({"jsonrpc": "2.0", "id": 7, "method": 123}),
        8: json.dumps({"jsonrpc": "2.0", "id": 8}),
        9: _call(9, "status", {}),
    }
    nameless = ["{not json", '{"jsonrpc": "2.0", "id": 1, "method": "ping"} trailing',
                json.dumps([{"jsonrpc": "2.0", "id": 10, "method": "tools/list"}]),
                json.dumps({"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}),
                json.dumps({"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}),
                json.dumps({"jsonrpc": "2.0", "id": None, "method": "tools/call",
                            "params": {"name": "log", "arguments": {"kind": "error", "summary": "acted"}}})]
    answers = _served(ws.root, [*lines.values(), *nameless])
    by_id = {a["id"]: a for a in answers if a["id"] is not None}
    expected = {1: (-32602, "lone UTF-16 surrogate"), 2: (-32602, "lone UTF-16 surrogate"),
                3: (-32602, "lone UTF-16 surrogate"), 4: (-32602, "params should be an object"),
                5: (-32602, "params should be an object"), 6: (-32600, '"jsonrpc" should be "2.0"'),
                7: (-32600, "the method should be a string"), 8: (-32600, "method")}
    for key, (code, words) in expected.items():
        error = by_id[key].get("error", {})
        assert error.get("code") == code and words in error.get("message", ""), (key, by_id[key])
    assert "result" in by_id[9] and not by_id[9]["result"]["isError"]
    unnamed = sorted((a["error"]["code"], a["error"]["message"]) for a in answers if a["id"] is None)
    assert [code for code, _ in unnamed] == [-32700, -32700, -32600, -32600, -32600, -32600], unnamed
    assert "not JSON" in unnamed[0][1] and any("batch" in m for _, m in unnamed), unnamed
    assert ws.journal.pending_count() == 0 and not ws.list()  # no malformed call acted


def test_a_call_before_initialize_is_told_to_initialize_first(ws, need):
    """A tool call before the handshake was answered "Invalid request parameters" (its parameters were fine)."""
    need("mcp")
    lines = [_call(1, "status", {}), GREETING[0].replace('"id": 0', '"id": 2'), GREETING[1], _call(3, "status", {})]
    answers = {a["id"]: a for a in _served(ws.root, lines, greet=False)}
    error = answers[1]["error"]
    assert error["code"] == -32600 and "initialize" in error["message"], error
    assert not answers[3]["result"]["isError"]


def test_a_tool_call_with_params_that_do_not_fit_names_the_field_and_how_to_send_it(ws, need):
    """No params, `"arguments": "q"`, no tool name, a name that is a number: the SDK answered each "Invalid request
    parameters" with `data: ""`, naming nothing (QA3 #5c), though argument errors come back naming each argument.
    The values are never echoed; a well-formed call after them is answered as ever."""
    need("mcp")
    calls = {1: None, 2: {"name": "search", "arguments": "q"}, 3: {"arguments": {}},
             4: {"name": 3, "arguments": {}}, 5: {"name": "search", "arguments": {"query": "deploy"}}}
    lines = [json.dumps({"jsonrpc": "2.0", "id": k, "method": "tools/call", **({} if p is None else {"params": p})})
             for k, p in calls.items()]
    answers = {a["id"]: a for a in _served(ws.root, lines)}
    said = {1: "params is missing", 2: "params.arguments should be an object, not a string",
            3: "params.name is missing", 4: "params.name should be a string, not a number"}
    for key, words in said.items():
        error = answers[key]["error"]
        assert error["code"] == -32602 and error["message"].startswith(f"Invalid params: tools/call {words}; "), error
        assert '{"name": TOOL, "arguments": {...}}' in error["message"] and "`tools/list`" in error["message"]
    assert '"q"' not in answers[2]["error"]["message"]
    assert not answers[5]["result"]["isError"]


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
