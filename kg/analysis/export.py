"""Export the knowledge graph: GraphML and GEXF (Gephi, yEd, networkx), node-link JSON (d3, networkx),
Mermaid (GitHub markdown, trimmed to the renderers' limits), DOT (Graphviz) and Cypher for Kùzu or Neo4j
(kg.analysis.cypher_export: idempotent, replays into an empty database).

Every exporter takes the typed MultiDiGraph of `kg.analysis.to_networkx` and returns text. Values the
formats cannot hold are flattened the same way everywhere: times become ISO 8601 strings, lists become JSON
arrays in a string, unset values are left out. The graph's text was redacted when it was written, so an
export carries no secret the graph does not.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import networkx as nx

from kg import workspace_out
from kg.analysis.cypher_export import check_dialect, cypher_literal, replay_cypher, split_cypher, to_cypher
from kg.core.errors import ArgumentError
from kg.core.files import atomic_writer
from kg.store import KNOWLEDGE_KINDS

__all__ = [
    "FORMATS",
    "cypher_literal",
    "ExportResult",
    "export_graph",
    "render",
    "replay_cypher",
    "split_cypher",
    "to_cypher",
    "to_dot",
    "to_gexf",
    "to_graphml",
    "to_json",
    "to_mermaid",
    "trim_for_mermaid",
    "write_graphml",
]

FORMATS = ("graphml", "gexf", "json", "mermaid", "dot", "cypher")
SUFFIXES = {"graphml": ".graphml", "gexf": ".gexf", "json": ".json", "mermaid": ".mmd", "dot": ".dot",
            "cypher": ".cypher"}
# Colours per kind, shared by Mermaid, DOT and the drawings.
KIND_COLORS = {"event": "#f4a6a6", "lesson": "#ffe08a", "principle": "#9fd3a8", "knowledge": "#a7c7e7",
               "pattern": "#d5b8e8"}
# Mermaid's own defaults (mermaid.initialize: maxEdges, maxTextSize), which GitHub and mermaid-cli keep: past
# either the renderer draws an error box instead of the diagram.
MERMAID_MAX_EDGES = 500
MERMAID_MAX_TEXT = 50_000
# Graphviz refuses a quoted string longer than 16,384 bytes ("longer than 16384?"): a longer value is cut to fit
DOT_MAX_BYTES = 16_000


@dataclass
class ExportResult:
    format: str
    nodes: int
    edges: int
    out: str | None = None
    text: str | None = None
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"format": self.format, "nodes": self.nodes, "edges": self.edges, "out": self.out,
                "warnings": self.warnings}


def export_graph(workspace: Any = None, fmt: str = "graphml", *, types: str | Iterable[str] | None = None,
                 since: str | datetime | None = None, now: datetime | str | None = None,
                 out: str | Path | None = None, dialect: str | None = None, force: bool = False) -> ExportResult:
    """Export a workspace's graph (from a snapshot: the agent is never locked out) to `out`, or return the
    text in `ExportResult.text` when `out` is None. `dialect` (kuzu or neo4j) is for the cypher format.

    `out` is refused (ArgumentError, a ValueError) where kg or agents keep their files (kg/workspace_out.py: kg's
    state, kg.toml, .git/, instruction files, what `kg install` wrote), before the graph is read; an existing file
    that is not an earlier export of kg's is replaced only with `force`."""
    from kg.analysis import Analysis, to_networkx

    fmt = _format(fmt)
    if dialect is not None and fmt != "cypher":
        raise ArgumentError(f"dialect is for fmt='cypher', not {fmt!r}",
                            cli=f"--dialect is for --format cypher, not {fmt}")
    dialect = check_dialect(dialect or "kuzu")
    tokens = fmt == "cypher" and dialect == "kuzu"  # Kùzu's full-text index reads them
    workspace, ws = workspace_out.source(workspace)
    path = None
    if out is not None:
        path = workspace_out.check_out(ws, out, example="graph" + SUFFIXES[fmt])
        workspace_out.check_replace(ws, path, force=force)
    graph = to_networkx(workspace, types=types, since=since, now=now, include_tokens=tokens)
    try:
        result = _export(graph, fmt, path, dialect)
        if result.out is not None:
            workspace_out.remember(ws, Path(result.out))
        return result
    finally:
        if not isinstance(workspace, Analysis) or graph is not workspace.graph:
            # networkx's edge views refer back to their graph, so a graph is a reference cycle that only a
            # full collection frees; emptying it frees its rows now (hundreds of MB at 100k nodes).
            graph.clear()


def _export(graph: nx.MultiDiGraph, fmt: str, out: str | Path | None, dialect: str = "kuzu") -> ExportResult:
    warnings = []
    if fmt == "mermaid":
        graph, warning = trim_for_mermaid(graph)
        warnings += [warning] if warning else []
    result = ExportResult(fmt, graph.number_of_nodes(), graph.number_of_edges(), warnings=warnings)
    if out is None:
        result.text = render(graph, fmt, dialect=dialect)
        return result
    path = Path(out).expanduser()
    if path.is_dir():
        raise workspace_out.refused(path, f"{{out}} is a folder; name a file, e.g. {path / ('graph' + SUFFIXES[fmt])}")
    try:
        with atomic_writer(path, text=True) as fh:
            if fmt == "graphml":
                write_graphml(graph, fh)
            else:
                fh.write(render(graph, fmt, dialect=dialect))
    except FileNotFoundError:
        raise ArgumentError(f"cannot write {path}: its folder does not exist") from None
    result.out = str(path)
    return result


def _format(fmt: str) -> str:
    name = fmt.strip().lower() if isinstance(fmt, str) else ""
    if name == "mmd":
        name = "mermaid"
    if name not in FORMATS:
        said = f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}"
        raise ArgumentError(f"fmt: {said}", cli=said)
    return name


def render(graph: nx.MultiDiGraph, fmt: str, *, dialect: str = "kuzu") -> str:
    from kg.analysis.checks import graph_of

    graph = graph_of(graph)
    fmt = _format(fmt)
    if fmt == "cypher":
        return to_cypher(graph, dialect=dialect)
    return {"graphml": to_graphml, "gexf": to_gexf, "json": to_json, "mermaid": to_mermaid, "dot": to_dot,
            "cypher": to_cypher}[fmt](graph)


# -- shared flattening -----------------------------------------------------------------------------------------
def flat(value: Any) -> Any:
    """A value as GraphML/GEXF can hold it: None stays None (left out), times and lists become strings."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (list, tuple, set)):
        return json.dumps(list(value), ensure_ascii=False, default=str)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    return str(value)


def _flat_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in ((k, flat(v)) for k, v in attrs.items()) if v is not None}


_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _xml_text(value: str) -> str:
    return _XML_ILLEGAL.sub("\ufffd", value)


# -- GraphML (streamed: 100k nodes in about two seconds and little memory) ------------------------------------
def _graphml_value(value: Any, kind: str) -> str:
    if kind == "boolean":
        return "true" if value else "false"
    if kind == "double":
        return repr(float(value))
    return _xml_text(str(value))


# Characters that make a value need more than copying: markup to escape, or characters XML cannot hold.
_XML_SPECIAL = re.compile("[&<>\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_ATTR_SPECIAL = re.compile("[&<>\"'\t\n\r\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_JSON_LIST = json.JSONEncoder(ensure_ascii=False, default=str).encode


def _xml_escape(text: str) -> str:
    """Element text: `&`, `<`, `>` escaped, characters XML cannot hold replaced (a search, then a copy only
    when something needs it: most values need nothing)."""
    if _XML_SPECIAL.search(text) is None:
        return text
    from xml.sax.saxutils import escape

    return escape(_xml_text(text))


def _xml_attr(text: str) -> str:
    """A quoted attribute value (what `xml.sax.saxutils.quoteattr` gives, without its cost for plain ids)."""
    if _ATTR_SPECIAL.search(text) is None:
        return f'"{text}"'
    from xml.sax.saxutils import quoteattr

    return quoteattr(_xml_text(text))


def _graphml_text(value: Any) -> str | None:
    """A value of a `string` GraphML key, as `flat` then `_graphml_value` give it; None to leave it out."""
    cls = type(value)
    if cls is str:
        return _xml_escape(value)
    if value is None:
        return None
    if cls is datetime:
        return value.isoformat()
    if cls is list or cls is tuple or cls is set:
        return _xml_escape(_JSON_LIST(list(value))) if value else "[]"
    if cls is float and not math.isfinite(value):
        return None
    return _xml_escape(str(flat(value)))


def _graphml_bool(value: Any) -> str | None:
    return None if value is None else ("true" if value else "false")


def _graphml_long(value: Any) -> str | None:
    return None if value is None else str(value)


def _graphml_double(value: Any) -> str | None:
    if value is None or not math.isfinite(value):
        return None
    return repr(float(value))


_GRAPHML_WRITERS = {"string": _graphml_text, "boolean": _graphml_bool, "long": _graphml_long,
                    "double": _graphml_double}


def _graphml_types(items: Iterable[dict[str, Any]]) -> dict[str, str]:
    """GraphML key types from the values present: all bool → boolean, all int → long, int and float →
    double; times, lists and anything else that is flattened → string. Keys only ever None are left out."""
    seen: dict[str, set[type]] = defaultdict(set)
    for attrs in items:
        for k, v in attrs.items():
            seen[k].add(v.__class__)
    out = {}
    for k, ts in seen.items():
        ts.discard(type(None))
        if ts:
            out[k] = _graphml_kind(ts) if ts <= {bool, int, float} else "string"
    return out


def write_graphml(graph: nx.MultiDiGraph, fh: IO[str]) -> None:
    """Stream GraphML (http://graphml.graphdrawing.org/) to a text file. networkx, Gephi, yEd and Cytoscape
    read it; `nx.read_graphml(path, force_multigraph=True)` gives the graph back with typed attributes
    (times and lists as strings: ISO 8601 and JSON). Nodes also get the attributes Gephi shows: `label` (id
    and the start of the text) and the kind's colour as `r`, `g`, `b`; edges get their type as `label`."""
    node_types = _graphml_types(a for _, a in graph.nodes(data=True))
    edge_types = _graphml_types(a for _, _, a in graph.edges(data=True))
    gephi = not ({"label", "r", "g", "b"} & node_types.keys()) and graph.number_of_nodes() > 0
    if gephi:
        node_types.update(label="string", r="long", g="long", b="long")
    edge_label = "label" not in edge_types and graph.number_of_edges() > 0
    if edge_label:
        edge_types["label"] = "string"
    graph_attrs = _flat_attrs(graph.graph)
    graph_types = {k: _graphml_kind({type(v)}) for k, v in graph_attrs.items()}
    keys: dict[tuple[str, str], str] = {}
    fh.write('<?xml version="1.0" encoding="utf-8"?>\n'
             '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
             'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
             'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
             'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n')
    for scope, types in (("graph", graph_types), ("node", node_types), ("edge", edge_types)):
        for name in sorted(types):
            key = f"d{len(keys)}"
            keys[(scope, name)] = key
            fh.write(f'  <key id="{key}" for="{scope}" attr.name={_xml_attr(name)} '
                     f'attr.type="{types[name]}" />\n')
    fh.write('  <graph edgedefault="directed">\n')
    for name, value in sorted(graph_attrs.items()):
        fh.write(f'    <data key="{keys[("graph", name)]}">{_xml_escape(_graphml_value(value, graph_types[name]))}'
                 '</data>\n')
    # Per attribute: the opening tag and the converter for its key's type, looked up once per name.
    node_cols = {name: (f'<data key="{keys[("node", name)]}">', _GRAPHML_WRITERS[kind])
                 for name, kind in node_types.items()}
    edge_cols = {name: (f'<data key="{keys[("edge", name)]}">', _GRAPHML_WRITERS[kind])
                 for name, kind in edge_types.items()}
    quoted: dict[Any, str] = {}
    out: list[str] = []
    append = out.append

    def element(opening: str, attrs: dict[str, Any], cols: dict[str, Any], closing: str) -> None:
        append(opening)
        for k, v in attrs.items():
            if v is not None:
                tag, conv = cols[k]
                text = conv(v)
                if text is not None:
                    append(f"{tag}{text}</data>")
        append(closing)
        if len(out) > 20000:
            fh.write("".join(out))
            out.clear()

    rgb = {kind: _rgb(color) for kind, color in KIND_COLORS.items()}
    for node, attrs in graph.nodes(data=True):
        q = quoted[node] = _xml_attr(str(node))
        if gephi:
            r, g, b = rgb.get(attrs.get("kind"), (204, 204, 204))
            attrs = {**attrs, "label": node_label(node, attrs), "r": r, "g": g, "b": b}
        element(f"    <node id={q}>", attrs, node_cols, "</node>\n")
    for u, v, key, attrs in graph.edges(keys=True, data=True):
        if edge_label:
            attrs = {**attrs, "label": attrs.get("type") or str(key)}
        element(f"    <edge id={_xml_attr(str(key))} source={quoted[u]} target={quoted[v]}>", attrs, edge_cols,
                "</edge>\n")
    fh.write("".join(out))
    fh.write("  </graph>\n</graphml>\n")


def _graphml_kind(types: set[type]) -> str:
    if types <= {bool}:
        return "boolean"
    if types <= {int}:
        return "long"
    if types <= {int, float}:
        return "double"
    return "string"


def to_graphml(graph: nx.MultiDiGraph) -> str:
    buf = io.StringIO()
    write_graphml(graph, buf)
    return buf.getvalue()


# -- GEXF ------------------------------------------------------------------------------------------------------
def to_gexf(graph: nx.MultiDiGraph) -> str:
    """GEXF 1.2 for Gephi. Nodes get a `label` (id and text) and the kind's colour; an edge's kg type is its
    label and its `relation` attribute (GEXF reserves `type` for directed/undirected)."""
    g = nx.MultiDiGraph()
    g.graph.update(_flat_attrs(graph.graph))
    for node, attrs in graph.nodes(data=True):
        flat_attrs = _flat_attrs(attrs)
        flat_attrs = {k: _xml_text(v) if isinstance(v, str) else v for k, v in flat_attrs.items()}
        label = node_label(node, attrs)
        rgb = _rgb(KIND_COLORS.get(attrs.get("kind") or "", "#cccccc"))
        color = {"r": rgb[0], "g": rgb[1], "b": rgb[2], "a": 1.0}
        g.add_node(node, **flat_attrs, label=_xml_text(label), viz={"color": color})
    for u, v, key, attrs in graph.edges(keys=True, data=True):
        flat_attrs = {("relation" if k == "type" else k): (_xml_text(val) if isinstance(val, str) else val)
                      for k, val in _flat_attrs(attrs).items()}
        g.add_edge(u, v, key=key, label=attrs.get("type") or str(key), **flat_attrs)
    buf = io.BytesIO()
    nx.write_gexf(g, buf, encoding="utf-8", version="1.2draft")
    return buf.getvalue().decode("utf-8")


def node_label(node: Any, attrs: dict[str, Any], chars: int = 60) -> str:
    """What Gephi and yEd show on a node: its id and the start of its text."""
    text = _short(attrs.get("text"), chars)
    return f"{node}: {text}" if text else str(node)


def _rgb(color: str) -> tuple[int, int, int]:
    c = color.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


# -- JSON ------------------------------------------------------------------------------------------------------
def to_json(graph: nx.MultiDiGraph) -> str:
    """networkx's node-link JSON, with edges under `links` as d3 and `nx.node_link_graph(data)` expect; times
    are ISO strings, lists stay lists, unset values are null."""
    data = nx.node_link_data(graph, edges="links")
    return json.dumps(data, ensure_ascii=False, indent=1, default=_json_default) + "\n"


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (set, tuple)):
        return list(value)
    return str(value)


# -- Mermaid ---------------------------------------------------------------------------------------------------
_MERMAID_ESCAPES = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "`": "#96;", "&": "#38;",
                    "\\": "#92;", "|": "#124;", "{": "#123;", "}": "#125;", "[": "#91;", "]": "#93;"}


def mermaid_label(text: str) -> str:
    """Text made safe inside a quoted Mermaid label (entity codes; no line breaks)."""
    text = re.sub(r"\s+", " ", text).strip()
    return "".join(_MERMAID_ESCAPES.get(ch, ch) for ch in text)


def to_mermaid(graph: nx.MultiDiGraph, *, text_chars: int = 60) -> str:
    """A Mermaid flowchart that renders in GitHub markdown (put it in a ```mermaid block). Node ids become
    n0, n1... (kg ids are in the labels), kinds become classes with colours, contradictions are dotted."""
    ids = {node: f"n{i}" for i, node in enumerate(sorted(graph.nodes, key=str))}
    lines = ["flowchart LR"]
    for node in sorted(graph.nodes, key=str):
        attrs = graph.nodes[node]
        label = f"{mermaid_label(str(node))}<br/>{mermaid_label(_short(attrs.get('text'), text_chars))}"
        kind = attrs.get("kind") if attrs.get("kind") in KNOWLEDGE_KINDS else "other"
        lines.append(f'    {ids[node]}["{label}"]:::{kind}')
    for u, v, key, attrs in sorted(graph.edges(keys=True, data=True), key=lambda e: (str(e[0]), str(e[1]), str(e[2]))):
        etype = attrs.get("type") or str(key)
        label = re.sub(r"[^A-Za-z0-9_]", "_", etype)
        arrow = "-.->" if etype == "contradicts" else "-->"
        lines.append(f"    {ids[u]} {arrow}|{label}| {ids[v]}")
    for kind in (*KNOWLEDGE_KINDS, "other"):
        color = KIND_COLORS.get(kind, "#dddddd")
        lines.append(f"    classDef {kind} fill:{color},stroke:#555555,color:#000000")
    return "\n".join(lines) + "\n"


def trim_for_mermaid(graph: nx.MultiDiGraph, *, max_edges: int = MERMAID_MAX_EDGES,
                     max_text: int = MERMAID_MAX_TEXT) -> tuple[nx.MultiDiGraph, str | None]:
    """The graph as it fits Mermaid's renderers: unchanged when it fits, else its most central nodes (by degree,
    then id) up to the most that fit both limits, with a warning saying what was left out."""
    if graph.number_of_edges() <= max_edges and len(to_mermaid(graph)) <= max_text:
        return graph, None
    ranked = sorted(graph.nodes, key=lambda v: (-graph.degree(v), str(v)))

    def fits(k: int) -> bool:
        sub = graph.subgraph(ranked[:k])
        return sub.number_of_edges() <= max_edges and len(to_mermaid(sub)) <= max_text

    lo, hi = 0, len(ranked)  # fits(lo) holds, fits(hi) does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    kept = graph.subgraph(ranked[:lo]).copy()
    return kept, (f"{graph.number_of_nodes()} nodes and {graph.number_of_edges()} edges exceed what Mermaid renders "
                  f"(at most {max_edges} edges and {max_text:,} characters): kept the {kept.number_of_nodes()} "
                  f"most connected nodes and their {kept.number_of_edges()} edges; narrow it with --type or --since")


def _short(text: Any, limit: int) -> str:
    s = re.sub(r"\s+", " ", str(text or "")).strip()
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


# -- DOT -------------------------------------------------------------------------------------------------------
def _dot_escaped(text: str) -> str:
    s = text.replace("\\", "\\\\").replace('"', '\\"')
    return s.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")


def dot_string(value: Any, *, limit: int = DOT_MAX_BYTES) -> str:
    """A DOT double-quoted string. Backslashes are doubled (Graphviz reads `\\n`, `\\l` in labels as
    escapes), quotes escaped, line breaks written as `\\n`. At most `limit` bytes, quotes included: Graphviz
    reads no longer string, so a longer value is cut (between two characters, never inside an escape) and says
    how long it was, with a marker (`--format json` keeps it whole)."""
    text = str(value)
    s = _dot_escaped(text)
    if len(s) * 4 + 2 <= limit or len(s.encode("utf-8")) + 2 <= limit:
        return f'"{s}"'
    marker = _dot_escaped(f" …[cut: {len(text):,} characters in all]")
    room, cut = limit - 2 - len(marker.encode("utf-8")), 0
    for i, ch in enumerate(text):
        room -= len(_dot_escaped(ch).encode("utf-8"))
        if room < 0:
            cut = i
            break
    return f'"{_dot_escaped(text[:cut])}{marker}"'


def to_dot(graph: nx.MultiDiGraph, *, text_chars: int = 60) -> str:
    """Graphviz DOT: `dot -Tsvg graph.dot > graph.svg`. Every attribute is kept (as a DOT attribute; a value
    past Graphviz's string limit cut with a marker, `dot_string`); the label is the id and the start of the text;
    colours by kind."""
    lines = [f"digraph {dot_string(graph.graph.get('name') or 'kaizen-kg')} {{",
             "    graph [rankdir=LR, overlap=false];",
             '    node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
             '    edge [fontname="Helvetica", fontsize=8];']
    for node in sorted(graph.nodes, key=str):
        attrs = _flat_attrs(graph.nodes[node])
        label = f"{node}\n{_short(attrs.get('text'), text_chars)}"
        parts = [f"label={dot_string(label)}",
                 f"fillcolor={dot_string(KIND_COLORS.get(attrs.get('kind') or '', '#dddddd'))}"]
        parts += [f"{_dot_id(k)}={dot_string(v)}" for k, v in attrs.items() if k not in ("label", "fillcolor")]
        lines.append(f"    {dot_string(node)} [{', '.join(parts)}];")
    for u, v, key, attrs in sorted(graph.edges(keys=True, data=True), key=lambda e: (str(e[0]), str(e[1]), str(e[2]))):
        flat_attrs = _flat_attrs(attrs)
        etype = attrs.get("type") or str(key)
        parts = [f"key={dot_string(key)}", f"label={dot_string(etype)}"]
        if etype == "contradicts":
            parts.append('style="dashed"')
            parts.append('color="#c0392b"')
        parts += [f"{_dot_id(k)}={dot_string(val)}" for k, val in flat_attrs.items()
                  if k not in ("key", "label", "style", "color")]
        lines.append(f"    {dot_string(u)} -> {dot_string(v)} [{', '.join(parts)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_id(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else dot_string(name)
