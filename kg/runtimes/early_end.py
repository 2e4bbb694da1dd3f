"""A runtime's SessionEnd recorded before anything heavy: the hand-over record (`kg.memory.session_ends`) is
written first thing in the console entry, from the payload and memory/.kg/ alone, before typer, the rules and the
workspace are loaded.

Codex kills a SessionEnd hook after its timeout (3 s at most; kg installs 3) and Claude Code cancels the hooks
still running when it exits. The full path named the session and wrote its record 1-2 s into the process on a
loaded machine, so an end killed before that left the session open with no record, and nothing ever ended it
(QA1 #4). Written here, a kill after it leaves a record whose lock is free: the next session start or end finishes
it (`kg.memory.sessions.end_unfinished`). The full path then goes on as before and finds its record written: it
rewrites it, or withdraws it when it hands nothing over (`kg.runtimes.hook_end.hand_over_end`).

Only where the full path surely hands the end over: `kg hook session-end --runtime claude-code|codex` on a
SessionEnd payload, with no `--no-summary`, `--session`, `--json` or KG_HOOK_WAIT=1, and a session id that needs
no redaction rules to be keyed (a UUID, as both runtimes give). Anything else, or anything that goes wrong here,
leaves it all to the full path, which sees the same stdin.
"""

from __future__ import annotations

import io
import json
import os
import sys
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

RUNTIMES = ("claude-code", "codex")
NOT_HANDED = {"--no-summary", "--session", "--json", "--help", "-h"}
LIMIT = 16 * 1024 * 1024  # kg.core.inputs.MAX_PAYLOAD_BYTES: a larger payload is the full path's to refuse


def _option(args: list[str], name: str) -> str | None:
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _root(head: list[str]) -> Path | None:
    named = _option(head, "-w") or _option(head, "--workspace") or os.environ.get("KG_WORKSPACE")
    if named:
        root = Path(named).expanduser().resolve()
        return root if (root / "memory" / ".kg").is_dir() else None
    here = Path.cwd().resolve()
    return next((f for f in (here, *here.parents) if (f / "memory" / ".kg").is_dir()), None)


def _stdin_kept() -> bytes | None:
    """The payload on stdin, read whole, and stdin replaced by the same bytes for the full path. None: no payload
    to read here (a terminal, or more than the full path takes)."""
    stream = sys.stdin
    if stream is None or stream.isatty():
        return None
    raw = stream.buffer.read(LIMIT + 1)
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", errors="surrogateescape")
    return raw if len(raw) <= LIMIT else None


def record(argv: list[str]) -> str | None:
    """Write the hand-over record of the session `kg ARGV` (a runtime's SessionEnd) ends, its lock held by this
    process (and the detached child it forks). The session, or None when this is left to the full path."""
    from kg.cli.entry import _position, invoked

    at = _position(argv)
    if at is None or argv[at] != "hook" or invoked(argv[at + 1:]) != "session-end":
        return None
    head, tail = argv[:at], argv[at + 1:]
    words = tail[:tail.index("--")] if "--" in tail else tail
    runtime = _option(words, "--runtime")
    if (runtime not in RUNTIMES or os.environ.get("KG_HOOK_WAIT") == "1"
            or any(w.split("=", 1)[0] in NOT_HANDED for w in words)):
        return None
    root = _root(head)
    raw = _stdin_kept() if root is not None else None
    if not raw:
        return None
    try:
        payload = json.loads(raw.decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(payload, dict) or payload.get("hook_event_name") != "SessionEnd":
        return None
    from kg.core.paths import is_name
    from kg.memory import session_ends, session_ids

    rid = _option(words, "--runtime-session") or payload.get("session_id")
    if not isinstance(rid, str) or session_ids.may_hold_secret(rid):
        return None  # an id the redaction rules may have to key (`session_ids.runtime_key`): the full path's
    ws = SimpleNamespace(kg_dir=root / "memory" / ".kg")
    key = session_ids.runtime_key(runtime, rid)
    try:
        current = (ws.kg_dir / "current-session").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        current = ""
    current = current if is_name(current) else None
    sid = session_ids.which(current, session_ids.key_of(ws, current), key, session_ids.tied(ws, key))
    transcript = _option(words, "--transcript") or _option(words, "-t") or payload.get("transcript_path")
    transcript = transcript if isinstance(transcript, str) and transcript else None
    when = _option(head, "--now") or os.environ.get("KG_NOW") or datetime.now().astimezone().isoformat()
    if not sid and transcript and transcript != "-":  # no kg session (QA2 #6): its reflection is still recorded
        session_ends.hand_over(ws, session_ends.unstarted(transcript), when, transcript, no_session=True)
        return None
    if not sid or not is_name(sid):
        return None
    session_ends.hand_over(ws, sid, when, transcript)
    return sid


def record_quietly(argv: list[str]) -> None:
    """`record`, any failure left to the full path (which meets it again and says it)."""
    try:
        record(argv)
    except Exception:  # noqa: BLE001 - never the early path's to fail a hook
        pass
