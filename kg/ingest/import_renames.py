"""An imported entry whose id another entry of the graph holds is kept under the next free id, not dropped.

Two workspaces give out the same ids (`LRN-20261204-001` is each one's first learning that day), and so does the
seed skill's `.learnings/*.md`: importing one into the other skipped every such entry as "already present", and the
trail's lessons were lost. An entry is the node that holds its id (a trail imported again, a resumed import) when it
names no time of its own or was made at the same second; else it is another entry and gets the next free id of its
kind and day. The new id is noted in Meta (`taken:import:<id>@<time>`) before the batch that holds it is written,
so a resumed import finds it and loads (or skips) the entry under it, never under a third id; the trail's edges and
lifecycle records that name the old id follow it (`moved`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kg.core import clock
from kg.core.errors import UsageError

META = "taken:import:"


def _key(old: str, at: datetime) -> str:
    return f"{META}{old}@{at.isoformat()}"


def _second(value: Any) -> datetime | None:
    from kg.ingest.apply import _second as second

    return second(value)


class Renames:
    """The run's renames (old id -> new id, `moved`), decided by `screen` for the entries a batch holds whose
    ids are present, and their Meta notes waiting for `flush` (after the import's mark, before its rows)."""

    def __init__(self, ws: Any, st: Any) -> None:
        self.ws, self.st = ws, st
        self.moved: dict[str, str] = {}
        self.made: list[tuple[str, str]] = []  # the renames this run decided (not found noted by an earlier one)
        self._notes: list[tuple[str, str]] = []
        self._spare: dict[str, list[str]] = {}  # ids allocated and not used yet, by kind and day

    def decide(self, entries: list[tuple[str, dict[str, Any]]]) -> dict[str, str | None]:
        """For (id, item) pairs whose id is a node: None when the node is this entry, else the id it is kept under."""
        stamps = {r["id"]: _second(r["created_at"]) for r in self.st.run("bulk_stamps", ids=[k for k, _ in entries])}
        out: dict[str, str | None] = {}
        for old, item in entries:
            at = self._time(item)
            if at is None or stamps.get(old) is None or stamps[old] == at:
                out[old] = None
                continue
            rows = self.st.run("meta_get", key=_key(old, at))
            new = rows[0]["value"] if rows else self._allocate(old)
            if not rows:
                self._notes.append((_key(old, at), new))
                self.made.append((old, new))
            self.moved[old] = new
            out[old] = new
        return out

    @staticmethod
    def _time(item: dict[str, Any]) -> datetime | None:
        logged = item.get("logged") or item.get("first_seen")
        if not logged:
            return None
        try:
            return _second(clock.parse_time(str(logged), what="logged time"))
        except UsageError:
            return None

    def _allocate(self, old: str) -> str:
        from kg.ingest.importing import _present

        head = old.rsplit("-", 1)[0]
        spare = self._spare.setdefault(head, [])
        while True:
            if not spare:
                prefix, day = head.split("-", 1)
                with self.ws.journal.locked():
                    ids = self.ws.journal.allocate(prefix, day, 8)
                present = _present(self.st, ids)
                spare.extend(i for i in ids if i not in present)
                continue
            return spare.pop(0)

    def flush(self) -> None:
        """The batch's new notes, written before its rows (the import's mark taken first)."""
        for key, new in self._notes:
            self.st.run("meta_set", key=key, value=new)
        self._notes = []

    def warnings(self) -> list[str]:
        if not self.made:
            return []
        shown = ", ".join(f"{old} as {new}" for old, new in self.made[:5])
        more = f" and {len(self.made) - 5} more" if len(self.made) > 5 else ""
        return [f"{len(self.made)} imported entries have ids other entries of this graph hold (another workspace "
                f"gave out the same ids); they are kept under new ids: {shown}{more}"]
