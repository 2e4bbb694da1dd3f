"""What every command shares: the workspace from the global options, output in text or JSON, and the one
place where library errors become `Error: ...` on stderr with an exit code (2 bad input, 1 operational)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]
NowOpt = Annotated[
    str | None,
    typer.Option("--now", envvar="KG_NOW", help="Pretend it is this time (ISO 8601); also KG_NOW.",
                 show_envvar=False),
]


@dataclass
class State:
    workspace: str | None = None
    rules: Path | None = None
    now: str | None = None


def state(ctx: typer.Context) -> State:
    obj = ctx.find_root().obj
    return obj if isinstance(obj, State) else State()


def fail(message: str, code: int = 2) -> NoReturn:
    typer.echo(f"Error: {message}", err=True)
    raise typer.Exit(code)


@contextmanager
def errors() -> Iterator[None]:
    """Translate library errors into a message and an exit code; no traceback reaches the user."""
    from kg.errors import KgError

    try:
        yield
    except typer.Exit:
        raise
    except KgError as exc:
        fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        fail("interrupted", 130)
    except BrokenPipeError:
        raise typer.Exit(0) from None
    except OSError as exc:
        fail(f"{exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}", 1)


def workspace(ctx: typer.Context):
    from kg.workspace import open_workspace

    st = state(ctx)
    return open_workspace(st.workspace, rules_dir=st.rules)


def now_of(ctx: typer.Context, local: str | None) -> str | None:
    return local or state(ctx).now


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (set, tuple)):
        return list(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(type(value).__name__)


def emit(data: Any, as_json: bool, render: Callable[[Any], str] | None = None) -> None:
    if as_json:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=_default) + "\n")
    elif render is not None:
        text = render(data)
        if text:
            typer.echo(text)


def note(message: str) -> None:
    typer.echo(message, err=True)


# Work a command leaves for after it has answered. The console entry (`kg.cli.app.main`) runs it in a detached
# child once the output is written and the exit code is known; anywhere else (an in-process CliRunner, a
# platform without fork) `background_possible()` says no and the command does the work in the foreground.
_after: list[Callable[[], Any]] = []
_background = {"possible": False}


def allow_background(allowed: bool) -> None:
    """Set by the console entry only, around the command: a detached child may finish the work after this
    process has answered."""
    import os

    _background["possible"] = allowed and hasattr(os, "fork")


def background_possible() -> bool:
    """Whether `after_answer` would accept work here."""
    return _background["possible"]


def after_answer(work: Callable[[], Any]) -> None:
    """Schedule `work` for a detached child after the answer (only where `background_possible()`)."""
    if not _background["possible"]:
        raise RuntimeError("after_answer() outside the console entry: check background_possible() first")
    _after.append(work)


def run_after_answer(exit_code: int) -> None:
    """Fork once and run the scheduled work in the child, which leaves the caller's terminal and pipes (so a
    hook or a shell waiting for this process's output is not kept waiting). Failures there are silent: the
    work is a drain of acknowledged writes, which the next kg command repeats if it did not happen."""
    import os

    work, _after[:] = list(_after), []
    if not work or exit_code != 0:
        return
    for stream in (sys.stdout, sys.stderr):  # written once, by the parent only
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away: the answer is its loss, the drain still runs
            pass
    try:
        pid = os.fork()
    except OSError:
        pid = -1
    if pid > 0:
        return
    try:
        if pid == 0:
            os.setsid()
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
        for job in work:
            job()
    except BaseException:  # noqa: BLE001 - see the docstring
        pass
    finally:
        if pid == 0:
            os._exit(0)
