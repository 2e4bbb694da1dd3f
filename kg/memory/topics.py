"""Topics: detection from a message, the topic index (`kg index build`) and recall (`kg recall TOPIC`).

As in the seed, the index assigns one topic to each `memory/*.md` file changed within `index_days` and keeps a
3-line summary of it in `memory/.memory-index.json`. kg also links every knowledge node in the graph to its
topic (`about` edges), so recall returns the graph's lessons and principles as well as files.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

from kg.core import clock
from kg.core.errors import UsageError
from kg.core.text import has_cjk
from kg.ingest.journal import write_atomic
from kg.memory.rules import TopicRules, topic_rules
from kg.store import plain
from kg.store.schema import meta_key

INDEX_FILE = ".memory-index.json"


@lru_cache(maxsize=4096)
def _keyword_pattern(keyword: str) -> re.Pattern[str]:
    if has_cjk(keyword):
        return re.compile(re.escape(keyword))
    return re.compile(rf"(?<![\w]){re.escape(keyword)}(?![\w])")


def topic_scores(text: str, topics: dict[str, tuple[str, ...]]) -> dict[str, int]:
    """Keyword hits per topic. Latin keywords match whole words (the seed's substring match made "ok" hit
    "book" and "mx" hit "mixed"); CJK keywords match as substrings. Pure."""
    low = text.lower()
    return {name: sum(1 for k in words if _keyword_pattern(k).search(low)) for name, words in topics.items()}


def detect(text: str, rules: TopicRules) -> str:
    """The topic with most hits; a tie goes to the topic listed first; none gives the fallback. Pure."""
    scores = topic_scores(text, rules.topics)
    best, hits = rules.fallback, 0
    for name, n in scores.items():
        if n > hits:
            best, hits = name, n
    return best


def file_summary(text: str, lines: int = 3) -> list[str]:
    """The first non-empty lines that are not headings (the seed's summary), with log markers kept."""
    out = []
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith("#") and not s.startswith("Generated:") and s != "- (none)":
            out.append(s)
            if len(out) == lines:
                break
    if not out:  # a daily log is all '###' lines: summarise its entries instead
        for line in text.splitlines():
            s = line.strip()
            if s.startswith("### "):
                out.append(s[4:])
                if len(out) == lines:
                    break
    return out


def _file_date(path: Path) -> str:
    m = re.match(r"(\d{4}-\d{2}-\d{2})", path.name)
    return m.group(1) if m else clock.from_timestamp(path.stat().st_mtime).strftime("%Y-%m-%d")


def build(ws: Any, *, now: datetime | str | None = None, days: int | None = None) -> dict[str, Any]:
    rules = topic_rules(ws)
    at = clock.now(now)
    days = days or rules.index_days
    cutoff = (at - timedelta(days=days)).timestamp()
    candidates = [p for p in ws.memory.glob("*.md")] + [p for p in (ws.memory / "sessions").glob("*.md")]
    index: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(candidates, key=lambda p: (_file_date(p), p.name), reverse=True):
        if ".dreams" in path.parts or path.stat().st_mtime < cutoff and not _recent_name(path, at, days):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        topic = detect(text, rules)
        # a file an agent or a person wrote (kg's own are redacted already): redacted whole before its lines are
        # copied (a key block or a value on the line after its label spans lines)
        summary = file_summary(ws.rules.redactor.redact(text).text)
        index.setdefault(topic, []).append({"date": _file_date(path), "file": str(path.relative_to(ws.root)),
                                            "summary": summary})
    doc = {"built": at.isoformat(), "days": days, "topics": _topics_of(rules), "index": index}
    write_atomic(ws.memory / INDEX_FILE, (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    links = 0
    with ws.store() as st:
        st.run("memory_topic_upsert", rows=[{"name": n, "keywords": list(k)} for n, k in rules.topics.items()],
               at=at)
        st.run("memory_topics_reset")
        rows = []
        for node in st.run("memory_nodes_for_topics"):
            hits = topic_scores(f"{node['text'] or ''} {node['details'] or ''}", rules.topics)
            best = max(hits.values(), default=0)
            if best:
                topic = next(n for n, h in hits.items() if h == best)
                rows.append({"id": node["id"], "topic": topic, "score": float(best)})
        from kg.ingest.upkeep import kept

        # one tally for the batch (the reset above zeroed it): per-row upkeep read 4 queries a row (76 s at 10k)
        with st.transaction(), kept(st) as keep:
            for i in range(0, len(rows), 5000):
                st.run("memory_topic_links", rows=rows[i:i + 5000], at=at)
            keep.edge("about", len(rows))
        links = len(rows)
        from kg.memory import search  # the common-term list rides along with the index

        common = search.refresh_common_terms(ws, st)
    return {"built": at.isoformat(), "file": str((ws.memory / INDEX_FILE).relative_to(ws.root)),
            "topics": {t: len(v) for t, v in index.items()}, "files": sum(len(v) for v in index.values()),
            "nodes_linked": links, "common_terms": common}


def _topics_of(rules: TopicRules) -> dict[str, list[str]]:
    """The topics and their keywords an index is built with, as its file keeps them."""
    return {name: list(words) for name, words in rules.topics.items()}


def _recent_name(path: Path, at: datetime, days: int) -> bool:
    m = re.match(r"(\d{4}-\d{2}-\d{2})", path.name)
    if not m:
        return False
    return datetime.fromisoformat(m.group(1)) >= at - timedelta(days=days)


def recall(ws: Any, topic: str | None = None, *, message: str | None = None,
           now: datetime | str | None = None, limit: int | None = None) -> dict[str, Any]:
    rules = topic_rules(ws)
    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be at least 1, not {limit}")
    detected = bool(message) and not topic  # a named topic wins; the message only names one when none is given
    if message and not topic:
        topic = detect(message, rules)
    if not topic:
        raise UsageError("name a TOPIC or give --message to detect one")
    topic = topic.strip().lower()
    if topic not in rules.topics:
        raise UsageError(f"unknown topic {topic!r}: use one of {', '.join(rules.topics)} "
                         "(add your own under [rules.topics.topics] in kg.toml)")
    path = ws.memory / INDEX_FILE
    built = False
    days = None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        index, stamp = doc["index"], doc.get("built")
        # an index from before kg recorded its topics is taken as current: rebuilt, it would keep only the default
        # days' files of one built with `kg index build --days N` (its days were not recorded either)
        current = "topics" not in doc or doc["topics"] == _topics_of(rules)
        days = doc.get("days") if isinstance(doc.get("days"), int) and doc["days"] > 0 else None
    except (FileNotFoundError, ValueError, KeyError, TypeError, AttributeError):
        current = False
    if not current:  # none yet, or built with other topics: a topic added in kg.toml had neither files nor links
        doc = build(ws, now=now, days=days)  # over the days it was built for
        built, stamp = True, doc["built"]
        index = json.loads(path.read_text(encoding="utf-8"))["index"]
    entries = list(index.get(topic, []))[: limit or rules.recall_files]
    with ws.reading() as st:  # a window past the limit, so that nodes that read the same take one place
        rows = [plain(r) for r in st.run("memory_topic_nodes", key=meta_key("Topic", topic),
                                         limit=rules.recall_nodes * FOLD_WINDOW)]
    nodes = fold_alike(rows)[:rules.recall_nodes]
    stale = not built and not entries and not nodes and _written_since(ws, stamp)  # (asked only for the hint)
    return {"topic": topic, "detected_from_message": detected, "built_index": built, "index_built": stamp,
            "written_since_index": stale,
            "files": entries, "nodes": nodes}


def _written_since(ws: Any, stamp: Any) -> bool:
    """Whether a memory file (a daily log, a session summary: what every log and session end writes) changed after
    the index was built, so that the index may miss what it holds."""
    try:
        at = datetime.fromisoformat(str(stamp)).replace(tzinfo=None)  # the clock zone's wall time, as build wrote
    except (ValueError, TypeError):
        return True
    files = [*ws.memory.glob("*.md"), *(ws.memory / "sessions").glob("*.md")]
    try:
        return any(clock.from_timestamp(int(p.stat().st_mtime)) > at for p in files)  # (`built` is in seconds)
    except OSError:
        return True


FOLD_WINDOW = 4  # graph nodes read for recall: this many times `recall_nodes`, to fold alike ones


def fold_alike(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One node per text, in order: the first keeps its place and lists the others' ids in `alike` (seven
    retries of one failed edit took every place of the recall before). Pure."""
    out: dict[str, dict[str, Any]] = {}
    for n in nodes:
        key = " ".join(str(n.get("text") or "").split()).lower()
        if key in out:
            out[key].setdefault("alike", []).append(n["id"])
        else:
            out[key] = dict(n)
    return list(out.values())


def render_recall(d: dict[str, Any]) -> str:
    """The seed's `--query-memory` output, then the graph's nodes on the topic."""
    if not d["files"] and not d["nodes"]:
        how = " (the topic detected from the message)" if d.get("detected_from_message") else ""
        # an index built by this call holds all there is; an older one not what was written since it was built (a
        # memory file changed after it: the hint is not given right after `kg index build`)
        stamp = str(d.get("index_built") or "")[:16].replace("T", " ")
        since = "" if d.get("built_index") or not stamp or not d.get("written_since_index", True) else \
            f"\n  Or: kg index build (the topic index was built {stamp}: memory written since is not in it)"
        return (f"No memory found for topic '{d['topic']}'{how}\n"
                "  Try: kg search WORDS (any memory holding the words), or name another topic" + since)
    lines = [f"🔍 Memory for topic '{d['topic']}':"]
    for e in d["files"]:
        lines.append(f"  [{e['date']}] {e['file']}")
        lines += [f"    → {s[:80]}" for s in e["summary"]]
    if d["nodes"]:
        lines.append("  Graph:")
        lines += [f"    [{n['id']}] ({n['kind']}) {n['text'][:80]}"
                  + (f" (×{1 + len(n['alike'])})" if n.get("alike") else "") for n in d["nodes"]]
    return "\n".join(lines)
