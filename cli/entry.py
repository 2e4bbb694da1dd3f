"""The `kg` console entry: one small hook before the command line is built.

A served read (`kg search`, `inject`, `recall`, `hook session-start`, `show`, `status`, `list`) is first offered to the
workspace's read server (`kg.serve.client`); this module and the client import nothing heavy, so when the
server answers the process never loads typer, Kùzu or kg's command modules. Everything else, and a read no
server answered, runs the full app (`kg.cli.app.main`) as before.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable

# Global options that take a value: skipped when looking for the subcommand's name on the command line.
VALUED = {"--workspace", "-w", "--rules", "--now"}
SERVED = {"search", "inject", "recall", "show", "status", "list"}
SERVED_HOOKS = {"session-start"}


_WRAPPED_ID = re.compile(r"^[\[(<`'\"]*([A-Z][A-Z0-9]{1,7}-\d{8}-[0-9A-Za-z]+)[\])>`'\".,;:!?]*$")


def unwrap_ids(argv: list[str]) -> list[str]:
    """An id copied as the brief prints it (`[ERR-20261201-001]`) or with the sentence's punctuation
    (`ERR-20261201-001.`) is that id, wherever an id is taken: only a whole argument that is one id changes."""
    return [m.group(1) if (m := _WRAPPED_ID.match(a)) else a for a in argv]


def invoked(argv: list[str]) -> str | None:
    """The subcommand named on the command line (after the global options), or None."""
    at = _position(argv)
    return argv[at] if at is not None else None


def _position(argv: list[str]) -> int | None:
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in VALUED:
            i += 2
            continue
        if arg == "--":
            return i + 1 if i + 1 < len(argv) else None
        if not arg.startswith("-"):
            return i
        i += 1
    return None


HOISTED = {"--now", "--workspace", "-w", "--rules"}  # global options a subcommand also takes after its name


def hoist_globals(args: list[str]) -> list[str]:
    """Move the global options `--now`, `-w/--workspace` and `--rules` written after the subcommand's name (as
    `X V` or `--X=V`) to before it, where the root callback reads them: `kg status -w .` failed "No such option:
    -w" where `kg status --now ...` worked, and the README calls them all global. Not past a `--`, and not the
    glued `-wPATH` (an argument such as `-wrong` would be read as a workspace). A value given both before and
    after the subcommand: the later one, as click takes a repeated option's last."""
    at = _position(args)
    if at is None:
        return args
    head, tail, moved = args[: at + 1], [], []
    rest = iter(args[at + 1:])
    for arg in rest:
        if arg == "--":
            tail += [arg, *rest]
            break
        if arg in HOISTED:
            moved += [arg, next(rest, "")]
        elif arg.split("=", 1)[0] in HOISTED - {"-w"} and "=" in arg:
            moved.append(arg)
        else:
            tail.append(arg)
    return [*head[:at], *moved, *head[at:], *tail] if moved else args


def json_asked(argv: list[str]) -> bool:
    """Whether a failure is also said as JSON on stdout (cli/common.py `json_error`): `--json` among the
    arguments (before a `--`), except in `kg hook ... --runtime R`, whose stdout is the runtime's to read in its
    own format (and whose failures are one `Error:` line and exit 1: cli/hooks.py `hook_errors`)."""
    words = argv[:argv.index("--")] if "--" in argv else argv
    if "--json" not in words:
        return False
    at = _position(argv)
    return not (at is not None and argv[at] == "hook"
                and any(w == "--runtime" or w.startswith("--runtime=") for w in words))


def error_document(message: str, code: int) -> str:
    """What `--json` adds on stdout for a failure (`json_asked`): the Error line's message and the exit code.
    (Here, with json imported only when it is written: the read server's client writes it too.)"""
    import json

    return json.dumps({"error": message, "exit_code": code}, ensure_ascii=False, indent=2) + "\n"


def served(argv: list[str]) -> tuple[bool, str | None]:
    """Whether a read server may answer `kg ARGV`, and the workspace named by the global options. Not with
    `--rules` (the server holds the workspace's own rules), help, completion or the version."""
    at = _position(argv)
    if at is None or "_KG_COMPLETE" in os.environ:
        return False, None
    name, head, tail = argv[at], argv[:at], argv[at + 1:]
    if name == "hook":
        sub = invoked(tail)
        if sub not in SERVED_HOOKS:
            return False, None
    elif name not in SERVED:
        return False, None
    ok, workspace = _named(head)
    words = tail[:tail.index("--")] if "--" in tail else tail
    if not ok or "--help" in words or "-h" in words:
        return False, None
    return True, workspace


def _named(head: list[str]) -> tuple[bool, str | None]:
    """The workspace the global options name; False with `--rules` or the version (not served)."""
    workspace = None
    args = iter(head)
    for arg in args:
        if arg in ("--rules", "--version", "-V") or arg.startswith("--rules="):
            return False, None
        if arg in ("-w", "--workspace"):
            workspace = next(args, None)
        elif arg.startswith("--workspace="):
            workspace = arg.split("=", 1)[1]
        elif arg.startswith("-w") and arg != "-w":
            workspace = arg[2:]
    return True, workspace


LOG_KINDS = {"learning", "error", "feature"}  # `kg log KIND` (cli/entries.py, Kind): checked without typer
LOG_FLAGS = {"--no-link", "--json"}  # the options of `kg log` that take no value


def _log_starts_server(argv: list[str]) -> None:
    """(issue 20) An agent's `kg log` starts the workspace's read server (`kg.serve.client.prestart`); not for
    `--wait` (it needs the graph itself), help, or a log line that is plainly a usage error (no KIND or
    SUMMARY), which starts nothing."""
    at = _position(argv)
    if at is None or argv[at] != "log" or "_KG_COMPLETE" in os.environ:
        return
    head, tail = argv[:at], argv[at + 1:]
    ok, workspace = _named(head)
    if not ok or any(a in ("--help", "-h", "--wait") for a in head + tail) or not _log_line_whole(tail):
        return
    from kg.serve import client

    client.prestart(workspace)


def _log_line_whole(tail: list[str]) -> bool:
    """Whether `kg log`'s arguments name a known KIND and a SUMMARY (the options skipped with their values)."""
    words: list[str] = []
    i = 0
    while i < len(tail):
        arg = tail[i]
        if arg == "--":
            words += tail[i + 1:]
            break
        if arg.startswith("-") and arg != "-":
            i += 1 if ("=" in arg or arg in LOG_FLAGS) else 2
            continue
        words.append(arg)
        i += 1
    return len(words) == 2 and words[0] in LOG_KINDS


def _gives_way(argv: list[str]) -> Callable[[str], bool] | None:
    """For a `kg hook session-start`: whether a writer holds the graph (`kg.runtimes.graph_held`), looked at
    before the read server is asked and while a starting one is waited for. A server could only wait for the
    graph lock (`[lock] timeout_seconds`) first; run here, the hook waits `busy_wait_seconds`, then briefs from
    files and journals its session, well within the runtime's hook timeout."""
    at = _position(argv)
    if at is None or argv[at] != "hook" or invoked(argv[at + 1:]) != "session-start":
        return None
    from kg.runtimes.graph_held import by_a_writer

    return by_a_writer


def standard_streams() -> None:
    """Make the three standard streams usable before anything else opens a file. A descriptor closed by the caller (a
    daemon or a hook runner that closed fd 1) is /dev/null: Python had set sys.stdout to None, so the answer's flush
    was a traceback after `kg log` had logged its entry (QA11 #2), and the next file kg opened would have taken the
    number 1 (a print, or a child's output, would have written into it). A stream whose encoding cannot say every
    character (PYTHONIOENCODING=latin-1, a legacy locale) replaces what it cannot, instead of failing the command
    after its write was acknowledged (QA11 #5)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    for name, fd, mode in (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, mode, encoding="utf-8", closefd=False))
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if encoding not in ("utf8", "utf8sig") and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="replace")
            except (ValueError, OSError):
                pass


def utf8_args(argv: list[str]) -> list[str]:
    """Arguments that are UTF-8 bytes, read as such whatever the locale: under LC_ALL=C (with UTF-8 mode off)
    Python decodes them as ASCII, holding each other byte as a lone surrogate, and `kg log learning "ünïcode"` was
    refused as not UTF-8 (QA11 #4). An argument whose bytes are not UTF-8 stays as it is: `check_argv` refuses it."""
    out = []
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            try:
                arg = os.fsencode(arg).decode("utf-8")
            except (UnicodeDecodeError, UnicodeEncodeError):
                pass
        out.append(arg)
    return out


def main() -> None:
    standard_streams()
    sys.argv[1:] = utf8_args(sys.argv[1:])
    # `[ERR-...]` as the brief prints it: the server sees the id; and `kg status -w DIR` is served by DIR's server
    argv = sys.argv[1:] = hoist_globals(unwrap_ids(sys.argv[1:]))
    if "session-end" in argv:  # a runtime's SessionEnd is recorded before anything heavy: it may be killed soon
        from kg.runtimes.early_end import record_quietly

        record_quietly(argv)
    root = None
    ok, workspace = served(argv)
    _log_starts_server(argv)
    if ok:
        from kg.serve import client

        outcome = client.run(argv, workspace, _gives_way(argv))
        if outcome.code is not None:
            raise SystemExit(outcome.code)
        root = outcome.root
    from kg.cli.app import main as run_here

    try:
        run_here()
    except SystemExit as exc:
        if root is not None and exc.code == 0:  # answered here: a server answers the next read
            from kg.serve import client

            client.spawn(root)
        raise
