"""The `kg` command: a thin Typer app. Each command parses options, makes one library call and renders."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from kg.cli import analysis, demo, entries, graph, links, reflect, trail
from kg.cli import hooks as hooks_cli
from kg.cli import lifecycle as lifecycle_cli
from kg.cli import memory as memory_cli
from kg.cli.common import State

app = typer.Typer(
    name="kg",
    help="kaizen-kg: the learning memory for AI agents. Log what happened; kg links, promotes, verifies "
    "and renders what was learned into the files agents read.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def main_options(
    ctx: typer.Context,
    workspace: Annotated[
        str | None,
        typer.Option("--workspace", "-w", envvar="KG_WORKSPACE",
                     help="Workspace folder (default: found from the current directory; also KG_WORKSPACE)."),
    ] = None,
    rules: Annotated[
        Path | None, typer.Option("--rules", help="Folder of rule files that override the packaged rules.")
    ] = None,
    now: Annotated[
        str | None, typer.Option("--now", envvar="KG_NOW", help="Pretend it is this time (ISO 8601); also KG_NOW.")
    ] = None,
) -> None:
    ctx.obj = State(workspace=workspace, rules=rules, now=now)


entries.register(app)
demo.register(app)
reflect.register(app)
graph.register(app)
export_app = typer.Typer(help="Render the graph into other formats.", no_args_is_help=True)
app.add_typer(export_app, name="export")
trail.register(app, export_app)
analysis.register(app, export_app)
memory_cli.register(app)
links.register(app)
lifecycle_cli.register(app, export_app)
hooks_cli.register(app)


def main() -> None:
    """Console entry point: never let a traceback reach the user."""
    try:
        app()
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - last line of defence; the library raises KgError for known cases
        import sys

        sys.stderr.write(f"Error: unexpected failure: {type(exc).__name__}: {exc}\n"
                         "Please report this with the command you ran.\n")
        raise SystemExit(1) from None
