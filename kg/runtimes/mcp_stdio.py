"""`kg mcp`'s stdio transport: the SDK's, with every request read answered before the server stops at EOF.

A client that writes its requests and closes stdin (`printf '...' | kg mcp`, a script, a home-grown agent) got
no answer to a tool call still running when stdin ended: at EOF the SDK closes the read stream, the server's loop
ends and its task group cancels the calls in flight. Here the lines go through `_Wire`, which notes the id of
every request read and every answer written; at EOF it waits (at most `GRACE` seconds, so a request the server
never answers cannot keep the process alive for ever) until each id read has its answer, then ends the stream.

As the SDK's own stdio transport does, the wire is served from private copies of fds 0 and 1 while fd 0 reads
the null device and fd 1 writes to stderr: a handler's or a child's stray output cannot reach the wire.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from io import TextIOWrapper
from typing import Any

GRACE = 120.0  # seconds after EOF the answers still owed are waited for


def _ids(line: str, *, answers: bool) -> list[str]:
    """The ids of the requests (`answers` False) or of the answers (True) a JSON-RPC line holds."""
    try:
        parsed = json.loads(line)
    except ValueError:
        return []
    if not isinstance(parsed, dict):  # a batch: the SDK answers none of it (JSON-RPC batches left MCP in 2025-06)
        return []
    key = parsed.get("id")
    if isinstance(key, bool) or not isinstance(key, int | str):  # the SDK's RequestId: an int or a string
        return []
    if answers:
        return [json.dumps(key)] if "method" not in parsed and ("result" in parsed or "error" in parsed) else []
    # a request the SDK reads as one: else it is dropped unanswered, and waiting for it would hold EOF for GRACE
    return [json.dumps(key)] if parsed.get("jsonrpc") == "2.0" and isinstance(parsed.get("method"), str) else []


class _Wire:
    """The stdin side (an async line iterator) and the stdout side (`write`, `flush`) the SDK's stdio_server takes."""

    def __init__(self, stdin: Any, stdout: Any) -> None:
        import anyio

        self._in, self._out = stdin, stdout
        self._owed: set[str] = set()
        self._eof = False
        self._settled = anyio.Event()

    def __aiter__(self) -> _Wire:
        return self

    async def __anext__(self) -> str:
        import anyio

        line = await self._in.readline()
        if line:
            self._owed.update(_ids(line, answers=False))
            return line
        self._eof = True
        if self._owed:
            with anyio.move_on_after(GRACE):
                await self._settled.wait()
        raise StopAsyncIteration

    async def write(self, text: str) -> None:
        await self._out.write(text)
        for key in _ids(text, answers=True):
            self._owed.discard(key)

    async def flush(self) -> None:
        await self._out.flush()
        if self._eof and not self._owed:
            self._settled.set()


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
        wire = _Wire(anyio.wrap_file(TextIOWrapper(wire_in, encoding="utf-8", errors="replace")),
                     anyio.wrap_file(TextIOWrapper(wire_out, encoding="utf-8", write_through=True)))
        low = server._lowlevel_server  # as MCPServer.run_stdio_async does
        async with stdio_server(stdin=wire, stdout=wire) as (read, write):
            await low.run(read, write, low.create_initialization_options())

    try:
        with _claimed() as (wire_in, wire_out):
            anyio.run(main, wire_in, wire_out)
    finally:  # the graph's apply threads end before the process does (kg/runtimes/mcp_server.py)
        getattr(server, "kg_wait_applied", lambda: None)()
