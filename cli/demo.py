"""`kg demo`: build the demo workspace and show what kg made of its history."""

from __future__ import annotations

from typing import Annotated

import typer
from kg.cli.common import JsonOpt, emit, errors, note


def demo(
    path: Annotated[str, typer.Argument(help="Where to build it.")] = "demo-workspace",
    force: Annotated[bool, typer.Option("--force", help="Rebuild a demo workspace that exists.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Build a demo workspace from a scripted multi-day, multi-session history, and show the result."""
    from kg.demo import build_demo, end_of_story

    with errors():
        ws, report = build_demo(path, force=force)
        status = ws.status(now=end_of_story())  # the demo's own day: at the real clock its changes look overdue
    if not as_json:
        note(f"Built {report.workspace}: {report.entries} entries over {report.days} days in "
             f"{report.sessions} sessions (redacted: {', '.join(report.redacted) or 'nothing'}).")
    from kg.cli.entries import _render_status

    emit({"demo": report.as_dict(), "status": status}, as_json, lambda d: _render_status(d["status"]) +
         "\n" + _render_story(d["demo"]))


def _render_story(d: dict) -> str:
    lines = ["", "📖 What kg did with this history:"]
    for c in d["cycles"]:
        lines.append(f"  kg cycle --now {c['now']}")
        lines += [f"    ✅ promoted {p['pattern_key']} → {p['target']}: {p['text']}" for p in c["promoted"]]
        lines += [f"    📋 proposal #{p['number']} ({p['type']}) → {p['target'] or '?'}: {p['text']}"
                  for p in c["proposed"]]
        lines += [f"    🔍 {v['pattern_key']} in {v['target']}: {v['verdict']} ({v['summary']})" for v in c["verified"]]
        lines += [f"    ↩️  reverted {r['pattern_key']} from {r['target']}" for r in c["reverted"]]
        lines += [f"    ⏳ {w['pattern_key']} waits: {w['reason']}" for w in c.get("waiting", [])]
        if c is next((x for x in d["cycles"] if any(p["type"] == "promotion" for p in x["proposed"])), None):
            lines += [f"  kg approve {a['number']}   (the user approves: → {a['target']})" for a in d["approved"]]
    w = d["workspace"]
    kg = _kg_on(w)
    lines += ["", f"Explore it: cat {w}/TOOLS.md {w}/USER.md {w}/SOUL.md",
              f"            {kg} why \"- push with `git push -u origin HEAD`\"",
              f"            {kg} status | list | show ID | graph query"]
    return "\n".join(lines)


def _kg_on(workspace: str) -> str:
    """How to run this kg on the demo workspace: `kg -w DIR` when the `kg` on PATH is this one, else this kg's full
    path (`./dev demo` installs kg into .venv, off PATH: a bare `kg` there was "command not found"), as the session
    brief names it (kg.runtimes.hooks.kg_command)."""
    from pathlib import Path
    from types import SimpleNamespace

    from kg.runtimes.hooks import kg_command

    named = kg_command(SimpleNamespace(root=Path(workspace)))
    return f"kg -w {workspace}" if named == "kg" else named


def register(app: typer.Typer) -> None:
    app.command()(demo)
