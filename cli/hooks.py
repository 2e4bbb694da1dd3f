"""`kg hook ...` (what agent runtimes call), `kg install` / `kg uninstall` (wire kg into a runtime) and `kg mcp`
(the Model Context Protocol server over stdio)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer
from kg.cli.common import (
    JsonOpt,
    NowOpt,
    after_answer,
    apply_after_answer,
    background_possible,
    emit,
    errors,
    fail,
    note,
    now_of,
    state,
    workspace,
)

hook_app = typer.Typer(help="What agent runtimes call at session start, session end and after a tool call.",
                       no_args_is_help=True)

RuntimeOpt = Annotated[str | None, typer.Option(
    "--runtime", help="The runtime calling (claude-code, codex, openclaw). claude-code and codex read the hook's "
                      "JSON payload on stdin and answer in their hook output format. With it kg never exits 2 "
                      "(a runtime reads 2 as \"block\"): bad input or a failure is an Error: line and exit 1 "
                      "in every hook; without it, bad input exits 2 as for every kg command.")]
RuntimeSessionOpt = Annotated[str | None, typer.Option(
    "--runtime-session", help="The runtime's own id for the session (default: session_id of the hook payload on "
                              "stdin, for claude-code and codex; OpenClaw's handler passes its sessionId). The kg "
                              "session a start opens is tied to it, and its end ends that one, not whichever is "
                              "current.")]
HOOK_JSON = ("claude-code", "codex")
HOOK_RUNTIMES = ("claude-code", "codex", "openclaw")  # kg.runtimes.integrations.RUNTIMES (not imported by a hook)


@contextmanager
def hook_errors(runtime: str | None) -> Iterator[None]:
    """Errors as `errors()` does, except that a runtime never gets a blocking exit code from kg: to Claude Code
    and Codex exit 2 means "block" (on Stop: "keep going, here is your next prompt"). One rule for every hook
    under `--runtime`: bad input (a payload that is not a JSON object, a bad option) or a failure is an `Error:`
    line on stderr and exit 1, which both runtimes read as a non-blocking hook error: shown to the user, ignored
    otherwise (Codex's Stop included: only 2, or a block decision on stdout, makes it go on). Exit 0 would hide
    the error from the user. An unknown runtime exits 1 too: a hook line written by hand with a typo is said at
    once, not taken for a quiet session end."""
    if runtime is None:
        with errors():
            yield
        return
    if runtime not in HOOK_RUNTIMES:
        note(f"Error: unknown runtime {runtime!r}: use one of {', '.join(HOOK_RUNTIMES)}")
        raise typer.Exit(1)
    code = 1
    try:
        with errors():
            yield
    except typer.Exit as exc:
        if exc.exit_code not in (0, None):
            raise typer.Exit(code) from None
        raise
    except Exception as exc:  # noqa: BLE001 - a hook must answer; the message says what went wrong
        from kg.redaction.redact import redact_report  # the exception's text may quote the payload

        note(f"Error: kg hook failed: {type(exc).__name__}: {redact_report(str(exc))}")
        raise typer.Exit(code) from None


def _workspace(ctx: typer.Context, runtime: str | None = None) -> Any:
    """The hook's workspace. A broken kg.toml does not cost the capture (every tool failure of every session
    would be dropped until someone noticed): the hook runs on the packaged rules, which redact every secret the
    packaged rules know (a wrong `[clock] zone` alone: on kg.toml's rules, in the zone kept), and says which in
    one warning line on stderr, which the runtime shows as it shows a hook's
    error. The journal (where the capture goes either way) is not the place: what waits there is applied by the
    next command, which refuses the same kg.toml."""
    from kg.core.errors import NoWorkspace

    try:
        ws = workspace(ctx, fallback=True)
    except NoWorkspace:
        if not state(ctx).workspace:  # no path of its own (KG_WORKSPACE, the folder): as any command
            raise
        ws = _moved(ctx, runtime)
    if ws.rules_problem:
        note(f"Warning: {ws.rules_problem}. This hook ran on {ws.ran_on or 'the packaged rules'}; the capture is "
             "kept. `kg doctor` checks kg.toml")
    return ws


def _moved(ctx: typer.Context, runtime: str | None) -> Any:
    """The hook's named workspace (`-w`, as `kg install` wrote it) is gone: the workspace was moved (QA6 #2). Its
    capture goes to the workspace the hook's folder is in (the runtime runs hooks in the project folder, which
    `kg install` wrote into: the moved workspace), with a warning that says to install again; none there, the
    error says so, and not `kg init`, which would make an empty workspace at the old path. A hook named no
    workspace (KG_WORKSPACE, the folder) fails as before."""
    from pathlib import Path

    from kg.core.errors import NoWorkspace
    from kg.workspace import Workspace
    from kg.workspace_root import find_root

    named = state(ctx).workspace
    again = f"`kg install {runtime or '<runtime>'}`"
    try:
        root = find_root(None, start=Path.cwd()) if not os.environ.get("KG_WORKSPACE") else None
    except NoWorkspace:
        root = None
    if root is None:
        raise NoWorkspace(f"{named}, the workspace this hook was installed for, is not a kg workspace (moved or "
                          f"removed?): run {again} in the workspace's folder to point the hooks at it") from None
    note(f"Warning: {named}, the workspace this hook was installed for, is not a kg workspace (moved?): this hook "
         f"used {root}, the one its folder is in; run {again} there to point the hooks at it")
    return Workspace(root, rules_dir=state(ctx).rules, fallback=True)


def _stdin_payload() -> dict[str, Any]:
    from kg.runtimes.payload import read_payload

    stream = sys.stdin
    if stream is None or stream.isatty():
        return {}
    from kg.core import inputs

    raw = inputs.read_stream(stream, what="the hook payload on stdin", limit=inputs.MAX_PAYLOAD_BYTES)
    return read_payload(raw.decode("utf-8", "replace"))


def _key(ws: Any, runtime: str | None, given: str | None, payload: dict[str, Any]) -> str | None:
    """The runtime session's key in sessions.json; a secret-like id as its digest, as every session id."""
    from kg.memory.session_ids import runtime_key

    class Rules:  # the workspace's redaction rules, loaded only for an id they are asked about (not a UUID)
        def redact(self, text: str) -> Any:
            return ws.rules.redactor.redact(text)

    return runtime_key(runtime, given if given is not None else payload.get("session_id"), Rules())


def _replayed(payload: dict[str, Any]) -> str | None:
    """The transcript a session start may be dated by: a new session's (`source` startup, or none). Its turns can
    only be older than now when it is replayed; a resumed one goes on now, whatever its first turn's day."""
    if payload.get("source") not in (None, "startup"):
        return None
    return payload.get("transcript_path") or None


@hook_app.command("session-start")
def session_start(
    ctx: typer.Context,
    message: Annotated[str | None, typer.Option("--message", "-m", help="The session's first message: adds the "
                                                                         "memory injected for it.")] = None,
    budget: Annotated[int | None, typer.Option(help="Characters of the brief (default: rules/hooks.toml).")] = None,
    start_session: Annotated[bool, typer.Option("--start-session", help="Open a kg session (unless the current "
                                                                        "one is still open) for later logs.")] = False,
    write: Annotated[bool, typer.Option("--write", help="Also save the brief to memory/.hook-context.txt.")] = False,
    runtime: RuntimeOpt = None,
    runtime_session: RuntimeSessionOpt = None,
    thread: Annotated[str | None, typer.Option(
        "--thread", help="The runtime's conversation the session starts on (OpenClaw's handler passes its "
                         "sessionKey): with --start-session, the kg session of the runtime session before this one "
                         "on it is ended (OpenClaw's daily reset and idle expiry start a new session with no end "
                         "event).")] = None,
    transcript: Annotated[str | None, typer.Option(
        "--transcript", help="With --thread: this runtime session's transcript, reflected on when a later "
                             "start on the same conversation ends its session.")] = None,
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The brief an agent sees when a session begins: pending high-priority items, verifications due, patterns
    ready for promotion, proposals waiting, the watch list and the memory for the first message."""
    from kg.runtimes import hooks, transcript_start

    with hook_errors(runtime):
        payload = _stdin_payload() if runtime in HOOK_JSON else {}
        message = message or payload.get("prompt") or None
        replayed = _replayed(payload)
        if start_session and (skip := transcript_start.skipped(replayed)):
            note(f"Note: {skip}")  # a hook never blocks: began() refuses it too, this says so
            replayed = None
        ws = _workspace(ctx, runtime)
        key = _key(ws, runtime, runtime_session, payload)
        on = _key(ws, runtime or "kg", thread, {}) if thread is not None else None
        brief = hooks.session_start_brief(ws, now_of(ctx, now), message, budget,
                                          start_session=start_session, source=runtime or "kg", write=write,
                                          transcript=replayed, key=key,
                                          hand_off=after_answer if background_possible() else None,
                                          thread=(on, transcript) if on else None)
        if runtime == "claude-code" and start_session:  # this window's logs go to this window's session
            from kg.runtimes.session_env import export_session

            problem = export_session(brief.get("session"))
            if problem:
                note(problem)
    if runtime in HOOK_JSON and not as_json:
        emit(hooks.claude_context(brief), True)
    else:
        emit(brief, as_json, lambda d: d["text"])


@hook_app.command("session-end")
def session_end(
    ctx: typer.Context,
    transcript: Annotated[str | None, typer.Option("--transcript", "-t", help="The session's transcript (default: "
                                                                              "transcript_path of the hook payload "
                                                                              "on stdin).")] = None,
    session: Annotated[str | None, typer.Option(help="The kg session (default: the current one).")] = None,
    format: Annotated[str | None, typer.Option("--format", help="Transcript format (default: detected).")] = None,
    summary: Annotated[str, typer.Option(help="A line for the summary's Tasks section.")] = "",
    no_summary: Annotated[bool, typer.Option("--no-summary", help="Reflect only; keep the session open.")] = False,
    runtime: RuntimeOpt = None,
    runtime_session: RuntimeSessionOpt = None,
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Reflect on the transcript (log what it finds, once) and write the session summary. Under `--runtime` it
    never exits 2 (a session end, or Codex's Stop, which calls it after every turn, must not ask the agent to go
    on): bad input or a failure exits 1, as in every hook. A transcript it cannot read is a note and the summary
    is still written (with or without `--runtime`); `stop_hook_active` in the payload (a Stop that follows
    another hook's block) is left alone."""
    from kg.runtimes import hooks

    with hook_errors(runtime):
        payload = _stdin_payload() if transcript is None and runtime != "openclaw" else {}
        if payload.get("stop_hook_active") is True:
            note("stop_hook_active: another hook keeps this turn going; nothing to do until it stops")
            return
        path = transcript or payload.get("transcript_path") or None
        ws = _workspace(ctx, runtime)
        at = now_of(ctx, now)
        key = _key(ws, runtime, runtime_session, payload)
        if session:  # a secret-like id is kept as its digest: the same id names the same session
            from kg.memory.session_ids import given

            session = given(session, ws.rules.redactor)

        def run(session: str | None = session or None) -> dict[str, Any]:
            return hooks.session_end(ws, path, at, session=session, format=format, summary=summary,
                                     write_summary=not no_summary, strict=runtime is None,
                                     save_brief=runtime == "openclaw", key=key)

        handed_over = runtime == "openclaw" or (payload.get("hook_event_name") in ("SessionEnd", "Stop")
                                                 and runtime in HOOK_JSON)
        if handed_over and not as_json and os.environ.get("KG_HOOK_WAIT") != "1" and background_possible():
            # Codex gives SessionEnd hooks 1 s (at most 3); Claude Code 1.5 s unless a hook's timeout raises it,
            # and it cancels hooks still running when it exits; Codex's turn ends only once its Stop hooks have
            # answered. Answer now, reflect in a detached child that outlives the runtime (KG_HOOK_WAIT=1 keeps
            # it in the foreground, to see its errors). The session it ends is named now, not when it runs
            # (Claude Code's /clear starts the next session at once): see `hooks.hand_over_end`. OpenClaw's
            # handler.js starts kg detached and holds the next session start until this process has answered.
            # The child's errors reach no one, so what it surely meets is found here first: a workspace it cannot
            # write (a read-only mount) fails now, an Error: line and exit 1. Codex's Stop with --no-summary
            # wrote nothing before handing over and exited 0: each turn's reflection was lost unsaid (QA1 #4).
            # Exit 1 is safe there: Codex reads it on Stop as a failed hook, shown and ignored (codex/HOOKS.md
            # section 2); only exit 2 or a block decision on stdout makes the turn go on.
            _can_write(ws)
            handed = hooks.hand_over_end(ws, session, write_summary=not no_summary, key=key, now=at, transcript=path)
            after_answer(lambda: (hooks.wait_longer(ws), run(handed)))  # waits out a long writer
            return
        done = run()
    for line in done["notes"]:
        note(line)
    if runtime in HOOK_JSON and not as_json:
        return  # the runtime shows stdout to the user or the model; a session end has nothing to add there
    emit(done, as_json, _render_end)


def _can_write(ws: Any) -> None:
    """Fail (StoreError, exit 1) when the workspace's kg folder cannot be written: the journal's lock file, which
    every write opens first, opened for writing and closed. Not the lock itself: a writer holding it would make the
    hook wait, where the child waits as long as it must."""
    from kg.core.errors import StoreError

    path = ws.journal.folder / "journal.lock"
    try:
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o644))
    except OSError as exc:
        raise StoreError(f"cannot write the workspace ({path}: {exc.strerror}): this session end's reflection is "
                         "not saved; check that the workspace folder is writable") from None


def _render_end(d: dict[str, Any]) -> str:
    lines = []
    r = d["reflect"]
    if r:
        lines.append(f"🔍 {d['transcript']} ({r['format']}, {r['turns']} turns): {r['findings']} finding(s), "
                     f"{len(r['logged'])} logged" + (f", {r['already_logged']} already logged"
                                                     if r["already_logged"] else ""))
    if d["summary_file"]:
        lines.append(f"📝 Session {d['session']} summary: {d['summary_file']}")
    return "\n".join(lines)


@hook_app.command("post-tool-use")
def post_tool_use(
    ctx: typer.Context,
    session: Annotated[str | None, typer.Option(envvar="KG_SESSION", help="The kg session when the payload's "
                                                "session_id has none started for it (also KG_SESSION; default: "
                                                "the current one).")] = None,
    runtime: RuntimeOpt = None,
    runtime_session: RuntimeSessionOpt = None,
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Read a PostToolUse / PostToolUseFailure payload on stdin (Claude Code's shape unless --runtime says
    otherwise); log an error entry when the tool failed (the first meaningful line of its output, not the
    "Exit code N" header), in the kg session started for the payload's session_id."""
    from kg.runtimes import hooks

    with hook_errors(runtime):
        payload = _stdin_payload()
        ws = _workspace(ctx, runtime)
        # the runtime waits for this hook: answer once the entry is journaled, apply it right after
        later = background_possible()
        done = hooks.post_tool_use(ws, payload, now_of(ctx, now), runtime=runtime or "claude-code",
                                   apply=not later, session=session or None,
                                   key=_key(ws, runtime or "claude-code", runtime_session, payload))
        if later and done["failed"]:
            apply_after_answer(ws)
    if as_json:
        emit(done, True)


def _render_install(d: dict[str, Any]) -> str:
    verb = "Would change" if d["dry_run"] else "Changed"
    changed = [c for c in d["changes"] if c["action"] != "unchanged"]
    if not changed:
        return f"{d['runtime']}: nothing to change in {d['project']}"
    lines = [f"{verb} ({d['runtime']}, in {d['project']}):"]
    lines += [f"  {c['action']:<9} {c['path']}: {c['detail']}" for c in changed]
    if d["dry_run"]:
        lines.append("Dry run: nothing was written.")
    else:
        lines += [f"Next: {n}" for n in d["next"]]
    return "\n".join(lines)


RuntimeArg = Annotated[str, typer.Argument(help="claude-code, openclaw or codex.")]
DryOpt = Annotated[bool, typer.Option("--dry-run", help="Show what would change; write nothing.")]
ProjectOpt = Annotated[str | None, typer.Option("--project", help="Project folder to write into (default: the "
                                                                  "workspace root).")]


def install(ctx: typer.Context, runtime: RuntimeArg, dry_run: DryOpt = False, project: ProjectOpt = None,
            shared: Annotated[bool, typer.Option("--shared", help="claude-code: write the team's committed "
                                                                  ".claude/settings.json (calling `kg` from PATH) "
                                                                  "instead of the personal settings.local.json.")]
            = False,
            force: Annotated[bool, typer.Option("--force", help="Put kg's defaults back in what you edited of kg's "
                                                                "(a hook entry's timeout, matcher or command, the "
                                                                "OpenClaw hook's files, a marked block).")] = False,
            as_json: JsonOpt = False) -> None:
    """Wire kg into an agent runtime: hooks (session brief, reflection, error logging) and the MCP server (when
    the `mcp` package is installed). Run again, it updates kg's parts and keeps those you edited (see --force)."""
    from kg.runtimes.integrations import install as run

    with errors():
        done = run(workspace(ctx), runtime, dry_run, project=project, shared=shared, force=force)
    for line in done["notes"]:
        note(line)
    emit(done, as_json, _render_install)


def uninstall(ctx: typer.Context, runtime: RuntimeArg, dry_run: DryOpt = False, project: ProjectOpt = None,
              force: Annotated[bool, typer.Option("--force", help="Take out kg's parts you edited too (kept "
                                                                  "otherwise).")] = False,
              as_json: JsonOpt = False) -> None:
    """Remove exactly what `kg install` added for a runtime; the parts of kg's you edited stay (see --force)."""
    from kg.runtimes.integrations import uninstall as run

    with errors():
        done = run(workspace(ctx), runtime, dry_run, project=project, force=force)
    for line in done["notes"]:
        note(line)
    emit(done, as_json, _render_install)


def mcp(ctx: typer.Context,
        future: Annotated[bool, typer.Option("--future", help="Let approve and skip decide at a --now / KG_NOW "
                                                               "more than a day after this machine's clock (a future "
                                                               "day replayed on purpose).")] = False) -> None:
    """Serve kg over the Model Context Protocol on stdio (tools: log, search, recall, inject, status, brief,
    show, resolve, propose, approve, skip). Needs the `mcp` package: pip install 'kaizen-kg[mcp]'."""
    try:
        from kg.runtimes.mcp_server import build_server
    except ImportError as exc:
        fail(f"the MCP server needs the `mcp` package ({exc.name} is missing): pip install 'kaizen-kg[mcp]'", 2)
    from kg.core import clock

    with errors():
        ws = workspace(ctx)
        ws.root  # noqa: B018 - fail now (exit 2) when there is no workspace, not at the first tool call
        at = now_of(ctx, None)
        if at:  # QA9 #4c: the global --now was ignored (changes dated by the machine's clock), KG_NOW honoured
            clock.now(at)  # a bad one refused now (exit 2, naming --now), not at each tool call
            # the server's every clock read (its tools, the library under them, the apply thread) is KG_NOW's
            os.environ[clock.ENV_NOW] = at
    from kg.runtimes.mcp_stdio import serve

    serve(build_server(ws.root, rules_dir=ws.rules.rules_dir, future=future))


def register(app: typer.Typer) -> None:
    app.add_typer(hook_app, name="hook")
    app.command()(install)
    app.command()(uninstall)
    app.command()(mcp)

