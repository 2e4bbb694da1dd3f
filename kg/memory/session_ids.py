"""Which kg session a runtime's session is, and the session numbers given out, kept beside the graph in
`memory/.kg/sessions.json` so that a hook can answer without the graph:

- `runtime`: a runtime's own session id (Claude Code's and Codex's `session_id`, OpenClaw's `sessionId`), as
  `<runtime>:<id>`, to the kg session started for it. A session end names the runtime's session, and kg ends that
  one: OpenClaw's session:end for a session can come after the next one started, and ending "the current one" then
  ended the new session. An entry goes when its kg session is handed to its end.
- `threads`: a runtime's conversation (OpenClaw's sessionKey, as `<runtime>:<key>`) to the runtime session last
  started on it and that session's transcript. OpenClaw ends a session by its daily reset or idle expiry with no
  event: the next session of the same conversation starting is the only sign, so that start ends the one before
  (`follow`).
- `left`: per conversation, the runtime sessions it moved on from (the newest `KEEP_LEFT`). OpenClaw's handler
  refreshes a session's brief in a kg it does not wait for, and the next session's first bootstrap asks for its own
  at once: when the refresh reaches kg last, its start names a session the conversation has left, and taking it for
  the conversation's next one ended the session that runs now and started a third (`left_behind`).
- `ended`: the runtime sessions whose kg session was handed to its end by the runtime (untied), the newest
  `KEEP_RUNTIME`. A conversation's session does not come back after its end (OpenClaw gives the next message a new
  sessionId): a late refresh of one started a session nobody used, and the next start ended it with an empty
  summary. Only a conversation's sessions are taken as over (`_ended`).
- `numbers`: the highest `YYYY-MM-DD-NNN` number given out per day. A session start that finds the graph held by
  another process (the previous session end's reflection) is journaled like a log, with its id decided as it
  answers (`kg.memory.sessions.start_journaled`); it cannot ask the graph which numbers exist, so every start
  notes its number here.

Read and written under the journal's lock (the callers hold it), replaced whole (`write_atomic`). A missing or
unreadable file is an empty one: the graph and the summary files stay the truth for the numbers.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kg.core.files import write_atomic

FILE = "sessions.json"
KEEP_RUNTIME = 256  # runtime sessions remembered (the oldest go first)
KEEP_DAYS = 14  # days whose numbers are remembered
KEEP_LEFT = 8  # runtime sessions a conversation moved on from, remembered per conversation
# A session id is kept as its digest when it may be a secret (a key, a password, pasted by mistake or given out
# by a runtime); the same id digests to the same key, so the session it named is found again, and no secret
# reaches the graph, the files or sessions.json. Every form an older kg stored is kept, so that an upgrade finds
# what it saved:
# - an id given to kg or a transcript's own id (`kg log --session`, KG_SESSION, `kg ingest`, `kg import trail`, a
#   transcript's session id, a hook's payload `session_id` in reflect-state call keys): its digest only when the
#   redaction rules find a secret in it (an older kg stored that one as `[REDACTED:...]`, unusable already); else
#   as it is (`sprint42refactorWeek3x`, a ULID, an OpenAI `thread_...`, `my_session_for_issue_42`).
# - a runtime's session id in sessions.json (`runtime_key`): its digest by the older kg's rule, besides its UUIDs a
#   run of 20 or more of `[A-Za-z0-9_+/=]` with letters and digits mixed, not hex alone (so
#   `agent_main_telegram_direct_12345` keeps the key it was saved under), or when the rules find a secret in it.
# The run lengths stay here, not in rules/: they decide the keys already saved (a changed length would lose them),
# and a hook asks them before it loads any rules.
_UUID = re.compile(r"[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}")
_LONG_RUN = re.compile(r"[A-Za-z0-9_+/=]{20,}")  # the older kg's runtime-key rule, exactly
_SHORT_RUN = re.compile(r"[^\s:_.-]{6,}")  # a secret the rules name holds one (echo_min_chars)
_HEX = re.compile(r"[0-9A-Fa-f]+")
MAX_ID = 200  # characters of a runtime's session id kept (it is a key in a JSON file, never a path)
DIGEST = "sha256-"


def _token_like(run: str) -> bool:
    """Letters and digits mixed, not hex alone nor digits alone."""
    return any(c.isdigit() for c in run) and any(c.isalpha() for c in run) and not _HEX.fullmatch(run)


def may_hold_secret(sid: str) -> bool:
    """Whether session id `sid`, its UUIDs aside, has a run the redaction rules could take for a secret (a short key
    or a UUID has none): only such an id is worth asking the rules about, or keying by digest. Pure, no rules loaded
    (kg/runtimes/early_end.py asks it before anything is imported)."""
    return bool(_SHORT_RUN.search(_UUID.sub(" ", sid)))


def holds_secret(sid: str, redactor: Any) -> bool:
    """Whether the redaction rules (`redactor`: the workspace's, `ws.rules.redactor`; None: no rules) find a secret
    in session id `sid`. They are asked only about an id with a run they could take for a secret (`may_hold_secret`),
    so a UUID or a short key costs a hook nothing."""
    return redactor is not None and may_hold_secret(sid) and bool(redactor.redact(sid).kinds)


def _digest(sid: str) -> str:
    import hashlib

    return DIGEST + hashlib.sha256(sid.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def stored(sid: str, redactor: Any = None) -> str:
    """Session id `sid` given to kg or a transcript's own, as kg keeps it: its digest when the rules find a secret
    in it (the same id, the same digest), else itself. Pure but for the rules it is given."""
    return _digest(sid) if holds_secret(sid, redactor) else sid


def given(sid: str, redactor: Any) -> str:
    """A kg session id given to kg (`--session`, KG_SESSION, an ingested entry's `session`) as kg keeps it
    (`stored`), checked as a name: it names the summary file. A name in another script (`--session 周一-对话`) is
    taken as the safe id it always maps to (`kg.core.paths.name_for`), so the same name finds the same session."""
    from kg.core.paths import check_name

    return check_name(safe_id(stored(sid, redactor)), "session id")


def safe_id(sid: str) -> str:
    """`sid` as it is, or, when it holds characters beyond ASCII (a session named in Chinese), the safe id that name
    maps to (`kg.core.paths.name_for`). Pure."""
    from kg.core.paths import name_for

    return (name_for(sid) or sid) if not sid.isascii() else sid


def runtime_key(runtime: str | None, rid: Any, redactor: Any = None) -> str | None:
    """`<runtime>:<id>` for a runtime's session id (its digest by the older kg's rule or when the rules find a
    secret in it: see above), or None when there is none to go by."""
    if not runtime or not isinstance(rid, str):
        return None
    rid = "".join(ch for ch in rid.strip() if ch.isprintable())[:MAX_ID]
    if any(_token_like(run) for run in _LONG_RUN.findall(_UUID.sub("", rid))) or holds_secret(rid, redactor):
        rid = _digest(rid)
    return f"{runtime}:{rid}" if rid else None


def load(ws: Any) -> dict[str, Any]:
    try:
        data = json.loads((ws.kg_dir / FILE).read_bytes())
    except (OSError, ValueError):
        return {"runtime": {}, "numbers": {}, "threads": {}, "left": {}, "ended": []}
    if not isinstance(data, dict):
        data = {}
    runtime = data.get("runtime") if isinstance(data.get("runtime"), dict) else {}
    numbers = data.get("numbers") if isinstance(data.get("numbers"), dict) else {}
    threads = data.get("threads") if isinstance(data.get("threads"), dict) else {}
    left = data.get("left") if isinstance(data.get("left"), dict) else {}
    return {"runtime": {k: v for k, v in runtime.items() if isinstance(v, str)},
            "numbers": {k: v for k, v in numbers.items() if isinstance(v, int) and not isinstance(v, bool)},
            "threads": {k: v for k, v in threads.items()
                        if isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v)},
            "left": {k: v for k, v in left.items() if isinstance(v, list) and all(isinstance(x, str) for x in v)},
            "ended": [k for k in data.get("ended") or [] if isinstance(k, str)] if isinstance(data.get("ended"), list)
            else []}


def save(ws: Any, data: dict[str, Any]) -> None:
    runtime = dict(list(data["runtime"].items())[-KEEP_RUNTIME:])
    numbers = dict(sorted(data["numbers"].items())[-KEEP_DAYS:])
    threads = dict(list(data.get("threads", {}).items())[-KEEP_RUNTIME:])
    left = {k: v[-KEEP_LEFT:] for k, v in list(data.get("left", {}).items())[-KEEP_RUNTIME:]}
    ended = list(dict.fromkeys(data.get("ended", [])))[-KEEP_RUNTIME:]
    write_atomic(ws.kg_dir / FILE, json.dumps({"runtime": runtime, "numbers": numbers, "threads": threads,
                                               "left": left, "ended": ended}, sort_keys=True).encode())


def tied(ws: Any, key: str | None) -> str | None:
    """The kg session started for the runtime session `key` and not yet handed to its end, or None."""
    return load(ws)["runtime"].get(key) if key else None


def key_of(ws: Any, sid: str | None) -> str | None:
    """The runtime session kg session `sid` was started for (and is still tied to), or None."""
    if not sid:
        return None
    keys = [k for k, v in load(ws)["runtime"].items() if v == sid]
    return keys[-1] if keys else None


def note(ws: Any, sid: str, key: str | None, number: tuple[str, int] | None = None) -> None:
    """Tie runtime session `key` to kg session `sid` (the newest tie of a key wins) and note a number given out."""
    data = load(ws)
    if key:
        data["runtime"].pop(key, None)
        data["runtime"][key] = sid
    if number is not None:
        day, n = number
        data["numbers"][day] = max(n, data["numbers"].get(day, 0))
    save(ws, data)


def untie(ws: Any, sid: str, *, ended: bool = False) -> None:
    """Kg session `sid` is being ended: no runtime session names it any more. `ended`: by its runtime session's end
    (a runtime's end hook, or the next session of its conversation starting), noted in `ended`; not a `kg session
    end` typed in a session that goes on."""
    data = load(ws)
    kept = {k: v for k, v in data["runtime"].items() if v != sid}
    if len(kept) != len(data["runtime"]):
        gone = [k for k in data["runtime"] if k not in kept]
        data["runtime"] = kept
        if ended:
            data["ended"] = [k for k in data["ended"] if k not in gone] + gone
        save(ws, data)


def follow(ws: Any, thread: str, key: str, transcript: str | None, *, noted: bool = True
           ) -> tuple[str | None, str | None]:
    """Runtime session `key` (its transcript `transcript`) is starting on conversation `thread`: noted as the
    thread's latest (unless not `noted`: the caller ends the one before first). The kg session still tied to the
    runtime session that was the thread's latest before, and its transcript, when that was another runtime session:
    OpenClaw started a new session of the conversation (a daily reset, an idle expiry) without ending that one, so
    the caller ends it. (None, None) otherwise."""
    data = load(ws)
    before = data["threads"].get(thread)
    now = [key, transcript or ""]
    if before != now and noted:
        data["threads"].pop(thread, None)
        data["threads"][thread] = now
        if before and before[0] != key:
            moved = [k for k in data["left"].pop(thread, []) if k != before[0]]
            data["left"][thread] = moved + [before[0]]
        save(ws, data)
    if not before or before[0] == key:
        return None, None
    return data["runtime"].get(before[0]), before[1] or None


def left_behind(ws: Any, thread: str, key: str) -> bool:
    """Whether runtime session `key` of conversation `thread` is over: the conversation moved on from it (a later
    one started on it), or its kg session was handed to its end (`ended`). A start naming it now is a late one (the
    handler's refresh of its brief, reaching kg after the next session's start or its own end), and neither ends
    the session that runs now nor starts another. Asked for a conversation's sessions only: Claude Code resumes a
    session after its end (`--resume`), and that start opens a new kg session."""
    data = load(ws)
    latest = data["threads"].get(thread)
    if key in data["runtime"]:
        return False
    return (bool(latest) and latest[0] != key and key in data["left"].get(thread, [])) or _ended(data, key)


def note_ended(ws: Any, key: str) -> None:
    """Runtime session `key` was ended by its runtime's end hook (run in the hook itself, not handed over: `untie`
    notes a handed-over one)."""
    data = load(ws)
    if key in data["runtime"] or (data["ended"] and data["ended"][-1] == key):
        return
    data["ended"] = [k for k in data["ended"] if k != key] + [key]
    save(ws, data)


def _ended(data: dict[str, Any], key: str) -> bool:
    """A conversation's runtime session (on a thread, now or before) whose end was handed over. Claude Code's and
    Codex's sessions are on none: one resumed after its end (`--resume`, a /clear keeping its id) is started anew
    and ended again, and a start that tied nothing (killed at its timeout, a team server down) leaves its end to
    reflect as a session kg never saw."""
    if key not in data["ended"]:
        return False
    return any(v[0] == key for v in data["threads"].values()) or any(key in keys for keys in data["left"].values())


def was_ended(ws: Any, key: str | None) -> bool:
    """Whether conversation session `key`'s kg session was handed to its end and no session is tied to it since
    (`_ended`): a second end naming it (OpenClaw's command:new and then its session:end) has nothing left to end
    or reflect on."""
    if not key:
        return False
    data = load(ws)
    return key not in data["runtime"] and _ended(data, key)


def highest(ws: Any, day: str) -> int:
    return load(ws)["numbers"].get(day, 0)


def which(current: str | None, current_key: str | None, key: str | None, mine: str | None) -> str | None:
    """The kg session a runtime's session start goes on with, or its end ends; None: a new one, or none. Pure.

    `key`: the runtime session starting or ending; `mine`: the open kg session tied to it; `current`: the
    current kg session (when open); `current_key`: the runtime session that one was started for. The session tied
    to the runtime session named wins (a resume, a compaction; an end). Else the current one, unless it belongs to
    another runtime session: OpenClaw's next session can start before the last one ended, and a session end for a
    session kg ended already, or never saw, must not end the one that runs now. Without a runtime id (a typed `kg`
    command, an older hook line) it is the current one, as before."""
    if mine:
        return mine
    if current and (key is None or current_key is None or current_key == key):
        return current
    return None
