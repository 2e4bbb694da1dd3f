"""`kg mcp`: kg as a Model Context Protocol server (the `mcp` SDK, stdio transport).

Each tool makes one library call on a freshly opened workspace, so the graph is held only for the call and
`kg` commands run at the same time. The SDK runs tools on worker threads: one lock keeps this process to one
open of the graph at a time. `log` answers like `kg log`, from the write journal (durable, never waiting for
the graph), and a background thread applies it (links, pattern) right after. Tool inputs have JSON schemas
from the type hints and refuse unknown arguments and values of another JSON type (`true` is no number);
library errors come back as tool errors with kg's message.

    from kg.runtimes.mcp_server import build_server
    build_server("/path/to/workspace").run("stdio")
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, get_args

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ConfigDict, Field, model_validator

from kg import __version__
from kg.core.errors import KgError, UsageError
from kg.runtimes.mcp_words import argument_errors, in_tool_words

T = TypeVar("T")

INSTRUCTIONS = """kaizen-kg is the user's learning memory. Call `brief` when a session starts and show what needs
the user. Call `log` when a command fails (kind=error), when the user corrects you or states a preference
(kind=learning, category=correction|preference) and for requests you cannot meet (kind=feature). Call `search`
or `inject` before a task to use what was learned; `show` an item by its id and `resolve` it once it is fixed.
Show `propose` results to the user; when they say "approve N" call `approve`, when they say "skip N" call `skip`
with their reason."""


MCP_KEY = "mcp-"  # the runtime session key of a session a `kg mcp` started: mcp-<pid>-<random>@<host>


def build_server(root: str | Path, *, rules_dir: Path | None = None, future: bool = False) -> MCPServer:
    """The server of the workspace at `root`. With `future`, approve and skip decide at a KG_NOW more than a day
    after this machine's clock (`kg mcp --future`, as `kg approve --future`); without it they refuse to."""
    from kg.workspace import open_workspace

    root = Path(root)

    def ws() -> Any:
        w = open_workspace(root, rules_dir=rules_dir)
        w.apply_behind = kick  # a tool's read applies a batch of a backlog at most: the drain thread the rest
        return w

    graph = threading.Lock()  # one open of the graph at a time in this process (Kùzu refuses a second)
    # (QA3 #1) the tool calls waiting for `graph`: the drain thread stops for them between two records and lets
    # them go first, so a call waits for one record of a backlog, not for all of it (20,000: every tool timed out)
    turn = threading.Condition()
    waiting = [0]

    arguments: dict[str, list[str]] = {}  # each tool's argument names, filled once the tools are registered

    def answer(fn: Callable[[], T], tool: str = "", given: dict[str, Any] | None = None) -> T:
        from kg.cli.common import bad_input, os_failure
        from kg.redaction.redact import redact_report, redact_value

        try:
            # the gate on every answer: a query or message echoed back carries whatever the caller typed
            return redact_value(fn())
        except KgError as exc:
            # the library names the first problem of the arguments `given`: name each (QA9 #5)
            own = own_problems(tool, given) if isinstance(exc, UsageError) and given is not None else []
            # the library speaks the command line's words (`--budget`, `kg propose`): say them as tools and arguments
            said = in_tool_words("; ".join(own) or str(exc), tool, arguments.get(tool, ()), arguments)
            raise ToolError(redact_report(said)) from None
        except OSError as exc:  # as `kg` says it: anything else reaches the client as a bare "Error executing tool"
            raise ToolError(redact_report(os_failure(exc))) from None
        except (UnicodeError, OverflowError, RecursionError) as exc:
            raise ToolError(redact_report(bad_input(exc) or str(exc))) from None

    def call(fn: Callable[[], T], tool: str = "", given: dict[str, Any] | None = None) -> T:
        """A tool's work on the graph: one at a time in this process, then through the answer gate (kg's refusal of
        the arguments `given` names each one it refuses)."""

        def locked() -> T:
            with turn:
                waiting[0] += 1
            try:
                graph.acquire()
            finally:
                with turn:
                    waiting[0] -= 1
                    turn.notify_all()
            try:
                return fn()
            finally:
                graph.release()

        return answer(locked, tool, given)

    def drain_round() -> bool:
        """One polite drain under the graph lock, handing it to a waiting tool call between two records (and to
        another process, as the detached applier does): whether it applied something and more waits."""
        from kg.ingest.drain import drain

        with turn:  # the calls that waited go first: the lock is not fair, this thread would take it again
            turn.wait_for(lambda: not waiting[0])
        with graph:
            w = open_workspace(root, rules_dir=rules_dir)
            with w.store(unless=lambda: not w.journal.has_pending(), polite=True, apply_journal=False) as st:
                if st is None:
                    return False
                report = drain(w, st, polite=True, yield_to=lambda: bool(waiting[0]))
        return bool(report.applied or report.sessions or report.skipped or report.rejected) \
            and w.journal.has_pending()

    def apply_all() -> None:
        """The drain thread: apply the journal (links, patterns) round by round until it is empty, or until a
        round applies nothing (another process holds the graph: the entries are durable, the next open applies
        them); a `kick` while it runs makes it look once more."""
        while True:
            with turn:
                kicked[0] = False
            try:
                more = drain_round()
            except Exception:  # noqa: BLE001 - the entries are durable in the journal: the next open retries
                more = False
            with turn:
                if not more and not kicked[0]:
                    running[0] = False
                    return

    kicked, running = [False], [False]

    def kick() -> bool:
        """Have the drain thread apply the journal (one thread at a time, started when none runs): True, the
        journal's backlog is applied in the background (`Workspace.apply_behind`)."""
        with turn:
            kicked[0] = True
            if running[0]:
                return True
            running[0] = True
        applier = threading.Thread(target=apply_all, name="kg-mcp-apply", daemon=True)
        appliers.append(applier)
        applier.start()
        return True

    # the apply threads `kick` starts: `serve` joins them before it returns (wait_applied), as a daemon thread
    # still inside Kùzu when the interpreter ends aborts the process ("terminate called without an active
    # exception", exit -6) after every answer was sent
    appliers: list[threading.Thread] = []

    server = MCPServer("kaizen-kg", instructions=INSTRUCTIONS, version=__version__)

    @server.tool(description="Record a learning, an error or a feature request in the graph. Returns its id.")
    def log(kind: Annotated[Literal["learning", "error", "feature"], Field(description="What to record.")],
            summary: Annotated[str, Field(description="One line: what happened or what was learned.")],
            details: Annotated[str | None, Field(description="More context.")] = None,
            action: Annotated[str | None, Field(description="What to do next time.")] = None,
            category: Annotated[str | None, Field(description="correction, preference, best_practice, "
                                                               "knowledge_gap, tool_gotcha, ...")] = None,
            priority: Annotated[Literal["critical", "high", "medium", "low"] | None, Field()] = None,
            area: Annotated[str | None, Field(description="frontend, backend, infra, tests, docs, config...")] = None,
            error_text: Annotated[str | None, Field(description="The error message (kind=error).")] = None,
            pattern_key: Annotated[str | None, Field(description="Key grouping recurrences, e.g. git.upstream.")]
            = None) -> dict[str, Any]:
        fields = {k: v for k, v in {"details": details, "action": action, "category": category,
                                    "priority": priority, "area": area, "error_text": error_text,
                                    "pattern_key": pattern_key}.items() if v is not None}
        def logged() -> Any:
            w = ws()
            try:  # journaled and answered, as `kg log` does: no waiting for a graph another process holds
                return w.log(kind, summary, source="conversation" if kind != "error" else "error", apply=False,
                             **fields)
            except UsageError as exc:  # the library names the first problem: name each argument's
                raise UsageError("; ".join(entry_problems(w, {"kind": kind, "summary": summary, **fields}))
                                 or str(exc)) from None

        res = answer(logged, "log")
        kick()
        return answer(lambda: {"id": res.id, "kind": res.kind, "summary": res.summary,
                               "created_at": res.created_at, "applied": res.applied, "queued": True,
                               "pattern_key": res.pattern_key, "redacted": list(res.redacted)})

    @server.tool(description="Search what was learned: graph nodes and memory files, best first.")
    def search(query: Annotated[str, Field(description="Words to look for.")],
               type: Annotated[str | None, Field(description="Only this kind: lesson, principle, pattern, error, "
                                                             "learning, feature...")] = None,
               limit: Annotated[int, Field(ge=1, le=100)] = 10) -> dict[str, Any]:
        from kg.memory.search import common_words_only
        from kg.memory.search import search as run

        asked = unwrap_id(query)  # `[ERR-...]` as the brief prints it is the id, as on the command line

        def found() -> dict[str, Any]:
            hits = [h.as_dict() for h in run(ws(), asked, type=type, limit=limit)]
            why = None if hits else common_words_only(ws(), asked)
            return {"query": asked, "hits": hits, **({"reason": why} if why else {})}

        return call(found, "search", {"query": asked, "type": type})

    @server.tool(description="What is remembered about a topic (or the topic of a message): recent files and "
                             "graph nodes.")
    def recall(topic: Annotated[str | None, Field(description="A topic name (rules/topics.toml).")] = None,
               message: Annotated[str | None, Field(description="Detect the topic from this text.")] = None
               ) -> dict[str, Any]:
        from kg.memory.topics import recall as run

        return call(lambda: run(ws(), topic, message=message), "recall")

    @server.tool(description="The memory block to put in context for a message, within a character budget.")
    def inject(message: Annotated[str, Field(description="The user's message or the task.")],
               budget: Annotated[int | None, Field(ge=40, description="Characters (default from rules).")] = None
               ) -> dict[str, Any]:
        from kg.memory.inject import inject as run

        return call(lambda: run(ws(), message, budget=budget), "inject")

    # The kg session this server started: an agent wired to kg through MCP alone (no runtime hooks) had none, so its
    # logs joined no session and a pattern recurring across its conversations never counted a session (QA9 #5). Its
    # first brief starts one when no session is open (under a runtime's hooks their start has opened one: gone on
    # with), tied to this server (one connection: one conversation); the server's exit ends it.
    mine: dict[str, str | None] = {"key": f"{MCP_KEY}{os.getpid()}-{uuid.uuid4().hex[:12]}@{socket.gethostname()}",
                                   "session": None}

    def open_now(w: Any) -> bool:
        """Whether a session is open now, from the files alone (current: an end stops it being current), as a start
        behind a busy graph takes it (`kg.runtimes.hooks._ensure_session`): no graph read before the brief's own
        bounded one (review: a held graph failed the brief after the lock budget). One another `kg mcp` of this
        machine started and left open as it died (killed: no exit to end it) is ended first, with the summary its
        events make; else every later conversation went on with it. Left open when the graph is busy."""
        from kg.core.errors import StoreBusy
        from kg.memory import session_ids, sessions
        from kg.runtimes.busy_brief import bounded_wait
        from kg.runtimes.hook_rules import load_rules as hook_rules
        from kg.store.lock import pid_alive

        current = w.current_session()
        if not current:
            return False
        key = session_ids.key_of(w, current) or ""
        pid, _, host = key[len(MCP_KEY):].partition("@") if key.startswith(MCP_KEY) else ("", "", "")
        pid = pid.split("-")[0]
        if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid() or pid_alive(int(pid)):
            return True  # (another machine's or container's server: its pid says nothing here)
        try:
            with bounded_wait(hook_rules(w).busy_wait):
                sessions.end(w, "", session=current, at_least_start=True)
        except StoreBusy:
            return True  # ended by a brief that finds the graph free
        except UsageError:
            pass  # ended already
        return False

    @server.tool(description="The session brief: pending high-priority items, verifications due, patterns ready "
                             "for promotion, proposals waiting for the user, the watch list. With no session open "
                             "(no runtime hooks started one), the first brief starts one, ended when this server "
                             "exits.")
    def brief(message: Annotated[str | None, Field(description="The first message: adds its memory.")] = None,
              budget: Annotated[int | None, Field(ge=200)] = None) -> dict[str, Any]:
        from kg.runtimes.hooks import session_start_brief

        def run() -> dict[str, Any]:
            w = ws()
            start = mine["session"] is None and not open_now(w)  # (once: a later brief reads, never takes over)
            out = session_start_brief(w, None, message, budget, tools=True, start_session=start, source="mcp",
                                      key=mine["key"] if start else None)
            if out.get("session_started"):  # only one this server started is its own to end
                mine["session"] = out["session"]
            return out

        return call(run, "brief")

    def end_mine() -> None:
        """End the session this server started, as its conversation is over (the client closed the wire): its
        summary from the events logged in it. Nothing when it ended already (`kg session end`) or none was started."""
        if mine["session"] is None:
            return
        from kg.memory import sessions

        try:
            sessions.end(ws(), "", session=mine["session"], at_least_start=True)  # (untied there)
        except UsageError:
            pass  # ended already
        except (KgError, OSError) as exc:  # at exit, nobody to answer: said on stderr, as the SDK's log is
            logging.getLogger(__name__).warning("kg session %s not ended: %s", mine["session"], exc)

    @server.tool(description="Counts of nodes, edges and sessions; pending high-priority entries; patterns; "
                             "verifications due and proposals waiting.")
    def status() -> dict[str, Any]:
        def run() -> dict[str, Any]:
            from kg.graph.reads import recurring

            data = ws().status()  # one bounded read (not `with w:`, whose open applied the whole journal first)
            return {**data, "patterns": recurring(data["patterns"])}  # as `kg status --json` prints it

        return call(run, "status")

    @server.tool(description="One node by its id (`ERR-20261130-001`, or `[ERR-...]` as the brief prints it), or a "
                             "pattern by its key (`git.push.no_upstream`): its fields and its edges in both "
                             "directions; a pattern with its recurrence. A rule kg applied, by its change id "
                             "(`[chg-...]` as the brief's verifications due name it): its file, text, pattern, "
                             "status, checks and evidence.")
    def show(id: Annotated[str, Field(description="The node's id, a pattern's key, or a change's id.")]
             ) -> dict[str, Any]:
        return call(lambda: ws().show(unwrap_id(id)), "show")

    @server.tool(description="Move a logged entry (an LRN/ERR/FEAT id) to another status, e.g. resolved once its "
                             "problem is fixed; or close a pattern (its id or key) with wont_fix, or reopen it with "
                             "active.")
    def resolve(id: Annotated[str, Field(description="The entry's id (brackets as the brief prints it are fine), or "
                                                     "a pattern's id or key.")],
                # `active` is a pattern's alone: kg says so of an entry, as `kg resolve` does (QA9 #3: a pattern
                # closed here could not be reopened here)
                status: Annotated[Literal["pending", "in_progress", "resolved", "wont_fix", "promoted", "active"],
                                  Field(description="The new status: for a pattern, wont_fix or active.")]
                = "resolved") -> dict[str, Any]:
        return call(lambda: ws().resolve(unwrap_id(id), status), "resolve")

    @server.tool(description="The proposals waiting for the user's decision, by number.")
    def propose() -> dict[str, Any]:
        from kg.lifecycle.api import propose as run

        return {"proposals": call(lambda: run(ws()), "propose")}

    def decided(decide: Callable[[Any, Any], T]) -> Callable[[], T]:
        """A decision on a proposal (approve, skip) at this server's time, refused as `kg approve` refuses it when
        that time is more than a day after the machine's clock, unless the server was started with --future
        (QA9 #4a: the tools applied it)."""
        from kg.cli.lifecycle import STATE_HARM, not_a_future_day
        from kg.core import clock

        def run() -> T:
            w = ws()  # first: a KG_NOW without an offset is read in the workspace's clock zone
            at = clock.now(None)
            if not future:
                not_a_future_day(at, STATE_HARM, allow="start the server with `kg mcp --future` to decide at that "
                                                       "day on purpose")
            return decide(w, at)

        return run

    @server.tool(description="Carry out proposal N (only when the user said \"approve N\").")
    def approve(number: Annotated[int, Field(ge=1, description="The proposal's number.")]) -> dict[str, Any]:
        from kg.lifecycle.api import approve as run

        return call(decided(lambda w, at: run(w, number, at)), "approve")

    @server.tool(description="Decline proposal N with the user's reason (when the user said \"skip N\").")
    def skip(number: Annotated[int, Field(ge=1)],
             reason: Annotated[str, Field(min_length=1, description="Why, in the user's words.")]) -> dict[str, Any]:
        from kg.lifecycle.api import skip as run

        return call(decided(lambda w, at: run(w, number, reason, at)), "skip")

    def own_problems(tool: str, given: Any, refused: set[str] | frozenset[str] = frozenset()) -> list[str]:
        """kg's own refusals of a tool's arguments `given` (those the schema took: not `refused`), each named: the
        library stops at its first. One check for every tool that has them (`log`'s fields, `search`'s query and
        type), beside the schema's refusals and in place of the library's first; [] when kg refuses none."""
        if not isinstance(given, dict) or tool not in CHECKS:
            return []
        kept = {k: v for k, v in given.items() if k not in refused and k in arguments.get(tool, ())}
        try:
            return CHECKS[tool](ws(), kept)
        except Exception:  # noqa: BLE001 - the refusal in hand is the answer; this only adds to it
            return []

    def log_checks(w: Any, kept: dict[str, Any]) -> list[str]:
        kept.setdefault("kind", "learning")
        kept.setdefault("summary", "x")  # a missing summary is the schema's to name
        return entry_problems(w, kept)

    def search_checks(w: Any, kept: dict[str, Any]) -> list[str]:
        from kg.memory.search import argument_problems

        return argument_problems(w, kept.get("query", "x"), kept.get("type"))  # a missing query is the schema's

    CHECKS: dict[str, Callable[[Any, dict[str, Any]], list[str]]] = {"log": log_checks, "search": search_checks}

    def schema_and_own(tool: str) -> Callable[[dict[str, Any], set[str]], list[str]]:
        return lambda given, refused: [in_tool_words(s, tool, arguments[tool], arguments)
                                       for s in own_problems(tool, given, refused)]

    # The SDK (mcp 2.3) has no public way to list a server's Tool objects or to make their argument models
    # strict; its ToolManager is the one place they live.
    for tool in server._tool_manager.list_tools():
        _refuse_unknown_arguments(tool)
        _one_line_argument_errors(tool, schema_and_own(tool.name))
        arguments[tool.name] = list(tool.parameters.get("properties", {}))

    _redact_every_echo(server)

    def wait_applied() -> None:
        """Join every apply thread `log` started, so no Kùzu object is alive in another thread at exit."""
        while appliers:
            appliers.pop().join()

    def at_exit() -> None:
        wait_applied()
        end_mine()

    server.kg_wait_applied = at_exit  # type: ignore[attr-defined]
    return server


class _Redacted(logging.Filter):
    """A log line redacted as a tool error is: the SDK logs what a client sent (a tool's name) as it came."""

    def filter(self, record: logging.LogRecord) -> bool:
        from kg.redaction.redact import redact_report

        try:
            said = record.getMessage()
        except Exception:  # noqa: BLE001 - a record that cannot be formatted: the handler says so, as ever
            return True
        record.msg, record.args = redact_report(said), ()
        return True


def _redact_every_echo(server: MCPServer) -> None:
    """Whatever the SDK itself says back of a call goes through kg's redactor, as the tools' own errors do (`answer`):
    a tool name holding a token came back as "Unknown tool: ghp_..." and the stderr log line repeated it (QA9 #2)."""
    from kg.redaction.redact import redact_report

    sdk_call = server.call_tool

    async def call_tool(name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await sdk_call(name, arguments, context)
        except ToolError as exc:  # the same error (its type, its cause: the SDK logs from them), its words redacted
            exc.args = (redact_report(str(exc)),)
            raise

    server.call_tool = call_tool  # type: ignore[method-assign] # _handle_call_tool calls it through the instance


def redact_logs() -> None:
    """The SDK's log lines (it logs what a client sent: a tool's name) redacted, as the tools' errors are: on the
    root logger's handlers, so only in `kg mcp`'s own process (`kg.runtimes.mcp_stdio.serve`), never in a library
    user's or a test's, whose every record it would rewrite (review)."""
    for handler in logging.getLogger().handlers:  # the SDK's own (configure_logging: the root's, to stderr)
        if not any(isinstance(f, _Redacted) for f in handler.filters):
            handler.addFilter(_Redacted())


def unwrap_id(text: str) -> str:
    """An id copied with the brief's brackets or a sentence's punctuation is that id (as `kg show [ERR-...]`)."""
    from kg.cli.common import id_case
    from kg.cli.entry import unwrap_ids

    return unwrap_ids(id_case([text.strip()]))[0] if text.strip() else text


def entry_problems(w: Any, given: dict[str, Any]) -> list[str]:
    """Each reason kg refuses the `log` tool's arguments `given` (kg.core.entries.problems), in the order given."""
    from kg.core import clock
    from kg.core.entries import problems

    fields = {k: v for k, v in given.items() if k not in ("kind", "summary")}
    return problems(w.policy, w.rules.redactor, given.get("kind"), given.get("summary"), now=clock.now(None),
                    **fields)


def _one_line_argument_errors(tool: Any, also: Callable[[dict[str, Any], set[str]], list[str]] | None = None
                              ) -> None:
    """Arguments that do not fit a tool's schema are answered in one line naming each argument and what it should
    be, not pydantic's multi-line report with its documentation links; with `also`, kg's own refusals of the
    arguments the schema took follow (the `log` tool: a bad kind and an unknown category are both named)."""
    from pydantic import ValidationError

    from kg.redaction.redact import redact_value

    run = tool.run

    async def checked(arguments: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return await run(arguments, *args, **kwargs)
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValidationError):
                raise
            errors = cause.errors(include_url=False)
            said = argument_errors(tool.name, errors, takes=list(tool.parameters.get("properties", {})))
            if also is not None:
                refused = {str(e["loc"][0]) for e in errors if e.get("loc")}
                said = "; ".join([said, *also(arguments, refused)])
            # the cause stays the ValidationError: the server logs the rejected fields' names, never their values
            raise ToolError(f"Error executing tool {tool.name}: {redact_value(said)}") from cause

    object.__setattr__(tool, "run", checked)  # Tool is a pydantic model; its method is shadowed on this instance


def _refuse_unknown_arguments(tool: Any) -> None:
    """Make a tool refuse arguments it does not take (MCP clients expect `additionalProperties: false` and an
    error naming the stray argument, not a silent drop; named with the other arguments refused: QA9 #5, an
    unknown argument refused before the others were looked at hid them), and arguments of another JSON type than
    its schema says: pydantic's lax mode read `true` and "1" as the number 1, so `approve` with `{"number":
    true}` approved proposal #1. A malformed call is refused, never guessed at."""
    base = tool.fn_metadata.arg_model
    whole = {f.alias or name for name, f in base.model_fields.items() if int in (f.annotation, *get_args(f.annotation))}

    def check(cls: type, data: Any) -> Any:
        if isinstance(data, dict):  # an unknown argument is `extra="forbid"`'s to refuse, beside every other one
            # JSON Schema's integer is any number with no fraction: 1.0 is the 1 a client's float arithmetic sent
            data = {k: int(v) if k in whole and type(v) is float and v.is_integer() else v for k, v in data.items()}
        return data

    strict = type(base.__name__, (base,), {
        "model_config": ConfigDict(arbitrary_types_allowed=True, extra="forbid", strict=True),
        "__module__": base.__module__,
        "_refuse_unknown": model_validator(mode="before")(classmethod(check)),
    })
    tool.fn_metadata.arg_model = strict
    tool.parameters = strict.model_json_schema(by_alias=True)
