"""The packaged secret rules, parsed once per workspace: a cache of `kg.redaction.rules.parse`'s result.

Parsing secrets.toml and the gitleaks rules costs about 25 ms, and compiling one rule's regex up to 0.6 ms: more than
a `kg log` spends redacting. The parsed rules, and the regex engine's compiled form of each pattern, are therefore
cached in the workspace's state folder (`memory/.kg/cache/`, so kg writes nothing outside the workspace; an
explicit `KG_CACHE_DIR` names another folder, and a process with no workspace keeps the parse in memory), one file
per installation of kg (named by where this module is), keyed by the
packaged rule files' names, sizes and modification times, the interpreter's version and this cache's format: an
edited rule file gets a new key, so a stale cache is never read. The cache is data, never code: Python's `marshal`
of strings, numbers and lists (what the interpreter's own bytecode cache is built on: twice as fast to read as JSON,
and loading it runs nothing). Its index (the rules, their order, the keyword plan) is sealed by a checksum of its
bytes; each rule's compiled form follows it, with its own checksum in the index, and is read only when that rule is
first used (a compiled form is handed to the regex engine, which checks it too). It is used only if it is owned by
this user, not writable by anyone else, and its seals hold (so it is exactly what this code wrote: a torn, edited or
foreign file is ignored and the TOML is parsed as before). Writing it is best effort (a read-only workspace just
parses; a cache folder kg may not write, a link leading out of memory/.kg, is said in one warning and the parse
kept in memory: it never stops a command) and atomic (`write_atomic`: a temporary file per process and thread,
renamed over), so processes that race each write a whole file and the last rename wins.
"""

from __future__ import annotations

import os
import struct
import sys
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from kg.redaction.rules import (
    SecretRule,
    Settings,
    echo_min,
    known_codes,
    line_prefix,
    packaged,
    parse,
    settings,
)

# bump when the meaning of a cached rule changes (13: the scan's own regexes' compiled forms; 14: the settings hold
# [wrapped])
_CACHE_FORMAT = 14

_FIELDS = ("kind", "source", "group", "keywords", "min_entropy", "before_source", "window", "ignore_sources",
           "priority", "not_before_source", "upper", "column", "header_source", "decode")
_WHERE = struct.Struct("<III")  # a compiled form's offset, length and crc32: one bytes object for all (fast to load)
_SEAL = 8  # hex digits of the crc32 that opens the file, then as many of the sealed index's length
_FOLDER = "cache"  # in the workspace's memory/.kg/
_workspace: list[Path] = []  # the state folder of the workspace this process works in (`in_workspace`)
_held: list[bool] = []  # non-empty while `writes_held()` is open: the parse is kept in memory only
_warned: list[bool] = []  # non-empty once `unwritable` said the cache folder cannot be written (once a process)


Row = tuple[Any, ...]  # a rule's fields in `_FIELDS` order


class KeywordPlan:
    """Which rules each keyword starts, in the order rules apply. ASCII keywords are kept by their first two
    characters (one-character keywords under ""), each group as one string ("word\x01i,j\x00word\x01k"): a
    process reads the plan from the cache as a few hundred strings, and a short text unpacks only the groups of the
    pairs it holds. Non-ASCII keywords (CJK labels) and the rules without keywords are kept as they are."""

    def __init__(self, pairs: dict[str, str], other: dict[str, tuple[int, ...]], bare: tuple[int, ...]) -> None:
        self.pairs = pairs
        self.other = other
        self.bare = bare
        self._groups: dict[str, tuple[tuple[str, str], ...]] = {}
        self._indexes: dict[str, tuple[int, ...]] = {}

    @classmethod
    def of(cls, keywords: Sequence[tuple[str, ...]]) -> KeywordPlan:
        """The plan of rules whose keywords are `keywords[i]`."""
        out: dict[str, list[int]] = {}
        bare: list[int] = []
        for index, words in enumerate(keywords):
            for word in words:
                out.setdefault(word, []).append(index)
            if not words:
                bare.append(index)
        groups: dict[str, list[str]] = {}
        for word, indexes in out.items():
            if word.isascii():
                entry = word + "\x01" + ",".join(map(str, indexes))
                groups.setdefault(word[:2] if len(word) > 1 else "", []).append(entry)
        other = {word: tuple(indexes) for word, indexes in out.items() if not word.isascii()}
        return cls({pair: "\x00".join(entries) for pair, entries in groups.items()}, other, tuple(bare))

    def dump(self) -> tuple[dict[str, str], dict[str, tuple[int, ...]], tuple[int, ...]]:
        return self.pairs, self.other, self.bare

    def at(self, pair: str) -> tuple[tuple[str, str], ...]:
        """(keyword, its rules packed) of the ASCII keywords that open with `pair`; `rules_of` unpacks the rules."""
        group = self._groups.get(pair)
        if group is None:
            packed = self.pairs.get(pair)
            group = () if not packed else tuple(tuple(entry.split("\x01")) for entry in packed.split("\x00"))
            self._groups[pair] = group  # type: ignore[assignment]
        return group  # type: ignore[return-value]

    def rules_of(self, packed: str) -> tuple[int, ...]:
        indexes = self._indexes.get(packed)
        if indexes is None:
            indexes = self._indexes[packed] = tuple(map(int, packed.split(",")))
        return indexes

    @cached_property
    def ascii_words(self) -> dict[str, tuple[int, ...]]:
        """Every ASCII keyword and its rules (for the tries a long text is scanned with)."""
        return {word: self.rules_of(packed) for pair in self.pairs for word, packed in self.at(pair)}


class LazyRules(Sequence[SecretRule]):
    """Rules as cached rows (marshalled bytes or tuples), each made into a `SecretRule` the first time it is used:
    a `kg log` uses a handful of the packaged rules, and building all of them would cost more than its redaction.
    The keyword plan comes with them, so nothing needs building to know where to look."""

    def __init__(self, rows: Sequence[bytes | Row], plan: KeywordPlan | None = None,
                 codes: Sequence[bytes | None] | None = None) -> None:
        self._rows = rows
        self.plan = plan
        self._codes = codes
        self._built: list[SecretRule | None] = [None] * len(rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        rule = self._built[index]
        if rule is None:
            row = self._rows[index]
            if isinstance(row, bytes):
                import marshal

                row = marshal.loads(row)
            rule = self._built[index] = SecretRule(*row)
            if self._codes is not None:
                rule.code = self._codes[index]
        return rule


def packaged_rules(entry: str = "secrets.toml") -> tuple[list[SecretRule], list[str]]:
    """(rules in file order, global ignore regexes) of the packaged `entry` file and what it includes."""
    cached = _packaged(entry)
    return list(LazyRules(cached.rows)), cached.ignore


def packaged_rows(entry: str = "secrets.toml") -> tuple[LazyRules, list[str]]:
    """(rules in the order they apply (priority, then file order), each built on first use; global ignore regexes)
    of the packaged `entry` file and what it includes."""
    rules, ignore, _, _, _ = packaged_parts(entry)
    return rules, ignore


def packaged_parts(entry: str = "secrets.toml") -> tuple[LazyRules, list[str], int, str, Settings]:
    """`packaged_rows`, the file's `echo_min_chars` (`kg.redaction.rules.echo_min`), its `line_prefix` and its
    `Settings` (`kg.redaction.rules.settings`), from one read."""
    cached = _packaged(entry)
    codes = _Codes(cached.codes, cached.order) if cached.codes is not None else None
    rules = LazyRules([cached.rows[i] for i in cached.order], cached.plan, codes)
    return rules, cached.ignore, cached.echo_min, cached.line_prefix, Settings.loaded(cached.settings)


@dataclass
class _Cached:
    rows: list[bytes] | list[Row]  # in file order
    order: list[int]  # the order rules apply
    plan: KeywordPlan  # in that order
    ignore: list[str]
    # the cache file, where its compiled forms start, and (offset, length, crc) of each row's, packed (`_WHERE`)
    codes: tuple[Path, int, bytes] | None = None
    echo_min: int = 6  # the file's echo_min_chars
    line_prefix: str = ""  # the file's line_prefix
    settings: tuple = ()  # the file's `Settings`, dumped


class _Codes(Sequence[bytes | None]):
    """The compiled forms of the rules in the order they apply, each read from the cache file when asked for (a
    process uses a few) and checked against its checksum in the sealed index: a file replaced meanwhile, or cut
    short, gives None, and the rule is compiled from its source."""

    def __init__(self, codes: tuple[Path, int, bytes], order: list[int]) -> None:
        self._path, self._base, self._where = codes
        self._order = order

    def __len__(self) -> int:
        return len(self._order)

    def __getitem__(self, index):  # type: ignore[override]
        offset, length, crc = _WHERE.unpack_from(self._where, _WHERE.size * self._order[index])
        if not length:
            return None
        try:
            fd = os.open(self._path, os.O_RDONLY)
            try:
                blob = os.pread(fd, length, self._base + offset)
            finally:
                os.close(fd)
        except OSError:
            return None
        return blob if zlib.crc32(blob) == crc else None


def _packaged(entry: str) -> _Cached:
    """The packaged rules of `entry`: from the cache when a trustworthy one matches the files, else parsed (and
    cached for the next process)."""
    where = cache_dir()
    path = None
    if where is not None:
        path = where / f"secret-rules-{entry.removesuffix('.toml')}-{zlib.crc32(__file__.encode()):08x}.marshal"
        cached = _read_cache(path, entry)
        if cached is not None:
            return cached
    folder = _rules_folder()
    key = _packaged_key(entry, folder)
    data = packaged(entry)
    rules, ignore = parse(data, f"rules/{entry}", validate=False)
    echo = echo_min(data, f"rules/{entry}")
    prefix = line_prefix(data, f"rules/{entry}")
    scan = settings(data, f"rules/{entry}").dump()
    rows = [tuple(getattr(rule, name) for name in _FIELDS) for rule in rules]
    order = sorted(range(len(rows)), key=lambda i: (rules[i].priority, i))
    plan = KeywordPlan.of([rules[i].keywords for i in order])
    if key is not None and path is not None and not _held:
        _write_cache(path, key, folder, rows, order, plan, ignore, echo, prefix, scan)
    return _Cached(rows, order, plan, ignore, echo_min=echo, line_prefix=prefix, settings=scan)


def in_workspace(kg_dir: Path) -> None:
    """Keep the parse in `kg_dir`'s cache folder (a workspace's memory/.kg/): called when a workspace is opened,
    before anything is redacted; the first workspace of a process is kept (its rules are parsed once)."""
    if not _workspace:
        _workspace.append(Path(kg_dir) / _FOLDER)


@contextmanager
def writes_held() -> Iterator[None]:
    """Within it, a parse is not written to the cache (`kg doctor --dry-run` promises a workspace left byte for byte
    as it was); a cache already there is still read."""
    _held.append(True)
    try:
        yield
    finally:
        _held.pop()


def cache_dir() -> Path | None:
    """Where the parse is kept: $KG_CACHE_DIR (an explicit opt-in), else the workspace's memory/.kg/cache, else
    nowhere (None: a process with no workspace parses in memory). Never the home folder or $XDG_CACHE_HOME: kg
    writes nothing outside the workspace unless told to."""
    if os.environ.get("KG_CACHE_DIR"):
        return Path(os.environ["KG_CACHE_DIR"])
    return _workspace[0] if _workspace else None


def _packaged_key(entry: str, folder: str) -> str | None:
    """A key for every secrets*.toml in `folder` as it is now: name, size, modification time in nanoseconds (what
    Python's own bytecode cache checks against its source) and inode, the entry point, the interpreter's version
    (the compiled forms are its own) and the cache format. An edited or replaced rule file gets a new key without
    reading it. The inode and the time in nanoseconds are this installation's own: a cache file that came with
    the workspace (a clone, an archive: the user's own file, mode 0644, so the owner and mode checks pass it)
    cannot carry a key that matches them, so it never decides what gets redacted."""
    parts = [entry, sys.version]
    try:
        with os.scandir(folder) as entries:
            for item in sorted(entries, key=lambda e: e.name):
                if item.name.startswith("secrets") and item.name.endswith(".toml"):
                    info = item.stat()
                    parts.append(f"{item.name}:{info.st_size}:{info.st_mtime_ns}:{item.inode()}")
    except (OSError, TypeError):
        return None
    return f"{zlib.crc32(chr(0).join(parts).encode()):08x}-{len(parts)}-f{_CACHE_FORMAT}"


def _rules_folder() -> str:
    """The packaged rules folder (where kg.rules is). Importing it costs half a millisecond; a cache file's key is
    checked against this folder, never the one the file records (before, a file keyed for an empty folder it
    named itself was taken: its key rested on the entry and the interpreter's version only)."""
    import kg.rules

    return os.path.dirname(os.path.abspath(kg.rules.__file__))  # type: ignore[arg-type]


def engine_code(source: str) -> bytes:
    """What `re.compile(source)` hands the regex engine (`_sre.compile`'s arguments after the pattern), marshalled:
    building it is what costs in a compile, and `SecretRule.pattern` skips that with it."""
    import marshal
    from re import _compiler, _parser  # type: ignore[attr-defined]

    parsed = _parser.parse(source, 0)
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, number in groupindex.items():
        indexgroup[number] = name
    code = [int(op) for op in _compiler._code(parsed, 0)]  # opcodes are int subclasses: plain ints marshal
    return marshal.dumps((int(parsed.state.flags), code, parsed.state.groups - 1, groupindex,
                          tuple(indexgroup)))


def _scan_codes(ignore: list[str], prefix: str, scan: tuple[int, str, float]) -> dict[str, bytes]:
    """The compiled forms of the scan's own regexes (`kg.redaction.rules.regex`): the global ignores, the line
    prefix's three (`kg.redaction.prefixes.sources`) and the glue's two; one the engine cannot take is left out."""
    from kg.redaction.prefixes import sources
    from kg.redaction.textchecks import glue_sources

    codes: dict[str, bytes] = {}
    for source in (*ignore, *(sources(prefix) if prefix else ()), *glue_sources(scan[1])):
        try:
            codes[source] = engine_code(source)
        except Exception:  # an interpreter whose re module is built otherwise: compiled when used
            pass
    return codes


def _read_cache(path: Path, entry: str) -> _Cached | None:
    import marshal

    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            if (hasattr(os, "getuid") and info.st_uid != os.getuid()) or info.st_mode & 0o022:
                return None  # someone else could have written it: do not let it decide what gets redacted
            head = handle.read(2 * _SEAL)
            length = int(head[_SEAL:], 16)
            body = handle.read(length)
        if len(body) != length or head[:_SEAL] != b"%08x" % zlib.crc32(body):
            return None  # torn, edited or not ours
        fmt, cached_key, folder, ignore, rows, order, plan, where, echo, prefix, scan, regexes = marshal.loads(body)
        if fmt != _CACHE_FORMAT or folder != _rules_folder() or cached_key != _packaged_key(entry, folder) \
                or not rows or len(rows) != len(order):
            return None
        known_codes(regexes)
        # sealed: exactly what `_write_cache` wrote
        codes = (path, 2 * _SEAL + length, where) if len(where) == _WHERE.size * len(rows) else None
        return _Cached(rows, order, KeywordPlan(*plan), ignore, codes, echo, prefix, tuple(scan))
    except (OSError, ValueError, TypeError, EOFError):
        return None


def _write_cache(path: Path, key: str, folder: str, rows: list[Row], order: list[int], plan: KeywordPlan,
                 ignore: list[str], echo: int = 6, prefix: str = "",
                 scan: tuple | None = None) -> None:
    """Each row marshalled on its own (a process unpacks only the rules it uses) in the sealed index, each rule's
    compiled form after it; written atomically. `scan`: the `Settings` dumped (None: the packaged file's)."""
    import marshal

    scan = scan if scan is not None else settings({}, "rules/secrets.toml").dump()

    from kg.core.files import write_atomic  # the one way kg replaces a file

    blobs: list[bytes] = []
    where = bytearray()
    offset = 0
    for row in rows:
        try:
            blob = engine_code(row[1])
        except Exception:  # an interpreter whose re module is built otherwise: the rule compiles when used
            blob = b""
        where += _WHERE.pack(offset, len(blob), zlib.crc32(blob))
        blobs.append(blob)
        offset += len(blob)
    body = marshal.dumps((_CACHE_FORMAT, key, folder, list(ignore), [marshal.dumps(row) for row in rows], order,
                          plan.dump(), bytes(where), echo, prefix, scan, _scan_codes(ignore, prefix, scan)))
    from kg.core.errors import UnusableFile

    try:
        # an explicit KG_CACHE_DIR is made with its parents; a workspace's folder only inside its memory/.kg/
        path.parent.mkdir(mode=0o700, parents=path.parent not in _workspace, exist_ok=True)
        write_atomic(path, b"%08x%08x" % (zlib.crc32(body), len(body)) + body + b"".join(blobs))
        os.chmod(path, 0o600)
    except OSError:
        pass  # a read-only workspace: parsed in memory, as expected there
    except UnusableFile as exc:  # a link kg may not write through (QA3 #1: every command that redacts failed)
        unwritable(exc)


def unwritable(exc: Exception) -> None:
    """Say once per process that a file of the cache folder is one kg may not write (a person's link out of
    memory/.kg: what it caches is made anew by every command until it is fixed), and how to fix it; the command
    goes on without the cache. Every writer of memory/.kg/cache calls this (kg/core/rulecheck.py too)."""
    if _warned:
        return
    _warned.append(True)
    try:
        sys.stderr.write(f"Warning: kg's cache was not written: {exc}. kg works without it meanwhile (slower); "
                         "the cache folder is derived and safe to delete.\n")
    except (OSError, ValueError):
        pass
