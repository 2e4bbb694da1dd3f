"""What every command shares: the workspace from the global options, output in text or JSON, and the one
place where library errors become `Error: ...` on stderr with an exit code (2 bad input, 1 operational)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from kg.core.errors import os_failure  # noqa: F401 - kg.cli.common.os_failure stays (the MCP server asks it)

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
    """`Error: message` on stderr and exit `code`. The message is redacted: it may quote what the user typed
    (`no node 'sk-proj-...'`, `unknown status '...'`), and a pasted secret is not echoed back."""
    from kg.redaction.redact import redact_report  # (never raises: a report cannot fail again)

    error_line(redact_report(message))
    raise typer.Exit(code)


# What the running command said, for `--json`'s error document (`json_error`, written by cli/app.py `run`): the
# messages of its `Error:` lines, and whether a JSON document is on stdout already (`kg why` prints its
# `"found": false` document, then fails). Reset by `run` for each command: a read server runs many.
_said: dict[str, Any] = {"errors": [], "json": False}


def error_line(message: str, *, plain: bool = False) -> None:
    """`Error: message` on stderr, kept for `json_error`: every `Error:` line a command writes goes through here
    (the message is redacted already: the caller quotes what it was given). `plain`: written as it is, not
    through click's echo (cli/app.py's last line of defence, whose failure may have been click's own)."""
    if plain:
        sys.stderr.write(f"Error: {message}\n")
    else:
        typer.echo(f"Error: {message}", err=True)
    _said["errors"].append(message)


def new_answer() -> None:
    _said["errors"], _said["json"] = [], False


def json_error(code: int) -> None:
    """With `--json`, a command that failed with an `Error:` line also says it as one JSON object on stdout,
    `{"error": <the line's message>, "exit_code": <code>}`: an agent parsing stdout got an empty string (the
    Error line and the exit code stay as they are). Not when the command printed its own JSON document."""
    if code == 0 or not _said["errors"] or _said["json"]:
        return
    from kg.cli.entry import error_document

    try:
        sys.stdout.write(error_document(_said["errors"][-1], code))
        sys.stdout.flush()
    except (OSError, ValueError):  # a reader that went away: the Error line and the exit code still say it
        pass


@contextmanager
def errors() -> Iterator[None]:
    """Translate library errors into a message and an exit code; no traceback reaches the user."""
    from kg.core.errors import KgError

    try:
        yield
    except typer.Exit:
        raise
    except KgError as exc:
        fail(getattr(exc, "cli", None) or str(exc), exc.exit_code)  # (an ArgumentError's words for the flag)
    except KeyboardInterrupt:
        fail("interrupted", 130)
    except BrokenPipeError:
        raise typer.Exit(0) from None
    except OSError as exc:
        fail(os_failure(exc), 1)
    except (UnicodeError, OverflowError, RecursionError) as exc:
        fail(bad_input(exc) or str(exc), 2)




def bad_input(exc: BaseException) -> str | None:
    """The message for an exception that can only come from bad input (a value the caller gave), or None."""
    if isinstance(exc, UnicodeEncodeError) and "surrogates" in str(exc):
        return "an argument or input is not valid UTF-8 text; give UTF-8 text (check the shell's locale)"
    if isinstance(exc, UnicodeDecodeError):
        return f"the input is not UTF-8 text ({exc.reason} at byte {exc.start}); convert it with `iconv -t utf-8`"
    if isinstance(exc, OverflowError):
        return f"a number or date is out of range ({exc}); give a smaller value"
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply (JSON or a query); kg reads at most a few hundred levels"
    return None


def check_argv(argv: list[str]) -> str | None:
    """Why the arguments are refused, or None. Arguments that are not UTF-8 (Python holds their bad bytes as
    lone surrogates, which failed deep inside the first write as an "unexpected failure") are bad input."""
    for i, arg in enumerate(argv, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            try:  # bad bytes as Python holds them; a lone surrogate of another range (an API caller's) shown escaped
                shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            except UnicodeEncodeError:
                shown = arg.encode("utf-8", "backslashreplace").decode("utf-8")
            return (f"argument {i} ({shown[:60]!r}) is not valid UTF-8 text; give UTF-8 text (check the "
                    "shell's locale)")
    return None


def hook_under_runtime(argv: list[str]) -> bool:
    """Whether `argv` runs `kg hook ...` with `--runtime` among the hook's arguments: a runtime reads exit 2 as
    "block" (Codex's Stop makes stderr the next prompt, Claude Code's PostToolUse feeds it to the model), so
    there bad input of any kind, an unknown option or a bad value included (a hook line left from another kg
    version), is one `Error:` line and exit 1."""
    from kg.cli.entry import _position

    at = _position(argv)
    if at is None or argv[at] != "hook":
        return False
    words = argv[at + 1:]
    words = words[:words.index("--")] if "--" in words else words
    return any(w == "--runtime" or w.startswith("--runtime=") for w in words)


_ID_ANY_CASE = re.compile(r"^[\[(<`'\"]*([A-Za-z][A-Za-z0-9]{1,7})(-\d{8}-[0-9A-Za-z]+)[\])>`'\".,;:!?]*$")
_OTHER_PREFIXES = ("PREF", "SCR", "dec", "chg")  # kg/memory/preferences.py, scores.py; kg/lifecycle/cycle.py


def _id_prefixes() -> dict[str, str]:
    """kg's id prefixes by their lower case: entries' upper case (`ERR`), nodes' lower case (`pat`): the
    packaged rules/policy.toml's (a workspace that renames them gets no case folding for its own)."""
    from kg.core.policy import packaged

    rules = packaged("policy")
    known = [*rules["entries"]["prefix"].values(), *rules["nodes"]["prefix"].values(), *_OTHER_PREFIXES]
    return {p.lower(): p for p in known}


def id_case(argv: list[str]) -> list[str]:
    """An id typed in another case (`err-20261201-001`, `[lrn-20261201-002]`, `PAT-20261201-001`) is that id:
    `kg show err-...` answered "no node". Only a whole argument that is one id with one of kg's prefixes changes
    (to the bare id, the prefix in its own case: cli/entry.py's `unwrap_ids` unwraps upper-case ones only), and
    not in `kg log`, whose words are the entry's own text."""
    from kg.cli.entry import invoked

    found = [(i, m) for i, a in enumerate(argv) if (m := _ID_ANY_CASE.match(a))]
    if not found or invoked(argv) == "log":
        return argv
    known, out = _id_prefixes(), list(argv)
    for i, m in found:
        prefix = known.get(m.group(1).lower())
        if prefix is not None:
            out[i] = prefix + m.group(2)
    return out


def run_app(app: typer.Typer, argv: list[str]) -> int:
    """Run the app and return its exit code. Usage errors print the usage and one `Error: ...` line (not a
    box), so every bad input answers the same way: a line starting with `Error:` on stderr, exit 2."""
    from kg.cli.entry import unwrap_ids
    from typer import _click  # typer 0.28 carries its own click

    argv = unwrap_ids(id_case(argv))
    try:
        code = app(args=argv, prog_name="kg", standalone_mode=False)
    except _click.exceptions.ClickException as exc:
        # the message may quote the argument ("No such option: <it>"), and an argument may be a pasted secret
        from kg.redaction.redact import redact_report

        exc.message = redact_report(exc.message)
        if hook_under_runtime(argv):  # one line and 1, never Click's usage block and 2 (cli/hooks.py hook_errors)
            error_line(exc.format_message())
            return 1
        exc.show()  # the usage, then its own `Error:` line
        _said["errors"].append(exc.format_message())
        return exc.exit_code
    except typer.Abort:
        error_line("aborted")
        return 1
    except typer.Exit as exc:
        return exc.exit_code
    return code if isinstance(code, int) else 0


# The workspace a read server holds open (kg/serve/server.py): its commands use it instead of opening their own.
_served: list[Any] = []


def workspace(ctx: typer.Context, *, fallback: bool = False):
    """The workspace the command works in; with `fallback`, on the packaged rules when kg.toml is broken
    (kg.workspace.Workspace: `rules_problem` says what is wrong)."""
    from kg.workspace import open_workspace
    from kg.workspace_root import find_root

    st = state(ctx)
    if _served and st.rules is None and _same_folder(find_root(st.workspace), _served[0].root):
        from kg.core import clock

        clock.use_zone(_served[0].zone)  # the store's, as its open found it (the callback put the mirror's)
        return _served[0]
    ws = open_workspace(st.workspace, rules_dir=st.rules, fallback=fallback)
    if background_possible():  # a read leaves a backlog to the detached applier (QA3 #1: kg/ingest/drain.py)
        ws.apply_behind = lambda: leave_to_applier(ws)
    return ws


def _same_folder(root: Path, served: Path) -> bool:
    """Whether `root` is the served workspace, under its own path or another (a read-only bind mount of it, a
    container's `-v ws:/ws:ro`): a reader there waited for the graph the server held, and failed after the retry
    budget, for as long as the owner kept working (QA11 #8)."""
    import os

    from kg.workspace_root import MARKER

    if root == served:
        return True
    try:
        return os.path.samefile(root / MARKER, served / MARKER)
    except OSError:
        return False


def not_a_file(path: Path, what: str, *, folder_ok: bool = False) -> None:
    """Refuse (bad input) a path that is a FIFO, a device or a socket before anything opens it: opening a FIFO
    with no writer waits forever, and /dev/zero is read without end (`kg ingest`, `kg import trail` hung).
    A path that does not exist is left to the reader, which names it."""
    import stat

    from kg.core.errors import UsageError

    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if stat.S_ISDIR(mode) and not folder_ok:
        raise UsageError(f"{what} {path} is a folder: name one file")
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise UsageError(f"{what} {path} is not a regular file (a FIFO, device or socket); name a file")


def now_of(ctx: typer.Context, local: str | None) -> str | None:
    """The time a command runs at. A `--now` written anywhere on the command line is the global option's (the
    app moves it there: cli/entry.py `hoist_globals`), so a command's own `--now` only ever holds KG_NOW: the global
    value goes first, or an explicit `--now` would lose to KG_NOW (and a bad one pass unnoticed)."""
    return state(ctx).now or local


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
        _said["json"] = True
    elif render is not None:
        text = render(data)
        if text:
            typer.echo(text)


def note(message: str) -> None:
    typer.echo(message, err=True)


def pending_note(ws: Any) -> None:
    """Say on stderr that a read did not wait for every entry logged (its drain ran out of budget)."""
    if getattr(ws, "pending", 0):
        from kg.ingest.drain import last_failure

        if last_failure(ws) is not None:  # the last drain failed (memory/.kg/apply-failed.json): not moments ago
            note(f"Note: {ws.pending} entr{'y' if ws.pending == 1 else 'ies'} wait in the journal, not applied: "
                 "applying them fails (`kg status` says why, `kg doctor` more); not in this answer")
            return
        note(f"Note: {ws.pending} entr{'y' if ws.pending == 1 else 'ies'} logged moments ago "
             f"{'is' if ws.pending == 1 else 'are'} still being applied and not in this answer yet")


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


def apply_after_answer(ws: Any) -> None:
    """Leave the workspace's detached applier to apply what was just journaled, unless one is running or queued
    already (it applies this entry too): see `kg.ingest.background`."""
    from kg.ingest.background import claim_applier, detached_applier

    slot = claim_applier(ws.kg_dir, ws.journal.lane)
    if slot is not None:
        after_answer(lambda: detached_applier(ws, slot))


def leave_to_applier(ws: Any) -> bool:
    """Whether the journal's backlog a read stops short of is applied after it answers: by the detached applier
    this process leaves (as `kg log` does), or by the one running or queued already. False when neither (an
    unwritable workspace, a failed command: nothing would apply it): the read then applies it all itself."""
    from kg.ingest.background import applier_running, claim_applier, detached_applier

    slot = claim_applier(ws.kg_dir, ws.journal.lane)
    if slot is None:
        return applier_running(ws.kg_dir, ws.journal.lane)
    def apply() -> None:
        detached_applier(ws, slot)

    apply.kg_backlog = True  # type: ignore[attr-defined]
    after_answer(apply)
    return True


def run_after_answer(exit_code: int) -> None:
    """Fork once and run the scheduled work in the child, which leaves the caller's terminal and pipes (so a
    hook or a shell waiting for this process's output is not kept waiting). Failures there are silent: the
    work is a drain of acknowledged writes, which the next kg command repeats if it did not happen."""
    import os

    # a failed command's work is dropped (a `kg log` that failed journaled nothing), except a backlog's applier
    # (`leave_to_applier`): its read stopped short of acknowledged entries, whatever the command then said
    work, _after[:] = [job for job in _after if exit_code == 0 or getattr(job, "kg_backlog", False)], []
    if not work:
        return
    import gc

    # A read's closed graph can leave SQLite connections to the search index in reference cycles: a child that
    # collected them later closed their files, and closing any descriptor of a file drops the process's POSIX
    # locks on it, those of the child's own connection too (its applier stopped on "disk I/O error", leaving
    # the backlog a read handed it; QA3 #1). Collected here, they close before the fork, in the parent.
    gc.collect()
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


def export_out(ws: Any, out: Path | None, *, trail: bool = False) -> Path | None:
    """An export's `--out` as a person typed it: confined to the workspace, a relative path taken from it
    (kg/core/paths.py out_path), then refused where kg or agents keep their files (kg/workspace_out.py, the guard
    the Python API shares). `kg export trail` (`trail`) may name the trail file itself."""
    from kg.core.paths import out_path
    from kg.workspace_out import check_out

    target = out_path(out, ws.kg_dir, root=ws.root)
    return None if target is None else check_out(ws, target, trail=trail)
