"""A journal batch applied to a team graph in one atomic write (`FalkorStore.batched()`, used by the drain).

Applying a record one statement at a time costs about 16 round trips to the server (the node, its pattern,
its keyword counts, its auto edges): a backlog of thousands of entries waited minutes behind a busy server.
Inside `batched()` the writes of the whole batch are kept here and sent at the end as ONE query: every write
statement in journal order, each one a part of the query (`... WITH count(*) AS _w3 <next statement>`), with
its parameters renamed apart. FalkorDB runs a query atomically (a failing query is undone), and the server
writes it to its append-only file once it has run, so a server killed in the middle of a batch has either all
of it or none of it: the journal keeps the batch until the write is acknowledged, and a replay skips the ids
that are in the graph, which then have their pattern, links and counts too. (A batch too long for one query
goes as a few queries in one MULTI/EXEC, which Redis also replays whole or not at all.)

Reads in between must see the batch's own writes, as they would one statement at a time. What apply reads
(kg/ingest/apply.py, kg/graph/linking.py) is answered from the server (which holds the graph as it was when
the batch began: the writer lock is held, nobody else writes) with the batch's writes laid over it:

- `node_exists`, `pattern_has_key`, `pattern_get`: the nodes created in the batch count too;
- `meta_get`, `link_terms_df(_many)`: the values set in the batch win;
- `pattern_of_event`: an event joined to a pattern in the batch answers that pattern;
- `link_node`: a node created in the batch answers from its creation, an event's pattern key as the batch set it
  (near-duplicate attach compares a new entry with the first event of the pattern it would join);
- `link_candidates`: the server's hits (their pattern keys as the batch set them), then the batch's own
  earlier nodes that hold a query term (the same stems the index matches). Those are not ranked by the index
  with the rest: an event can see a few more candidates than one statement at a time would give it, never
  fewer; the pure decisions choose among them as before.

Any other statement (a read this module does not model, or a write it does not know) first sends what is
kept, then runs as usual: correct always, atomic only for the known path. Server answers are remembered for
the batch (the graph does not change under the lock).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kg.core.text import stem, words

MAX_PARTS = 400  # statements per query: a longer batch goes as several queries in one MULTI/EXEC

Row = dict[str, Any]
_PARAM = re.compile(r"\$(\w+)")
_COMMENT = re.compile(r"^\s*//.*$", re.M)
_CANDIDATE = ("id", "kind", "entry_type", "category", "area", "text", "created_at", "pattern_key")
WRITES = frozenset({"node_create", "meta_set", "pattern_add_new_member", "pattern_add_member",
                    "pattern_event_set_key", "link_terms_set", "link_terms_load", "sessions_touch",
                    "link_add_caused_by", "link_add_led_to", "link_add_supports", "link_add_contradicts",
                    "link_add_related_to"})


class Batch:
    """The writes kept for one batch, and what they change as the modelled reads see it."""

    def __init__(self, text_of: Callable[[str], str], read: Callable[[str, Row], list[Row]],
                 send: Callable[[list[tuple[str, Row]]], None]):
        self.text_of, self.read, self.send = text_of, read, send
        self.parts: list[tuple[str, Row]] = []        # (statement text, its parameters), in order
        self.nodes: dict[str, Row] = {}               # id -> node_create's parameters
        self.meta: dict[str, Any] = {}
        self.member_of: dict[str, str] = {}           # event id -> pattern id
        self.event_key: dict[str, Any] = {}           # event id -> the pattern key set on it
        self.terms: dict[str, int] = {}
        self.memo: dict[tuple[str, str], list[Row]] = {}
        self.sent = 0

    # -- writes ---------------------------------------------------------------------------------------------
    def write(self, name: str, params: Row) -> list[Row]:
        self.parts.append((self.text_of(name), params))
        if name == "node_create":
            self.nodes[params["id"]] = params
        elif name == "meta_set":
            self.meta[params["key"]] = params["value"]
        elif name in ("pattern_add_new_member", "pattern_add_member"):
            self.member_of.setdefault(params["event"], params["pattern"])
        elif name == "pattern_event_set_key":
            self.event_key[params["id"]] = params["key"]
        elif name == "link_terms_set":
            self.terms[params["term"]] = params["df"]
        elif name == "link_terms_load":
            self.terms.update((r["term"], r["df"]) for r in params["rows"])
        return []

    def flush(self) -> None:
        """Send what is kept (one query, or a few in one MULTI/EXEC); what it changed is then on the server."""
        if self.parts:
            parts, self.parts = self.parts, []
            self.send(parts)
            self.sent += len(parts)
        self.nodes.clear()
        self.meta.clear()
        self.member_of.clear()
        self.event_key.clear()
        self.terms.clear()
        self.memo.clear()

    # -- reads ----------------------------------------------------------------------------------------------
    def answer(self, name: str, params: Row) -> list[Row] | None:
        """A modelled read, or None (then the caller flushes and runs it)."""
        model = _READS.get(name)
        return None if model is None else model(self, params)

    def server(self, name: str, params: Row) -> list[Row]:
        key = (name, repr(sorted(params.items())))
        if key not in self.memo:
            self.memo[key] = self.read(name, params)
        return [dict(r) for r in self.memo[key]]

    def _node_exists(self, p: Row) -> list[Row]:
        return [{"id": p["id"]}] if p["id"] in self.nodes else self.server("node_exists", p)

    def _meta_get(self, p: Row) -> list[Row]:
        return [{"value": self.meta[p["key"]]}] if p["key"] in self.meta else self.server("meta_get", p)

    def _pattern_has_key(self, p: Row) -> list[Row]:
        n = self.nodes.get(p["id"])
        if n is not None:
            return [{"id": n["id"]}] if n["kind"] == "pattern" and n["pattern_key"] == p["key"] else []
        return self.server("pattern_has_key", p)

    def _pattern_sources(self, p: Row) -> list[Row]:
        return [] if p["id"] in self.nodes else self.server("pattern_sources", p)  # a new node: nothing points at it

    def _pattern_get(self, p: Row) -> list[Row]:
        rows = self.server("pattern_get", p)
        rows += [{"id": n["id"], "key": n["pattern_key"], "text": n["text"], "status": n["status"],
                  "area": n["area"], "merged_into": None} for n in self.nodes.values()
                 if n["kind"] == "pattern" and p["ref"] in (n["id"], n["pattern_key"])]
        return sorted(rows, key=lambda r: r["id"])

    def _pattern_of_event(self, p: Row) -> list[Row]:
        pid = self.member_of.get(p["id"])
        if pid is None:
            return self.server("pattern_of_event", p)
        n = self.nodes.get(pid)
        key = n["pattern_key"] if n is not None else next(
            (r["key"] for r in self.server("pattern_get", {"ref": pid}) if r["id"] == pid), None)
        return [{"id": pid, "key": key}]

    def _terms_df(self, p: Row) -> list[Row]:
        return [{"df": self.terms[p["term"]]}] if p["term"] in self.terms else self.server("link_terms_df", p)

    def _terms_df_many(self, p: Row) -> list[Row]:
        rows = [r for r in self.server("link_terms_df_many", p) if r["term"] not in self.terms]
        return rows + [{"term": t, "df": self.terms[t]} for t in p["terms"] if t in self.terms]

    def _link_node(self, p: Row) -> list[Row]:
        n = self.nodes.get(p["id"])
        rows = [{c: n.get(c) for c in _CANDIDATE}] if n is not None else self.server("link_node", p)
        for r in rows:
            r["pattern_key"] = self.event_key.get(r["id"], r["pattern_key"])
        return rows

    def _candidates(self, p: Row) -> list[Row]:
        rows = self.server("link_candidates", p)
        for r in rows:
            if r["id"] in self.event_key:
                r["pattern_key"] = self.event_key[r["id"]]
        wanted = {stem(w) for w in words(p["q"])}
        for n in self.nodes.values():  # the batch's own earlier nodes that hold a query term
            if wanted & {stem(w) for w in words(n.get("tokens") or "")}:
                row = {c: n.get(c) for c in _CANDIDATE}
                row["pattern_key"] = self.event_key.get(n["id"], row["pattern_key"])
                rows.append({**row, "score": 0.0})
        return rows


_READS: dict[str, Callable[[Batch, Row], list[Row]]] = {
    "node_exists": Batch._node_exists, "meta_get": Batch._meta_get, "pattern_has_key": Batch._pattern_has_key,
    "pattern_sources": Batch._pattern_sources, "pattern_get": Batch._pattern_get,
    "pattern_of_event": Batch._pattern_of_event, "link_terms_df": Batch._terms_df,
    "link_terms_df_many": Batch._terms_df_many, "link_candidates": Batch._candidates, "link_node": Batch._link_node,
}


def guess_candidates(counts: Any, texts: list[str], rules: Any) -> list[Row]:
    """The `link_candidates` lookups a batch's records will make, in order, from the keyword counts each will
    find (kg/graph/linking.py `candidates`: the counts before it, every earlier record counted in). A record that
    makes a new pattern shifts the counts a little; its later records then miss the guess and ask as usual."""
    from kg.graph import linking

    if counts is None or counts.get(linking.DOCS_KEY) is None:
        return []
    added: dict[str, int] = {}
    out: list[Row] = []
    seen: set[str] = set()
    for text in texts:
        keys = linking.node_terms(text or "", rules)
        if not keys:
            continue
        df = {t: (counts.get(t) or 0) + added.get(t, 0) for t in keys}
        n_docs = (counts.get(linking.DOCS_KEY) or 0) + added.get(linking.DOCS_KEY, 0)
        query = linking.pick_query_terms(keys, linking._raw_map(text, rules), df, n_docs, rules)
        for t in (*keys, linking.DOCS_KEY):
            added[t] = added.get(t, 0) + 1
        q = " ".join(query)
        if query and q not in seen:
            seen.add(q)
            out.append({"q": q, "k": rules.top})
    return out


def queries(parts: list[tuple[str, Row]]) -> list[tuple[str, Row]]:
    """The kept statements as few queries: each statement a part, its parameters renamed `w<i>_<name>`."""
    out = []
    for start in range(0, len(parts), MAX_PARTS):
        texts: list[str] = []
        params: Row = {}
        for i, (text, p) in enumerate(parts[start:start + MAX_PARTS]):
            body = _COMMENT.sub("", text).strip()
            texts.append(_PARAM.sub(lambda m, i=i: f"$w{i}_{m.group(1)}", body))
            params.update((f"w{i}_{k}", v) for k, v in p.items())
        out.append(("\n".join(f"{t}\nWITH count(*) AS _w{i}" for i, t in enumerate(texts)) + "\nRETURN 1 AS done",
                    params))
    return out
