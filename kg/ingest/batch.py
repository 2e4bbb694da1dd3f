"""Bulk logging: a conversation or a transcript logged in one pass, linked as it goes.

`ws.log` pays, per entry, a journal append with its fsync, an id-file write, a daily-log append and a graph
open to apply it. `log_many` validates and redacts every entry first (nothing is written when one is bad),
then journals them all with one id allocation and one fsync, appends each day's lines to its daily log at
once, and applies the lot in one graph open (the journal drain: transactions of `write.drain_batch`, each
entry created, joined to its pattern and auto-linked in order, exactly as single logs would be). With
`thread`, each entry's journal record names the previous entry of its session (`after`), and the drain joins
them by `led_to` (the turn a turn led to) right after linking it: journaled, so an acknowledged thread is
never lost, and counted with the batch's aggregates (kg/ingest/upkeep.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from kg.core import clock
from kg.core.entries import TooLong, prepare
from kg.core.errors import KgError, UsageError
from kg.ingest import copies, ingested
from kg.ingest.ids_rebuild import with_ids
from kg.memory import logs as files
from kg.memory import session_ids

THREAD_REASON = "the next turn of the conversation"  # the reason on a thread's `led_to` (kg/ingest/apply.py)

_KNOWN = ("kind", "summary", "at", "session")
# A field may be named as `kg log`'s flag is (`error`, `pattern-key`), as the README says any `kg log` field works
_FIELD_OF = {"error": "error_text"}


@dataclass
class Ingested:
    ids: list[str]
    redacted: dict[str, list[str]] = field(default_factory=dict)   # id -> kinds of secret removed
    threaded: int = 0                                              # led_to edges asked for (`after`)
    applied: bool = False
    skipped: list[str] = field(default_factory=list)                # files kg may not write: not copied there
    note: str = ""                                                 # why they are not in the graph yet
    already: dict[str, Any] | None = None                          # this input was journaled before (ingested.py)
    compacted: list[dict[str, Any]] = field(default_factory=list)  # the graph file rebuilt between batches

    def as_dict(self) -> dict[str, Any]:
        out = {"logged": len(self.ids), "ids": self.ids, "redacted": self.redacted, "threaded": self.threaded,
               "applied": self.applied, "note": self.note, "skipped": self.skipped}
        if self.compacted:  # (kg/store/compact.py) bytes before and after each rebuild
            out["compacted"] = self.compacted
        return {**out, "already": self.already} if self.already is not None else out



def learned_field(at: datetime, learned: datetime) -> dict[str, str]:
    """A journal record's `learned`: when kg learned an entry whose own time (`at`, from a transcript or an import)
    is earlier. The entry's age, for decay, counts from then (kg/ingest/apply.py sets its `reinforced_at`), so a first
    import of old history is not expired by the next cycle."""
    return {"learned": learned.isoformat(timespec="seconds")} if learned > at else {}

def read_jsonl(path: Path, where: list[str] | None = None, lines: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """Entries from a JSON-lines file (`-`: standard input, as `kg reflect -` reads it), one object a line (blank
    lines skipped; a byte order mark at the start, as Windows editors save UTF-8, is no part of it); a bad line is
    bad input. `where` gets each entry's `file:line`, for `log_many` to name the line of a bad field; `lines` each
    entry's line as read (the input's fingerprint, kg/ingest/ingested.py)."""
    if str(path) == "-":
        import io
        import sys

        handle, name = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8-sig", newline=None), "stdin"
    else:
        try:
            handle, name = path.open(encoding="utf-8-sig"), str(path)
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        try:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                except ValueError as exc:
                    raise UsageError(f"{name}:{number}: not JSON ({exc.msg}); write one object per line") from None
                if not isinstance(item, dict):
                    raise UsageError(f"{name}:{number}: expected an object such as "
                                     '{"kind": "learning", "summary": "..."}')
                if where is not None:
                    where.append(f"{name}:{number}")
                if lines is not None:
                    lines.append(line)
                yield item
        except UnicodeDecodeError:
            raise UsageError(f"{name} is not UTF-8 text; give JSON lines in UTF-8") from None


def _at(value: Any) -> datetime:
    """An item's own `at`: its refusal names the field (not `--now`), and a year kg cannot write is refused
    here, before anything is acknowledged (clock.YEARS)."""
    return clock.now(value) if isinstance(value, datetime) else clock.parse_time(str(value), what="`at` time")


def _place(number: int, where: Sequence[str] | None) -> str:
    return where[number - 1] if where is not None and len(where) >= number else f"entry {number}"


def log_many(ws: Any, items: Iterable[Mapping[str, Any]], *, now: datetime | str | None = None,
             session: str | None = None, link: bool = True, thread: bool = False,
             apply: bool = True, where: Sequence[str] | None = None, source: str | None = None) -> Ingested:
    """Log every item (`kind`, `summary`, optional `at` and `session`, and any field `ws.log` takes) in one
    pass. Every item is checked before anything is written; an error names the item (1-based), or its place in
    `where` (`read_jsonl`'s `file:line`: a file with blank lines has its third entry on another line).

    `source` is the input's fingerprint (kg/ingest/ingested.py): an input journaled before is not logged again,
    and the answer's `already` says when and what it gave."""
    from kg.workspace_zone import learn

    learn(ws)  # the store's zone before any time is read, when no mirror can be trusted (kg/ingest/writes.py)
    base = clock.now(now)
    default_session = session_ids.given(session, ws.rules.redactor) if session else ws.current_session()
    prepared = []
    for number, raw in enumerate(items, 1):
        try:
            item = {_FIELD_OF.get(k, k.replace("-", "_")) if isinstance(k, str) else k: v for k, v in raw.items()}
            at = _at(item["at"]) if item.get("at") else base
            sid = session_ids.given(item["session"], ws.rules.redactor) if item.get("session") else default_session
            kind = item.get("kind") or "learning"
            p = prepare(ws.policy, ws.rules.redactor, kind, item.get("summary") or "", now=at, session=sid,
                        **{k: v for k, v in item.items() if k not in _KNOWN})
        except TooLong as exc:  # named by the line's own key (`error`, `error_text`), not `kg log`'s flag
            given = next((k for k in raw if isinstance(k, str) and _FIELD_OF.get(k, k.replace("-", "_")) == exc.field),
                         exc.field)
            raise UsageError(f"{_place(number, where)}: {exc.said(f'the field {given!r}')}") from None
        except UsageError as exc:
            raise UsageError(f"{_place(number, where)}: {exc}") from None
        except (TypeError, AttributeError, ValueError) as exc:  # JSON gave a number, list or object for text
            raise UsageError(f"{_place(number, where)}: a field has the wrong type ({exc}); give text (a JSON "
                             "string) wherever `kg log` takes text") from None
        prepared.append((at, p))
    if not prepared:
        return Ingested([])

    def journaled() -> tuple[list[str], int]:
        with ws.journal.locked():
            if source is not None and (before := ingested.seen(ws.kg_dir, source)) is not None:
                already.append(before)
                return [], 0
            ids = ws.journal.allocate_many([(ws.policy.entry_prefix[p.fields["entry_type"]], f"{at:%Y%m%d}")
                                            for at, p in prepared])
            records = [{"op": "log", "id": i, "fields": p.fields, "redacted": list(p.redactions),
                        "link": bool(link), **learned_field(at, base)}
                       for i, (at, p) in zip(ids, prepared, strict=True)]
            threaded = _thread(records) if thread else 0
            daily = [(files.daily_line(ws.policy, p.fields["entry_type"], p.fields.get("category"), p.fields["text"],
                                       at), p.fields.get("session"), at) for at, p in prepared]
            learnings = [{**p.fields, "id": i} for i, (_, p) in zip(ids, prepared, strict=True)]
            # killed past the append, the next holder of the journal lock writes these copies (kg/ingest/copies.py)
            with copies.noted(ws.kg_dir, ws.journal.path, ids, daily, learnings) as note:
                ws.journal.append(records)
                if source is not None:
                    ingested.remember(ws.kg_dir, source, ids, base.isoformat(timespec="seconds"))
                days: dict[str, tuple[datetime, list[tuple[str, str | None]]]] = {}
                for line, session, at in daily:
                    days.setdefault(f"{at:%Y-%m-%d}", (at, []))[1].append((line, session))
                # the journal holds the entries now: a file kg may not write (`check_target`) costs its copy only
                for at, lines in days.values():  # a session's repeats fold
                    note.copy(skipped, files.append_daily_lines, ws.memory, lines, at)
                for learning in learnings:
                    note.copy(skipped, files.append_learning, ws.root, learning)
        return ids, threaded

    skipped: list[str] = []
    already: list[dict[str, Any]] = []
    ids, threaded = with_ids(ws, journaled)  # a damaged ids.json is rebuilt, not the end of the batch
    if already:
        return Ingested([], already=already[0])
    out = Ingested(ids, {i: list(p.redactions) for i, (_, p) in zip(ids, prepared, strict=True) if p.redactions},
                   threaded, skipped=list(dict.fromkeys(skipped)))
    if not apply:
        return out
    try:
        with bulk(ws), ws.store():  # opening drains the journal: every entry applied, linked and threaded, in order
            pass
    except KgError as exc:  # acknowledged: an error here would have the caller log them all a second time
        out.note = f"recorded in the journal; not yet in the graph ({exc}). The next kg command applies them."
        return out
    out.applied = True
    out.compacted = list(ws._last_drain.compacted)
    return out


@contextmanager
def bulk(ws: Any) -> Iterator[None]:
    """Drains inside this block (a bulk log's own) apply in transactions of `write.bulk_batch` records: each
    transaction's fixed cost (commit, keyword counts, the aggregates' upkeep) is shared by more entries. Between
    them the graph file is compacted when it grew past its rule (kg/store/compact.py)."""
    ws._drain_size = ws.policy.bulk_batch
    ws._compact_between = True  # the file grows fastest here: compacted between batches (kg/store/compact.py)
    try:
        yield
    finally:
        ws._drain_size = None
        ws._compact_between = False


def _thread(records: list[dict[str, Any]]) -> int:
    """Name in each record the previous record of the same session (`after`): the drain makes the `led_to`."""
    last: dict[str | None, str] = {}
    made = 0
    for rec in records:
        sid = rec["fields"].get("session")
        if sid in last:
            rec["after"] = last[sid]
            made += 1
        last[sid] = rec["id"]
    return made
