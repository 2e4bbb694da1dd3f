"""L1, sessions: `kg session start` names a session and makes it the default for later logs; `kg session end`
writes `memory/sessions/YYYY-MM-DD-NNN.md` in the seed's format from that session's events plus the text
given, appends the summary to the daily log and closes the Session node."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from kg.core import clock, paths
from kg.core.errors import KgError, NotFound, StoreBusy, UsageError
from kg.core.files import check_target, make_folder, write_atomic
from kg.core.text import clean
from kg.memory import logs as files
from kg.memory import session_ids
from kg.memory._common import iso

_ID = re.compile(r"^(\d{4}-\d{2}-\d{2})-(\d{3,})$")
SECTIONS = ("Tasks Completed", "Learnings", "Skills Generated", "User Feedback", "Open Items")
NONE_LINE = "- (none)"


def file_name(sid: str) -> str:
    """A session summary's file name: portable (no ':', which Windows and some sync tools refuse). Pure."""
    return sid.replace(":", "-") + ".md"


def file_of(ws: Any, sid: str) -> Path:
    """Where session `sid`'s summary is: the file an older kg named `<sid>.md` when it exists, else the portable
    name."""
    old = ws.memory / "sessions" / f"{sid}.md"
    return old if ":" in sid and old.exists() else ws.memory / "sessions" / file_name(sid)


_AIDER = re.compile(r"^(\d{4}-\d{2}-\d{2})-(\d{2})[:-](\d{2})[:-](\d{2})$")


def same_session(sid: str) -> list[str]:
    """The forms one session id may have in a graph, `sid` first: an aider chat's id is its start time with colons
    as dashes (`2025-06-02-14-29-21`), but a graph an older kg wrote holds it with colons (`2025-06-02-14:29:21`),
    while the summary file's name never had them. Pure."""
    m = _AIDER.match(sid)
    if not m:
        return [sid]
    day, h, mi, sec = m.groups()
    forms = [f"{day}-{h}-{mi}-{sec}", f"{day}-{h}:{mi}:{sec}"]
    return [sid] + [f for f in forms if f != sid]


def next_id(day: str, existing: list[str]) -> str:
    """`YYYY-MM-DD-NNN`: one more than the highest number of that day. Pure."""
    numbers = [int(m.group(2)) for e in existing if (m := _ID.match(e)) and m.group(1) == day]
    return f"{day}-{max(numbers, default=0) + 1:03d}"


def _known(ws: Any, day: str) -> list[str]:
    """The session ids of `day` that need no graph to know: summary files, the current session, the sessions
    whose end is handed over (`kg.memory.session_ends`: no longer current, no summary file yet; one started by
    kg before sessions.json is noted nowhere else), and the highest number a start noted (`kg.memory.session_ids`)."""
    from kg.memory.session_ends import DIR

    known = [p.stem for p in (ws.memory / "sessions").glob(f"{day}-*.md")]
    known += [p.stem for p in (ws.kg_dir / DIR).glob(f"{day}-*.json")]
    known += [s for s in [ws.current_session()] if s]
    highest = session_ids.highest(ws, day)
    return known + ([f"{day}-{highest:03d}"] if highest else [])


def _number(sid: str) -> tuple[str, int]:
    m = _ID.match(sid)
    assert m, sid
    return m.group(1), int(m.group(2))


def start(ws: Any, now: datetime | str | None = None, *, source: str = "kg", key: str | None = None
          ) -> dict[str, Any]:
    """Open a new session and make it the current one. `key`: the runtime session it is started for
    (`kg.memory.session_ids.runtime_key`), whose end then ends this one."""
    at = clock.now(now)
    day = f"{at:%Y-%m-%d}"
    with ws.store() as st, ws.journal.locked():
        known = [r["id"] for r in st.run("memory_sessions_on_day", day=day)] + _known(ws, day)
        sid = next_id(day, known)
        previous = ws.current_session()
        rows = st.run("memory_session_get", id=previous) if previous else []
        session_ids.note(ws, sid, key, _number(sid))  # (before the write: a crash between leaves a gap, never a twin)
        st.run("memory_session_start", id=sid, at=at, source=source)
    ws.set_current_session(sid)
    # a session started over an open one is left without its summary unless someone ends it: say so
    return {"id": sid, "started_at": at.isoformat(), "previous": previous,
            "previous_open": bool(rows) and rows[0]["ended_at"] is None}


def start_or_journal(ws: Any, now: datetime | str | None = None, *, source: str = "kg") -> dict[str, Any]:
    """`start`, or when another process holds the embedded graph past the retry budget, `start_journaled` (as
    `kg log` journals an entry and the session-start hook a start): `kg session start` from 16 agents at once
    exited 1 for those that waited longest. A busy team graph is still said (its numbers are every workspace's)."""
    from kg.core.errors import StoreBusy

    try:
        return start(ws, now, source=source)
    except StoreBusy:
        if ws.store_url is not None:
            raise
    previous = ws.current_session()
    return {**start_journaled(ws, now, source=source), "previous": previous, "previous_open": False}


def start_journaled(ws: Any, now: datetime | str | None = None, *, source: str = "kg", key: str | None = None
                    ) -> dict[str, Any]:
    """Open a new session without the graph (another process holds it: the last session end's reflection), as
    `kg log` does an entry: its id is decided now and it is the current session at once, so the logs that follow
    name it; the journal keeps the start (`{"op": "session"}`) and the next drain creates it, before those logs.
    Its number is one past every number known without the graph (`_known`): every start notes the number it
    gives out."""
    at = clock.now(now)
    day = f"{at:%Y-%m-%d}"
    with ws.journal.locked():
        sid = next_id(day, _known(ws, day))
        session_ids.note(ws, sid, key, _number(sid))
        ws.journal.append([{"op": "session", "id": sid, "at": at.isoformat(), "source": source}])
    ws.set_current_session(sid)
    return {"id": sid, "started_at": at.isoformat(), "journaled": True}


@dataclass
class Summary:
    """The five sections of the seed's session summary. Pure data."""

    session: str
    tasks: list[str] = field(default_factory=list)
    learnings: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)
    open_items: list[str] = field(default_factory=list)

    def sections(self) -> list[tuple[str, list[str]]]:
        return list(zip(SECTIONS, (self.tasks, self.learnings, self.skills, self.feedback, self.open_items),
                        strict=True))


def classify(session: str, nodes: list[dict[str, Any]], skills: list[dict[str, Any]],
             prefs: list[dict[str, Any]], *, summary: str = "", tasks: list[str] = (), learnings: list[str] = (),
             feedback: list[str] = (), open_items: list[str] = ()) -> Summary:
    """Sort a session's events into the summary sections. Pure.

    Tasks: the text given, then entries logged as tasks. Learnings: learnings, resolved errors, lessons and
    principles. User feedback: corrections, preferences, user-sourced entries and feature requests, and
    preference changes. Open items: errors and feature requests still pending, then the text given.
    """
    out = Summary(session, tasks=[t for t in ([summary] if summary else []) + list(tasks) if t],
                  learnings=list(learnings), feedback=list(feedback))
    open_tail = list(open_items)
    for n in nodes:
        text, ref = n["text"], f" [{n['id']}]"
        kind, etype, cat, status = n.get("kind"), n.get("entry_type"), n.get("category"), n.get("status")
        if etype == "learning" and cat == "task":
            out.tasks.append(text + ref)
        elif etype == "learning" and (cat in ("correction", "preference") or n.get("source") == "user_feedback"):
            out.feedback.append(f"{cat or 'feedback'}: {text}{ref}")
        elif etype == "feature":
            (out.open_items if status in ("pending", "in_progress") else out.feedback).append(
                f"feature request: {text}{ref}")
        elif etype == "error":
            if status in ("pending", "in_progress"):
                out.open_items.append(f"error ({n.get('priority') or 'medium'}): {text}{ref}")
            else:
                out.learnings.append(f"error {status}: {text}{ref}")
        elif etype == "learning" or kind in ("lesson", "principle", "knowledge"):
            out.learnings.append(text + ref)
        elif kind == "pattern":
            out.learnings.append(f"pattern: {text}{ref}")
    out.skills = [f"memory/skills/{s['slug']}.md ({'new' if s.get('revisions', 1) <= 1 else 'updated'})"
                  for s in skills]
    out.feedback += [f"preference {p['key']} "
                     f"{'removed' if p['action'] in ('unset', 'hand-unset') else '= ' + p['value']}"
                     for p in prefs]
    out.open_items += open_tail
    out.tasks, out.learnings, out.feedback, out.open_items = (
        fold(out.tasks), fold(out.learnings), fold(out.feedback), fold(out.open_items))
    return out


_REF = re.compile(r"^(.*) \[([^\[\]]+)\]$")


def fold(items: list[str]) -> list[str]:
    """One line per distinct item: entries with the same text (an aider session's seven identical "SEARCH/REPLACE
    block failed to match" errors) become one line naming every id and how many, where the first stood. Pure."""
    out: list[str] = []
    where: dict[str, int] = {}
    refs: dict[str, list[str]] = {}
    for item in items:
        m = _REF.match(item)
        if not m:
            out.append(item)
            continue
        text, ref = m.group(1), m.group(2)
        if text in where:
            refs[text].append(ref)
            continue
        where[text], refs[text] = len(out), [ref]
        out.append(item)
    for text, i in where.items():
        if len(refs[text]) > 1:
            out[i] = f"{text} [{', '.join(refs[text])}] ({len(refs[text])}×)"
    return out


def render(summary: Summary, generated: datetime) -> str:
    """The seed's template: `# Session Summary: ID` and the five sections, `- (none)` when empty."""
    lines = [f"# Session Summary: {summary.session}", "", f"Generated: {generated:%Y-%m-%d %H:%M}", ""]
    for title, items in summary.sections():
        lines.append(f"## {title}")
        lines += [f"- {clean(i, one_line=True)}" for i in items] or [NONE_LINE]
        lines.append("")
    return "\n".join(lines)


def end(ws: Any, summary: str = "", now: datetime | str | None = None, *, session: str | None = None,
        tasks: list[str] | None = None, learnings: list[str] | None = None, feedback: list[str] | None = None,
        open_items: list[str] | None = None, at_least_start: bool = False) -> dict[str, Any]:
    """End the session: its summary file, its end in the graph, the summary in the daily log. A time before the
    session's start is refused, nothing written (a QA pass: `--now 06:00` ended a session begun at 07:00 with a
    summary "Generated: 06:00"); `at_least_start`, for the ends kg makes itself from a runtime's or a transcript's
    clock (a hook, a reflection, a handed-over end), dates such an end at the start instead: the summary is
    still written."""
    at = clock.now(now)
    red = ws.rules.redactor  # the gate, before anything is cleaned
    sid = session_ids.given(session, red) if session else ws.current_session()
    if not sid:
        raise UsageError("no session to end: run `kg session start` first, or name one with --session")
    paths.check_name(sid, "session id")
    texts = {"summary": clean(red.redact(summary or "").text, one_line=True)}
    lists = {"tasks": tasks or [], "learnings": learnings or [], "feedback": feedback or [],
             "open_items": open_items or []}
    lists = {k: [clean(red.redact(v).text, one_line=True) for v in vs if clean(v, one_line=True)]
             for k, vs in lists.items()}
    path = file_of(ws, sid)
    check_target(path, root=ws.root)  # memory/sessions may itself be a link out
    with ws.store() as st:
        rows = []
        for form in same_session(sid):
            rows = st.run("memory_session_get", id=form)
            if rows:
                break
        if not rows:
            raise NotFound(f"no session {sid!r}: `kg session start` makes one")
        if form != sid:  # the form the graph holds (and its summary file's name, when an older kg wrote it)
            sid, path = form, file_of(ws, form)
            check_target(path, root=ws.root)
        if rows[0]["ended_at"] is not None and path.exists():
            raise UsageError(f"session {sid} ended already at {iso(rows[0]['ended_at'])} ({path.name}); "
                             "start a new one with `kg session start`")
        began = rows[0]["started_at"]
        if began is not None and at < began:
            if not at_least_start:
                raise UsageError(f"session {sid} began at {began:%Y-%m-%d %H:%M:%S}, after the end time given "
                                 f"({at:%Y-%m-%d %H:%M:%S}): it cannot end before it began; pass a later --now "
                                 "(or KG_NOW)")
            at = began
        nodes = st.run("memory_session_nodes", id=sid)
        skills = st.run("memory_session_skills", id=sid)
        prefs = st.run("memory_session_prefs", id=sid)
        result = classify(sid, nodes, skills, prefs, summary=texts["summary"], **lists)
        make_folder(path.parent, root=ws.root)
        write_atomic(path, render(result, at).encode("utf-8"))
        st.run("memory_session_end", id=sid, at=at, summary=texts["summary"] or None)
    with ws.journal.locked():
        session_ids.untie(ws, sid)  # ended: a runtime session that names it later ends nothing
    daily = None
    if texts["summary"]:
        daily = files.append_daily(ws.memory, f"### 📝 {at:%H:%M} - Session summary {sid}: {texts['summary']}\n", at)
    if ws.current_session() in same_session(sid):
        ws.set_current_session(None)
    return {"id": sid, "ended_at": at.isoformat(), "file": str(path.relative_to(ws.root)),
            "daily_log": str(daily.relative_to(ws.root)) if daily else None, "events": len(nodes),
            "sections": {title: items for title, items in result.sections()}}


def end_unfinished(ws: Any, reflect: Callable[[Any, str, str, str | None], bool] | None = None, *,
                   only: Callable[[dict[str, Any]], bool] | None = None) -> list[str]:
    """End the sessions whose end was handed to a detached child that did not end them (it gave up on a graph
    another writer held, or died: a full disk, a crash, kill -9: `kg.memory.session_ends`), each once, dated when
    its runtime ended it. `reflect(ws, session, transcript, at)` first does the reflection the child left undone
    (`kg.runtimes.hooks.reflect_left`: True when it ran), which ends the session with its summary; without it, or
    when the transcript cannot be read, the summary is the one the graph can make from what was logged, and the
    reflection not done is named in Open Items; so is a reflection that failed in any way (a transcript that
    breaks the reader must not leave its record, and every later start that tries it, failing for good). A record
    `only` says no to is left for another (a start that cannot hand a long reflection to a detached child:
    `kg.runtimes.hooks.finish_left`). The sessions ended. Called where a writer holds the graph anyway (a session
    start, a session end)."""
    from kg.memory import session_ends

    def ended(sid: str) -> bool:
        with ws.store() as st:
            rows = [r for form in same_session(sid) for r in st.run("memory_session_get", id=form)]
        return not rows or rows[0]["ended_at"] is not None

    def finish(record: dict[str, Any]) -> bool:
        sid, at = record["session"], record.get("at") or None
        if only is not None and not only(record):
            return False
        if record.get("no_session"):
            return _reflect_only(ws, reflect, record.get("transcript"), at)
        if ended(sid):
            return True  # ended after all (by hand, or by the child just before it died), or never made
        transcript = record.get("transcript")
        transcript = transcript if isinstance(transcript, str) and transcript else None
        left = ("this session's end stopped before it finished; kg ended it later from what was logged"
                + (f" (to reflect on its transcript: `kg reflect {transcript} --apply --session {sid}`)"
                   if transcript else ""))
        try:
            if reflect is not None and transcript and reflect(ws, sid, transcript, at):
                left = ""
                if ended(sid):
                    return True
        except StoreBusy:
            return False  # the graph is held again: the next one to look tries again
        except (KgError, OSError, ValueError) as exc:  # the transcript is gone or unreadable now: what was logged
            left = f"{left}; reflecting on it later failed: {exc}"  # is all there is, and the reflection is named
        except Exception as exc:  # noqa: BLE001 - a reader's bug: kept, it failed every later start and end too
            left = f"{left}; reflecting on it later failed: {type(exc).__name__}: {exc}"
            if ended(sid):
                return True  # it failed after ending the session: that summary stands
        try:
            end(ws, "", now=at, session=sid, open_items=[left] if left else None, at_least_start=True)
        except (KgError, OSError, ValueError):
            return False  # (a full disk still): the next one to look tries again
        return True

    return session_ends.sweep(ws, finish)


def _reflect_only(ws: Any, reflect: Callable[[Any, str | None, str, str | None], bool] | None, transcript: Any,
                  at: str | None) -> bool:
    """A recorded end with no kg session (`session_ends.unstarted`): its transcript reflected on as its end would
    have done (into the session named after the transcript's own id, with that session's summary). True: done, or
    nothing can be (no transcript, or one that cannot be read any more); False: the graph is held or unreachable
    again, and the next one to look tries again."""
    if reflect is None or not isinstance(transcript, str) or not transcript:
        return True
    try:
        reflect(ws, None, transcript, at)
    except StoreBusy:
        return False
    except Exception:  # noqa: BLE001 - gone, unreadable, or a reader's bug: kept, it failed every later start too
        return True
    return True
