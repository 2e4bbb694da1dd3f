"""The analyst's room: the graph in networkx (`kg.analysis.graphs`, over time in `timelines`), exports, drawings
and snapshots.

`kg.analysis.load()`, `kg.analysis.report()` and the other names of `kg.analysis.graphs` stay reachable here;
they are imported on first use, so importing `kg.analysis.snapshot` does not pay for networkx.
"""
from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "PERIODS", "Analysis", "Table", "build_graph", "central", "chains", "changes", "communities",
    "conflict_decisions", "counts", "error_timeline", "evidence", "failing_areas", "filter_graph", "load",
    "neighbourhood", "orphans", "pagerank", "parse_types", "patterns", "period_of", "periods_between",
    "recurrence", "report", "rule_effect", "score_trends", "to_networkx", "unsupported",
]


_SUBMODULES = {"graphs", "centrality", "support", "timelines", "checks", "export", "cypher_export", "drawing", "fonts",
               "snapshot"}


def __getattr__(name: str) -> Any:
    if name.startswith("__") or name in _SUBMODULES:
        raise AttributeError(f"module 'kg.analysis' has no attribute {name!r}")
    return getattr(importlib.import_module("kg.analysis.graphs"), name)
