"""L3, the user model: `memory/preferences.json`, its history in the graph, and the USER.md block.

The file is a flat JSON object `{"key": value}` that people and agents read and may edit by hand. kg writes it
atomically and only ever from a file it could parse: if a person broke it, kg says where and refuses to write
(their edit is never lost). Every change is also a `Preference` row in the graph (set, unset, or a hand edit kg
noticed), so drift over time is visible with `kg pref history`.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from kg import clock
from kg.errors import NotFound, UsageError
from kg.journal import write_atomic
from kg.memory import blocks
from kg.memory._common import allocate, jsonable
from kg.memory.readable import preference_text
from kg.text import clean

FILE = "preferences.json"
USER_FILE = "USER.md"
BLOCK = "preferences"
_KEY = re.compile(r"^[\w.\-]{1,64}$", re.UNICODE)
MAX_VALUE = 2000


class BrokenPreferences(UsageError):
    """memory/preferences.json is not a JSON object; kg will not overwrite it."""


def path_of(ws: Any) -> Path:
    return ws.memory / FILE


def load(ws: Any) -> dict[str, Any]:
    """The current preferences. Raises BrokenPreferences, saying where, if the file was broken by hand."""
    path = path_of(ws)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(raw.decode("utf-8"), parse_float=_finite, parse_constant=_no_constant)
    except _NotFinite as exc:
        raise BrokenPreferences(f"{_rel(ws, path)} holds {exc}, a number JSON cannot hold; kg will not "
                                "overwrite it. Fix the value by hand (a finite number or a string)") from None
    except RecursionError:
        raise BrokenPreferences(f"{_rel(ws, path)} is nested too deeply to be preferences; kg will not "
                                "overwrite it. Fix it by hand") from None
    except UnicodeDecodeError:
        raise BrokenPreferences(f"{_rel(ws, path)} is not UTF-8 text; kg will not overwrite it. Fix or move "
                                "the file, then run the command again") from None
    except json.JSONDecodeError as exc:
        raise BrokenPreferences(
            f"{_rel(ws, path)} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); kg will "
            "not overwrite it. Fix it by hand (it must be one JSON object such as {\"tone\": \"concise\"}), "
            "or move it away to start over, then run the command again") from None
    if not isinstance(data, dict):
        raise BrokenPreferences(f"{_rel(ws, path)} must hold one JSON object ({{\"key\": \"value\", ...}}), "
                                f"not a {type(data).__name__}; kg will not overwrite it. Fix it by hand")
    return data


class _NotFinite(ValueError):
    pass


def _finite(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise _NotFinite(text if len(text) <= 40 else text[:37] + "...")
    return value


def _no_constant(text: str) -> float:
    raise _NotFinite(text)


def _rel(ws: Any, path: Path) -> str:
    try:
        return str(path.relative_to(ws.root))
    except ValueError:
        return str(path)


def check_key(key: str) -> str:
    key = clean(key or "", one_line=True)
    if not _KEY.match(key):
        raise UsageError(f"invalid preference key {key!r}: use 1-64 letters, digits, '_', '-' or '.', "
                         "for example answer_style")
    return key


def _encode(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _write(ws: Any, prefs: dict[str, Any]) -> None:
    data = json.dumps(dict(sorted(prefs.items())), ensure_ascii=False, indent=2) + "\n"
    write_atomic(path_of(ws), data.encode("utf-8"))


def _latest(st: Any) -> dict[str, tuple[str, str]]:
    """key -> (action, encoded value) of the newest history row."""
    out: dict[str, tuple[str, str]] = {}
    for row in st.run("memory_pref_history", key=""):
        out[row["key"]] = (row["action"], row["value"])
    return out


def _record(ws: Any, st: Any, key: str, value: str | None, previous: str | None, action: str, at: datetime,
            source: str, session: str | None) -> None:
    st.run("memory_pref_add", id=allocate(ws, "PREF", at), key=key, value=value, previous=previous,
           action=action, at=at, source=source, session=session)


def _sync_hand_edits(ws: Any, st: Any, prefs: dict[str, Any], at: datetime) -> list[str]:
    """Record, as history, any difference between the file and the graph's last known values."""
    latest = _latest(st)
    changed = []
    for key in sorted(set(prefs) | set(latest)):
        action, last = latest.get(key, ("unset", None))
        known = None if action == "unset" else last
        now_value = _encode(prefs[key]) if key in prefs else None
        if known != now_value:
            _record(ws, st, key, now_value, known, "hand-edit" if now_value is not None else "hand-unset",
                    at, "file", None)
            changed.append(key)
    return changed


def set_(ws: Any, key: str, value: Any, *, now: datetime | str | None = None, source: str = "user",
         session: str | None = None) -> dict[str, Any]:
    at = clock.now(now)
    key = check_key(key)
    kinds: list[str] = []
    if isinstance(value, str):
        red = ws.rules.redactor.redact(value)  # the gate, before the value is cleaned and measured
        value, kinds = clean(red.text, one_line=True), list(red.kinds)
        if not value:
            raise UsageError("the preference value is empty; use `kg pref unset KEY` to remove one")
        if len(value) > MAX_VALUE:
            raise UsageError(f"the value is {len(value):,} characters; the limit is {MAX_VALUE:,}")
    session = session or ws.current_session()
    with ws.store() as st:
        prefs = load(ws)  # raises before anything is written if the file is broken
        _sync_hand_edits(ws, st, prefs, at)
        previous = prefs.get(key)
        changed = previous != value
        if changed:
            prefs[key] = value
            _write(ws, prefs)
            _record(ws, st, key, _encode(value), None if previous is None else _encode(previous), "set", at,
                    source, session)
    user_md = render_user_block(ws, prefs)
    return {"key": key, "value": value, "previous": previous, "changed": changed, "at": at.isoformat(),
            "redacted": kinds, "user_md": user_md}


def unset(ws: Any, key: str, *, now: datetime | str | None = None, source: str = "user",
          session: str | None = None) -> dict[str, Any]:
    at = clock.now(now)
    key = check_key(key)
    session = session or ws.current_session()
    with ws.store() as st:
        prefs = load(ws)
        _sync_hand_edits(ws, st, prefs, at)
        if key not in prefs:
            raise NotFound(f"no preference {key!r}: `kg pref list` shows them")
        previous = prefs.pop(key)
        _write(ws, prefs)
        _record(ws, st, key, None, _encode(previous), "unset", at, source, session)
    user_md = render_user_block(ws, prefs)
    return {"key": key, "previous": previous, "at": at.isoformat(), "user_md": user_md}


def get(ws: Any, key: str) -> dict[str, Any]:
    key = check_key(key)
    prefs = load(ws)
    if key not in prefs:
        raise NotFound(f"no preference {key!r}: `kg pref list` shows them")
    return {"key": key, "value": prefs[key]}


def list_(ws: Any) -> list[dict[str, Any]]:
    return [{"key": k, "value": v} for k, v in sorted(load(ws).items())]


def history(ws: Any, key: str | None = None) -> list[dict[str, Any]]:
    """Every change, oldest first. Values are decoded from JSON."""
    with ws.store() as st:
        rows = st.run("memory_pref_history", key=check_key(key) if key else "")
    out = []
    for row in rows:
        r = jsonable(row)
        for field in ("value", "previous"):
            r[field] = None if r[field] is None else json.loads(r[field])
        out.append(r)
    return out


def render_block(prefs: dict[str, Any]) -> str:
    """The USER.md block body: one line per preference, sorted by key. Pure."""
    lines = ["## User Preferences", "", "_Kept by kg from memory/preferences.json (`kg pref set KEY VALUE`)._",
             ""]
    if not prefs:
        lines.append("- (none yet)")
    for key, value in sorted(prefs.items()):
        lines.append(f"- **{key}**: {preference_text(value)}")
    return "\n".join(lines)


def render_user_block(ws: Any, prefs: dict[str, Any] | None = None) -> str:
    """Write the preferences block into USER.md; returns the file's path relative to the workspace. Lines a
    person wrote inside the block are kept and reported on stderr (move them outside the markers)."""
    prefs = load(ws) if prefs is None else prefs
    path = ws.root / USER_FILE
    kept = blocks.render_into(path, BLOCK, render_block(prefs), state_dir=ws.kg_dir)
    if kept:
        import sys

        sys.stderr.write(f"Warning: {USER_FILE}: {len(kept)} line(s) written by hand inside kg's preferences "
                         f"block were kept; move them outside the markers ({kept[0][:60]!r})\n")
    return _rel(ws, path)
