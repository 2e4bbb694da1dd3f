"""Linking's candidates from the side index, ranked as Kùzu's own full-text index (node_fts) ranked them.

What `CALL QUERY_FTS_INDEX('Node', 'node_fts', $q, top := $k)` does in kuzu 0.11.3 (measured against it:
tests/integration/test_side_link.py, bench/link_quality.py --graph):
- a node's document is its `tokens` with ASCII digits taken out (`abc123` is `abc`) and stopwords out,
  porter-stemmed; every node inserted after the index was made is a document, one left without a word too
  (length 0; a build leaves those out: the same unless a text is all stopwords or digits);
- the query string goes the same way, and a stem asked twice counts once;
- score = sum over the query's stems of log10(1 + (N - df + 0.5) / (df + 0.5)) * tf * (k1 + 1) /
  (tf + k1 * (1 - b + b * dl / avgdl)), k1 1.2, b 0.75; the `k` best are kept (among equal scores, in an
  order of its own: here the newest node first);
- it sees the nodes its own open transaction created.

The side file holds the same documents' term counts (kg/store/linkpost.py), stemmed by FTS5's porter
tokenizer: each asked stem is one index range of (node, count, length), scored with Kùzu's idf over every
document the writer sees, summed and cut inside SQLite.

The writer's own nodes that the file does not hold yet (created in its open transaction, or committed and not
synced) are the tail: indexed in a private in-memory table for the query, never written to the file (the file
holds only what the graph committed; no SQLite lock is held across a Kùzu transaction). After each commit
that created nodes the writer syncs the file (`Store.transaction`), so the tail is the open transaction's own
nodes. Nothing here writes the side file except `sync` outside a transaction.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kg.store import linkpost
from kg.store.sideindex import (
    SideIndex,
    _count,
    _pos_of,
    _stream,
    embedded,
    link_text,
    path_of,
    safe_sync,
    version,
)

K1, B = 1.2, 0.75  # QUERY_FTS_INDEX's defaults


def stems(words: list[str]) -> list[tuple[str, str]]:
    """(word, porter stem) with one word per stem (the first), as the index's tokenizer stems them."""
    seen: set[str] = set()
    out = []
    for w, found in zip(words, linkpost.stems_of(words), strict=True):
        s = max(found) if found else None  # (a word split in two by the tokenizer: its greater stem, as before)
        if s is not None and s not in seen:
            seen.add(s)
            out.append((w, s))
    return out


class _Part:
    """One side file's term counts (the file's, or the tail's in memory) and what it holds of the query's
    stems."""

    def __init__(self, db: sqlite3.Connection, query: list[tuple[str, str]], memo: dict[str, Any] | None = None):
        """`memo`: the side file's totals and stems' counts already read in this batch (the file does not
        change during a writer's transaction)."""
        self.db = db
        if memo is None:
            self.docs, self.tokens = linkpost.totals(db)
            self.df = {stem: linkpost.df(db, stem) for _, stem in query}
            return
        if "totals" not in memo:
            memo["totals"] = linkpost.totals(db)
        self.docs, self.tokens = memo["totals"]
        df = memo.setdefault("df", {})
        for _, stem in query:
            if stem not in df:
                df[stem] = linkpost.df(db, stem)
        self.df = {stem: df[stem] for _, stem in query}

    def best(self, query: list[tuple[str, str]], idf: dict[str, float], avg: float, k: int
             ) -> list[tuple[int, float]]:
        """The k best of this part's documents by Kùzu's score with the writer's whole statistics (`idf` per
        stem, `avg` length): each stem's postings read by index, scored, summed, ordered, cut inside SQLite."""
        parts, params = [], []
        for _, stem in query:
            if self.df.get(stem):
                parts.append(f"SELECT pos AS p, ? * tf * {K1 + 1} / (tf + {K1} * ({1 - B} + {B} * dl / ?)) AS w "
                             "FROM lpost WHERE term = ?")
                params += [idf[stem], avg, stem]
        if not parts:
            return []
        sql = (f"SELECT p, round(sum(w), 9) AS sc FROM ({' UNION ALL '.join(parts)}) "
               "GROUP BY p ORDER BY sc DESC, p LIMIT ?")
        return [(int(p), float(sc)) for p, sc in self.db.execute(sql, (*params, k))]


def top(parts: list[_Part], query: list[tuple[str, str]], k: int) -> list[tuple[int, float]]:
    """Kùzu's k best over the documents of all `parts` together (the side file and the tail): N, each stem's
    df and the mean length are theirs summed. Among equal scores the oldest node first (node_fts chose among
    ties in an order of its own, mostly that one)."""
    n = sum(p.docs for p in parts)
    if not n:
        return []
    avg = sum(p.tokens for p in parts) / n
    idf = {}
    for _, stem in query:
        df = sum(p.df.get(stem, 0) for p in parts)
        idf[stem] = math.log10(1 + (n - df + 0.5) / (df + 0.5))
    found = [x for p in parts if p.docs for x in p.best(query, idf, avg, k)]
    return sorted(found, key=lambda x: (-x[1], x[0]))[:k]


def graph_index(st: Any) -> bool:
    """Whether linking asks the graph's own full-text index: a team graph's, or an embedded graph's node_fts
    while it has one (asked once per open store: an index is made or dropped only by a writer's open, an
    import or a migration, each of which opens the store anew)."""
    if not embedded(st):
        return True
    known = st.__dict__.get("_has_node_fts")
    if known is None:
        known = st.__dict__["_has_node_fts"] = bool(st.has_fts())
    if not known:
        st.__dict__["_side_links"] = True  # the writer keeps the side file in step after each commit
    return known


def _reader(st: Any, count: int) -> tuple[SideIndex, int] | None:
    """The side file read-only and how many of the graph's first nodes it holds, or None when it is of
    another version, names another graph, or is ahead of it."""
    path = path_of(st.path)
    side = st.__dict__.get("_side_reader")
    if side is None:
        if not path.exists():
            return None
        side = st.__dict__["_side_reader"] = SideIndex(path, writable=False)
    if side.meta("version") != version():
        return None
    have, last = side.stamp()
    if have > count or (have and _pos_of(st, last) != have - 1):
        return None
    return side, have


def _tail(st: Any, have: int, count: int) -> list[tuple[int, dict[str, Any]]]:
    """The graph's nodes at positions [have, count): those this writer created since its last sync when
    they are exactly those (the common case, no read), else read from the graph (a scan)."""
    created = st.__dict__.get("_side_created", [])
    if (not st.__dict__.get("_side_dirty") and have + len(created) == count
            and (not created or _pos_of(st, created[-1]["id"]) == count - 1)):
        return list(enumerate(created, start=have))
    return [(r["pos"], r) for rows in _stream(st, have, count) for r in rows]


SCRATCH_MAX = 50_000  # a graph this small is indexed whole in memory when the side file cannot answer


def ready(st: Any) -> None:
    """Before a writer's transaction that links (a drain's batch, `ws.log`): the side file in step with what
    is committed, when linking asks it (no node_fts), so that inside the transaction only its own nodes are
    the tail. Outside any Kùzu transaction; a failure is left to the next sync (the tail is then read from
    the graph)."""
    if embedded(st) and not st._in_tx and not graph_index(st):
        safe_sync(st)


@contextmanager
def batch(st: Any) -> Iterator[None]:
    """Around a writer's transaction that links entry after entry (a drained batch; opened inside this block):
    what `candidates` finds out about the side file and the graph on its first call is kept for the batch
    (issue 17: the node count, a scan, and the stamp and tail checks, by key, were ~2 ms an entry; the tail's
    in-memory counts were made anew for each entry). Inside the transaction only this writer changes the graph
    and only by creating nodes (`Store.run("node_create")` notes each, in order), so the tail grows by the
    nodes it notes and the count with it; the side file is not written during a transaction (kg/store/
    sideindex.py: only `sync`, outside one)."""
    if not embedded(st) or st._in_tx or st.__dict__.get("_side_batch") is not None:
        yield
        return
    memo: dict[str, Any] = {}
    st.__dict__["_side_batch"] = memo
    try:
        yield
    finally:
        st.__dict__.pop("_side_batch", None)
        if memo.get("mem") is not None:
            memo["mem"].close()


def _opened(st: Any) -> dict[str, Any]:
    """The side file (or None), how many of the graph's first nodes it holds, and the tail after them: asked of
    the graph once per batch (`batch`), else at each call."""
    memo = st.__dict__.get("_side_batch") if st._in_tx else None
    if memo is not None and "have" in memo:
        if memo["have"] is None:
            return memo
        created = st.__dict__.get("_side_created", [])
        new = created[memo["noted"]:]
        if new:  # this batch's nodes since the last call, at the next positions
            at = memo["have"] + len(memo["tail"])
            rows = list(enumerate(new, start=at))
            memo["tail"] += rows
            memo["noted"] = len(created)
            if memo.get("mem") is None:
                memo["mem"] = linkpost.memory((p, link_text(r.get("tokens"))) for p, r in rows)
            else:
                memo["mem"].execute("BEGIN")
                linkpost.add(memo["mem"], [(p, link_text(r.get("tokens"))) for p, r in rows])
                memo["mem"].execute("COMMIT")
        return memo
    if not st._in_tx and (st.__dict__.get("_side_created") or st.__dict__.get("_side_dirty")):
        safe_sync(st)  # committed nodes not yet in the file: a writer may write it between transactions
    count = _count(st)
    try:
        opened = _reader(st, count)
        if opened is None and not st._in_tx:
            safe_sync(st)
            opened = _reader(st, count)
    except sqlite3.Error:
        opened = None
    if opened is None and count > SCRATCH_MAX:
        out: dict[str, Any] = {"have": None}
    else:
        side, have = opened if opened is not None else (None, 0)
        tail = _tail(st, have, count)
        mem = linkpost.memory((p, link_text(r.get("tokens"))) for p, r in tail) if tail else None
        out = {"side": side, "have": have, "tail": tail, "mem": mem, "parts": {},
               "noted": len(st.__dict__.get("_side_created", []))}
    if memo is not None:
        memo.update(out)
    return out


def candidates(st: Any, words: list[str], k: int) -> list[tuple[str, str, float]] | None:
    """(id, kind, score) of the `k` best nodes for these query words, best first, as node_fts answers
    `QUERY_FTS_INDEX(..., " ".join(words), top := k)`; None for a team graph (its own index answers). When
    the side file cannot answer (missing, of another version, damaged) outside a transaction it is synced
    first; inside one, a graph of at most `SCRATCH_MAX` nodes is indexed whole in memory, a bigger one gets
    no candidates (its entries are applied unlinked, never refused) until the next sync."""
    if not embedded(st):
        return None
    with opened(st) as state:
        return _best(state, words, k)


@contextmanager
def opened(st: Any) -> Iterator[dict[str, Any]]:
    """`_opened`'s state for one question (the side file, how many nodes it holds, the tail after them), its
    in-memory tail index closed after unless a batch keeps it (`batch`)."""
    state = _opened(st)
    kept = "noted" in st.__dict__.get("_side_batch", {}) if st._in_tx else False
    try:
        yield state
    finally:
        if not kept and state.get("mem") is not None:
            state["mem"].close()


def _best(state: dict[str, Any], words: list[str], k: int) -> list[tuple[str, str, float]]:
    if state["have"] is None:
        return []
    side, tail, mem = state["side"], state["tail"], state["mem"]
    query = stems(link_text(" ".join(words), query=True).split())
    if not query or k < 1:
        return []
    parts = ([_Part(side.db, query, state["parts"])] if side is not None else []) + (
        [_Part(mem, query)] if mem is not None else [])
    best = top(parts, query, k)
    mine = dict(tail)
    rows = side.rows_at([p for p, _ in best if p not in mine]) if side is not None else {}
    out = []
    for p, s in best:
        r = mine.get(p) or rows.get(p)
        if r is not None:
            out.append((r["id"], r["kind"], s))
    return out
