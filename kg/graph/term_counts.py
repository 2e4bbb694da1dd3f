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
SCAN_WRITES_MIN = 16  # counts written: below this many, by key (the table's size is not even asked)
SCAN_ROWS_PER_WRITE = 100  # else in one statement while the table holds at most this many keywords per count


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
        """Known keywords are set by key, one statement each, or all in one statement when the table is small
        beside them (an embedded graph's); new ones are created in one statement."""
        new, known = [], []
        for term, d in self.delta.items():
            if not d:
                continue
            base = self.base[term]
            value = max(0, (base or 0) + d)
            (new if base is None else known).append({"term": term, "df": value})
            self.base[term] = value
        if known and _one_scan(self.st, len(known)):
            self.st.run("link_terms_set_many", rows=known)
        else:
            for row in known:
                self.st.run("link_terms_set", term=row["term"], df=row["df"])
        if new:
            self.st.run("link_terms_load", rows=new)
        self.delta.clear()


def _one_scan(st: Any, writes: int) -> bool:
    """Whether one `UNWIND ... SET` (a scan of the keyword table in kuzu 0.11.3) beats `writes` lookups by key:
    measured, a lookup ~0.12-0.2 ms, a scan ~1 ms plus ~1-2 us a row (115 counts: 14 ms by key against 2.9 ms
    in one statement at 1,500 keywords, 41 against 151 ms at 200,000). A bulk log of a conversation writes
    ~100 counts a batch into a table of a few thousand (issue 17 item 5). The team graph keeps its own way
    (its batch translates each named write: kg/store/falkor_batch.py)."""
    from kg.store.sideindex import embedded

    if writes < SCAN_WRITES_MIN or not embedded(st):
        return False
    return int(st.run("link_terms_size")[0]["n"]) <= SCAN_ROWS_PER_WRITE * writes


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
