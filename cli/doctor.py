"""`kg doctor`: check the workspace and repair what can be repaired safely."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from kg.cli.common import JsonOpt, emit, errors, workspace

ICONS = {"ok": "✅", "repaired": "🔧", "warning": "⚠️ ", "error": "❌"}


def doctor(
    ctx: typer.Context,
    repair: Annotated[bool, typer.Option(
        "--repair", help="Also start a new graph over a missing or empty one (rebuilt from the trail and "
                         ".learnings/ when present).")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only check; repair nothing.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Check the graph, full-text index, journal, ids, blocks and files; repair what is safe and say what was
    done. Exits 1 when a problem is left that needs a person."""
    from kg.doctor import doctor as run

    with errors():
        report = run(workspace(ctx, fallback=True), repair=repair, dry_run=dry_run)
    emit(report.as_dict(), as_json, _render)
    if not report.ok:
        raise typer.Exit(1)


def _render(d: dict[str, Any]) -> str:
    lines = [f"🩺 {d['workspace']}"]
    lines += [f"   {ICONS.get(c['status'], '-')} {c['name']}: {c['detail']}" for c in d["checks"]]
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    app.command()(doctor)
