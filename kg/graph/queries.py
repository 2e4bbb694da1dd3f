"""Graph queries: a summary of the graph or of a neighbourhood (shaped like the seed's `--graph-query`), the
chain that joins two nodes, and why each edge of a node exists.

`query` takes `all`, `type:T` (a node kind, or an entry type such as `error`), `tag:X` or a node id, and walks
`depth` steps from the start nodes in both directions. Unlike the seed, every edge between two nodes of the
result is shown (the seed dropped edges that led back to a visited node).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kg.core.errors import NotFound, UsageError
from kg.core.text import nfc
from kg.store import EDGE_TYPES, KNOWLEDGE_KINDS, plain

MAX_DEPTH = 6


def _json(row: dict[str, Any]) -> dict[str, Any]:
    return plain(row)


def parse_target(target: str | None, entry_types: tuple[str, ...]) -> tuple[str, str]:
    """('all'|'type'|'tag'|'id', value) from the query argument."""
    text = nfc((target or "all").strip())
    if not text or text.lower() == "all":
        return "all", ""
    if text.lower().startswith("type:"):
        value = text[5:].strip().lower()
        if value not in KNOWLEDGE_KINDS + tuple(entry_types):
            raise UsageError(f"unknown type {value!r} in {text!r}: use type: with one of "
                             f"{', '.join(KNOWLEDGE_KINDS + tuple(entry_types))}")
        return "type", value
    if text.lower().startswith("tag:"):
        value = text[4:].strip()
        if not value:
            raise UsageError("tag: needs a tag, as in tag:git")
        return "tag", value
    return "id", text


def _each(st: Any, name: str, ids: Any) -> list[dict[str, Any]]:
    """A per-id query over many ids, each by primary key (see rules/queries/graph.cypher)."""
    from kg.store.bulk import run_each

    return run_each(st, name, ({"id": i} for i in ids))


def _edges_among(st: Any, ids: list[str]) -> list[dict[str, Any]]:
    """The edges whose two ends are both in `ids`, oldest first."""
    inside = set(ids)
    rows = [r for r in _each(st, "graph_edges_from", ids) if r["dst"] in inside]
    return sorted(rows, key=lambda r: (r["created_at"] or datetime.min, r["src"], r["dst"], r["type"]))


def query(ws: Any, target: str | None = "all", *, depth: int = 1, limit: int = 100) -> dict[str, Any]:
    """Nodes grouped by kind and the edges between them. `limit` caps the nodes listed per kind (0: no cap);
    the counts are always complete."""
    if depth < 0 or depth > MAX_DEPTH:
        raise UsageError(f"--depth must be from 0 to {MAX_DEPTH}")
    if limit < 0:
        raise UsageError("--limit must be 0 (no limit) or more")
    how, value = parse_target(target, ws.policy.kinds)
    cap = limit or 10**9
    with ws.reading() as st:
        if how == "all":
            counts = {r["kind"]: r["n"] for r in st.run("graph_count_kinds")}
            nodes = [n for kind in KNOWLEDGE_KINDS for n in st.run("graph_nodes_all", kind=kind, limit=cap)]
            edge_total = sum(r["n"] for r in st.run("graph_count_edges"))
            ids = [n["id"] for n in nodes]
            edges = (st.run("graph_edges_every", limit=10**9) if len(nodes) == sum(counts.values())
                     else _edges_among(st, ids))
            start: list[str] = []
        else:
            if how == "id":
                start = [r["id"] for r in st.run("node_exists", id=value)]
                if not start:
                    raise NotFound(f"no node {value!r}: `kg list` shows the ids")
            else:
                start = [r["id"] for r in st.run("graph_nodes_matching", type=value if how == "type" else "",
                                                  tag=value if how == "tag" else "", limit=10**9)]
            seen = dict.fromkeys(start)
            frontier = list(start)
            for _ in range(depth):
                if not frontier:
                    break
                step = [i for i in dict.fromkeys(r["id"] for r in _each(st, "graph_neighbours", frontier))
                        if i not in seen]
                seen.update(dict.fromkeys(step))
                frontier = step
            every = sorted(_each(st, "graph_nodes", seen), key=lambda n: (n["created_at"] or datetime.min, n["id"]))
            counts = {}
            for n in every:
                counts[n["kind"]] = counts.get(n["kind"], 0) + 1
            per_kind: dict[str, int] = {}
            nodes = []
            for n in every:
                per_kind[n["kind"]] = per_kind.get(n["kind"], 0) + 1
                if per_kind[n["kind"]] <= cap:
                    nodes.append(n)
            edges = _edges_among(st, [n["id"] for n in nodes])
            edge_total = len(_edges_among(st, list(seen))) if len(nodes) < len(every) else len(edges)
    order = {k: i for i, k in enumerate(KNOWLEDGE_KINDS)}
    nodes.sort(key=lambda n: (order.get(n["kind"], 99), n["created_at"] or datetime.min, n["id"]))
    return {
        "query": target or "all", "depth": depth if how != "all" else None, "start": start,
        "counts": {k: counts.get(k, 0) for k in KNOWLEDGE_KINDS},
        "total_nodes": sum(counts.values()), "total_edges": edge_total,
        "nodes": [_json(n) for n in nodes],
        "edges": [_json(e) for e in edges],
    }


def render_query(data: dict[str, Any], icons: dict[str, str]) -> str:
    """The seed's graph print-out: a header, nodes by kind with their icons, then `A ──type──► B` edges."""
    if not data["total_nodes"]:
        return "No nodes found matching query."  # once (it was followed by "No nodes found.")
    lines = ["", f"🕸️  Knowledge Graph ({data['total_nodes']} nodes, {data['total_edges']} edges):", ""]
    text = {n["id"]: n["text"] or "" for n in data["nodes"]}
    for kind in KNOWLEDGE_KINDS:
        group = [n for n in data["nodes"] if n["kind"] == kind]
        total = data["counts"].get(kind, 0)
        if not total:
            continue
        lines.append(f"  {icons.get(kind, '•')} {kind.upper()}s ({total}):")
        for n in group:
            tags = (" " + ", ".join(n["tags"])) if n.get("tags") else ""
            lines.append(f"    [{n['id']}] {(n['text'] or '')[:60]}{tags}")
        if total > len(group):
            lines.append(f"    … and {total - len(group)} more (raise --limit)")
    if data["edges"]:
        lines += ["", "  🔗 Edges:"]
        for e in data["edges"]:
            src = text.get(e["src"], e["src"])
            dst = text.get(e["dst"], e["dst"])
            lines.append(f"    {src[:30]}... ──{e['type']}──► {dst[:30]}...")
        if data["total_edges"] > len(data["edges"]):
            lines.append(f"    … and {data['total_edges'] - len(data['edges'])} more")
    return "\n".join(lines)


def path(ws: Any, src: str, dst: str) -> dict[str, Any]:
    """The shortest chain of edges between two nodes, each hop with its real direction."""
    if src == dst:
        raise UsageError(f"a path needs two different nodes; both are {src}")
    with ws.reading() as st:
        for node_id in (src, dst):
            if not st.run("node_exists", id=node_id):
                raise NotFound(f"no node {node_id!r}: `kg list` shows the ids")
        rows = st.run("graph_path", src=src, dst=dst)
    if not rows:
        return {"from": src, "to": dst, "found": False, "nodes": [], "hops": []}
    nodes = rows[0]["nodes"]
    by_internal = {(n["_id"]["table"], n["_id"]["offset"]): n["id"] for n in nodes}
    hops = []
    for i, r in enumerate(rows[0]["rels"]):
        a = by_internal[(r["_src"]["table"], r["_src"]["offset"])]
        b = by_internal[(r["_dst"]["table"], r["_dst"]["offset"])]
        here = nodes[i]["id"]
        hops.append({"from": a, "to": b, "type": r["_label"], "forward": a == here, "manual": r.get("manual"),
                     "score": r.get("score"), "reason": r.get("reason")})
    return {"from": src, "to": dst, "found": True,
            "nodes": [{"id": n["id"], "kind": n["kind"], "entry_type": n.get("entry_type"), "text": n["text"]}
                      for n in nodes],
            "hops": hops}


def render_path(data: dict[str, Any], icons: dict[str, str]) -> str:
    if not data["found"]:
        return f"No path between {data['from']} and {data['to']}."
    lines = []
    for i, n in enumerate(data["nodes"]):
        if i:
            hop = data["hops"][i - 1]
            arrow = f"──{hop['type']}──►" if hop["forward"] else f"◄──{hop['type']}──"
            lines.append(f"   {arrow}")
        lines.append(f"{icons.get(n['kind'], '•')} [{n['id']}] {(n['text'] or '')[:70]}")
    return "\n".join(lines)


def explain(ws: Any, node_id: str) -> dict[str, Any]:
    """Every edge of a node with how it was made (by hand, or auto with its score) and why."""
    with ws.reading() as st:
        rows = st.run("node_get", id=node_id)
        if not rows:
            raise NotFound(f"no node {node_id!r}: `kg list` shows the ids")
        n = rows[0]["n"]
        edges = [_json(e) for e in st.run("graph_explain", id=node_id)]
    edges.sort(key=lambda e: (e["direction"] != "out", EDGE_TYPES.index(e["type"]), e["other"]))
    return {"node": {"id": n["id"], "kind": n["kind"], "entry_type": n.get("entry_type"), "text": n["text"]},
            "edges": edges}


def render_explain(data: dict[str, Any], icons: dict[str, str]) -> str:
    n = data["node"]
    lines = [f"{icons.get(n['kind'], '•')} [{n['id']}] {n['text']}"]
    if not data["edges"]:
        lines.append("  No edges.")
    for e in data["edges"]:
        arrow = f"──{e['type']}──►" if e["direction"] == "out" else f"◄──{e['type']}──"
        how = "by hand" if e["manual"] else f"auto, score {e['score']:.2f}"
        lines.append(f"  {arrow} [{e['other']}] {(e['other_text'] or '')[:60]}")
        lines.append(f"      {how}, {(e['created_at'] or '')[:16]}: {e['reason'] or 'no reason recorded'}")
    return "\n".join(lines)
