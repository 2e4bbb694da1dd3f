"""What reflection and the live hooks have already logged, so that each real failure is one event.

`memory/.kg/reflect-state.json` holds two things, changed only under an exclusive lock
(`memory/.kg/reflect-state.lock`) and written atomically:
- `seen`: a fingerprint per logged finding (a tool call's id within its session, or a hash of what was said
  where) → the entry id. The live hook records the call id of the failure it logged, within the runtime's
  session (the payload's session_id) and the kg session it logged into; reflection skips every failure whose
  call id is there within the transcript's session or the kg session it reflects into, and every user finding
  it logged before, whatever file it is found in again (a resumed session).
- `cursors`: per transcript (its runtime and session id, else its path), the last line reflected on and a hash
  of its first line. Reflecting again, or after a resume, adds only what lies past the cursor. With them, the
  file's path and size and where the next reflection resumes reading (`kg.reflect.window`); a cursor written
  before kg kept those only makes the next reflection read the whole file.
- `repeats`: how often the live hook logged a failure of one pattern within one session (a hash of the two ->
  the count), so the failure that recurs there is raised to the priority a reflection of the same transcript
  gives it (rules/errors.toml `[priority] repeat`, from `repeat_threshold` on).
- `pending`: what a reflection is about to log (fingerprint -> the entry's session, time, text and details),
  saved before its first write and emptied with its last. A reflection killed in between (the entries are in the
  journal, the fingerprints not yet here) leaves it behind: the next one looks each up in the graph by what it
  says, where and when (`kg.reflect.apply._logged_before`), and logs only what is not there.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg.ingest.journal import write_atomic

FILE = "reflect-state.json"


@dataclass
class State:
    seen: dict[str, str] = field(default_factory=dict)
    cursors: dict[str, dict[str, Any]] = field(default_factory=dict)
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    repeats: dict[str, int] = field(default_factory=dict)
    changed: bool = False
    save: Any = None  # under `locked`: writes the state now (before the first entry of a run is logged)

    def record(self, fingerprint: str, entry: str) -> None:
        self.seen[fingerprint] = entry
        self.changed = True

    def repeat(self, session: str | None, pattern_key: str | None) -> int:
        """Count one more failure of `pattern_key` in `session` (the live hook's); the count, this one included."""
        if not pattern_key:
            return 1
        key = fingerprint("repeat", session, pattern_key)
        self.repeats[key] = n = int(self.repeats.get(key, 0)) + 1
        self.changed = True
        return n

    def cursor(self, key: str | None, head: str) -> int:
        """Lines already reflected on in this transcript (0 when it is new or its first line changed)."""
        c = self.cursors.get(key or "")
        return int(c.get("line", 0)) if c and c.get("head") == head else 0

    def advance(self, key: str | None, head: str, line: int, window: dict[str, Any] | None = None) -> None:
        """Past `line` now; `window`: where the next reflection resumes reading (with the file's path and size).
        Never back: a reflection that read less (two at once) leaves the cursor of the one that read more."""
        if not key or line < self.cursor(key, head):
            return
        new = {"head": head, "line": line, **(window or {})}
        if new != self.cursors.get(key):
            self.cursors[key] = new
            self.changed = True

    def window_of(self, path: str) -> dict[str, Any] | None:
        """The cursor of the file at `path` that says where to resume reading it (the furthest, when the file was
        reflected on under more than one key: an aider history names itself by its last chat)."""
        found = [c for c in self.cursors.values() if isinstance(c, dict) and c.get("path") == path
                 and {"at", "found", "errors"} <= c.keys()]
        return max(found, key=lambda c: int(c.get("line", 0)), default=None)


def _folder(ws: Any) -> Path:
    return Path(ws.memory) / ".kg"


def read(ws: Any) -> State:
    """The state as it is now (no lock: a reader may see the state just before a concurrent write)."""
    path = _folder(ws) / FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
        return State()
    return State(dict(data.get("seen") or {}), dict(data.get("cursors") or {}), dict(data.get("pending") or {}),
                 dict(data.get("repeats") or {}))


@contextmanager
def locked(ws: Any) -> Iterator[State]:
    """The state under an exclusive lock; written back (atomically) if changed."""
    folder = _folder(ws)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "reflect-state.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            state = read(ws)

            def save() -> None:
                doc: dict[str, Any] = {"seen": state.seen, "cursors": state.cursors}
                if state.pending:
                    doc["pending"] = state.pending
                if state.repeats:
                    doc["repeats"] = state.repeats
                write_atomic(folder / FILE, (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode("utf-8"))
                state.changed = False

            state.save = save
            yield state
            if state.changed:
                save()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def fingerprint(*parts: Any) -> str:
    """A tool call's id as it is; anything else hashed."""
    if len(parts) == 1 and isinstance(parts[0], str) and parts[0]:
        return "call:" + parts[0]
    return "h:" + hashlib.sha256("\x1f".join(str(p or "") for p in parts).encode()).hexdigest()[:16]


def call_keys(call_id: str, *sessions: Any) -> tuple[str, ...]:
    """The fingerprints of a tool call's id within each session that names it (a runtime's own session id, a kg
    session): a call id is unique only within one conversation (simple agents number them `call_1`, `call_2`
    ... in every one), so the same id in another session is another call. Without any session: the id alone."""
    named = [str(s).strip()[:200] for s in sessions if isinstance(s, str) and s.strip()]
    return tuple(dict.fromkeys(f"call:{s}:{call_id}" for s in named)) or (fingerprint(call_id),)


def head_of(path: str) -> str:
    """A hash of a transcript's first line: a different file under the same name starts from 0."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline(65536)
    except OSError:
        return ""
    return hashlib.sha256(first).hexdigest()[:16]
