"""The import's graph edges (kg/ingest/importing.py): the trail's own, and those an import adds itself, loaded after
every node is in, a batch at a time, each pair once."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kg.core import clock
from kg.core.errors import UsageError
from kg.store import EDGE_TYPES, bulk, check_label

BATCH = 20_000  # edges at most in a batch (the import's batch size)
EDGE_COLUMNS = ("src", "dst", "created_at", "manual", "score", "reason")


def trail_rows(spool: Path, report: Any, alias: dict[str, str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The trail's own edges (`alias`: an end the graph holds under another id)."""
    with open(spool, encoding="utf-8") as fh:
        for line in fh:
            item = json.loads(line)
            kind = str(item.get("type") or "")
            if kind not in EDGE_TYPES or not item.get("from") or not item.get("to") or item["from"] == item["to"]:
                report.skip("graph edge with an unknown type or endpoint")
                continue
            props = item.get("properties") if isinstance(item.get("properties"), dict) else {}
            try:
                created = clock.parse_time(str(item.get("created"))) if item.get("created") else None
            except UsageError:
                created = None
            try:
                score = float(props.get("score") or 1.0)
            except (TypeError, ValueError):
                score = 1.0
            src, dst = str(item["from"]), str(item["to"])
            yield kind, {"src": alias.get(src, src), "dst": alias.get(dst, dst), "created_at": created,
                         "manual": bool(props.get("manual", True)), "score": score,
                         "reason": " ".join(str(props.get("reason") or "imported").split())}


def implied_rows(spool: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    with open(spool, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            yield "derived_from", {**row, "created_at": clock.parse_time(row["created_at"])}


def load(ws: Any, st: Any, edges: Iterator[tuple[str, dict[str, Any]]], report: Any,
         mark: Callable[[], None], present: Callable[[list[str]], set[str]], *, quiet: bool = False) -> int:
    """Graph edges, after every node is in: endpoints checked in the graph a batch at a time, pairs already
    present skipped (and counted, unless `quiet`: the edges an import adds itself)."""
    skip = (lambda why: None) if quiet else report.skip
    total = 0
    batch: list[tuple[str, dict[str, Any]]] = []

    def flush() -> int:
        seen: set[tuple[str, str, str]] = set()  # this batch's: an earlier batch's edges are in the graph (`have`)
        ids = sorted({r["src"] for _, r in batch} | {r["dst"] for _, r in batch})
        held = present(ids)
        by_type: dict[str, list[dict[str, Any]]] = {}
        for kind, r in batch:
            if r["src"] not in held or r["dst"] not in held:
                skip("edge whose endpoint is not in the graph")
            else:
                by_type.setdefault(kind, []).append(r)
        n = 0
        for kind, rows in by_type.items():
            label = check_label(kind, EDGE_TYPES, "edge type")
            srcs = sorted({r["src"] for r in rows})
            have = {(x["src"], x["dst"]) for x in bulk.run_each(st, f"bulk_out_{label}", ({"id": s} for s in srcs))}
            fresh = []
            for r in rows:
                pair = (r["src"], r["dst"])
                if pair in have or (kind, *pair) in seen:
                    skip("edge already present")
                else:
                    seen.add((kind, *pair))
                    fresh.append(r)
            if fresh:
                mark()
            n += bulk.copy_rows(st, label, fresh, scratch=ws.kg_dir, columns=EDGE_COLUMNS)
        return n

    for item in edges:
        batch.append(item)
        if len(batch) >= BATCH:
            total += flush()
            batch = []
    if batch:
        total += flush()
    return total
