"""A Claude Code session's own kg session, for the agent's shell: one `export KG_SESSION=...` line appended to the
file Claude Code names in `$CLAUDE_ENV_FILE` for a SessionStart hook (runtimes/claude_code/HOOKS_SUMMARY.md: a
SessionStart hook persists environment variables for the session's later Bash commands by appending `export`
lines to it).

Without it, two Claude Code windows on one workspace shared kg's one "current session": the agent's `kg log`
went to whichever session started last, and once one window's session ended, the other's logs went to none and
were missing from its summary. `kg log` (and `kg ingest`) take KG_SESSION as their --session, so each window's
logs land in the session its own start opened. A later start of the same window (/clear, /resume) appends its
own line, and the last export is the one the shell keeps.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

VAR = "CLAUDE_ENV_FILE"


def export_session(session: str | None, environ: dict[str, str] | None = None) -> str | None:
    """Append `export KG_SESSION=<session>` to the file `$CLAUDE_ENV_FILE` names; a note when it cannot (the hook
    goes on: the brief matters more than the line), None when done or when there is nothing to do."""
    env = os.environ if environ is None else environ
    target = env.get(VAR) or ""
    if not session or not target:
        return None
    path = Path(target)
    if not path.is_absolute():
        return f"{VAR} is not an absolute path ({target!r}): KG_SESSION not exported"
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"export KG_SESSION={shlex.quote(session)}\n")
    except OSError as exc:
        return f"could not append KG_SESSION to {VAR} ({exc.strerror or exc}): logs go to the current session"
    return None
