"""Memory search's hits: one per memory (a node, the lines that mirror it, identical events) and their rendering."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from kg.core.text import folded


@dataclass
class Hit:
    source: str                      # graph | MEMORY.md | USER.md | daily | sessions | skills | trail
    ref: str                         # node id, or path:line
    kind: str | None
    text: str
    snippet: str
    score: float
    location: str
    created_at: str | None = None
    session: str | None = None
    tags: list[str] = field(default_factory=list)
    parts: dict[str, float] = field(default_factory=dict)
    also: list[str] = field(default_factory=list)   # where else this memory is: mirrored lines, identical events
    count: int = 1                                  # graph nodes of this memory (identical events collapse)
    match: str = "terms"  # terms | partial | fuzzy | near | elsewhen (relaxed: see RELAXED) | recent (nothing matched)
    fts: str = ""                                   # how the full-text step asked: ranked | bounded | relaxed
    unmatched: list[str] = field(default_factory=list)  # query words no memory holds (match "partial")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# A line that mirrors graph entries names them at its end: a session summary's "error (high): ... [ERR-1, ERR-2]
# (2×)", a trail's "[ERR-1] ...". Their ids join the line to the graph's hit of the same memory.
NAMED_IDS = re.compile(r"\[((?:[A-Za-z]+-\d{8}-\d+)(?:,\s*[A-Za-z]+-\d{8}-\d+)*)\](?:\s*\(\d+×\))?\s*$")
ID_AT_START = re.compile(r"^\[([A-Za-z]+-\d{8}-\d+)\]")


# ... and a session summary starts such a line with its section's label (kg/memory/sessions.py `classify`)
SUMMARY_LABEL = re.compile(r"^(?:error \([a-z]+\)|error [a-z_]+|feature request|pattern|[a-z_]+): ")


def memory_text(h: Hit) -> str:
    """The text a hit is compared by: a mirroring line without its label and the ids it names. Pure."""
    text = h.text or ""
    if h.source != "graph":
        m = NAMED_IDS.search(text)
        if m:
            text = SUMMARY_LABEL.sub("", text[: m.start()].rstrip(), count=1)
    return folded(text)


def named_ids(h: Hit) -> list[str]:
    """The graph ids a file line names (see NAMED_IDS). Pure."""
    if h.source == "graph":
        return []
    m = NAMED_IDS.search(h.text or "") or ID_AT_START.search(h.text or "")
    return [i.strip() for i in m.group(1).split(",")] if m else []


def collapse(hits: list[Hit], prefer: tuple[str, ...] | frozenset[str] = ()) -> list[Hit]:
    """One hit per memory: hits with the same text (an event, the pattern named after it, its daily-log line,
    identical events logged again) or a line naming a graph hit's id (a session summary's open item) become
    the best of them, naming the others in `also`, counting the events, and keeping every tag. A node the
    query names (`prefer`: an id, a pattern key's pattern) stands for its group; else an event before a pattern,
    a node before a line. `hits` must be sorted best first. Pure."""
    parent = list(range(len(hits)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}
    for i, h in enumerate(hits):
        text = memory_text(h)
        keys = (["text:" + text] if text else []) + ["id:" + x for x in ([h.ref] if h.source == "graph" else [])
                                                     + named_ids(h)]
        for key in keys:
            j = first.setdefault(key, i)
            a, b = find(i), find(j)
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[int, list[Hit]] = {}
    for i, h in enumerate(hits):
        groups.setdefault(find(i), []).append(h)
    out = []
    for root in sorted(groups):
        group = groups[root]
        lead = min(group, key=lambda h: (h.ref not in prefer, h.source != "graph", h.kind == "pattern", -h.score))
        lead.score = max(h.score for h in group)
        events = {h.ref for h in group if h.source == "graph" and h.kind != "pattern"}
        lines_name = [named_ids(h) for h in group if h.source != "graph"]
        lead.count = max([len(events)] + [len(n) for n in lines_name]) or 1
        for h in group:
            if h is not lead:
                lead.also.append(h.location if h.source != "graph" else h.ref)
                lead.tags += [t for t in h.tags if t not in lead.tags]
        if lead.source == "graph":  # ids a line names that are not hits themselves: still this memory's
            lead.also += [i for n in lines_name for i in n if i != lead.ref and i not in lead.also]
        out.append(lead)
    return out


BOUNDED = {"bounded": "common words only: the newest entries holding the rarest of them, re-ranked",
           "relaxed": "common words only: the newest entries holding the rarest of them, re-ranked",
           # (issue 22) the side index could not be read and the graph has no full-text index of its own
           "scan": "the search index could not be read: every entry's words were scanned; `kg doctor` repairs it",
           # (QA3 #6) not damaged: SQLite cannot open it where it may write nothing (no repair is due)
           "scan_read_only": "the search index cannot be opened in a read-only workspace: every entry's words were "
                             "scanned"}
RELAXED = {"fuzzy": "nothing held every word as written; matched similar words instead",
           "near": "nothing in the time named; showing entries from the days around it",
           "elsewhen": "nothing in the time named; these match the words at other times",
           "recent": "nothing matched; showing the newest memory instead"}


def render(hits: list[dict[str, Any]], query: str, why: str | None = None) -> str:
    """`why`: why there is nothing (kg.memory.search.common_words_only)."""
    from kg.redaction.redact import redact_text

    query = redact_text(query)  # the answer is read back into the agent's context, and often logged
    if not hits:
        return f"No results for '{query}'" + (f": {why}" if why else "")
    if hits[0].get("match") == "recent":  # not matches: said before anything is listed, and not scored
        lines = [f"No results for '{query}'.", f"  ({RELAXED['recent']}: {len(hits)}, not matches)"]
        if hits[0].get("unmatched"):  # ids the query names (`kg search ERR-…`) that no entry has
            lines.insert(1, f"  (no entry {', '.join(hits[0]['unmatched'])})")
    else:
        lines = [f"🔍 {len(hits)} result(s) for '{query}':"]
    if hits[0].get("match") in RELAXED and hits[0].get("match") != "recent":
        lines.append(f"  ({RELAXED[hits[0]['match']]})")
    if hits[0].get("match") == "partial":
        lines.append(f"  (no memory holds {', '.join(repr(w) for w in hits[0].get('unmatched', []))}: "
                     "matched the other words)")
    if hits[0].get("fts") in BOUNDED:
        lines.append(f"  ({BOUNDED[hits[0]['fts']]})")
    for i, h in enumerate(hits, 1):
        when = f" · {h['created_at'][:16].replace('T', ' ')}" if h.get("created_at") else ""
        score = "" if h.get("match") == "recent" else f"[{h['score']:.3f}] "
        lines.append(f"  {i}. {score}{h['location']}{when}")
        lines.append(f"     → {h['snippet']}")
        if h.get("count", 1) > 1:
            lines.append(f"     {h['count']} identical events")
        if h.get("also"):
            lines.append(f"     also in: {', '.join(h['also'])}")
    return "\n".join(lines)
