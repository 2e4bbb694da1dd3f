"""Pictures of the graph with matplotlib, for people who would rather look than read.

Figures are made with `matplotlib.figure.Figure` (never pyplot), so drawing works headless in the CLI and
in CI, and does not disturb a notebook's backend: in Jupyter, show one with `display(fig)` or leave it as a
cell's last value. matplotlib is an optional dependency (`pip install 'kaizen-kg[analysis]'`).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import networkx as nx

from kg.errors import UsageError
from kg.export import KIND_COLORS
from kg.store import EDGE_TYPES, KNOWLEDGE_KINDS

__all__ = [
    "IMAGE_SUFFIXES",
    "MAX_DRAWN",
    "draw_graph",
    "plot_heatmap",
    "plot_rule_effect",
    "plot_score_trends",
    "plot_timeline",
    "save",
    "select_subgraph",
    "show_subgraph",
]

IMAGE_SUFFIXES = (".png", ".svg", ".pdf")
MAX_DRAWN = 400  # beyond this a drawing is a hairball, and networkx's spring layout needs scipy
EDGE_COLORS = {"caused_by": "#c0392b", "led_to": "#e67e22", "supports": "#27ae60", "contradicts": "#8e44ad",
               "related_to": "#7f8c8d", "derived_from": "#2980b9"}


def _figure(figsize: tuple[float, float]):
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise UsageError("drawing needs matplotlib: pip install 'kaizen-kg[analysis]'") from None
    return Figure(figsize=figsize, layout="constrained")


def _axes(ax: Any, figsize: tuple[float, float]):
    if ax is not None:
        return ax.figure, ax
    fig = _figure(figsize)
    return fig, fig.subplots()


def _label(node: str, attrs: dict[str, Any], chars: int) -> str:
    text = " ".join(str(attrs.get("text") or "").split())
    if len(text) > chars:
        text = text[: chars - 1].rstrip() + "…"
    return node + "\n" + "\n".join(textwrap.wrap(text, 22)[:3]) if text else node


def draw_graph(graph: nx.MultiDiGraph, *, ax: Any = None, title: str | None = None, center: str | None = None,
               label_chars: int = 48, seed: int = 0, edge_labels: bool | None = None):
    """Draw a (small) graph: nodes coloured by kind, edges by type, contradictions dashed. Returns the
    matplotlib Figure."""
    n = graph.number_of_nodes()
    if n > MAX_DRAWN:
        raise UsageError(f"{n} nodes is too many to draw legibly (at most {MAX_DRAWN}); narrow it with a "
                         "node id and --depth, --type, --since or --limit")
    size = min(7 + n * 0.12, 20)
    fig, ax = _axes(ax, (size * 1.3, size))
    ax.set_axis_off()
    if title:
        ax.set_title(title)
    if n == 0:
        ax.text(0.5, 0.5, "no nodes", ha="center", va="center", transform=ax.transAxes)
        return fig
    simple = nx.Graph()
    simple.add_nodes_from(sorted(graph.nodes))
    simple.add_edges_from((u, v) for u, v in graph.edges() if u != v)
    pos = nx.spring_layout(simple, seed=seed, k=1.6 / max(n, 1) ** 0.5)
    for kind in (*KNOWLEDGE_KINDS, None):
        nodes = [v for v, a in graph.nodes(data=True)
                 if (a.get("kind") == kind if kind else a.get("kind") not in KNOWLEDGE_KINDS)]
        if not nodes:
            continue
        sizes = [1400 if v == center else 500 + 60 * min(graph.degree(v), 15) for v in nodes]
        nx.draw_networkx_nodes(graph, pos, nodelist=nodes, node_color=KIND_COLORS.get(kind or "", "#dddddd"),
                               node_size=sizes, edgecolors="#444444", linewidths=0.8, ax=ax)
    for etype in (*EDGE_TYPES, None):
        edges = [(u, v) for u, v, a in graph.edges(data=True)
                 if (a.get("type") == etype if etype else a.get("type") not in EDGE_TYPES)]
        if not edges:
            continue
        nx.draw_networkx_edges(graph, pos, edgelist=edges, edge_color=EDGE_COLORS.get(etype or "", "#999999"),
                               style="dashed" if etype == "contradicts" else "solid", arrows=True,
                               arrowsize=12, width=1.3, ax=ax, node_size=700,
                               connectionstyle="arc3,rad=0.08")
    ys = [p[1] for p in pos.values()]
    drop = (max(ys) - min(ys) or 1.0) * 0.035
    labels = {v: _label(v, a, label_chars) for v, a in graph.nodes(data=True)}
    below = {v: (x, y - drop) for v, (x, y) in pos.items()}
    nx.draw_networkx_labels(graph, below, labels=labels, font_size=7 if n > 25 else 8, ax=ax,
                            verticalalignment="top")
    if edge_labels if edge_labels is not None else graph.number_of_edges() <= 30:
        elabels = {(u, v): a.get("type") for u, v, a in graph.edges(data=True)}
        nx.draw_networkx_edge_labels(simple, pos, edge_labels=elabels, font_size=6, ax=ax, rotate=False,
                                     bbox={"alpha": 0.0})
    _legend(ax, graph)
    ax.margins(0.15)
    return fig


def _legend(ax: Any, graph: nx.MultiDiGraph) -> None:
    from matplotlib.lines import Line2D

    kinds = {a.get("kind") for _, a in graph.nodes(data=True)}
    types = {a.get("type") for _, _, a in graph.edges(data=True)}
    handles = [Line2D([], [], marker="o", linestyle="", markersize=9, markerfacecolor=KIND_COLORS[k],
                      markeredgecolor="#444444", label=k) for k in KNOWLEDGE_KINDS if k in kinds]
    handles += [Line2D([], [], color=EDGE_COLORS[t], linestyle="--" if t == "contradicts" else "-", label=t)
                for t in EDGE_TYPES if t in types]
    if handles:
        ax.legend(handles=handles, loc="upper left", fontsize=8, frameon=False)


def plot_timeline(table: Any, *, ax: Any = None, title: str | None = None, top: int = 8):
    """A stacked bar chart of a `kg.analysis.Table` (rows stacked per period), e.g. errors by area."""
    fig, ax = _axes(ax, (11, 4.5))
    rows = table.rows[:top]
    bottom = [0] * len(table.columns)
    x = range(len(table.columns))
    for row in rows:
        vals = table.values[table.rows.index(row)]
        ax.bar(x, vals, bottom=bottom, label=row, width=0.85)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    if len(table.rows) > top:
        rest = [sum(col) for col in zip(*table.values[top:], strict=True)]
        ax.bar(x, rest, bottom=bottom, label="other", width=0.85, color="#cccccc")
    _period_ticks(ax, table.columns)
    ax.set_ylabel("count")
    ax.set_title(title or table.title)
    if rows:
        ax.legend(fontsize=8, frameon=False, ncols=2)
    return fig


def _period_ticks(ax: Any, columns: list[str]) -> None:
    step = max(1, len(columns) // 12)
    ax.set_xticks(range(0, len(columns), step))
    ax.set_xticklabels(columns[::step], rotation=45, ha="right", fontsize=8)


def plot_heatmap(table: Any, *, ax: Any = None, title: str | None = None, cmap: str = "Reds"):
    """A heatmap of a `kg.analysis.Table` (rows × periods), e.g. pattern recurrence per week."""
    fig, ax = _axes(ax, (11, 1.5 + 0.4 * max(len(table.rows), 1)))
    if not table.rows:
        ax.text(0.5, 0.5, "nothing recurred yet", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    image = ax.imshow(table.values, aspect="auto", cmap=cmap, interpolation="nearest")
    ax.set_yticks(range(len(table.rows)))
    ax.set_yticklabels(table.rows, fontsize=8)
    _period_ticks(ax, table.columns)
    top = max(max(r) for r in table.values)
    if len(table.rows) * len(table.columns) <= 400:
        for i, row in enumerate(table.values):
            for j, v in enumerate(row):
                if v:
                    ax.text(j, i, str(v), ha="center", va="center", fontsize=7,
                            color="white" if v > top / 2 else "black")
    fig.colorbar(image, ax=ax, label="events")
    ax.set_title(title or table.title)
    return fig


def plot_score_trends(rows: list[dict[str, Any]], *, ax: Any = None, title: str = "self-assessment scores"):
    """Lines of each score dimension over time (rows from `kg.analysis.score_trends`)."""
    fig, ax = _axes(ax, (11, 4))
    if not rows:
        ax.text(0.5, 0.5, "no scores yet (kg score ...)", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    xkey = "at" if "at" in rows[0] else "period"
    xs = [r[xkey] for r in rows]
    dims = [k for k in rows[0] if k not in (xkey, "notes", "n") and isinstance(rows[0][k], (int, float))]
    for d in dims:
        ax.plot(xs, [r.get(d) for r in rows], marker="o", markersize=3,
                linewidth=2.5 if d == "average" else 1.2, label=d, color="black" if d == "average" else None)
    ax.set_ylim(0, 10.5)
    ax.set_ylabel("score (0-10)")
    ax.set_title(title)
    ax.legend(fontsize=8, frameon=False, ncols=3)
    if xs and isinstance(xs[0], datetime):
        fig.autofmt_xdate()
    return fig


def plot_rule_effect(rows: list[dict[str, Any]], *, ax: Any = None,
                     title: str = "recurrence per week, before and after each rule"):
    """Paired bars per promoted rule (rows from `kg.analysis.rule_effect`)."""
    fig, ax = _axes(ax, (11, 1.8 + 0.45 * max(len(rows), 1)))
    if not rows:
        ax.text(0.5, 0.5, "no rule was promoted from a pattern yet", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    ys = range(len(rows))
    ax.barh([y + 0.2 for y in ys], [r["rate_before"] for r in rows], height=0.4, label="before", color="#e74c3c")
    ax.barh([y - 0.2 for y in ys], [r["rate_after"] for r in rows], height=0.4, label="after", color="#27ae60")
    ax.set_yticks(list(ys))
    ax.set_yticklabels([r["key"] or r["pattern"] for r in rows], fontsize=8)
    ax.set_xlabel("events per week")
    ax.set_title(title)
    ax.legend(frameon=False)
    return fig


def save(fig: Any, out: str | Path) -> Path:
    path = Path(out).expanduser()
    if path.suffix.lower() not in IMAGE_SUFFIXES:
        raise UsageError(f"--out {path}: name a .png, .svg or .pdf file")
    if not path.parent.exists():
        raise UsageError(f"cannot write {path}: its folder does not exist")
    fig.savefig(path, dpi=130 if path.suffix.lower() == ".png" else None)
    return path


def select_subgraph(graph: nx.MultiDiGraph, *, node_id: str | None = None, types: str | Iterable[str] | None = None,
                    depth: int = 1, limit: int = 150, since: str | datetime | None = None,
                    now: datetime | str | None = None) -> nx.MultiDiGraph:
    """What `kg graph show` draws: the neighbourhood of a node (within --type/--since if given), or the
    best-connected nodes of some types."""
    from kg.analysis import filter_graph, neighbourhood

    if node_id is None and not types:
        raise UsageError("name a node id, or --type (e.g. --type lesson,principle), to choose what to draw")
    if limit < 1:
        raise UsageError("--limit must be at least 1")
    limit = min(limit, MAX_DRAWN)
    scope = filter_graph(graph, types=types, since=since, now=now)
    if node_id is not None:
        if node_id in graph and node_id not in scope:
            scope = graph.subgraph([*scope.nodes, node_id])
        return neighbourhood(scope, node_id, depth, limit=limit)
    ranked = sorted(scope.nodes, key=lambda v: (-scope.degree(v), v))[:limit]
    return scope.subgraph(ranked).copy()


def show_subgraph(workspace: Any = None, *, out: str | Path, node_id: str | None = None,
                  types: str | Iterable[str] | None = None, depth: int = 1, limit: int = 150,
                  since: str | datetime | None = None, now: datetime | str | None = None) -> dict[str, Any]:
    """Draw a subgraph of a workspace (from a snapshot) into a .png, .svg or .pdf file."""
    from kg.analysis import to_networkx

    path = Path(out).expanduser()
    if path.suffix.lower() not in IMAGE_SUFFIXES:
        raise UsageError(f"--out {path}: name a .png, .svg or .pdf file")
    graph = to_networkx(workspace)
    sub = select_subgraph(graph, node_id=node_id, types=types, depth=depth, limit=limit, since=since, now=now)
    what = types if isinstance(types, str) else ",".join(types or [])
    title = f"around {node_id} (depth {depth})" if node_id else f"{what}: {sub.number_of_nodes()} best-connected nodes"
    fig = draw_graph(sub, center=node_id, title=title)
    save(fig, path)
    return {"out": str(path), "nodes": sub.number_of_nodes(), "edges": sub.number_of_edges(), "center": node_id,
            "format": path.suffix.lower().lstrip(".")}
