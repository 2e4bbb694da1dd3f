"""Rebuild a damaged `memory/.kg/ids.json` (the last id given out per prefix and day) from what kg still holds.

Every acknowledged id is in the graph (applied) or in the journal (`journal.jsonl`, `draining-*.jsonl`, other
stores' lanes, set aside in `journal.rejected`), and a learning's also in `.learnings/`: the highest number of each
prefix and day among them is the counter. An id given out and never acknowledged (its writer died before the
journal append) may be given out again; that is allowed: nothing carries it.

Lock order: the graph, then the journal, as a drain takes them. So a write that finds the file damaged (under the
journal lock) lets the lock go, opens the graph without draining it (the drain could allocate a pattern's id from
the damaged file) and rebuilds under the journal lock taken again (`Workspace.rebuild_ids`).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from kg.core.errors import KgError
from kg.core.files import write_atomic
from kg.ingest.journal import IdsDamaged

T = TypeVar("T")

_ID = re.compile(r"\b([A-Za-z]+)-(\d{8})-(\d+)\b")
# the tables whose rows carry an id kg gave out (the small kinds are Meta rows keyed `kind:id`: migration 0011)
_GRAPH = ("MATCH (n:Node) RETURN n.id AS id", "MATCH (m:Meta) RETURN m.id AS id",
          "MATCH (s:Session) RETURN s.id AS id", "MATCH (c:Change) RETURN c.id AS id")


def damaged(path: Path) -> bool:
    """Whether ids.json is missing or does not read as the counters (`kg init` writes it: a used workspace
    without it would give out its ids again from 001)."""
    try:
        data = json.loads(path.read_bytes())
        return not isinstance(data, dict) or not all(isinstance(v, int) for v in data.values())
    except (OSError, ValueError):
        return True


def counters(found: dict[str, int], text: str, counter_of: Callable[[str], int | None]) -> None:
    """Raise `found` (`PREFIX-YYYYMMDD` -> highest counter) past every id in `text` that this workspace's journal
    could have given out, read as its allocator writes them (`Journal.counter_of`): a team member's tagged id
    (`ERR-20260301-002001`, member 2's first) is no counter of 2001 for member 1, nor another member's for this one,
    or the rebuilt counter jumped past them (member 1's next id -2002; member 2's -0022002)."""
    for prefix, day, digits in _ID.findall(text):
        number = counter_of(digits)
        key = f"{prefix}-{day}"
        if number is not None and number > found.get(key, 0):
            found[key] = number


def journal_files(kg_dir: Path, root: Path) -> list[Path]:
    learnings = root / ".learnings"
    # every store's lane (kg/ingest/journal.py): ids.json counts the ids given out to any of them
    return [*sorted(kg_dir.glob("journal*.jsonl")), *sorted(kg_dir.glob("draining*.jsonl")),
            kg_dir / "journal.rejected", *(sorted(learnings.glob("*.md")) if learnings.is_dir() else [])]


def _graph_ids(st: Any, found: dict[str, int], counter_of: Callable[[str], int | None]) -> None:
    for query in _GRAPH:
        try:
            rows = st.execute(query)
        except KgError:
            continue  # a table this graph does not have
        counters(found, "\n".join(str(r["id"]) for r in rows if r.get("id")), counter_of)


def _left_behind(ws: Any, found: dict[str, int]) -> str:
    """A team workspace's embedded graph, read too: one moved with `kg init --store ... --force` left its entries
    there, and the team graph does not hold them, so a rebuild from the team graph alone gave out their ids again
    the same day (as member 1, the same plain ids; both then in the trail that carries them over). Read-only, beside
    the team graph's lock (a `KG_STORE=kuzu` command's writer shuts it out for a while). '' or what was not read."""
    if getattr(ws, "store_url", None) is None or not ws.graph_path.exists():
        return ""
    from kg.store import Store

    try:
        with Store.open(ws.graph_path, lock_path=ws.kg_dir / "graph.lock", read_only=True,
                        lock_timeout=ws.lock_timeout, buffer_pool_mb=64, max_threads=1) as embedded:
            _graph_ids(embedded, found, ws.journal.counter_of)
    except KgError as exc:  # (a schema it cannot read too)
        return f"; the embedded graph left behind by the move to the team graph was not read ({exc})"
    return ""


def rebuild(ws: Any, st: Any) -> str:
    """Write ids.json anew from the graph `st` (held by the caller), a team workspace's embedded graph
    (`_left_behind`) and the journal; the damaged file is kept beside it. Returns what was done. A file that reads
    fine is left alone (another process rebuilt it first)."""
    found: dict[str, int] = {}
    _graph_ids(st, found, ws.journal.counter_of)
    unread = _left_behind(ws, found)
    journal = ws.journal
    with journal.locked():
        try:
            journal._load_ids()
            return "memory/.kg/ids.json is readable"
        except KgError:
            pass
        for path in journal_files(ws.kg_dir, ws.root):
            try:
                counters(found, path.read_bytes().decode("utf-8", "replace"), journal.counter_of)
            except OSError:
                continue
        kept = journal.ids_path.with_name(f"ids.json.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            journal.ids_path.replace(kept)
            said = f"the damaged file was kept as {kept.name}"
        except FileNotFoundError:
            said = "it was missing"
        write_atomic(journal.ids_path, json.dumps(found, sort_keys=True).encode())
        journal._ids = None
    return (f"rebuilt memory/.kg/ids.json from the graph and the journal ({len(found)} counter(s), "
            f"{sum(found.values()):,} id(s)); {said}{unread}")


def with_ids(ws: Any, work: Callable[[], T]) -> T:
    """`work()`, whose first step under the journal lock gives out ids. A damaged ids.json (nothing written yet)
    is rebuilt by an open of the graph, after the journal lock is let go (the graph is taken first, as a drain
    takes them: kg/ingest/ids_rebuild.py), and `work()` runs again: the capture is not lost to it."""
    try:
        return work()
    except IdsDamaged:
        ws.rebuild_ids()
        return work()
