"""The read server's answers that depend on the graph alone, kept until the graph changes.

A one-off read opens the graph, asks, and forgets. The server keeps the graph open across reads, and most of
what `kg hook session-start` and `kg status` ask does not change between two reads: totals (nodes, edges,
sessions, pending entries), the newest pending entries, the live rules and free principles, the proposals
waiting. Those full scans cost ~0.5 s at 100k entries. The server keeps their rows for one *generation* of
the graph: any statement that may write (CREATE, MERGE, SET, DELETE, COPY, a procedure call ..., a
transaction's end) starts a new generation, and the journal is applied through the same handle, so a reader
never sees rows older than the graph it would have opened itself.

What is kept is narrow on purpose, so that a figure measured with repeated reads is the figure of a new read:
- a named query (inline Cypher is never kept) whose text cannot write;
- whose parameters are numbers, flags, short names (an id, a key, a status) or lists of them. A parameter
  holding a moment (`now`, `since`) or a caller's words (the search's text and terms) means the answer depends
  on the call, and it is asked every time;
- outside a transaction, and only when no write happened while it ran.
"""

from __future__ import annotations

import re
from typing import Any

# statements that may change the graph (a false alarm only costs a re-read): clauses that write, procedure
# calls other than the full-text search's (CREATE_FTS_INDEX and the like), extensions, transactions' ends
_WRITES = re.compile(r"\b(CREATE|MERGE|SET|DELETE|DETACH|REMOVE|COPY|DROP|ALTER|INSTALL|LOAD|CHECKPOINT|"
                     r"BEGIN|COMMIT|ROLLBACK|IMPORT|EXPORT|ATTACH|USE)\b|CALL\s+(?!QUERY_FTS_INDEX\b)",
                     re.IGNORECASE)
MAX_ENTRIES = 4096  # distinct (query, parameters) kept per generation (a session brief asks ~300 by key)
MAX_ROWS = 20_000  # rows kept in all (a larger answer is not kept: it would cost more memory than it saves)
_NAME_CHARS = 40  # a list item longer than this is a caller's text, not a name


def may_write(cypher: str) -> bool:
    return _WRITES.search(cypher) is not None


_CALLERS_WORDS = frozenset({"q", "query", "text", "term", "terms", "words", "message", "pattern_text"})


def _key_value(name: str, value: Any) -> Any:
    """`value` as part of a cache key, or raise ValueError when it makes the answer depend on the call."""
    if name in _CALLERS_WORDS:
        raise ValueError("the caller's words")
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str) and len(value) <= _NAME_CHARS:  # an id, a key, a status
        return value
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, (int, bool)) or (isinstance(v, str) and len(v) <= _NAME_CHARS) for v in value):
            return tuple(value)
    raise ValueError("a moment, a text or a structure: depends on the call")


class ReadCache:
    """Installed on the server's one store handle (`install`); `clear()` when the graph may have changed
    behind the handle."""

    def __init__(self, store: Any):
        self.store = store
        self.generation = 0
        self.hits = self.misses = 0
        self._rows: dict[tuple, list[dict[str, Any]]] = {}
        self._count = 0
        self._run, self._fetch = store.run, store._fetch

    def install(self) -> ReadCache:
        self.store.run, self.store._fetch = self.run, self.fetch
        return self

    def uninstall(self) -> None:
        for name in ("run", "_fetch"):
            self.store.__dict__.pop(name, None)

    def clear(self) -> None:
        self.generation += 1
        self._rows.clear()
        self._count = 0

    def fetch(self, cypher: str, params: dict[str, Any]) -> Any:
        if may_write(cypher):
            self.clear()  # before, so that a read started inside this write is not kept either
        return self._fetch(cypher, params)

    def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        key = self._key(name, params)
        if key is None:
            return self._run(name, **params)
        rows = self._rows.get(key)
        if rows is not None:
            self.hits += 1
            return _copy(rows)
        self.misses += 1
        before = self.generation
        rows = self._run(name, **params)
        # full: what is kept stays (clearing it all made a read of more keys than the cap find nothing kept,
        # however often it was asked)
        if (self.generation == before and not self.store._in_tx and self._count + len(rows) <= MAX_ROWS
                and len(self._rows) < MAX_ENTRIES):
            self._rows[key] = _copy(rows)
            self._count += len(rows)
        return rows

    def _key(self, name: str, params: dict[str, Any]) -> tuple | None:
        if self.store._in_tx:
            return None
        try:
            query = self.store.query(name)
        except Exception:  # an unknown name: the store says so itself
            return None
        if may_write(query.text):
            return None
        try:
            return (name, query.text, tuple(sorted((k, _key_value(k, v)) for k, v in params.items())))
        except ValueError:
            return None


def _copy(value: Any) -> Any:
    """A copy of rows whose lists and dicts are the copy's own, at any depth (a caller may change what it was
    given). What else a query returns (str, numbers, datetime, UUID, Decimal, None) cannot change: kept as is.
    copy.deepcopy did the same at ~4x the cost (~0.05 s of a served session brief's 0.3 s of CPU at 100k)."""
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    return value
