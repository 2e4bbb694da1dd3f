"""How memory search reads the graph: straight from Kùzu for a one-off call, or from an in-process cache when
the workspace is held open (`with ws:`). Both answer the same questions with the same rows."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from kg.core.text import search_words
from kg.ingest.journal import write_atomic
from kg.memory.rules import memory_rules

COMMON_FILE = "common-terms.json"


def link_weight(manual: bool | None, score: float | None) -> float:
    """How much a neighbour counts: a link made by hand is a fact; an auto-link is a guess, worth half its own
    score. Pure."""
    if manual:
        return 1.0
    return 0.5 * min(1.0, max(0.0, float(score if score is not None else 0.5)))


# -- the common-term list (the fallback when the keyword table was never filled) -------------------------------
def _common_path(ws: Any) -> Path:
    return ws.kg_dir / COMMON_FILE


def refresh_common_terms(ws: Any, st: Any) -> int:
    """Count document frequencies over every node and keep the common terms (above half the threshold, so a
    rules change can move the line either way). Saved in memory/.kg/common-terms.json."""
    rules = memory_rules(ws).search
    df: Counter[str] = Counter()
    n = 0
    for row in st.run("memory_all_tokens"):
        n += 1
        df.update(set((row["tokens"] or "").split()))
    keep = {t: c for t, c in df.items() if c > rules.common_fraction * n / 2 and c > 1}
    doc = {"nodes": n, "df": dict(sorted(keep.items()))}
    write_atomic(_common_path(ws), json.dumps(doc, ensure_ascii=False).encode("utf-8"))
    ws.__dict__["_common_terms"] = (n, keep)
    return len(keep)


def common_terms(ws: Any, st: Any) -> tuple[int, dict[str, int]]:
    cached = ws.__dict__.get("_common_terms")
    if cached is not None:
        return cached
    try:
        doc = json.loads(_common_path(ws).read_text(encoding="utf-8"))
        value = (int(doc["nodes"]), {str(k): int(v) for k, v in doc["df"].items()})
    except (FileNotFoundError, ValueError, KeyError, TypeError, AttributeError):
        value = (0, {})
    count = st.run("memory_node_count")[0]["n"]
    # Rebuilt when missing on a sizeable graph, or when the graph has doubled since.
    if (value[0] == 0 and count >= 1000) or (value[0] and count > 2 * value[0]):
        refresh_common_terms(ws, st)
        return ws.__dict__["_common_terms"]
    ws.__dict__["_common_terms"] = (count, value[1])
    return ws.__dict__["_common_terms"]


# -- full-text top-k, ties broken by id ----------------------------------------------------------------------
SCORE_DIGITS = 9  # scores compared to this many decimals: summed per term, their last bits may vary


def ranked(rows: list[dict[str, Any]], k: int) -> list[dict[str, Any]]:
    """The top `k` rows, best score first and ties broken by id (scores rounded to `SCORE_DIGITS`). Pure."""
    out = sorted(({**r, "score": round(float(r["score"]), SCORE_DIGITS)} for r in rows),
                 key=lambda r: (-r["score"], r["id"]))
    return out[:k]


def _fts(st: Any, name: str, q: str, k: int) -> list[dict[str, Any]]:
    """`name`'s top `k` for `q`, the same every time: the index is asked on one thread (its top-k picks among
    tied scores by thread timing on several; the one-off reader and the read server run one), and its rows
    are ordered by score then id. Which of many rows tied at the k-th come back is the index's own
    single-thread order: fixed for a given graph, but not by id (asking every match in id order cost 2.4 times
    the CPU of a served search at 100k entries, where templated texts tie by thousands; asking 2k rows and
    cutting by id, 1.35 times)."""
    if fallback_mode(st) in ("scan", "scan_read_only"):
        return _scan(st, name, q, k)
    one_thread = getattr(st, "one_thread", None)  # Kùzu's; a FalkorDB graph orders by id in the query
    if one_thread is None:
        return ranked(st.run(name, q=q, k=k), k)
    with one_thread():
        return ranked(st.run(name, q=q, k=k), k)


# the columns of `search_node`, in its order: a row `Direct.fresh` puts together is the row that query reads
NODE_FIELDS = ("id", "kind", "entry_type", "text", "details", "category", "priority", "status", "session", "tags",
               "context", "pinned", "created_at", "reinforced_at")


def fallback_mode(st: Any) -> str:
    """How a search the side index cannot serve asks: "index", the graph's own full-text index (a team graph;
    an old embedded graph until its writer drops node_fts), else "scan" (issue 22: the embedded graph has no
    full-text index of its own; search says so, and `kg doctor` rebuilds the side file)."""
    from kg.store.sideindex import embedded

    if not embedded(st):
        return "index"
    known = st.__dict__.get("_has_node_fts")
    if known is None:
        known = st.__dict__["_has_node_fts"] = bool(st.has_fts())
    if known:
        return "index"
    import os

    from kg.store.sideindex import path_of

    # a read-only workspace (a backup, a read-only mount): nothing is wrong with the file and no repair is due
    # there; SQLite cannot open a WAL file without its -shm where it cannot make one (QA3 #6)
    return "scan" if os.access(path_of(st.path).parent, os.W_OK) else "scan_read_only"


def _scan(st: Any, name: str, q: str, k: int) -> list[dict[str, Any]]:
    """Every node's words read once, scored by the query words each holds (a plain scan: seconds at a million
    entries, for a read the side index cannot serve)."""
    from kg.core.text import words

    asked = set(words(q))
    if not asked:
        return []
    scored = []
    for r in st.execute("MATCH (n:Node) RETURN n.id AS id, n.tokens AS tokens"):
        s = len(asked & set((r["tokens"] or "").split()))
        if s:
            scored.append({"id": r["id"], "score": float(s)})
    best = ranked(scored, k)
    if name == "memory_fts_ids" or not best:
        return best
    score = {r["id"]: r["score"] for r in best}
    rows = st.execute("MATCH (n:Node) WHERE n.id IN $ids RETURN n.id AS id, n.kind AS kind, n.entry_type AS "
                      "entry_type, n.text AS text, n.details AS details, n.category AS category, n.priority AS "
                      "priority, n.status AS status, n.session AS session, n.tags AS tags, n.context AS context, "
                      "n.pinned AS pinned, n.created_at AS created_at, n.reinforced_at AS reinforced_at",
                      {"ids": list(score)})
    return ranked([{**r, "score": score[r["id"]]} for r in rows], k)


# -- the two views ----------------------------------------------------------------------------------------
Neighbour = tuple[str, dict[str, Any], float, str]  # (from, the neighbour's row, link weight, edge type)


def _side_match(side: Any, ws: Any, plan: Any, rules: Any, k: int) -> tuple[dict[int, float], str]:
    from kg.memory.search_side import candidates

    found = candidates(side, ws, plan, rules, k)
    return dict(found.scored), found.mode


class Direct:
    """One-shot use (a CLI call): ask the side index (kg/store/sideindex.py) and Kùzu for what this query
    needs, by key or by index range. Without a side index (a team graph, a file that cannot be read), the
    graph's own full-text index."""

    def __init__(self, st: Any, side: Any = None):
        self.st, self.side = st, side

    def fts(self, q: str, k: int) -> list[dict[str, Any]]:
        return _fts(self.st, "memory_fts", q, k)

    def match(self, ws: Any, plan: Any, rules: Any, k: int) -> tuple[list[dict[str, Any]], str]:
        """The full-text candidates with their score, and how they were asked (ranked / bounded / relaxed;
        "index": the graph's own index, asked the plan's capped terms)."""
        if self.side is None:
            return (self.fts(" ".join(plan.ask), k) if plan.ask else []), fallback_mode(self.st)
        scored, mode = _side_match(self.side, ws, plan, rules, k)
        rows = self.side.rows_at(list(scored))
        return ranked([{**rows[p], "score": s} for p, s in scored.items() if p in rows],
                      k if mode == "ranked" else len(scored)), mode

    def side_df(self, term: str) -> int | None:
        """How many nodes hold `term` by the side index's count (None without one)."""
        return self.side.df(term) if self.side is not None else None

    def fresh(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """The current rows of these nodes (priority, status, pinning and reinforcement change after a node
        is created): the side index's row with its kept state (kg/store/sidestate.py); a node whose state it
        does not keep right, those four columns by key over its row (issue 17: reading every column by key was
        ~60 % of a served search at 1M nodes); a node the side index does not hold, read whole."""
        out = {}
        try:
            kept = self.side.rows_by_id(ids) if self.side is not None else {}
            state = self.side.state(list(kept)) if kept else {}  # (issue 17) kept current: no lookup by key
        except sqlite3.Error:  # a damaged side index: every column from the graph
            kept, state = {}, {}
        for i in ids:
            base = kept.get(i)
            if base is None:
                for r in self.st.run("search_node", id=i):
                    out[r["id"]] = r
                continue
            now = state.get(i)
            for r in [{"id": i, **now}] if now is not None else self.st.run("search_node_state", id=i):
                out[r["id"]] = {k: r[k] if k in r else base[k] for k in NODE_FIELDS}
        return out

    def neighbours(self, ids: list[str], per_node: int) -> list[Neighbour]:
        return [(i, r, link_weight(r["manual"], r["link_score"]), r["type"])
                for i in ids for r in self._neighbours_of(i, per_node)]

    def _neighbours_of(self, node_id: str, per_node: int) -> list[dict[str, Any]]:
        """`memory_neighbours_of`'s rows: with the side index, the edges and ids by key, the rows from the file
        with their kept state (issue 17); the whole query when any of them is not kept right."""
        if self.side is None:
            return self.st.run("memory_neighbours_of", id=node_id, limit=per_node)
        from kg.store.sideindex import current_rows

        edges = self.st.run("memory_neighbour_ids_of", id=node_id, limit=per_node)
        kept = current_rows(self.st, list(dict.fromkeys(e["id"] for e in edges))) if edges else {}
        if any(e["id"] not in kept for e in edges):
            return self.st.run("memory_neighbours_of", id=node_id, limit=per_node)
        return [{"type": e["type"], "manual": e["manual"], "link_score": e["link_score"],
                 **{k: kept[e["id"]][k] for k in NODE_FIELDS}} for e in edges]

    def session_members(self, sessions: list[str], limit: int) -> dict[str, list[tuple[Any, str]]]:
        """(time, id) of the entries of these sessions, at most `limit` (one scan of two columns; the rows
        search needs are then read by key)."""
        out: dict[str, list[tuple[Any, str]]] = {}
        if self.side is not None:  # an index range read per session, whatever the graph's size
            for s, at, i in self.side.session_members(sessions, limit):
                out.setdefault(s, []).append((at, i))
            return out
        for r in self.st.run("search_session_members", sessions=sessions, limit=limit):
            out.setdefault(r["session"], []).append((r["created_at"], r["id"]))
        return out

    def by_id(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """The rows of these nodes that exist, one indexed lookup each (a list of keys is a scan in Kùzu
        0.11.3: `kg.store.bulk.run_each`); from the side index when there is one (as created: see `fresh`)."""
        if self.side is not None:
            return self.side.rows_by_id(ids)
        out = {}
        for i in ids:
            for r in self.st.run("search_node", id=i):
                out[r["id"]] = r
        return out

    def between(self, start: datetime, end: datetime, limit: int) -> list[dict[str, Any]]:
        if self.side is not None:
            return self.side.between(start, end, limit)
        return self.st.run("memory_nodes_between", after=start, before=end, limit=limit)

    def recent(self, limit: int) -> list[dict[str, Any]]:
        if self.side is not None:
            return self.side.recent(limit)
        return self.st.run("memory_recent", limit=limit)

    def words(self, node_id: str, body: str) -> set[str]:
        return search_words(body)


def _newest(rows: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    rows = sorted(rows, key=lambda n: n["id"])
    rows.sort(key=lambda n: n.get("created_at") or datetime.min, reverse=True)
    return rows[:limit]


class Cached:
    """Repeated use in one process (`with ws:`): node fields and adjacency held in memory, because Kùzu 0.11.3
    answers a lookup by id in milliseconds at 100k nodes. Rebuilt whenever the graph's files change."""

    def __init__(self, st: Any, stamp: tuple):
        self.st, self.stamp = st, stamp
        self.nodes = {r["id"]: r for r in st.run("memory_nodes_all")}
        self.memo: dict[Any, Any] = {}  # lists derived from the nodes (inject's principles, watch list)
        self.adj: dict[str, list[tuple[str, float, str]]] = {}
        for r in st.run("memory_edges_all"):
            w = link_weight(r["manual"], r["link_score"])
            self.adj.setdefault(r["src"], []).append((r["dst"], w, r["type"]))
            self.adj.setdefault(r["dst"], []).append((r["src"], w, r["type"]))
        for links in self.adj.values():  # as memory_neighbours_of: by id then type, not by the scan's order
            links.sort(key=lambda x: (x[0], x[2], -x[1]))

    def fts(self, q: str, k: int) -> list[dict[str, Any]]:
        return [{**self.nodes[r["id"]], "score": r["score"]} for r in _fts(self.st, "memory_fts_ids", q, k)
                if r["id"] in self.nodes]

    def match(self, ws: Any, plan: Any, rules: Any, k: int) -> tuple[list[dict[str, Any]], str]:
        from kg.store.sideindex import for_reading

        side = for_reading(self.st)
        if side is None:
            return (self.fts(" ".join(plan.ask), k) if plan.ask else []), fallback_mode(self.st)
        scored, mode = _side_match(side, ws, plan, rules, k)
        ids = {p: r["id"] for p, r in side.rows_at(list(scored)).items()}
        return ranked([{**self.nodes[ids[p]], "score": s} for p, s in scored.items()
                       if p in ids and ids[p] in self.nodes], k if mode == "ranked" else len(scored)), mode

    def side_df(self, term: str) -> int | None:
        from kg.store.sideindex import for_reading

        side = for_reading(self.st)
        return side.df(term) if side is not None else None

    def fresh(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        return self.by_id(ids)

    def neighbours(self, ids: list[str], per_node: int) -> list[Neighbour]:
        return [(i, self.nodes[j], w, t) for i in ids for j, w, t in self.adj.get(i, ())[:per_node]
                if j in self.nodes]

    def by_id(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        return {i: self.nodes[i] for i in ids if i in self.nodes}

    def session_members(self, sessions: list[str], limit: int) -> dict[str, list[tuple[Any, str]]]:
        members = self.memo.get("sessions")
        if members is None:
            members = self.memo["sessions"] = {}
            for n in sorted(self.nodes.values(), key=lambda n: (n["session"] or "", n["created_at"] is None,
                                                              n["created_at"] or datetime.min, n["id"])):
                if n["session"]:
                    members.setdefault(n["session"], []).append((n["created_at"], n["id"]))
        out, left = {}, limit
        for s in sorted(set(sessions)):  # as the query: by session, then time and id, `limit` in all
            if s in members and left > 0:
                out[s] = members[s][:left]
                left -= len(out[s])
        return out

    def between(self, start: datetime, end: datetime, limit: int) -> list[dict[str, Any]]:
        return _newest([n for n in self.nodes.values() if n["kind"] != "pattern" and n.get("created_at")
                        and start <= n["created_at"] < end], limit)

    def recent(self, limit: int) -> list[dict[str, Any]]:
        return _newest([n for n in self.nodes.values() if n["kind"] != "pattern"], limit)

    def words(self, node_id: str, body: str) -> set[str]:
        """A node's words, tokenised once per cache (search re-ranks the same nodes query after query)."""
        memo = self.memo.setdefault("words", {})
        found = memo.get(node_id)
        if found is None:
            found = memo[node_id] = search_words(body)
        return found


def _stamp(ws: Any) -> tuple:
    out = []
    for suffix in ("", ".wal"):
        p = Path(str(ws.graph_path) + suffix)
        try:
            s = p.stat()
            out.append((s.st_mtime_ns, s.st_size))
        except FileNotFoundError:
            out.append(None)
    return tuple(out)


def cached_view(ws: Any, st: Any) -> Cached | None:
    """The in-process cache (every node's fields, adjacency, a memo) when the workspace is held open."""
    v = view(ws, st)
    return v if isinstance(v, Cached) else None


def view(ws: Any, st: Any) -> Direct | Cached:
    # One-shot unless the caller holds the workspace open across calls (`with ws:`). Not `ws.is_held`: every
    # `ws.store()` block sets that, so a single CLI search would read every node first (~0.9 s at 100k).
    if not ws.in_batch:
        from kg.store.sideindex import for_reading

        return Direct(st, for_reading(st))
    stamp = _stamp(ws)
    cached = ws.__dict__.get("_search_cache")
    if cached is None or cached.stamp != stamp or cached.st is not st:
        cached = Cached(st, stamp)
        ws.__dict__["_search_cache"] = cached
    return cached
