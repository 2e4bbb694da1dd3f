"""L3, the user model: `memory/preferences.json`, its history in the graph, and the USER.md block.

The file is a flat JSON object `{"key": value}` that people and agents read and may edit by hand. kg writes it
atomically and only ever from a file it could parse: if a person broke it, kg says where and refuses to write
(their edit is never lost). Every change is also a `Preference` row in the graph (set, unset, or a hand edit kg
noticed), so drift over time is visible with `kg pref history`.

This module is the one owner of the file's format. The lifecycle keeps one key in it (`kaizen_kg_learned`, the
rules it promoted as preferences, planned here by `plan_learned`); that key is the lifecycle's, so it is neither
a hand edit in the history nor a second copy in USER.md (the lifecycle's own block there lists those rules). The
USER.md block is written by the one block editor (`kg/lifecycle/blocks.py`): a line a person wrote or changed
inside it is flagged and kept, never overwritten.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from kg.core import clock
from kg.core.errors import NotFound, UnusableFile, UsageError
from kg.core.files import retried, target_problem
from kg.core.text import clean
from kg.ingest.journal import write_atomic
from kg.lifecycle import blocks
from kg.memory._common import allocate
from kg.memory.readable import preference_text
from kg.store import plain

LEGACY_MARKERS = ("<!-- kg:preferences:begin -->", "<!-- kg:preferences:end -->")
_OWN_LINE = re.compile(r"^(## User Preferences|_Kept by kg .*_|- \(none yet\)|- \*\*[^*]+\*\*: .*|)$")
PREF_FIX = "run `kg pref set KEY VALUE --force` to let kg rewrite the block"

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
    """The current preferences. Raises BrokenPreferences, saying where, if the file was broken by hand, and
    UnusableFile if it cannot be read (a QA pass: a folder named preferences.json gave a bare "Is a
    directory")."""
    return _read(ws)[0]


def _read(ws: Any) -> tuple[dict[str, Any], bytes | None]:
    """The preferences and the file's bytes they were read from (None: no file), the `base` a write of them
    is checked against: a person's or another process's write since is never replaced (`_write`)."""
    path = path_of(ws)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}, None
    except OSError as exc:  # a folder of that name, a link loop, no read permission: said as kg's own words
        raise UnusableFile(target_problem(path, root=ws.root) or f"{_rel(ws, path)} cannot be read: "
                           f"{exc.strerror}; let kg read it (chmod u+r) or move it away", str(path)) from None
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
    return data, raw


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


def _write(ws: Any, prefs: dict[str, Any], base: bytes | None) -> None:
    """Replace the file with `prefs`, only if it still holds `base` (what they were read from), else
    FileChanged: a key a person or an agent wrote meanwhile is not lost (the caller reads again, `retried`)."""
    write_atomic(path_of(ws), _dump(dict(sorted(prefs.items()))).encode("utf-8"), base=base)


def _latest(st: Any) -> dict[str, tuple[str, str | None]]:
    """key -> (action, encoded value) of the newest history row; None where it removed the key."""
    out: dict[str, tuple[str, str | None]] = {}
    for row in st.run("memory_pref_history", key=""):
        out[row["key"]] = (row["action"], row["value"] or None)
    return out


def _record(ws: Any, st: Any, key: str, value: str | None, previous: str | None, action: str, at: datetime,
            source: str, session: str | None) -> None:
    st.run("memory_pref_add", id=allocate(ws, "PREF", at), key=key, value=value, previous=previous,
           action=action, at=at, source=source, session=session)


def _sync_hand_edits(ws: Any, st: Any, prefs: dict[str, Any], at: datetime) -> list[str]:
    """Record, as history, any difference between the file and the graph's last known values."""
    latest = _latest(st)
    changed = []
    learned = learned_key(ws)
    prefs = gated(ws, prefs)  # a hand edit's secret is the person's, in their file: kg keeps no copy of it
    for key in sorted(set(prefs) | set(latest)):
        if key == learned:  # the lifecycle's key: its history is the lifecycle's changes, not a hand edit
            continue
        known = latest.get(key, ("unset", None))[1]
        now_value = _encode(prefs[key]) if key in prefs else None
        if known != now_value:
            _record(ws, st, key, now_value, known, "hand-edit" if now_value is not None else "hand-unset",
                    at, "file", None)
            changed.append(key)
    return changed


def gated(ws: Any, prefs: dict[str, Any]) -> dict[str, Any]:
    """`prefs` as kg may copy them (history rows, USER.md): each key and value redacted as a pair
    (`Redactor.redact_pair`: `db_password: X` loses X), a structured value string by string."""
    red = ws.rules.redactor
    out: dict[str, Any] = {}
    for key, value in prefs.items():
        if isinstance(value, str):
            pair = red.redact_pair(key, value)
            out[pair[0].text] = pair[1].text
        else:
            out[red.redact(key).text] = red.redact_value(value)
    return out


def learned_key(ws: Any) -> str:
    """The key the lifecycle keeps its learned preferences under (rules/lifecycle.toml, memory.preferences_key)."""
    from kg.lifecycle.policy import load as load_policy

    return load_policy(ws).memory.preferences_key


def set_(ws: Any, key: str, value: Any, *, now: datetime | str | None = None, source: str = "user",
         session: str | None = None, force: bool = False) -> dict[str, Any]:
    at = clock.now(now)
    key = check_key(key)
    if key == learned_key(ws):
        raise UsageError(f"the key {key!r} is kg's own (the preferences the lifecycle learned); choose another "
                         "key, or `kg status` to see the learned rules")
    red_key, red = ws.rules.redactor.redact_pair(key, value if isinstance(value, str) else "")
    if red_key.kinds:  # a name is not kept redacted: `[REDACTED:...]` is no key, and the secret is never stored
        raise UsageError(f"the preference key holds a secret ({', '.join(red_key.kinds)}); name the preference "
                         "(for example github_token) and keep the secret out of kg")
    kinds: list[str] = []
    if isinstance(value, str):  # the gate, with the key as context (`db_password X`), before cleaning and measuring
        value, kinds = clean(red.text, one_line=True), list(red.kinds)
        if not value:
            raise UsageError("the preference value is empty; use `kg pref unset KEY` to remove one")
        if len(value) > MAX_VALUE:
            raise UsageError(f"the value is {len(value):,} characters; the limit is {MAX_VALUE:,}")
    session = session or ws.current_session()

    def mutate(prefs: dict[str, Any]) -> tuple[tuple[Any, bool], tuple[str, str, str | None, str] | None]:
        previous = prefs.get(key)
        if previous == value:
            return (previous, False), None
        prefs[key] = value
        return (previous, True), (key, _encode(value), None if previous is None else _encode(previous), "set")

    prefs, (previous, changed), pending = _change(ws, mutate, at, source, session)
    user_md, flag = render_user_block(ws, prefs, force=force)
    return {"key": key, "value": value, "previous": previous, "changed": changed, "at": at.isoformat(),
            "redacted": kinds, "user_md": user_md, "flag": flag, "history_pending": pending}


def unset(ws: Any, key: str, *, now: datetime | str | None = None, source: str = "user",
          session: str | None = None) -> dict[str, Any]:
    at = clock.now(now)
    key = check_key(key)
    session = session or ws.current_session()

    def mutate(prefs: dict[str, Any]) -> tuple[Any, tuple[str, None, str, str]]:
        if key not in prefs:
            raise NotFound(f"no preference {key!r}: `kg pref list` shows them")
        previous = prefs.pop(key)
        return previous, (key, None, _encode(previous), "unset")

    prefs, previous, pending = _change(ws, mutate, at, source, session)
    user_md, flag = render_user_block(ws, prefs)
    return {"key": key, "previous": previous, "at": at.isoformat(), "user_md": user_md, "flag": flag,
            "history_pending": pending}


def _change(ws: Any, mutate: Any, at: datetime, source: str, session: str | None) -> tuple[dict[str, Any], Any, bool]:
    """Change the file by `mutate(prefs)` (-> its answer and the history row, None: nothing changed) and record the
    row: in the graph, after the rows waiting and the hand edits, as before; when another process holds the graph
    (or a team graph's writer lock) past the retry budget, in PENDING (True). A team server that cannot be reached is
    said, as every write."""
    from kg.core.errors import StoreBusy, TeamGraphUnreachable

    def step(read: Any, record: Any) -> tuple[dict[str, Any], Any]:
        prefs, base = read()  # raises before anything is written if the file is broken
        answer, row = mutate(prefs)
        if row is not None:
            _write(ws, prefs, base)
            record(*row)
        return prefs, answer

    opened = False
    try:
        with ws.store() as st:
            opened = True  # each try: the rows waiting and the hand edits up to the file it then changes
            prefs, answer = retried(lambda: step(lambda: _sync(ws, st, at),
                                                 lambda *row: _record(ws, st, *row, at, source, session)))
        return prefs, answer, False
    except StoreBusy as exc:
        if opened or isinstance(exc, TeamGraphUnreachable):  # a server that is down is said, as every write's
            raise
    with ws.journal.locked():  # the file and its waiting history row, together
        prefs, answer = retried(lambda: step(lambda: _read(ws), lambda *row: _pend(ws, *row, at, source, session)))
    return prefs, answer, True


# -- the history rows a busy graph could not take yet ----------------------------------------------------------
# Many agents setting preferences at once: the graph is held by one of them at a time, and a set or unset that
# waited past the retry budget (StoreBusy) is acknowledged once preferences.json holds it and its history row is in
# PENDING (both under the journal's lock), as `kg log` is once journaled; the next preference command that holds the
# graph records the rows, in order, each once (its id allocated when it was written), before any hand edit.
PENDING = "preferences.pending.jsonl"
DRAINING = "preferences.draining.jsonl"


def _pend(ws: Any, key: str, value: str | None, previous: str | None, action: str, at: datetime, source: str,
          session: str | None) -> None:
    from kg.memory.logs import append_text

    row = {"id": allocate(ws, "PREF", at), "key": key, "value": value, "previous": previous, "action": action,
           "at": at.isoformat(), "source": source, "session": session}
    append_text(Path(ws.kg_dir) / PENDING, json.dumps(row, ensure_ascii=False) + "\n", sync=True, mode=0o600)


def _sync(ws: Any, st: Any, at: datetime | None) -> tuple[dict[str, Any], bytes | None]:
    """Under the graph: the rows in PENDING (those not already recorded: a replay after a crash), then (unless `at`
    is None: a read of the history) the file's differences from the history as hand edits. The journal's lock is
    held only to take the rows (PENDING renamed to DRAINING: later rows start a new file) and the file they go with,
    not for the graph's work, so the sets of other processes are not held up; DRAINING is removed once recorded, and
    one a crash left is taken first next time. Returns the file as read with the rows ({} and None for a read of
    the history), what a change is then made on (`_change`: written only over those bytes)."""
    path, draining = Path(ws.kg_dir) / PENDING, Path(ws.kg_dir) / DRAINING
    with ws.journal.locked():
        if path.exists():
            _take(path, draining)
        rows = _pending_rows(draining)
        prefs, base = _read(ws) if at is not None else ({}, None)
    if rows:
        have = {r["id"] for r in st.run("memory_pref_history", key="")}
        for row in rows:
            if row["id"] not in have:
                st.run("memory_pref_add", id=row["id"], key=row["key"], value=row["value"], previous=row["previous"],
                       action=row["action"], at=clock.now(row["at"]), source=row["source"], session=row["session"])
    if at is not None:
        _sync_hand_edits(ws, st, prefs, at)
    draining.unlink(missing_ok=True)
    if rows and path.exists():  # rows that came while these were recorded: taken now, not left for later
        _sync(ws, st, None)
    return prefs, base


def record_waiting(ws: Any, st: Any) -> bool:
    """The history rows a busy graph could not take, recorded now by a process that holds it (`kg cycle`: before,
    only the next preference command did, and a workspace whose agents stopped setting preferences kept them waiting
    and out of `kg pref history`'s graph for good). Whether there were any."""
    if not ((Path(ws.kg_dir) / PENDING).exists() or (Path(ws.kg_dir) / DRAINING).exists()):
        return False
    _sync(ws, st, None)
    return True


def _take(path: Path, draining: Path) -> None:
    """PENDING's rows moved to DRAINING; after the rows a crash left there, when it did (each on its own line)."""
    if not draining.exists():
        path.replace(draining)
        return
    left = draining.read_bytes()
    write_atomic(draining, left + (b"\n" if left and not left.endswith(b"\n") else b"") + path.read_bytes())
    path.unlink()


def _pending_rows(path: Path) -> list[dict[str, Any]]:
    """The rows waiting in PENDING; a line a crash tore (the last, unacknowledged) is skipped."""
    try:
        lines = path.read_bytes().splitlines()
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        try:
            row = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue
        if isinstance(row, dict) and {"id", "key", "action", "at"} <= row.keys():
            out.append(row)
    return out


def get(ws: Any, key: str) -> dict[str, Any]:
    key = check_key(key)
    prefs = load(ws)
    if key not in prefs:
        raise NotFound(f"no preference {key!r}: `kg pref list` shows them")
    return {"key": key, "value": prefs[key]}


def list_(ws: Any) -> list[dict[str, Any]]:
    return [{"key": k, "value": v} for k, v in sorted(load(ws).items())]


def history(ws: Any, key: str | None = None) -> list[dict[str, Any]]:
    """Every change, oldest first. Values are decoded from JSON; a removal's value is None. The graph keeps
    it as '' (a Meta row's `value` is never made NULL in the embedded store: kg/store/strings.py), which is no
    JSON (a QA pass: once any key was unset, `kg pref history` failed with JSONDecodeError). An encoded value
    is never '', so '' is read as none."""
    with ws.store() as st:
        _sync(ws, st, None)  # the changes acknowledged while the graph was busy are history too
        rows = st.run("memory_pref_history", key=check_key(key) if key else "")
    out = []
    for row in rows:
        r = plain(row)
        for field in ("value", "previous"):
            r[field] = json.loads(r[field]) if r[field] else None
        out.append(r)
    return out


@dataclass(frozen=True)
class LearnedPlan:
    """How the lifecycle's key in preferences.json changes. action: none, create, update, remove, delete, flag."""

    action: str
    text: str | None
    hash: str
    created_file: bool
    flag: str = ""


def apply_plan(path: Path, plan: blocks.SyncPlan) -> None:
    """Carry out the lifecycle's plan for its learned key (`plan_learned`): preferences.json's one writer is this
    module, the lifecycle's write included."""
    blocks.apply(path, plan)


def plan_learned(text: str | None, key: str, learned: list[dict[str, str]], *, expected_hash: str,
                 created_file: bool, force: bool = False) -> LearnedPlan:
    """The lifecycle's learned preferences under `key` in the file's text (None: no file). Every other key is
    kept, in its order; a hand edit of `key` since kg wrote it (its hash differs) is flagged, not overwritten.
    Pure: the lifecycle's export writes the plan."""
    try:
        data = json.loads(text) if text is not None and text.strip() else {}
    except json.JSONDecodeError as exc:
        return LearnedPlan("flag", None, expected_hash, created_file, f"not valid JSON ({exc.msg}); fix it by hand")
    if not isinstance(data, dict):
        return LearnedPlan("flag", None, expected_hash, created_file, "not a JSON object; fix it by hand")
    current = data.get(key)
    cur_hash = _learned_hash(current) if current is not None else ""
    if not force and expected_hash and cur_hash != expected_hash and current != (learned or None):
        return LearnedPlan("flag", None, expected_hash, created_file,
                           f"a human edited the {key!r} key; edit other keys, or run `kg export memory --force`")
    if learned:
        if current == learned:
            return LearnedPlan("none", text, _learned_hash(learned), created_file)
        data[key] = learned
        return LearnedPlan("create" if text is None else "update", _dump(data), _learned_hash(learned),
                           created_file or text is None)
    if current is None:
        return LearnedPlan("none", text, "", created_file)
    del data[key]
    if created_file and not data:
        return LearnedPlan("delete", None, "", False)
    return LearnedPlan("remove", _dump(data), "", created_file)


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def _learned_hash(value: Any) -> str:
    return blocks.digest(json.dumps(value, ensure_ascii=False, sort_keys=True))


def render_block(prefs: dict[str, Any], skip: str = "") -> str:
    """The USER.md block's inner text: one line per preference, sorted by key (not `skip`, the lifecycle's key,
    whose rules the lifecycle's own block lists). Pure."""
    lines = ["## User Preferences", "", "_Kept by kg from memory/preferences.json (`kg pref set KEY VALUE`)._",
             ""]
    shown = {k: v for k, v in prefs.items() if k != skip}
    if not shown:
        lines.append("- (none yet)")
    for key, value in sorted(shown.items()):
        lines.append(f"- **{key}**: {preference_text(value)}")
    return "".join(line + "\n" for line in lines)


def render_user_block(ws: Any, prefs: dict[str, Any] | None = None, *, force: bool = False) -> tuple[str, str]:
    """Write the preferences block into USER.md through the block editor. Returns the file's path relative to
    the workspace and the flag ('' when written): a block a person edited inside (or removed, or whose markers
    are damaged) is kept as it is and reported on stderr, until they move their text out or pass --force."""
    import sys

    prefs = load(ws) if prefs is None else prefs
    path = ws.root / USER_FILE
    key = f"{USER_FILE}#{BLOCK}"
    try:
        _migrate_legacy(ws, path, key)
        plan = blocks.write_block(path, BLOCK, render_block(gated(ws, prefs), learned_key(ws)),
                                  state_dir=ws.kg_dir, key=key, force=force, fix=PREF_FIX)
    except UnusableFile as exc:  # a link out of the workspace, a folder: preferences.json holds the preference
        sys.stderr.write(f"Warning: {exc} (the preference is kept in {_rel(ws, path_of(ws))})\n")
        return _rel(ws, path), str(exc)
    if plan.action == "flag":
        sys.stderr.write(f"Warning: {USER_FILE}: kg's preferences block was not updated: {plan.reason}\n")
    return _rel(ws, path), plan.reason if plan.action == "flag" else ""


def _migrate_legacy(ws: Any, path: Path, key: str) -> None:
    """A USER.md from an older kg holds `<!-- kg:preferences:begin -->` markers: give them the one block
    format, and remember kg's text as written only if no person changed a line inside (else it is flagged)."""
    text = blocks.read(path)
    begin, end = LEGACY_MARKERS
    if text is None or begin not in text:
        return
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(end) < text.index(begin):
        raise UsageError(f"{USER_FILE}: the old preferences block markers are damaged; keep one {begin} line "
                         f"and one {end} line after it, then run the command again")
    inner = text[text.index(begin) + len(begin):text.index(end)]
    lines = [line.rstrip("\r") for line in inner.split("\n")][1:-1]
    last = _legacy_state(ws.kg_dir)
    ours = lines == last.split("\n") if last is not None else all(_OWN_LINE.match(line) for line in lines)
    new = text.replace(begin, blocks.BEGIN.format(name=BLOCK)).replace(end, blocks.END.format(name=BLOCK))
    new_inner = blocks.inner_of(new, BLOCK) or ""
    blocks.apply(path, blocks.SyncPlan("update", new, None, "", base=text))  # a write since the read: FileChanged
    blocks.save_state(ws.kg_dir, key, {"hash": blocks.digest(new_inner) if ours else "edited-before-upgrade",
                                       "glue": "", "created_file": False})


def _legacy_state(state_dir: Path) -> str | None:
    try:
        data = json.loads((state_dir / blocks.STATE_FILE).read_bytes())
    except (OSError, ValueError):
        return None
    value = data.get(f"{USER_FILE}:{BLOCK}") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None
