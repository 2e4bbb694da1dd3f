"""Memory search: the graph and the memory files, ranked together.

Sources, in the seed's order (it breaks ties): the graph, MEMORY.md, USER.md, the daily logs, then session
summaries, skills and the imported trail. Ranking combines
- full-text: Kùzu's BM25 over `Node.tokens` (asked with the query's rarer terms only: a term in most nodes
  is slow there and says little), and a BM25 over the matching lines of the files;
- fuzzy: the share of the query's terms found in the text by rapidfuzz (catches inflections and typos);
- the graph neighbourhood: nodes linked to a hit are pulled in, and a hit whose neighbours match is lifted;
- recency and importance (kind, priority, pinned).
Chinese works because both the index and the query are tokenised by `kg.text.words` (CJK bigrams).
"""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_right
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz, process

from kg import clock, paths
from kg.errors import UsageError
from kg.journal import write_atomic
from kg.memory._common import iso
from kg.memory.rules import KNOWN_SOURCES, SearchRules, memory_rules
from kg.store import KNOWLEDGE_KINDS
from kg.text import clean, has_cjk, words

COMMON_FILE = "common-terms.json"
DAILY = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
LOG_LINE = re.compile(r"^###\s+\S+\s+\d{2}:\d{2}\s*[-–—]\s*(?:(?:Error|Insight|Correction|User preference|"
                      r"Feature request|Session summary [\d-]+):\s*)?(.*)$")
FILE_PRIOR = {"MEMORY.md": 0.9, "USER.md": 0.8, "skills": 0.6, "sessions": 0.5, "daily": 0.4, "trail": 0.3}
# English function words: Kùzu drops its own stopwords from the index; these are also dropped from queries so
# that question words ("when did ...") neither slow the index nor count in the fuzzy share.
STOPWORDS = frozenset(["a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves"])
DAILY_DAYS_DEFAULT = 30


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
    also: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- pure pieces --------------------------------------------------------------------------------------------
def query_terms(query: str) -> list[str]:
    """The query's content terms, in order, without repeats or stopwords."""
    seen: dict[str, None] = {}
    for w in words(query):
        if w not in STOPWORDS and (len(w) > 1 or has_cjk(w)):
            seen.setdefault(w, None)
    return list(seen)


def pick_index_terms(terms: list[str], df: dict[str, int], nodes: int, rules: SearchRules) -> list[str]:
    """The terms sent to the full-text index: the rarer ones, at most `max_terms`. Terms missing from the
    common-term list are rare. If every term is common, the two rarest are kept so the query still runs."""
    limit = rules.common_fraction * nodes if nodes else math.inf
    rare = [t for t in terms if df.get(t, 0) <= limit]
    if not rare:
        rare = sorted(terms, key=lambda t: (df.get(t, 0), -len(t), t))[:2]
    rare.sort(key=lambda t: (df.get(t, 0), -len(t), t))
    return rare[: rules.max_terms]


def stem(term: str) -> str:
    """A crude suffix strip for substring matching in files (the index has Porter; files get this)."""
    if has_cjk(term) or len(term) <= 4:
        return term
    for suffix in ("ings", "ing", "edly", "ed", "ies", "es", "s", "ly"):
        if term.endswith(suffix) and len(term) - len(suffix) >= 4:
            return term[: -len(suffix)]
    return term


def coverage(terms: list[str], weights: dict[str, float], text_words: set[str], fuzzy_min: float) -> float:
    """Weighted share of the query terms present in the text, exactly or fuzzily. 0..1."""
    if not terms:
        return 0.0
    total = found = 0.0
    pool = list(text_words)
    for t in terms:
        w = weights.get(t, 1.0)
        total += w
        if t in text_words:
            found += w
        elif pool and not has_cjk(t) and len(t) >= 4:
            match = process.extractOne(t, pool, scorer=fuzz.ratio, score_cutoff=fuzzy_min)
            if match is not None:
                found += w * match[1] / 100.0
    return found / total if total else 0.0


def link_weight(manual: bool | None, score: float | None) -> float:
    """How much a neighbour counts: a link made by hand is a fact; an auto-link is a guess, worth half its own
    score. Pure."""
    if manual:
        return 1.0
    return 0.5 * min(1.0, max(0.0, float(score if score is not None else 0.5)))


def recency(at: datetime | None, now: datetime, half_life_days: float) -> float:
    if at is None:
        return 0.0
    age = max(0.0, (now - at).total_seconds() / 86400.0)
    return 0.5 ** (age / half_life_days)


def snippet(text: str, terms: list[str], width: int) -> str:
    """`width` characters around the first query term found, with … where cut."""
    flat = clean(text, one_line=True)
    if len(flat) <= width:
        return flat
    low = flat.lower()
    positions = [low.find(stem(t)) for t in terms]
    positions = [p for p in positions if p >= 0]
    start = max(0, min(positions, default=0) - width // 3)
    start = min(start, len(flat) - width)
    out = flat[start : start + width]
    return ("…" if start > 0 else "") + out + ("…" if start + width < len(flat) else "")


def combine(parts: dict[str, float], rules: SearchRules) -> float:
    return (rules.w_text * parts.get("text", 0.0) + rules.w_fuzzy * parts.get("fuzzy", 0.0)
            + rules.w_graph * parts.get("graph", 0.0) + rules.w_recency * parts.get("recency", 0.0)
            + rules.w_importance * parts.get("importance", 0.0))


def importance(row: dict[str, Any], rules: SearchRules) -> float:
    kind = rules.kind_weight.get(row.get("kind") or "event", 0.5)
    prio = rules.priority_weight.get(row.get("priority") or "", 0.5)
    return 1.0 if row.get("pinned") else (kind + prio) / 2


# -- the common-term list -----------------------------------------------------------------------------------
def _common_path(ws: Any) -> Path:
    return ws.kg_dir / COMMON_FILE


def refresh_common_terms(ws: Any, st: Any) -> int:
    """Count document frequencies over every node and keep the common terms (above half the threshold, so a
    rules change can move the line either way). Saved in memory/.kg/common-terms.json."""
    rules = memory_rules(ws).search
    df: Counter[str] = Counter()
    n = 0
    for row in st.run("memory_all_tokens"):
        n += 1
        df.update(set((row["tokens"] or "").split()))
    keep = {t: c for t, c in df.items() if c > rules.common_fraction * n / 2 and c > 1}
    doc = {"nodes": n, "df": dict(sorted(keep.items()))}
    write_atomic(_common_path(ws), json.dumps(doc, ensure_ascii=False).encode("utf-8"))
    ws.__dict__["_common_terms"] = (n, keep)
    return len(keep)


def _common_terms(ws: Any, st: Any) -> tuple[int, dict[str, int]]:
    cached = ws.__dict__.get("_common_terms")
    if cached is not None:
        return cached
    try:
        doc = json.loads(_common_path(ws).read_text(encoding="utf-8"))
        value = (int(doc["nodes"]), {str(k): int(v) for k, v in doc["df"].items()})
    except (FileNotFoundError, ValueError, KeyError, TypeError, AttributeError):
        value = (0, {})
    count = st.run("memory_node_count")[0]["n"]
    # Rebuilt when missing on a sizeable graph, or when the graph has doubled since.
    if (value[0] == 0 and count >= 1000) or (value[0] and count > 2 * value[0]):
        refresh_common_terms(ws, st)
        return ws.__dict__["_common_terms"]
    ws.__dict__["_common_terms"] = value
    return value


# -- reading the graph: direct queries, or an in-process cache -------------------------------------------------
class _Direct:
    """One-shot use (a CLI call): ask Kùzu for what this query needs."""

    def __init__(self, st: Any):
        self.st = st

    def fts(self, q: str, k: int) -> list[dict[str, Any]]:
        return self.st.run("memory_fts", q=q, k=k)

    def neighbours(self, ids: list[str]) -> list[tuple[str, dict[str, Any], float]]:
        if not ids:
            return []
        return [(r["src"], r, link_weight(r["manual"], r["link_score"]))
                for r in self.st.run("memory_neighbours", ids=ids)]


class _Cached:
    """Repeated use in one process (`with ws:`): node fields and adjacency held in memory, because Kùzu 0.11.3
    answers a lookup by id in milliseconds at 100k nodes (a scan, not an index probe). Rebuilt whenever the
    graph's files change."""

    def __init__(self, st: Any, stamp: tuple):
        self.st, self.stamp = st, stamp
        self.nodes = {r["id"]: r for r in st.run("memory_nodes_all")}
        self.memo: dict[Any, Any] = {}  # lists derived from the nodes (inject's principles, watch list)
        self.adj: dict[str, list[tuple[str, float]]] = {}
        for r in st.run("memory_edges_all"):
            w = link_weight(r["manual"], r["link_score"])
            self.adj.setdefault(r["src"], []).append((r["dst"], w))
            self.adj.setdefault(r["dst"], []).append((r["src"], w))

    def fts(self, q: str, k: int) -> list[dict[str, Any]]:
        return [{**self.nodes[r["id"]], "score": r["score"]} for r in self.st.run("memory_fts_ids", q=q, k=k)
                if r["id"] in self.nodes]

    def neighbours(self, ids: list[str]) -> list[tuple[str, dict[str, Any], float]]:
        return [(i, self.nodes[j], w) for i in ids for j, w in self.adj.get(i, ()) if j in self.nodes]


def _stamp(ws: Any) -> tuple:
    out = []
    for suffix in ("", ".wal"):
        p = Path(str(ws.graph_path) + suffix)
        try:
            s = p.stat()
            out.append((s.st_mtime_ns, s.st_size))
        except FileNotFoundError:
            out.append(None)
    return tuple(out)


def cached_view(ws: Any, st: Any) -> _Cached | None:
    """The in-process cache (every node's fields, adjacency, a memo) when the workspace is held open."""
    view = _view(ws, st)
    return view if isinstance(view, _Cached) else None


def _view(ws: Any, st: Any) -> _Direct | _Cached:
    # One-shot unless the caller holds the workspace open across calls (`with ws:`). Not `ws.is_held`: every
    # `ws.store()` block sets that, so a single CLI search would read every node first (~0.9 s at 100k).
    if not ws.in_batch:
        return _Direct(st)
    stamp = _stamp(ws)
    cached = ws.__dict__.get("_search_cache")
    if cached is None or cached.stamp != stamp or cached.st is not st:
        cached = _Cached(st, stamp)
        ws.__dict__["_search_cache"] = cached
    return cached


# -- the graph ----------------------------------------------------------------------------------------------
def _graph_hits(ws: Any, st: Any, terms: list[str], rules: SearchRules, *, now: datetime, kinds: set[str] | None,
                entry_types: set[str] | None, since: datetime | None, session: str | None,
                limit: int) -> list[Hit]:
    if not terms:
        return []
    nodes, df = _common_terms(ws, st)
    index_terms = pick_index_terms(terms, df, nodes, rules)
    filtered = bool(kinds or entry_types or since or session)
    k = max(rules.candidates, limit * 3) * (5 if filtered else 1)
    view = _view(ws, st)
    fts = view.fts(" ".join(index_terms), k)
    if not fts:
        return []
    bm25 = {r["id"]: float(r["score"]) for r in fts}
    rows = {r["id"]: r for r in fts}
    top = max(bm25.values())
    text_score = {i: s / top for i, s in bm25.items()}
    # The neighbourhood: a hit linked to another hit is lifted, and the best hits pull in their neighbours.
    best = set(sorted(bm25, key=lambda i: (-bm25[i], i))[: rules.expand_top])
    links: dict[str, dict[str, float]] = {}
    pulled: dict[str, float] = {}
    for src, r, w in view.neighbours(list(bm25)):
        links.setdefault(src, {})[r["id"]] = max(w, links.get(src, {}).get(r["id"], 0.0))
        links.setdefault(r["id"], {})[src] = max(w, links.get(r["id"], {}).get(src, 0.0))
        if src in best and r["id"] not in bm25:
            rows.setdefault(r["id"], r)
            pulled[r["id"]] = max(pulled.get(r["id"], 0.0), rules.neighbour_decay * w * text_score[src])
    weights = {t: (0.5 if nodes and df.get(t, 0) > rules.common_fraction * nodes else 1.0) for t in terms}
    hits = []
    for node_id, row in rows.items():
        if kinds and row["kind"] not in kinds:
            continue
        if entry_types and row["entry_type"] not in entry_types:
            continue
        if since and (row["created_at"] is None or row["created_at"] < since):
            continue
        if session and row["session"] != session:
            continue
        body = " ".join(x for x in (row["text"], row["details"], " ".join(row["tags"] or [])) if x)
        own = text_score.get(node_id, 0.0)
        neighbour = max((w * text_score.get(j, 0.0) for j, w in links.get(node_id, {}).items()), default=0.0)
        parts = {
            "text": own if node_id in bm25 else pulled.get(node_id, 0.0),
            "fuzzy": coverage(terms, weights, set(words(body)), rules.fuzzy_min),
            "graph": neighbour,
            "recency": recency(row["reinforced_at"] or row["created_at"], now, rules.half_life_days),
            "importance": importance(row, rules),
        }
        kind = row["entry_type"] or row["kind"]
        where = f"graph {node_id} ({kind}" + (f", session {row['session']}" if row["session"] else "") + ")"
        hits.append(Hit("graph", node_id, kind, row["text"], snippet(body, terms, rules.snippet_chars),
                        combine(parts, rules), where, iso(row["created_at"]), row["session"],
                        list(row["tags"] or []), {k: round(v, 4) for k, v in parts.items()}))
    return hits


# -- the files ----------------------------------------------------------------------------------------------
def _file_sets(ws: Any, sources: tuple[str, ...], since: datetime | None, now: datetime,
               session: str | None) -> list[tuple[str, Path]]:
    out: list[tuple[str, Path]] = []
    for source in sources:
        if source in ("MEMORY.md", "USER.md"):
            for path in (ws.root / source, ws.memory / source):
                if path.is_file() and not session:
                    out.append((source, path))
        elif source == "daily" and not session:
            start = since or (now - timedelta(days=DAILY_DAYS_DEFAULT))
            for path in sorted(ws.memory.glob("*.md"), reverse=True):
                m = DAILY.match(path.name)
                if m and m.group(1) >= f"{start:%Y-%m-%d}":
                    out.append(("daily", path))
        elif source == "sessions":
            pattern = f"{paths.check_name(session, 'session id')}.md" if session else "*.md"
            out += [("sessions", p) for p in sorted((ws.memory / "sessions").glob(pattern), reverse=True)]
        elif source == "skills" and not session:
            out += [("skills", p) for p in sorted((ws.memory / "skills").glob("*.md"))]
        elif source == "trail" and not session:
            path = ws.memory / ".learning-trail.json"
            if path.is_file():
                out.append(("trail", path))
    return out


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


def _file_hits(ws: Any, terms: list[str], rules: SearchRules, *, now: datetime, sources: tuple[str, ...],
               since: datetime | None, session: str | None, match_terms: list[str] | None = None) -> list[Hit]:
    """Lines of the memory files that hold the query's rarer terms (`match_terms`, as for the index: a
    common word would match thousands of log lines), ranked like the graph's hits."""
    stems = sorted({stem(t) for t in (match_terms or terms)}, key=len, reverse=True)
    if not stems:
        return []
    finder = re.compile("|".join(re.escape(s) for s in stems))
    chunks: list[tuple[str, Path, int, str, set[str]]] = []
    total_lines = 0
    for source, path in _file_sets(ws, sources, since, now, session):
        try:
            if source == "trail":
                lines = _trail_lines(path)
                text = "\n".join(lines)
            else:
                text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        low = text.lower()
        total_lines += low.count("\n") + 1
        if not finder.search(low):
            continue
        newlines = [m.start() for m in re.finditer("\n", low)]
        seen_lines: dict[int, set[str]] = {}
        for m in finder.finditer(low):
            seen_lines.setdefault(bisect_right(newlines, m.start()), set()).add(m.group(0))
        all_lines = text.split("\n")
        for number, found in seen_lines.items():
            line = all_lines[number].strip()
            if not line or (line.startswith("#") and not line.startswith(("###", "## "))):
                continue
            chunks.append((source, path, number + 1, line, found))
    if not chunks:
        return []
    df = Counter(s for c in chunks for s in c[4])
    n = max(total_lines, len(chunks))
    idf = {s: math.log(1 + (n - df[s] + 0.5) / (df[s] + 0.5)) for s in df}
    raw = [sum(idf[s] for s in c[4]) for c in chunks]
    top = max(raw) or 1.0
    # Only the best lines are re-ranked: a common word can match thousands of log lines.
    keep = sorted(range(len(chunks)), key=lambda i: (-raw[i], i))[: rules.candidates]
    hits = []
    for source, path, number, line, _found, score in ((*chunks[i], raw[i]) for i in keep):
        m = LOG_LINE.match(line)
        body = m.group(1) if m else line.lstrip("-* ").strip()
        day = DAILY.match(path.name)
        at = datetime.fromisoformat(day.group(1)) if day else datetime.fromtimestamp(path.stat().st_mtime)
        if since and at < since and source == "daily":
            continue
        parts = {"text": score / top, "fuzzy": coverage(terms, {}, set(words(body)), rules.fuzzy_min),
                 "graph": 0.0, "recency": recency(at, now, rules.half_life_days),
                 "importance": FILE_PRIOR.get(source, 0.4)}
        rel = str(path.relative_to(ws.root))
        hits.append(Hit(source, f"{rel}:{number}", "file", body, snippet(body, terms, rules.snippet_chars),
                        combine(parts, rules), f"{rel}:{number}", at.isoformat(),
                        path.stem if source == "sessions" else None, [],
                        {k: round(v, 4) for k, v in parts.items()}))
    return hits


# -- the search ---------------------------------------------------------------------------------------------
def _parse_types(type_: str | list[str] | None, ws: Any) -> tuple[set[str] | None, set[str] | None]:
    if not type_:
        return None, None
    names = [type_] if isinstance(type_, str) else list(type_)
    kinds, entry_types = set(), set()
    for raw in names:
        for t in (x.strip().lower() for x in raw.split(",") if x.strip()):
            if t in KNOWLEDGE_KINDS:
                kinds.add(t)
            elif t in ws.policy.kinds:
                entry_types.add(t)
            else:
                raise UsageError(f"unknown type {t!r}: use one of {', '.join(KNOWLEDGE_KINDS + ws.policy.kinds)}")
    return kinds or None, entry_types or None


def search(ws: Any, query: str, *, type: str | list[str] | None = None, since: str | datetime | None = None,
           session: str | None = None, limit: int | None = None, now: datetime | str | None = None,
           sources: list[str] | tuple[str, ...] | None = None) -> list[Hit]:
    """Ranked hits for `query` over the graph and the memory files. Deterministic for a given state."""
    rules = memory_rules(ws).search
    at = clock.now(now)
    text = clean(query or "", one_line=True)
    if not text:
        raise UsageError("the search query is empty")
    limit = limit or rules.limit
    if limit < 1:
        raise UsageError("--limit must be at least 1")
    since_at = None
    if since:
        since_at = since if isinstance(since, datetime) else clock.parse_since(since, at)
    kinds, entry_types = _parse_types(type, ws)
    chosen = tuple(sources) if sources else rules.sources
    for s in chosen:
        if s not in KNOWN_SOURCES:
            raise UsageError(f"unknown source {s!r}: use one of {', '.join(KNOWN_SOURCES)}")
    if kinds or entry_types:
        chosen = ("graph",)  # a node type only exists in the graph
    terms = query_terms(text)
    if not terms:  # only stopwords: search with them rather than return nothing
        terms = list(dict.fromkeys(words(text)))
    hits: list[Hit] = []
    with ws.store() as st:
        nodes, df = _common_terms(ws, st)
        match_terms = pick_index_terms(terms, df, nodes, rules)
        if "graph" in chosen:
            hits = _graph_hits(ws, st, terms, rules, now=at, kinds=kinds, entry_types=entry_types,
                               since=since_at, session=session, limit=limit)
    file_sources = tuple(s for s in chosen if s != "graph")
    if file_sources:
        by_text = {clean(h.text, one_line=True).lower(): h for h in hits}
        for fh in _file_hits(ws, terms, rules, now=at, sources=file_sources, since=since_at, session=session,
                             match_terms=match_terms):
            twin = by_text.get(clean(fh.text, one_line=True).lower())
            if twin is not None:  # the daily-log line of a graph event: one hit, two places
                twin.also.append(fh.location)
            else:
                hits.append(fh)
    order = {s: i for i, s in enumerate(KNOWN_SOURCES)}
    hits.sort(key=lambda h: (-round(h.score, 9), order.get(h.source, 99), h.ref))
    for h in hits:
        h.score = round(h.score, 4)
        h.also.sort()
    return hits[:limit]


def render(hits: list[dict[str, Any]], query: str) -> str:
    if not hits:
        return f"No results for '{query}'"
    lines = [f"🔍 {len(hits)} result(s) for '{query}':"]
    for i, h in enumerate(hits, 1):
        lines.append(f"  {i}. [{h['score']:.3f}] {h['location']}")
        lines.append(f"     → {h['snippet']}")
        if h.get("also"):
            lines.append(f"     also in: {', '.join(h['also'])}")
    return "\n".join(lines)
