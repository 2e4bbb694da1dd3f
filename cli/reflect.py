"""`kg reflect`: learn from a session transcript (dry run by default)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from kg.cli.common import JsonOpt, NowOpt, emit, errors, note, now_of, workspace


def reflect(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(help="Transcript file (Claude Code JSONL, .gz too; Codex rollout JSONL; "
                                             "OpenClaw/pi session JSONL; aider .aider.chat.history.md; OpenAI "
                                             "messages JSON; SpecStory markdown; plain text), or - for stdin.")],
    format: Annotated[str | None, typer.Option("--format", help="claude-code, codex, openclaw, aider, openai, "
                                                                "specstory or text (default: detected).")] = None,
    apply: Annotated[bool, typer.Option("--apply", help="Log the findings (default: only list them).")] = False,
    session: Annotated[str | None, typer.Option(help="Session id for the logged entries (default: from the "
                                                     "transcript's name).")] = None,
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Find corrections, errors (one per failed tool call), feature requests, knowledge gaps and preferences in a
    transcript. With --apply, a transcript reflected on before adds only what is new."""
    from kg.reflect.apply import reflect_file

    with errors():
        report = reflect_file(workspace(ctx), path, format=format, apply=apply, session=session,
                              now=now_of(ctx, now))
    if report.skipped:
        note("Skipped: " + ", ".join(f"{n} {why}" for why, n in sorted(report.skipped.items())))
    emit(report.as_dict(), as_json, _render)


def _render(d: dict[str, Any]) -> str:
    many = d.get("sessions") or [d["session"]]
    where = f"session {d['session']}" if len(many) < 2 else f"{len(many)} sessions, {many[0]} … {many[-1]}"
    head = f"🔍 {d['source']} ({d['format']}, {d['turns']} turns, {where}): {len(d['findings'])} finding(s)"
    lines = [head]
    for i, f in enumerate(d["findings"], 1):
        key = f" [{f['pattern_key']}]" if f["pattern_key"] else ""
        lines.append(f"  {i}. {f['kind']}/{f['category']} ({f['priority']}){key}: {f['summary'][:100]}")
        lines.append(f"     {f['position']}: {f['evidence'][:120]}")
        if f.get("signals"):
            lines.append(f"     signals: {', '.join(f['signals'])} (score {f['score']:.2f})")
    if d["skill_candidates"]:
        lines.append(f"🧩 Skill candidates ({len(d['skill_candidates'])} task(s) with many tool calls):")
        lines += [f"  - {t['position']}: {t['tool_calls']} tool calls: {t['request'][:80] or '(before the user spoke)'}"
                  for t in d["skill_candidates"]]
    if d["dropped_by_cap"]:
        lines.append(f"(capped: {d['dropped_by_cap']} more finding(s) left out: a session keeps at most "
                     "rules/reflect.toml [limits] max_per_kind of a kind and max_findings_per_session in all, the "
                     "highest priority first, then the earliest; rules/errors.toml caps failed tool calls)")
    if d["applied"]:
        lines.append(f"✅ Logged {len(d['logged'])}: {', '.join(d['logged']) or 'nothing new'}"
                     + (f"; {d['already_logged']} already logged before" if d["already_logged"] else ""))
        for file in d.get("summary_files") or ([d["summary_file"]] if d["summary_file"] else []):
            lines.append(f"📝 Session summary: {file}")
    elif d["findings"]:
        lines.append("Dry run: nothing was written. Run again with --apply to log these.")
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    app.command()(reflect)
