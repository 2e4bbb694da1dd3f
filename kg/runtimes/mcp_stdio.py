"""`kg mcp`'s stdio transport: the SDK's, with every request read answered before the server stops at EOF.

A client that writes its requests and closes stdin (`printf '...' | kg mcp`, a script, a home-grown agent) got
no answer to a tool call still running when stdin ended: at EOF the SDK closes the read stream, the server's loop
ends and its task group cancels the calls in flight. Here the lines go through `_Wire`, which notes the id of
every request read and every answer written; at EOF it waits (at most `GRACE` seconds, so a request the server
never answers cannot keep the process alive for ever) until each id read has its answer, then ends the stream.

A line the SDK cannot read it drops unanswered (it only logs it): `_Wire` reads each line as the SDK will and
answers those itself with a JSON-RPC error that says what is wrong (-32700 for a line that is not JSON, else
-32600 or -32602), so a client is never left waiting and only the requests the SDK will answer are owed at EOF.
A request before the handshake is told so; the SDK answered it "Invalid request parameters", as it answered a
`tools/call` whose params do not fit (none, `"arguments": "q"`): `bad_call` names the field and how to send it.

As the SDK's own stdio transport does, the wire is served from private copies of fds 0 and 1 while fd 0 reads
the null device and fd 1 writes to stderr: a handler's or a child's stray output cannot reach the wire.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from contextlib import contextmanager
from io import TextIOWrapper
from typing import Any

GRACE = 120.0  # seconds after EOF the answers still owed are waited for

# a JSON text's tokens: a string, a bracket or separator, anything else (a number, true, false, null) up to the next
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[][{}:,]|[^][{}:,"\s]+')
_TITLE = {-32700: "Parse error", -32600: "Invalid Request", -32602: "Invalid params"}  # JSON-RPC 2.0's names
_BAD_ID = "the id should be a string or a whole number"

Refusal = tuple[int | str | None, int, str]  # the id to answer, the JSON-RPC error code, the message


def _members(text: str) -> dict[str, str] | None:
    """The members of the JSON object `text`, each value as its raw text, or None when `text` is no object. Read
    without recursion, so no nesting is too deep to find a request's id; nothing nested is checked."""
    tokens = _TOKEN.finditer(text)
    first = next(tokens, None)
    if first is None or first.group() != "{":
        return None
    members: dict[str, str] = {}
    depth, key, start = 1, None, -1
    for m in tokens:
        tok = m.group()
        if start < 0:  # between members: a key, then its colon (or the end of the object)
            if tok == ":" and key is not None:
                start = m.end()
            elif tok.startswith('"') and key is None:
                try:
                    key = json.loads(tok)
                except ValueError:
                    return None
            elif tok == "}" and key is None:
                return members
            else:
                return None
        elif tok in ("{", "["):
            depth += 1
        elif tok in ("}", "]") and depth > 1:
            depth -= 1
        elif tok in ("}", ",") and depth == 1:
            members[key] = text[start:m.start()].strip()
            if tok == "}":
                return members
            key, start = None, -1
        elif tok == "]" and depth == 1:
            return None
    return None


def _read(raw: str) -> Any:
    """A member's value as the SDK's parser (jiter: its depth limit, its refusal of a lone surrogate) reads it."""
    from pydantic_core import from_json

    return from_json(raw)


def _request_id(members: dict[str, str]) -> int | str | None:
    """The message's id when it is one the SDK takes (an int or a string), else None."""
    try:
        return _valid_id(_read(members["id"]))
    except (KeyError, ValueError):
        return None


def _valid_id(key: Any) -> int | str | None:
    """`key` when the SDK takes it for a request's id (an int or a string, not a bool), else None."""
    return key if isinstance(key, int | str) and not isinstance(key, bool) else None


def _unreadable(name: str, exc: ValueError) -> str:
    """Why the member `name` cannot be read, from the SDK's parser's reason `exc`."""
    said = str(exc)
    if "recursion limit" in said:  # as `kg ingest` says it of a file
        return f"the input is nested too deeply ({name}); JSON-RPC messages are read to at most a few hundred levels"
    if "surrogate" in said or "hex escape" in said:  # json.loads took the line: its escapes are well formed
        return (f"{name} holds a lone UTF-16 surrogate (an escape such as \\ud800 with no pair), which is not "
                "text; send UTF-8 text")
    return f"{name} cannot be read ({said})"


_SHAPE = (("jsonrpc", -32600, lambda v: v == "2.0", '"jsonrpc" should be "2.0"'),
          ("method", -32600, lambda v: isinstance(v, str), "the method should be a string"),
          ("params", -32602, lambda v: v is None or isinstance(v, dict), "params should be an object"))


def refusal(line: str, why: ValueError) -> Refusal | None:
    """The JSON-RPC error for a line the SDK's parser refused (`why`): it drops such a line unanswered, and a
    client waits for ever. None where nothing may answer: a notification, or an answer to the server's request."""
    try:
        json.loads(line)
    except RecursionError:
        pass  # JSON deeper than Python reads: its members say where
    except ValueError as exc:
        return None, -32700, f"Parse error: the line is not JSON ({exc})"
    members = _members(line)
    if members is None:
        if line.lstrip().startswith("["):
            return None, -32600, "Invalid Request: batches are not supported; send each message on a line of its own"
        return None, -32600, "Invalid Request: a message is a JSON object"
    if "method" not in members and ("result" in members or "error" in members):
        return None
    if "method" in members and "id" not in members:
        return None
    key = _request_id(members)
    if "id" in members and key is None:
        return None, -32600, f"Invalid Request: {_BAD_ID}"
    for name, code, fits, should in _SHAPE:
        if name not in members:
            if name == "params":
                continue
            return key, -32600, f"Invalid Request: {should} (there is none)"
        try:
            value = _read(members[name])
        except ValueError as exc:
            return key, code, f"{_TITLE[code]}: {_unreadable(name, exc)}"
        if not fits(value):
            return key, code, f"{_TITLE[code]}: {should}"
    for name, raw in members.items():  # a member the SDK ignores is still parsed
        try:
            _read(raw)
        except ValueError as exc:
            return key, -32600, f"Invalid Request: {_unreadable(name, exc)}"
    errors = getattr(why, "errors", lambda **_: [])(include_url=False)
    return key, -32600, f"Invalid Request: {errors[0]['msg'] if errors else why}"


_JSON_TYPE = {dict: "an object", list: "an array", str: "a string", bool: "true or false", int: "a number",
              float: "a number", type(None): "null"}
_SHOULD = {"dict_type": "an object", "string_type": "a string", "int_type": "a whole number",
           "list_type": "an array", "bool_type": "true or false"}
_CALL = '{"name": TOOL, "arguments": {...}} (`tools/list` names each tool and its arguments)'


def bad_call(params: Any, version: str) -> str | None:
    """Why `tools/call`'s params do not fit the protocol (`version`'s), naming each field, what it should be and
    how to send it; None when they fit (or the version is not known here: the SDK answers). The SDK's answer was
    "Invalid request parameters" with an empty `data`, for params missing or `"arguments": "q"` alike (QA3 #5c).
    Never the values: a JSON type's name at most."""
    from mcp_types import methods
    from pydantic import ValidationError

    try:
        methods.validate_client_request("tools/call", version, params)
    except ValidationError as exc:
        said = []
        for e in exc.errors(include_url=False):
            where = ".".join(str(part) for part in e.get("loc", ())) or "params"
            if e.get("type") == "missing":
                said.append(f"{where} is missing")
            else:
                should = _SHOULD.get(str(e.get("type")), str(e.get("msg", "")).lower())
                said.append(f"{where} should be {should}, not {_JSON_TYPE.get(type(e.get('input')), 'that')}")
        return f"Invalid params: tools/call {'; '.join(said)}; send params {_CALL}"
    except (KeyError, ValueError):  # a version or method this SDK does not know for it: its own answer
        return None
    return None


def _answered(text: str) -> int | str | None:
    """The id of the request an answer the server wrote (`text`) answers, or None. Read with json.loads: every
    answer passes here, and the token walk of `_members` took 15 times as long (0.39 s for a 2.6 MB search answer);
    that walk only for an answer deeper than json.loads reads."""
    try:
        parsed = json.loads(text)
    except RecursionError:
        members = _members(text)
        if members is None or "method" in members or not ("result" in members or "error" in members):
            return None
        return _request_id(members)
    except ValueError:
        return None
    if not isinstance(parsed, dict) or "method" in parsed or not ("result" in parsed or "error" in parsed):
        return None
    return _valid_id(parsed.get("id"))


class _Wire:
    """The stdin side (an async line iterator) and the stdout side (`write`, `flush`) the SDK's stdio_server takes.

    Each line is read as the SDK will read it (its own parser) before the SDK gets it. A line the SDK would drop
    (not JSON, too deep, a lone surrogate, params that are no object: it logs them and answers nothing) is
    answered here with a JSON-RPC error and never reaches it, so only the requests the SDK will answer are owed
    at EOF: owing one it dropped held the process for the whole GRACE, and json.loads on a line nested 1,000
    deep raised a RecursionError that ended the server. A request before `initialize` is answered here too: the
    SDK said "Invalid request parameters" of parameters that were fine."""

    def __init__(self, stdin: Any, stdout: Any, serves: Callable[[str], bool] = lambda method: True) -> None:
        import anyio
        import mcp_types

        self._in, self._out, self._serves = stdin, stdout, serves
        self._types = mcp_types
        self._owed: set[int | str] = set()
        self._eof = False
        self._gone = False  # the client closed its end of the wire: nothing written reaches it
        self._settled = anyio.Event()
        self._writing = anyio.Lock()  # the SDK's answers and the wire's own: one line at a time
        self._greeted = False  # an `initialize` was read
        self._modern = False  # a request carried the 2026 envelope: that era has no handshake
        self._version = mcp_types.DEFAULT_NEGOTIATED_VERSION  # the protocol version `initialize` asked for

    def __aiter__(self) -> _Wire:
        return self

    async def __anext__(self) -> str:
        import anyio

        while True:
            line = await self._in.readline()
            if not line or self._gone:  # a client that hung up is answered no more: as at EOF
                break
            if not line.strip():
                continue
            try:
                message = self._types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            except ValueError as exc:  # pydantic's ValidationError
                said = refusal(line, exc)
            else:
                said = self._refused(message, line)
                if said is None:
                    return line
            if said is not None:
                await self._answer(*said)
        self._eof = True
        if self._owed:
            with anyio.move_on_after(GRACE):
                await self._settled.wait()
        raise StopAsyncIteration

    def _refused(self, message: Any, line: str) -> Refusal | None:
        """Why a message the SDK reads is answered here instead, or None: noted as owed when it is a request."""
        types = self._types
        if isinstance(message, types.JSONRPCNotification):
            if "id" in (_members(line) or {}):  # an id the SDK took for none (1.5, true, null): a request
                return None, -32600, f"Invalid Request: {_BAD_ID}"
            if message.method == "notifications/cancelled" and isinstance(message.params, dict):
                cancelled = message.params.get("requestId")
                if isinstance(cancelled, int | str):  # a request its client cancelled is never answered
                    self._owed.discard(cancelled)
            return None
        if not isinstance(message, types.JSONRPCRequest):
            return None
        meta = (message.params or {}).get("_meta")
        self._modern = self._modern or (isinstance(meta, dict) and types.PROTOCOL_VERSION_META_KEY in meta)
        if message.method == "initialize":
            self._greeted = True
            asked = (message.params or {}).get("protocolVersion")
            self._version = asked if isinstance(asked, str) else self._version
        # as the SDK's gate: a method it does not serve is its METHOD_NOT_FOUND, before the handshake too
        elif not (self._greeted or self._modern or message.method == "ping") and self._serves(message.method):
            return message.id, -32600, ("Invalid Request: the session is not initialized; send `initialize` (then "
                                        "`notifications/initialized`) first")
        elif message.method == "tools/call":
            version = meta.get(types.PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
            said = bad_call(message.params, version if isinstance(version, str) else self._version)
            if said is not None:
                return message.id, -32602, said
        self._owed.add(message.id)
        return None

    async def _answer(self, key: int | str | None, code: int, message: str) -> None:
        text = json.dumps({"jsonrpc": "2.0", "id": key, "error": {"code": code, "message": message}},
                          separators=(",", ":"))  # as the SDK writes its own
        async with self._writing:
            await self._put(self._out.write, text + "\n")
            await self._put(self._out.flush)

    async def write(self, text: str) -> None:
        async with self._writing:
            await self._put(self._out.write, text)
        self._owed.discard(_answered(text))

    async def flush(self) -> None:
        await self._put(self._out.flush)
        if self._eof and not self._owed:
            self._settled.set()

    async def _put(self, send: Callable[..., Any], *text: str) -> None:
        """`send(*text)` to the client, unless it hung up: a client that closed its end of the pipe is an ordinary
        end, not a failure. The BrokenPipeError writing an answer ended the SDK's task group, and `kg mcp` with it
        ("unexpected failure: ExceptionGroup", exit 1). Its answers are dropped from then on, the calls it sent still
        run to their end (a `log` is kept and applied), and the next line read (EOF, as a rule) ends the server."""
        if self._gone:
            return
        try:
            await send(*text)
        except (BrokenPipeError, ConnectionResetError):
            self._gone = True


@contextmanager
def _claimed() -> Any:
    """(wire in, wire out) as binary files on private copies of fds 0 and 1; fd 0 then reads the null device and fd
    1 writes to stderr, both put back at the end."""
    saved = [os.dup(0), os.dup(1)]
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        with open(saved[0], "rb", closefd=False) as wire_in, open(saved[1], "wb", buffering=0, closefd=False) as out:
            yield wire_in, out
    finally:
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 1)
        for fd in (*saved, null):
            os.close(fd)


def serve(server: Any) -> None:
    """Run an MCPServer (kg/runtimes/mcp_server.py) on stdio until the client closes stdin and is answered."""
    import anyio
    from mcp.server.stdio import stdio_server

    async def main(wire_in: Any, wire_out: Any) -> None:
        low = server._lowlevel_server  # as MCPServer.run_stdio_async does
        wire = _Wire(anyio.wrap_file(TextIOWrapper(wire_in, encoding="utf-8", errors="replace")),
                     anyio.wrap_file(TextIOWrapper(wire_out, encoding="utf-8", write_through=True)),
                     serves=lambda method: low.get_request_handler(method) is not None)
        async with stdio_server(stdin=wire, stdout=wire) as (read, write):
            await low.run(read, write, low.create_initialization_options())

    from kg.runtimes.mcp_server import redact_logs

    redact_logs()  # (this process is kg mcp's own: its root handlers are the SDK's)
    try:
        with _claimed() as (wire_in, wire_out):
            anyio.run(main, wire_in, wire_out)
    finally:  # the graph's apply threads end before the process does (kg/runtimes/mcp_server.py)
        getattr(server, "kg_wait_applied", lambda: None)()
