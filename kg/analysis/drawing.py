"""Pictures of the graph with matplotlib, for people who would rather look than read.

Figures are made with `matplotlib.figure.Figure` (never pyplot), so drawing works headless in the CLI and
in CI, and does not disturb a notebook's backend: in Jupyter, show one with `display(fig)` or leave it as a
cell's last value. matplotlib is an optional dependency (`pip install 'kaizen-kg[analysis]'`).
"""

from __future__ import annotations

import textwrap
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import networkx as nx

from kg.analysis import checks
from kg.analysis.export import KIND_COLORS
from kg.analysis.fonts import MissingGlyphsWarning, readable
from kg.core.errors import ArgumentError, UsageError
from kg.core.files import atomic_writer
from kg.core.text import columns as char_columns
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


def _figure(figsize: tuple[float, float], layout: str | None = "constrained"):
    from kg.analysis.fonts import matplotlib_home

    matplotlib_home()
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise UsageError("drawing needs matplotlib: pip install 'kaizen-kg[analysis]'") from None
    return Figure(figsize=figsize, layout=layout)


def _axes(ax: Any, figsize: tuple[float, float]):
    if ax is not None:
        return ax.figure, ax
    fig = _figure(figsize)
    return fig, fig.subplots()


def _wrap(text: str, width: int) -> list[str]:
    """Lines of at most `width` columns (CJK characters take two), broken at spaces where there are any."""
    lines: list[str] = []
    for word_line in textwrap.wrap(text, width, break_long_words=False) or [""]:
        line, cols = "", 0
        for ch in word_line:
            if cols + char_columns(ch) > width and line:
                lines.append(line.rstrip())
                line, cols = "", 0
            line, cols = line + ch, cols + char_columns(ch)
        lines.append(line)
    return [ln for ln in lines if ln]


def _label(node: str, attrs: dict[str, Any], chars: int, lines: int = 3, width: int = 24) -> str:
    text = " ".join(str(attrs.get("text") or "").split())
    wrapped = _wrap(text[:chars], width)
    if len(text) > chars or len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][:-1].rstrip() + "…"
    return node + "\n" + "\n".join(wrapped) if text else node


def draw_graph(graph: nx.MultiDiGraph, *, ax: Any = None, title: str | None = None, center: str | None = None,
               label_chars: int = 48, seed: int = 0, edge_labels: bool | None = None):
    """Draw a (small) graph: nodes coloured by kind, edges by type, contradictions dashed, a legend of both.
    Labels are pushed apart until none overlaps another (a thin line joins a moved label to its node), and
    text in any script is drawn with an installed font that has its glyphs (see `readable`). Returns the
    matplotlib Figure."""
    graph = checks.graph_of(graph)
    if center is not None and center not in graph:
        raise ArgumentError(f"center {center!r} is not a node of the graph to draw")
    n = graph.number_of_nodes()
    if n > MAX_DRAWN:
        raise UsageError(f"{n} nodes is too many to draw legibly (at most {MAX_DRAWN}); narrow it with a "
                         "node id and --depth, --type, --since or --limit")
    size = min(7 + n * 0.14, 22)
    if ax is None:
        fig = _figure((size * 1.3, size), layout=None)
        # fixed axes (no layout engine moving them after the labels are placed), room for the legend on the right
        ax = fig.add_axes((0.01, 0.01, 0.80, 0.93 if title else 0.98))
    fig = ax.figure
    ax.set_axis_off()
    if title:
        ax.set_title(title)
    if n == 0:
        ax.text(0.5, 0.5, "no nodes", ha="center", va="center", transform=ax.transAxes)
        readable(fig)
        return fig
    simple = nx.Graph()
    simple.add_nodes_from(sorted(graph.nodes))
    simple.add_edges_from((u, v) for u, v in graph.edges() if u != v)
    pos = _even_out(nx.spring_layout(simple, seed=seed, k=2.2 / max(n, 1) ** 0.5))
    _frame(ax, pos.values())
    for kind in (*KNOWLEDGE_KINDS, None):
        nodes = [v for v, a in graph.nodes(data=True)
                 if (a.get("kind") == kind if kind else a.get("kind") not in KNOWLEDGE_KINDS)]
        if not nodes:
            continue
        sizes = [1400 if v == center else 400 + 50 * min(graph.degree(v), 15) for v in nodes]
        nx.draw_networkx_nodes(graph, pos, nodelist=nodes, node_color=KIND_COLORS.get(kind or "", "#dddddd"),
                               node_size=sizes, edgecolors="#444444", linewidths=0.8, ax=ax)
    for etype in (*EDGE_TYPES, None):
        edges = [(u, v) for u, v, a in graph.edges(data=True)
                 if (a.get("type") == etype if etype else a.get("type") not in EDGE_TYPES)]
        if not edges:
            continue
        nx.draw_networkx_edges(graph, pos, edgelist=edges, edge_color=EDGE_COLORS.get(etype or "", "#999999"),
                               style="dashed" if etype == "contradicts" else "solid", arrows=True,
                               arrowsize=12, width=1.3, ax=ax, node_size=600,
                               connectionstyle="arc3,rad=0.08", alpha=0.75)
    lines = 3 if n <= 25 else 2
    labels = {v: _label(v, a, label_chars, lines) for v, a in graph.nodes(data=True)}
    texts = {v: ax.text(x, y, labels[v], fontsize=7 if n > 25 else 8, ha="center", va="top", zorder=5,
                        bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none",
                              "alpha": 0.8})
             for v, (x, y) in pos.items()}
    if edge_labels if edge_labels is not None else graph.number_of_edges() <= 30:
        elabels = {(u, v): a.get("type") for u, v, a in graph.edges(data=True)}
        nx.draw_networkx_edge_labels(simple, pos, edge_labels=elabels, font_size=6, ax=ax, rotate=False,
                                     bbox={"alpha": 0.0})
    _legend(fig, graph)
    readable(fig)
    with _quiet_glyphs(fig):
        spread_labels(ax, texts, pos)
    return fig


def _frame(ax: Any, points: Iterable[tuple[float, float]], pad: float = 0.12) -> None:
    """Fix the axes' limits around the points (a fixed data-to-pixel transform for placing labels)."""
    xs, ys = zip(*points, strict=True)
    w, h = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
    ax.set_xlim(min(xs) - pad * w, max(xs) + pad * w)
    ax.set_ylim(min(ys) - pad * h - 0.08 * h, max(ys) + pad * h)
    ax.set_autoscale_on(False)


def spread_labels(ax: Any, texts: dict[Any, Any], anchors: dict[Any, tuple[float, float]], *,
                  rounds: int = 600) -> int:
    """Move overlapping labels apart, in pixels, until no two overlap (or `rounds` run out); a label that
    moved is joined to its node by a thin grey line. Returns how many overlapping pairs are left (0 when it
    worked)."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = ax.figure
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    renderer = fig.canvas.get_renderer()
    keys = list(texts)
    to_px, to_data = ax.transData.transform, ax.transData.inverted().transform
    anchor_px = np.array([to_px(texts[k].get_position()) for k in keys], dtype=float)
    boxes = [texts[k].get_window_extent(renderer).expanded(1.04, 1.1) for k in keys]
    # each box as an offset from its text's position, so boxes move without being measured again
    off = np.array([(b.x0, b.y0) for b in boxes]) - anchor_px
    size = np.array([(b.width, b.height) for b in boxes])
    lo = np.array([fig.bbox.x0 + 2, fig.bbox.y0 + 2]) - off
    hi = np.array([fig.bbox.x1 - 2, fig.bbox.y1 - 2]) - off - size
    pos = np.clip(anchor_px, lo, hi)
    order = np.arange(len(keys))
    tie = np.sign(order[:, None] - order[None, :])  # who yields when two labels sit exactly on each other
    left = 0
    for _ in range(rounds):
        start, end = pos + off, pos + off + size
        overlap = np.minimum(end[:, None, :], end[None, :, :]) - np.maximum(start[:, None, :], start[None, :, :])
        hit = (overlap[..., 0] > 0) & (overlap[..., 1] > 0)
        np.fill_diagonal(hit, False)
        left = int(hit.sum()) // 2
        if not left:
            break
        centre = start + size / 2
        away = np.sign(centre[:, None, :] - centre[None, :, :])
        away = np.where(away == 0, tie[..., None], away)
        along_x = overlap[..., 0] < overlap[..., 1]  # push apart along the axis where they overlap least
        push_x = np.where(hit & along_x, (overlap[..., 0] / 2 + 1) * away[..., 0], 0).sum(axis=1)
        push_y = np.where(hit & ~along_x, (overlap[..., 1] / 2 + 1) * away[..., 1], 0).sum(axis=1)
        pos = np.clip(pos + 0.6 * np.stack([push_x, push_y], axis=1), lo, hi)
    for i, k in enumerate(keys):
        x, y = to_data(pos[i])
        texts[k].set_position((x, y))
        texts[k].set_clip_on(False)
        node_x, node_y = anchors[k]
        if np.abs(to_px((node_x, node_y)) - pos[i]).sum() > 14:
            ax.plot([node_x, x], [node_y, y], color="#999999", linewidth=0.5, zorder=4)
    return left


def _even_out(pos: dict[Any, Any]) -> dict[Any, tuple[float, float]]:
    """Spring layouts pack well-linked nodes into a dense centre: mix each coordinate with its rank, so the
    nodes (and their labels) use the whole picture while neighbours stay near each other."""
    if len(pos) < 3:
        return {k: (float(x), float(y)) for k, (x, y) in pos.items()}
    keys = list(pos)
    out = {k: [0.0, 0.0] for k in keys}
    for dim in (0, 1):
        values = [float(pos[k][dim]) for k in keys]
        low, high = min(values), max(values)
        span = (high - low) or 1.0
        ranked = sorted(range(len(keys)), key=lambda i: (values[i], i))
        for rank, i in enumerate(ranked):
            out[keys[i]][dim] = 0.4 * (values[i] - low) / span + 0.6 * rank / (len(keys) - 1)
    return {k: (x, y) for k, (x, y) in out.items()}


def _legend(fig: Any, graph: nx.MultiDiGraph) -> None:
    """Node kinds and edge types present in the drawing, beside it."""
    from matplotlib.lines import Line2D

    kinds = {a.get("kind") for _, a in graph.nodes(data=True)}
    types = {a.get("type") for _, _, a in graph.edges(data=True)}
    handles = [Line2D([], [], marker="o", linestyle="", markersize=9, markerfacecolor=KIND_COLORS[k],
                      markeredgecolor="#444444", label=k) for k in KNOWLEDGE_KINDS if k in kinds]
    handles += [Line2D([], [], color=EDGE_COLORS[t], linestyle="--" if t == "contradicts" else "-", label=t)
                for t in EDGE_TYPES if t in types]
    if handles:
        fig.legend(handles=handles, loc="upper right", fontsize=9, frameon=False, title="nodes and edges",
                   bbox_to_anchor=(0.995, 0.98))


def plot_timeline(table: Any, *, ax: Any = None, title: str | None = None, top: int = 8):
    """A stacked bar chart of a `kg.analysis.Table` (rows stacked per period), e.g. errors by area."""
    table = checks.table_of(table)
    top = checks.whole("top", top, minimum=1)
    fig, ax = _axes(ax, (11, 4.5))
    if not table.rows:
        ax.text(0.5, 0.5, "nothing logged yet", ha="center", va="center", transform=ax.transAxes)
        ax.set_title(title or table.title)
        ax.set_axis_off()
        readable(fig)
        return fig
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
    readable(fig)
    return fig


def _period_ticks(ax: Any, columns: list[str]) -> None:
    step = max(1, len(columns) // 12)
    ax.set_xticks(range(0, len(columns), step))
    ax.set_xticklabels(columns[::step], rotation=45, ha="right", fontsize=8)


def plot_heatmap(table: Any, *, ax: Any = None, title: str | None = None, cmap: str = "Reds"):
    """A heatmap of a `kg.analysis.Table` (rows × periods), e.g. pattern recurrence per week."""
    table = checks.table_of(table)
    fig, ax = _axes(ax, (11, 1.5 + 0.4 * max(len(table.rows), 1)))
    if not table.rows:
        ax.text(0.5, 0.5, "nothing recurred yet", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        readable(fig)
        return fig
    top = max(max(r) for r in table.values)
    # the scale starts at 0 events: from the smallest count, a pattern seen once would be as pale as a week without it
    image = ax.imshow(table.values, aspect="auto", cmap=cmap, interpolation="nearest", vmin=0, vmax=max(top, 1))
    ax.set_yticks(range(len(table.rows)))
    ax.set_yticklabels(table.rows, fontsize=8)
    _period_ticks(ax, table.columns)
    if len(table.rows) * len(table.columns) <= 400:
        for i, row in enumerate(table.values):
            for j, v in enumerate(row):
                if v:
                    ax.text(j, i, str(v), ha="center", va="center", fontsize=7,
                            color="white" if v > top / 2 else "black")
    from matplotlib.ticker import MaxNLocator

    fig.colorbar(image, ax=ax, label="events", ticks=MaxNLocator(integer=True))  # counts: no 1.2 events
    ax.set_title(title or table.title)
    readable(fig)
    return fig


def plot_score_trends(rows: list[dict[str, Any]], *, ax: Any = None, title: str = "self-assessment scores"):
    """Lines of each score dimension over time (rows from `kg.analysis.score_trends`)."""
    rows = checks.rows_of(rows, "rows", "a.score_trends()", one_of=("at", "period"))
    fig, ax = _axes(ax, (11, 4))
    if not rows:
        ax.text(0.5, 0.5, "no scores yet (kg score ...)", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        readable(fig)
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
    readable(fig)
    return fig


def plot_rule_effect(rows: list[dict[str, Any]], *, ax: Any = None,
                     title: str = "recurrence per week, before and after each rule"):
    """Paired bars per promoted rule (rows from `kg.analysis.rule_effect`)."""
    rows = checks.rows_of(rows, "rows", "a.rule_effect()", keys=("key", "rate_before", "rate_after"))
    fig, ax = _axes(ax, (11, 1.8 + 0.45 * max(len(rows), 1)))
    if not rows:
        ax.text(0.5, 0.5, "no rule was promoted from a pattern yet", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()
        readable(fig)
        return fig
    ys = range(len(rows))
    ax.barh([y + 0.2 for y in ys], [r["rate_before"] for r in rows], height=0.4, label="before", color="#e74c3c")
    ax.barh([y - 0.2 for y in ys], [r["rate_after"] for r in rows], height=0.4, label="after", color="#27ae60")
    ax.set_yticks(list(ys))
    ax.set_yticklabels([r["key"] or r.get("pattern") for r in rows], fontsize=8)
    ax.set_xlabel("events per week")
    ax.set_title(title)
    ax.legend(frameon=False)
    readable(fig)
    return fig


def save(fig: Any, out: str | Path) -> Path:
    from kg.workspace_out import refused

    path = Path(out).expanduser()
    if path.suffix.lower() not in IMAGE_SUFFIXES:
        raise refused(path, "{out}: name a .png, .svg or .pdf file")
    if not path.parent.exists():
        raise ArgumentError(f"cannot write {path}: its folder does not exist")
    with _quiet_glyphs(fig), atomic_writer(path) as fh:
        fig.savefig(fh, format=path.suffix.lower()[1:], dpi=130 if path.suffix.lower() == ".png" else None)
    return path


@contextmanager
def _quiet_glyphs(fig: Any) -> Iterator[None]:
    """matplotlib warns once per missing glyph when it lays text out; kg.analysis.fonts.readable has said it once."""
    with warnings.catch_warnings():
        if getattr(fig, "_kg_font_hint", None):
            warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from font")
        yield


def _chosen(node_id: str | None, types: Any) -> None:
    if node_id is None and not types:
        raise ArgumentError("give node_id, or types (e.g. types='lesson,principle'), to choose what to draw",
                            cli="name a node id, or --type (e.g. --type lesson,principle), to choose what to draw")


def select_subgraph(graph: nx.MultiDiGraph, *, node_id: str | None = None, types: str | Iterable[str] | None = None,
                    depth: int = 1, limit: int = 150, since: str | datetime | None = None,
                    now: datetime | str | None = None) -> nx.MultiDiGraph:
    """What `kg graph show` draws: the neighbourhood of a node (within --type/--since if given), or the
    best-connected nodes of some types."""
    from kg.analysis import filter_graph, neighbourhood

    _chosen(node_id, types)
    limit = min(checks.whole("limit", limit, minimum=1, flag="--limit"), MAX_DRAWN)
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
    from kg.workspace_out import check_out, refused, source

    checks.whole("limit", limit, minimum=1, flag="--limit")  # before the graph is read (select_subgraph says it)
    _chosen(node_id, types)
    path = Path(out).expanduser()
    if path.suffix.lower() not in IMAGE_SUFFIXES:
        raise refused(path, "{out}: name a .png, .svg or .pdf file")
    workspace, ws = source(workspace)
    path = check_out(ws, path, example="graph" + path.suffix)  # refused before the graph is read (kg/workspace_out.py)
    graph = to_networkx(workspace)
    sub = select_subgraph(graph, node_id=node_id, types=types, depth=depth, limit=limit, since=since, now=now)
    what = types if isinstance(types, str) else ",".join(types or [])
    title = f"around {node_id} (depth {depth})" if node_id else f"{what}: {sub.number_of_nodes()} best-connected nodes"
    with warnings.catch_warnings():  # the hint is returned, for the CLI to say once
        warnings.simplefilter("ignore", MissingGlyphsWarning)
        fig = draw_graph(sub, center=node_id, title=title)
    save(fig, path)
    hint = getattr(fig, "_kg_font_hint", None)
    return {"out": str(path), "nodes": sub.number_of_nodes(), "edges": sub.number_of_edges(), "center": node_id,
            "format": path.suffix.lower().lstrip("."), "warnings": [hint] if hint else []}
