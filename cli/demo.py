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
    from kg.demo import build_demo

    with errors():
        ws, report = build_demo(path, force=force)
        status = ws.status()
    if not as_json:
        note(f"Built {report.workspace}: {report.entries} entries over {report.days} days in "
             f"{report.sessions} sessions (redacted: {', '.join(report.redacted) or 'nothing'}).")
    from kg.cli.entries import _render_status

    emit({"demo": report.as_dict(), "status": status}, as_json, lambda d: _render_status(d["status"]) +
         f"\n\nExplore it: kg -w {report.workspace} status | list | show ID")


def register(app: typer.Typer) -> None:
    app.command()(demo)
