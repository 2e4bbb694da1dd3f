"""What a runtime's session end does: reflect on the session's transcript and log what it finds, end the kg
session with its summary (`session_end`); the hand-over to a detached child, so the hook answers at once
(`hand_over_end`, `wait_longer`); and the ends such a child left unfinished, finished by the next start or end
(`reflect_left`, `finish_left`). All reachable as `kg.runtimes.hooks.session_end` and so on.

Apart from kg/runtimes/hooks.py, which builds the brief a session starts with: the end writes (the reflection's
entries, memory/sessions/<id>.md) and hands work across processes, where the brief is read-only and pure in
what it picks.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

from kg.core import clock
from kg.core.errors import UsageError
from kg.runtimes.hook_rules import load_rules


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
    if not sid and write_summary and _ended_before(ws, key):
        return {"now": at.isoformat(), "session": None, "transcript": transcript_path, "reflect": None,
                "summary_file": None, "notes": ["this runtime session's end was handed over already: its end "
                                                "reflects on the transcript and writes the summary"]}
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
                               end_session=write_summary and rules.end_summary,
                               summary_for=None if summary else sid)  # (its findings logged before: still summed)
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
        from kg.memory import session_ends, session_ids

        session_ends.done(ws, sid)  # (a handed-over end: its record goes; a child that died before leaves it)
        if key:
            with ws.journal.locked():
                session_ids.note_ended(ws, key)
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
    if write_summary and not sid and transcript_path and transcript_path != "-":
        from kg.memory import session_ends

        session_ends.done(ws, session_ends.unstarted(transcript_path))  # its record (`hand_over_end`), if held
    if save_brief and (ws.memory / ".hook-context.txt").exists():
        from kg.runtimes.hooks import session_start_brief  # (late: the brief's module re-exports this one)

        out["brief_file"] = session_start_brief(ws, at, write=True)["file"]
    return out


def _ended_before(ws: Any, key: str | None) -> bool:
    """A second end of one runtime session (OpenClaw fires command:new and then session:end for it; a late
    session:end): the first was handed over and untied it. While the first's child held the session's end record,
    the second found no session tied and reflected the transcript into a session named after it, whose summary
    took the findings, the real session then ended with an empty one (QA7 #2)."""
    from kg.memory import session_ids

    return session_ids.was_ended(ws, key)


def _open(ws: Any, sid: str | None) -> bool:
    """Whether kg session `sid` is in the graph and not ended."""
    if not sid:
        return False
    with ws.store() as st:
        rows = st.run("memory_session_get", id=sid)
    return bool(rows) and rows[0]["ended_at"] is None


def reflect_left(ws: Any, session: str | None, transcript: str, at: str | None) -> bool:
    """The reflection a handed-over end left undone (its child gave up on a busy graph, or died), done by the next
    start or end that holds the graph (`kg.memory.sessions.end_unfinished`): logged once, as the child would have
    (what it or the live hooks logged is known by call id and cursor), and the session ended with its summary.
    False when reflection is off: the session is then only ended. `session` None: an end with no kg session
    (`kg.memory.session_ends.unstarted`), reflected into the transcript's own session as its end would have."""
    from kg.reflect.apply import reflect_file

    rules = load_rules(ws)
    if not rules.end_reflect:
        return False
    reflect_file(ws, transcript, apply=True, session=session, now=at, end_session=rules.end_summary,
                 summary_for=session)  # what the child logged before it died is summed too
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
    the next session start or end ends it. The console entry wrote that record already for a runtime's
    SessionEnd (`kg.runtimes.early_end`: a hook killed at its timeout left none): it is rewritten as now known,
    or withdrawn when no end is handed over."""
    from kg.memory import session_ends

    sid = end_target(ws, session, key)
    rules = load_rules(ws)
    if not sid and write_summary and _ended_before(ws, key):  # its first end is the one that reflects
        session_ends.withdraw(ws, keep=None)
        return ""
    handing = bool(sid and write_summary and rules.end_summary)
    # no kg session to end (none was started: behind a team server that was down, QA2 #6): the reflection on the
    # transcript is still recorded, for the next start or end to do if the child cannot
    orphan = (session_ends.unstarted(transcript) if not sid and write_summary and rules.end_reflect and transcript
              and transcript != "-" else None)
    session_ends.withdraw(ws, keep=sid if handing else orphan)  # one the console entry wrote first, if not this
    if orphan:
        _recorded(ws, orphan, clock.now(now).isoformat(), transcript, no_session=True)
    if handing:
        from kg.memory import session_ids

        _recorded(ws, sid, clock.now(now).isoformat(), transcript)
        with ws.journal.locked():
            session_ids.untie(ws, sid, ended=True)
        if ws.current_session() == sid:
            ws.set_current_session(None)  # (a child that fails leaves it open, no longer current: the next start
            # opens a new one, as it would after the end)
    return sid or ""


def _recorded(ws: Any, sid: str, at: str, transcript: str | None, *, no_session: bool = False) -> None:
    """`session_ends.hand_over`, but a memory/.kg/ending linked out of memory/.kg (UnusableFile: kg writes no record
    through it, QA3 #4) is said on stderr and the end goes on without its record: a hook never fails its runtime
    for it (a child killed before it ends the session leaves it open, as before records were kept)."""
    import sys

    from kg.core.errors import UnusableFile
    from kg.memory import session_ends

    try:
        session_ends.hand_over(ws, sid, at, transcript, no_session=no_session)
    except UnusableFile as exc:
        try:
            sys.stderr.write(f"Warning: {exc}; this session end goes on without its record\n")
        except (OSError, ValueError):
            pass
