"""Plain files kg writes beside the graph: the daily log and the `.learnings/` copies. This module is their
one writer.

Both are renderings for people and for agents that read markdown; the graph is the source of truth. A daily
log is only ever appended. A `.learnings/*.md` file is appended at each `kg log` and brought up to date by
`kg export trail`; it is shared with the people and agents who write entries there by hand (the seed's
convention), so each entry kg writes ends with a mark holding the hash of what kg wrote
(`<!-- kaizen-kg:entry HASH -->`). The export rewrites an entry only while its text still has that hash; an
entry a human edited (or wrote) is kept byte for byte and reported, and every byte outside kg's entries stays.
An entry a human deleted stays deleted: kg notes the id of every entry it writes into a `.learnings` file
(`memory/.kg/learnings-written`, appended beside the entry), and the export writes again only entries it
never wrote, or every entry of a file that was removed whole.

A repeat (the same entry again in the same session and day: an agent retrying a failing command) is folded into
the line or entry it repeats rather than written again: the daily-log line gets a count after its icon
(`### ❌×3 10:35 - Error: ...`; which lines a session wrote today is kept in `memory/.kg/repeats/DAY`), and the
`.learnings` entry a `- Repeats:` line naming each repeat's id and time. The graph keeps every event. Only
kg's own, unedited text is folded into; otherwise the repeat is written as before.
"""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from kg.core.errors import UnusableFile
from kg.core.files import check_folder, check_target, make_folder, retried, write_atomic
from kg.core.policy import Policy
from kg.core.text import slugify
from kg.lifecycle.blocks import digest
from kg.memory.repeats import first_lines, fold_daily, fold_learning, hm, repeat_key, repeats_line

LEARNINGS_DIR = ".learnings"
LEARNINGS_FILES = {"learning": "LEARNINGS.md", "error": "ERRORS.md", "feature": "FEATURE_REQUESTS.md"}
LEARNINGS_TITLES = {"learning": "Learnings", "error": "Errors", "feature": "Feature Requests"}
ENTRY_MARK = "<!-- kaizen-kg:entry {hash} -->"
SEPARATOR = "\n---\n\n"
_MARK = re.compile(r"^<!-- kaizen-kg:entry ([0-9a-f]{16}) -->$")
_ENTRY_HEAD = re.compile(r"^##\s*\[([A-Za-z]+-\d{8}-[0-9A-Za-z]+)\]")
WRITTEN = Path("memory") / ".kg" / "learnings-written"  # ids of the entries kg wrote into .learnings, a line each
REPEATS = Path(".kg") / "repeats"  # under memory/: per day, `key<TAB>HH:MM` of each session's first daily-log line
_DAILY = re.compile(r"^### (\S+?)(?:×(\d+))? (\d{2}:\d{2}) - (.*)$")
DAILY_LINE = _DAILY  # a daily-log line: icon, repeat count, HH:MM, text (kg.ingest.copies reads it too)


def copy_or_note(skipped: list[str], write: Any, *args: Any, **kwargs: Any) -> Any:
    """An entry's readable copy written by `write` (its result), or None with the reason added to `skipped` when
    the file is one kg may not write (`check_target`): the journal already holds the entry, so that costs the copy
    only, never the entry. (A copy that cannot be written now, a full disk: kg/ingest/copies.py `Note.copy`.)"""
    try:
        return write(*args, **kwargs)
    except UnusableFile as exc:
        skipped.append(str(exc))
        return None


def append_text(path: Path, text: str, *, header: str = "", sync: bool = False, mode: int = 0o644) -> None:
    """Append with O_APPEND, so concurrent writers never interleave inside one write (`sync`: fsync'd before it
    returns, for what is acknowledged on it). An append follows a symlink as a replace does, so it passes the same
    check (`check_target`)."""
    check_target(path)  # before its folder is made: a linked folder on the way may lead out
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, mode)
    try:
        before = os.fstat(fd).st_size
        whole = (header + text if header and before == 0 else text).encode("utf-8")
        left = memoryview(whole)
        try:
            while left:  # a nearly full disk takes part of a write and says nothing: the rest fails, or goes
                left = left[os.write(fd, left):]
        except OSError:
            if left.nbytes < len(whole) and os.fstat(fd).st_size == before + len(whole) - left.nbytes:
                os.ftruncate(fd, before)  # no torn line is left (unless another writer appended after it)
            raise
        if sync:
            os.fsync(fd)
    except OSError as exc:  # (a write on a descriptor names no file: the message would not say which)
        exc.filename = exc.filename or str(path)
        raise
    finally:
        os.close(fd)


def daily_log_path(memory: Path, at: datetime) -> Path:
    return memory / f"{at:%Y-%m-%d}.md"


def daily_line(policy: Policy, kind: str, category: str | None, summary: str, at: datetime) -> str:
    """`### ❌ 10:35 - Error: brief description`, the seed's format."""
    keys = [f"{kind}.{category}", kind] if category else [kind]
    icon = next((policy.log_icon[k] for k in keys if k in policy.log_icon), "💡")
    label = next((policy.log_label[k] for k in keys if k in policy.log_label), "")
    text = f"{label}: {summary}" if label else summary
    return f"### {icon} {at:%H:%M} - {text}\n"


def append_daily(memory: Path, line: str, at: datetime, *, session: str | None = None) -> Path:
    """Append `line` (one or more lines) to the day's log; with `session`, a line that repeats one the session
    wrote earlier today folds into it as a count instead."""
    return append_daily_lines(memory, [(line, session)], at)


def append_daily_lines(memory: Path, lines: list[tuple[str, str | None]], at: datetime) -> Path:
    """Append each (line, session) to the day's log, folding a session's repeats (see the module's note). Under
    a lock on the log file: a fold rewrites it, and no append may land in the copy it replaces."""
    path = daily_log_path(memory, at)
    make_folder(path.parent)
    index = memory / REPEATS / f"{at:%Y-%m-%d}"
    with _locked_log(path) as fd:
        first = first_lines(index) if any(s for _, s in lines) else {}
        text: str | None = None  # the file's text once a fold needs it
        out: list[str] = []
        noted: list[str] = []
        for line, session in lines:
            m = _DAILY.match(line.rstrip("\n")) if session and line.count("\n") <= 1 else None
            if m is None:
                out.append(line)
                continue
            key = digest(f"{session}\x00{m.group(1)}\x00{m.group(4)}")
            if key in first:
                if text is None:
                    text = os.pread(fd, os.fstat(fd).st_size, 0).decode("utf-8", "surrogateescape") + "".join(out)
                    out = []
                folded = fold_daily(text, m.group(1), first[key], m.group(4))
                if folded is not None:
                    text = folded
                    continue
            first[key] = m.group(3)
            noted.append(f"{key}\t{m.group(3)}\n")
            out.append(line)
        if noted:  # before the lines: killed between the two, a repeat finds no line to fold into and is written
            _prune_index(memory / REPEATS, at)
            append_text(index, "".join(noted))
        header = f"# {at:%Y-%m-%d}\n\n"
        if text is not None:
            data = text + "".join(out)
            write_atomic(path, (data if data.startswith("# ") or not data else header + data).encode(
                "utf-8", "surrogateescape"))
        elif out:
            data = "".join(out)
            os.write(fd, ((header if os.fstat(fd).st_size == 0 else "") + data).encode("utf-8"))
    return path


def _prune_index(folder: Path, at: datetime) -> None:
    """Only today's and yesterday's indexes are kept (a repeat is folded only within its day)."""
    try:
        old = sorted(p for p in folder.iterdir() if p.name < f"{at:%Y-%m-%d}")[:-1]
    except FileNotFoundError:
        return
    for stale in old:
        stale.unlink(missing_ok=True)


class _locked_log:
    """The day's log open for appending under an exclusive lock, reopened if a fold replaced the file while
    this process waited for the lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = -1

    def __enter__(self) -> int:
        check_target(self.path)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                self.fd = fd
                return fd
            os.close(fd)

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


# A line of an entry's text (its details, an error's output) that a reader of the file would take for its structure:
# a heading (`## [LRN-…] …` is an entry, `### Summary` a section, any `## ` ends one), a separator (`---`), kg's
# mark. Written with a backslash before it (Markdown's own escape: it still reads as the text), one more when it has
# some already, so the import takes exactly one off (`field_text`) and gets the text back as it was logged.
_STRUCTURE = r"\\*(?:##|\s*---\s*$|<!-- kaizen-kg:entry )"  # (`$`: the line's end, whatever ends it)
_AS_STRUCTURE = re.compile(rf"^(?={_STRUCTURE})")
_ESCAPED = re.compile(rf"^\\(?={_STRUCTURE})")


def field_lines(value: str) -> str:
    """A field's text as an entry of a `.learnings` file holds it (see `_STRUCTURE`). Pure."""
    return "".join(_AS_STRUCTURE.sub("\\\\", line, count=1) for line in value.splitlines(keepends=True))


def field_text(value: str) -> str:
    """A field's text as it was logged, from an entry of a `.learnings` file (`field_lines` undone). Pure."""
    return "".join(_ESCAPED.sub("", line, count=1) for line in value.splitlines(keepends=True))


def learnings_entry(entry: dict[str, Any]) -> str:
    """A full structured entry in the seed's `.learnings/*.md` format, kg's mark and the separator included."""
    return learnings_region(entry) + SEPARATOR


def learnings_region(entry: dict[str, Any]) -> str:
    """What kg owns of an entry: from its `## [ID]` heading to its mark line, inclusive. Pure."""
    body = _learnings_body(entry)
    return body + ENTRY_MARK.format(hash=digest(body)) + "\n"


def _learnings_body(entry: dict[str, Any]) -> str:
    kind = entry["entry_type"]
    title = entry.get("category") or kind
    lines = [f"## [{entry['id']}] {title}:{_slug(entry['text'])}", ""]
    lines += [f"**Logged**: {entry['created_at']}", f"**Priority**: {entry['priority']}",
              f"**Status**: {entry['status']}", f"**Area**: {entry.get('area') or ''}", "",
              "### Summary", field_lines(entry["text"]), ""]
    if kind == "error":
        sections = [("Error", entry.get("error_text")), ("Context", entry.get("context")),
                    ("Details", entry.get("details")), ("Suggested Fix", entry.get("action"))]
    elif kind == "feature":
        sections = [("User Context", entry.get("user_context")),
                    ("Complexity Estimate", entry.get("complexity")), ("Details", entry.get("details")),
                    ("Suggested Implementation", entry.get("action"))]
    else:
        sections = [("Details", entry.get("details")), ("Suggested Action", entry.get("action"))]
    for heading, body in sections:
        if body:
            lines += [f"### {heading}", field_lines(body), ""]
    meta = [("Source", entry.get("source")), ("Related Files", ", ".join(entry.get("files") or [])),
            ("Tags", ", ".join(entry.get("tags") or [])), ("Pattern-Key", entry.get("pattern_key")),
            ("Session", entry.get("session"))]
    if kind == "error":
        meta.append(("Reproducible", entry.get("reproducible")))
    if kind == "feature":
        meta.append(("Frequency", entry.get("frequency")))
    lines.append("### Metadata")
    lines += [f"- {key}: {value}" for key, value in meta if value]
    repeats = entry.get("repeats") or []
    if repeats:  # always the last line: a fold at `kg log` time rewrites only it
        lines.append(repeats_line(repeats))
    return "\n".join(lines) + "\n"


def _slug(text: str) -> str:
    """The title after `category:` in an entry's heading: its first six words, snake_case (the seed's form)."""
    return "_".join(slugify(text).split("-")[:6]) or "entry"


def append_learning(root: Path, entry: dict[str, Any]) -> Path | None:
    """Append one entry to its `.learnings/` file, when the workspace keeps that folder (called under the
    journal lock, as `write_learnings` is, so the two never interleave)."""
    folder = root / LEARNINGS_DIR
    if not folder.is_dir():
        return None
    kind = entry["entry_type"]
    path = folder / LEARNINGS_FILES[kind]
    check_target(path)  # before a fold reads it and rewrites its tail in place
    _undo_torn(folder)
    folded = fold_learning(path, entry)
    if folded is not None:
        _rewrite_from(path, *folded)
    else:
        append_text(path, learnings_entry(entry), header=f"# {LEARNINGS_TITLES[kind]}\n\n")
    _note_written(root, [entry["id"]])
    return path


UNDO_PREFIX = ".kg-undo."  # beside a .learnings file while a fold rewrites its tail (`_rewrite_from`)


def _rewrite_from(path: Path, at: int, data: bytes) -> None:
    """Replace `path` from byte `at` on by `data`, in place: a fold costs the file's last entries, not the whole
    file (1.6 s for a 45 MB ERRORS.md). The bytes replaced are first kept beside it (`UNDO`, written atomically),
    so a process killed mid-write leaves a file `_undo_torn` puts back as it was; the repeat is in the graph."""
    undo = path.with_name(UNDO_PREFIX + path.name)
    with open(path, "r+b") as fh:
        fh.seek(at)
        write_atomic(undo, b"%d\n" % at + fh.read())
        fh.seek(at)
        fh.write(data)
        fh.truncate()
        fh.flush()
        os.fsync(fh.fileno())
    undo.unlink()


def _undo_torn(folder: Path) -> None:
    """Put back what a fold killed mid-write had replaced (see `_rewrite_from`)."""
    for undo in folder.glob(UNDO_PREFIX + "*"):
        raw = undo.read_bytes()
        at, _, old = raw.partition(b"\n")
        target = folder / undo.name[len(UNDO_PREFIX):]
        check_target(target)
        with open(target, "r+b") as fh:
            fh.seek(int(at))
            fh.write(old)
            fh.truncate()
            fh.flush()
            os.fsync(fh.fileno())
        undo.unlink()


def _note_written(root: Path, ids: Iterable[str]) -> None:
    """Remember that kg wrote these entries into `.learnings` (so a person's deletion of one sticks)."""
    lines = "".join(f"{i}\n" for i in ids)
    if lines:
        append_text(root / WRITTEN, lines)


def learning_in_file(root: Path, entry: dict[str, Any]) -> bool:
    """Whether the entry's `.learnings` file names its id: written, or a repeat folded into an earlier entry (a
    copy whose id could not be noted after it was written, the disk full, is there all the same)."""
    try:
        path = root / LEARNINGS_DIR / LEARNINGS_FILES[entry["entry_type"]]
        return f"[{entry['id']}]".encode() in path.read_bytes()
    except (OSError, KeyError):
        return False


def learnings_written(root: Path) -> set[str]:
    try:
        return set((root / WRITTEN).read_text("utf-8", "replace").split())
    except FileNotFoundError:
        return set()


# -- `kg export trail`: bring the files up to date without losing a human's text ----------------------------------
@dataclass(frozen=True)
class Segment:
    """One `## [ID]` entry of a `.learnings` file: `text[start:end]` is kg's region when `mark` is set (the
    heading to the mark line), else the entry up to the next `## ` heading. `intact`: the region still has the
    hash its mark names (kg wrote it and no one edited it since)."""

    id: str
    start: int
    end: int
    mark: bool
    intact: bool


def segments(text: str) -> Iterator[Segment]:
    """The entries of a `.learnings` file, in order. Pure."""
    open_at: tuple[str, int] | None = None
    pos = 0
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if open_at is not None:
            found = _MARK.match(bare)
            if found:
                entry_id, start = open_at
                yield Segment(entry_id, start, pos + len(line), True, digest(text[start:pos]) == found.group(1))
                open_at = None
                pos += len(line)
                continue
            if bare.startswith("## "):
                yield Segment(open_at[0], open_at[1], pos, False, False)
                open_at = None
        head = _ENTRY_HEAD.match(bare)
        if head and open_at is None:
            open_at = (head.group(1), pos)
        pos += len(line)
    if open_at is not None:
        yield Segment(open_at[0], open_at[1], len(text), False, False)


@dataclass
class LearningsReport:
    written: list[str] = field(default_factory=list)
    appended: int = 0
    updated: int = 0
    kept: list[dict[str, str]] = field(default_factory=list)  # {file, id, reason}: entries kg did not rewrite

    def as_dict(self) -> dict[str, Any]:
        return {"appended": self.appended, "updated": self.updated, "kept": self.kept}


EDITED = "edited by hand since kg wrote it: kept as it is"
UNMARKED = "written by hand (no kg mark): kept as it is"
DELETED = "deleted by hand since kg wrote it: not written again"
NOT_IN_GRAPH = "not in kg's graph (written by hand or elsewhere): kept as it is; `kg import trail` of this file adds it"


def merge_learnings(current: str | None, title: str, entries: Iterable[dict[str, Any]], *, file: str = "",
                    report: LearningsReport | None = None, deleted: Iterable[str] = (),
                    known: Iterable[str] = ()) -> str:
    """The file's new text: kg's untouched entries brought up to date, entries kg never wrote appended,
    everything else (a human's entries and edits, text between entries) byte for byte. `deleted`: ids kg wrote
    into this file before; one no longer in it was deleted by a person and is not written again (a file
    that does not exist gets every entry). An entry whose id no entry of the graph has (`entries`, and `known`:
    the graph's entries of the other files) is reported, as it lives only in this file. Pure apart from the
    report."""
    report = report if report is not None else LearningsReport()
    gone = set(deleted) if current is not None else set()
    wanted = {e["id"]: e for e in entries}
    text = current if current is not None else f"# {title}\n\n"
    covered = _fold_repeats(wanted, {seg.id for seg in segments(text)}, gone)
    out: list[str] = []
    pos = 0
    seen: set[str] = set()
    graph = set(wanted) | set(known)
    for seg in segments(text):
        if seg.id not in graph and seg.id not in seen:
            report.kept.append({"file": file, "id": seg.id, "reason": NOT_IN_GRAPH})
            seen.add(seg.id)
        if seg.id in seen or seg.id not in wanted:
            continue  # not in the graph, or a second copy: a human's text
        seen.add(seg.id)
        entry = wanted[seg.id]
        region = learnings_region(entry)
        old = text[seg.start:seg.end]
        if seg.mark and seg.intact:
            replacement = region
        elif not seg.mark and old == _learnings_body(entry) + SEPARATOR:
            replacement = region + SEPARATOR  # kg's own entry from before the marks: given its mark
        else:
            report.kept.append({"file": file, "id": seg.id, "reason": EDITED if seg.mark else UNMARKED})
            continue
        if replacement != old:
            out += [text[pos:seg.start], replacement]
            pos = seg.end
            report.updated += 1
    out.append(text[pos:])
    seen |= set(covered)  # repeats folded into their first entry's `- Repeats:` line
    missing = [e for i, e in wanted.items() if i not in seen and i not in gone]
    report.kept += [{"file": file, "id": i, "reason": DELETED} for i in wanted if i not in seen and i in gone]
    if missing:
        tail = "".join(out)
        out.append("" if tail == "" or tail.endswith("\n") else "\n")
        out += [learnings_entry(e) for e in missing]
        report.appended += len(missing)
    return "".join(out)


def _fold_repeats(wanted: dict[str, dict[str, Any]], own: set[str], gone: set[str]) -> set[str]:
    """Fold each entry that repeats an earlier one (`repeat_key`) into the first of them: the first is replaced in
    `wanted` by a copy naming its repeats, and the ids folded are returned. An entry that has an entry of its own in
    the file (written before repeats were folded) keeps it; nothing folds into a first entry a person deleted."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for e in sorted(wanted.values(), key=lambda e: (str(e["created_at"]), e["id"])):
        key = repeat_key(e)
        if key is not None:
            groups.setdefault(key, []).append(e)
    covered: set[str] = set()
    for lead, *rest in (g for g in groups.values() if len(g) > 1):
        if lead["id"] in gone and lead["id"] not in own:
            continue
        folded = [e for e in rest if e["id"] not in own]
        if folded:
            wanted[lead["id"]] = {**lead, "repeats": [(e["id"], hm(e)) for e in folded]}
            covered |= {e["id"] for e in folded}
    return covered


def write_learnings(root: Path, events: Iterable[dict[str, Any]], *,
                    lock: Callable[[], AbstractContextManager[Any]] | None = None) -> LearningsReport:
    """Bring `.learnings/*.md` up to date with the graph's entries (`events`: node rows with `entry_type`).
    `lock` makes the journal lock `kg log` appends under: held while each file is read and replaced, so an entry
    logged meanwhile is not lost."""
    folder = root / LEARNINGS_DIR
    check_folder(folder, root=root)  # a link out: nothing of the graph's entries is written there
    folder.mkdir(exist_ok=True)
    if lock is not None:
        with lock():
            _undo_torn(folder)
    else:
        _undo_torn(folder)
    by_kind: dict[str, list[dict[str, Any]]] = {k: [] for k in LEARNINGS_FILES}
    for e in events:
        if e.get("entry_type") in by_kind:
            by_kind[e["entry_type"]].append(e)
    ids = {e["id"] for entries in by_kind.values() for e in entries}  # an entry of another kind's file: not reported
    report = LearningsReport()
    written = learnings_written(root)  # an entry `kg log` appends meanwhile is in its file when the file is read
    for kind, name in LEARNINGS_FILES.items():
        path = folder / name

        def step(path: Path = path, kind: str = kind) -> tuple[str, LearningsReport]:
            """Read, merge, and replace only over what was read: a person's edit made in between (kg log appends
            under `lock`, an editor does not) raises FileChanged and the file is read again (`retried`). Each try
            reports into its own report, so a retry counts nothing twice."""
            try:
                current: str | None = path.read_bytes().decode("utf-8", "surrogateescape")
            except FileNotFoundError:
                current = None
            part = LearningsReport()
            text = merge_learnings(current, LEARNINGS_TITLES[kind], by_kind[kind], file=str(path), report=part,
                                   deleted=written, known=ids)
            if text != current:
                base = None if current is None else current.encode("utf-8", "surrogateescape")
                write_atomic(path, text.encode("utf-8", "surrogateescape"), base=base)
            return text, part

        with lock() if lock is not None else nullcontext():
            text, part = retried(step)
            report.appended += part.appended
            report.updated += part.updated
            report.kept += part.kept
            new = [s.id for s in segments(text) if s.mark and s.id not in written]
            _note_written(root, new)
            written.update(new)
        report.written.append(str(path))
    return report
