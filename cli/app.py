"""The `kg` command: a thin Typer app. Each command parses options, makes one library call and renders."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from kg.cli import analysis, demo, doctor, entries, graph, ingest, links, reflect, trail
from kg.cli import hooks as hooks_cli
from kg.cli import lifecycle as lifecycle_cli
from kg.cli import memory as memory_cli
from kg.cli import schedule as schedule_cli
from kg.cli import serve as serve_cli
from kg.cli import server as server_cli
from kg.cli.common import State, error_line
from kg.cli.entry import hoist_globals
from kg.cli.entry import invoked as _invoked  # the console entry reads the command line first


class _Group(typer.core.TyperGroup):
    """`--now`, `-w/--workspace` and `--rules` are global options that every subcommand also accepts after its
    name: they are moved in front of the subcommand (before any `--`), where the global options read them (a
    subcommand's own `--now` reads it from there too): cli/entry.py `hoist_globals`."""

    def parse_args(self, ctx, args):  # noqa: ANN001, ANN201 - click's signature
        return super().parse_args(ctx, hoist_globals(list(args)))


app = typer.Typer(
    cls=_Group,
    name="kg",
    help="kaizen-kg: the learning memory for AI agents. Log what happened; kg links, promotes, verifies "
    "and renders what was learned into the files agents read.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from kg import __version__

        typer.echo(f"kg (kaizen-kg) {__version__}")
        raise typer.Exit()


def _usage_metavar(self: typer.core.TyperArgument, ctx: typer.Context, *, usage: bool = False) -> str:
    """Arguments in usage lines as the README writes them, `kg log [OPTIONS] KIND SUMMARY` (Typer 0.28 writes
    `{kind}:<learning|error|feature> {summary}`); the help panel keeps Typer's type column."""
    if not usage:
        return _typer_metavar(self, ctx, usage=usage)
    var = self.metavar or (self.name or "").upper()
    if var.startswith("["):
        return var
    var = var if self.required else f"[{var}]"
    return var + ("..." if self.nargs != 1 else "")


_typer_metavar = typer.core.TyperArgument.make_metavar
typer.core.TyperArgument.make_metavar = _usage_metavar


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
    version: Annotated[
        bool, typer.Option("--version", "-V", callback=_version, is_eager=True, help="Print kg's version and exit.")
    ] = False,
) -> None:
    if now is not None and ctx.invoked_subcommand != "hook":  # (a hook says it its own way: cli/hooks.py `hook_errors`)
        _check_now(ctx, now)
    if workspace is not None and not workspace.strip() and ctx.invoked_subcommand != "hook":  # `-w "$WS"`, WS unset
        error_line("the workspace folder is empty: name one with -w/--workspace, or leave it out to use the one "
                   "this folder is in")
        raise typer.Exit(2)
    ctx.obj = State(workspace=workspace, rules=rules, now=now)
    _clock_zone(workspace)


def _clock_zone(workspace: str | None) -> None:
    """The workspace's clock zone in effect before the command reads any time (kg/workspace_zone.py): a
    `--now` or `--since` without an offset is read in it, whatever this process's TZ. Opening the workspace
    settles it again (kg.toml's [clock], the store's record); none found, the process's own."""
    from kg.core.errors import KgError
    from kg.workspace_root import MARKER, find_root
    from kg.workspace_zone import use_cached

    try:
        use_cached(find_root(workspace) / MARKER)
    except (KgError, OSError):
        from kg.core import clock

        clock.use_zone(None)


def _check_now(ctx: typer.Context, now: str) -> None:
    """A bad `--now` (or KG_NOW) is bad input for every command, also those that read no time (it passed
    unnoticed: `kg retention --now x` answered, `kg schedule run --now x` exited 1 as a failed cycle)."""
    import os

    from kg.core import clock
    from kg.core.errors import UsageError

    env = os.environ.get(clock.ENV_NOW) == now  # (the same value on the command line: either names it)
    try:
        clock.parse_time(now, what="KG_NOW" if env else "--now")
    except UsageError as exc:
        from kg.redaction.redact import redact_report  # it quotes the value given

        error_line(redact_report(str(exc)))
        raise typer.Exit(2) from None


entries.register(app)
ingest.register(app)
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
schedule_cli.register(app)
server_cli.register(app)
serve_cli.register(app)
doctor.register(app)




def _name(info: typer.models.CommandInfo | typer.models.TyperInfo) -> str | None:
    if isinstance(info, typer.models.TyperInfo):
        return info.name or (info.typer_instance.info.name if info.typer_instance else None)
    return info.name or (info.callback.__name__.lower().replace("_", "-") if info.callback else None)


@contextmanager
def _only(name: str | None) -> Iterator[None]:
    """Build only the subcommand this process runs.

    Typer turns every registered command into a click command, parsing each signature, on every start: about
    70 ms for kg's sixty commands, paid by each `kg log` from a hook. With a known subcommand name the app is
    narrowed to it for this call (the behaviour of that command, its help and its errors are unchanged);
    otherwise (`kg --help`, a typo) the whole app is built, so the listing and "No such command" still work."""
    commands, groups = app.registered_commands, app.registered_groups
    keep_c = [c for c in commands if _name(c) == name]
    keep_g = [g for g in groups if _name(g) == name]
    if name == "--version":  # answered by the eager callback: no command is needed at all
        keep_c, keep_g = [], []
    elif name is None or not (keep_c or keep_g):
        yield
        return
    # Completion's two root options take time to build on every start; they are only ever given without a
    # subcommand (`kg --install-completion`), and completion requests name none on the command line either.
    completion = app._add_completion
    app.registered_commands, app.registered_groups, app._add_completion = keep_c, keep_g, False
    try:
        yield
    finally:
        app.registered_commands, app.registered_groups, app._add_completion = commands, groups, completion


_BUILT: dict[str | None, Any] = {}  # the click command built for each subcommand name, kept for the process


def _command(name: str | None) -> Any:
    """The click command that runs `kg NAME ...` (narrowed by `_only`), built once per process: a read server
    runs the same few commands request after request, and building one parses its signatures (~30-60 ms of a
    served read). Called as typer's app is (`cmd(args=..., prog_name=..., standalone_mode=False)`)."""
    built = _BUILT.get(name)
    if built is None:
        from typer.main import get_command

        with _only(name):
            built = _BUILT[name] = get_command(app)
    return built


def run(argv: list[str]) -> int:
    """Run `kg ARGV` in this process and return the exit code: bad input 2 with an `Error:` line, an
    operational failure 1, never a traceback; with `--json`, that line is also a JSON object on stdout
    (cli/common.py `json_error`). (Tests call this; `main` adds the detached after-answer work.)"""
    from kg.cli.common import json_error, new_answer
    from kg.cli.entry import json_asked

    new_answer()
    code = _run(argv)
    if json_asked(argv):
        json_error(code)
    return code


def _run(argv: list[str]) -> int:
    import sys

    from kg.cli.common import bad_input, check_argv, hook_under_runtime, run_app

    usage = 1 if hook_under_runtime(argv) else 2  # a runtime's hook never gets 2 (cli/hooks.py hook_errors)
    refused = check_argv(argv)
    if refused:
        from kg.redaction.redact import redact_report  # it quotes the argument

        error_line(redact_report(refused), plain=True)
        return usage
    name = _invoked(argv)
    if name is None and {"--version", "-V"} & set(argv):
        name = "--version"
    try:
        return run_app(_command(name), argv)
    except Exception as exc:  # noqa: BLE001 - last line of defence; the library raises KgError for known cases
        from kg.cli import output

        if (failure := output.pending_failure(exc)) is not None:  # stdout full or gone, not kg's failure
            return output.lost(failure, 0)
        if bad_input(exc):
            error_line(bad_input(exc), plain=True)
            return usage
        from kg.redaction.redact import redact_report  # the exception's text may quote the input

        error_line(f"unexpected failure: {type(exc).__name__}: {redact_report(str(exc))}", plain=True)
        sys.stderr.write("Please report this with the command you ran.\n")
        return 1


def main() -> None:
    """Console entry point: never let a traceback reach the user."""
    import sys

    from kg.cli.common import allow_background, run_after_answer

    allow_background(True)
    try:
        code = run(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    from kg.cli import output

    if (failure := output.flush()) is not None:  # what was still buffered: said now, not by Python at exit
        code = output.lost(failure, code)
    allow_background(False)
    run_after_answer(code)
    raise SystemExit(code)
