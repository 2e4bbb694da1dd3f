"""The imported trail among memory search's files: whether it only mirrors the graph, and its lines."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

TRAIL_ID = re.compile(rb'"id"\s*:\s*"([A-Za-z0-9_.:-]{1,80})"')
TRAIL_PROBE = 65536


def mirrors_graph(path: Path, in_graph: Any) -> bool:
    """Whether the trail JSON mirrors the graph (it was imported, or written by `kg export trail`): the ids at
    both ends of the file are all graph nodes. Its lines would then only repeat graph hits, and reading it
    means parsing every entry (45 MB at 100k entries) on each search. A trail the seed's tool went on writing
    after the import ends with ids the graph lacks, and is searched."""
    try:
        with path.open("rb") as f:
            head = f.read(TRAIL_PROBE)
            size = f.seek(0, 2)
            f.seek(max(0, size - TRAIL_PROBE))
            tail = f.read()
    except OSError:
        return False
    ids = [m.decode() for m in TRAIL_ID.findall(head)[:5] + TRAIL_ID.findall(tail)[-5:]]
    return bool(ids) and in_graph(ids)


def _trail_lines(path: Path) -> list[str]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return []
    lines = []
    for e in doc.get("entries", []) if isinstance(doc, dict) else []:
        if isinstance(e, dict):
            lines.append(f"[{e.get('id', '')}] {e.get('summary', '')} {e.get('details', '') or ''}".strip())
    for p in doc.get("principles", []) if isinstance(doc, dict) else []:
        lines.append(f"principle: {p}")
    graph = doc.get("graph", {}) if isinstance(doc, dict) else {}
    for n in graph.get("nodes", []) if isinstance(graph, dict) else []:
        if isinstance(n, dict):
            lines.append(f"[{n.get('id', '')}] {n.get('content', '')}")
    return lines
