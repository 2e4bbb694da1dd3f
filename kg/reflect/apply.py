"""`kg reflect`: read a transcript, show what a careful reviewer would log, and log it with `apply=True`.

Parsing and detection are pure (`parse`, `detect` for what the user said, `failures` for failed tool calls);
this module joins them to a workspace. Every finding is validated before any is written, so a bad one stops
the run before the first write. Each real failure is one event: a failure whose tool call the live hook logged
is skipped, and reflecting on a transcript again, or after a resume, adds only what lies past its cursor and
was not logged before (`kg.reflect.state`); it reads the file from about where the last one ended
(`kg.reflect.window`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.core import clock
from kg.core.entries import prepare
from kg.core.errors import UsageError
from kg.reflect import state as rstate
from kg.reflect import window
from kg.reflect.failures import Failure, FailureRules, failures
from kg.reflect.failures import load_rules as load_failure_rules
from kg.reflect.output_lines import plain
from kg.reflect.parse import FORMATS, Transcript, TranscriptError, read_transcript
from kg.reflect.rules import load_rules

if TYPE_CHECKING:  # detection (and rapidfuzz) loads in reflect_file only: the post-tool-use hook needs none of it
    from kg.reflect.detect import Finding, Reflection

_KIND = {"learning": "learning", "feature": "feature", "preference": "learning"}


@dataclass
class ReflectReport:
    source: str
    format: str
    session: str
    turns: int
    skipped: dict[str, int]
    findings: list[dict[str, Any]]
    skill_candidates: list[dict[str, Any]]
    dropped_by_cap: int
    duplicates: int
    applied: bool = False
    logged: list[str] = field(default_factory=list)
    already_logged: int = 0
    summary_file: str | None = None  # the last session summary written (see summary_files)
    sessions: list[str] = field(default_factory=list)  # every session the findings belong to, in order
    summary_files: list[str] = field(default_factory=list)  # one per session that logged something
    cursor: int = 0  # lines reflected on before this run (findings up to there are not logged again)
    read_from: int = 1  # the line this run began reading at (past 1: where the last reflection left off)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _finding_dict(f: Finding) -> dict[str, Any]:
    return {"kind": f.kind, "category": f.category, "summary": f.summary, "evidence": f.evidence,
            "position": f.position, "pattern_key": f.pattern_key, "area": None, "priority": f.priority,
            "source": f.source, "occurrences": f.occurrences, "command": None,
            "signals": list(f.signals), "score": f.score}


def _log_fields(ws: Any, f: Finding) -> tuple[str, dict[str, Any]]:
    kind = _KIND[f.kind]
    category = "preference" if f.kind == "preference" else f.category
    policy = ws.policy
    fields: dict[str, Any] = {
        "details": f"{f.details}\nEvidence ({f.position}): {f.evidence}".strip(),
        "priority": f.priority if f.priority in policy.priorities else None,
        "category": category if category in policy.categories else None,
        "source": f.source if f.source in policy.sources else "reflect",
        "pattern_key": f.pattern_key,
        "tags": ["reflect"],
    }
    return kind, fields


def failure_rules(ws: Any) -> FailureRules:
    return load_failure_rules(ws.rules.raw("errors"), source="rules/errors.toml")


def failure_fields(f: Failure, rules: FailureRules, *tags: str) -> tuple[str, dict[str, Any]]:
    """The summary and `ws.log` fields of a failed tool call: the live hook and reflection log the same."""
    return f.summary(rules.summary_chars), {
        "details": f.details(), "error_text": f.error or None, "context": f.command, "area": f.area,
        "priority": f.priority, "category": "error", "source": "error", "pattern_key": f.pattern_key,
        "action": f.lesson(), "tags": [*f.tags(rules), *tags]}


def _failure_dict(f: Failure, rules: FailureRules, redactor: Any) -> dict[str, Any]:
    # one group: a secret the rules find in the command is redacted in the error line too
    summary, evidence, command = (r.text for r in redactor.redact_group(
        [f.summary(rules.summary_chars), f.line or f.summary(rules.summary_chars), f.command or ""]))
    return {"kind": "error", "category": "error", "summary": summary,
            "evidence": evidence, "position": f.position,
            "pattern_key": f.pattern_key, "area": f.area, "priority": f.priority, "source": "error",
            "occurrences": 1 + f.cascaded, "command": command if f.command else None,
            "call_id": f.call_id, "error_class": f.error_class, "exit_code_only": f.exit_only}


def _session_of(hint: str | None) -> str | None:
    """The transcript's own session name as a session id: aider names a session by when it started
    ("2025-06-02 14:29:21"), and a space is no part of an id. A colon becomes a dash too: the summary file is named
    without colons (kg.memory.sessions.file_name), and the id a user reads there must be the id kg answers to. A name
    in another script (a SpecStory chat's Chinese title, a text file 周一 对话.txt) keeps its date and time and a
    digest of the name (`kg.core.paths.name_for`): never the run's clock, which puts a run's chats in one session."""
    from kg.core.paths import name_for

    return name_for(hint) if hint else None


_NAMED_AT = re.compile(r"(\d{4}-\d{2}-\d{2})[_T](\d{2})-(\d{2})(?:-(\d{2}))?(Z?)")
_AIDER_STARTED = re.compile(r"^# aider chat started at (.+?)\s*$")


def _parsed(text: str | None) -> datetime | None:
    try:
        return clock.parse_time(text) if text else None
    except UsageError:
        return None


def turn_times(transcript: Transcript, path: str, at: datetime) -> list[datetime]:
    """When each turn happened, never later than `at`: its own timestamp (Codex, Claude Code, OpenClaw/pi,
    OpenAI JSONL with times), else the last one before it, else when its session started (aider's "chat
    started at" header; SpecStory's and Codex's file name), else `at`. Turns before the first known time take
    that time (they happened no later)."""
    named = _NAMED_AT.search(Path(path).name) if str(path) != "-" else None
    fallback = at
    if named:
        day, hh, mm, ss, z = named.groups()
        fallback = _parsed(f"{day}T{hh}:{mm}:{ss or '00'}{z}") or at
    known: list[datetime | None] = []
    last: datetime | None = None
    for t in transcript.turns:
        started = _AIDER_STARTED.match(t.text) if t.role == "system" and transcript.format == "aider" else None
        last = (_parsed(started.group(1)) if started else _parsed(t.timestamp)) or last
        known.append(last)
    first = next((k for k in known if k is not None), fallback)  # turns before the first time: no later than it
    return [min(k or first, at) for k in known]


def turn_sessions(transcript: Transcript, default: str) -> list[str]:
    """The session of each turn. aider appends every chat to one history file, each opened by "# aider chat started
    at <time>": a turn belongs to the chat it was said in, named by that time. Turns before the first header, and
    every other format's turns, belong to `default`."""
    out: list[str] = []
    current = default
    for t in transcript.turns:
        started = _AIDER_STARTED.match(t.text) if t.role == "system" and transcript.format == "aider" else None
        if started:
            current = _session_of(started.group(1)) or current
        out.append(current)
    return out


def gated(transcript: Transcript, redactor: Any) -> Transcript:
    """The transcript with every text detection and `failures` read redacted, and the rest emptied.

    A tool result its runtime marked as not failed (`is_error` False) is never read for its words: `failures` skips
    it by its flag, and detection reads only that flag, except for the turn right before a user speaks (its ends are
    the `before` context). Those results are most of a transcript's bytes (1.8 of 1.9 MB of tool output in the 10 MB
    bench file), so they are emptied instead of scanned: the findings are the same, and no unredacted text is kept."""
    turns = transcript.turns
    before_user = {i - 1 for i, t in enumerate(turns) if t.role == "user"}

    # Every text is redacted in one group (`redact_group`): a secret found anywhere in the session is redacted
    # wherever it recurs (a password the user typed once, in the agent's failing command after it), and a call's
    # input is read once though its result's turn repeats it.
    texts: dict[str, int] = {}

    def slot(text: str) -> int:
        return texts.setdefault(text, len(texts))

    plan: list[tuple[Any, int | None, int | None]] = []  # (turn, its text's slot, its tool input's slot)
    for at, t in enumerate(turns):
        tool_input = slot(t.tool_input) if t.tool_input else None
        if t.role == "tool" and t.is_error is False and at not in before_user:
            plan.append((replace(t, text=""), None, tool_input))
            continue
        if t.role == "tool" and t.text:  # read without terminal escapes: a colour code right before a key hid it
            t = replace(t, text=plain(t.text))  # from the rules that want a boundary there (review rev8 #5)
        plan.append((t, slot(t.text), tool_input))
    done = [r.text for r in redactor.redact_group(list(texts))]

    def one(t: Any, text: int | None, tool_input: int | None) -> Any:
        return replace(t, **({} if text is None else {"text": done[text]}),
                       **({} if tool_input is None else {"tool_input": done[tool_input]}))

    from kg.memory.session_ids import stored  # the runtime's session id: a secret-like one as its digest, as a
    # hook keeps it (its session name, its reflection's state and call ids agree with the hook's)

    hint = stored(transcript.session_hint, redactor) if transcript.session_hint else transcript.session_hint
    return replace(transcript, turns=tuple(one(*item) for item in plan), session_hint=hint)


def _line(cursor: dict[str, Any] | None) -> int:
    return int(cursor.get("line", 0)) if cursor else 0


def _line_of(transcript: Transcript, turn: int) -> int:
    return transcript.turns[turn].line or 0 if 0 <= turn < len(transcript.turns) else 0


class UnreadableTranscript(UsageError):
    """The transcript cannot be read (missing, not a regular file, not a transcript): bad input to `kg reflect`,
    a note to a session end, which still writes the summary (kg.runtimes.hooks.session_end)."""


def reflect_file(ws: Any, path: str, *, format: str | None = None, apply: bool = False,
                 session: str | None = None, now: datetime | str | None = None, stdin: Any = None,
                 end_session: bool = True, summary_for: str | None = None) -> ReflectReport:
    """What a transcript teaches; with `apply`, logged once each, and the session ended with its summary when
    something was logged (`end_session=False`: Codex's Stop after every turn, `kg hook session-end --no-summary`).
    `summary_for`: a session to end with the whole transcript's summary even when this read logged nothing new for
    it (a session end whose findings Codex's Stops or the live hooks logged, or a handed-over end finished after its
    child died having logged them: ended with an empty summary before)."""
    from kg.reflect.detect import is_speaking_user, reflect

    if format is not None and format not in FORMATS:
        raise UsageError(f"unknown transcript format {format!r}: use one of {', '.join(FORMATS)}")
    rules = load_rules(ws.rules.raw("reflect"), source="rules/reflect.toml", model=ws.rules.raw("reflect_model"))
    frules = failure_rules(ws)
    prior: dict[str, Any] | None = None  # where the last reflection on this file left off, and what it found
    nxt: dict[str, Any] | None = None  # ... and this one
    read_from, size = 1, 0
    try:
        if str(path) == "-":
            transcript: Transcript = read_transcript(path, format=format, stdin=stdin)
        else:
            # with `apply`, from where the last reflection on this file left off (a dry run reads it all)
            prior = rstate.read(ws).window_of(str(Path(path).resolve())) if apply else None
            got = window.read(path, format, prior)
            transcript, read_from, size = got.transcript, got.from_line, got.size
            if apply:
                nxt = window.plan(got, path, lambda t: is_speaking_user(t, rules), rules.limits.context_turns)
            del got  # (its text: a whole file's worth, not kept through detection)
    except TranscriptError as exc:
        raise UnreadableTranscript(str(exc)) from None
    redactor = ws.rules.redactor
    # The gate, before detection: findings cut error text, lowercase it into signatures and pattern keys,
    # and quote commands; a secret must be gone before any of that.
    transcript = gated(transcript, redactor)

    def redact(text: str) -> str:
        return redactor.redact(text).text

    # a read that resumed: what the reflection before it found, so that its part finds what the whole would
    resumed = prior if read_from > 1 else None
    at = clock.now(now)
    if session:  # a secret-like id is kept as its digest, as `kg log --session` keeps it
        from kg.memory.session_ids import given

        session = given(session, redactor)
    session_id = session or _session_of(transcript.session_hint) or f"reflect-{at:%Y%m%d-%H%M%S}"
    # a session named by the caller holds every turn; else each turn its own chat's (aider: one per "chat started")
    of_turn = [session_id] * len(transcript.turns) if session else turn_sessions(transcript, session_id)
    result: Reflection = reflect(transcript, rules, redact=redact, gated=True, after_line=_line(resumed),
                                 earlier={said[0]: tuple(said[1:]) for said in resumed["found"]} if resumed else None,
                                 sessions=of_turn if len(set(of_turn)) > 1 else None)  # each chat capped alone
    said = list(result.findings)  # what the user said; failed tool calls come from `failures`, one per call
    failed = failures(transcript, frules, after_line=_line(resumed),
                      earlier=Counter(resumed["errors"]) if resumed else None)

    def session_of(turn: int) -> str:
        return of_turn[turn] if 0 <= turn < len(of_turn) else session_id

    report = ReflectReport(
        source=str(path), format=transcript.format, session=session_id, turns=len(transcript.turns),
        skipped=dict(transcript.skipped),
        findings=sorted([_finding_dict(f) | {"turn": f.turn, "session": session_of(f.turn)} for f in said]
                        + [_failure_dict(f, frules, redactor) | {"turn": f.turn, "session": session_of(f.turn)}
                           for f in failed.found],
                        key=lambda d: d["turn"]),
        skill_candidates=[{"position": t.position, "request": redact(t.request), "tool_calls": t.tool_calls,
                           "session": session_of(t.turn)} for t in result.skill_candidates],
        dropped_by_cap=result.dropped_by_cap + failed.dropped_by_cap, duplicates=result.duplicates,
        read_from=read_from,
    )
    for d in report.findings:
        d.pop("turn")
    report.sessions = list(dict.fromkeys(d["session"] for d in report.findings)) or [session_id]
    if not apply:
        return report
    times = turn_times(transcript, path, at)

    def when(turn: int) -> datetime:
        return times[turn] if 0 <= turn < len(times) else at

    key = f"{transcript.format}:{transcript.session_hint}" if transcript.session_hint else (
        str(Path(path).resolve()) if str(path) != "-" else None)
    planned = []  # (fingerprints, line, kind, summary, fields, when, session)

    def where(ts: Any, position: Any) -> tuple[Any, ...]:
        # where a finding was said: its turn's time, which no other chat shares; without one (SpecStory, plain
        # text) its place in this transcript, which another chat shares (the same short sentence on the same
        # line), so the transcript is named too: the same correction in another chat is a recurrence, not "already
        # logged", while this transcript read again still adds nothing (QA qa10 F16)
        return (ts,) if ts else (position, *((key,) if key else ()))

    for f in said:
        kind, fields = _log_fields(ws, f)
        ts = transcript.turns[f.turn].timestamp if 0 <= f.turn < len(transcript.turns) else None
        fp = rstate.fingerprint(transcript.format, f.kind, f.category, f.evidence, *where(ts, f.position))
        planned.append(((fp,),
                        _line_of(transcript, f.turn), kind, f.summary, fields, when(f.turn), session_of(f.turn)))
    for f in failed.found:
        summary, fields = failure_fields(f, frules, "reflect")
        ts = transcript.turns[f.turn].timestamp if 0 <= f.turn < len(transcript.turns) else None
        # a call id within the transcript's session and the kg session it goes into (the hook's, kg.runtimes.
        # tool_failures): a call the hook logged under either is not logged again
        fp = rstate.call_keys(f.call_id, transcript.session_hint, session_of(f.turn)) if f.call_id else (
            rstate.fingerprint(transcript.format, "error", f.pattern_key, *where(ts, f.position)),)
        planned.append((fp, _line_of(transcript, f.turn), "error", summary, fields, when(f.turn), session_of(f.turn)))
    idents = []  # what each planned entry says, where and when, as the graph will hold it
    for _, _, kind, summary, fields, on, sid in planned:
        # validate everything before the first write: never a partial run
        f = prepare(ws.policy, redactor, kind, summary, now=on, session=sid, **fields).fields
        idents.append({"session": sid, "at": f["created_at"], "text": f["text"], "details": f.get("details")})
    head = rstate.head_of(path) if str(path) != "-" else ""
    last = max((t.line or 0 for t in transcript.turns), default=0)
    with ws, rstate.locked(ws) as st:
        report.cursor = st.cursor(key, head)
        wrote: dict[str, list[str]] = {}  # session -> the kinds it logged
        todo = []
        for (fps, line, *rest), ident in sorted(zip(planned, idents, strict=True),
                                                key=lambda p: (p[0][5], p[0][1])):
            if any(fp in st.seen for fp in fps) or (line and line <= report.cursor):
                report.already_logged += 1
            else:
                todo.append((fps, ident, *rest))
        if any(fps[0] in st.pending for fps, *_ in todo):  # a reflection killed while logging these
            found = _logged_before(ws, [(fps, st.pending[fps[0]]) for fps, *_ in todo if fps[0] in st.pending],
                                   set(st.seen.values()))
            for fps, entry in found:
                for fp in fps:
                    st.record(fp, entry)
            report.already_logged += len(found)
            todo = [t for t in todo if not any(fp in st.seen for fp in t[0])]
        if todo:  # durable before the first entry: a kill from here on leaves what to look up
            st.pending.update({fps[0]: ident for fps, ident, *_ in todo})
            st.save()
        for fps, _, kind, summary, fields, on, sid in todo:
            entry = ws.log(kind, summary, now=on, session=sid, learned=at, **fields).id
            for fp in fps:
                st.record(fp, entry)
            report.logged.append(entry)
            wrote.setdefault(sid, []).append(kind)
        for fps, *_ in planned:  # logged now, or found logged: nothing of this run is pending any more
            if st.pending.pop(fps[0], None) is not None:
                st.changed = True
        if nxt:  # what the next read, from there on, needs of what came before (see `reflect`, `failures`)
            nxt["found"] = [*(resumed["found"] if resumed else []), *map(list, result.found)]
            nxt["errors"] = dict(Counter(resumed["errors"] if resumed else {}) + Counter(failed.keys))
        st.advance(key, head, last, {
            "path": str(Path(path).resolve()), "format": transcript.format, "hint": transcript.session_hint,
            "size": size, **(nxt or {})} if str(path) != "-" else None)
        # the summary counts what the whole session found: a read that resumed saw only its end
        ending = [*wrote, *([summary_for] if summary_for and summary_for not in wrote else [])] if end_session else []
        whole = report if report.read_from == 1 or not ending else reflect_file(
            ws, path, format=transcript.format, session=session, now=at)
        if end_session:
            for sid in ending:
                # each session ends when its last turn happened (the summary and the daily log say that day)
                ended = max((times[i] for i, s in enumerate(of_turn) if s == sid), default=at)
                done = _write_summary(ws, whole, result, ended, sid)
                if done:
                    report.summary_files.append(done)
                    report.summary_file = done
    report.applied = True
    return report


def _logged_before(ws: Any, pending: list[tuple[tuple[str, ...], dict[str, Any]]],
                   known: set[str]) -> list[tuple[tuple[str, ...], str]]:
    """Of the findings a killed reflection was logging (`pending`: fingerprints, what the entry says, where and
    when), those in the graph now, with their entry ids. Opening the workspace applied the journal, so an entry the
    killed run journaled is a node; each node answers one finding, and never one `known` to the state already."""
    from kg.ingest.apply import whole_second

    with ws.store() as st:
        rows = st.run("reflect_logged", sessions=sorted({i["session"] for _, i in pending}))
    free: dict[tuple[Any, ...], list[str]] = {}
    for r in rows:
        if r["id"] not in known:
            free.setdefault((r["session"], r["text"], r["details"], whole_second(r["created_at"])), []).append(r["id"])
    out = []
    for fps, i in pending:
        ids = free.get((i["session"], i["text"], i["details"], whole_second(i["at"])))
        if ids:
            out.append((fps, ids.pop(0)))
    return out


def _write_summary(ws: Any, report: ReflectReport, result: Reflection, at: datetime, session: str) -> str | None:
    """The L1 session summary (memory/sessions/SESSION.md), filled from the session's events in the graph;
    tasks with many tool calls are listed as open skill candidates. Once per session."""
    from kg.memory import sessions

    counts: dict[str, int] = {}
    for f in report.findings:
        if f["session"] == session:
            counts[f["kind"]] = counts.get(f["kind"], 0) + 1
    summary = (f"Reflected on {report.source} ({report.format}, {report.turns} turns): "
               + (", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) or "no findings"))
    open_items = [f"Skill candidate: {t['request'][:100] or '(before the user spoke)'} "
                  f"({t['tool_calls']} tool calls, {t['position']})"
                  for t in report.skill_candidates if t.get("session", session) == session]
    try:
        done = sessions.end(ws, summary, now=at, session=session, open_items=open_items, at_least_start=True)
    except UsageError:
        return None  # ended before (a re-run, or the agent ended it): the first summary stands
    return done["file"]
