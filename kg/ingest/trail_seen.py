"""Which ids an import has met already, in memory that does not grow with the trail.

An import must skip a second entry with an id it has loaded before (a trail that repeats itself). A set of
every id is about 100 bytes an id: 100 MB at a million entries, a gigabyte at ten million. Instead a fixed
bit array (a Bloom filter, 16 MB) answers "certainly new" for nearly every id; the few it cannot answer
(ids met before, and about one in 80,000 others at a million entries) are asked of the graph, where
every id loaded by an earlier batch already is. Ids of the batch being loaded are kept exactly, in a set
the size of the batch.

`Screen` uses the same filter before the gate: entries already in the graph before this run (a resumed
import's) are set aside there, unredacted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

BITS = 1 << 27  # 16 MB
_MASK = BITS - 1


class SeenIds:
    """`fresh(ids)` → the ids neither met earlier in this batch nor loaded (or found present) by an earlier one.
    `in_graph(ids)` answers for the filter's maybes: which of them are nodes (kg.store.existing_ids)."""

    def __init__(self, in_graph: Callable[[list[str]], set[str]], bits: int = BITS):
        self._bits = bytearray(bits >> 3)
        self._mask = bits - 1
        self._in_graph = in_graph
        self.asked = 0  # ids the graph was asked about (for tests and profiles)

    def _slots(self, key: str) -> tuple[int, int, int]:
        h = hash(key) & 0xFFFF_FFFF_FFFF_FFFF  # process-salted, which is all a filter living one run needs
        m = self._mask
        return h & m, (h >> 21) & m, ((h >> 42) ^ (h * 0x9E3779B1)) & m

    def _maybe_and_add(self, key: str) -> bool:
        bits = self._bits
        was = True
        for s in self._slots(key):
            byte, bit = s >> 3, 1 << (s & 7)
            if not bits[byte] & bit:
                was = False
                bits[byte] |= bit
        return was

    def maybe_add(self, key: str) -> bool:
        """Whether `key` may have been met already (False: certainly not); it is met from now on."""
        return self._maybe_and_add(key)

    def maybe(self, key: str) -> bool:
        """Whether `key` may have been met (False: certainly not), without meeting it."""
        bits = self._bits
        return all(bits[s >> 3] & (1 << (s & 7)) for s in self._slots(key))

    def absorb(self, other: SeenIds) -> None:
        """Meet every id `other` met (a filter of the same size)."""
        merged = int.from_bytes(self._bits, "little") | int.from_bytes(other._bits, "little")
        self._bits[:] = merged.to_bytes(len(self._bits), "little")

    def split(self, ids: Iterable[str]) -> tuple[list[str], list[str]]:
        """(fresh, repeated), each in input order: `repeated` holds the ids met in an earlier batch (as the
        graph confirms) or earlier in this one."""
        batch: set[str] = set()
        maybe: list[str] = []
        order: list[tuple[str, bool]] = []  # (id, repeated within the batch)
        for key in ids:
            if key in batch:
                order.append((key, True))
                continue
            batch.add(key)
            if self._maybe_and_add(key):
                maybe.append(key)
            order.append((key, False))
        self.asked += len(maybe)
        earlier = self._in_graph(maybe) if maybe else set()
        fresh, repeated = [], []
        for key, again in order:
            (repeated if again or key in earlier else fresh).append(key)
        return fresh, repeated


class Screen:
    """Sets aside, before the gate, a batch's entries and nodes whose ids were in the graph before this run (a
    resumed import's, or a trail imported again): they are counted, never redacted nor validated again.
    An id the run met already, or may have (`SeenIds`), goes on, to be counted as a repeat as before."""

    def __init__(self, st: Any, seen: SeenIds, present: Callable[[list[str]], set[str]], renames: Any = None):
        self.st, self.seen, self._present = st, seen, present
        self.renames = renames  # kg/ingest/import_renames.py: an entry whose id another entry holds goes on renamed
        self.done = 0  # entries and nodes read so far
        self.present: set[str] = set()  # the batch's ids found in the graph
        self.skipped: list[str] = []  # the batch's ids set aside

    def __call__(self, raw: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
        from kg.ingest.trail import item_id

        keys = [item_id(kind, item) for kind, item in raw]
        self.done += sum(1 for kind, _ in raw if kind != "edges")
        self.skipped = []
        self.present = self._present([k for k in keys if k])
        if not self.present:
            return raw
        # `maybe_add` false: certainly not met in this run, so in the graph before it (and now met)
        aside = [key in self.present and not self.seen.maybe_add(key) for key in keys]
        moved: dict[str, str | None] = {}
        if self.renames is not None:
            # entries, and knowledge nodes (a pattern is one by its key: kg/ingest/importing.py)
            moved = self.renames.decide([
                (key, kind, item) for key, (kind, item), out in zip(keys, raw, aside, strict=True)
                if out and (kind == "entries" or kind == "nodes" and item.get("type") != "pattern")])
        loaded = self._present([new for new in moved.values() if new])  # by the run a kill cut short
        kept = []
        for key, pair, out in zip(keys, raw, aside, strict=True):
            new = moved.get(key) if out else None
            if new is not None and new not in loaded:
                kept.append((pair[0], {**pair[1], "id": new}))
            elif out:
                self.skipped.append(new or key)
            else:
                kept.append(pair)
        return kept

    def loaded_rows(self) -> Iterator[dict[str, Any]]:
        """The set-aside events as the graph holds them, as the rows and pattern links of `trail._entry_rows`
        need them for a resumed import: id, session, created_at, and the link's key, at, text, area, priority."""
        if self.skipped:
            yield from self.st.run("bulk_loaded_events", ids=self.skipped)
