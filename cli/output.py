"""Standard output that cannot be written: `kg log ... >/dev/full`, a file on a full disk, a terminal gone (QA11 #3).

The command's work is done or stopped where it printed; what it printed is lost. Said in one line on stderr, exit 1,
the same whether the command ran here or a read server answered it; not "unexpected failure: OSError: No space left
on device, please report", which a user read as the workspace's disk being full and the log having failed. A reader
that went away (`kg list | head -1`: EPIPE) chose to stop reading: nothing is said, and the exit code is 1, as click
(typer's base) makes it for a command that ran here."""

from __future__ import annotations

import errno
import linecache
import os
import sys
from typing import Any

GONE = (errno.EPIPE,)


def pending_failure(exc: BaseException) -> OSError | None:
    """`exc`, raised by a command, when it is a failed write to standard output: raised where a stream on
    descriptor 1 was written (click's echo, `sys.stdout.write`). An error of the workspace's own disk is not this,
    even when standard output is broken too: kg says it as what it is. (A closed descriptor 1 is /dev/null from the
    start, cli/entry.py `standard_streams`: no file kg opens takes its number.)"""
    if not isinstance(exc, OSError):
        return None
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return exc if tb is not None and _writes_stdout(tb.tb_frame, tb.tb_lineno) else None


def _writes_stdout(frame: Any, line: int) -> bool:
    for value in frame.f_locals.values():
        if hasattr(value, "write") and hasattr(value, "fileno"):
            try:
                if value.fileno() == 1:
                    return True
            except (OSError, ValueError, AttributeError, TypeError):
                pass
    return "sys.stdout" in linecache.getline(frame.f_code.co_filename, line)


def lost(failure: OSError, code: int) -> int:
    """Say that the output was lost (unless its reader went away) and return the exit code. Standard output is
    /dev/null from here on: what is still buffered, an error document of `--json` and Python's own flush at exit
    would each fail again (a second message, or "Exception ignored" and exit 120)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):
        pass
    if failure.errno not in GONE:
        sys.stderr.write(f"Error: {message(failure)}\n")
    return 1 if code == 0 else code


def message(failure: OSError) -> str:
    why = failure.strerror or type(failure).__name__
    return (f"could not write to standard output ({why}), so what the command printed is lost; anything it "
            "saved is kept. Send its output somewhere with room (a terminal, a file on another disk).")


def flush() -> OSError | None:
    """Flush standard output at the end of a command: the error, if it could not be written."""
    try:
        sys.stdout.flush()
    except OSError as failed:
        return failed
    except ValueError:
        pass
    return None
