"""The keyword table's counts (`Term`: keyword -> number of nodes holding it), read and written by key.

Kùzu 0.11.3 runs `MERGE (x:Term {term: $t})` as a scan of the table (about 20 ms at 50k keywords, against
0.3 ms for a lookup by key), and auto-linking counted every keyword of every new node with one: most of a
log's cost. Counts are now read by key, kept in memory for the rest of the transaction, and written once per
keyword when it ends (`MATCH ... SET` by key for a known keyword; the new ones in one `UNWIND ... CREATE`). Inside
`counting(st)` (a drained batch, a bulk log) a keyword shared by many entries is read and written once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

PREFETCH_MIN = 48  # keywords: below this many, lookups by key (~0.3 ms each) beat one scan of the table


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

    def prefetch(self, terms: list[str]) -> None:
        """Read many keywords' counts in one statement (a batch's keywords, before its entries are linked).
        In kuzu 0.11.3 `UNWIND ... MATCH {term: t}` scans the table instead of using the key, so this pays only
        for many keywords at once; a few are left to `get`'s lookups by key."""
        wanted = sorted({t for t in terms if t not in self.base})
        if len(wanted) < getattr(self.st, "prefetch_min", PREFETCH_MIN):  # FalkorDB: 1 (its UNWIND uses the index)
            return
        found = {r["term"]: int(r["df"] or 0) for r in self.st.run("link_terms_df_many", terms=wanted)}
        for t in wanted:
            self.base[t] = found.get(t)

    def add(self, term: str, n: int = 1) -> int:
        """Count `n` more (or fewer) nodes; returns the count before."""
        before = self.get(term) or 0
        self.delta[term] = self.delta.get(term, 0) + n
        return before

    def flush(self) -> None:
        """Known keywords are set by key, one statement each; new ones are created in one statement."""
        new = []
        for term, d in self.delta.items():
            if not d:
                continue
            base = self.base[term]
            value = max(0, (base or 0) + d)
            if base is None:
                new.append({"term": term, "df": value})
            else:
                self.st.run("link_terms_set", term=term, df=value)
            self.base[term] = value
        if new:
            self.st.run("link_terms_load", rows=new)
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
