"""Drawings a person can read: a Chinese-language graph of fifty nodes drawn by matplotlib (the real renderer)
with a font that has its glyphs, no two labels overlapping, a legend of node kinds and edge types, and one
clear hint when no installed font can draw some text."""

from __future__ import annotations

import random
import warnings

import networkx as nx
import pytest

from kg.analysis import drawing as kd
from kg.analysis import fonts
from kg.store import EDGE_TYPES, KNOWLEDGE_KINDS

RARE = "\U00013000\U00013001"  # Egyptian hieroglyphs: no font on a usual system draws them


def chinese_graph(n: int = 50, edges: int = 75, seed: int = 3) -> nx.MultiDiGraph:
    rng = random.Random(seed)
    g = nx.MultiDiGraph()
    for i in range(n):
        kind = KNOWLEDGE_KINDS[i % 5]
        g.add_node(f"{kind[:3]}-20261101-{i:03d}", kind=kind,
                   text=f"部署失败：连接超时，第{i}次，需要先检查配置文件和权限设置")
    nodes = list(g)
    for i in range(edges):
        a, b = rng.sample(nodes, 2)
        g.add_edge(a, b, key=EDGE_TYPES[i % 6], type=EDGE_TYPES[i % 6])
    return g


@pytest.fixture
def mpl(need):
    """matplotlib, the renderer every drawing test needs (only `_wrap`'s test does without)."""
    return need("matplotlib")


def _labels(fig):
    ax = fig.axes[0]
    return [t for t in ax.texts if t.get_zorder() == 5]


def _draw_and_save(graph, path, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = kd.draw_graph(graph, **kw)
        kd.save(fig, path)
    return fig, [str(w.message) for w in caught]


def test_a_chinese_graph_is_drawn_with_its_glyphs(tmp_path, mpl):
    if fonts.fallback_families(["中文"])[1] is not None:
        pytest.skip("no CJK font installed (apt-get install fonts-noto-cjk)")
    fig, caught = _draw_and_save(chinese_graph(), tmp_path / "zh.png", title="部署的教训")
    assert not [m for m in caught if "Glyph" in m or "glyph" in m], caught[:3]
    family = _labels(fig)[0].get_fontfamily()
    assert len(family) >= 2  # the default font first, then one that has the Chinese glyphs
    fig, caught = _draw_and_save(chinese_graph(12, 15), tmp_path / "zh.svg")
    assert not [m for m in caught if "Glyph" in m]


def test_fifty_labels_do_not_overlap_and_stay_in_the_picture(tmp_path, mpl):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    graph = chinese_graph()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fig = kd.draw_graph(graph)
    FigureCanvasAgg(fig)
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in _labels(fig)]
    assert len(boxes) == 50
    for i, a in enumerate(boxes):
        assert fig.bbox.x0 <= a.x0 and a.x1 <= fig.bbox.x1 and fig.bbox.y0 <= a.y0 and a.y1 <= fig.bbox.y1
        for b in boxes[i + 1:]:
            assert not a.overlaps(b), (a, b)


def test_the_legend_names_the_kinds_and_edge_types_drawn(mpl):
    graph = chinese_graph(10, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fig = kd.draw_graph(graph)
    shown = [t.get_text() for t in fig.legends[0].get_texts()]
    kinds = [k for k in KNOWLEDGE_KINDS if k in {a["kind"] for _, a in graph.nodes(data=True)}]
    types = [t for t in EDGE_TYPES if t in {a["type"] for _, _, a in graph.edges(data=True)}]
    assert shown == kinds + types


def test_text_no_font_can_draw_gives_one_hint_not_a_warning_per_glyph(tmp_path, mpl):
    families, hint = fonts.fallback_families([f"x {RARE}"])
    assert hint is not None and "\n" not in hint
    assert hint.startswith(f"no installed font has glyphs for {RARE!r}: they are drawn as boxes; ")
    assert "apt-get install fonts-noto-cjk" in hint
    g = nx.MultiDiGraph()
    g.add_node("kno-1", kind="knowledge", text=f"hieroglyphs {RARE}")
    fig, caught = _draw_and_save(g, tmp_path / "rare.png")
    assert caught == [hint]  # the hint once; matplotlib's per-glyph warnings quietened


def test_cli_says_the_hint_once(ws, run_kg, tmp_path, mpl):
    node = ws.node_add("knowledge", f"hieroglyphs {RARE}", now="2026-11-01T10:00")["id"]
    out = ws.root / "rare.png"  # --out stays inside the workspace
    r = run_kg(["graph", "show", node, "--out", str(out)])
    assert r.exit_code == 0
    assert r.stderr.count("Warning: no installed font has glyphs for ") == 1 and len(r.stderr.splitlines()) == 1
    assert r.stdout == f"Drew 1 nodes and 0 edges to {out}\n"


@pytest.mark.parametrize(("text", "width", "lines"), [
    ("部署失败：连接超时，需要先检查配置", 12, ["部署失败：连", "接超时，需要", "先检查配置"]),
    ("git push failed: auth not configured", 16, ["git push failed:", "auth not", "configured"]),
])
def test_wrap_counts_cjk_characters_as_two_columns(text, width, lines):
    assert kd._wrap(text, width) == lines


def test_a_heatmap_draws_a_pattern_seen_once_darker_than_a_week_without_it(mpl):
    """A real small workspace has patterns seen once and twice: scaled from its smallest count, a pattern seen
    once was drawn as pale as an empty cell, and the colour bar counted 1.2 and 1.4 events."""
    from kg.analysis.timelines import Table

    table = Table(rows=["err.a", "err.b"], columns=["2026-W22", "2026-W23"], values=[[0, 2], [0, 1]], title="t")
    fig = kd.plot_heatmap(table)
    image = fig.axes[0].images[0]
    colour = [image.cmap(image.norm(v)) for v in (0, 1, 2)]
    assert colour[0] != colour[1] != colour[2]
    one_week = kd.plot_heatmap(Table(rows=["err.a", "err.b"], columns=["2026-W23"], values=[[2], [1]], title="t"))
    image = one_week.axes[0].images[0]
    assert image.cmap(image.norm(1)) != image.cmap(image.norm(0))
    ticks = fig.axes[1].get_yticks()
    assert all(float(t).is_integer() for t in ticks), ticks
