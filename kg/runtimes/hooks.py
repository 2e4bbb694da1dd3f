"""What the agent runtimes call: the brief an agent sees when a session starts, the reflection when it ends,
and the error log when a tool fails.

    from kg.runtimes import hooks
    brief = hooks.session_start_brief(ws, now="2026-06-01T09:00", message="fix the deploy script")
    print(brief["text"])

The brief's sections, their order, per-section limits and the character budget come from `rules/hooks.toml`.
Same graph, same `now`, same message, same budget: same brief. Deciding what goes in is pure (`fit`, in brief_fit.py,
`tool_failure`); the functions that take a workspace gather the data and write nothing, except
`session_end` and `post_tool_use` (and `session_start_brief(start_session=True)`, which names a session).

This module builds the brief; the session end is kg/runtimes/hook_end.py's, a failed tool call
kg/runtimes/tool_failures.py's, and rules/hooks.toml's reading (`HookRules`, which both ends need)
kg/runtimes/hook_rules.py's. Their names stay reachable here (`hooks.session_end`, `hooks.HookRules`, ...).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from kg.core import clock
from kg.core.errors import KgError, UsageError
from kg.core.text import clean, code_span
from kg.runtimes.brief_fit import MIN_MEMORY, Section, fit, short  # noqa: F401 - hooks.Section, hooks.fit stay
from kg.runtimes.hook_rules import LIMITED, SECTIONS, HookRules, load_rules  # noqa: F401 - hooks.HookRules stays

TITLES = {
    "pending_high": "⚠️ Pending High-Priority Items",
    "verifications_due": "🔍 Verifications Due",
    "ready_to_promote": "🚀 Patterns Ready for Promotion",
    "proposals": "📝 Proposals Waiting for the User",
    "watch": "👀 Watch List (rules under verification: follow them)",
    "stats": "📊 Stats",
}
MORE = {
    "pending_high": "kg list --status pending --priority high",
    "verifications_due": "kg verify --dry-run",
    "ready_to_promote": "kg cycle --dry-run",
    "proposals": "kg propose",
    "watch": "kg verify --dry-run",
}
MORE_TOOLS = {**dict.fromkeys(MORE, "status"), "proposals": "propose"}  # over MCP (`tools=True`): its tools
HOW = {
    False: ('- Show these to the user. On "approve N" run `kg approve N`; on "skip N" run `kg skip N --reason "..."`.',
            '- Log what goes wrong or what the user corrects: `kg log error|learning|feature "..."`'),
    True: ('- Show these to the user. On "approve N" call `approve` with N; on "skip N" call `skip` with N and '
           "their reason.",
           "- Log what goes wrong or what the user corrects: call `log` (kind error, learning or feature)"),
}
LIVE = ("applied", "confirmed")


# -- the session-start brief ------------------------------------------------------------------------------------
FOLD_WINDOW = 4  # the pending items read to fold alike ones: this many times the section's limit


def fold_alike(rows: list[dict[str, Any]], width: int) -> list[tuple[dict[str, Any], int]]:
    """Rows whose text reads the same once cut to `width`, as (the newest of them, how many), newest first. Pure."""
    out: list[tuple[dict[str, Any], int]] = []
    where: dict[tuple[str, str], int] = {}
    for row in rows:
        key = (short(row["text"], width), row["priority"])
        if key in where:
            first, n = out[where[key]]
            out[where[key]] = (first, n + 1)
        else:
            where[key] = len(out)
            out.append((row, 1))
    return out


def started_when(dated: datetime | None) -> str:
    """How the brief says a session was just started: now, or dated when its replayed transcript began (it said
    "started now" beside a session numbered for 2025-09-03, QA1 #9)."""
    return "started now" if dated is None else f"started, dated {dated:%Y-%m-%d %H:%M} when its transcript began"


def _iso_day(value: Any) -> str:
    if isinstance(value, datetime):
        return f"{value:%Y-%m-%d}"
    return str(value or "")[:10]


def _ensure_session(ws: Any, st: Any | None, at: datetime, source: str, key: str | None,
                    hand_off: Any = None, thread: tuple[str, str | None] | None = None) -> tuple[str | None, bool]:
    """The session a start goes on with (made current), else a new one: `kg.memory.session_ids.which`. `st` None:
    another process holds the graph, so the start is journaled (`sessions.start_journaled`) and a session is
    taken as open while it is current or tied to its runtime session (an end unties it and stops it being
    current as it answers). On a team graph none is started then (None): its session numbers are every
    workspace's, which no file here knows, and a number given without the graph took another workspace's
    session (the drain merged the two: this workspace's logs in that one's summary, this end ending it). An
    earlier session whose handed-over end was left undone is finished first: `finish_left` (`hand_off`); so is
    the session of the runtime session that came before `key` on the same conversation (`thread`: its key and
    this session's transcript), which the runtime ended without saying so (`end_earlier`). A session whose end
    is recorded (`kg.memory.session_ends`) is never gone on with: an end that died before it untied the session
    left it tied and current, and the sweep is to end it. A late start of a runtime session its conversation has
    moved on from (`session_ids.left_behind`) ends and starts nothing: it goes on with the current session."""
    from kg.memory import session_ends, session_ids, sessions

    def live(sid: str | None) -> str | None:
        if sid and (ws.kg_dir / session_ends.DIR / f"{sid}.json").exists():
            return None  # its end is recorded (one that died before untying it: the sweep ends it)
        if not sid or st is None:
            return sid
        rows = st.run("memory_session_get", id=sid)
        return sid if rows and rows[0]["ended_at"] is None else None

    late = thread is not None and bool(key) and end_earlier(ws, thread[0], key, thread[1], at)
    if st is not None:
        finish_left(ws, hand_off)  # an earlier session whose handed-over end died: ended once, not in this start
    current = ws.current_session()
    if late:  # its conversation has moved on (`session_ids.left_behind`): the session that runs now, untouched
        return live(current), False
    going_on = session_ids.which(live(current), session_ids.key_of(ws, current), key,
                                 live(session_ids.tied(ws, key)))
    if going_on:
        if going_on != current:
            ws.set_current_session(going_on)
        return going_on, False
    if st is None:
        if ws.store_url is not None:
            return None, False
        return sessions.start_journaled(ws, at, source=source, key=key)["id"], True
    return sessions.start(ws, at, source=source, key=key)["id"], True


def end_earlier(ws: Any, thread: str, key: str, transcript: str | None, at: datetime) -> bool:
    """Runtime session `key` starts on conversation `thread` (OpenClaw's sessionKey): the kg session of the
    runtime session before it there, if still open, is ended as its end would have: recorded for the next sweep
    (`kg.memory.session_ends.leave`: the reflection on its transcript and its summary, in a detached child where
    the start can hand it off), untied and no longer current now. OpenClaw starts a new sessionId after its daily
    reset (04:00) or an idle expiry with no event to say the last one ended (session:end is only planned), so
    that session was never reflected on nor ended (QA1 #2). True when this start is a late one
    (`session_ids.left_behind`, asked under the journal's lock, where the next session's start notes its move):
    nothing is ended, and the caller starts nothing."""
    from kg.memory import session_ends, session_ids

    data = session_ids.load(ws)
    if data["threads"].get(thread) == [key, transcript or ""] and key in data["runtime"]:
        return False  # the same runtime session's next run (every agent run bootstraps): no lock taken
    with ws.journal.locked():
        if session_ids.left_behind(ws, thread, key):
            return True
        # the end recorded and the session untied before the conversation is noted as moved on: a start killed in
        # between (handler.js gives up on a first brief after 10 s) left the session open for good, the next start
        # finding the conversation's latest already this one
        sid, earlier = session_ids.follow(ws, thread, key, transcript, noted=False)
        if sid:
            session_ends.leave(ws, sid, at.isoformat(), _archived(earlier))
            session_ids.untie(ws, sid, ended=True)
        session_ids.follow(ws, thread, key, transcript)
    if sid and ws.current_session() == sid:
        ws.set_current_session(None)
    return False


def _archived(path: str | None) -> str | None:
    """A transcript OpenClaw may have moved aside since it was named: `<file>.reset.<time>` (the newest) when
    `<file>` is gone (the handler looks for it the same way), else the path as it was."""
    if not path or Path(path).exists():
        return path
    try:
        found = sorted(Path(path).parent.glob(Path(path).name + ".reset.*"))
    except (OSError, ValueError):
        return path
    return str(found[-1]) if found else path


def session_start_brief(ws: Any, now: datetime | str | None = None, message: str | None = None,
                        budget: int | None = None, *, start_session: bool = False,
                        source: str = "kg", write: bool = False, tools: bool = False,
                        transcript: str | None = None, key: str | None = None, hand_off: Any = None,
                        thread: tuple[str, str | None] | None = None) -> dict[str, Any]:
    """The brief for a new session: pending high-priority items, verifications due, patterns ready for
    promotion, proposals waiting, the watch list, the memory injected for the first message and stats, in the
    order and within the budget of `rules/hooks.toml`.

    `start_session` makes sure a kg session is open (starting one unless the current one is still open) so
    that later logs and the session end land in it; with a new session's `transcript` already holding timed
    lines (replayed), the session is dated when it began (`kg/runtimes/transcript_start.py`). `write` also
    saves the text to memory/.hook-context.txt (the seed's file, which agents are told to read). `tools`: for
    an MCP client, naming its tools where the brief would name `kg` commands. `key`: the runtime's own session
    (`kg.memory.session_ids.runtime_key`), which the session started is tied to. `hand_off(work)`: runs `work`
    in a detached child after the answer (`kg.cli.common.after_answer`), where the start leaves the reflection
    an earlier session's end left undone (`finish_left`). `thread`: the runtime's conversation the session starts
    on and this runtime session's transcript (OpenClaw's sessionKey): a start there ends the session of the runtime
    session before on it (`end_earlier`).

    When another process holds the graph past `busy_wait_seconds` (the last session end's reflection), the brief
    is read from files, and a session to start is journaled like a log: it is current at once and named in the
    brief, and the next drain makes it, so the logs that follow are never left without a session."""
    rules = load_rules(ws)
    at = clock.now(now)
    budget = rules.budget if budget is None else budget
    if budget < 200:
        raise UsageError("--budget must be at least 200 characters")
    # redacted first: the message is echoed in the answer (`message`) and read for the memory block's topic
    message = ws.rules.redactor.redact(clean(message or "", one_line=True)).text
    from kg.core.errors import DiskFull, StoreBusy, TeamGraphUnreachable
    from kg.runtimes.busy_brief import bounded_wait, busy_brief

    try:
        with bounded_wait(rules.busy_wait):
            return _brief(ws, rules, at, budget, message, start_session=start_session, source=source,
                          write=write, tools=tools, transcript=transcript, key=key, hand_off=hand_off,
                          thread=thread)
    except (StoreBusy, DiskFull) as exc:  # a full disk: the journal's few bytes may still fit (else: its Error)
        session, started, dated = None, False, None
        if start_session:
            from kg.runtimes.transcript_start import began

            first = began(transcript)
            session, started = _ensure_session(ws, None, min(at, first) if first else at, source, key,
                                               thread=thread)
            dated = first if started and first and first < at else None
            if hand_off is not None:  # its child waits for the graph as a session end's does
                finish_left(ws, hand_off)
        # what waits in the journal, counted (QA2 #3: a hard-coded 0 while 3 logs waited behind a server down)
        waiting = ws.journal.pending_count(entries=True)
        away = isinstance(exc, TeamGraphUnreachable)  # no process holds it: the server is away, said as such
        note, busy = busy_brief(ws, at, budget, rules.busy_wait, tools=tools,
                                full=str(exc) if isinstance(exc, DiskFull) else None,
                                away=str(exc) if away else None, waiting=waiting)
        if session:  # first: the agent's logs name it (a start is a write the agent was told happened)
            busy.insert(0, Section("stats", TITLES["stats"], lines=[
                f"- Session: {session}" + (f" ({started_when(dated)}; the graph makes it once it is free)"
                                           if started else "")]))
        text, shown, omitted = fit(f"# kaizen-kg brief — {at:%Y-%m-%d %H:%M}\n{note}", busy, budget)
        return {"now": at.isoformat(), "budget": budget, "chars": len(text), "text": text,
                "message": message or None, "session": session, "session_started": started, "sections": shown,
                "omitted": omitted, "memory": None, "file": None, "journal_pending": waiting, "graph_busy": not away,
                "graph_unreachable": away}


def kg_command(ws: Any) -> str:
    """How the brief names kg for the agent to run: `kg` when that is this kg on PATH, else this kg's full path and
    the workspace, as `kg install` writes the hooks (QA7 #2: a brief told the agent to run a bare `kg`, and every
    command it named failed with "command not found" where kg was installed in a virtualenv off PATH)."""
    import shlex
    import shutil

    from kg.runtimes.schedule import kg_executable

    try:
        mine = kg_executable()
    except KgError:
        return "kg"
    found = shutil.which("kg")
    if found:
        try:
            if Path(found).resolve() == mine.resolve():
                return "kg"
        except OSError:
            pass
    return f"{shlex.quote(str(mine))} -w {shlex.quote(str(ws.root))}"


def _named(text: str, kg: str) -> str:
    """`text` with kg named as `kg`: a MORE entry is a command, a HOW line names commands in backquotes."""
    if kg == "kg":
        return text
    return kg + text[2:] if text.startswith("kg ") else text.replace("`kg ", f"`{kg} ")


def _backlog(ws: Any, width: int, kg: str) -> str:
    """The brief's line for the entries its read left in the journal: logged moments ago, or, when the last drain
    failed (memory/.kg/apply-failed.json, kg/ingest/drain.py), waiting because applying them fails, as `kg status`
    says it. (QA: every apply failed on a full buffer pool, and the brief said they were logged moments ago.)"""
    from kg.ingest.drain import last_failure

    n, failed = ws.pending, last_failure(ws)
    if failed is None:
        return f"- {n} entr{'y' if n == 1 else 'ies'} logged moments ago still being applied (not counted here yet)"
    return (f"- {n} entr{'y' if n == 1 else 'ies'} wait in the journal, not applied: the last try failed at "
            f"{failed['at']}: {short(failed['error'], width)} ({_named('`kg doctor`', kg)} says more)")


def _scoped(ws: Any, st: Any) -> dict[str, Any]:
    """The watch list's targets kept to the workspace that made them, on a team graph (its store names this
    member: `origin`): a USER.md preference is rendered only there, so only there is it a rule to follow."""
    if getattr(st, "origin", None) is None:
        return {}
    from kg.lifecycle.policy import load as load_policy

    return {"workspace_kinds": sorted(k for k, t in load_policy(ws).targets.items() if t.scope == "workspace")}


def _brief(ws: Any, rules: HookRules, at: datetime, budget: int, message: str, *, start_session: bool,
           source: str, write: bool, tools: bool = False, transcript: str | None = None,
           key: str | None = None, hand_off: Any = None, thread: tuple[str, str | None] | None = None
           ) -> dict[str, Any]:
    w = rules.item_chars
    kg = "kg" if tools else kg_command(ws)
    more = MORE_TOOLS if tools else {name: _named(command, kg) for name, command in MORE.items()}
    lim = rules.limits
    session: str | None = None
    started = False
    dated: datetime | None = None  # a session started dated when its transcript began, not now
    # One graph handle for the whole call (nested calls share it), not `with ws:`: that marks repeated use, for
    # which memory search first reads every node into a cache (~0.9 s at 100k nodes), a loss for one brief.
    # Read-only (a smaller, cheaper open) unless a session is to be started.
    with (ws.store() if start_session else ws.reading()) as st:
        if start_session:
            from kg.runtimes.transcript_start import began

            first = began(transcript)
            session, started = _ensure_session(ws, st, min(at, first) if first else at, source, key, hand_off,
                                               thread)
            if started:
                dated = first if first and first < at else None
        else:
            session = ws.current_session()
        highs = list(rules.high_priorities)
        # a window past the limit, so that entries with the same text (one failed edit retried seven times)
        # take one line between them and leave room for the others
        newest = st.run("hooks_pending_high_ids", priorities=highs,
                        limit=max(lim["pending_high"], 1) * FOLD_WINDOW)
        from kg.store.sideindex import current_rows

        kept = current_rows(st, [r["id"] for r in newest])  # (issue 17) no lookup by key when the side index holds them
        window = [row for r in newest for row in ([{k: kept[r["id"]][k] for k in ("id", "text", "priority")}]
                                                  if r["id"] in kept else st.run("hooks_item", id=r["id"]))]
        pending = fold_alike(window, w)
        shown_keys = {(short(r["text"], w), r["priority"]) for r, _ in pending[:lim["pending_high"]]}
        shown_ids = [r["id"] for r in window if (short(r["text"], w), r["priority"]) in shown_keys]
        pending_total = st.run("hooks_pending_high_count", priorities=highs)[0]["n"]
        scoped = _scoped(ws, st)
        watch = st.run("hooks_watch", statuses=list(LIVE), now=at, limit=max(lim["watch"], 1), **scoped)
        watch_total = st.run("hooks_watch_count", statuses=list(LIVE), now=at, **scoped)[0]["n"]
        counts = st.run("hooks_counts")[0]
        edges = st.run("hooks_edge_count")[0]["n"]
        sessions_n = st.run("count_sessions")[0]["n"]
        from kg.lifecycle.api import lifecycle_status

        lc = lifecycle_status(ws, at, limit=max(lim["verifications_due"], lim["ready_to_promote"],
                                                 lim["proposals"], 1), ready_limit=lim["ready_to_promote"])

        sections: dict[str, Section] = {}
        sections["pending_high"] = Section(
            "pending_high", TITLES["pending_high"], total=pending_total, more=more["pending_high"],
            lines=[f"- [{r['id']}] {short(r['text'], w)}" + (f" ({r['priority']})" if r["priority"] != "high"
                                                             else "") + (f" (×{n})" if n > 1 else "")
                   for r, n in pending[:lim["pending_high"]]],
            weights=[n for _, n in pending[:lim["pending_high"]]])
        sections["verifications_due"] = Section(
            "verifications_due", TITLES["verifications_due"], total=lc["verifications_due_total"],
            more=more["verifications_due"],
            lines=[f"- [{v['change']}] {short(v['text'], w)} — due {_iso_day(v['due'])}"
                   + (f", overdue: {v['overdue']}" if v.get("overdue") not in (None, "none", "due") else "")
                   for v in lc["verifications_due"][:lim["verifications_due"]]])
        sections["ready_to_promote"] = Section(
            "ready_to_promote", TITLES["ready_to_promote"], total=lc["ready_to_promote_total"],
            more=more["ready_to_promote"],
            lines=[f"- {code_span(c['key'])} ({c['recurrence']}x, {c['sessions']} sessions): {short(c['summary'], w)}"
                   + (f" → {c['target']}" if c.get("target") else "")
                   for c in lc["ready_to_promote"][:lim["ready_to_promote"]]])
        props = [f"- #{q['number']} {q['type']}: {short(q['change'] or '', w)}"
                 + (f" → {q['target']}" if q.get("target") else "")
                 for q in lc["proposals_pending"][:lim["proposals"]]]
        if props:
            props.append(_named(HOW[tools][0], kg))
        sections["proposals"] = Section("proposals", TITLES["proposals"], total=lc["proposals_pending_total"],
                                        more=more["proposals"], lines=props)
        sections["watch"] = Section(
            "watch", TITLES["watch"], total=watch_total, more=more["watch"],
            lines=[f"- {short(c['text'], w)} ({c['target']}, next check {_iso_day(c['next_check'])})"
                   for c in watch[:lim["watch"]]])
        stats = [(f"- Entries: {counts['entries'] or 0} | Nodes: {counts['nodes'] or 0} | Edges: {edges} | "
                  f"Sessions: {sessions_n}")]
        if ws.pending:  # the read did not wait for every agent's backlog (write.reader_drain_seconds)
            stats.append(_backlog(ws, w, kg))
        from kg.ingest.import_mark import unfinished, unfinished_text

        left = unfinished(ws)
        if left:  # its entries are not counted above: only running it again loads them
            stats.append(f"- {unfinished_text(left)}")
        if session:
            stats.append(f"- Session: {session}" + (f" ({started_when(dated)})" if started else ""))
        stats.append(_named(HOW[tools][1], kg))
        sections["stats"] = Section("stats", TITLES["stats"], lines=stats)
        memory: dict[str, Any] = {}

        def render_memory(free: int) -> str:
            from kg.memory.inject import inject

            result = inject(ws, message, budget=min(rules.memory_budget, free), now=at,
                            elsewhere=shown_ids)  # every entry a pending line stands for (its ×N too)
            memory.update(topic=result["topic"], items=len(result["items"]), dropped=result["dropped"],
                          warnings=result["warnings"])
            return result["block"]

        if message and rules.memory_budget >= MIN_MEMORY:
            sections["memory"] = Section("memory", render=render_memory)
        head = f"# kaizen-kg brief — {at:%Y-%m-%d %H:%M}"
        text, shown, omitted = fit(head, [sections[name] for name in rules.order if name in sections], budget)
    written = None
    if write:
        from kg.ingest.journal import write_atomic

        path = ws.memory / ".hook-context.txt"
        write_atomic(path, (text + "\n").encode("utf-8"))
        written = str(path.relative_to(ws.root))
    return {
        "now": at.isoformat(), "budget": budget, "chars": len(text), "text": text, "message": message or None,
        "session": session, "session_started": started, "sections": shown, "omitted": omitted,
        "memory": memory or None, "file": written, "journal_pending": ws.pending,
        "counts": {"pending_high": pending_total, "verifications_due": lc["verifications_due_total"],
                   "ready_to_promote": lc["ready_to_promote_total"],
                   "proposals": lc["proposals_pending_total"], "watch": watch_total},
    }


def claude_context(brief: dict[str, Any], event: str = "SessionStart") -> dict[str, Any]:
    """Claude Code's (and Codex's) hook output: the brief as additional context for the session."""
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": brief["text"]}}


# -- the session end: kg/runtimes/hook_end.py ------------------------------------------------------------------
from kg.runtimes.hook_end import (  # noqa: E402,F401 - hooks.session_end and the rest stay
    _open,
    end_target,
    finish_left,
    hand_over_end,
    reflect_left,
    session_end,
    wait_longer,
)

# -- tool failures: kg/runtimes/tool_failures.py ----------------------------------------------------------------
from kg.runtimes.tool_failures import ToolFailure, post_tool_use, tool_failure  # noqa: E402,F401
