"""Domain errors. The library knows nothing of the CLI; `kg.cli` turns these into messages and exit codes.

Every message says what was wrong and how to fix it.
"""

from __future__ import annotations

import errno


class KgError(Exception):
    """Base class. `exit_code` is what the CLI exits with: 2 for bad input, 1 for an operational failure."""

    exit_code = 1


class UsageError(KgError):
    """The caller asked for something invalid: bad value, unknown id, unknown type."""

    exit_code = 2


class ArgumentError(UsageError, ValueError):
    """A Python caller's argument is wrong (the analyst's functions: `central(top="x")`): said at the call, naming
    the argument and what it accepts. A ValueError too, so plain Python code catches it as one.

    `cli` is the command line's words for the same mistake, where a command hands its option to the function
    (`--top must be at least 1` for `report(top=0)`): the CLI says that, a notebook the argument's name. The
    functions the commands share raised the CLI's UsageError, so a notebook read a flag it never typed and no
    ValueError (QA8 #2)."""

    def __init__(self, message: str, *, cli: str | None = None):
        super().__init__(message)
        self.cli = cli


class NotFound(UsageError):
    """An id, file or name that does not exist."""


class UnusableFile(UsageError):
    """A file of the workspace kg may not or cannot write (or read): a symlink leading out of the workspace, a
    folder or other non-file where a file belongs, an unreadable file. `path` names it; a job that writes many
    files (`kg cycle`) reports it and skips it, a command that writes only it fails with the message."""

    exit_code = 1  # the workspace's state, not the command typed, is what is wrong: an operational failure

    def __init__(self, message: str, path: str = ""):
        super().__init__(message)
        self.path = path


class FileChanged(UnusableFile):
    """The file changed (a person or an agent wrote it) after kg read it to merge its block in: kg did not
    replace it, so nothing that was written is lost. A caller that can merge again re-reads it and retries; a
    job that writes many files (`kg cycle`) reports it as skipped and the next run brings it up to date."""


class NoWorkspace(UsageError):
    """No workspace was found or named."""


class RulesError(UsageError):
    """A rule file is malformed; the message names the file, the key and the reason."""


class StoreBusy(KgError):
    """Another process held the graph for longer than the retry budget."""


class StoreError(KgError):
    """The graph could not be opened or written."""


class DiskFull(StoreError):
    """The disk holding the graph has less free space than `store.min_free_mb`: nothing was written."""


class TeamGraphBusy(StoreBusy, StoreError):
    """A team graph (FalkorDB) whose writer lock stayed held past the wait, or whose server did not answer: the
    same to a caller that can do without the graph (the session-start brief from files) as a held embedded
    graph (StoreBusy), and still a StoreError to those that report or journal around it."""


class TeamGraphUnreachable(TeamGraphBusy):
    """A team graph whose server refused the connection or did not answer: no writer holds it, so waiting for
    one (`kg.analysis.load(wait=)`) is no advice (QA8 #5: it was given, with wait passed, 0.9 s after the
    refusal); still a TeamGraphBusy to those that do without the graph or journal around it."""


class PoolFull(StoreError):
    """Kùzu's buffer pool (`store.buffer_pool_mb`) cannot hold what the graph needs: a file grown far past its data
    does it. The message says what is kept and what to do (`kg doctor` rebuilds the file compact, or a larger
    pool), in one line: Kùzu's own ("Buffer manager exception: Unable to allocate memory! ...") says neither."""


class GraphUnopenable(StoreError):
    """Kùzu cannot open the graph file (damaged, cut short): `kg doctor --repair` starts a new one and brings back
    what the workspace still holds."""


class SchemaError(KgError):
    """The workspace was made by a newer kg, or a migration failed."""


class NewerGraph(SchemaError):
    """The graph was written by a newer kg (a migration this kg does not know): only upgrading kg opens it; no kg
    command, `kg doctor` included, can do that for it."""


class QueryParameterError(KgError):
    """A named query was run with missing or unknown parameters (a programming error, refused on purpose:
    an unbound `$param` in Kùzu matches every row)."""


def os_failure(exc: OSError) -> str:
    """The message for a failure of the file system (the CLI's, and the MCP server's tool errors)."""
    if exc.errno == errno.ENOSPC:
        where = f" ({exc.filename})" if exc.filename else ""
        if _out_of_inodes(exc.filename):  # (QA11 #9: bytes free, "the disk is full; free some space" misled)
            return (f"the file system has no free inodes left{where}, though it has free space (`df -i`): remove "
                    "files you do not need (a cache, node_modules) and run the command again (nothing half-written "
                    "was kept)")
        return f"the disk is full{where}; free some space and run the command again (nothing half-written was kept)"
    if exc.errno == errno.EISDIR and exc.filename:  # (QA11 #11: a sync tool's or a script's `mkdir -p`)
        return (f"{exc.filename} is a folder where kg keeps a file; move it aside (`mv {exc.filename} "
                f"{exc.filename}.aside`) and run the command again")
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return (f"cannot write {exc.filename or 'to the workspace'}: {exc.strerror}; check the folder's "
                "permissions and that its filesystem is writable")
    return f"{exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}"


def _out_of_inodes(filename: object) -> bool:
    """Whether the file system of `filename` (or of the current folder) has free bytes but no free inodes."""
    import os

    folder = os.path.dirname(os.fspath(filename)) if isinstance(filename, (str, bytes, os.PathLike)) else "."
    try:
        st = os.statvfs(folder or ".")
    except (OSError, ValueError):
        return False
    return st.f_files > 0 and st.f_favail == 0 and st.f_bavail > 0
