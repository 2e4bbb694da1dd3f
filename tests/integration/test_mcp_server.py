"""kg's MCP server as an MCP client sees it, through the SDK's own client: its version, arguments it refuses,
`log` answered from the journal while another process holds the graph, and where a recalled topic came from."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import kg
from kg.graph.reads import recurring

# Holds the graph open (read-write, as a long `kg cycle` does) until its stdin closes.
HOLDER = textwrap.dedent("""
    import sys, kg
    ws = kg.open_workspace(sys.argv[1])
    with ws.store():
        print("holding", flush=True)
        sys.stdin.read()
""")


@pytest.fixture
def _run(need):
    """Run `script(client)` against kg's MCP server through the SDK's own client (the mcp package)."""
    client_of = need("mcp").Client
    from kg.runtimes.mcp_server import build_server

    def run(ws, script):
        async def main():
            async with client_of(build_server(ws.root)) as client:
                return await script(client)

        return need("anyio").run(main)

    return run


def test_server_info_carries_the_package_version(ws, _run):
    async def script(client):
        return client.server_info

    info = _run(ws, script)
    assert (info.name, info.version) == ("kaizen-kg", kg.__version__) and kg.__version__


def test_unknown_arguments_are_refused_with_their_names(ws, _run):
    async def script(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        bad = await client.call_tool("log", {"kind": "error", "summary": "x", "colour": "red"})
        two = await client.call_tool("status", {"verbose": True, "all": 1})
        good = await client.call_tool("log", {"kind": "error", "summary": "npm ci failed"})
        return tools, bad, two, good

    tools, bad, two, good = _run(ws, script)
    assert all(t.input_schema.get("additionalProperties") is False for t in tools.values())
    assert bad.is_error and "unknown argument colour: log takes kind, summary, details, action, category, " \
                             "priority, area, error_text, pattern_key" in bad.content[0].text
    assert two.is_error and "unknown arguments all, verbose: status takes no arguments" in two.content[0].text
    assert not good.is_error
    listed = subprocess.run([str(Path(sys.executable).with_name("kg")), "-w", str(ws.root), "list", "--json"],
                            capture_output=True, text=True, timeout=120, check=True)
    assert [e["text"] for e in json.loads(listed.stdout)] == ["npm ci failed"]  # the refused call wrote nothing


def test_log_answers_from_the_journal_while_another_process_holds_the_graph(ws, _run, monkeypatch):
    monkeypatch.setenv("KG_LOCK_TIMEOUT", "900")  # were log to wait for the graph, it would wait this long
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(ws.root)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "holding\n"

        async def script(client):
            import anyio

            # far below the lock timeout (the holder lets go only after this answer): it did not wait for the graph;
            # far above what a log takes on a loaded machine
            with anyio.fail_after(300):
                r = await client.call_tool("log", {"kind": "error", "summary": "deploy failed: ssh key rejected",
                                                   "area": "infra"})
            holder.stdin.close()  # the other process lets go; the background apply (or the next call) lands it
            holder.wait(timeout=60)
            found = await client.call_tool("search", {"query": "ssh key rejected"})
            return r, found

        r, found = _run(ws, script)
    finally:
        if holder.poll() is None:
            holder.kill()
    assert not r.is_error, r.content
    out = r.structured_content
    assert out["queued"] is True and out["applied"] is False and out["id"].startswith("ERR-")
    assert out["id"] in [h["ref"] for h in found.structured_content["hits"] if h["source"] == "graph"]


@pytest.mark.parametrize(("args", "topic", "detected"), [
    ({"topic": "config", "message": "明天的天气预报怎么样"}, "config", False),
    ({"message": "明天的天气预报怎么样"}, "weather", True),
    ({"topic": "weather"}, "weather", False),
])
def test_recall_says_whether_the_message_chose_the_topic(ws, _run, args, topic, detected):
    async def script(client):
        return await client.call_tool("recall", args)

    out = _run(ws, script).structured_content
    assert (out["topic"], out["detected_from_message"]) == (topic, detected)


def test_status_is_the_apis_status_as_kg_status_prints_it(ws, _run, monkeypatch):
    monkeypatch.setenv("KG_NOW", "2026-11-30T12:00:00")
    ws.log("error", "npm ci failed", priority="high", pattern_key="npm.ci", now="2026-11-30T10:00")

    async def script(client):
        return await client.call_tool("status", {})

    served = _run(ws, script).structured_content
    printed = subprocess.run([str(Path(sys.executable).with_name("kg")), "-w", str(ws.root), "status", "--json"],
                             capture_output=True, text=True, timeout=120, check=True, env={**os.environ,
                                                                                           "KG_SERVER": "0"})
    api = json.loads(json.dumps(ws.status(), default=lambda v: v.isoformat()))
    # the API lists every pattern; kg status (text and --json) and the MCP tool only those that recurred
    api["patterns"] = recurring(api["patterns"])
    assert served == json.loads(printed.stdout) == api
    assert {"lifecycle", "last_cycle", "patterns"} <= set(api)


def _stdio(ws_root, calls):
    """`kg mcp` as a client launches it: newline-delimited JSON-RPC on its stdin and stdout. The answers by id, and
    what else came out on stdout and stderr."""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    msgs = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
            {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    msgs += [{"jsonrpc": "2.0", "id": i, "method": m, "params": p} for i, (m, p) in enumerate(calls, 1)]
    proc = subprocess.Popen([str(Path(sys.executable).with_name("kg")), "-w", str(ws_root), "mcp"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    answers, other = {}, []
    for msg in msgs:  # one at a time: the server answers in order, and a closed stdin ends it
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()
        while "id" in msg and msg["id"] not in answers:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            try:
                answers[json.loads(line)["id"]] = json.loads(line)
            except (ValueError, KeyError):
                other.append(line)
    out, err = proc.communicate(timeout=120)
    return answers, other + ([out] if out else []), err


def test_a_failing_file_system_is_a_tool_error_with_its_reason_over_stdio(ws, need):
    """A file-system failure (here the journal's place taken by a folder) came back as a bare "Error executing
    tool status", with a traceback on stderr; `kg status` says why. Bad arguments and an unknown method are
    errors too, and nothing but JSON-RPC reaches stdout."""
    need("mcp")
    answers, other, err = _stdio(ws.root, [("tools/list", {}),
                                           ("tools/call", {"name": "search", "arguments": {"query": "x", "limit": 0}}),
                                           ("nosuch/method", {})])
    assert not other and "Traceback" not in err
    assert {t["name"] for t in answers[1]["result"]["tools"]} >= {"log", "search", "status", "brief"}
    assert answers[2]["result"]["isError"] and "limit" in answers[2]["result"]["content"][0]["text"]
    assert answers[3]["error"]["code"] == -32601
    ws.journal.path.mkdir()
    answers, other, err = _stdio(ws.root, [("tools/call", {"name": "status", "arguments": {}})])
    text = answers[1]["result"]["content"][0]["text"]
    assert answers[1]["result"]["isError"] and "is a folder where kg keeps a file" in text and ".jsonl" in text, text
    assert not other and "Traceback" not in err


def test_argument_errors_are_one_line_naming_each_argument(ws, _run):
    """Arguments that do not fit the schema came back as pydantic's report (a line per field, its type code and a
    documentation link); an MCP client's model reads one line naming each argument and what it should be."""
    async def script(client):
        return [(await client.call_tool(name, args)).content[0].text for name, args in [
            ("log", {"kind": "bogus"}),
            ("search", {"query": "npm", "limit": 0}),
            ("skip", {"number": 1, "reason": ""}),
        ]]

    bad_kind, limit, reason = _run(ws, script)
    assert bad_kind == ("Error executing tool log: kind: should be 'learning', 'error' or 'feature' (got 'bogus'); "
                        "summary: required")
    assert limit == "Error executing tool search: limit: should be greater than or equal to 1 (got 0)"
    assert reason == "Error executing tool skip: reason: string should have at least 1 character (got '')"


def test_log_names_every_bad_argument_when_the_schema_and_kgs_checks_both_refuse(ws, _run):
    """The schema's refusal (a bad kind) hid kg's own (an unknown category), and kg's checks named only their first
    (an empty summary hid a category and an area kg refuses): a client fixed one argument a call."""
    async def script(client):
        return [(await client.call_tool("log", args)).content[0].text for args in [
            {"kind": "bogus", "summary": "npm ci failed", "category": "nonsense"},
            {"kind": "error", "summary": " ", "category": "nonsense", "area": "a" * 300},
        ]]

    both, own = _run(ws, script)
    category = "unknown category 'nonsense': use one of correction, knowledge_gap, "
    assert both.startswith("Error executing tool log: kind: should be 'learning', 'error' or 'feature' (got "
                           "'bogus'); " + category), both
    assert own.startswith("Error executing tool log: the summary is empty: say in one line what happened; "
                          + category), own
    assert own.endswith("; area is too long (300 characters, at most 200)"), own
    assert ws.journal.pending_count() == 0  # nothing was recorded


def test_messages_name_the_tools_and_their_arguments_not_the_command_line(ws, _run):
    """kg's messages are written for the command line (`--message`, TOPIC, `kg propose`); over MCP they name the
    tool's arguments and the other tools, and the brief tells the client to call tools, not to run `kg`."""
    ws.log("error", "npm ci failed", priority="high")

    async def script(client):
        return [await client.call_tool(name, args) for name, args in [
            ("recall", {}), ("approve", {"number": 3}), ("brief", {})]]

    recall, approve, brief = _run(ws, script)
    assert recall.content[0].text == "Error executing tool recall: name a `topic` or give `message` to detect one"
    assert approve.content[0].text == \
        "Error executing tool approve: no proposal #3: the `propose` tool lists the pending ones"
    text = brief.structured_content["text"]
    assert "npm ci failed" in text and "call `log`" in text and "`kg " not in text


def test_show_and_resolve_take_ids_as_the_brief_prints_them(ws, _run):
    """The brief prints `[ERR-...]`; `kg show [ERR-...]` takes it, and so do the MCP tools (show, resolve, and a
    search for the id)."""
    entry = ws.log("error", "pytest: connection refused", priority="high", wait=True).id

    async def script(client):
        return [await client.call_tool(name, args) for name, args in [
            ("show", {"id": f"[{entry}]"}), ("resolve", {"id": f"{entry}."}), ("search", {"query": f"[{entry}]"})]]

    show, resolve, search = _run(ws, script)
    assert not show.is_error and show.structured_content["node"]["id"] == entry
    assert not resolve.is_error and resolve.structured_content["status"] == "resolved"
    assert search.structured_content["query"] == entry
    assert ws.show(entry)["node"]["status"] == "resolved"


@pytest.mark.embedded_only("a writer holds the embedded graph's lock; a team graph's busy error is another")
def test_a_brief_over_mcp_while_the_graph_is_held_names_tools(ws, _run):
    """When another process holds the graph, the brief is read from the files with a note saying how to get the
    rest: over MCP that is the `brief` and `status` tools, not `kg hook session-start`."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(ws.root)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "holding\n"

        async def script(client):
            return await client.call_tool("brief", {})

        r = _run(ws, script)
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    out = r.structured_content
    assert out["graph_busy"] is True and "call `brief` again, or `status`, for the rest" in out["text"]
    assert "`kg " not in out["text"]


def test_requests_written_all_at_once_then_stdin_closed_are_all_answered(ws, need):
    """A script's or a home-grown agent's way: every request written, stdin closed. The SDK stopped at EOF and
    cancelled the tool calls still running: only `initialize` was answered, the logged lesson was written
    without its answer. Nothing but JSON-RPC on stdout, and the wire's fds are the server's alone."""
    need("mcp")
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    msgs = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
             "params": {"name": "log", "arguments": {"kind": "learning", "summary": "answered after stdin ended"}}},
            {"jsonrpc": "2.0", "id": "two", "method": "tools/call", "params": {"name": "search",
                                                                               "arguments": {"query": "stdin"}}},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}]
    proc = subprocess.run([str(Path(sys.executable).with_name("kg")), "-w", str(ws.root), "mcp"],
                          input="".join(json.dumps(m) + "\n" for m in msgs), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    answers = {m["id"]: m for m in map(json.loads, proc.stdout.splitlines())}
    assert set(answers) == {0, 1, "two", 3}, proc.stdout
    assert not answers[1]["result"]["isError"], answers[1]
    assert "LRN-" in answers[1]["result"]["content"][0]["text"]


def test_the_server_ends_after_its_apply_thread_not_during_it(ws, need):
    """`log` answers from the journal and a daemon thread applies the entry; stdin closed right after, the server
    returned with that thread still inside Kùzu, and the interpreter's end aborted the process (exit -6,
    "terminate called without an active exception"; CI, 4 in 15 runs under load). Now `kg mcp` joins it first:
    the entry is applied when the process ends, every time (before, the journal was still pending)."""
    need("mcp")
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    msgs = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
             "params": {"name": "log", "arguments": {"kind": "learning", "summary": "applied before the exit"}}}]
    proc = subprocess.run([str(Path(sys.executable).with_name("kg")), "-w", str(ws.root), "mcp"],
                          input="".join(json.dumps(m) + "\n" for m in msgs), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "LRN-" in proc.stdout
    assert not kg.open_workspace(ws.root).journal.has_pending()  # applied by the server, not left to the next open


@pytest.mark.parametrize("odd", [[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}],
                                 {"jsonrpc": "2.0", "id": 1.0, "method": "tools/list"},
                                 {"jsonrpc": "2.0", "id": 1, "method": 123},
                                 {"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}])
def test_a_message_the_sdk_drops_is_not_waited_for_at_eof(ws, need, odd):
    """A batch, a float or object id, a method that is no string: the SDK answers none of them, and the wait for
    the answers owed at EOF held each for its whole grace (120 s; the reviewer). Now only requests the SDK reads as
    requests are owed, and the server ends at once (a hang fails this test by its timeout); the wire answers each
    with a JSON-RPC error (tests/integration/test_mcp_malformed.py), maybe before `initialize`'s answer."""
    need("mcp")
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    msgs = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
            {"jsonrpc": "2.0", "method": "notifications/initialized"}, odd]
    proc = subprocess.run([str(Path(sys.executable).with_name("kg")), "-w", str(ws.root), "mcp"],
                          input="".join(json.dumps(m) + "\n" for m in msgs), capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["id"] for a in answers if "result" in a] == [0]
    assert [a["error"]["code"] for a in answers if "error" in a] == [-32600]


def test_a_client_that_hangs_up_after_a_call_ends_the_server_quietly(ws, need):
    """A client that sends a tool call and closes both pipes (gone, as an editor's window closed): writing the answer
    raised BrokenPipeError, which ended `kg mcp` with "unexpected failure: ExceptionGroup ... Please report this",
    exit 1. Hanging up is ordinary: exit 0, nothing on stderr, and the call still done (the entry kept, applied)."""
    need("mcp")
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    proc = subprocess.Popen([str(Path(sys.executable).with_name("kg")), "-w", str(ws.root), "mcp"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}) + "\n")
    proc.stdin.flush()
    assert '"id":0' in proc.stdout.readline()
    logged = {"name": "log", "arguments": {"kind": "learning", "summary": "kept though nobody read it"}}
    for msg in [{"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": logged}]:
        proc.stdin.write(json.dumps(msg) + "\n")
    proc.stdin.flush()
    proc.stdout.close()  # the client is gone before the answer is written
    proc.stdin.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, err
    assert "unexpected failure" not in err and "report" not in err and "Traceback" not in err, err
    again = kg.open_workspace(ws.root)
    assert not again.journal.has_pending()
    listed = subprocess.run([str(Path(sys.executable).with_name("kg")), "-w", str(ws.root), "list", "--json"],
                            capture_output=True, text=True, timeout=120, check=True)
    assert [e["text"] for e in json.loads(listed.stdout)] == ["kept though nobody read it"]


def test_a_token_in_a_tool_name_is_redacted_in_the_answer_and_the_log(ws, need, monkeypatch):
    """A tool name holding a token was echoed back whole ("Unknown tool: ghp_...") and the server's stderr log line
    repeated it; every other tool error goes through kg's redactor."""
    need("mcp")
    monkeypatch.setenv("COLUMNS", "400")  # the SDK's log lines on one line each: a token is not cut by a wrap
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    answers, other, err = _stdio(ws.root, [("tools/call", {"name": token, "arguments": {}}),
                                           ("tools/call", {"name": "status", "arguments": {}})])
    said = answers[1]["result"]["content"][0]["text"]
    assert answers[1]["result"]["isError"] and said == "Unknown tool: [REDACTED:github_token]", said
    assert token not in json.dumps(answers) and token not in err and "[REDACTED:github_token]" in err, err
    assert not answers[2]["result"]["isError"] and not other


def test_resolve_reopens_a_pattern_it_closed_and_says_what_kg_resolve_says_of_an_entry(ws, need):
    """`resolve` closed a pattern (wont_fix) but its schema had no `active`, so it could not reopen it, as `kg resolve
    KEY --status active` does. `active` on a logged entry is refused in the words `kg resolve` uses."""
    need("mcp")
    entry = ws.log("learning", "run the linter before the tests", pattern_key="wf.lint_first", wait=True).id
    answers, other, err = _stdio(ws.root, [
        ("tools/call", {"name": "resolve", "arguments": {"id": "wf.lint_first", "status": "wont_fix"}}),
        ("tools/call", {"name": "resolve", "arguments": {"id": "wf.lint_first", "status": "active"}}),
        ("tools/call", {"name": "resolve", "arguments": {"id": entry, "status": "active"}})])
    closed, reopened, refused = (answers[i]["result"] for i in (1, 2, 3))
    assert not closed["isError"] and closed["structuredContent"]["status"] == "wont_fix", closed
    assert not reopened["isError"], reopened
    assert (reopened["structuredContent"]["previous"], reopened["structuredContent"]["status"]) == ("wont_fix",
                                                                                                    "active")
    assert kg.open_workspace(ws.root).show("wf.lint_first")["node"]["status"] == "active"
    cli = subprocess.run([str(Path(sys.executable).with_name("kg")), "-w", str(ws.root), "resolve", entry, "--status",
                          "active"], capture_output=True, text=True, timeout=120)
    assert cli.returncode == 2 and cli.stderr.startswith("Error: unknown status 'active'"), cli.stderr
    said = cli.stderr.strip().removeprefix("Error: ")
    assert refused["isError"] and refused["content"][0]["text"] == f"Error executing tool resolve: {said}", refused


def test_every_tool_names_each_bad_argument_in_one_line(ws, need):
    """Only `log` named each bad argument: an unknown argument hid the others, the schema's refusal hid kg's own
    (an unknown type behind a limit of 0), and kg's checks stopped at their first (an empty query hid the type)."""
    need("mcp")
    types = "unknown type 'bogus': use one of "
    answers, other, err = _stdio(ws.root, [
        ("tools/call", {"name": "search", "arguments": {"query": "pnpm", "type": "bogus", "limit": 0}}),
        ("tools/call", {"name": "search", "arguments": {"query": " ", "type": "bogus"}}),
        ("tools/call", {"name": "resolve", "arguments": {"id": 1, "status": "bogus", "extra": 2}}),
        ("tools/call", {"name": "status", "arguments": {"verbose": True, "all": 1}})])
    said = [answers[i]["result"]["content"][0]["text"] for i in (1, 2, 3, 4)]
    assert all(answers[i]["result"]["isError"] for i in (1, 2, 3, 4)), answers
    assert said[0].startswith("Error executing tool search: limit: should be greater than or equal to 1 (got 0); "
                              + types), said[0]
    assert said[1].startswith("Error executing tool search: the search query is empty; " + types), said[1]
    assert said[2] == ("Error executing tool resolve: unknown argument extra: resolve takes id, status; id: should "
                       "be a valid string (got 1); status: should be 'pending', 'in_progress', 'resolved', "
                       "'wont_fix', 'promoted' or 'active' (got 'bogus')"), said[2]
    assert said[3] == "Error executing tool status: unknown arguments all, verbose: status takes no arguments"
    assert all("\n" not in s for s in said) and not other and "Traceback" not in err
