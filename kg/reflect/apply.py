"""`kg reflect`: read a transcript, show what a careful reviewer would log, and log it with `apply=True`.

Parsing and detection are pure (`parse`, `detect`); this module joins them to a workspace. Every finding is
validated before any is written, so a bad one stops the run before the first write, and a transcript that
was reflected on before adds nothing twice (findings already in that session's graph are skipped).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from kg import clock
from kg.entries import prepare
from kg.errors import UsageError
from kg.reflect.detect import Finding, Reflection, reflect
from kg.reflect.parse import FORMATS, Transcript, TranscriptError, read_transcript
from kg.reflect.rules import load_rules

_KIND = {"learning": "learning", "error": "error", "feature": "feature", "preference": "learning"}


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
    summary_file: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _finding_dict(f: Finding) -> dict[str, Any]:
    return {"kind": f.kind, "category": f.category, "summary": f.summary, "evidence": f.evidence,
            "position": f.position, "pattern_key": f.pattern_key, "area": f.area, "priority": f.priority,
            "source": f.source, "occurrences": f.occurrences, "command": f.command}


def _log_fields(ws: Any, f: Finding) -> tuple[str, dict[str, Any]]:
    kind = _KIND[f.kind]
    category = "preference" if f.kind == "preference" else f.category
    policy = ws.policy
    fields: dict[str, Any] = {
        "details": f"{f.details}\nEvidence ({f.position}): {f.evidence}".strip(),
        "area": f.area,
        "priority": f.priority if f.priority in policy.priorities else None,
        "category": category if category in policy.categories else None,
        "source": f.source if f.source in policy.sources else "reflect",
        "pattern_key": f.pattern_key,
        "tags": ["reflect"],
    }
    if kind == "error":
        fields["error_text"] = f.error_text
        fields["context"] = f.command
    return kind, fields


def reflect_file(ws: Any, path: str, *, format: str | None = None, apply: bool = False,
                 session: str | None = None, now: datetime | str | None = None, stdin: Any = None) -> ReflectReport:
    if format is not None and format not in FORMATS:
        raise UsageError(f"unknown transcript format {format!r}: use one of {', '.join(FORMATS)}")
    rules = load_rules(ws.rules.raw("reflect"), source="rules/reflect.toml")
    try:
        transcript: Transcript = read_transcript(path, format=format, stdin=stdin)
    except TranscriptError as exc:
        raise UsageError(str(exc)) from None
    redactor = ws.rules.redactor
    # The gate, before detection: findings cut error text (2,000 characters), lowercase it into signatures
    # and pattern keys, and quote commands; a secret must be gone before any of that.
    transcript = replace(transcript, turns=tuple(
        replace(t, text=redactor.redact(t.text).text,
                tool_input=redactor.redact(t.tool_input).text if t.tool_input else t.tool_input)
        for t in transcript.turns))
    result: Reflection = reflect(transcript, rules, redact=lambda text: redactor.redact(text).text)
    at = clock.now(now)
    session_id = session or transcript.session_hint or f"reflect-{at:%Y%m%d-%H%M%S}"
    report = ReflectReport(
        source=str(path), format=transcript.format, session=session_id, turns=len(transcript.turns),
        skipped=dict(transcript.skipped), findings=[_finding_dict(f) for f in result.findings],
        skill_candidates=[{"position": t.position, "request": redactor.redact(t.request).text,
                           "tool_calls": t.tool_calls} for t in result.skill_candidates],
        dropped_by_cap=result.dropped_by_cap, duplicates=result.duplicates,
    )
    if not apply:
        return report
    planned = []
    for f in result.findings:
        kind, fields = _log_fields(ws, f)
        # validate everything before the first write: never a partial run
        prepare(ws.policy, redactor, kind, f.summary, now=at, session=session_id, **fields)
        planned.append((kind, f.summary, fields))
    with ws:
        with ws.store() as st:
            seen = {r["text"] for r in st.run("session_texts", session=session_id)}
        for kind, summary, fields in planned:
            if redactor.redact(summary).text in seen:
                report.already_logged += 1
                continue
            report.logged.append(ws.log(kind, summary, now=at, session=session_id, **fields).id)
        if report.logged:
            report.summary_file = _write_summary(ws, report, result, at)
    report.applied = True
    return report


def _write_summary(ws: Any, report: ReflectReport, result: Reflection, at: datetime) -> str | None:
    """The L1 session summary (memory/sessions/SESSION.md), filled from the session's events in the graph;
    tasks with many tool calls are listed as open skill candidates. Once per session."""
    from kg.memory import sessions

    counts: dict[str, int] = {}
    for f in result.findings:
        counts[f.kind] = counts.get(f.kind, 0) + 1
    summary = (f"Reflected on {report.source} ({report.format}, {report.turns} turns): "
               + ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())))
    open_items = [f"Skill candidate: {t['request'][:100]} ({t['tool_calls']} tool calls, {t['position']})"
                  for t in report.skill_candidates]
    try:
        done = sessions.end(ws, summary, now=at, session=report.session, open_items=open_items)
    except UsageError:
        return None  # ended before (a re-run, or the agent ended it): the first summary stands
    return done["file"]
