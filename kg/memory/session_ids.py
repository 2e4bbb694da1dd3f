"""Which kg session a runtime's session is, and the session numbers given out, kept beside the graph in
`memory/.kg/sessions.json` so that a hook can answer without the graph:

- `runtime`: a runtime's own session id (Claude Code's and Codex's `session_id`, OpenClaw's `sessionId`), as
  `<runtime>:<id>`, to the kg session started for it. A session end names the runtime's session, and kg ends that
  one: OpenClaw's session:end for a session can come after the next one started, and ending "the current one" then
  ended the new session. An entry goes when its kg session is handed to its end.
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
# A session id is kept as its digest when it may be a secret (a key, a password, pasted by mistake or given out
# by a runtime), one way wherever it comes from: `kg log --session`, KG_SESSION, `kg ingest`, `kg reflect`, a
# hook's `--runtime-session` or payload `session_id`. The same id digests to the same key, so the session it
# named is found again; no secret reaches the graph, the files or sessions.json. Secret-like: the redaction rules
# find a secret in it (a provider's key of letters alone too: `AKIA...`, `glpat-...`), or, besides its UUIDs, it
# holds a run of 20 or more letters and digits mixed (a key no rule names). Ids people and runtimes give out stay
# as they are: UUIDs, hex alone (a dashless UUID, a hash), digits alone (a chat's number), words joined by `_`,
# `-` or `:` (`agent:main:main`, `my_session_for_issue_42`).
_UUID = re.compile(r"[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}")
_LONG_RUN = re.compile(r"[A-Za-z0-9+/=]{20,}")
_SHORT_RUN = re.compile(r"[^\s:_.-]{6,}")  # a secret the rules name holds one (echo_min_chars)
_HEX = re.compile(r"[0-9A-Fa-f]+")
MAX_ID = 200  # characters of a runtime's session id kept (it is a key in a JSON file, never a path)
DIGEST = "sha256-"


def _token_like(run: str) -> bool:
    """Letters and digits mixed, not hex alone nor digits alone."""
    return any(c.isdigit() for c in run) and any(c.isalpha() for c in run) and not _HEX.fullmatch(run)


def secret_like(sid: str, redactor: Any = None) -> bool:
    """Whether session id `sid` may be a secret (see above). `redactor`: the workspace's (`ws.rules.redactor`);
    None judges by the form alone. The rules are asked only about an id with a run they could take for a secret,
    so a UUID or a short key costs a hook nothing."""
    rest = _UUID.sub(" ", sid)
    if any(_token_like(run) for run in _LONG_RUN.findall(rest)):
        return True
    return redactor is not None and bool(_SHORT_RUN.search(rest)) and bool(redactor.redact(sid).kinds)


def stored(sid: str, redactor: Any = None) -> str:
    """Session id `sid` as kg keeps it: itself, or its digest when it may be a secret (the same id, the same
    digest). Pure but for the rules it is given."""
    if not secret_like(sid, redactor):
        return sid
    import hashlib

    return DIGEST + hashlib.sha256(sid.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def given(sid: str, redactor: Any) -> str:
    """A kg session id given to kg (`--session`, KG_SESSION, an ingested entry's `session`) as kg keeps it
    (`stored`), checked as a name: it names the summary file."""
    from kg.core.paths import check_name

    return check_name(stored(sid, redactor), "session id")


def runtime_key(runtime: str | None, rid: Any, redactor: Any = None) -> str | None:
    """`<runtime>:<id>` for a runtime's session id (its digest when it may be a secret: `stored`), or None when
    there is none to go by."""
    if not runtime or not isinstance(rid, str):
        return None
    rid = stored("".join(ch for ch in rid.strip() if ch.isprintable())[:MAX_ID], redactor)
    return f"{runtime}:{rid}" if rid else None


def load(ws: Any) -> dict[str, Any]:
    try:
        data = json.loads((ws.kg_dir / FILE).read_bytes())
    except (OSError, ValueError):
        return {"runtime": {}, "numbers": {}}
    if not isinstance(data, dict):
        data = {}
    runtime = data.get("runtime") if isinstance(data.get("runtime"), dict) else {}
    numbers = data.get("numbers") if isinstance(data.get("numbers"), dict) else {}
    return {"runtime": {k: v for k, v in runtime.items() if isinstance(v, str)},
            "numbers": {k: v for k, v in numbers.items() if isinstance(v, int) and not isinstance(v, bool)}}


def save(ws: Any, data: dict[str, Any]) -> None:
    runtime = dict(list(data["runtime"].items())[-KEEP_RUNTIME:])
    numbers = dict(sorted(data["numbers"].items())[-KEEP_DAYS:])
    write_atomic(ws.kg_dir / FILE, json.dumps({"runtime": runtime, "numbers": numbers}, sort_keys=True).encode())


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


def untie(ws: Any, sid: str) -> None:
    """Kg session `sid` is being ended: no runtime session names it any more."""
    data = load(ws)
    kept = {k: v for k, v in data["runtime"].items() if v != sid}
    if len(kept) != len(data["runtime"]):
        data["runtime"] = kept
        save(ws, data)


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
