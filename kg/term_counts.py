"""The keyword table's counts (`Term`: keyword -> number of nodes holding it), read and written by key.

Kùzu 0.11.3 runs `MERGE (x:Term {term: $t})` as a scan of the table (about 20 ms at 50k keywords, against
0.3 ms for a lookup by key), and auto-linking counted every keyword of every new node with one: most of a
log's cost. Counts are now read by key, kept in memory for the rest of the transaction, and written once per
keyword when it ends (`MATCH ... SET` by key for a known keyword, `CREATE` for a new one). Inside
`counting(st)` (a drained batch, a bulk log) a keyword shared by many entries is read and written once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class Counts:
    """Counts as they stand inside one transaction: read once per keyword, written at `flush`."""

    def __init__(self, st: Any):
        self.st = st
        self.base: dict[str, int | None] = {}   # as stored (None: no row)
        self.delta: dict[str, int] = {}

    def get(self, term: str) -> int | None:
        """The count now, or None when the keyword has no row and none was added."""
        if term not in self.base:
            rows = self.st.run("link_terms_df", term=term)
            self.base[term] = int(rows[0]["df"] or 0) if rows else None
        base, d = self.base[term], self.delta.get(term, 0)
        return None if base is None and not d else max(0, (base or 0) + d)

    def add(self, term: str, n: int = 1) -> int:
        """Count `n` more (or fewer) nodes; returns the count before."""
        before = self.get(term) or 0
        self.delta[term] = self.delta.get(term, 0) + n
        return before

    def flush(self) -> None:
        for term, d in self.delta.items():
            if not d:
                continue
            base = self.base[term]
            value = max(0, (base or 0) + d)
            if base is None:
                self.st.run("link_terms_create", term=term, df=value)
            else:
                self.st.run("link_terms_set", term=term, df=value)
            self.base[term] = value
        self.delta.clear()


@contextmanager
def counting(st: Any) -> Iterator[Counts]:
    """Batch the keyword counts of everything done inside (nested use joins the outer batch). Written when the
    block ends without an error; dropped with the transaction otherwise."""
    outer = getattr(st, "_term_counts", None)
    if outer is not None:
        yield outer
        return
    counts = Counts(st)
    st._term_counts = counts
    try:
        yield counts
        counts.flush()
    finally:
        st._term_counts = None
