"""An imported entry (or lesson, principle, knowledge node) whose id another node of the graph holds is kept under
the next free id, not dropped.

Two workspaces give out the same ids (`LRN-20261204-001` is each one's first learning that day), and so does the
seed skill's `.learnings/*.md`: importing one into the other skipped every such entry as "already present", and the
trail's lessons were lost. The entry is the node that holds its id (a trail imported again, a resumed import) when
it holds the same text, made at the same second or at a time a time zone apart (a `Z` or offset time read on a
machine in another zone is another local time); never by its time alone (two workspaces' entries of one second),
except for an entry read from `.learnings` markdown: its id and its second (its text may not survive the markdown
round trip, or a person edited it there).
Else it is another entry: a node of its kind that is this entry by the same test (kept under a new id by an earlier
import, of this graph or of the graph its trail rebuilt) takes it; else it gets the next free id of its kind and
day. The trail's edges and lifecycle records that name the old id follow it (`moved`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kg.core import clock
from kg.core.errors import UsageError
from kg.ingest.apply import whole_second  # a time as kg keeps it (naive UTC, whole seconds)

_ZONES = 14 * 3600  # the widest gap two time zones' local times of one instant have, in seconds
_ZONE_STEP = 900  # zones are whole quarter hours apart


def same_entry(text: str | None, at: datetime | None, other_text: Any, other_at: Any) -> bool:
    """Is an entry (its normalised text, its time) the node with `other_text` made at `other_at`? Its text and its
    time both: two workspaces' entries made at the same second (each one's first error of a day, logged by one
    hook at 10:00) are two entries, and one was lost as "already present". Where a text is unknown (an item
    without one), the time alone decides, as before."""
    other = whole_second(other_at)
    if text is not None and isinstance(other_text, str) and text != other_text:
        return False
    if at is None or other is None or at == other:
        return True
    gap = abs((at - other).total_seconds())
    return text is not None and gap <= _ZONES and gap % _ZONE_STEP == 0


class Renames:
    """The run's renames (old id -> new id, `moved`), decided by `decide` for the entries a batch holds whose ids
    are present; `made`: those this run gave a new id (not found kept by an earlier import)."""

    def __init__(self, ws: Any, st: Any) -> None:
        self.ws, self.st = ws, st
        self.moved: dict[str, str] = {}
        self.made: list[tuple[str, str]] = []
        self._spare: dict[str, list[str]] = {}  # ids allocated and not used yet, by kind and day

    def decide(self, entries: list[tuple[str, str, dict[str, Any]]]) -> dict[str, str | None]:
        """For (id, kind, item) of the files (kind "entries" or "nodes") whose id is a node: None when the node is
        this entry, else the id it is kept under."""
        holders = {r["id"]: r for r in self.st.run("bulk_stamps", ids=[k for k, _, _ in entries])}
        out: dict[str, str | None] = {}
        others: list[tuple[str, str | None, datetime | None]] = []
        for old, kind, item in entries:
            node = kind == "nodes"
            text, at = self._text(item, node), self._time(item, node)
            holder = holders.get(old)
            # an entry read from `.learnings` markdown is the node of its id made at its second, whatever its text:
            # a summary does not always survive the markdown round trip, and a person edits LEARNINGS.md in place
            # (taken for another workspace's, this workspace's own file read back was kept again under new ids)
            known = None if not node and "_title" in item else text
            if holder is None or same_entry(known, at, holder["text"], holder["created_at"]):
                out[old] = None
            else:
                others.append((old, text, at))
        texts = sorted({text for _, text, _ in others if text})
        kept: dict[str, list[dict[str, Any]]] = {}
        for row in self.st.run("bulk_nodes_by_text", texts=texts) if texts else ():
            kept.setdefault(row["text"], []).append(row)
        for old, text, at in others:
            prefix = old.split("-", 1)[0] + "-"
            found = [r["id"] for r in kept.get(text or "", ()) if r["id"].startswith(prefix)
                     and same_entry(text, at, r["text"], r["created_at"])]
            new = min(found) if found else self._allocate(old)
            if not found:
                self.made.append((old, new))
            self.moved[old] = out[old] = new
        return out

    def _text(self, item: dict[str, Any], node: bool) -> str | None:
        """The entry's text as the graph keeps it (`kg.core.entries.prepare`: redacted, then one clean line)."""
        from kg.core.text import clean

        summary = item.get("content") if node else (
            item.get("summary") or (str(item.get("_title") or "").split(":", 1)[-1].replace("_", " ")))
        if not isinstance(summary, str) or not summary:
            return None
        return clean(self.ws.rules.redactor.redact(summary).text, one_line=True) or None

    @staticmethod
    def _time(item: dict[str, Any], node: bool) -> datetime | None:
        logged = item.get("created") if node else (item.get("logged") or item.get("first_seen"))
        if not logged:
            return None
        try:
            return whole_second(clock.parse_time(str(logged), what="logged time"))
        except UsageError:
            return None

    def _allocate(self, old: str) -> str:
        from kg.ingest.importing import _present

        head = old.rsplit("-", 1)[0]
        spare = self._spare.setdefault(head, [])
        while not spare:
            prefix, day = head.split("-", 1)
            with self.ws.journal.locked():
                ids = self.ws.journal.allocate(prefix, day, 8)
            present = _present(self.st, ids)
            spare.extend(i for i in ids if i not in present)
        return spare.pop(0)

    def warnings(self) -> list[str]:
        if not self.made:
            return []
        shown = ", ".join(f"{old} as {new}" for old, new in self.made[:5])
        more = f" and {len(self.made) - 5} more" if len(self.made) > 5 else ""
        return [f"{len(self.made)} imported entries have ids other entries of this graph hold (another workspace "
                f"gave out the same ids); they are kept under new ids: {shown}{more}"]
