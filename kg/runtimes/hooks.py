"""What the agent runtimes call: the brief an agent sees when a session starts, the reflection when it ends,
and the error log when a tool fails.

    from kg.runtimes import hooks
    brief = hooks.session_start_brief(ws, now="2026-06-01T09:00", message="fix the deploy script")
    print(brief["text"])

The brief's sections, their order, per-section limits and the character budget come from `rules/hooks.toml`.
Same graph, same `now`, same message, same budget: same brief. Deciding what goes in is pure (`fit`, in brief_fit.py,
`tool_failure`); the functions that take a workspace gather the data and write nothing, except
`session_end` and `post_tool_use` (and `session_start_brief(start_session=True)`, which names a session).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kg.core import clock
from kg.core.errors import UsageError
from kg.core.policy import RuleReader
from kg.core.text import clean
from kg.runtimes.brief_fit import MIN_MEMORY, Section, fit, short  # noqa: F401 - hooks.Section, hooks.fit stay

SECTIONS = ("pending_high", "verifications_due", "ready_to_promote", "proposals", "watch", "memory", "stats")
LIMITED = ("pending_high", "verifications_due", "ready_to_promote", "proposals", "watch")
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


# -- rules ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HookRules:
    budget: int
    memory_budget: int
    item_chars: int
    order: tuple[str, ...]
    high_priorities: tuple[str, ...]
    limits: dict[str, int]
    end_reflect: bool
    end_summary: bool
    busy_wait: float = 3.0  # seconds a session-start waits for a graph another process holds read-write
    end_lock_wait: float = 600.0  # seconds a detached session end waits for the graph
    inline_reflect_bytes: int = 262144  # a left end's transcript a start with no detached child reflects on

    @classmethod
    def from_mapping(cls, data: dict[str, Any], priorities: tuple[str, ...] = ()) -> HookRules:
        r = RuleReader(data, "rules/hooks.toml")
        order = r.strings("order", list(SECTIONS), allowed=SECTIONS)
        if len(set(order)) != len(order):
            raise r.fail("order", "lists a section twice; name each once")
        return cls(budget=r.whole("budget", 200, default=4000, int_only=True),
                   memory_budget=r.whole("memory_budget", 0, default=1500, int_only=True),
                   item_chars=r.whole("item_chars", 20, default=100, int_only=True),
                   order=order,
                   high_priorities=r.strings("high_priorities", ["critical", "high"], empty=False,
                                             allowed=priorities or None),
                   limits={name: r.whole(f"limits.{name}", 0, default=5, int_only=True) for name in LIMITED},
                   end_reflect=r.flag("session_end.reflect", True),
                   end_summary=r.flag("session_end.summary", True),
                   busy_wait=r.number("busy_wait_seconds", 0, 25, default=3.0),
                   end_lock_wait=r.number("session_end.lock_wait_seconds", 0, 86400, default=600.0),
                   inline_reflect_bytes=r.whole("session_end.inline_reflect_bytes", 0, default=262144,
                                                int_only=True))


def load_rules(ws: Any) -> HookRules:
    return HookRules.from_mapping(ws.rules.raw("hooks"), tuple(ws.policy.priorities))


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
                    hand_off: Any = None) -> tuple[str | None, bool]:
    """The session a start goes on with (made current), else a new one: `kg.memory.session_ids.which`. `st` None:
    another process holds the graph, so the start is journaled (`sessions.start_journaled`) and a session is
    taken as open while it is current or tied to its runtime session (an end unties it and stops it being
    current as it answers). On a team graph none is started then (None): its session numbers are every
    workspace's, which no file here knows, and a number given without the graph took another workspace's
    session (the drain merged the two: this workspace's logs in that one's summary, this end ending it). An
    earlier session whose handed-over end was left undone is finished first: `finish_left` (`hand_off`)."""
    from kg.memory import session_ids, sessions

    def live(sid: str | None) -> str | None:
        if not sid or st is None:
            return sid
        rows = st.run("memory_session_get", id=sid)
        return sid if rows and rows[0]["ended_at"] is None else None

    if st is not None:
        finish_left(ws, hand_off)  # an earlier session whose handed-over end died: ended once, not in this start
    current = ws.current_session()
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


def session_start_brief(ws: Any, now: datetime | str | None = None, message: str | None = None,
                        budget: int | None = None, *, start_session: bool = False,
                        source: str = "kg", write: bool = False, tools: bool = False,
                        transcript: str | None = None, key: str | None = None, hand_off: Any = None
                        ) -> dict[str, Any]:
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
    an earlier session's end left undone (`finish_left`).

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
    from kg.core.errors import DiskFull, StoreBusy
    from kg.runtimes.busy_brief import bounded_wait, busy_brief

    try:
        with bounded_wait(rules.busy_wait):
            return _brief(ws, rules, at, budget, message, start_session=start_session, source=source,
                          write=write, tools=tools, transcript=transcript, key=key, hand_off=hand_off)
    except (StoreBusy, DiskFull) as exc:  # a full disk: the journal's few bytes may still fit (else: its Error)
        session, started, dated = None, False, None
        if start_session:
            from kg.runtimes.transcript_start import began

            first = began(transcript)
            session, started = _ensure_session(ws, None, min(at, first) if first else at, source, key)
            dated = first if started and first and first < at else None
            if hand_off is not None:  # its child waits for the graph as a session end's does
                finish_left(ws, hand_off)
        note, busy = busy_brief(ws, at, budget, rules.busy_wait, tools=tools,
                                full=str(exc) if isinstance(exc, DiskFull) else None)
        if session:  # first: the agent's logs name it (a start is a write the agent was told happened)
            busy.insert(0, Section("stats", TITLES["stats"], lines=[
                f"- Session: {session}" + (f" ({started_when(dated)}; the graph makes it once it is free)"
                                           if started else "")]))
        text, shown, omitted = fit(f"# kaizen-kg brief — {at:%Y-%m-%d %H:%M}\n{note}", busy, budget)
        return {"now": at.isoformat(), "budget": budget, "chars": len(text), "text": text,
                "message": message or None, "session": session, "session_started": started, "sections": shown,
                "omitted": omitted, "memory": None, "file": None, "journal_pending": 0, "graph_busy": True}


def _brief(ws: Any, rules: HookRules, at: datetime, budget: int, message: str, *, start_session: bool,
           source: str, write: bool, tools: bool = False, transcript: str | None = None,
           key: str | None = None, hand_off: Any = None) -> dict[str, Any]:
    w = rules.item_chars
    more = MORE_TOOLS if tools else MORE
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
            session, started = _ensure_session(ws, st, min(at, first) if first else at, source, key, hand_off)
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
        watch = st.run("hooks_watch", statuses=list(LIVE), now=at, limit=max(lim["watch"], 1))
        watch_total = st.run("hooks_watch_count", statuses=list(LIVE), now=at)[0]["n"]
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
            lines=[f"- `{c['key']}` ({c['recurrence']}x, {c['sessions']} sessions): {short(c['summary'], w)}"
                   + (f" → {c['target']}" if c.get("target") else "")
                   for c in lc["ready_to_promote"][:lim["ready_to_promote"]]])
        props = [f"- #{q['number']} {q['type']}: {short(q['change'] or '', w)}"
                 + (f" → {q['target']}" if q.get("target") else "")
                 for q in lc["proposals_pending"][:lim["proposals"]]]
        if props:
            props.append(HOW[tools][0])
        sections["proposals"] = Section("proposals", TITLES["proposals"], total=lc["proposals_pending_total"],
                                        more=more["proposals"], lines=props)
        sections["watch"] = Section(
            "watch", TITLES["watch"], total=watch_total, more=more["watch"],
            lines=[f"- {short(c['text'], w)} ({c['target']}, next check {_iso_day(c['next_check'])})"
                   for c in watch[:lim["watch"]]])
        stats = [(f"- Entries: {counts['entries'] or 0} | Nodes: {counts['nodes'] or 0} | Edges: {edges} | "
                  f"Sessions: {sessions_n}")]
        if ws.pending:  # the read did not wait for every agent's backlog (write.reader_drain_seconds)
            stats.append(f"- {ws.pending} entr{'y' if ws.pending == 1 else 'ies'} logged moments ago "
                         "still being applied (not counted here yet)")
        from kg.ingest.import_mark import unfinished, unfinished_text

        left = unfinished(ws)
        if left:  # its entries are not counted above: only running it again loads them
            stats.append(f"- {unfinished_text(left)}")
        if session:
            stats.append(f"- Session: {session}" + (f" ({started_when(dated)})" if started else ""))
        stats.append(HOW[tools][1])
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


# -- the session end --------------------------------------------------------------------------------------------
def session_end(ws: Any, transcript_path: str | None = None, now: datetime | str | None = None, *,
                session: str | None = None, format: str | None = None, summary: str = "",
                write_summary: bool = True, stdin: Any = None, strict: bool = True,
                save_brief: bool = False, key: str | None = None) -> dict[str, Any]:
    """Reflect on the session's transcript and log what it finds (once: a transcript reflected on before adds
    nothing twice), then end the current kg session, writing memory/sessions/<id>.md. A transcript it cannot read
    (missing, not a file, not a transcript) is a note, and the summary is still written; `strict=False` (a
    runtime's hook) notes any other bad input to the reflection too. `save_brief` then rewrites
    the saved brief (memory/.hook-context.txt) when there is one: OpenClaw's next session starts from that copy,
    which would otherwise not hold what this session's end just logged. `key`: the runtime's own session ending,
    whose kg session is the one ended (`end_target`)."""
    from kg.reflect.apply import UnreadableTranscript, reflect_file

    rules = load_rules(ws)
    at = clock.now(now)
    sid = end_target(ws, None, key) if session is None else (session or None)  # "": none (`hand_over_end`)
    if write_summary:
        from kg.memory import sessions

        sessions.end_unfinished(ws, reflect_left)  # an earlier one whose handed-over end died (not this one's:
        # its lock lives)
    out: dict[str, Any] = {"now": at.isoformat(), "session": sid, "transcript": transcript_path,
                           "reflect": None, "summary_file": None, "notes": []}
    rep = None
    if transcript_path and rules.end_reflect:
        try:
            rep = reflect_file(ws, transcript_path, format=format, apply=True, session=sid, now=at, stdin=stdin,
                               end_session=write_summary and rules.end_summary)
        except UsageError as exc:
            if strict and not isinstance(exc, UnreadableTranscript):
                raise
            out["notes"].append(f"Error: could not reflect on {transcript_path}: {exc}")
    if rep is not None:
        out["reflect"] = {"session": rep.session, "format": rep.format, "turns": rep.turns,
                          "findings": len(rep.findings), "logged": rep.logged,
                          "already_logged": rep.already_logged, "read_from": rep.read_from}
        out["session"] = sid or rep.session
        out["summary_file"] = rep.summary_file  # reflect --apply writes the session summary itself
    elif not transcript_path:
        out["notes"].append("no transcript: nothing to reflect on")
    elif not rules.end_reflect:
        out["notes"].append("reflection is off (rules/hooks.toml [session_end] reflect)")
    if not write_summary:
        pass
    elif not rules.end_summary:
        out["notes"].append("session summary is off (rules/hooks.toml [session_end] summary)")
    elif sid:
        from kg.memory import sessions

        with ws.store() as st:
            rows = st.run("memory_session_get", id=sid)
        if rows and rows[0]["ended_at"] is None:
            ended = sessions.end(ws, summary, now=at, session=sid, at_least_start=True)
            out["summary_file"] = ended["file"]
        elif rows:  # ended: by the reflection just now (which wrote the summary), or before
            if not out["summary_file"]:
                out["notes"].append(f"session {sid} ended already")
        else:
            out["notes"].append(f"no kg session {sid}: no summary written (`kg session start` names one)")
        from kg.memory import session_ends

        session_ends.done(ws, sid)  # (a handed-over end: its record goes; a child that died before leaves it)
    elif not out["summary_file"] and rep is not None and _open(ws, rep.session):
        # a runtime session kg never saw: its failures went to the transcript's own session as they happened
        # (kg.runtimes.tool_failures), so a reflection that found them logged wrote no summary for it
        from kg.memory import sessions

        out["session"] = rep.session
        out["summary_file"] = sessions.end(ws, summary, now=at, session=rep.session, at_least_start=True)["file"]
    elif not out["summary_file"]:  # (the reflection may have written one, for the transcript's own session: a
        # runtime session kg never saw; the note then contradicted the file just written, QA1 #8)
        out["notes"].append("no current kg session: no summary written (`kg hook session-start "
                            "--start-session` or `kg session start` opens one)")
    if save_brief and (ws.memory / ".hook-context.txt").exists():
        out["brief_file"] = session_start_brief(ws, at, write=True)["file"]
    return out


def _open(ws: Any, sid: str | None) -> bool:
    """Whether kg session `sid` is in the graph and not ended."""
    if not sid:
        return False
    with ws.store() as st:
        rows = st.run("memory_session_get", id=sid)
    return bool(rows) and rows[0]["ended_at"] is None


def reflect_left(ws: Any, session: str, transcript: str, at: str | None) -> bool:
    """The reflection a handed-over end left undone (its child gave up on a busy graph, or died), done by the next
    start or end that holds the graph (`kg.memory.sessions.end_unfinished`): logged once, as the child would have
    (what it or the live hooks logged is known by call id and cursor), and the session ended with its summary.
    False when reflection is off: the session is then only ended."""
    from kg.reflect.apply import reflect_file

    rules = load_rules(ws)
    if not rules.end_reflect:
        return False
    reflect_file(ws, transcript, apply=True, session=session, now=at, end_session=rules.end_summary)
    return True


def finish_left(ws: Any, hand_off: Any = None) -> None:
    """Finish the ends handed to a detached child that did not finish them (`kg.memory.sessions.end_unfinished`),
    from a session start. Not in the start itself: a whole transcript's reflection there made the agent wait, or,
    past the runtime's hook timeout (30 s for Claude Code), killed the start with no brief, which freed the
    record's lock for the next start to try and be killed again. With `hand_off` (the console entry's detached
    child) the start only looks whether a record waits, and that child waits for the graph as a session end's
    does and reflects (a start that found the graph busy hands it off too). Without (a start the read server
    answers, a library call) only a transcript of `[session_end] inline_reflect_bytes` or less is reflected on
    here; a longer one is left to the next session end (a detached child) or a start that can hand it off."""
    from kg.memory import session_ends, sessions

    if hand_off is not None:
        if session_ends.left(ws):
            hand_off(lambda: (wait_longer(ws), sessions.end_unfinished(ws, reflect_left)))
        return
    limit = load_rules(ws).inline_reflect_bytes

    def small(record: dict[str, Any]) -> bool:
        path = record.get("transcript")
        try:
            return not isinstance(path, str) or not path or os.stat(path).st_size <= limit
        except (OSError, ValueError):
            return True  # gone or unreadable: ended at once from what was logged

    sessions.end_unfinished(ws, reflect_left, only=small)


def wait_longer(ws: Any) -> None:
    """In a session end's detached child: wait for the graph `[session_end] lock_wait_seconds`, not the 10 s a
    command the user or a runtime waits for gets. No runtime limits the child, and one that gave up on a graph a
    long `kg ingest` held lost the session's reflection until the next start."""
    ws.lock_wait = max(ws.lock_wait, load_rules(ws).end_lock_wait)
    ws.journal.timeout = max(ws.journal.timeout, ws.lock_wait)


def end_target(ws: Any, session: str | None, key: str | None) -> str | None:
    """The kg session a session end ends: `session` when named, else the one tied to the runtime's session `key`,
    else the current one unless it belongs to another runtime session (`kg.memory.session_ids.which`)."""
    if session:
        return session
    from kg.memory import session_ids

    current = ws.current_session()
    return session_ids.which(current, session_ids.key_of(ws, current), key, session_ids.tied(ws, key))


def hand_over_end(ws: Any, session: str | None, *, write_summary: bool = True, key: str | None = None,
                  now: datetime | str | None = None, transcript: str | None = None) -> str:
    """Before a runtime's session end is left to a detached child (the hook answers at once): the session that
    child is to end (`session`, else the current one), named now; and, when the child will end it, it stops
    being the current session now. The runtime does not wait for the child: Claude Code's /clear fires
    SessionEnd and the next SessionStart back to back, and a start that still found the old session current
    and open went on with it, which the late end then closed (everything after the /clear was logged with no
    session). Named late, a Codex Stop's findings could also land in a session started after the turn, and with
    no session current as the hook answered, the child ended the one a start opened meanwhile. "" when there is
    none: `session_end` then takes none, not the current one as it runs. The session is `end_target`'s (the one
    tied to the runtime's session `key`), and it stops being tied to it now too: a start of the same runtime
    session after this end (a /clear that keeps its id) opens a new one. The hand-over is recorded
    (`kg.memory.session_ends`, dated `now`, with the `transcript`): if the child dies before it ends the session,
    the next session start or end ends it."""
    sid = end_target(ws, session, key)
    if sid and write_summary and load_rules(ws).end_summary:
        from kg.memory import session_ends, session_ids

        session_ends.hand_over(ws, sid, clock.now(now).isoformat(), transcript)
        with ws.journal.locked():
            session_ids.untie(ws, sid)
        if ws.current_session() == sid:
            ws.set_current_session(None)  # (a child that fails leaves it open, no longer current: the next start
            # opens a new one, as it would after the end)
    return sid or ""


# -- tool failures: kg/runtimes/tool_failures.py ----------------------------------------------------------------
from kg.runtimes.tool_failures import ToolFailure, post_tool_use, tool_failure  # noqa: E402,F401
