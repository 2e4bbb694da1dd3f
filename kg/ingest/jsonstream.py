"""Read a large JSON document piece by piece: the items of its top-level arrays one at a time.

A million-entry `.learning-trail.json` is about a gigabyte of text; `json.loads` of it needs several times
that in Python objects. The trail's shape is known (an object whose `entries` is an array, and whose `graph`
object holds `nodes` and `edges` arrays), so this reader walks the top-level object itself and hands out one
array item at a time, decoded by the standard library's `raw_decode` from a bounded window of the file.
Memory stays at the window plus one item, whatever the file's size. Pure apart from reading the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any

_WS = " \t\r\n"
_DECODER = json.JSONDecoder()
_EDGE = 64  # longer than any number or literal
_MAX_ITEM = 256 << 20  # one array item larger than this is refused rather than read into memory


class JsonStreamError(ValueError):
    """The text is not valid JSON (the message says where)."""


class _Window:
    def __init__(self, fh: IO[str], chunk: int):
        self.fh = fh
        self.chunk = chunk
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.offset = 0  # characters dropped from the front, for error positions

    def fill(self) -> bool:
        if self.eof:
            return False
        if self.pos > self.chunk:  # drop what was consumed, so the window never grows with the file
            self.offset += self.pos
            self.buf = self.buf[self.pos:]
            self.pos = 0
        data = self.fh.read(max(self.chunk, len(self.buf)))
        if not data:
            self.eof = True
            return False
        self.buf += data
        return True

    def peek(self) -> str:
        """The next character that is not white space ('' at the end)."""
        while True:
            buf, pos = self.buf, self.pos
            while pos < len(buf) and buf[pos] in _WS:
                pos += 1
            self.pos = pos
            if pos < len(buf):
                return buf[pos]
            if not self.fill():
                return ""

    def expect(self, chars: str) -> str:
        ch = self.peek()
        if not ch or ch not in chars:
            raise self.error(f"expected {' or '.join(repr(c) for c in chars)}")
        self.pos += 1
        return ch

    def value(self) -> Any:
        """Decode the next JSON value. A value cut by the window's edge either fails near the edge (a literal
        or a string cut short) or, for a bare number, decodes as a shorter one: either way, when the value
        ends within _EDGE characters of the window's end, more text is read and it is decoded again."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                cut = exc.pos >= len(self.buf) - _EDGE or exc.msg.startswith("Unterminated")
                if cut and len(self.buf) - self.pos < _MAX_ITEM and not self.eof:
                    self.fill()  # it may move the window (and self.pos): decode again either way
                    continue
                raise self.error(exc.msg, exc.pos) from None
            if end > len(self.buf) - _EDGE and not self.eof:
                self.fill()
                continue
            self.pos = end
            return value

    def error(self, msg: str, at: int | None = None) -> JsonStreamError:
        where = self.offset + (self.pos if at is None else at)
        return JsonStreamError(f"{msg} at character {where}")


def _object_items(w: _Window) -> Iterator[str]:
    """The keys of the object starting at the window's position; the caller consumes each value."""
    w.expect("{")
    if w.peek() == "}":
        w.pos += 1
        return
    while True:
        key = w.value()
        if not isinstance(key, str):
            raise w.error("expected a string key")
        w.expect(":")
        yield key
        if w.expect(",}") == "}":
            return


def _array_items(w: _Window) -> Iterator[Any]:
    w.expect("[")
    if w.peek() == "]":
        w.pos += 1
        return
    while True:
        yield w.value()
        if w.expect(",]") == "]":
            return


class Read:
    """How many characters of the document the items handed out so far took (a batch is sized by it)."""

    chars = 0


def iter_trail(fh: IO[str], *, chunk: int = 1 << 20, read: Read | None = None) -> Iterator[tuple[str, Any]]:
    """("entries" | "nodes" | "edges" | "changes" | "proposals" | "decisions" | "blocks", item) for each item of
    the trail's arrays (`graph` holds nodes and edges, `lifecycle` the last three), in file order; a `graph` that
    is not an object yields ("graph", value) once. Raises JsonStreamError on invalid JSON and on a
    document that is not an object (the error names what was expected). `read.chars` counts the characters
    read up to each item handed out."""
    w = _Window(fh, chunk)
    read = read if read is not None else Read()
    start = read.chars
    if w.peek() != "{":
        raise JsonStreamError("expected a JSON object with 'entries' (the .learning-trail.json format)")
    for key in _object_items(w):
        if key == "entries" and w.peek() == "[":
            for item in _array_items(w):
                read.chars = start + w.offset + w.pos
                yield "entries", item
        elif key == "graph" and w.peek() == "{":
            for inner in _object_items(w):
                if inner in ("nodes", "edges") and w.peek() == "[":
                    for item in _array_items(w):
                        read.chars = start + w.offset + w.pos
                        yield inner, item
                else:
                    w.value()
        elif key == "graph":
            yield "graph", w.value()
        elif key == "changes" and w.peek() == "[":  # kg's lifecycle (kg/ingest/trail_lifecycle.py)
            for item in _array_items(w):
                read.chars = start + w.offset + w.pos
                yield "changes", item
        elif key == "lifecycle" and w.peek() == "{":
            for inner in _object_items(w):
                if inner in ("proposals", "decisions", "blocks") and w.peek() == "[":
                    for item in _array_items(w):
                        read.chars = start + w.offset + w.pos
                        yield inner, item
                else:
                    w.value()
        else:
            w.value()
    if w.peek():
        raise w.error("text after the end of the JSON object")
