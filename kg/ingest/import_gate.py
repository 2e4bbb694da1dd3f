"""The import's redaction gate: every imported value redacted once, before it is cut, keyed or indexed, with
groups of values scanned as one text and values already found clean not scanned again (kg.ingest.importing
runs it on each group of items it reads)."""

from __future__ import annotations

from typing import Any


class Gated:
    """The redactor handed to `kg.core.entries.prepare` and `kg.ingest.trail` for values the import's gate (`gate`) has
    redacted already: every value is redacted exactly once, and the kinds found travel in `REDACTIONS`."""

    @staticmethod
    def redact_many(fields: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
        return dict(fields), ()

    @staticmethod
    def redact(text: str) -> Any:
        from kg.redaction.redact import Redacted

        return Redacted(text)


REDACTIONS = "_redactions"  # an imported item's key for the secret kinds the gate found in it
GATE_GROUP = 128


# The trail's own field names (kg.ingest.trail reads these): fixed words, not secrets, so the gate does not scan
# them. Every other key, and every value, is scanned. ("pattern_key" alone made the rules keyed on "key" try a
# match at every entry: a fifth of the gate's time.)
_FIELD_NAMES = frozenset({
    "id", "type", "category", "summary", "details", "suggested_action", "area", "priority", "status", "logged",
    "first_seen", "last_seen", "source", "pattern_key", "session", "files", "tags", "error", "context",
    "reproducible", "user_context", "complexity", "frequency", "recurrence_count", "see_also", "resolution",
    "_title", "_source",
    # each node's own state (kg/ingest/trail_lifecycle.py NODE_STATE), on every entry kg's trail writes
    "updated", "reinforced", "decay_stage", "base_priority", "pinned", "stale"})


def _strings(value: Any, out: list[str]) -> None:
    """Every string inside `value` (dict keys too, but the trail's own field names), in order."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k not in _FIELD_NAMES:
                out.append(k)  # a JSON key is always a string
            if v.__class__ is str:
                out.append(v)
            elif v.__class__ is list and all(x.__class__ is str for x in v):
                out.extend(v)  # (tags, files: the same strings in the same order, without a call each)
            elif v is not None:
                _strings(v, out)
    elif isinstance(value, str):
        out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _strings(v, out)


class Clean:
    """Values a scan found no secret in, so a later group need not scan them again: a trail repeats most of its
    values (areas, sessions, pattern keys, statuses, suggested actions), and scanning them once per group was
    about half of the gate's text. Bounded: at most `LIMIT` values of at most `LONGEST` characters; when full it
    starts again empty (what it forgets is scanned again, never skipped)."""

    LIMIT = 200_000
    LONGEST = 200

    def __init__(self) -> None:
        self.values: set[str] = set()

    def unseen(self, texts: list[str]) -> list[str]:
        """`texts` less the values known clean and the repeats within it, in order."""
        known = self.values
        return [t for t in dict.fromkeys(texts) if t not in known]

    def add(self, texts: list[str]) -> None:
        if len(self.values) > self.LIMIT:
            self.values = set()
        longest = self.LONGEST
        self.values.update(t for t in texts if len(t) <= longest)


def gate(redactor: Any, group: list[tuple[str, Any]], clean: Clean | None = None) -> list[tuple[str, Any]]:
    """Every imported value (node tags, edge reasons, ...) redacted before it is cut, keyed or indexed.

    Redacting each short value by itself costs a pass over every rule's keywords per value (about 20 values
    an entry: most of a 100k import's time). So a group of items is first scanned as one text, their values
    one per line (the rules' windows and classes stop at a line's end), each distinct value once and none that
    `clean` holds (an earlier group's scan found nothing in it); only a group in which that scan finds a secret
    is redacted value by value, which is what decides."""
    texts: list[str] = []
    for _, item in group:
        _strings(item, texts)
    if clean is not None:
        texts = clean.unseen(texts)
    if not redactor.redact("\n".join(texts)).kinds:
        if clean is not None:
            clean.add(texts)
        return group
    out = []
    for kind, item in group:
        found: set[str] = set()
        item = redactor.redact_value(item, found)
        if found and isinstance(item, dict):
            item[REDACTIONS] = sorted(found)
        out.append((kind, item))
    return out
