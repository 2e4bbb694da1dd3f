"""Reading one trail file for `kg import trail` (kg/ingest/importing.py), one item at a time: a trail JSON
(`kg.ingest.jsonstream`) or a `.learnings/*.md` file, with a byte order mark skipped, a binary file skipped and
bytes that are not UTF-8 counted and replaced."""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kg.core.errors import UsageError
from kg.ingest.jsonstream import JsonStreamError, Read, iter_trail

_NAMED = frozenset({"entries", "changes", "proposals", "decisions", "blocks"})


class _Undecodable:
    """Counts bytes that were not UTF-8 (replaced with U+FFFD), so the report can say so."""

    count = 0

    @classmethod
    def handler(cls, exc: UnicodeDecodeError) -> tuple[str, int]:
        cls.count += 1
        return "\ufffd", exc.end


codecs.register_error("kg-import-count", _Undecodable.handler)


def files_of(paths: list[Path]) -> list[Path]:
    out = []
    for path in paths:
        if path.is_dir():
            out += sorted(path.glob("*.md")) + sorted(path.glob("*.json"))
        elif not path.exists():
            raise UsageError(f"cannot read {path}: no such file")
        else:
            out.append(path)
    return out


def items(file: Path, report: Any, read: Read | None = None, *, named: bool = True) -> Iterator[tuple[str, Any]]:
    """("entries" | "nodes" | "edges", item) from one trail JSON or `.learnings` markdown file; `read.chars`
    counts the characters read up to each item. An entry or lifecycle record of a JSON file is a copy naming its
    file (`_source`: whose lifecycle an import takes is one file's, kg/ingest/trail_lifecycle.py), unless not `named`
    (the first pass only counts them)."""
    from kg.ingest.trail import iter_learnings_md

    try:
        with open(file, "rb") as fh:
            head = fh.read(4096)
    except OSError as exc:
        raise UsageError(f"cannot read {file}: {exc.strerror}") from None
    if b"\x00" in head:
        report.warnings.append(f"{file}: binary file, skipped")
        report.skip("binary file")
        return
    before = _Undecodable.count
    bom = head.startswith(b"\xef\xbb\xbf")  # a Windows editor's byte order mark: not part of the text
    with open(file, encoding="utf-8-sig" if bom else "utf-8", errors="kg-import-count", newline="") as fh:
        if file.suffix == ".json" or head[3 if bom else 0:].lstrip().startswith(b"{"):
            try:
                for kind, item in iter_trail(fh, read=read):
                    if kind == "graph":
                        report.skip("graph is not an object")
                    elif isinstance(item, dict):
                        yield kind, ({**item, "_source": str(file)} if kind in _NAMED and named else item)
                    else:
                        report.skip({"entries": "entry is not an object", "nodes": "graph node is not an object",
                                     "edges": "graph edge is not an object"}.get(kind, f"{kind[:-1]} is not an object"))
            except JsonStreamError as exc:
                raise UsageError(f"{file} is not valid JSON ({exc}); fix it or import the .learnings/*.md "
                                 "files") from None
        else:
            for entry in iter_learnings_md(fh, file, report):
                if read is not None:
                    read.chars += sum(len(v) for v in entry.values() if isinstance(v, str))
                yield "entries", entry
    if _Undecodable.count != before:
        report.warnings.append(f"{file}: not valid UTF-8; undecodable bytes were replaced with U+FFFD")
